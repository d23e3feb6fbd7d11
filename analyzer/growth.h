/*
 * growth.h - one streaming pass over a trace that gathers what the growth,
 * peak, timeline, diff and html reports need, and the analysis that turns
 * per-stack series into growing sites ("suspects").
 *
 * The pass keeps, for every (stack, kind, func), its live bytes and blocks
 * at each mark (thinned to at most GROWTH_MAX_STEPS points by keeping
 * every other one when full) and at N evenly spaced instants; per-kind
 * live bytes and RSS at the timeline's instants; the peak of live memory.
 * Memory grows with distinct stacks times points, never with events.
 */
#ifndef MEMPROV_GROWTH_H
#define MEMPROV_GROWTH_H

#include <stdint.h>
#include <stdio.h>

#include "category.h"
#include "replay.h"
#include "sites.h"
#include "symbolize.h"

#define GROWTH_MAX_STEPS 1024

/* One (stack, kind, func): its series over the points of a set. */
struct gkey {
	UT_hash_handle hh;
	struct replay_live_key key;
	uint32_t first, len, cap;  /* values for points [first, first+len) */
	uint64_t *bytes, *blocks;
	size_t site;               /* index into growth.sites after grouping */
	enum category cat;         /* set by growth_analyze */
	enum state_why why;
	struct supp_rule *rule;
};

/* A series of snapshots: at marks, or at evenly spaced instants. */
struct gset {
	struct gkey *keys;
	size_t n, cap;             /* points taken */
	uint64_t *ts;              /* when, absolute ns */
	uint64_t *ordinal;         /* mark ordinal (marks) or point number */
	char **label;              /* mark label (marks), NULL for time */
	uint64_t stride;           /* marks: one point every stride marks */
};

/* Tracked live bytes per kind and RSS at one timeline instant. */
struct gtime {
	uint64_t ts;
	uint64_t live[MP_KIND_COUNT];
	uint64_t rss, vm;          /* last sample at or before ts; 0: none yet */
	uint64_t anon;             /* its resident anonymous memory (see rss_no_anon) */
};

/* A site's figures over the growth window. */
struct gstat {
	int64_t growth_bytes, growth_blocks; /* end - start of the window */
	double slope_bytes, slope_blocks;    /* least squares, per step unit */
	double r2, rose, retention, confidence;
	size_t start;              /* point where growth started (set index) */
	uint64_t end_bytes, end_blocks;
	int suspect;
};

struct gsite {
	struct site s;             /* frames; s.bytes/s.blocks unused */
	enum category cat;         /* not CAT_PROGRAM: never a suspect */
	struct supp_rule *rule;    /* CAT_SUPPRESSED: the rule */
	int would_be;              /* not the program's, but would be a suspect */
	struct gstat st;
	uint64_t *bytes, *blocks;  /* the window's series, suspects only */
};

enum growth_flags {
	GROWTH_SERIES = 1 << 0,    /* take snapshots (growth, html, diff --growth) */
	GROWTH_PROGRESS = 1 << 1,  /* a progress line on stderr */
	GROWTH_END_LIVE = 1 << 2,  /* keep live memory at the end (as leaks measures it) */
	GROWTH_END_ALL = 1 << 3,   /* growth_analyze leaves end_live whole (else: the
				      program's only, the rest counted in end_cat) */
	GROWTH_TESTS = 1 << 4,     /* a trace with test marks: one step per test (its
				      test-end mark), from the first test on */
	GROWTH_NO_PEAK = 1 << 5,   /* no peak and no RSS figures wanted (check): without
				      GROWTH_SERIES, a progress line or a timeline, no
				      work per record (9% of check's instructions) */
	GROWTH_RULE_COUNTS = 1 << 6, /* what is set apart at the window's end counts
				      in its suppression rules (growth: their own
				      suppressions; the gate counts the end's) */
};

/* Why the window starts where it does (growth_window_why). */
enum window_why {
	WINDOW_ALL = 0,            /* every point */
	WINDOW_SKIP,               /* --skip */
	WINDOW_AFTER,              /* --after */
	WINDOW_IMPORTS,            /* no marks: after the last import */
};

struct growth_opts {
	unsigned flags;
	unsigned points;           /* instants when there are no marks (20) */
	unsigned timeline_points;  /* timeline instants (0: none) */
	uint64_t skip;             /* marks (or points) to skip at the start */
	const char *after;         /* window starts at the first mark so named */
	uint64_t min_bytes;        /* floor on growth over the window */
	enum site_mode mode;
	unsigned cat_flags;        /* enum cat_flags: CAT_NO_DEFAULTS ... */
	struct suppressions *supp; /* rules (the caller keeps them); NULL: the defaults */
	const char *step_prefix;   /* only marks whose label starts so are steps */
	const char *step_unit;     /* their unit ("test"); NULL: "mark" */
	replay_mark_fn on_mark;    /* also called at every mark (may be NULL) */
	void *mark_arg;
};

struct growth {
	struct growth_opts o;
	struct replay r;
	uint64_t start_ts, end_ts; /* span of the trace's records */
	/* snapshots */
	struct gset marks, times;
	uint64_t n_marks;          /* marks seen (main-end marks not counted) */
	uint64_t after_ordinal;    /* ordinal of the --after mark, or UINT64_MAX */
	uint64_t main_end_ts;      /* 0: no main-end mark */
	uint64_t next_time;        /* index of the next time point to take */
	/* timeline */
	struct gtime *tl;
	size_t n_tl;
	struct gtime tl_prev;      /* state after the last record */
	uint64_t rss, vm, anon, rss_samples;
	/* peak of live memory, all kinds together */
	uint64_t peak_total, peak_ts, peak_event;
	uint64_t peak_live[MP_KIND_COUNT];
	/* RSS against tracked host memory (heap + mmap + pinned), paired at
	 * each RSS sample: the first sample of the run (or from the first
	 * mark on) and the last one; anon is the sample's resident anonymous
	 * memory (0 in samples of writers that did not record it) */
	struct gpair { uint64_t ts, rss, anon, host; } rss_first, rss_from_mark, rss_last;
	int rss_no_anon;           /* a sample without resident anonymous memory */
	/* live at the end of the main module, else at the end of the trace */
	struct replay_live *end_live;
	uint64_t end_live_ts;
	/* progress */
	uint64_t next_progress;
	/* analysis */
	const struct gset *set;    /* marks or times: the one analyzed */
	size_t w0, w1;             /* window: points [w0, w1] of set */
	size_t n_window;           /* points in the window (0: empty) */
	enum window_why why;       /* where the window starts, and why */
	size_t import_point;       /* time points: the first after the last import */
	struct symbolizer *sym;
	struct classifier cat;     /* what is not the program's, at the window's end */
	struct classifier end_cat; /* the same for end_live (unless GROWTH_END_ALL) */
	size_t hidden_suspects[CAT_COUNT]; /* sites set apart that grow like suspects */
	struct gsite *sites;
	size_t n_sites, n_suspects; /* suspects first in sites[] */
};

/* Replay the open trace t once, gathering what o asks for; returns 0. */
int growth_collect(struct growth *g, struct trace *t, const struct growth_opts *o);
/*
 * Choose the window (the set, its first and last point after --skip and
 * --after, n_window), group the set's series by site and find the
 * suspects.
 */
void growth_analyze(struct growth *g);
void growth_release(struct growth *g);

/* Host memory memprov tracks now: heap + mmap + pinned. */
uint64_t growth_host_live(const struct replay *r);

/*
 * When the window is empty because of --skip or --after: print an error
 * saying so and listing the trace's mark labels, and return -1 (the
 * caller exits 2: a gate must fail closed). Else 0.
 */
int growth_window_check(const struct growth *g);
/* Why the window is what it is, one phrase ("no marks: from ..."), into buf. */
const char *growth_window_why(const struct growth *g, char *buf, size_t len);

/* "mark" or "s": the unit of a step. */
const char *growth_unit(const struct growth *g);
/* Seconds of point i since the trace started, or the mark ordinal. */
double growth_x(const struct growth *g, size_t i);

/* "4096" for whole numbers, else "%.2f": slopes print exactly when exact. */
const char *growth_num(char *buf, size_t len, double v);
/* Room for growth_point_text: a mark's label is at most 255 bytes. */
#define GROWTH_POINT_TEXT 300
/* 'mark #3 "iter"' or '1.5 s': point i of the analyzed set. */
void growth_point_text(const struct growth *g, size_t i, char *buf, size_t len);
/* 'FIRST .. LAST' of the window (as growth_point_text), or "empty". */
void growth_window_text(const struct growth *g, char *buf, size_t len);

#endif /* MEMPROV_GROWTH_H */
