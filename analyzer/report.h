/*
 * report.h - what the report subcommands (one file each) share: their
 * common options, opening and replaying a trace for a report, the header
 * lines and JSON members every report starts with.
 */
#ifndef MEMPROV_REPORT_H
#define MEMPROV_REPORT_H

#include <getopt.h>
#include <stdio.h>

#include "command.h"
#include "growth.h"
#include "replay.h"
#include "trace_reader.h"

enum report_flags {
	REPORT_JSON = 1 << 0,
	REPORT_FOLDED = 1 << 1,
	REPORT_ALL = 1 << 2,
	REPORT_NO_DEFAULTS = 1 << 3, /* --no-default-suppressions (also in o.cat_flags) */
	REPORT_PER_PROCESS = 1 << 4, /* --per-process: many traces, each apart */
	REPORT_OWN = 1 << 8,        /* first flag free for a command's own options */
};

/*
 * Long options report_parse() knows. A command's table lists those it
 * takes, its own ones (any other code: handed to report_args.own), and
 * ends with REPORT_OPT_END.
 */
#define REPORT_OPT_JSON { "json", no_argument, NULL, 'j' }
#define REPORT_OPT_FOLDED { "folded", no_argument, NULL, 'f' }
#define REPORT_OPT_ALL { "all", no_argument, NULL, 'a' }
#define REPORT_OPT_NO_DEFAULTS { "no-default-suppressions", no_argument, NULL, 'D' }
#define REPORT_OPT_SITES                                                    \
	{ "native", no_argument, NULL, 'n' },                               \
	{ "python-only", no_argument, NULL, 'p' },                          \
	{ "alloc-fn", required_argument, NULL, 'F' }
#define REPORT_OPT_POINTS { "points", required_argument, NULL, 'P' }
#define REPORT_OPT_SKIP { "skip", required_argument, NULL, 's' }
#define REPORT_OPT_AFTER { "after", required_argument, NULL, 'A' }
#define REPORT_OPT_MIN_BYTES { "min-bytes", required_argument, NULL, 'm' }
#define REPORT_OPT_PER_PROCESS { "per-process", no_argument, NULL, 'M' }
#define REPORT_OPT_PARENT { "parent", required_argument, NULL, 'R' }
#define REPORT_OPT_JOBS { "jobs", required_argument, NULL, 'J' }
#define REPORT_OPT_END { NULL, 0, NULL, 0 }

/* The command line of a report subcommand. */
struct report_args {
	/* set by the command */
	const struct command *cmd;
	const struct option *opts;
	const char *shortopts;      /* short options of its own ("o:"), or NULL */
	int n_traces;               /* traces wanted: 1, or 2 (A and B) */
	int many;                   /* or many: several traces, run directories (multi.h) */
	const char *operand;        /* what an operand is, for errors ("trace" when NULL) */
	/* the command's own options: 0, or a usage error's status */
	int (*own)(struct report_args *a, int opt, const char *arg);
	void *own_arg;
	/* filled by report_parse, over the command's defaults */
	unsigned flags;             /* enum report_flags */
	struct growth_opts o;       /* mode, points, skip, after, min_bytes */
	char **traces;              /* the operands (cl.operands) */
	uint64_t jobs;              /* --jobs: traces read at once (0: one per CPU) */
	struct cmdline cl;
};

/*
 * Parse a report's options and traces (cmdline_next's rule: in any
 * order). Returns 0 to go on, or -1 when the command ends here with
 * *status: 0 after --help, 2 after a usage error (already printed).
 * The traces are in argv.
 */
int report_parse(struct report_args *a, int argc, char **argv, int *status);

/* Open path into t and growth_collect; returns 0, or -1 after the error. */
int report_collect(struct growth *g, struct trace *t, const char *path, const struct growth_opts *o);
/* A report's end: report_status, growth_release, trace_close; the exit status. */
int report_end(struct growth *g, struct trace *t);

/*
 * report_parse, then open the trace and run the streaming pass over it
 * (report_collect with a->o). Returns 0, or -1 when the command ends here
 * with *status (as report_parse, or 1: the trace is unreadable).
 */
int report_start(struct report_args *a, int argc, char **argv, struct growth *g, struct trace *t,
		 int *status);

/*
 * Open path and replay it whole, on_mark (may be NULL) called at each
 * mark. Returns 0, or EXIT_FAIL after saying why the trace is unreadable.
 */
int report_replay(struct trace *t, struct replay *r, const char *path, replay_mark_fn on_mark,
		  void *arg);
/* report_status, then release r and close t: the report's exit status. */
int report_close(struct trace *t, struct replay *r);

/* Parse "--min-bytes" style sizes; prints a usage error for cmd. */
int report_parse_size(const struct command *cmd, const char *opt, const char *arg, uint64_t *out);

/*
 * The version of every --json report's shape: "schema":"memprov.REPORT/1".
 * Members may be added within a version; removing one or changing its
 * meaning raises it (and schemas/REPORT.schema.json says so).
 */
#define REPORT_SCHEMA_VERSION 1
/* {"schema":"memprov.REPORT/1", : how every JSON report starts. */
void report_json_open(FILE *f, const char *report);
/* "trace":PATH,"pid":N,"command":CMD: the members a JSON report starts with. */
void report_json_trace(FILE *f, const struct trace *t);
/* {"schema":..,"trace":..,"pid":..,"command":..,"state":STATE,"damaged":BOOL */
void report_json_head(FILE *f, const struct trace *t, const char *report);
/* ,"state":STATE,"exit_status":N (null when not known) */
void report_json_exit(FILE *f, const struct trace *t);
/* `memprov leaks` on one trace, text or JSON as a->flags say (report_leaks.c):
 * the exit status. `html` over many traces takes its summaries. */
int leaks_one_trace(const struct report_args *a, const char *path);
/* ,"ending":"exited with status 0": how the process ended, in words (replay_ending). */
void report_json_ending(FILE *f, const struct replay *r);

/* Status of a report: 1 when nothing at all could be read. */
int report_status(const struct trace *t);
/* trace/pid/command/ending lines and damage warnings (text reports). */
void report_header(FILE *f, const struct replay *r);
/* "command" of a trace: its cmdline, else its exe. */
const char *report_command(const struct trace *t);
/* The host the trace was written on, or NULL (older writers did not say). */
const char *report_host(const struct trace *t);

#endif /* MEMPROV_REPORT_H */
