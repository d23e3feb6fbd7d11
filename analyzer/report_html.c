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
#include "merge.h"
#include "multi.h"
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
/*
 * For a reader without JavaScript: what the end's verdict set apart, as
 * `memprov leaks` counts it (the classes of the memory live at the end,
 * not the growth analysis's, whose figures differed: 17.1 MiB of state
 * where `leaks` said 16.2).
 */
static void set_apart_text(FILE *out, struct growth *g)
{
	struct classifier *c = &g->end_cat;
	struct replay_live *l, *tmp;
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	HASH_ITER(hh, g->end_live, l, tmp) { /* totals only: the rules' counts are the data's */
		enum state_why why;
		enum category cat = cat_of(c, l, NULL, &why);

		if (cat != CAT_PROGRAM)
			cat_count(c, cat, why, NULL, l->blocks, l->bytes);
	}
	m = xopen_memstream(&text, &len);
	cat_text(m, c, "", "shows them");
	cat_text_suppressed(m, c, "");
	fclose(m);
	if (len) {
		fprintf(out, "<p id=\"set-apart\" style=\"white-space:pre-line\">Set apart from "
			"the memory live at the end, as <code>memprov leaks</code> says:\n");
		put_text(out, text, ESC_HTML);
		fprintf(out, "</p>");
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
		"on the trace.</p>");
	set_apart_text(out, g);
	fprintf(out, "</noscript>\n<div id=\"app\"></div>\n<div id=\"status\" hidden></div>\n"
		"<script id=\"memprov-data\" type=\"application/json\">");
	put_text(out, data, ESC_SCRIPT_JSON);
	fprintf(out, "</script>\n<script>\n");
	put_script_code(out, html_js);
	fprintf(out, "</script>\n</body></html>\n");
}

static const char *index_path; /* many traces: the index page; the processes' pages beside it */

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
	if (out != stdout && !index_path)
		note_written("HTML report", path); /* many: the index says where they are */
	return 0;
}

/* -o, --output FILE */
static int html_opt(struct report_args *a, int opt, const char *arg)
{
	(void)opt;
	*(const char **)a->own_arg = arg;
	return 0;
}

/* One trace's page, written to output; the exit status. */
static int html_page(const struct report_args *a, const char *path, const char *output)
{
	struct tl_gap gap;
	struct growth g;
	struct trace t;
	char *data = NULL;
	size_t len = 0;
	FILE *mem;
	int ret;

	if (report_collect(&g, &t, path, &a->o) < 0)
		return EXIT_FAIL;
	growth_analyze(&g);
	if (growth_window_check(&g) < 0) { /* an empty window: no page, as growth */
		growth_release(&g);
		trace_close(&t);
		return EXIT_USAGE;
	}
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

/* ---- many traces: a page per process and an index ---- */

/* The page of the trace at path: INDEX without .html, ".", the trace's name without .trace, ".html". */
static char *page_path(const char *trace)
{
	const char *base = strrchr(trace, '/') ? strrchr(trace, '/') + 1 : trace;
	size_t ilen = strlen(index_path), blen = strlen(base);
	char *p;

	if (ilen > 5 && !strcmp(index_path + ilen - 5, ".html"))
		ilen -= 5;
	if (blen > 6 && !strcmp(base + blen - 6, ".trace"))
		blen -= 6;
	p = xmalloc(ilen + blen + 7);
	sprintf(p, "%.*s.%.*s.html", (int)ilen, index_path, (int)blen, base);
	return p;
}

/* The map step of html over many traces: the trace's page, then its leaks summary. */
static int html_one(const struct report_args *a, const char *path)
{
	struct report_args page = *a;
	char *out = page_path(path);
	int ret;

	page.flags &= ~(unsigned)REPORT_JSON;
	ret = html_page(&page, path, out);
	free(out);
	if (ret)
		return ret;
	return leaks_one_trace(a, path);
}

static void index_proc(FILE *f, const struct merge *m, size_t i, int depth, char *done)
{
	const struct merge_proc *p = &m->procs[i];
	char b[HUMAN_LEN], *page = page_path(p->trace ? p->trace : "?");
	const char *base = strrchr(page, '/') ? strrchr(page, '/') + 1 : page;
	size_t j;

	done[i] = 1;
	fprintf(f, "<tr><td style=\"padding-left:%dem\"><a href=\"", 1 + 2 * depth);
	put_text(f, base, ESC_HTML);
	fprintf(f, "\">%d</a></td><td>", (int)p->pid);
	put_text(f, p->command ? p->command : "?", ESC_HTML);
	fprintf(f, "</td><td>");
	put_text(f, p->ending ? p->ending : "?", ESC_HTML);
	fprintf(f, "</td><td class=\"num\">%s</td><td class=\"num\">%zu</td></tr>\n",
		p->exec ? "(exec)" : bytes_exact(b, sizeof(b), p->bytes), p->n_sites);
	free(page);
	for (j = 0; j < m->n_procs; j++)
		if (!done[j] && (m->procs[j].ppid == p->pid || (m->procs[j].pid == p->pid && p->exec)))
			index_proc(f, m, j, m->procs[j].pid == p->pid ? depth : depth + 1, done);
}

static void write_index(FILE *f, struct merge *m, size_t n_traces)
{
	char *text = NULL;
	size_t len = 0, i, j;
	FILE *mem = xopen_memstream(&text, &len);
	char *done = xcalloc(m->n_procs + 1, 1);

	merge_print(m, mem, n_traces);
	fclose(mem);
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta name=\"generator\" content=\"memprov %s\">\n<title>memprov: %zu processes</title>\n"
		"<style>body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}"
		"td,th{border-bottom:1px solid #ddd;padding:.2em .6em;text-align:left}"
		".num{text-align:right}pre{background:#f6f6f6;padding:.8em;overflow-x:auto}</style>\n"
		"</head><body>\n<h1>memprov: a job of %zu traces</h1>\n<h2>Processes</h2>\n"
		"<p>Each process under its parent; the pid opens its own report.</p>\n"
		"<table><tr><th>pid</th><th>command</th><th>ended</th><th>live at its end, its own</th>"
		"<th>sites</th></tr>\n", MEMPROV_VERSION, m->n_procs, n_traces);
	for (i = 0; i < m->n_procs; i++) {
		int root = 1;

		for (j = 0; j < m->n_procs && root; j++)
			if (j != i && (m->procs[j].pid == m->procs[i].ppid ||
				       (m->procs[j].pid == m->procs[i].pid && m->procs[j].exec && j < i)))
				root = 0;
		if (root && !done[i])
			index_proc(f, m, i, 0, done);
	}
	for (i = 0; i < m->n_procs; i++)
		if (!done[i])
			index_proc(f, m, i, 0, done);
	fprintf(f, "</table>\n<h2>Live at the end, merged across processes</h2>\n<pre>");
	put_text(f, text, ESC_HTML);
	fprintf(f, "</pre>\n</body></html>\n");
	free(done);
	free(text);
}

static int html_many(const struct report_args *a, const char *output)
{
	struct merge m = { 0 };
	size_t n = 0;
	int ret;
	FILE *f;

	if (!strcmp(output, "-"))
		return usage_error(&command_html, "with many traces the pages are files: -o INDEX.html");
	index_path = output;
	ret = multi_map(a, html_one, &m, &n);
	if (ret < 0)
		return EXIT_FAIL; /* no trace: no index either */
	if (!m.n_procs) { /* no page was made (an empty window in each: status 2) */
		merge_release(&m);
		return ret == EXIT_OK ? EXIT_FAIL : ret;
	}
	f = fopen(output, "w");
	if (f)
		write_index(f, &m, n);
	if (!f || fclose(f)) {
		error("cannot write '%s': %s", output, strerror(errno));
		ret = EXIT_FAIL;
	} else {
		note_written("HTML index of the processes' pages", output);
	}
	merge_release(&m);
	return ret;
}

static int cmd_html(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		REPORT_OPT_POINTS, REPORT_OPT_SKIP, REPORT_OPT_AFTER, REPORT_OPT_MIN_BYTES,
		REPORT_OPT_SITES, REPORT_OPT_NO_DEFAULTS, REPORT_OPT_PARENT, REPORT_OPT_JOBS,
		REPORT_OPT_END,
	};
	const char *output = "memprov-report.html";
	struct report_args a = { .cmd = &command_html, .opts = opts, .shortopts = "+ho:", .n_traces = 1,
				 .many = 1, .own = html_opt, .own_arg = &output,
				 .o = { .flags = GROWTH_SERIES | GROWTH_PROGRESS | GROWTH_END_LIVE | GROWTH_END_ALL,
					.points = 20, .min_bytes = 1024,
					.timeline_points = HTML_TIMELINE_POINTS } };
	int ret;

	if (report_parse(&a, argc, argv, &ret) < 0)
		return ret;
	if (multi_wanted(a.traces, a.cl.n_operands))
		return html_many(&a, output);
	return html_page(&a, a.traces[0], output);
}

const struct command command_html = {
	.name = "html",
	.run = cmd_html,
	.usage = "memprov html [-o FILE] [--points N] [--skip N] [--after LABEL] [--min-bytes SIZE] [--native|--python-only] [--alloc-fn NAME]... [--no-default-suppressions] [--parent TRACE] [--jobs N] TRACE|DIR...",
	.help = "One self-contained HTML page (no network) to explore a trace: the timeline of\n"
		"tracked live memory per kind and RSS with labelled marks and the judged window,\n"
		"the gap check, the growing sites (as growth reports them), the memory live at\n"
		"the end by site and kind (as leaks measures it; what the gate's default\n"
		"suppressions explain can be hidden), and a flame graph with search and zoom.\n"
		"  -o, --output FILE   where to write it (default memprov-report.html; - for stdout);\n"
		"                      the file written is named on stderr\n"
		"  other options as for growth\n"
		"  --parent TRACE  a forked child's parent, when its trace is not beside the child's\n"
		"Many traces, or a run directory (memprov run -d): FILE is an index page (the\n"
		"process tree, each pid linked to its own page, and the sites live at the end\n"
		"merged as `memprov leaks DIR` merges them); each process's page is written\n"
		"beside it as FILE-without-.html.TRACE-NAME.html.\n"
		"  --jobs N        with many traces: N pages made at once (default: one per CPU)\n",
};
