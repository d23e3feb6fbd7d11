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
	replay_live_free(&p->fix_start);
	replay_live_free(&p->fixtures);
	memset(p, 0, sizeof(*p));
}

static int has_prefix(const char *label, const char *prefix)
{
	return !strncmp(label, prefix, strlen(prefix));
}

int pertest_is_mark(const char *label)
{
	return has_prefix(label, PERTEST_START) || has_prefix(label, PERTEST_END) ||
	       has_prefix(label, PERTEST_FIX_START) || has_prefix(label, PERTEST_FIX_END);
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
	replay_live_free(&p->fix_start);
	replay_live_free(&p->fixtures);
	p->fix_depth = 0;
	p->start = replay_snapshot_counts(r);
	p->running = 1;
}

/*
 * A module or session fixture is set up in the setup of the first test
 * that asks for it and lives on after that test: what grew during its
 * setup is set aside (a module fixture's 100 KB buffer failed its first
 * test, `kept` by it). Nested setups count once, from the outermost.
 */
static void fixture_start(struct pertest *p, const struct replay *r)
{
	if (!p->running || p->fix_depth++)
		return;
	replay_live_free(&p->fix_start);
	p->fix_start = replay_snapshot_counts(r);
}

static void fixture_end(struct pertest *p, const struct replay *r)
{
	struct replay_live *g, *l, *tmp, *have;

	if (!p->running || !p->fix_depth || --p->fix_depth)
		return;
	g = grown_since(p->fix_start, r);
	replay_live_free(&p->fix_start);
	HASH_ITER(hh, g, l, tmp) {
		HASH_DEL(g, l);
		HASH_FIND(hh, p->fixtures, &l->key, sizeof(l->key), have);
		if (have) {
			have->bytes += l->bytes;
			have->blocks += l->blocks;
			free(l);
		} else {
			HASH_ADD(hh, p->fixtures, key, sizeof(l->key), l);
		}
	}
}

/* grown less what the test's fixtures made (what is left of it, at most). */
static void less_fixtures(struct replay_live **grown, const struct replay_live *fixtures)
{
	struct replay_live *l, *tmp;
	const struct replay_live *f;

	HASH_ITER(hh, *grown, l, tmp) {
		HASH_FIND(hh, fixtures, &l->key, sizeof(l->key), f);
		if (!f)
			continue;
		if (l->bytes <= f->bytes) {
			HASH_DEL(*grown, l);
			free(l);
			continue;
		}
		l->bytes -= f->bytes;
		l->blocks = l->blocks > f->blocks ? l->blocks - f->blocks : 0;
		if (l->one_size > l->blocks)
			l->one_size = l->blocks;
	}
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
	less_fixtures(&t->grown, p->fixtures);
	replay_live_free(&p->start);
	replay_live_free(&p->fix_start);
	replay_live_free(&p->fixtures);
	p->fix_depth = 0;
	p->running = 0;
}

int pertest_on_mark(struct replay *r, const struct replay_mark *m, void *arg)
{
	struct pertest *p = arg;

	if (has_prefix(m->label, PERTEST_START))
		test_start(p, r, m);
	else if (has_prefix(m->label, PERTEST_END))
		test_end(p, r, m);
	else if (has_prefix(m->label, PERTEST_FIX_START))
		fixture_start(p, r);
	else if (has_prefix(m->label, PERTEST_FIX_END))
		fixture_end(p, r);
	return 0;
}
