/*
 * gate_report.h - between gate.c, which checks each trace against the
 * budgets, and gate_report.c, which writes what it found: the result of
 * one trace and the totals over all of them.
 */
#ifndef MEMPROV_GATE_REPORT_H
#define MEMPROV_GATE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "category.h"
#include "gate.h"
#include "pertest.h"
#include "replay.h"
#include "report_reach.h"
#include "sites.h"
#include "suppress.h"

struct offender {
	struct site s;            /* frames, kind, func; s.bytes/blocks live at the end
				     (a test's: what it kept) */
	int growth;               /* a growth offender (else live at the end) */
	double slope;             /* bytes per unit */
	int64_t growth_bytes;     /* over the window */
	const char *test;         /* the test that kept it, or where growth began; or NULL */
	int have_cls;             /* cls holds the scan's classes of its blocks */
	uint64_t cls[MP_REACH_CLASS_COUNT][2];  /* blocks, bytes per enum mp_reach_class */
};

/*
 * What the leak verdict counts (struct result.rule): for a native program
 * whose scan at exit finished, the memory nothing points to any more;
 * else all memory live at the end (of the Python main module, or of the
 * process).
 */
enum gate_rule {
	GATE_RULE_LOST = 0,       /* definitely and indirectly lost */
	GATE_RULE_LIVE,           /* everything live */
};

/* Why the rule is what it is (struct result.rule_why). */
enum gate_rule_why {
	GATE_WHY_NATIVE = 0,      /* a native program with a finished scan */
	GATE_WHY_PYTHON,          /* the process ran CPython: reference counting */
	GATE_WHY_REACHABLE,       /* --reachable */
	GATE_WHY_NO_SCAN,         /* a native program without a finished scan */
};

/* One test of a run with test marks (pertest.h), judged on its own. */
struct test_result {
	const struct ptest *t;
	uint64_t blocks, bytes;   /* what it kept, after what is set apart */
	int fail;
	size_t off0, n_off;       /* its offenders: result.off[off0 .. off0 + n_off) */
};

struct result {
	const char *path;
	int status;               /* 0 ok, 1 over budget, 2 unreadable or not judged */
	const char *error;        /* status 2: what went wrong */
	int skipped;              /* not gated: replaced by exec, or killed by SIGPIPE */
	const char *skip_why;     /* skipped: why, for people (the report, JSON "reason", JUnit message) */
	const struct trace *t;
	const struct replay *r;
	const char *at;           /* "main-end", "exit", "end-of-trace" */
	enum gate_rule rule;
	enum gate_rule_why rule_why;
	const char *no_scan;      /* GATE_WHY_NO_SCAN: why there is none, for people */
	struct reach_view *rv;    /* the scan's classes at exit (rv->shown: there are) */
	uint64_t at_ns;
	const struct classifier *cat; /* what the leak check set apart */
	struct test_result *tests;    /* per test: with test marks, instead of the
					 process as a whole */
	size_t n_tests, tests_failed;
	uint64_t live[MP_KIND_COUNT][2];  /* gated, after suppressions: blocks, bytes */
	uint64_t hidden[2];       /* suppressed: blocks, bytes */
	uint64_t leak_total;      /* the figure held to --max-leak (sum, or worst kind) */
	unsigned leak_fail;       /* kinds over budget (bit 0: the sum) */
	int growth_checked;
	const char *unit;         /* "mark", "test" or "s" */
	size_t window;            /* points in the growth window */
	char growth_why[512];     /* why the window is what it is */
	uint64_t marks;           /* the step marks the trace has (per second below 2) */
	size_t growth_fail;
	struct offender *off;
	size_t n_off;
	double duration;          /* seconds the trace covers */
};

struct gate_totals {
	size_t tests, failures, errors, skipped;  /* traces */
	size_t cases, case_failures;              /* JUnit test cases: traces and tests */
	double time;
	FILE *junit;              /* testcases, in memory */
	size_t tool_failures;     /* failing traces of tools a build runs (gate.c) */
	char tools[160];          /* their names, each once: "cc,as,ld" */
};

/* One trace's report: text or JSON on stdout, annotations, its JUnit cases. */
void gate_write(const struct gate_opts *o, const struct suppressions *supp,
		const struct result *res, struct gate_totals *tot);
/* The JUnit file around the cases: 0, or -1 after the error. */
int gate_write_junit(const struct gate_opts *o, const struct gate_totals *tot, const char *cases);

#endif /* MEMPROV_GATE_REPORT_H */
