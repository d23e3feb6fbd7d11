/*
 * report_leaks.c - `memprov leaks`: memory still live at the end of the
 * Python main module (the last MP_RF_MAIN_END mark), else at the end of
 * the trace (exit, or point of death), grouped by site, biggest first.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "sites.h"
#include "symbolize.h"
#include "util.h"

#define LEAKS_TOP 20

enum leaks_flags {
	LEAKS_JSON = 1 << 0,
	LEAKS_ALL = 1 << 1,
};

struct leaks {
	unsigned flags;
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

static void print_native_text(FILE *f, const struct sym_frame *fr)
{
	char buf[512];

	if (!fr->function) {
		fprintf(f, "      %s\n", sym_fallback(fr, buf, sizeof(buf)));
		return;
	}
	if (fr->file)
		fprintf(f, "      %s %s:%d\n", fr->function, fr->file, fr->line);
	else
		fprintf(f, "      %s (%s)\n", fr->function, sym_fallback(fr, buf, sizeof(buf)));
}

static void print_text(const struct leaks *lk, const struct replay *r, const char *at,
		       uint64_t at_ns, const struct site *sites, size_t n)
{
	size_t i, j, shown = n;
	char b1[32], b2[32];
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
		printf("  %-10s %10" PRIu64 " blocks %12s\n", kind_name(k), lk->totals[k][0],
		       human_bytes(b2, sizeof(b2), lk->totals[k][1]));
		j++;
	}
	if (!j)
		printf("  none\n");
	if (!n)
		return;
	if (!(lk->flags & LEAKS_ALL) && n > LEAKS_TOP)
		shown = LEAKS_TOP;
	if (shown < n)
		printf("\ntop %zu of %zu sites (--all shows every site):\n", shown, n);
	else
		printf("\n%zu site%s:\n", n, n == 1 ? "" : "s");
	for (i = 0; i < shown; i++) {
		const struct site *s = &sites[i];

		printf("  #%zu %s %s: %" PRIu64 " block%s, %s (%" PRIu64 " B)\n", i + 1,
		       kind_name(s->kind), func_name(s->func), s->blocks, s->blocks == 1 ? "" : "s",
		       human_bytes(b1, sizeof(b1), s->bytes), s->bytes);
		for (j = 0; j < s->n_python; j++)
			printf("      %s %s:%u\n", s->python[j].function,
			       s->python[j].file ? s->python[j].file : "?", s->python[j].line);
		for (j = 0; j < s->n_native; j++)
			print_native_text(stdout, s->native[j]);
		if (!s->n_python && !s->n_native)
			printf("      %s\n", lk->mode == SITE_PYTHON_ONLY ? "(no Python frames)" : "(no stack recorded)");
	}
}

static void print_json_site(const struct site *s)
{
	char buf[512];
	size_t j;

	printf("{\"kind\":\"%s\",\"func\":", kind_name(s->kind));
	json_str(stdout, func_name(s->func));
	printf(",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"python\":[", s->blocks, s->bytes);
	for (j = 0; j < s->n_python; j++) {
		printf("%s{\"function\":", j ? "," : "");
		json_str(stdout, s->python[j].function);
		printf(",\"file\":");
		json_str(stdout, s->python[j].file);
		printf(",\"line\":%u}", s->python[j].line);
	}
	printf("],\"frames\":[");
	for (j = 0; j < s->n_native; j++) {
		const struct sym_frame *f = s->native[j];

		printf("%s{\"function\":", j ? "," : "");
		json_str(stdout, f->function ? f->function : sym_fallback(f, buf, sizeof(buf)));
		printf(",\"file\":");
		json_str(stdout, f->file);
		if (f->line)
			printf(",\"line\":%d", f->line);
		else
			printf(",\"line\":null");
		printf(",\"module\":");
		json_str(stdout, f->module);
		printf(",\"address\":\"0x%" PRIx64 "\"}", f->ip);
	}
	printf("]}");
}

static void print_json(const struct leaks *lk, const struct replay *r, const char *at,
		       uint64_t at_ns, const struct site *sites, size_t n)
{
	const struct trace *t = r->trace;
	size_t i;
	unsigned k;

	printf("{\"trace\":");
	json_str(stdout, t->path);
	printf(",\"pid\":%d,\"command\":", t->hdr.pid);
	json_str(stdout, report_command(t));
	printf(",\"state\":\"%s\",\"exit_status\":", state_name(t->hdr.state));
	if (t->hdr.state == MP_STATE_EXITED && t->hdr.exit_status != MP_EXIT_UNKNOWN)
		printf("%d", t->hdr.exit_status);
	else
		printf("null");
	printf(",\"at\":\"%s\",\"at_ns\":%" PRIu64 ",\"damaged\":%s,\"totals\":{", at, at_ns,
	       t->damaged ? "true" : "false");
	for (k = 1; k < MP_KIND_COUNT; k++)
		printf("%s\"%s\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", k > 1 ? "," : "",
		       kind_name(k), lk->totals[k][0], lk->totals[k][1]);
	printf("},\"sites\":[");
	for (i = 0; i < n; i++) {
		if (i)
			putchar(',');
		print_json_site(&sites[i]);
	}
	printf("]}\n");
}

static int leaks_parse(struct leaks *lk, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "native", no_argument, NULL, 'n' },
		{ "python-only", no_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': lk->flags |= LEAKS_JSON; break;
		case 'n': lk->mode = SITE_NATIVE; break;
		case 'p': lk->mode = SITE_PYTHON_ONLY; break;
		case 'a': lk->flags |= LEAKS_ALL; break;
		case 'h': show_usage(stdout, "leaks"); return -2;
		default:
			return usage_error("leaks", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("leaks", optind == argc ? "no trace given" : "more than one trace given");
	return 0;
}

int cmd_leaks(int argc, char **argv)
{
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

	memset(&lk, 0, sizeof(lk));
	ret = leaks_parse(&lk, argc, argv);
	if (ret)
		return ret == -2 ? EXIT_OK : ret;
	if (trace_open(&t, argv[optind], 0) < 0)
		return EXIT_FAIL;
	replay_init(&r, &t);
	r.on_mark = leaks_on_mark;
	r.arg = &lk;
	replay_run(&r);

	if (lk.at_main_end) {
		live = lk.at_main_end;
		at = "main-end";
		at_ts = lk.main_end_ts;
	} else {
		live = replay_snapshot(&r);
		at = t.hdr.state == MP_STATE_EXITED ? "exit" : "end-of-trace";
		at_ts = r.have_exit ? r.exit_ts : t.hdr.end_mono_ns > t.last_ts ? t.hdr.end_mono_ns : t.last_ts;
	}
	HASH_ITER(hh, live, l, tmp) {
		lk.totals[l->key.kind][0] += l->blocks;
		lk.totals[l->key.kind][1] += l->bytes;
	}
	sym = sym_new(&r, 1);
	sites = sites_build(&r, sym, live, lk.mode, &n);
	if (lk.flags & LEAKS_JSON)
		print_json(&lk, &r, at, report_rel(&t, at_ts), sites, n);
	else
		print_text(&lk, &r, at, report_rel(&t, at_ts), sites, n);
	sites_free(sites, n);
	sym_free(sym);
	replay_live_free(&live);
	ret = report_status(&t);
	replay_release(&r);
	trace_close(&t);
	return ret;
}
