/*
 * growth.c - the streaming pass behind growth, peak, timeline, diff and
 * html (series of live memory per stack at marks and instants, per-kind
 * timeline with RSS, peak), and the growth analysis: least-squares slope,
 * R^2, how much of the rise was kept, where it began, and the rules that
 * make a site a suspect.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "growth.h"
#include "inherit.h"
#include "pertest.h"
#include "util.h"

#define PROGRESS_EVERY (1u << 20)

/* ---- series storage ---- */

static void gset_init(struct gset *s)
{
	memset(s, 0, sizeof(*s));
	s->stride = 1;
}

static void gkey_put(struct gkey *k, size_t p, uint64_t bytes, uint64_t blocks)
{
	size_t need;

	if (!k->len)
		k->first = (uint32_t)p;
	need = p - k->first + 1;
	if (need > k->cap) {
		k->cap = (uint32_t)(need < 8 ? 8 : need * 2);
		k->bytes = xrealloc(k->bytes, k->cap * sizeof(*k->bytes));
		k->blocks = xrealloc(k->blocks, k->cap * sizeof(*k->blocks));
	}
	while (k->len < need - 1) {
		k->bytes[k->len] = k->blocks[k->len] = 0;
		k->len++;
	}
	k->bytes[k->len] = bytes;
	k->blocks[k->len] = blocks;
	k->len = (uint32_t)need;
}

static uint64_t gkey_at(const struct gkey *k, size_t p, int blocks)
{
	if (!k->len || p < k->first || p >= k->first + k->len)
		return 0;
	return blocks ? k->blocks[p - k->first] : k->bytes[p - k->first];
}

/* Keep every other point (0, 2, 4...): the set is full. */
static void gset_thin(struct gset *s)
{
	struct gkey *k, *tmp;
	size_t i, j;

	HASH_ITER(hh, s->keys, k, tmp) {
		uint32_t f = k->first, nf = (f + 1) / 2, n = 0;

		for (i = f; i < (size_t)f + k->len; i++) {
			if (i & 1)
				continue;
			k->bytes[n] = k->bytes[i - f];
			k->blocks[n] = k->blocks[i - f];
			n++;
		}
		k->first = nf;
		k->len = n;
	}
	for (i = 0, j = 0; i < s->n; i++) {
		if (i & 1) {
			free(s->label ? s->label[i] : NULL);
			continue;
		}
		s->ts[j] = s->ts[i];
		s->ordinal[j] = s->ordinal[i];
		if (s->label)
			s->label[j] = s->label[i];
		j++;
	}
	s->n = j;
	s->stride *= 2;
}

static void gset_take(struct gset *s, const struct replay *r, uint64_t ts, uint64_t ordinal,
		      const char *label, int with_labels)
{
	struct replay_live *live, *l, *ltmp;
	struct gkey *k;
	size_t p;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->ts = xrealloc(s->ts, s->cap * sizeof(*s->ts));
		s->ordinal = xrealloc(s->ordinal, s->cap * sizeof(*s->ordinal));
		if (with_labels)
			s->label = xrealloc(s->label, s->cap * sizeof(*s->label));
	}
	p = s->n++;
	s->ts[p] = ts;
	s->ordinal[p] = ordinal;
	if (with_labels)
		s->label[p] = xstrdup(label ? label : "");
	live = replay_snapshot_counts(r);
	HASH_ITER(hh, live, l, ltmp) {
		HASH_FIND(hh, s->keys, &l->key, sizeof(l->key), k);
		if (!k) {
			k = xcalloc(1, sizeof(*k));
			k->key = l->key;
			HASH_ADD(hh, s->keys, key, sizeof(k->key), k);
		}
		gkey_put(k, p, l->bytes, l->blocks);
	}
	replay_live_free(&live);
}

static void gset_release(struct gset *s)
{
	struct gkey *k, *tmp;
	size_t i;

	HASH_ITER(hh, s->keys, k, tmp) {
		HASH_DEL(s->keys, k);
		free(k->bytes);
		free(k->blocks);
		free(k);
	}
	for (i = 0; s->label && i < s->n; i++)
		free(s->label[i]);
	free(s->label);
	free(s->ts);
	free(s->ordinal);
}

/* ---- the pass ---- */

static uint64_t total_live(const struct replay *r)
{
	uint64_t sum = 0;
	unsigned k;

	for (k = 1; k < MP_KIND_COUNT; k++)
		sum += r->kinds[k].live_bytes;
	return sum;
}

uint64_t growth_host_live(const struct replay *r)
{
	return r->kinds[MP_KIND_HEAP].live_bytes + r->kinds[MP_KIND_MMAP].live_bytes +
	       r->kinds[MP_KIND_PINNED].live_bytes;
}

/* Timeline point at ts with the state after the previous record. */
static void take_timeline(struct growth *g, uint64_t ts)
{
	struct gtime *p = &g->tl[g->n_tl++];

	*p = g->tl_prev;
	p->ts = ts;
}

static void save_timeline_state(struct growth *g, const struct replay *r)
{
	unsigned k;

	for (k = 0; k < MP_KIND_COUNT; k++)
		g->tl_prev.live[k] = r->kinds[k].live_bytes;
	g->tl_prev.rss = g->rss;
	g->tl_prev.vm = g->vm;
	g->tl_prev.anon = g->anon;
}

/* The i-th of n instants from start to end, past it for i > n (exact and
 * saturated: a damaged trace's span may be near 2^64, which a double
 * cannot bring back). */
static uint64_t instant(const struct growth *g, uint64_t i, uint64_t n)
{
	uint64_t span = g->end_ts > g->start_ts ? g->end_ts - g->start_ts : 0;
	unsigned __int128 t = g->start_ts + (unsigned __int128)span * i / (n ? n : 1);

	return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
}

static void progress(struct growth *g)
{
	struct trace *t = g->r.trace;

	fprintf(stderr, "\rmemprov: %3.0f%% of %s, %" PRIu64 " records ",
		t->file_size ? 100.0 * (double)trace_last_offset(t) / (double)t->file_size : 0.0,
		t->path, g->r.events);
}

static int on_record(struct replay *r, const struct mp_rec_head *h, void *arg)
{
	struct growth *g = arg;

	/* instants before this record see the state the previous one left */
	while (g->o.timeline_points && g->n_tl < g->o.timeline_points &&
	       h->ts > instant(g, g->n_tl + 1, g->o.timeline_points))
		take_timeline(g, instant(g, g->n_tl + 1, g->o.timeline_points));
	if (h->type == MP_REC_RSS) {
		const struct mp_rec_rss *s = (const void *)h;

		int anon = h->size >= MP_REC_RSS_ANON_SIZE;
		struct gpair pair = { h->ts, s->rss_bytes, anon ? s->anon_bytes : 0,
				      growth_host_live(r) };

		g->rss = s->rss_bytes;
		g->vm = s->vm_bytes;
		g->anon = pair.anon;
		g->rss_no_anon |= !anon;
		if (!g->rss_samples++)
			g->rss_first = pair;
		if (g->n_marks && !g->rss_from_mark.ts)
			g->rss_from_mark = pair;
		/* the gap is measured up to the end of __main__ (the sample
		 * taken at that mark): finalization frees what the run held */
		if (!g->main_end_ts || g->rss_last.ts <= g->main_end_ts)
			g->rss_last = pair;
	} else if (h->type == MP_REC_ALLOC || h->type == MP_REC_GPU_ALLOC) {
		uint64_t tot = total_live(r);

		if (tot > g->peak_total) {
			unsigned k;

			g->peak_total = tot;
			g->peak_ts = h->ts;
			g->peak_event = r->events;
			for (k = 0; k < MP_KIND_COUNT; k++)
				g->peak_live[k] = r->kinds[k].live_bytes;
		}
	}
	if (g->o.timeline_points)
		save_timeline_state(g, r);
	if ((g->o.flags & GROWTH_SERIES) && !g->main_end_ts && g->next_time < g->o.points &&
	    h->ts >= instant(g, g->next_time + 1, g->o.points)) {
		gset_take(&g->times, r, h->ts, g->next_time, NULL, 0);
		while (g->next_time < g->o.points && h->ts >= instant(g, g->next_time + 1, g->o.points))
			g->next_time++;
	}
	if ((g->o.flags & GROWTH_PROGRESS) && r->events >= g->next_progress) {
		g->next_progress = r->events + PROGRESS_EVERY;
		progress(g);
	}
	return 0;
}

/* Is m a step of the series (every mark, or those named o.step_prefix...)? */
static int is_step(const struct growth *g, const struct replay_mark *m)
{
	const char *p = g->o.step_prefix;

	return !p || !strncmp(m->label, p, strlen(p));
}

static int on_mark(struct replay *r, const struct replay_mark *m, void *arg)
{
	struct growth *g = arg;
	uint64_t ord;

	if (g->o.on_mark && g->o.on_mark(r, m, g->o.mark_arg))
		return 1;
	if (m->flags & MP_RF_MAIN_END) {
		if (!g->main_end_ts) {
			g->main_end_ts = m->ts;
			/* the window without marks ends here: its last instant */
			if ((g->o.flags & GROWTH_SERIES) && g->next_time < g->o.points)
				gset_take(&g->times, r, m->ts, g->next_time, NULL, 0);
			g->next_time = g->o.points;
		}
		if (g->o.flags & GROWTH_END_LIVE) {
			/* the last main-end mark, as leaks measures */
			replay_live_free(&g->end_live);
			g->end_live = replay_snapshot_main_end(r);
			g->end_live_ts = m->ts;
		}
		return 0;
	}
	if (g->main_end_ts)
		return 0; /* after the main module: finalization, not the run */
	if ((g->o.flags & GROWTH_TESTS) && !g->o.step_prefix && pertest_is_mark(m->label)) {
		/* a test run: one step per test, from the first test on */
		gset_release(&g->marks);
		gset_init(&g->marks);
		g->n_marks = 0;
		if (g->after_ordinal != UINT64_MAX)
			g->after_ordinal = 0;
		g->o.step_prefix = PERTEST_END;
		g->o.step_unit = "test";
	}
	/* --after names any mark: the window starts at the next step */
	if (g->o.after && g->after_ordinal == UINT64_MAX && !strcmp(m->label, g->o.after))
		g->after_ordinal = g->n_marks;
	if (!is_step(g, m))
		return 0;
	ord = g->n_marks++;
	if (!(g->o.flags & GROWTH_SERIES) || ord % g->marks.stride)
		return 0;
	if (g->marks.n == GROWTH_MAX_STEPS) {
		gset_thin(&g->marks);
		if (ord % g->marks.stride)
			return 0;
	}
	gset_take(&g->marks, r, m->ts, ord, m->label, 1);
	return 0;
}

int growth_collect(struct growth *g, struct trace *t, const struct growth_opts *o)
{
	memset(g, 0, sizeof(*g));
	g->o = *o;
	gset_init(&g->marks);
	gset_init(&g->times);
	g->after_ordinal = UINT64_MAX;
	g->start_ts = trace_start_ts(t);
	g->end_ts = trace_end_ts(t);
	if (g->end_ts < g->start_ts)
		g->end_ts = g->start_ts;
	if (o->timeline_points)
		g->tl = xcalloc(o->timeline_points + 1, sizeof(*g->tl));
	if ((o->flags & GROWTH_PROGRESS) && !isatty(2))
		g->o.flags &= ~GROWTH_PROGRESS;
	replay_init(&g->r, t);
	inherit_seed(&g->r);
	if (!(g->o.flags & GROWTH_NO_PEAK) ||
	    (g->o.flags & (GROWTH_SERIES | GROWTH_PROGRESS)) || o->timeline_points)
		g->r.on_record = on_record;
	g->r.on_mark = on_mark;
	g->r.arg = g;
	replay_run(&g->r);
	if (g->o.flags & GROWTH_PROGRESS)
		fprintf(stderr, "\r%60s\r", "");
	/* the last instant: whatever the last record left */
	while (o->timeline_points && g->n_tl < o->timeline_points)
		take_timeline(g, instant(g, g->n_tl + 1, o->timeline_points));
	if ((o->flags & GROWTH_SERIES) && !g->main_end_ts && g->next_time < o->points && g->r.events)
		gset_take(&g->times, &g->r, g->r.now, g->next_time, NULL, 0);
	if ((o->flags & GROWTH_END_LIVE) && !g->end_live) {
		g->end_live = replay_snapshot(&g->r);
		g->end_live_ts = replay_end_ts(&g->r);
	}
	return 0;
}

/* ---- analysis ---- */

const char *growth_unit(const struct growth *g)
{
	if (g->set != &g->marks)
		return "s";
	return g->o.step_unit ? g->o.step_unit : "mark";
}

double growth_x(const struct growth *g, size_t i)
{
	if (g->set == &g->marks)
		return (double)g->set->ordinal[i];
	return (double)(g->set->ts[i] - g->start_ts) / 1e9;
}

/* Least squares of y over x on [w0, w1]: slope and R^2. */
static void fit(const struct growth *g, const uint64_t *y, size_t n, double *slope, double *r2)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		mx += growth_x(g, g->w0 + i);
		my += (double)y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (i = 0; i < n; i++) {
		double dx = growth_x(g, g->w0 + i) - mx, dy = (double)y[i] - my;

		sxx += dx * dx;
		sxy += dx * dy;
		syy += dy * dy;
	}
	*slope = sxx > 0 ? sxy / sxx : 0;
	*r2 = sxx > 0 && syy > 0 ? sxy * sxy / (sxx * syy) : 0;
}

/*
 * A suspect keeps what it gains: growth over the window above the floor,
 * a positive slope, at least half of all rises kept at the end (a
 * sawtooth gives them back), still rising in the window's second half (a
 * bounded cache stops), and a fit that explains at least half the
 * variance. Without marks the window is time, and only steady growth
 * counts: the site must also have risen in the first half (a late step,
 * a result built at the end, is not a trend) and in at least a third of
 * the steps (a table that doubles now and then is not one either), and a
 * site of one or two blocks whose every rise at least doubled it is a
 * hash table or set growing by resizes (asyncio's set of tasks over a
 * short window rose in 3 of 8 steps: 8, 16, 32 KiB), not a leak.
 */
static void site_stats(const struct growth *g, const uint64_t *y, const uint64_t *yb,
		       struct gstat *st)
{
	size_t n = g->w1 - g->w0 + 1, i, mid = (n - 1) / 2, rose = 0, doubled = 0;
	uint64_t min = UINT64_MAX;
	double rises = 0;

	memset(st, 0, sizeof(*st));
	st->end_bytes = y[n - 1];
	st->end_blocks = yb[n - 1];
	st->growth_bytes = (int64_t)(y[n - 1] - y[0]);
	st->growth_blocks = (int64_t)(yb[n - 1] - yb[0]);
	for (i = 0; i < n; i++) {
		if (y[i] <= min) {
			min = y[i];
			st->start = g->w0 + i;
		}
		if (i && y[i] > y[i - 1]) {
			rises += (double)(y[i] - y[i - 1]);
			rose++;
			doubled += y[i] / 2 >= y[i - 1];
		}
	}
	if (n < 2)
		return;
	fit(g, y, n, &st->slope_bytes, &st->r2);
	fit(g, yb, n, &st->slope_blocks, &(double){ 0 });
	st->rose = (double)rose / (double)(n - 1);
	st->retention = rises > 0 && st->growth_bytes > 0 ? (double)st->growth_bytes / rises : 0;
	st->confidence = st->r2 * st->retention;
	st->suspect = n >= 3 && st->growth_bytes > 0 &&
		      (uint64_t)st->growth_bytes >= g->o.min_bytes && st->slope_bytes > 0 &&
		      st->retention >= 0.5 && st->r2 >= 0.5 &&
		      y[n - 1] > y[mid] && 4 * (y[n - 1] - y[mid]) >= (uint64_t)st->growth_bytes;
	if (st->suspect && g->set == &g->times)
		st->suspect = y[mid] > y[0] && 4 * (y[mid] - y[0]) >= (uint64_t)st->growth_bytes &&
			      3 * rose >= n - 1 && !(doubled == rose && yb[n - 1] <= 2);
}

/* A site's place in g->sites, found by its category and key. */
struct site_slot {
	UT_hash_handle hh;
	char *key;                /* category, then the site's key */
	size_t index;
};

/* Index in g->sites of the site of k, added when new. */
static size_t site_index(struct growth *g, struct site_slot **slots, const struct gkey *k)
{
	struct site_slot *slot;
	struct site s;
	size_t len;
	char *key;

	site_of(&s, &g->r, g->sym, &k->key, g->o.mode);
	len = strlen(s.key) + 2;
	key = xmalloc(len + 1);
	snprintf(key, len + 1, "%d\n%s", (int)k->cat, s.key);
	HASH_FIND(hh, *slots, key, len, slot);
	if (slot) {
		free(key);
		site_release(&s);
		return slot->index;
	}
	if (g->n_sites % 64 == 0)
		g->sites = xrealloc(g->sites, (g->n_sites + 64) * sizeof(*g->sites));
	slot = xcalloc(1, sizeof(*slot));
	slot->key = key;
	slot->index = g->n_sites;
	HASH_ADD_KEYPTR(hh, *slots, slot->key, len, slot);
	memset(&g->sites[g->n_sites], 0, sizeof(g->sites[0]));
	g->sites[g->n_sites].s = s;
	g->sites[g->n_sites].cat = k->cat;
	g->sites[g->n_sites].rule = k->rule;
	return g->n_sites++;
}

static int key_by_site(const void *a, const void *b)
{
	const struct gkey *x = *(const struct gkey *const *)a, *y = *(const struct gkey *const *)b;

	return x->site < y->site ? -1 : x->site > y->site;
}

/* Suspects first, then the program's other sites, then each category's. */
static int site_cmp(const void *a, const void *b)
{
	const struct gsite *x = a, *y = b;

	if (x->st.suspect != y->st.suspect)
		return x->st.suspect ? -1 : 1;
	if (x->cat != y->cat)
		return x->cat < y->cat ? -1 : 1;
	if (x->st.growth_bytes != y->st.growth_bytes)
		return x->st.growth_bytes > y->st.growth_bytes ? -1 : 1;
	if (x->st.end_bytes != y->st.end_bytes)
		return x->st.end_bytes > y->st.end_bytes ? -1 : 1;
	return strcmp(x->s.key, y->s.key);
}

/*
 * Without marks: the first instant after the last import of the first
 * half of the run (the sum of what the import machinery allocated last
 * rose there). Imports later than that are not waited for: they would
 * leave too little to judge, and their memory is set apart anyway.
 */
static size_t after_imports(const struct growth *g)
{
	const struct gset *s = g->set;
	const struct gkey *k, *tmp;
	uint64_t *sum = xcalloc(s->n + 1, sizeof(*sum));
	size_t p, last = 0;

	HASH_ITER(hh, s->keys, k, tmp)
		if (k->cat == CAT_STATE && k->why == WHY_IMPORT)
			for (p = 0; p < s->n; p++)
				sum[p] += gkey_at(k, p, 0);
	for (p = 1; p < s->n && p <= (s->n - 1) / 2; p++)
		if (sum[p] > sum[p - 1])
			last = p;
	free(sum);
	return last;
}

static void choose_window(struct growth *g)
{
	const struct gset *s;
	size_t i;

	g->set = g->marks.n >= 2 ? &g->marks : &g->times;
	s = g->set;
	g->w0 = 0;
	g->w1 = s->n ? s->n - 1 : 0;
	g->why = g->o.after && s == &g->marks ? WINDOW_AFTER : g->o.skip ? WINDOW_SKIP : WINDOW_ALL;
	for (i = 0; i < s->n; i++) {
		uint64_t ord = s->ordinal[i];

		if (ord < g->o.skip)
			continue;
		if (s == &g->marks && g->o.after &&
		    (g->after_ordinal == UINT64_MAX || ord < g->after_ordinal))
			continue;
		break;
	}
	g->import_point = s == &g->times ? after_imports(g) : 0;
	if (s == &g->times && g->import_point > i && i < s->n) {
		i = g->import_point;
		g->why = WINDOW_IMPORTS;
	}
	g->w0 = i;
	if (g->w0 > g->w1)
		g->w0 = g->w1 + 1; /* an empty window */
	g->n_window = s->n && g->w0 <= g->w1 ? g->w1 - g->w0 + 1 : 0;
}

/*
 * Classify every key of the set, by what its stack is. Points keep no
 * sizes: how many blocks of one size a key has (numpy's cache keeps 7 of
 * a size) is taken from the end of the replay, as leaks and check see it
 * (a line that makes temporaries of many sizes, each kept by numpy's
 * cache, is not growth: t1020); a key gone by then counts its blocks.
 */
static void classify_keys(struct growth *g)
{
	struct replay_live *end = g->end_live ? g->end_live : replay_snapshot(&g->r), *e;
	struct gkey *k, *tmp;
	struct replay_live l;

	memset(&l, 0, sizeof(l));
	HASH_ITER(hh, g->set->keys, k, tmp) {
		size_t last = k->len ? k->first + k->len - 1 : 0;

		/* arenas are told by their blocks' size: the last point that has any */
		l.key = k->key;
		l.blocks = gkey_at(k, last, 1);
		l.bytes = gkey_at(k, last, 0);
		HASH_FIND(hh, end, &l.key, sizeof(l.key), e);
		l.one_size = e && e->one_size < l.blocks ? e->one_size : l.blocks;
		k->why = WHY_IMPORT;
		k->cat = cat_of(&g->cat, &l, &k->rule, &k->why);
	}
	if (end != g->end_live)
		replay_live_free(&end);
}

/* Count what is set apart at the window's end, and the sites that would grow. */
static void count_hidden(struct growth *g)
{
	struct gkey *k, *tmp;
	size_t i;

	if (!g->n_window)
		return;
	HASH_ITER(hh, g->set->keys, k, tmp)
		if (k->cat != CAT_PROGRAM)
			cat_count(&g->cat, k->cat, k->why,
				  g->o.flags & GROWTH_RULE_COUNTS ? k->rule : NULL,
				  gkey_at(k, g->w1, 1), gkey_at(k, g->w1, 0));
	for (i = 0; i < g->n_sites; i++)
		if (g->sites[i].would_be) {
			g->hidden_suspects[g->sites[i].cat]++;
			if (g->sites[i].rule)
				g->sites[i].rule->sites++;
		}
}

/* The program's own memory in end_live; the rest counted in end_cat. */
static void split_end(struct growth *g)
{
	cat_init(&g->end_cat, &g->r, g->sym, g->o.supp, g->o.cat_flags | CAT_END_VERDICT);
	if (g->end_live && !(g->o.flags & GROWTH_END_ALL))
		cat_split(&g->end_cat, &g->end_live, NULL);
}

void growth_analyze(struct growth *g)
{
	struct site_slot *slots = NULL, *e, *etmp;
	struct gkey **keys, *k, *ktmp;
	size_t nk, i, j, n;
	uint64_t *y, *yb;

	g->sym = sym_new(&g->r, 1);
	cat_init(&g->cat, &g->r, g->sym, g->o.supp, g->o.cat_flags | CAT_GROWTH | CAT_LIBRARY | CAT_FREELIST);
	split_end(g);
	g->set = g->marks.n >= 2 ? &g->marks : &g->times;
	classify_keys(g);
	choose_window(g);
	nk = HASH_COUNT(g->set->keys);
	keys = xmalloc((nk + 1) * sizeof(*keys));
	i = 0;
	HASH_ITER(hh, g->set->keys, k, ktmp) {
		k->site = site_index(g, &slots, k);
		keys[i++] = k;
	}
	HASH_ITER(hh, slots, e, etmp) {
		HASH_DEL(slots, e);
		free(e->key);
		free(e);
	}
	sort_array(keys, nk, sizeof(*keys), key_by_site);
	n = g->n_window;
	y = xcalloc(n + 1, sizeof(*y));
	yb = xcalloc(n + 1, sizeof(*yb));
	for (i = 0; i < nk;) {
		struct gsite *gs = &g->sites[keys[i]->site];

		memset(y, 0, (n + 1) * sizeof(*y));
		memset(yb, 0, (n + 1) * sizeof(*yb));
		for (; i < nk && &g->sites[keys[i]->site] == gs; i++)
			for (j = 0; j < n; j++) {
				y[j] += gkey_at(keys[i], g->w0 + j, 0);
				yb[j] += gkey_at(keys[i], g->w0 + j, 1);
			}
		if (!n)
			continue;
		site_stats(g, y, yb, &gs->st);
		if (gs->cat != CAT_PROGRAM) {
			gs->would_be = gs->st.suspect;
			gs->st.suspect = 0;
		}
		if (gs->st.suspect) {
			gs->bytes = xmalloc(n * sizeof(*y));
			gs->blocks = xmalloc(n * sizeof(*y));
			memcpy(gs->bytes, y, n * sizeof(*y));
			memcpy(gs->blocks, yb, n * sizeof(*y));
			g->n_suspects++;
		}
	}
	free(y);
	free(yb);
	free(keys);
	count_hidden(g);
	sort_array(g->sites, g->n_sites, sizeof(*g->sites), site_cmp);
}

void growth_release(struct growth *g)
{
	size_t i;

	for (i = 0; i < g->n_sites; i++) {
		free(g->sites[i].bytes);
		free(g->sites[i].blocks);
		site_release(&g->sites[i].s);
	}
	free(g->sites);
	if (g->sym) {
		cat_release(&g->cat);
		cat_release(&g->end_cat);
		sym_free(g->sym);
	}
	gset_release(&g->marks);
	gset_release(&g->times);
	free(g->tl);
	replay_live_free(&g->end_live);
	replay_release(&g->r);
}

/* ---- output helpers shared by the reports ---- */

void growth_point_text(const struct growth *g, size_t i, char *buf, size_t len)
{
	char t[32];

	if (g->set == &g->marks)
		snprintf(buf, len, "mark #%" PRIu64 " \"%s\"", g->set->ordinal[i], g->set->label[i]);
	else
		snprintf(buf, len, "%s", human_ns(t, sizeof(t), trace_rel(g->r.trace, g->set->ts[i])));
}

void growth_window_text(const struct growth *g, char *buf, size_t len)
{
	char b[GROWTH_POINT_TEXT];
	size_t n;

	if (!g->n_window) {
		snprintf(buf, len, "empty");
		return;
	}
	growth_point_text(g, g->w0, buf, len);
	growth_point_text(g, g->w1, b, sizeof(b));
	n = strlen(buf);
	snprintf(buf + n, len - n, " .. %s", b);
}

const char *growth_window_why(const struct growth *g, char *buf, size_t len)
{
	char t[32], unit[32];

	if (g->set == &g->marks) {
		snprintf(unit, sizeof(unit), "%s", g->o.step_unit ? g->o.step_unit : "mark");
		switch (g->why) {
		case WINDOW_AFTER:
			snprintf(buf, len, "from the first %s at or after the mark named by --after", unit);
			break;
		case WINDOW_SKIP:
			snprintf(buf, len, "the first %" PRIu64 " %ss left out by --skip", g->o.skip, unit);
			break;
		default:
			snprintf(buf, len, "every %s%s", unit,
				 g->main_end_ts ? " before the end of the Python main module" : "");
		}
		return buf;
	}
	if (g->why == WINDOW_IMPORTS)
		snprintf(buf, len, "from the first instant after the last import, at %s; a site "
			 "must grow in both halves of the window and in a third of its steps: steady "
			 "growth, not warm-up",
			 human_ns(t, sizeof(t), trace_rel(g->r.trace, g->set->ts[g->import_point])));
	else
		snprintf(buf, len, "%s; a site must grow in both halves of the window and in a third "
			 "of its steps: steady growth, not warm-up",
			 g->why == WINDOW_SKIP ? "the first instants left out by --skip" :
						 "every instant");
	return buf;
}

/* The distinct labels of the trace's marks, with counts, on stderr. */
static void list_labels(const struct replay *r)
{
	size_t i, j, shown = 0;

	if (!r->n_marks) {
		fprintf(stderr, "memprov: '%s' has no marks\n", r->trace->path);
		return;
	}
	fprintf(stderr, "memprov: the marks of '%s':\n", r->trace->path);
	for (i = 0; i < r->n_marks; i++) {
		size_t count = 0;

		for (j = 0; j < i; j++)
			if (!strcmp(r->marks[j].label, r->marks[i].label))
				break;
		if (j < i)
			continue; /* counted at its first one */
		if (shown++ == 20) {
			fprintf(stderr, "  ... and more\n");
			return;
		}
		for (j = i; j < r->n_marks; j++)
			count += !strcmp(r->marks[j].label, r->marks[i].label);
		fprintf(stderr, "  \"");
		put_text(stderr, r->marks[i].label, ESC_TEXT);
		fprintf(stderr, "\" (%zu)%s\n", count,
			r->marks[i].flags & MP_RF_MAIN_END ? ": the end of the Python main module" : "");
	}
}

int growth_window_check(const struct growth *g)
{
	if (g->o.after && g->after_ordinal == UINT64_MAX) {
		error("no mark named '%s' in '%s': the window would be empty", g->o.after,
		      g->r.trace->path);
		list_labels(&g->r);
		return -1;
	}
	if (g->n_window || (!g->o.skip && !g->o.after))
		return 0;
	error("--skip %" PRIu64 "%s%s%s leaves no %s of '%s' to judge (it has %zu)", g->o.skip,
	      g->o.after ? " and --after '" : "", g->o.after ? g->o.after : "",
	      g->o.after ? "'" : "", g->set == &g->marks ? "mark" : "instant", g->r.trace->path,
	      g->set == &g->marks ? (size_t)g->n_marks : g->set->n);
	list_labels(&g->r);
	return -1;
}

const char *growth_num(char *buf, size_t len, double v)
{
	if (fabs(v - nearbyint(v)) < 1e-6)
		snprintf(buf, len, "%.0f", nearbyint(v) == 0 ? 0.0 : nearbyint(v));
	else
		snprintf(buf, len, "%.2f", v);
	return buf;
}
