/*
 * report_html.c - `memprov html TRACE -o report.html`: one self-contained
 * page (no network, no external script or font) with the timeline chart
 * (tracked live bytes per kind, RSS, marks), the gap check, the growing
 * sites' table and a flame graph of their growth (or, when nothing grows,
 * of the memory live at the end). Every figure comes from the same
 * computations as `growth`, `timeline` and `leaks`, written into the page
 * as JSON that the script renders.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "growth.h"
#include "html.h"
#include "report.h"
#include "timeline.h"
#include "util.h"

#define HTML_TIMELINE_POINTS 200
#define HTML_MARKS 5000

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
	if (!g->rss_samples) {
		fprintf(f, "null}");
		return;
	}
	fprintf(f, "[");
	for (i = 0; i < g->n_tl; i++) {
		if (g->tl[i].rss)
			fprintf(f, "%s%" PRIu64, i ? "," : "", g->tl[i].rss);
		else
			fprintf(f, "%snull", i ? "," : "");
	}
	fprintf(f, "]}");
}

static void data_suspects(FILE *f, const struct growth *g)
{
	char s1[32], s2[32], at[GROWTH_POINT_TEXT];
	char *where = NULL;
	size_t i, len = 0;

	fprintf(f, "\"suspects\":[");
	for (i = 0; i < g->n_suspects; i++) {
		const struct gsite *s = &g->sites[i];
		FILE *w = xopen_memstream(&where, &len);

		site_text(w, &s->s, g->o.mode, SITE_ALL_FRAMES);
		fclose(w);
		growth_point_text(g, s->st.start, at, sizeof(at));
		fprintf(f, "%s{\"kind\":\"%s\",\"func\":", i ? "," : "", kind_name(s->s.kind));
		json_str(f, site_api(&s->s));
		fprintf(f, ",\"growth_bytes\":%" PRId64 ",\"slope_bytes\":\"%s\",\"slope_blocks\":\"%s\""
			",\"start\":", s->st.growth_bytes,
			growth_num(s1, sizeof(s1), s->st.slope_bytes),
			growth_num(s2, sizeof(s2), s->st.slope_blocks));
		json_str(f, at);
		fprintf(f, ",\"end_bytes\":%" PRIu64 ",\"end_blocks\":%" PRIu64
			",\"confidence\":\"%.2f\",\"where\":", s->st.end_bytes, s->st.end_blocks,
			s->st.confidence);
		json_str(f, where);
		fprintf(f, "}");
		free(where);
		where = NULL;
	}
	fprintf(f, "]");
}

/* The flame graph: growth of the suspects, else live memory at the end. */
static void data_flame(FILE *f, struct growth *g)
{
	struct flame_node root = { 0 };
	struct site *sites;
	size_t i, n;

	if (g->n_suspects) {
		for (i = 0; i < g->n_suspects; i++)
			flame_add(&root, &g->sites[i].s, (uint64_t)g->sites[i].st.growth_bytes);
		fprintf(f, "\"flame_what\":\"growth of the growing sites over the window\",\"flame\":");
	} else {
		sites = sites_build(&g->r, g->sym, g->end_live, g->o.mode, &n);
		for (i = 0; i < n; i++)
			flame_add(&root, &sites[i], sites[i].bytes);
		sites_free(sites, n);
		fprintf(f, "\"flame_what\":\"memory live at the end (nothing grows)\",\"flame\":");
	}
	flame_json(f, &root);
	flame_free(&root);
}

static void write_data(FILE *f, struct growth *g, const struct tl_gap *gap, uint64_t min_gap)
{
	const struct trace *t = g->r.trace;
	char buf[512], win[2 * GROWTH_POINT_TEXT + 8];
	size_t i;

	fputc('{', f);
	report_json_trace(f, t);
	fprintf(f, ",\"ended\":");
	json_str(f, replay_ending(&g->r, buf, sizeof(buf)));
	fprintf(f, ",\"unit\":\"%s\",\"window\":", growth_unit(g));
	if (g->n_window) {
		growth_window_text(g, win, sizeof(win));
		json_str(f, win);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\"min_bytes\":%" PRIu64 ",\"peak_bytes\":%" PRIu64 ",\"peak_ns\":%" PRIu64 ",",
		g->o.min_bytes, g->peak_total, g->peak_total ? trace_rel(t, g->peak_ts) : 0);
	data_timeline(f, g);
	fprintf(f, ",\"marks\":[");
	for (i = 0; i < g->r.n_marks && i < HTML_MARKS; i++) {
		fprintf(f, "%s{\"ns\":%" PRIu64 ",\"label\":", i ? "," : "",
			trace_rel(t, g->r.marks[i].ts));
		json_str(f, g->r.marks[i].label);
		fprintf(f, "}");
	}
	fprintf(f, "],\"gap\":");
	timeline_gap_json(f, gap, min_gap);
	cat_json(f, &g->cat);
	fprintf(f, ",");
	data_suspects(f, g);
	fprintf(f, ",");
	data_flame(f, g);
	fprintf(f, "}");
}

/*
 * Our own script inside <script>: "</" would end the element early (the
 * data goes through put_text instead, which leaves no "<" at all).
 */
static void put_script_code(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (s[0] == '<' && s[1] == '/')
			fputs("<\\/", out), s++;
		else
			fputc(*s, out);
	}
}

/* What growth set apart (category.h), one line each, as a paragraph. */
static void set_apart_text(FILE *out, const struct growth *g)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = xopen_memstream(&text, &len);

	cat_text(m, &g->cat, "", "shows them");
	cat_text_suppressed(m, &g->cat, "");
	fclose(m);
	fprintf(out, "<p id=\"set-apart\" style=\"white-space:pre-line\">");
	put_text(out, text, ESC_HTML);
	fprintf(out, "</p>\n");
	free(text);
}

static void write_page(FILE *out, struct growth *g, const char *data)
{
	const struct trace *t = g->r.trace;
	char b1[32], b2[32];

	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>memprov: ");
	put_text(out, report_command(t), ESC_HTML);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head><body>\n<h1>memprov report: ", html_css);
	put_text(out, report_command(t), ESC_HTML);
	fprintf(out, "</h1>\n<div class=\"meta\"><span>trace ");
	put_text(out, t->path, ESC_HTML);
	fprintf(out, "</span><span>pid %d</span><span>peak of live memory %s (%" PRIu64 " B) at %s</span></div>\n",
		t->hdr.pid, human_bytes(b1, sizeof(b1), g->peak_total), g->peak_total,
		human_ns(b2, sizeof(b2), g->peak_total ? trace_rel(t, g->peak_ts) : 0));
	fprintf(out, "<h2>Timeline: tracked live memory per kind, resident memory, marks</h2>\n"
		"<canvas id=\"chart\"></canvas><div id=\"legend\" class=\"legend\"></div>\n"
		"<div id=\"gap\"></div>\n"
		"<h2>Growing sites</h2>\n");
	set_apart_text(out, g);
	fprintf(out, "<table id=\"suspects\"><thead><tr><th>#</th><th>kind</th>"
		"<th>growth B</th><th>B/%s</th><th>blocks/%s</th><th>since</th><th>end B</th>"
		"<th>end blocks</th><th>confidence</th><th class=\"site\">site</th></tr></thead>"
		"<tbody id=\"suspects-body\"></tbody></table>\n"
		"<h2 id=\"flametitle\">Flame graph: %s</h2>\n<div id=\"flameinfo\"></div><div id=\"flame\"></div>\n"
		"<p id=\"status\">not rendered (the page needs JavaScript)</p>\n"
		"<script id=\"memprov-data\" type=\"application/json\">",
		growth_unit(g), growth_unit(g),
		g->n_suspects ? "growth of the growing sites over the window" :
				"memory live at the end (nothing grows)");
	put_text(out, data, ESC_SCRIPT_JSON);
	fprintf(out, "</script>\n<script>\n");
	put_script_code(out, html_js);
	fprintf(out, "</script>\n</body></html>\n");
}

/* Write the page to path ("-": stdout): 0, or EXIT_FAIL after the error. */
static int write_file(const char *path, struct growth *g, const char *data)
{
	FILE *out = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (out)
		write_page(out, g, data);
	if (!out || (out != stdout && fclose(out))) {
		error("cannot write '%s': %s", path, strerror(errno));
		return EXIT_FAIL;
	}
	return 0;
}

/* -o, --output FILE */
static int html_opt(struct report_args *a, int opt, const char *arg)
{
	(void)opt;
	*(const char **)a->own_arg = arg;
	return 0;
}

static int cmd_html(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		REPORT_OPT_POINTS, REPORT_OPT_SKIP, REPORT_OPT_AFTER, REPORT_OPT_MIN_BYTES,
		REPORT_OPT_SITES, REPORT_OPT_NO_DEFAULTS, REPORT_OPT_END,
	};
	const char *output = "memprov-report.html";
	struct report_args a = { .cmd = &command_html, .opts = opts, .shortopts = "+ho:", .n_traces = 1,
				 .own = html_opt, .own_arg = &output,
				 .o = { .flags = GROWTH_SERIES | GROWTH_PROGRESS | GROWTH_END_LIVE,
					.points = 20, .min_bytes = 1024,
					.timeline_points = HTML_TIMELINE_POINTS } };
	struct tl_gap gap;
	struct growth g;
	struct trace t;
	char *data = NULL;
	size_t len = 0;
	FILE *mem;
	int ret;

	if (report_start(&a, argc, argv, &g, &t, &ret) < 0)
		return ret;
	growth_analyze(&g);
	timeline_gap(&g, TIMELINE_MIN_GAP, &gap);
	mem = xopen_memstream(&data, &len);
	write_data(mem, &g, &gap, TIMELINE_MIN_GAP);
	fclose(mem);
	ret = write_file(output, &g, data);
	free(data);
	if (!ret)
		return report_end(&g, &t);
	growth_release(&g);
	trace_close(&t);
	return ret;
}

const struct command command_html = {
	.name = "html",
	.run = cmd_html,
	.usage = "memprov html [-o FILE] [--points N] [--skip N] [--after LABEL] [--min-bytes SIZE] [--native|--python-only] [--alloc-fn NAME]... [--no-default-suppressions] TRACE",
	.help = "One self-contained HTML page (no network): timeline chart of tracked live memory\n"
		"per kind, RSS and marks, the gap check, the growing sites (as growth reports\n"
		"them) and a flame graph of their growth, or of memory live at the end.\n"
		"  -o, --output FILE   where to write it (default memprov-report.html; - for stdout)\n"
		"  other options as for growth\n",
};
