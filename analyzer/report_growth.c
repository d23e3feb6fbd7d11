/*
 * report_growth.c - `memprov growth`: live bytes of every site at each
 * mark (or at evenly spaced instants when the trace has no marks), and the
 * sites whose live memory keeps rising across the steady part of the run,
 * biggest growth first. The analysis is in growth.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "growth.h"
#include "multi.h"
#include "report.h"
#include "util.h"

static void window_text(const struct growth *g)
{
	char w[2 * GROWTH_POINT_TEXT + 8], why[512];
	size_t n = g->n_window;

	if (!n) {
		printf("window: empty (%zu point%s)\n", g->set->n, g->set->n == 1 ? "" : "s");
		return;
	}
	growth_window_text(g, w, sizeof(w));
	printf("window: ");
	put_text(stdout, w, ESC_TEXT);
	printf(": %zu %ss, %zu step%s%s\n", n,
	       g->set != &g->marks ? "instant" : g->o.step_unit ? g->o.step_unit : "mark", n - 1,
	       n == 2 ? "" : "s",
	       g->set == &g->marks && g->marks.stride > 1 ? " (marks thinned: too many to keep)" : "");
	printf("  (%s%s)\n", g->set == &g->marks ? "" : g->n_marks == 1 ? "one mark: " : "no marks: ",
	       growth_window_why(g, why, sizeof(why)));
	if (g->main_end_ts && g->set != &g->marks) /* a mark window ends at its last mark */
		printf("window ends at the end of the Python main module\n");
}

/* One site: its heading, figures and frames, numbered no. */
static void site_lines(const struct growth *g, const struct gsite *s, size_t no)
{
	char b1[HUMAN_LEN], b2[HUMAN_LEN], b3[HUMAN_LEN], s2[HUMAN_LEN], c[HUMAN_LEN];
	char at[GROWTH_POINT_TEXT];
	const char *u = growth_unit(g);

	growth_point_text(g, s->st.start, at, sizeof(at));
	fmt_rate(s2, sizeof(s2), s->st.slope_blocks);
	printf("  %s#%zu %s %s: %s over the window, %s per %s, %s block%s per %s%s\n",
	       color(stdout, COLOR_HEADING), no, kind_name(s->s.kind), site_api(&s->s),
	       bytes_delta(b1, sizeof(b1), s->st.growth_bytes),
	       bytes_rate(b2, sizeof(b2), s->st.slope_bytes), u, s2, strcmp(s2, "1") ? "s" : "", u,
	       color(stdout, COLOR_RESET));
	printf("     since ");
	put_text(stdout, at, ESC_TEXT);
	printf("; %s in %s block%s at the window's end; confidence %.2f "
	       "(R^2 %.3f, rose in %.0f%% of steps, kept %.0f%% of its rises)\n",
	       bytes_exact(b3, sizeof(b3), s->st.end_bytes), fmt_count(c, sizeof(c), s->st.end_blocks),
	       s->st.end_blocks == 1 ? "" : "s", s->st.confidence, s->st.r2,
	       100 * s->st.rose, 100 * s->st.retention);
	site_text(stdout, &s->s, g->o.mode, SITE_ALL_FRAMES);
}

static const char *const section[CAT_COUNT] = {
	"other sites",
	"interpreter and module state (never a suspect)",
	"Python arenas (small objects of every line; never a suspect)",
	"kept until exit on purpose (default suppressions; never a suspect)",
};

/* What was set apart at the window's end. */
static void hidden_text(const struct growth *g)
{
	cat_text(stdout, &g->cat, "", "shows them");
	cat_text_suppressed(stdout, &g->cat, "");
}

static void print_text(const struct growth *g, unsigned flags)
{
	char b1[HUMAN_LEN];
	size_t i, shown = 0, n = g->n_window;
	int cat = -1;

	report_header(stdout, &g->r);
	window_text(g);
	if (n < 3) {
		printf("\ntoo few points in the window to see growth (%zu; at least 3)\n", n);
		return;
	}
	printf("\n");
	hidden_text(g);
	if (!g->n_suspects)
		printf("no growing site (growth of at least %s over the window)\n",
		       human_bytes(b1, sizeof(b1), g->o.min_bytes));
	else
		printf("%zu growing site%s (growth of at least %s over the window), biggest first:\n",
		       g->n_suspects, g->n_suspects == 1 ? "" : "s",
		       human_bytes(b1, sizeof(b1), g->o.min_bytes));
	for (i = 0; i < g->n_sites; i++) {
		const struct gsite *s = &g->sites[i];

		if (!s->st.suspect && !(flags & REPORT_ALL))
			continue;
		if (!s->st.suspect && cat != (int)s->cat) {
			cat = (int)s->cat;
			printf("\n%s:\n", section[cat]);
		}
		site_lines(g, s, ++shown);
	}
}

static void json_point(const struct growth *g, size_t i)
{
	printf("{\"index\":%zu,\"ordinal\":%" PRIu64 ",\"ns\":%" PRIu64 ",\"label\":", i,
	       g->set->ordinal[i], trace_rel(g->r.trace, g->set->ts[i]));
	json_str(stdout, g->set == &g->marks ? g->set->label[i] : NULL);
	putchar('}');
}

static void json_gsite(const struct growth *g, const struct gsite *s, size_t n, size_t i)
{
	char s1[32], s2[32];
	size_t j;

	printf("%s{\"category\":\"%s\",", i ? "," : "", cat_name(s->cat));
	site_json(stdout, &s->s);
	putchar(',');
	site_json_key_text(stdout, &s->s, g->o.mode);
	printf(",\"growth_bytes\":%" PRId64 ",\"growth_blocks\":%" PRId64
	       ",\"slope_bytes\":%s,\"slope_blocks\":%s,\"start\":",
	       s->st.growth_bytes, s->st.growth_blocks, growth_num(s1, sizeof(s1), s->st.slope_bytes),
	       growth_num(s2, sizeof(s2), s->st.slope_blocks));
	json_point(g, s->st.start);
	printf(",\"end_bytes\":%" PRIu64 ",\"end_blocks\":%" PRIu64
	       ",\"r2\":%.4f,\"rose\":%.4f,\"retention\":%.4f,\"confidence\":%.4f",
	       s->st.end_bytes, s->st.end_blocks, s->st.r2, s->st.rose, s->st.retention,
	       s->st.confidence);
	if (s->bytes) {
		printf(",\"series\":[");
		for (j = 0; j < n; j++)
			printf("%s%" PRIu64, j ? "," : "", s->bytes[j]);
		printf("]");
	}
	printf("}");
}

static void print_json(const struct growth *g, unsigned flags)
{
	const struct trace *t = g->r.trace;
	size_t i, n = g->n_window;
	char why[512];

	report_json_head(stdout, t, "growth");
	report_json_ending(stdout, &g->r);
	printf(",\"by\":\"%s\",\"unit\":\"%s\",\"marks\":%" PRIu64
	       ",\"thinned\":%" PRIu64 ",\"main_end\":%s,\"min_bytes\":%" PRIu64 ",\"points\":[",
	       g->set == &g->marks ? "marks" : "time", growth_unit(g), g->n_marks,
	       g->set == &g->marks ? g->marks.stride : 1, g->main_end_ts ? "true" : "false",
	       g->o.min_bytes);
	for (i = 0; i < g->set->n; i++) {
		if (i)
			putchar(',');
		json_point(g, i);
	}
	printf("],\"window\":{\"first\":%zu,\"last\":%zu,\"steps\":%zu,\"why\":", g->w0,
	       n ? g->w1 : g->w0, n ? n - 1 : 0);
	json_str(stdout, growth_window_why(g, why, sizeof(why)));
	printf("}");
	cat_json(stdout, &g->cat);
	printf(",\"suspects\":[");
	for (i = 0; i < g->n_suspects; i++)
		json_gsite(g, &g->sites[i], n, i);
	if (flags & REPORT_ALL) {
		printf("],\"others\":[");
		for (i = g->n_suspects; i < g->n_sites; i++)
			json_gsite(g, &g->sites[i], n, i - g->n_suspects);
	}
	printf("]}\n");
}

/* The report on one trace (a->flags: text, JSON or folded); the exit status. */
static int growth_one(const struct report_args *a, const char *path)
{
	struct growth g;
	struct trace t;
	size_t i;

	if (report_collect(&g, &t, path, &a->o) < 0)
		return EXIT_FAIL;
	growth_analyze(&g);
	if (growth_window_check(&g) < 0) {
		growth_release(&g);
		trace_close(&t);
		return EXIT_USAGE;
	}
	if (a->flags & REPORT_JSON)
		print_json(&g, a->flags);
	else if (a->flags & REPORT_FOLDED)
		for (i = 0; i < g.n_suspects; i++)
			flame_folded(stdout, &g.sites[i].s, (uint64_t)g.sites[i].st.growth_bytes);
	else
		print_text(&g, a->flags);
	return report_end(&g, &t);
}

static int cmd_growth(int argc, char **argv)
{
	static const struct option opts[] = {
		REPORT_OPT_JSON, REPORT_OPT_FOLDED, REPORT_OPT_POINTS, REPORT_OPT_SKIP,
		REPORT_OPT_AFTER, REPORT_OPT_MIN_BYTES, REPORT_OPT_SITES, REPORT_OPT_ALL,
		REPORT_OPT_NO_DEFAULTS, REPORT_OPT_PARENT, REPORT_OPT_PER_PROCESS, REPORT_OPT_JOBS,
		REPORT_OPT_END,
	};
	struct report_args a = { .cmd = &command_growth, .opts = opts, .n_traces = 1, .many = 1,
				 .o = { .flags = GROWTH_SERIES | GROWTH_PROGRESS | GROWTH_TESTS |
						 GROWTH_RULE_COUNTS,
					.points = 20,
					.min_bytes = 1024 } };
	int ret;

	if (report_parse(&a, argc, argv, &ret) < 0)
		return ret;
	if (multi_wanted(a.traces, a.cl.n_operands))
		return multi_report(&a, growth_one);
	return growth_one(&a, a.traces[0]);
}

const struct command command_growth = {
	.name = "growth",
	.run = cmd_growth,
	.usage = "memprov growth [--json|--folded] [--points N] [--skip N] [--after LABEL] [--min-bytes SIZE] [--native|--python-only] [--alloc-fn NAME]... [--all] [--no-default-suppressions] [--parent TRACE] [--per-process] [--jobs N] TRACE|DIR...",
	.help = "Live bytes and blocks of every site at each mark (memprov_mark), or at N evenly\n"
		"spaced instants when the trace has no marks; lists the sites whose live memory\n"
		"keeps rising (suspects), biggest growth first, with the slope per mark (or per\n"
		"second), where growth started, bytes at the end and a confidence figure.\n"
		"A site that rises and falls back (bounded cache, sawtooth) is not a suspect.\n"
		"Without marks, only steady growth counts: the window starts after the last import,\n"
		"and a suspect grows in both halves of it. Interpreter and module state (start-up,\n"
		"imports, library code alone), Python arenas and what the default suppressions\n"
		"hide are never suspects: one line each. With test marks, one step per test.\n"
		"  --json            one JSON object on stdout\n"
		"  --folded          suspects' growth as folded stacks (flamegraph.pl, speedscope)\n"
		"  --points N        instants when there are no marks (default 20)\n"
		"  --skip N          leave out the first N marks (or instants): warm-up\n"
		"  --after LABEL     start at the first mark named LABEL (none: exit 2)\n"
		"  --min-bytes SIZE  least growth over the window for a suspect (default 1K)\n"
		"  --native, --python-only, --alloc-fn NAME   frames shown, as for leaks\n"
		"  --all             also list the sites that are not suspects, those set apart too\n"
		"  --no-default-suppressions  what glibc, the loader and CUDA keep counts too\n"
		"  --parent TRACE  a forked child's parent, when its trace is not beside the child's\n"
		"Many traces, or a run directory (memprov run -d): each process's suspects, merged\n"
		"by their frames, each with the processes where it grows, biggest growth first\n"
		"(with --json: one memprov.merge/1 object, as `memprov merge` writes).\n"
		"  --per-process   with many traces: each process's suspects apart, before the merge\n"
		"  --jobs N        with many traces: read N at once (default: one per CPU)\n",
};
