/*
 * report_leaks.c - `memprov leaks`: memory still live at the end of the
 * Python main module (the last MP_RF_MAIN_END mark), else at the end of
 * the trace (exit, or point of death), grouped by site, biggest first.
 * The program's own sites are listed; interpreter and module state,
 * pymalloc's arenas and what the default suppressions hide are one line
 * each (category.h), and listed by site with --all.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "category.h"
#include "inherit.h"
#include "multi.h"
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
	struct classifier cat;
	struct site *other[CAT_COUNT];    /* with --all: the sites set apart */
	size_t n_other[CAT_COUNT];
	struct site *inherited;           /* a forked child's: what its parent gave it */
	size_t n_inherited;
	struct classifier inh_cat;        /* of the inherited: the parent's state, set apart */
	uint64_t inh_apart[2];            /* blocks, bytes of it set apart (not with --all) */
};

static const char *const section[CAT_COUNT] = {
	NULL,
	"interpreter and module state",
	"Python arenas (pymalloc: small objects of every line, charged to the one that needed a new arena)",
	"kept until exit on purpose (default suppressions)",
};

static int leaks_on_mark(struct replay *r, const struct replay_mark *m, void *arg)
{
	struct leaks *lk = arg;

	if (!(m->flags & MP_RF_MAIN_END))
		return 0;
	replay_live_free(&lk->at_main_end);
	lk->at_main_end = replay_snapshot_main_end(r);
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
	inherit_text(stdout, r, "  ");
	reach_text_summary(stdout, &lk->reach, r);
	printf("\n");
	cat_text(stdout, &lk->cat, "", "shows them");
	cat_text_suppressed(stdout, &lk->cat, "");
	if (lk->inh_apart[0])
		printf("inherited and still held, not the program's own (the parent's interpreter and "
		       "module state, arenas, suppressed): %s block%s, %s — `--all` lists them\n",
		       fmt_count(c, sizeof(c), lk->inh_apart[0]), lk->inh_apart[0] == 1 ? "" : "s",
		       bytes_exact(b2, sizeof(b2), lk->inh_apart[1]));
	if (lk->n_inherited) {
		printf("inherited from the parent and still held, %zu site%s (the parent's stacks):\n",
		       lk->n_inherited, lk->n_inherited == 1 ? "" : "s");
		sites_text(stdout, lk->inherited, lk->n_inherited, lk->mode);
		if (!lk->reach.shown) /* the class sections open with their own blank line */
			printf("\n");
	}
	if (lk->reach.shown) {
		/* by reachability class, as valgrind lists them: everything live */
		reach_text_sites(stdout, &lk->reach, lk->mode,
				 lk->flags & REPORT_ALL ? 0 : LEAKS_TOP);
		return;
	}
	if (!(lk->flags & REPORT_ALL) && n > LEAKS_TOP)
		shown = LEAKS_TOP;
	if (!n)
		printf("no site of the program's own\n");
	else if (shown < n)
		printf("top %zu of %zu sites of the program's own (--all shows every site):\n", shown, n);
	else
		printf("%zu site%s of the program's own:\n", n, n == 1 ? "" : "s");
	sites_text(stdout, sites, shown, lk->mode);
	for (k = CAT_STATE; k < CAT_COUNT; k++) {
		if (!lk->n_other[k])
			continue;
		printf("\n%s, %zu site%s:\n", section[k], lk->n_other[k], lk->n_other[k] == 1 ? "" : "s");
		sites_text(stdout, lk->other[k], lk->n_other[k], lk->mode);
	}
}

static void print_json_site(const struct leaks *lk, const struct site *s, enum category cat)
{
	printf("{\"category\":\"%s\",", cat_name(cat));
	site_json_kind(stdout, s);
	printf(",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64, s->blocks, s->bytes);
	reach_json_site(stdout, &lk->reach, s);
	putchar(',');
	site_json_key_text(stdout, s, lk->mode);
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
	int first = 1;

	report_json_open(stdout, "leaks");
	report_json_trace(stdout, t);
	report_json_exit(stdout, t);
	report_json_ending(stdout, r);
	printf(",\"at\":\"%s\",\"at_ns\":%" PRIu64 ",\"damaged\":%s,\"totals\":{", at, at_ns,
	       t->damaged ? "true" : "false");
	for (k = 1; k < MP_KIND_COUNT; k++)
		printf("%s\"%s\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", k > 1 ? "," : "",
		       kind_name(k), lk->totals[k][0], lk->totals[k][1]);
	printf("}");
	inherit_json(stdout, r);
	printf(",\"inherited_sites\":[");
	for (i = 0; i < lk->n_inherited; i++) {
		if (i)
			putchar(',');
		print_json_site(lk, &lk->inherited[i], CAT_PROGRAM);
	}
	printf("],\"inherited_set_apart\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "},",
	       lk->inh_apart[0], lk->inh_apart[1]);
	reach_json(stdout, &lk->reach, r);
	cat_json(stdout, &lk->cat);
	printf(",\"sites\":[");
	for (i = 0; i < n; i++, first = 0) {
		if (!first)
			putchar(',');
		print_json_site(lk, &sites[i], CAT_PROGRAM);
	}
	for (k = CAT_STATE; k < CAT_COUNT; k++)
		for (i = 0; i < lk->n_other[k]; i++, first = 0) {
			if (!first)
				putchar(',');
			print_json_site(lk, &lk->other[k][i], k);
		}
	printf("]}\n");
}

int leaks_one_trace(const struct report_args *a, const char *path)
{
	struct leaks lk;
	struct trace t;
	struct replay r;
	struct replay_live *live, *l, *tmp, *out[CAT_COUNT] = { NULL }, *inh = NULL;
	struct symbolizer *sym;
	struct site *sites;
	const char *at;
	uint64_t at_ts;
	size_t n;
	unsigned k;

	memset(&lk, 0, sizeof(lk));
	lk.flags = a->flags;
	lk.mode = a->o.mode;
	if (report_replay(&t, &r, path, leaks_on_mark, &lk))
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
	inherit_split(&r, &live, &inh);
	/* a forked Python child inherits its parent's whole interpreter: list what is the program's */
	cat_init(&lk.inh_cat, &r, sym, NULL, CAT_END_VERDICT | a->o.cat_flags);
	if (!(lk.flags & REPORT_ALL)) {
		cat_split(&lk.inh_cat, &inh, NULL);
		for (k = CAT_STATE; k < CAT_COUNT; k++) {
			lk.inh_apart[0] += lk.inh_cat.total[k].blocks;
			lk.inh_apart[1] += lk.inh_cat.total[k].bytes;
		}
	}
	lk.inherited = sites_build(&r, sym, inh, lk.mode, &lk.n_inherited);
	cat_init(&lk.cat, &r, sym, NULL, CAT_END_VERDICT | a->o.cat_flags);
	cat_split(&lk.cat, &live, (lk.flags & REPORT_ALL) ? out : NULL);
	sites = sites_build(&r, sym, live, lk.mode, &n);
	for (k = CAT_STATE; k < CAT_COUNT; k++)
		if (out[k])
			lk.other[k] = sites_build(&r, sym, out[k], lk.mode, &lk.n_other[k]);
	reach_view_build(&lk.reach, &r, sym, lk.mode, !lk.at_main_end);
	reach_sort_sites(&lk.reach, sites, n);
	if (lk.flags & REPORT_JSON)
		print_json(&lk, &r, at, trace_rel(&t, at_ts), sites, n);
	else
		print_text(&lk, &r, at, trace_rel(&t, at_ts), sites, n);
	sites_free(sites, n);
	sites_free(lk.inherited, lk.n_inherited);
	replay_live_free(&inh);
	for (k = CAT_STATE; k < CAT_COUNT; k++) {
		if (out[k])
			sites_free(lk.other[k], lk.n_other[k]);
		replay_live_free(&out[k]);
	}
	cat_release(&lk.cat);
	cat_release(&lk.inh_cat);
	reach_view_free(&lk.reach);
	sym_free(sym);
	replay_live_free(&live);
	return report_close(&t, &r);
}

static int cmd_leaks(int argc, char **argv)
{
	static const struct option opts[] = {
		REPORT_OPT_JSON, REPORT_OPT_SITES, REPORT_OPT_ALL, REPORT_OPT_NO_DEFAULTS,
		REPORT_OPT_PARENT, REPORT_OPT_PER_PROCESS, REPORT_OPT_JOBS, REPORT_OPT_END,
	};
	struct report_args a = { .cmd = &command_leaks, .opts = opts, .n_traces = 1, .many = 1 };
	int ret;

	if (report_parse(&a, argc, argv, &ret) < 0)
		return ret;
	if (multi_wanted(a.traces, a.cl.n_operands))
		return multi_report(&a, leaks_one_trace);
	return leaks_one_trace(&a, a.traces[0]);
}

const struct command command_leaks = {
	.name = "leaks",
	.run = cmd_leaks,
	.usage = "memprov leaks [--json] [--native|--python-only] [--alloc-fn NAME]... [--all] [--no-default-suppressions] [--parent TRACE] [--per-process] [--jobs N] TRACE|DIR...",
	.help = "Memory still live at the end of the Python main module (if the trace marks it),\n"
		"else at exit or at the point of death, grouped by allocation site, biggest first.\n"
		"Interpreter and module state (start-up, imports, a module's top-level code, library\n"
		"code alone), pymalloc's arenas and what the default suppressions hide are one line\n"
		"each.\n"
		"  --json         one JSON object on stdout\n"
		"  --native       show every native frame, interpreter frames included\n"
		"  --python-only  show Python frames only\n"
		"  --alloc-fn NAME  NAME allocates too ('*' matches any run): sites are its\n"
		"                 callers, named by it, as for strdup and operator new\n"
		"  --all          show every site, not the top 20, those set apart too\n"
		"  --no-default-suppressions  show what glibc, the loader and CUDA keep until exit\n"
		"  --per-process  with many traces: each process's sites apart, before the merge\n"
		"Many traces, or a run directory (memprov run -d): the sites of every process,\n"
		"merged by their frames, each with the processes that hold it, worst first\n"
		"(with --json: one memprov.merge/1 object, as `memprov merge` writes).\n"
		"  --jobs N       with many traces: read N at once (default: one per CPU)\n"
		"  --parent TRACE  a forked child's parent, when its trace is not beside the child's\n",
};
