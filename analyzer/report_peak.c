/*
 * report_peak.c - `memprov peak`: when live memory peaked (all kinds
 * together, and each kind on its own) and what was live at the overall
 * peak, by site. The first pass finds the record at which the total
 * peaked; a second pass stops right after that record and takes a
 * snapshot. Interpreter and module state (start-up, imports), pymalloc's
 * arenas and what the default suppressions hide are one line each
 * (category.h); --all lists them by site.
 */
#include <inttypes.h>
#include <string.h>

#include "category.h"
#include "flame.h"
#include "growth.h"
#include "inherit.h"
#include "multi.h"
#include "report.h"
#include "util.h"

#define PEAK_TOP 20

struct stop_at {
	uint64_t event;
	struct replay_live *live;
};

static int stop_on_record(struct replay *r, const struct mp_rec_head *h, void *arg)
{
	struct stop_at *s = arg;

	(void)h;
	if (r->events < s->event)
		return 0;
	s->live = replay_snapshot(r);
	return 1;
}

/* Live memory right after record number event (1-based). */
static struct replay_live *live_at_event(struct trace *t, uint64_t event, struct replay *r)
{
	struct stop_at s = { event, NULL };

	replay_init(r, t);
	inherit_seed(r); /* as growth_collect did: the same live set */
	r->on_record = stop_on_record;
	r->arg = &s;
	replay_run(r);
	return s.live ? s.live : replay_snapshot(r);
}

static const char *const section[CAT_COUNT] = {
	NULL,
	"interpreter and module state",
	"Python arenas (pymalloc: small objects of every line)",
	"kept until exit on purpose (default suppressions)",
};

/* What the peak report set apart, and with --all those sites. */
struct peak_other {
	struct classifier cat;
	struct site *sites[CAT_COUNT];
	size_t n[CAT_COUNT];
};

static void print_text(const struct growth *g, const struct site *sites, size_t n, unsigned flags,
		       const struct peak_other *po)
{
	const struct trace *t = g->r.trace;
	char b1[HUMAN_LEN], b2[HUMAN_LEN], c[HUMAN_LEN];
	size_t shown = n;
	unsigned k;

	report_header(stdout, &g->r);
	if (!g->peak_total) {
		printf("\nno memory was live at any time\n");
		return;
	}
	printf("\npeak of live memory, all kinds: %s at %s (record %s)\n",
	       bytes_exact(b1, sizeof(b1), g->peak_total), human_ns(b2, sizeof(b2), trace_rel(t, g->peak_ts)),
	       fmt_count(c, sizeof(c), g->peak_event));
	for (k = 1; k < MP_KIND_COUNT; k++)
		if (g->peak_live[k])
			printf("  %-10s %s\n", kind_name(k), bytes_exact(b1, sizeof(b1), g->peak_live[k]));
	printf("\npeak of each kind on its own:\n");
	for (k = 1; k < MP_KIND_COUNT; k++) {
		const struct replay_kind *rk = &g->r.kinds[k];

		if (!rk->peak_bytes)
			continue;
		printf("  %-10s %s at %s; %s block%s at most\n", kind_name(k),
		       bytes_exact(b1, sizeof(b1), rk->peak_bytes), human_ns(b2, sizeof(b2), trace_rel(t, rk->peak_ts)),
		       fmt_count(c, sizeof(c), rk->peak_blocks), rk->peak_blocks == 1 ? "" : "s");
	}
	if (!(flags & REPORT_ALL) && n > PEAK_TOP)
		shown = PEAK_TOP;
	printf("\nlive at the peak:\n");
	cat_text(stdout, &po->cat, "", "shows them");
	cat_text_suppressed(stdout, &po->cat, "");
	printf("%s%zu site%s of the program's own:\n", shown < n ? "top " : "", shown,
	       shown == 1 ? "" : "s");
	sites_text(stdout, sites, shown, g->o.mode);
	for (k = CAT_STATE; k < CAT_COUNT; k++) {
		if (!po->n[k])
			continue;
		printf("\n%s, %zu site%s:\n", section[k], po->n[k], po->n[k] == 1 ? "" : "s");
		sites_text(stdout, po->sites[k], po->n[k], g->o.mode);
	}
}

static void json_sites(const struct site *sites, size_t n, enum category cat, int *first,
		       enum site_mode mode)
{
	size_t i;

	for (i = 0; i < n; i++, *first = 0) {
		printf("%s{\"category\":\"%s\",", *first ? "" : ",", cat_name(cat));
		site_json(stdout, &sites[i]);
		putchar(',');
		site_json_key_text(stdout, &sites[i], mode);
		printf(",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", sites[i].blocks, sites[i].bytes);
	}
}

static void print_json(const struct growth *g, const struct site *sites, size_t n,
		       const struct peak_other *po)
{
	const struct trace *t = g->r.trace;
	unsigned k;
	int first = 1;

	report_json_head(stdout, t, "peak");
	report_json_ending(stdout, &g->r);
	printf(",\"peak\":{\"bytes\":%" PRIu64 ",\"ns\":%" PRIu64 ",\"record\":%" PRIu64
	       ",\"kinds\":{", g->peak_total, g->peak_total ? trace_rel(t, g->peak_ts) : 0,
	       g->peak_event);
	for (k = 1; k < MP_KIND_COUNT; k++)
		printf("%s\"%s\":%" PRIu64, k > 1 ? "," : "", kind_name(k), g->peak_live[k]);
	printf("}},\"kinds\":{");
	for (k = 1; k < MP_KIND_COUNT; k++) {
		const struct replay_kind *rk = &g->r.kinds[k];

		printf("%s\"%s\":{\"peak_bytes\":%" PRIu64 ",\"peak_blocks\":%" PRIu64
		       ",\"peak_ns\":%" PRIu64 "}", k > 1 ? "," : "", kind_name(k), rk->peak_bytes,
		       rk->peak_blocks, rk->peak_bytes ? trace_rel(t, rk->peak_ts) : 0);
	}
	printf("}");
	cat_json(stdout, &po->cat);
	printf(",\"sites\":[");
	json_sites(sites, n, CAT_PROGRAM, &first, g->o.mode);
	for (k = CAT_STATE; k < CAT_COUNT; k++)
		json_sites(po->sites[k], po->n[k], k, &first, g->o.mode);
	printf("]}\n");
}

/* The report on one trace (a->flags: text, JSON or folded); the exit status. */
static int peak_one(const struct report_args *a, const char *path)
{
	struct growth g;
	struct trace t, t2;
	struct replay r2;
	struct replay_live *live, *out[CAT_COUNT] = { NULL };
	struct peak_other po;
	struct symbolizer *sym;
	struct site *sites;
	size_t n, i;
	unsigned k;

	if (report_collect(&g, &t, path, &a->o) < 0)
		return EXIT_FAIL;
	if (trace_open(&t2, path, TRACE_QUIET) < 0) {
		growth_release(&g);
		trace_close(&t);
		return EXIT_FAIL;
	}
	live = g.peak_total ? live_at_event(&t2, g.peak_event, &r2) : NULL;
	if (!live)
		replay_init(&r2, &t2);
	/* symbolize with the whole trace's modules and stacks */
	sym = sym_new(&g.r, 1);
	memset(&po, 0, sizeof(po));
	cat_init(&po.cat, &g.r, sym, NULL, a->o.cat_flags);
	cat_split(&po.cat, &live, (a->flags & REPORT_ALL) ? out : NULL);
	sites = sites_build(&g.r, sym, live, a->o.mode, &n);
	for (k = CAT_STATE; k < CAT_COUNT; k++)
		if (out[k])
			po.sites[k] = sites_build(&g.r, sym, out[k], a->o.mode, &po.n[k]);
	if (a->flags & REPORT_JSON)
		print_json(&g, sites, n, &po);
	else if (a->flags & REPORT_FOLDED)
		for (i = 0; i < n; i++)
			flame_folded(stdout, &sites[i], sites[i].bytes);
	else
		print_text(&g, sites, n, a->flags, &po);
	sites_free(sites, n);
	for (k = CAT_STATE; k < CAT_COUNT; k++) {
		if (po.sites[k])
			sites_free(po.sites[k], po.n[k]);
		replay_live_free(&out[k]);
	}
	cat_release(&po.cat);
	sym_free(sym);
	replay_live_free(&live);
	replay_release(&r2);
	trace_close(&t2);
	return report_end(&g, &t);
}

static int cmd_peak(int argc, char **argv)
{
	static const struct option opts[] = {
		REPORT_OPT_JSON, REPORT_OPT_FOLDED, REPORT_OPT_SITES, REPORT_OPT_ALL,
		REPORT_OPT_NO_DEFAULTS, REPORT_OPT_PARENT, REPORT_OPT_PER_PROCESS, REPORT_OPT_JOBS,
		REPORT_OPT_END,
	};
	struct report_args a = { .cmd = &command_peak, .opts = opts, .n_traces = 1, .many = 1,
				 .o = { .flags = GROWTH_PROGRESS } };
	int ret;

	if (report_parse(&a, argc, argv, &ret) < 0)
		return ret;
	if (multi_wanted(a.traces, a.cl.n_operands))
		return multi_report(&a, peak_one);
	return peak_one(&a, a.traces[0]);
}

const struct command command_peak = {
	.name = "peak",
	.run = cmd_peak,
	.usage = "memprov peak [--json|--folded] [--native|--python-only] [--alloc-fn NAME]... [--all] [--no-default-suppressions] [--parent TRACE] [--per-process] [--jobs N] TRACE|DIR...",
	.help = "When live memory peaked (all kinds together, and each kind on its own) and what\n"
		"was live at the overall peak, by site, biggest first; interpreter and module\n"
		"state (start-up, imports), pymalloc's arenas and what the default suppressions\n"
		"hide are one line each.\n"
		"  --json         one JSON object on stdout\n"
		"  --folded       live bytes at the peak as folded stacks\n"
		"  --native, --python-only, --alloc-fn NAME   frames shown, as for leaks\n"
		"  --all          show every site, not the top 20, those set apart too\n"
		"  --no-default-suppressions  show what glibc, the loader and CUDA keep until exit\n"
		"  --parent TRACE  a forked child's parent, when its trace is not beside the child's\n"
		"Many traces, or a run directory (memprov run -d): the sites live at each process's\n"
		"peak, merged by their frames (with --json: one memprov.merge/1 object).\n"
		"  --per-process  with many traces: each process's sites apart, before the merge\n"
		"  --jobs N       with many traces: read N at once (default: one per CPU)\n",
};
