/*
 * report_html.c - `memprov html TRACE -o report.html`: one self-contained
 * page (no network, no external script or font) to explore a trace: a
 * summary, the timeline chart (tracked live bytes per kind, RSS, labelled
 * marks, the judged window), the gap check, the growing sites, the memory
 * live at the end by site and kind (sortable, each stack on expand), and
 * a flame graph with search, zoom and frame filters. The figures come
 * from the computations of `growth`, `timeline`, `leaks` and `check`
 * (html_data.c), written into the page as JSON that the script
 * (analyzer/html/) renders.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "util.h"

#define HTML_TIMELINE_POINTS 400

#ifndef MEMPROV_VERSION
#define MEMPROV_VERSION "unknown"
#endif

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

/*
 * The page: the style sheet, the data as JSON, and the script that
 * builds everything else from it (analyzer/html/). Without JavaScript it
 * says which commands give the same figures.
 */
/* What growth set apart (category.h), one line each, as a paragraph. */
static void set_apart_text(FILE *out, const struct growth *g)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = xopen_memstream(&text, &len);

	cat_text(m, &g->cat, "", "shows them");
	cat_text_suppressed(m, &g->cat, "");
	fclose(m);
	if (len) {
		fprintf(out, "<p id=\"set-apart\" style=\"white-space:pre-line\">");
		put_text(out, text, ESC_HTML);
		fprintf(out, "</p>\n");
	}
	free(text);
}

static void write_page(FILE *out, struct growth *g, const char *data)
{
	const struct trace *t = g->r.trace;

	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<meta name=\"generator\" content=\"memprov %s\">\n<title>memprov: ", MEMPROV_VERSION);
	put_text(out, report_command(t), ESC_HTML);
	fprintf(out, "</title>\n<style>\n");
	put_script_code(out, html_css);
	fprintf(out, "</style>\n</head><body>\n<noscript><p class=\"noscript\">This report draws its "
		"tables and charts with JavaScript, which is off here. The same figures, as text: "
		"<code>memprov leaks</code>, <code>memprov growth</code> and <code>memprov timeline</code> "
		"on the trace.</p></noscript>\n<div id=\"app\"></div>\n");
	set_apart_text(out, g);
	fprintf(out, "<div id=\"status\" hidden></div>\n"
		"<script id=\"memprov-data\" type=\"application/json\">");
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
	if (!out || (out != stdout ? fclose(out) : fflush(out))) {
		error("cannot write '%s': %s", path, strerror(errno));
		if (out == stdout) {
			/* said once: main's last flush has nothing left to say */
			__fpurge(stdout);
			clearerr(stdout);
		}
		return EXIT_FAIL;
	}
	if (out != stdout)
		note_written("HTML report", path);
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
				 .o = { .flags = GROWTH_SERIES | GROWTH_PROGRESS | GROWTH_END_LIVE | GROWTH_END_ALL,
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
	html_data(mem, &g, &gap, TIMELINE_MIN_GAP);
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
	.help = "One self-contained HTML page (no network) to explore a trace: the timeline of\n"
		"tracked live memory per kind and RSS with labelled marks and the judged window,\n"
		"the gap check, the growing sites (as growth reports them), the memory live at\n"
		"the end by site and kind (as leaks measures it; what the gate's default\n"
		"suppressions explain can be hidden), and a flame graph with search and zoom.\n"
		"  -o, --output FILE   where to write it (default memprov-report.html; - for stdout);\n"
		"                      the file written is named on stderr\n"
		"  other options as for growth\n",
};
