/*
 * report_growth.c - `memprov growth`: live bytes of every site at each
 * mark (or at evenly spaced instants when the trace has no marks), and the
 * sites whose live memory keeps rising across the steady part of the run,
 * biggest growth first. The analysis is in growth.c.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "growth.h"
#include "report.h"
#include "util.h"

enum growth_report_flags {
	GR_JSON = 1 << 0,
	GR_FOLDED = 1 << 1,
	GR_ALL = 1 << 2,
};

void growth_point_text(const struct growth *g, size_t i, char *buf, size_t len)
{
	char t[32];

	if (g->set == &g->marks)
		snprintf(buf, len, "mark #%" PRIu64 " \"%s\"", g->set->ordinal[i], g->set->label[i]);
	else
		snprintf(buf, len, "%s", human_ns(t, sizeof(t), report_rel(g->r.trace, g->set->ts[i])));
}

static void window_text(const struct growth *g)
{
	char a[300], b[300];
	size_t n = g->set->n && g->w0 <= g->w1 ? g->w1 - g->w0 + 1 : 0;

	if (!n) {
		printf("window: empty (%zu point%s, none after --skip/--after)\n", g->set->n,
		       g->set->n == 1 ? "" : "s");
		return;
	}
	growth_point_text(g, g->w0, a, sizeof(a));
	growth_point_text(g, g->w1, b, sizeof(b));
	printf("window: %s .. %s: %zu %s, %zu step%s%s\n", a, b, n,
	       g->set == &g->marks ? "marks" : "instants", n - 1, n == 2 ? "" : "s",
	       g->set == &g->marks && g->marks.stride > 1 ? " (marks thinned: too many to keep)" : "");
	if (g->main_end_ts)
		printf("window ends at the end of the Python main module\n");
}

static void print_text(const struct growth *g, unsigned flags)
{
	char b1[32], b2[32], b3[32], s1[32], s2[32], at[300];
	size_t i, shown = 0, n = g->w0 <= g->w1 && g->set->n ? g->w1 - g->w0 + 1 : 0;
	const char *u = growth_unit(g);

	report_header(stdout, &g->r);
	window_text(g);
	if (n < 3) {
		printf("\ntoo few points in the window to see growth (%zu; at least 3)\n", n);
		return;
	}
	if (!g->n_suspects)
		printf("\nno growing site (growth of at least %s over the window)\n",
		       human_bytes(b1, sizeof(b1), g->o.min_bytes));
	else
		printf("\n%zu growing site%s (growth of at least %s over the window), biggest first:\n",
		       g->n_suspects, g->n_suspects == 1 ? "" : "s",
		       human_bytes(b1, sizeof(b1), g->o.min_bytes));
	for (i = 0; i < g->n_sites; i++) {
		const struct gsite *s = &g->sites[i];

		if (!s->st.suspect && !(flags & GR_ALL))
			continue;
		if (!s->st.suspect && shown == g->n_suspects)
			printf("\nother sites:\n");
		shown++;
		growth_point_text(g, s->st.start, at, sizeof(at));
		printf("  #%zu %s %s: %s%s (%" PRId64 " B) over the window, %s/%s (%s B, %s block%s/%s)\n",
		       shown, kind_name(s->s.kind), func_name(s->s.func),
		       s->st.growth_bytes < 0 ? "-" : "+",
		       human_bytes(b1, sizeof(b1), (uint64_t)llabs(s->st.growth_bytes)),
		       s->st.growth_bytes,
		       human_bytes(b2, sizeof(b2), (uint64_t)fabs(s->st.slope_bytes)), u,
		       growth_num(s1, sizeof(s1), s->st.slope_bytes), growth_num(s2, sizeof(s2), s->st.slope_blocks),
		       fabs(s->st.slope_blocks - 1) < 1e-6 ? "" : "s", u);
		printf("     since %s; %s (%" PRIu64 " block%s) at the end; confidence %.2f "
		       "(R^2 %.3f, rose in %.0f%% of steps, kept %.0f%% of its rises)\n",
		       at, human_bytes(b3, sizeof(b3), s->st.end_bytes), s->st.end_blocks,
		       s->st.end_blocks == 1 ? "" : "s", s->st.confidence, s->st.r2,
		       100 * s->st.rose, 100 * s->st.retention);
		growth_text_site(stdout, &s->s, g->o.mode);
	}
}

static void json_point(const struct growth *g, size_t i)
{
	printf("{\"index\":%zu,\"ordinal\":%" PRIu64 ",\"ns\":%" PRIu64 ",\"label\":", i,
	       g->set->ordinal[i], report_rel(g->r.trace, g->set->ts[i]));
	json_str(stdout, g->set == &g->marks ? g->set->label[i] : NULL);
	putchar('}');
}

static void json_gsite(const struct growth *g, const struct gsite *s, size_t n, size_t i)
{
	char s1[32], s2[32];
	size_t j;

	printf("%s{", i ? "," : "");
	growth_json_site(stdout, &s->s);
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
	size_t i, n = g->w0 <= g->w1 && g->set->n ? g->w1 - g->w0 + 1 : 0;

	printf("{\"trace\":");
	json_str(stdout, t->path);
	printf(",\"pid\":%d,\"command\":", t->hdr.pid);
	json_str(stdout, report_command(t));
	printf(",\"state\":\"%s\",\"damaged\":%s,\"by\":\"%s\",\"unit\":\"%s\",\"marks\":%" PRIu64
	       ",\"thinned\":%" PRIu64 ",\"main_end\":%s,\"min_bytes\":%" PRIu64 ",\"points\":[",
	       state_name(t->hdr.state), t->damaged ? "true" : "false",
	       g->set == &g->marks ? "marks" : "time", growth_unit(g), g->n_marks,
	       g->set == &g->marks ? g->marks.stride : 1, g->main_end_ts ? "true" : "false",
	       g->o.min_bytes);
	for (i = 0; i < g->set->n; i++) {
		if (i)
			putchar(',');
		json_point(g, i);
	}
	printf("],\"window\":{\"first\":%zu,\"last\":%zu,\"steps\":%zu},\"suspects\":[",
	       g->w0, n ? g->w1 : g->w0, n ? n - 1 : 0);
	for (i = 0; i < g->n_suspects; i++)
		json_gsite(g, &g->sites[i], n, i);
	if (flags & GR_ALL) {
		printf("],\"others\":[");
		for (i = g->n_suspects; i < g->n_sites; i++)
			json_gsite(g, &g->sites[i], n, i - g->n_suspects);
	}
	printf("]}\n");
}

static int parse_uint(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	char *end;

	*out = strtoull(arg, &end, 10);
	if (!*arg || *end || arg[0] == '-')
		return usage_error(cmd, "%s wants a number, not '%s'", opt, arg);
	return 0;
}

static int growth_parse(struct growth_opts *o, unsigned *flags, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "folded", no_argument, NULL, 'f' },
		{ "points", required_argument, NULL, 'P' },
		{ "skip", required_argument, NULL, 's' },
		{ "after", required_argument, NULL, 'A' },
		{ "min-bytes", required_argument, NULL, 'm' },
		{ "native", no_argument, NULL, 'n' },
		{ "python-only", no_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': *flags |= GR_JSON; break;
		case 'f': *flags |= GR_FOLDED; break;
		case 'a': *flags |= GR_ALL; break;
		case 'n': o->mode = SITE_NATIVE; break;
		case 'p': o->mode = SITE_PYTHON_ONLY; break;
		case 'A': o->after = optarg; break;
		case 'P':
			if (parse_uint("growth", "--points", optarg, &v))
				return EXIT_USAGE;
			if (v < 2 || v > 100000)
				return usage_error("growth", "--points wants 2 to 100000, not %s", optarg);
			o->points = (unsigned)v;
			break;
		case 's':
			if (parse_uint("growth", "--skip", optarg, &o->skip))
				return EXIT_USAGE;
			break;
		case 'm':
			if (growth_parse_size("growth", "--min-bytes", optarg, &o->min_bytes))
				return EXIT_USAGE;
			break;
		case 'h': show_usage(stdout, "growth"); return -2;
		default:
			return usage_error("growth", "unknown option or missing value '%s'", argv[optind - 1]);
		}
	}
	if ((*flags & GR_JSON) && (*flags & GR_FOLDED))
		return usage_error("growth", "--json and --folded do not go together");
	if (optind != argc - 1)
		return usage_error("growth", optind == argc ? "no trace given" : "more than one trace given");
	return 0;
}

int cmd_growth(int argc, char **argv)
{
	struct growth_opts o = { .flags = GROWTH_SERIES | GROWTH_PROGRESS, .points = 20,
				 .min_bytes = 1024 };
	struct growth g;
	struct trace t;
	unsigned flags = 0;
	size_t i;
	int ret;

	ret = growth_parse(&o, &flags, argc, argv);
	if (ret)
		return ret == -2 ? EXIT_OK : ret;
	if (trace_open(&t, argv[optind], 0) < 0)
		return EXIT_FAIL;
	growth_collect(&g, &t, &o);
	growth_analyze(&g);
	if (o.after && g.after_ordinal == UINT64_MAX)
		warning("no mark named '%s' in '%s': the window is empty", o.after, t.path);
	if (flags & GR_JSON)
		print_json(&g, flags);
	else if (flags & GR_FOLDED)
		for (i = 0; i < g.n_suspects; i++)
			flame_folded(stdout, &g.sites[i].s, (uint64_t)g.sites[i].st.growth_bytes);
	else
		print_text(&g, flags);
	ret = report_status(&t);
	growth_release(&g);
	trace_close(&t);
	return ret;
}
