/*
 * pertest.h - what each test of a test run kept, from the marks a test
 * runner writes around each test ("test-start NODEID" and "test-end
 * NODEID": memprov's pytest plugin): for every (stack, kind, func), its
 * live bytes and blocks at the test's end minus at its start, as
 * pytest-memray's limit_leaks measures. Filled during the replay by a
 * mark callback; one snapshot is held at a time (tests run one after
 * another in a process), and each test keeps only what grew.
 */
#ifndef MEMPROV_PERTEST_H
#define MEMPROV_PERTEST_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"

#define PERTEST_START "test-start "
#define PERTEST_END "test-end "
/* around the setup of a fixture that outlives the test (class, module,
 * package, session scope): what it made is not the test's */
#define PERTEST_FIX_START "fixture-start "
#define PERTEST_FIX_END "fixture-end "

struct ptest {
	char *nodeid;
	uint64_t start_ts, end_ts;   /* absolute ns; end_ts 0: the test never ended */
	struct replay_live *grown;   /* what grew from start to end (bytes > 0) */
};

struct pertest {
	struct ptest *tests;
	size_t n, cap;
	struct replay_live *start;   /* live at the running test's start */
	int running;                 /* tests[n - 1] started and has not ended */
	size_t unmatched;            /* test-end marks that end no running test */
	struct replay_live *fix_start; /* live at the outermost fixture setup's start */
	struct replay_live *fixtures;  /* what the running test's fixture setups made */
	int fix_depth;                 /* fixture setups under way (one inside another) */
};

void pertest_init(struct pertest *p);
void pertest_release(struct pertest *p);

/* A replay_mark_fn: arg is the struct pertest. */
int pertest_on_mark(struct replay *r, const struct replay_mark *m, void *arg);

/* Is label a test mark (a test's or a fixture's, start or end)? */
int pertest_is_mark(const char *label);

#endif /* MEMPROV_PERTEST_H */
