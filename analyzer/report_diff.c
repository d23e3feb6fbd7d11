/*
 * report_diff.c - `memprov diff A B`: sites whose live memory at the end
 * (as `leaks` measures it) or whose growth (--growth) differs between two
 * traces, e.g. a buggy and a fixed run. Sites are matched by their
 * symbolized frames, never by stack id: two runs have different addresses.
 * Each side's reachability classes at exit (the scan's) come with it:
 * its totals, and each site's blocks per class.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "growth.h"
#include "report.h"
#include "report_reach.h"
#include "util.h"

enum diff_flags {
	DIFF_GROWTH = REPORT_OWN,  /* --growth */
};

struct side {
	struct trace t;
	struct growth g;
	struct site *sites;      /* live at the end (not --growth) */
	size_t n;
	struct reach_view rv;    /* the classes at exit (--growth: totals only) */
};

/* One site of either trace and its figures in A and B. */
struct drow {
	const struct site *s;
	uint64_t bytes[2], blocks[2];
	double slope[2];
	int64_t growth[2];
	int suspect[2];
	double delta;            /* B - A: bytes, or slope with --growth */
};

struct dmatch {
	UT_hash_handle hh;
	const char *key;
	size_t row;
};

static void row_add(struct drow **rows, size_t *n, struct dmatch **tbl, const struct site *s,
		    int side, const struct gstat *st)
{
	struct dmatch *m;
	struct drow *r;

	HASH_FIND(hh, *tbl, s->key, strlen(s->key), m);
	if (!m) {
		if (*n % 64 == 0)
			*rows = xrealloc(*rows, (*n + 64) * sizeof(**rows));
		memset(&(*rows)[*n], 0, sizeof(**rows));
		(*rows)[*n].s = s;
		m = xcalloc(1, sizeof(*m));
		m->key = s->key;
		m->row = (*n)++;
		HASH_ADD_KEYPTR(hh, *tbl, m->key, strlen(m->key), m);
	}
	r = &(*rows)[m->row];
	if (st) {
		r->slope[side] = st->slope_bytes;
		r->growth[side] = st->growth_bytes;
		r->suspect[side] = st->suspect;
		r->bytes[side] = st->end_bytes;
		r->blocks[side] = st->end_blocks;
	} else {
		r->bytes[side] = s->bytes;
		r->blocks[side] = s->blocks;
	}
}

static int row_cmp(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;

	if (fabs(x->delta) != fabs(y->delta))
		return fabs(x->delta) > fabs(y->delta) ? -1 : 1;
	return strcmp(x->s->key, y->s->key);
}

/* --growth: a site differs when it is a suspect in one trace only, or its
 * slopes differ by 10% or more. Else: live bytes differ by min_bytes. */
static int row_differs(const struct drow *r, unsigned flags, uint64_t min_bytes)
{
	if (flags & DIFF_GROWTH) {
		double hi = fmax(fabs(r->slope[0]), fabs(r->slope[1]));

		if (!r->suspect[0] && !r->suspect[1])
			return 0;
		return r->suspect[0] != r->suspect[1] || fabs(r->delta) >= 0.1 * hi;
	}
	return fabs(r->delta) >= (double)min_bytes;
}

static void print_side_json(const char *name, const struct side *sd)
{
	printf("\"%s\":{", name);
	report_json_trace(stdout, &sd->t);
	printf(",\"unit\":\"%s\",", sd->g.set ? growth_unit(&sd->g) : "mark");
	reach_json(stdout, &sd->rv, &sd->g.r);
	printf("}");
}

/* A row's blocks per class on each side that has classes: "A: 1 definitely lost; B: none". */
static void print_row_classes(const struct drow *r, const struct side *sd)
{
	uint64_t c[MP_REACH_CLASS_COUNT][2];
	int k, any = 0;

	for (k = 0; k < 2; k++) {
		if (!sd[k].rv.shown)
			continue;
		reach_site_counts(&sd[k].rv, r->s, c);
		printf("%s%c: ", any++ ? "; " : "     classes at exit: ", "AB"[k]);
		reach_site_text(stdout, (const uint64_t (*)[2])c);
	}
	if (any)
		printf("\n");
}

static void print_row_text(const struct drow *r, size_t i, unsigned flags, const struct side *sd)
{
	char b1[HUMAN_LEN], b2[HUMAN_LEN], b3[HUMAN_LEN], c1[HUMAN_LEN], c2[HUMAN_LEN];

	if (flags & DIFF_GROWTH) {
		printf("  %s#%zu %s %s: %s per %s%s\n", color(stdout, COLOR_HEADING), i + 1,
		       kind_name(r->s->kind), site_api(r->s),
		       bytes_delta(b1, sizeof(b1), (int64_t)nearbyint(r->delta)), growth_unit(&sd[0].g),
		       color(stdout, COLOR_RESET));
		printf("     A %s per %s%s, B %s per %s%s\n", bytes_rate(b2, sizeof(b2), r->slope[0]),
		       growth_unit(&sd[0].g), r->suspect[0] ? " (growing)" : "",
		       bytes_rate(b3, sizeof(b3), r->slope[1]), growth_unit(&sd[1].g),
		       r->suspect[1] ? " (growing)" : "");
	} else {
		printf("  %s#%zu %s %s: %s%s\n", color(stdout, COLOR_HEADING), i + 1, kind_name(r->s->kind),
		       site_api(r->s), bytes_delta(b1, sizeof(b1), (int64_t)nearbyint(r->delta)),
		       color(stdout, COLOR_RESET));
		printf("     A %s in %s block%s, B %s in %s block%s\n", bytes_exact(b2, sizeof(b2), r->bytes[0]),
		       fmt_count(c1, sizeof(c1), r->blocks[0]), r->blocks[0] == 1 ? "" : "s",
		       bytes_exact(b3, sizeof(b3), r->bytes[1]), fmt_count(c2, sizeof(c2), r->blocks[1]),
		       r->blocks[1] == 1 ? "" : "s");
		print_row_classes(r, sd);
	}
	site_text(stdout, r->s, sd[0].g.o.mode, SITE_ALL_FRAMES);
}

static void print_row_json(const struct drow *r, size_t i, unsigned flags, const struct side *sd)
{
	uint64_t c[MP_REACH_CLASS_COUNT][2];
	int k;

	printf("%s{", i ? "," : "");
	site_json(stdout, r->s);
	for (k = 0; k < 2; k++) {
		printf(",\"%s\":{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64, k ? "b" : "a", r->bytes[k],
		       r->blocks[k]);
		if (flags & DIFF_GROWTH)
			printf(",\"slope_bytes\":%.4f,\"growth_bytes\":%" PRId64 ",\"suspect\":%s",
			       r->slope[k], r->growth[k], r->suspect[k] ? "true" : "false");
		printf(",\"reach\":");
		if (sd[k].rv.shown && !(flags & DIFF_GROWTH)) {
			reach_site_counts(&sd[k].rv, r->s, c);
			reach_json_counts(stdout, (const uint64_t (*)[2])c);
		} else {
			printf("null");
		}
		printf("}");
	}
	if (flags & DIFF_GROWTH)
		printf(",\"delta_slope_bytes\":%.4f}", r->delta);
	else
		printf(",\"delta_bytes\":%.0f,\"delta_blocks\":%" PRId64 "}", r->delta,
		       (int64_t)(r->blocks[1] - r->blocks[0]));
}

static int diff_opt(struct report_args *a, int opt, const char *arg)
{
	(void)opt;
	(void)arg;
	a->flags |= DIFF_GROWTH;
	return 0;
}

/* 0, or the exit status: 1 unreadable, 2 an empty growth window (said on stderr) */
static int side_load(struct side *sd, const char *path, const struct growth_opts *o, unsigned flags)
{
	memset(sd, 0, sizeof(*sd));
	if (report_collect(&sd->g, &sd->t, path, o) < 0)
		return EXIT_FAIL;
	growth_analyze(&sd->g);
	if ((flags & DIFF_GROWTH) && growth_window_check(&sd->g) < 0) {
		growth_release(&sd->g);
		trace_close(&sd->t);
		return EXIT_USAGE;
	}
	if (!(flags & DIFF_GROWTH)) {
		sd->sites = sites_build(&sd->g.r, sd->g.sym, sd->g.end_live, o->mode, &sd->n);
		reach_view_build(&sd->rv, &sd->g.r, sd->g.sym, o->mode, !sd->g.main_end_ts);
	} else {
		reach_view_totals(&sd->rv, &sd->g.r);  /* the side's totals, no sites */
	}
	return 0;
}

static void side_release(struct side *sd)
{
	reach_view_free(&sd->rv);
	sites_free(sd->sites, sd->n);
	growth_release(&sd->g);
	trace_close(&sd->t);
}

/* The end of a side that was reported on: its exit status. */
static int side_close(struct side *sd)
{
	reach_view_free(&sd->rv);
	sites_free(sd->sites, sd->n);
	return report_end(&sd->g, &sd->t);
}

static int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		REPORT_OPT_JSON,
		{ "growth", no_argument, NULL, 'g' },
		REPORT_OPT_MIN_BYTES, REPORT_OPT_SKIP, REPORT_OPT_SITES, REPORT_OPT_NO_DEFAULTS,
		REPORT_OPT_END,
	};
	struct report_args a = { .cmd = &command_diff, .opts = opts, .n_traces = 2, .own = diff_opt,
				 .o = { .flags = GROWTH_PROGRESS | GROWTH_END_LIVE, .points = 20,
					.min_bytes = 1024 } };
	struct side sd[2];
	struct drow *rows = NULL;
	struct dmatch *tbl = NULL, *m, *mt;
	unsigned flags;
	size_t n = 0, i, shown = 0;
	int ret, k;

	if (report_parse(&a, argc, argv, &ret) < 0)
		return ret;
	flags = a.flags;
	if (flags & DIFF_GROWTH)
		a.o.flags |= GROWTH_SERIES;
	if ((k = side_load(&sd[0], a.traces[0], &a.o, flags)))
		return k;
	if ((k = side_load(&sd[1], a.traces[1], &a.o, flags))) {
		side_release(&sd[0]);
		return k;
	}
	for (k = 0; k < 2; k++) {
		if (flags & DIFF_GROWTH)
			for (i = 0; i < sd[k].g.n_sites; i++)
				row_add(&rows, &n, &tbl, &sd[k].g.sites[i].s, k, &sd[k].g.sites[i].st);
		else
			for (i = 0; i < sd[k].n; i++)
				row_add(&rows, &n, &tbl, &sd[k].sites[i], k, NULL);
	}
	for (i = 0; i < n; i++)
		rows[i].delta = flags & DIFF_GROWTH ? rows[i].slope[1] - rows[i].slope[0] :
			(double)rows[i].bytes[1] - (double)rows[i].bytes[0];
	sort_array(rows, n, sizeof(*rows), row_cmp);
	if (flags & REPORT_JSON) {
		report_json_open(stdout, "diff");
		print_side_json("a", &sd[0]);
		printf(",");
		print_side_json("b", &sd[1]);
		printf(",\"by\":\"%s\",\"min_bytes\":%" PRIu64 ",\"sites\":[",
		       flags & DIFF_GROWTH ? "growth" : "end", a.o.min_bytes);
	} else {
		char b[32];

		for (k = 0; k < 2; k++) {
			printf("%c: %s (pid %d, ", "AB"[k], sd[k].t.path, sd[k].t.hdr.pid);
			put_text(stdout, report_command(&sd[k].t), ESC_TEXT);
			printf(")\n");
			if (sd[k].rv.shown) {
				printf("   reachability at exit: ");
				reach_text_line(stdout, &sd[k].rv);
				printf("\n");
			}
		}
		if (flags & DIFF_GROWTH)
			printf("\nsites growing in one trace only, or whose slopes differ by 10%% or more (B - A):\n");
		else
			printf("\nsites whose live memory at the end differs by at least %s (B - A):\n",
			       human_bytes(b, sizeof(b), a.o.min_bytes));
	}
	for (i = 0; i < n; i++) {
		if (!row_differs(&rows[i], flags, a.o.min_bytes))
			continue;
		if (flags & REPORT_JSON)
			print_row_json(&rows[i], shown, flags, sd);
		else
			print_row_text(&rows[i], shown, flags, sd);
		shown++;
	}
	if (flags & REPORT_JSON)
		printf("]}\n");
	else if (!shown)
		printf("  none\n");
	HASH_ITER(hh, tbl, m, mt) {
		HASH_DEL(tbl, m);
		free(m);
	}
	free(rows);
	ret = side_close(&sd[0]);
	return ret | side_close(&sd[1]);
}

const struct command command_diff = {
	.name = "diff",
	.run = cmd_diff,
	.usage = "memprov diff [--json] [--growth] [--min-bytes SIZE] [--skip N] [--native|--python-only] [--alloc-fn NAME]... [--no-default-suppressions] A B",
	.help = "Sites whose live memory at the end (as leaks measures it) differs between\n"
		"traces A and B by at least --min-bytes (default 1K), or with --growth, sites\n"
		"growing in one trace only or whose slopes differ by 10% or more. Sites are\n"
		"matched by their symbolized frames. Figures are B - A; each side's\n"
		"reachability classes at exit (the scan's) are given with its sites.\n"
		"  --json            one JSON object on stdout\n"
		"  --growth          compare growth (suspects and slopes) instead of live at end\n"
		"  --min-bytes SIZE  least difference listed (default 1K)\n"
		"  --skip N          with --growth: leave out the first N marks of each trace\n"
		"  --native, --python-only, --alloc-fn NAME   frames shown, as for leaks\n",
};
