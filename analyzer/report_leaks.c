/*
 * report_leaks.c - `memprov leaks`: memory still live at the end of the
 * Python main module (the last MP_RF_MAIN_END mark), else at the end of
 * the trace (exit, or point of death), grouped by site, biggest first.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_reach.h"
#include "sites.h"
#include "symbolize.h"
#include "util.h"

#define LEAKS_TOP 20

struct leaks {
	unsigned flags;                   /* enum report_flags */
	struct reach_view reach;          /* classes of the scan at exit */
	enum site_mode mode;
	struct replay_live *at_main_end;  /* snapshot at the last main-end mark */
	uint64_t main_end_ts;
	uint64_t totals[MP_KIND_COUNT][2]; /* blocks, bytes at the instant used */
};

static int leaks_on_mark(struct replay *r, const struct replay_mark *m, void *arg)
{
	struct leaks *lk = arg;

	if (!(m->flags & MP_RF_MAIN_END))
		return 0;
	replay_live_free(&lk->at_main_end);
	lk->at_main_end = replay_snapshot(r);
	lk->main_end_ts = m->ts;
	return 0;
}

static void print_text(const struct leaks *lk, const struct replay *r, const char *at,
		       uint64_t at_ns, const struct site *sites, size_t n)
{
	size_t j, shown = n;
	char b1[HUMAN_LEN], b2[HUMAN_LEN], c[HUMAN_LEN];
	unsigned k;

	report_header(stdout, r);
	printf("at: %s, %s after start\n",
	       !strcmp(at, "main-end") ? "end of the Python main module (before finalization)" :
	       !strcmp(at, "exit") ? "exit" : "end of the trace",
	       human_ns(b1, sizeof(b1), at_ns));
	printf("\nlive memory by kind:\n");
	for (k = 1, j = 0; k < MP_KIND_COUNT; k++) {
		if (!lk->totals[k][0])
			continue;
		printf("  %-10s %10s block%s  %s\n", kind_name(k), fmt_count(c, sizeof(c), lk->totals[k][0]),
		       lk->totals[k][0] == 1 ? " " : "s", bytes_exact(b2, sizeof(b2), lk->totals[k][1]));
		j++;
	}
	if (!j)
		printf("  none\n");
	reach_text_summary(stdout, &lk->reach, r);
	if (lk->reach.shown) {
		reach_text_sites(stdout, &lk->reach, lk->mode,
				 lk->flags & REPORT_ALL ? 0 : LEAKS_TOP);
		return;
	}
	if (!n)
		return;
	if (!(lk->flags & REPORT_ALL) && n > LEAKS_TOP)
		shown = LEAKS_TOP;
	if (shown < n)
		printf("\ntop %zu of %zu sites (--all shows every site):\n", shown, n);
	else
		printf("\n%zu site%s:\n", n, n == 1 ? "" : "s");
	sites_text(stdout, sites, shown, lk->mode);
}

static void print_json_site(const struct leaks *lk, const struct site *s)
{
	putchar('{');
	site_json_kind(stdout, s);
	printf(",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64, s->blocks, s->bytes);
	reach_json_site(stdout, &lk->reach, s);
	putchar(',');
	site_json_frames(stdout, s);
	putchar('}');
}

static void print_json(const struct leaks *lk, const struct replay *r, const char *at,
		       uint64_t at_ns, const struct site *sites, size_t n)
{
	const struct trace *t = r->trace;
	size_t i;
	unsigned k;

	report_json_open(stdout, "leaks");
	report_json_trace(stdout, t);
	report_json_exit(stdout, t);
	printf(",\"at\":\"%s\",\"at_ns\":%" PRIu64 ",\"damaged\":%s,\"totals\":{", at, at_ns,
	       t->damaged ? "true" : "false");
	for (k = 1; k < MP_KIND_COUNT; k++)
		printf("%s\"%s\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", k > 1 ? "," : "",
		       kind_name(k), lk->totals[k][0], lk->totals[k][1]);
	printf("},");
	reach_json(stdout, &lk->reach, r);
	printf(",\"sites\":[");
	for (i = 0; i < n; i++) {
		if (i)
			putchar(',');
		print_json_site(lk, &sites[i]);
	}
	printf("]}\n");
}

static int cmd_leaks(int argc, char **argv)
{
	static const struct option opts[] = {
		REPORT_OPT_JSON, REPORT_OPT_SITES, REPORT_OPT_ALL, REPORT_OPT_END,
	};
	struct report_args a = { .cmd = &command_leaks, .opts = opts, .n_traces = 1 };
	struct leaks lk;
	struct trace t;
	struct replay r;
	struct replay_live *live, *l, *tmp;
	struct symbolizer *sym;
	struct site *sites;
	const char *at;
	uint64_t at_ts;
	size_t n;
	int ret;

	if (report_parse(&a, argc, argv, &ret) < 0)
		return ret;
	memset(&lk, 0, sizeof(lk));
	lk.flags = a.flags;
	lk.mode = a.o.mode;
	if (report_replay(&t, &r, a.traces[0], leaks_on_mark, &lk))
		return EXIT_FAIL;
	if (lk.at_main_end) {
		live = lk.at_main_end;
		at = "main-end";
		at_ts = lk.main_end_ts;
	} else {
		live = replay_snapshot(&r);
		at = t.hdr.state == MP_STATE_EXITED ? "exit" : "end-of-trace";
		at_ts = replay_end_ts(&r);
	}
	HASH_ITER(hh, live, l, tmp) {
		lk.totals[l->key.kind][0] += l->blocks;
		lk.totals[l->key.kind][1] += l->bytes;
	}
	sym = sym_new(&r, 1);
	sites = sites_build(&r, sym, live, lk.mode, &n);
	reach_view_build(&lk.reach, &r, sym, lk.mode, !lk.at_main_end);
	reach_sort_sites(&lk.reach, sites, n);
	if (lk.flags & REPORT_JSON)
		print_json(&lk, &r, at, trace_rel(&t, at_ts), sites, n);
	else
		print_text(&lk, &r, at, trace_rel(&t, at_ts), sites, n);
	sites_free(sites, n);
	reach_view_free(&lk.reach);
	sym_free(sym);
	replay_live_free(&live);
	return report_close(&t, &r);
}

const struct command command_leaks = {
	.name = "leaks",
	.run = cmd_leaks,
	.usage = "memprov leaks [--json] [--native|--python-only] [--alloc-fn NAME]... [--all] TRACE",
	.help = "Memory still live at the end of the Python main module (if the trace marks it),\n"
		"else at exit or at the point of death, grouped by allocation site, biggest first.\n"
		"  --json         one JSON object on stdout\n"
		"  --native       show every native frame, interpreter frames included\n"
		"  --python-only  show Python frames only\n"
		"  --alloc-fn NAME  NAME allocates too ('*' matches any run): sites are its\n"
		"                 callers, named by it, as for strdup and operator new\n"
		"  --all          show every site, not the top 20\n",
};
