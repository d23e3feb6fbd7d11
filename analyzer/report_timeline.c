/*
 * report_timeline.c - `memprov timeline`: tracked live bytes per kind and
 * the process's resident size (MP_REC_RSS samples) at evenly spaced
 * instants, the marks, and the gap check: resident memory that rises while
 * tracked host memory does not is allocator retention or memory memprov
 * does not see, not a leak at any site.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "growth.h"
#include "report.h"
#include "timeline.h"
#include "util.h"

#define MARKS_SHOWN 20

static unsigned kinds_used(const struct growth *g)
{
	unsigned used = 0, k;
	size_t i;

	for (i = 0; i < g->n_tl; i++)
		for (k = 1; k < MP_KIND_COUNT; k++)
			if (g->tl[i].live[k] || g->r.kinds[k].peak_bytes)
				used |= 1u << k;
	return used ? used : 1u << MP_KIND_HEAP;
}

static void print_gap_text(const struct tl_gap *gap, uint64_t min_gap)
{
	char b1[HUMAN_LEN], b2[HUMAN_LEN], b3[HUMAN_LEN], b4[HUMAN_LEN], b5[HUMAN_LEN], b6[HUMAN_LEN];
	char b7[HUMAN_LEN], b8[HUMAN_LEN], b9[HUMAN_LEN];
	const char *what = gap->anon ? "anonymous RSS" : "RSS";

	if (!gap->known) {
		printf("\nresident memory: fewer than two RSS samples in the trace "
		       "(MEMPROV_RSS_INTERVAL_MS=0, or the run was too short)\n");
		return;
	}
	printf("\nfrom %s (%s) to %s: RSS %s -> %s (%s%s), tracked host memory %s -> %s (%s%s)\n",
	       human_ns(b1, sizeof(b1), gap->rel0), gap->from_mark ? "the first RSS sample after the first mark" : "the first RSS sample",
	       human_ns(b2, sizeof(b2), gap->rel1), human_bytes(b3, sizeof(b3), gap->rss0),
	       human_bytes(b4, sizeof(b4), gap->rss1), gap->rss_growth < 0 ? "-" : "+",
	       human_bytes(b5, sizeof(b5), (uint64_t)llabs(gap->rss_growth)),
	       human_bytes(b6, sizeof(b6), gap->host0), human_bytes(b7, sizeof(b7), gap->host1),
	       gap->host_growth < 0 ? "-" : "+",
	       human_bytes(b8, sizeof(b8), (uint64_t)llabs(gap->host_growth)));
	if (gap->anon)
		printf("anonymous RSS (less the pages of files: libraries, the trace) %s -> %s (%s%s)\n",
		       human_bytes(b3, sizeof(b3), gap->anon0), human_bytes(b4, sizeof(b4), gap->anon1),
		       gap->anon_growth < 0 ? "-" : "+",
		       human_bytes(b5, sizeof(b5), (uint64_t)llabs(gap->anon_growth)));
	if (gap->flagged)
		printf("gap: %s rose %s more than tracked memory: allocator retention "
		       "(freed memory kept by the allocator) or memory memprov does not track; "
		       "not a leak at any allocation site\n",
		       what, bytes_exact(b9, sizeof(b9), (uint64_t)gap->gap));
	else if (gap->rise <= 0 || gap->gap <= 0)
		printf("no gap: %s did not rise more than tracked memory\n", what);
	else if (gap->gap < (int64_t)min_gap)
		printf("no gap: %s rose %s more than tracked memory, under --min-gap (%s)\n", what,
		       bytes_exact(b9, sizeof(b9), (uint64_t)gap->gap),
		       human_bytes(b4, sizeof(b4), min_gap));
	else
		/* the rest of the rise is tracked memory */
		printf("no gap: %s rose %s more than tracked memory, under half of its rise "
		       "(%s): tracked memory explains most of it\n", what,
		       bytes_exact(b9, sizeof(b9), (uint64_t)gap->gap),
		       human_bytes(b5, sizeof(b5), (uint64_t)gap->rise));
}

static void print_text(const struct growth *g, const struct tl_gap *gap, uint64_t min_gap)
{
	const struct trace *t = g->r.trace;
	unsigned used = kinds_used(g), k;
	/* a column of resident anonymous memory where every sample has it */
	int anon = g->rss_samples && !g->rss_no_anon;
	char b[HUMAN_LEN];
	size_t i;

	report_header(stdout, &g->r);
	printf("\n%12s", "time");
	for (k = 1; k < MP_KIND_COUNT; k++)
		if (used & (1u << k))
			printf(" %12s", kind_name(k));
	printf(" %12s", "rss");
	if (anon)
		printf(" %12s", "anon rss");
	printf("  marks\n");
	for (i = 0; i < g->n_tl; i++) {
		const struct gtime *p = &g->tl[i];
		uint64_t prev = i ? g->tl[i - 1].ts : 0;
		size_t m, nm = 0;
		const char *label = NULL;

		printf("%12s", human_ns(b, sizeof(b), trace_rel(t, p->ts)));
		for (k = 1; k < MP_KIND_COUNT; k++)
			if (used & (1u << k))
				printf(" %12s", human_bytes(b, sizeof(b), p->live[k]));
		printf(" %12s", p->rss ? human_bytes(b, sizeof(b), p->rss) : "-");
		if (anon)
			printf(" %12s", p->rss ? human_bytes(b, sizeof(b), p->anon) : "-");
		for (m = 0; m < g->r.n_marks; m++) {
			uint64_t ts = g->r.marks[m].ts;

			if (ts <= p->ts && (!i || ts > prev)) {
				if (!nm++)
					label = g->r.marks[m].label;
			}
		}
		if (nm == 1) {
			printf("  ");
			put_text(stdout, label, ESC_TEXT);
		} else if (nm) {
			printf("  %zu (", nm);
			put_text(stdout, label, ESC_TEXT);
			printf(" ...)");
		}
		putchar('\n');
	}
	if (g->r.n_marks) {
		printf("\n%zu mark%s:\n", g->r.n_marks, g->r.n_marks == 1 ? "" : "s");
		for (i = 0; i < g->r.n_marks && i < MARKS_SHOWN; i++) {
			printf("  %12s  ", human_ns(b, sizeof(b), trace_rel(t, g->r.marks[i].ts)));
			put_text(stdout, g->r.marks[i].label, ESC_TEXT);
			printf("%s\n", g->r.marks[i].flags & MP_RF_MAIN_END ?
					       " (end of the main module)" : "");
		}
		if (g->r.n_marks > MARKS_SHOWN)
			printf("  ... %zu more\n", g->r.n_marks - MARKS_SHOWN);
	}
	print_gap_text(gap, min_gap);
}

static void print_json(const struct growth *g, const struct tl_gap *gap, uint64_t min_gap)
{
	const struct trace *t = g->r.trace;
	size_t i;
	unsigned k;

	report_json_head(stdout, t, "timeline");
	printf(",\"rss_interval_ns\":%" PRIu64 ",\"rss_samples\":%" PRIu64 ",\"points\":[",
	       t->hdr.rss_interval_ns, g->rss_samples);
	for (i = 0; i < g->n_tl; i++) {
		const struct gtime *p = &g->tl[i];

		printf("%s{\"ns\":%" PRIu64 ",\"live\":{", i ? "," : "", trace_rel(t, p->ts));
		for (k = 1; k < MP_KIND_COUNT; k++)
			printf("%s\"%s\":%" PRIu64, k > 1 ? "," : "", kind_name(k), p->live[k]);
		printf("},\"rss\":");
		if (p->rss)
			printf("%" PRIu64 ",\"vm\":%" PRIu64, p->rss, p->vm);
		else
			printf("null,\"vm\":null");
		if (p->rss && !g->rss_no_anon)
			printf(",\"anon\":%" PRIu64 "}", p->anon);
		else
			printf(",\"anon\":null}");
	}
	printf("],\"marks\":[");
	for (i = 0; i < g->r.n_marks; i++) {
		printf("%s{\"ns\":%" PRIu64 ",\"label\":", i ? "," : "", trace_rel(t, g->r.marks[i].ts));
		json_str(stdout, g->r.marks[i].label);
		printf(",\"main_end\":%s}", g->r.marks[i].flags & MP_RF_MAIN_END ? "true" : "false");
	}
	printf("],\"gap\":");
	timeline_gap_json(stdout, gap, min_gap);
	printf("}\n");
}

/* --points (instants of the timeline, not of growth's series) and --min-gap. */
static int timeline_opt(struct report_args *a, int opt, const char *arg)
{
	char *end;

	if (opt == 'g')
		return report_parse_size(a->cmd, "--min-gap", arg, a->own_arg);
	a->o.timeline_points = (unsigned)strtoul(arg, &end, 10);
	if (*end || !*arg || a->o.timeline_points < 1 || a->o.timeline_points > 100000)
		return usage_error(a->cmd, "--points wants 1 to 100000, not '%s'", arg);
	return 0;
}

static int cmd_timeline(int argc, char **argv)
{
	static const struct option opts[] = {
		REPORT_OPT_JSON,
		{ "points", required_argument, NULL, 'T' },
		{ "min-gap", required_argument, NULL, 'g' },
		REPORT_OPT_PARENT, REPORT_OPT_END,
	};
	uint64_t min_gap = TIMELINE_MIN_GAP;
	struct report_args a = { .cmd = &command_timeline, .opts = opts, .n_traces = 1,
				 .own = timeline_opt, .own_arg = &min_gap,
				 .o = { .flags = GROWTH_PROGRESS, .timeline_points = 20 } };
	struct tl_gap gap;
	struct growth g;
	struct trace t;
	int ret;

	if (report_start(&a, argc, argv, &g, &t, &ret) < 0)
		return ret;
	timeline_gap(&g, min_gap, &gap);
	if (a.flags & REPORT_JSON)
		print_json(&g, &gap, min_gap);
	else
		print_text(&g, &gap, min_gap);
	return report_end(&g, &t);
}

const struct command command_timeline = {
	.name = "timeline",
	.run = cmd_timeline,
	.usage = "memprov timeline [--json] [--points N] [--min-gap SIZE] [--parent TRACE] TRACE",
	.help = "Tracked live bytes per kind and resident memory (RSS samples) at N evenly\n"
		"spaced instants, with the marks; flags a gap when resident anonymous memory\n"
		"(the RSS less file pages) rises while tracked host memory does not (allocator\n"
		"retention or untracked memory, not a leak).\n"
		"  --json          one JSON object on stdout\n"
		"  --points N      instants (default 20)\n"
		"  --min-gap SIZE  least unexplained rise to flag (default 1M)\n"
		"  --parent TRACE  a forked child's parent, when its trace is not beside the child's\n",
};
