/*
 * html_data.c - the data the HTML page renders, as one JSON object: the
 * timeline (live bytes per kind, RSS, marks, the judged window), the gap
 * check, the growing sites, and the memory live at the end (as `leaks`
 * measures it) by site, each site's memory marked when a default
 * suppression of the gate says it is kept on purpose. Frames are written
 * once, in a table, and sites name them by index; the page's script
 * builds its tables and flame graph from that.
 *
 * Every figure comes from the computations `growth`, `timeline`,
 * `leaks` and `check` use.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "report_reach.h"
#include "suppress.h"
#include "timeline.h"
#include "util.h"

#define HTML_MARKS 5000
#define HTML_MAX_SITES 3000  /* per list; the rest is counted, not listed */

/* One frame of the table: its fields, and its index as written. */
struct hframe {
	UT_hash_handle hh;
	char *key;
	size_t idx;
};

struct hdata {
	FILE *f;
	struct growth *g;
	struct hframe *frames;      /* by key */
	char *ftab;                 /* the table's JSON, written as frames are met */
	size_t ftab_len, n_frames;
	FILE *ft;
};

/*
 * A Python frame of the import machinery (importlib, zipimport: files
 * named "<frozen ...>") is "i"; other Python frames "p"; a native frame
 * inside the interpreter "x", other native frames "n".
 */
static const char *py_type(const char *file)
{
	return file && (!strncmp(file, "<frozen ", 8) || strstr(file, "/importlib/")) ? "i" : "p";
}

/* The index of a frame, added to the table the first time it is met. */
static size_t frame_idx(struct hdata *h, const char *type, const char *name, const char *file,
			long line, const char *module)
{
	struct hframe *e;
	char *key;
	size_t len;
	FILE *k = xopen_memstream(&key, &len);

	fprintf(k, "%s|%s|%s|%ld|%s", type, name, file ? file : "", line, module ? module : "");
	fclose(k);
	HASH_FIND(hh, h->frames, key, len, e);
	if (e) {
		free(key);
		return e->idx;
	}
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->idx = h->n_frames++;
	HASH_ADD_KEYPTR(hh, h->frames, e->key, len, e);
	fprintf(h->ft, "%s[", e->idx ? "," : "");
	json_str(h->ft, name);
	fputc(',', h->ft);
	json_str(h->ft, file);
	fprintf(h->ft, ",%ld,\"%s\",", line, type);
	json_str(h->ft, module);
	fputc(']', h->ft);
	return e->idx;
}

/*
 * "f":[frame indices] in report order (Python frames innermost first,
 * then native frames innermost first), "np": how many are Python's.
 */
static void site_frames(struct hdata *h, const struct site *s)
{
	char fb[512];
	size_t j;

	fprintf(h->f, "\"np\":%zu,\"f\":[", s->n_python);
	for (j = 0; j < s->n_python; j++)
		fprintf(h->f, "%s%zu", j ? "," : "",
			frame_idx(h, py_type(s->python[j].file), s->python[j].function, s->python[j].file,
				  (long)s->python[j].line, NULL));
	for (j = 0; j < s->n_native; j++) {
		const struct sym_frame *fr = s->native[j];

		fprintf(h->f, "%s%zu", j || s->n_python ? "," : "",
			frame_idx(h, fr->interpreter ? "x" : "n",
				  fr->function ? fr->function : sym_fallback(fr, fb, sizeof(fb)), fr->file,
				  (long)fr->line, fr->module));
	}
	fputc(']', h->f);
}

/* The RSS (or its anonymous part) at each instant, null before the first
 * sample; the whole array null when there is none. */
static void samples(FILE *f, const struct growth *g, int known, int anon)
{
	size_t i;

	if (!known) {
		fprintf(f, "null");
		return;
	}
	fputc('[', f);
	for (i = 0; i < g->n_tl; i++) {
		if (g->tl[i].rss)
			fprintf(f, "%s%" PRIu64, i ? "," : "", anon ? g->tl[i].anon : g->tl[i].rss);
		else
			fprintf(f, "%snull", i ? "," : "");
	}
	fputc(']', f);
}

static void data_timeline(FILE *f, const struct growth *g)
{
	const struct trace *t = g->r.trace;
	unsigned k, used = 0;
	size_t i;

	for (k = 1; k < MP_KIND_COUNT; k++)
		if (g->r.kinds[k].peak_bytes)
			used |= 1u << k;
	fprintf(f, "\"timeline\":{\"ns\":[");
	for (i = 0; i < g->n_tl; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", trace_rel(t, g->tl[i].ts));
	fprintf(f, "],\"kinds\":{");
	for (k = 1, used = used ? used : 1u << MP_KIND_HEAP; k < MP_KIND_COUNT; k++) {
		if (!(used & (1u << k)))
			continue;
		fprintf(f, "%s\"%s\":[", used & ((1u << k) - 1) ? "," : "", kind_name(k));
		for (i = 0; i < g->n_tl; i++)
			fprintf(f, "%s%" PRIu64, i ? "," : "", g->tl[i].live[k]);
		fprintf(f, "]");
	}
	fprintf(f, "},\"rss\":");
	samples(f, g, g->rss_samples, 0);
	fprintf(f, ",\"anon\":");
	samples(f, g, g->rss_samples && !g->rss_no_anon, 1);
	fputc('}', f);
}

/* The marks, and the window growth judged (its ends as instants). */
static void data_marks(FILE *f, const struct growth *g)
{
	const struct trace *t = g->r.trace;
	char win[2 * GROWTH_POINT_TEXT + 8];
	size_t i;

	fprintf(f, "\"marks\":[");
	for (i = 0; i < g->r.n_marks && i < HTML_MARKS; i++) {
		fprintf(f, "%s{\"ns\":%" PRIu64 ",\"label\":", i ? "," : "",
			trace_rel(t, g->r.marks[i].ts));
		json_str(f, g->r.marks[i].label);
		fprintf(f, ",\"main_end\":%s}", g->r.marks[i].flags & MP_RF_MAIN_END ? "true" : "false");
	}
	fprintf(f, "],\"n_marks\":%zu,\"window\":", g->r.n_marks);
	if (!g->n_window) {
		fprintf(f, "null");
		return;
	}
	growth_window_text(g, win, sizeof(win));
	fprintf(f, "{\"text\":");
	json_str(f, win);
	fprintf(f, ",\"from_ns\":%" PRIu64 ",\"to_ns\":%" PRIu64 ",\"points\":%zu}",
		trace_rel(t, g->set->ts[g->w0]), trace_rel(t, g->set->ts[g->w1]), g->n_window);
}

/*
 * The growing sites, each with what a default suppression of the gate
 * says of its frames ("kept": imports, the interpreter's caches), or null.
 */
static void data_suspects(struct hdata *h, struct suppressions *supp)
{
	const struct growth *g = h->g;
	char at[GROWTH_POINT_TEXT];
	FILE *f = h->f;
	size_t i;

	fprintf(f, "\"suspects\":[");
	for (i = 0; i < g->n_suspects; i++) {
		const struct gsite *s = &g->sites[i];
		struct site end = s->s;    /* with its figures at the end, for SMALL rules */
		const struct supp_rule *rule;

		end.bytes = s->st.end_bytes;
		end.blocks = s->st.end_blocks;
		rule = supp_match_site(supp, SUPP_LEAK, &end);

		growth_point_text(g, s->st.start, at, sizeof(at));
		fprintf(f, "%s{\"kind\":\"%s\",\"api\":", i ? "," : "", kind_name(s->s.kind));
		json_str(f, site_api(&s->s));
		fprintf(f, ",\"growth_bytes\":%" PRId64 ",\"growth_blocks\":%" PRId64
			",\"slope_bytes\":%.3f,\"slope_blocks\":%.3f,\"start\":",
			s->st.growth_bytes, s->st.growth_blocks, s->st.slope_bytes, s->st.slope_blocks);
		json_str(f, at);
		fprintf(f, ",\"start_label\":");
		json_str(f, g->set == &g->marks ? g->set->label[s->st.start] : NULL);
		fprintf(f, ",\"kept\":");
		json_str(f, rule ? rule->why : NULL);
		fprintf(f, ",\"start_ns\":%" PRIu64 ",\"end_bytes\":%" PRIu64 ",\"end_blocks\":%" PRIu64
			",\"confidence\":%.2f,",
			trace_rel(g->r.trace, g->set->ts[s->st.start]), s->st.end_bytes, s->st.end_blocks,
			s->st.confidence);
		site_frames(h, &s->s);
		fputc('}', f);
	}
	fprintf(f, "]");
}

/* Live memory at the end that is not the program's own, per reason. */
struct kept {
	const char *why;          /* NULL: the program's own */
	struct replay_live *live;
};

/*
 * Sort the live memory at the end by the default rule (if any) that says
 * it is kept on purpose, as `memprov check` does: buckets[0] is memory no
 * rule explains, buckets[1 + i] what rule i hides.
 */
static struct kept *split_kept(struct growth *g, size_t *nb)
{
	struct classifier *cls = &g->end_cat;
	struct suppressions *supp = cls->supp;
	struct kept *b = xcalloc(supp->n + 3, sizeof(*b));
	struct replay_live *l, *tmp, *c;
	size_t i;

	*nb = supp->n + 3;
	b[supp->n + 1].why = "interpreter and module state";
	b[supp->n + 2].why = "Python arenas (small objects of every line)";
	HASH_ITER(hh, g->end_live, l, tmp) {
		struct supp_rule *rule = NULL;

		switch (cat_of(cls, l, &rule, NULL)) {
		case CAT_SUPPRESSED:
			i = rule ? (size_t)(rule - supp->rules) + 1 : supp->n + 1;
			if (rule)
				b[i].why = rule->why ? rule->why : rule->pattern;
			break;
		case CAT_STATE:
			i = supp->n + 1;
			break;
		case CAT_ARENA:
			i = supp->n + 2;
			break;
		default:
			i = 0;
		}
		c = xmalloc(sizeof(*c));
		*c = *l;
		HASH_ADD(hh, b[i].live, key, sizeof(c->key), c);
	}
	return b;
}

/*
 * One site live at the end; "reach": its bytes per reachability class
 * (by class number, as memprov_trace.h numbers them) when the scan at
 * exit classified them.
 */
static void leak_site(struct hdata *h, const struct site *s, const char *why,
		      const struct reach_view *rv, int first)
{
	uint64_t c[MP_REACH_CLASS_COUNT][2];
	FILE *f = h->f;
	unsigned k;

	fprintf(f, "%s{\"kind\":\"%s\",\"api\":", first ? "" : ",", kind_name(s->kind));
	json_str(f, site_api(s));
	fprintf(f, ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"kept\":", s->blocks, s->bytes);
	json_str(f, why);
	if (rv->shown) {
		reach_site_counts(rv, s, c);
		fprintf(f, ",\"reach\":[");
		for (k = 0; k < MP_REACH_CLASS_COUNT; k++)
			fprintf(f, "%s%" PRIu64, k ? "," : "", c[k][1]);
		fputc(']', f);
	}
	fputc(',', f);
	site_frames(h, s);
	fputc('}', f);
}

/* "reach": the scan's classes (names, then bytes and blocks each), or why none. */
static void data_reach(FILE *f, const struct reach_view *rv)
{
	unsigned k;

	fprintf(f, "\"reach\":{\"shown\":%s,\"why\":", rv->shown ? "true" : "false");
	json_str(f, rv->shown ? NULL : rv->why);
	fprintf(f, ",\"classes\":[");
	for (k = 0; k < MP_REACH_CLASS_COUNT; k++)
		fprintf(f, "%s{\"name\":\"%s\",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", k ? "," : "",
			reach_class_name(k), rv->totals[k][0], rv->totals[k][1]);
	fprintf(f, "]}");
}

/*
 * Live at the end (main-end mark, else the end of the trace): totals per
 * kind, split into what no rule explains and what is kept on purpose,
 * and the sites of each, biggest first, at most HTML_MAX_SITES of each.
 */
static void data_leaks(struct hdata *h)
{
	struct growth *g = h->g;
	uint64_t tot[MP_KIND_COUNT][4] = { { 0 } }, omitted[2][2] = { { 0 } };
	struct replay_live *l, *tmp;
	struct reach_view rv;
	struct kept *b;
	size_t i, j, n, nb, listed[2] = { 0, 0 };
	unsigned k;
	int first = 1;

	reach_view_build(&rv, &g->r, g->sym, g->o.mode, !g->main_end_ts);
	b = split_kept(g, &nb);
	fprintf(h->f, "\"leaks\":{\"at\":\"%s\",\"at_ns\":%" PRIu64 ",\"sites\":[",
		g->main_end_ts ? "main-end" : g->r.trace->hdr.state == MP_STATE_EXITED ? "exit" : "end-of-trace",
		trace_rel(g->r.trace, g->end_live_ts));
	for (i = 0; i < nb; i++) {
		struct site *sites;
		int kept = i > 0;

		HASH_ITER(hh, b[i].live, l, tmp) {
			tot[l->key.kind][2 * kept] += l->blocks;
			tot[l->key.kind][2 * kept + 1] += l->bytes;
		}
		if (!b[i].live)
			continue;
		sites = sites_build(&g->r, g->sym, b[i].live, g->o.mode, &n);
		for (j = 0; j < n; j++) {
			if (listed[kept] >= HTML_MAX_SITES) {
				omitted[kept][0]++;
				omitted[kept][1] += sites[j].bytes;
				continue;
			}
			leak_site(h, &sites[j], b[i].why, &rv, first);
			listed[kept]++;
			first = 0;
		}
		sites_free(sites, n);
		replay_live_free(&b[i].live);
	}
	fprintf(h->f, "],\"totals\":{");
	for (k = 1, first = 1; k < MP_KIND_COUNT; k++) {
		if (!tot[k][0] && !tot[k][2])
			continue;
		fprintf(h->f, "%s\"%s\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64
			",\"kept_blocks\":%" PRIu64 ",\"kept_bytes\":%" PRIu64 "}",
			first ? "" : ",", kind_name(k), tot[k][0], tot[k][1], tot[k][2], tot[k][3]);
		first = 0;
	}
	fprintf(h->f, "},\"omitted\":{\"sites\":%" PRIu64 ",\"bytes\":%" PRIu64
		",\"kept_sites\":%" PRIu64 ",\"kept_bytes\":%" PRIu64 "},",
		omitted[0][0], omitted[0][1], omitted[1][0], omitted[1][1]);
	data_reach(h->f, &rv);
	fputc('}', h->f);
	reach_view_free(&rv);
	free(b);
}

void html_data(FILE *f, struct growth *g, const struct tl_gap *gap, uint64_t min_gap)
{
	const struct trace *t = g->r.trace;
	struct hdata h = { .f = f, .g = g };
	struct suppressions supp;
	struct hframe *e, *tmp;
	char buf[512];

	supp_init(&supp);
	supp_add_defaults(&supp);
	h.ft = xopen_memstream(&h.ftab, &h.ftab_len);
	fprintf(f, "{\"schema\":\"memprov.html/1\",");
	report_json_trace(f, t);
	fprintf(f, ",\"ended\":");
	json_str(f, replay_ending(&g->r, buf, sizeof(buf)));
	fprintf(f, ",\"duration_ns\":%" PRIu64 ",\"unit\":\"%s\",\"min_bytes\":%" PRIu64
		",\"peak_bytes\":%" PRIu64 ",\"peak_ns\":%" PRIu64 ",",
		g->end_ts > g->start_ts ? g->end_ts - g->start_ts : 0, growth_unit(g), g->o.min_bytes,
		g->peak_total, g->peak_total ? trace_rel(t, g->peak_ts) : 0);
	data_timeline(f, g);
	fputc(',', f);
	data_marks(f, g);
	fprintf(f, ",\"gap\":");
	timeline_gap_json(f, gap, min_gap);
	cat_json(f, &g->cat);
	fputc(',', f);
	data_suspects(&h, &supp);
	fputc(',', f);
	data_leaks(&h);
	supp_release(&supp);
	fclose(h.ft);
	fprintf(f, ",\"frames\":[%s]}", h.ftab ? h.ftab : "");
	free(h.ftab);
	HASH_ITER(hh, h.frames, e, tmp) {
		HASH_DEL(h.frames, e);
		free(e->key);
		free(e);
	}
}
