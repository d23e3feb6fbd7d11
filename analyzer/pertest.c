/*
 * pertest.c - per-test growth of live memory between a test's start and
 * end marks (pertest.h).
 */
#include <string.h>

#include "pertest.h"
#include "util.h"

void pertest_init(struct pertest *p)
{
	memset(p, 0, sizeof(*p));
}

void pertest_release(struct pertest *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->tests[i].nodeid);
		replay_live_free(&p->tests[i].grown);
	}
	free(p->tests);
	replay_live_free(&p->start);
	memset(p, 0, sizeof(*p));
}

int pertest_is_mark(const char *label)
{
	return !strncmp(label, PERTEST_START, strlen(PERTEST_START)) ||
	       !strncmp(label, PERTEST_END, strlen(PERTEST_END));
}

/* What grew from p->start to now, per (stack, kind, func): bytes > 0 only. */
static struct replay_live *grown_since(struct replay_live *start, const struct replay *r)
{
	struct replay_live *now = replay_snapshot(r), *l, *tmp, *s;

	HASH_ITER(hh, now, l, tmp) {
		HASH_FIND(hh, start, &l->key, sizeof(l->key), s);
		if (!s)
			continue;
		if (l->bytes <= s->bytes) {
			HASH_DEL(now, l);
			free(l);
			continue;
		}
		/* one block a test adds to a line that holds one from each test
		 * is not "one block of library state" (20 tests each keeping an
		 * array passed, test by test: the review) */
		l->whole_blocks = l->blocks;
		l->whole_bytes = l->bytes;
		l->bytes -= s->bytes;
		l->blocks = l->blocks > s->blocks ? l->blocks - s->blocks : 0;
		if (l->one_size > l->blocks)
			l->one_size = l->blocks;
	}
	return now;
}

static void test_start(struct pertest *p, const struct replay *r, const struct replay_mark *m)
{
	struct ptest *t;

	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->tests = xrealloc(p->tests, p->cap * sizeof(*p->tests));
	}
	t = &p->tests[p->n++];
	memset(t, 0, sizeof(*t));
	t->nodeid = xstrdup(m->label + strlen(PERTEST_START));
	t->start_ts = m->ts;
	replay_live_free(&p->start);
	p->start = replay_snapshot_counts(r);
	p->running = 1;
}

static void test_end(struct pertest *p, const struct replay *r, const struct replay_mark *m)
{
	struct ptest *t = p->n ? &p->tests[p->n - 1] : NULL;

	if (!p->running || strcmp(t->nodeid, m->label + strlen(PERTEST_END))) {
		p->unmatched++;
		return;
	}
	t->end_ts = m->ts;
	t->grown = grown_since(p->start, r);
	replay_live_free(&p->start);
	p->running = 0;
}

int pertest_on_mark(struct replay *r, const struct replay_mark *m, void *arg)
{
	struct pertest *p = arg;

	if (!strncmp(m->label, PERTEST_START, strlen(PERTEST_START)))
		test_start(p, r, m);
	else if (!strncmp(m->label, PERTEST_END, strlen(PERTEST_END)))
		test_end(p, r, m);
	return 0;
}
