/*
 * gate.h - the CI leak gate: `memprov check TRACE...` and
 * `memprov run --check`. Options are shared by both commands: run.c puts
 * GATE_LONG_OPTIONS in its own getopt table and hands them to
 * gate_opts_set().
 */
#ifndef MEMPROV_GATE_H
#define MEMPROV_GATE_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "suppress.h"

/* Exit status of `memprov run --check` when the command succeeded but the gate failed. */
#define GATE_RUN_STATUS 23

enum gate_opt {
	GATE_OPT_MAX_LEAK = 0x1000,
	GATE_OPT_MAX_GROWTH,
	GATE_OPT_KIND,
	GATE_OPT_SUPPRESSIONS,
	GATE_OPT_NO_DEFAULTS,
	GATE_OPT_SKIP,
	GATE_OPT_AFTER,
	GATE_OPT_JUNIT,
	GATE_OPT_ANNOTATIONS,
	GATE_OPT_JSON,
	GATE_OPT_GATE_STATUS,
	GATE_OPT_CHILDREN,
	GATE_OPT_ALLOC_FN,
	GATE_OPT_ALL,
	GATE_OPT_REACHABLE,
};

#define GATE_LONG_OPTIONS                                                           \
	{ "max-leak", required_argument, NULL, GATE_OPT_MAX_LEAK },                 \
	{ "max-growth", required_argument, NULL, GATE_OPT_MAX_GROWTH },             \
	{ "kind", required_argument, NULL, GATE_OPT_KIND },                         \
	{ "suppressions", required_argument, NULL, GATE_OPT_SUPPRESSIONS },         \
	{ "no-default-suppressions", no_argument, NULL, GATE_OPT_NO_DEFAULTS },     \
	{ "skip", required_argument, NULL, GATE_OPT_SKIP },                         \
	{ "after", required_argument, NULL, GATE_OPT_AFTER },                       \
	{ "junit", required_argument, NULL, GATE_OPT_JUNIT },                       \
	{ "annotations", no_argument, NULL, GATE_OPT_ANNOTATIONS },                 \
	{ "json", no_argument, NULL, GATE_OPT_JSON },                               \
	{ "alloc-fn", required_argument, NULL, GATE_OPT_ALLOC_FN },                 \
	{ "all", no_argument, NULL, GATE_OPT_ALL },                                 \
	{ "reachable", no_argument, NULL, GATE_OPT_REACHABLE }

/* Options of `memprov run --check` only. */
#define GATE_RUN_LONG_OPTIONS                                                       \
	{ "gate-status", required_argument, NULL, GATE_OPT_GATE_STATUS },           \
	{ "children", no_argument, NULL, GATE_OPT_CHILDREN }

enum gate_flags {
	GATE_ANNOTATIONS = 1 << 0,
	GATE_JSON = 1 << 1,
	GATE_NO_DEFAULTS = 1 << 2,
	GATE_GROWTH = 1 << 3,       /* --max-growth given */
	GATE_CHILDREN = 1 << 4,     /* run --check: gate child processes too */
	GATE_ALL = 1 << 5,          /* --all: gate interpreter and module state and
				       Python arenas too */
	GATE_REACHABLE = 1 << 6,    /* --reachable: a native program's reachable memory
				       too (all live memory), not only what is lost */
	GATE_RUN = 1 << 7,          /* memprov run --check: a child still running when
				       CMD ended is not gated (it has not ended) */
	GATE_RUN_DIR = 1 << 8,      /* memprov run -d: every trace given is the run's
				       (its DIR is claimed): with --children, all gated */
	GATE_RUN_UNTRACED = 1 << 9, /* memprov run: the command left no trace, and run
				       said why (a sanitizer build, a static program) */
};

struct gate_opts {
	unsigned flags;
	int set;                    /* some gate option was given */
	uint64_t max_leak, max_growth;
	unsigned kinds;             /* bit per enum mp_kind; 0: all kinds summed */
	char **supp_files;
	size_t n_supp_files;
	uint64_t skip;
	const char *after;
	const char *junit;
	char *skip_exe;             /* check --skip-exe: PATTERN,PATTERN... of programs left out */
	int gate_status;            /* run --check: status when only the gate failed */
	long oom_kills;             /* run --check: processes the OOM killer ended
				       while the command ran (-1: not known) */
};

/* Is kind gated (--kind, or every kind when none was given)? */
static inline int gate_kind_gated(const struct gate_opts *o, unsigned kind)
{
	return !o->kinds || (o->kinds & (1u << kind));
}

void gate_opts_init(struct gate_opts *o);
void gate_opts_release(struct gate_opts *o);
struct command;

/* Apply one GATE_OPT_* option; returns 0, or a usage error's status (2) for cmd. */
int gate_opts_set(struct gate_opts *o, const struct command *cmd, int opt, const char *arg);

/*
 * --skip-exe PATTERN[,PATTERN...] appended to *list (comma-separated;
 * include/memprov_exe_match.h's patterns): 0, or a usage error's status
 * for cmd (an empty pattern, or more than SKIP_EXE_MAX bytes in all, what
 * MEMPROV_SKIP_EXE holds).
 */
#define SKIP_EXE_MAX 4095
int skip_exe_add(char **list, const struct command *cmd, const char *arg);

/* Gate the traces: 0 all within budget, 1 some over budget, 2 a trace or suppression file unreadable. */
int gate_check(const struct gate_opts *o, char **paths, size_t n);

/*
 * `memprov run --check`: gate the traces among paths written by process
 * pid (the command, after any exec), or by its children too with
 * --children. Images replaced by exec are left out: their memory is gone.
 */
int gate_check_process(const struct gate_opts *o, char **paths, size_t n, pid_t pid);
/* What must hold of the gate options once read: 0, or a usage error's status. */
int gate_opts_check(const struct gate_opts *o, const struct command *cmd);
/*
 * memprov run --check, before the command runs: the suppression files
 * load and the JUnit file can be written (a typo would otherwise cost the
 * whole run). 0, or -1 with the error said.
 */
int gate_preflight(const struct gate_opts *o);

#endif /* MEMPROV_GATE_H */
