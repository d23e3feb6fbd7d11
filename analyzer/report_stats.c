/*
 * report_stats.c - `memprov stats`: calls per function, per-kind
 * allocations, frees, peaks and live memory at the end, the totals of
 * the scan at exit per reachability class, failed calls, and the state
 * of the trace itself (duration, threads, cut, damaged).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "inherit.h"
#include "multi.h"
#include "report.h"
#include "report_reach.h"
#include "util.h"

static int fail_cmp(const void *a, const void *b)
{
	const struct replay_failure *x = *(const struct replay_failure *const *)a;
	const struct replay_failure *y = *(const struct replay_failure *const *)b;

	if (x->key.func != y->key.func)
		return x->key.func < y->key.func ? -1 : 1;
	if (x->key.kind != y->key.kind)
		return x->key.kind < y->key.kind ? -1 : 1;
	if (x->key.size != y->key.size)
		return x->key.size < y->key.size ? -1 : 1;
	return x->key.result < y->key.result ? -1 : x->key.result > y->key.result;
}

/* Failures sorted by function, kind, size, result; NULL-terminated. */
static const struct replay_failure **sorted_failures(const struct replay *r, size_t *n)
{
	const struct replay_failure **v, *f, *tmp;
	size_t i = 0;

	*n = HASH_COUNT(r->failures);
	v = xcalloc(*n + 1, sizeof(*v));
	HASH_ITER(hh, r->failures, f, tmp)
		v[i++] = f;
	sort_array(v, *n, sizeof(*v), fail_cmp);
	return v;
}

/*
 * What each kind held at the end of the Python main module (the last
 * MP_RF_MAIN_END mark): the instant `leaks` and `check` judge a Python
 * program at, where `live at end` is the trace's end, after the
 * interpreter's finalization freed most of it.
 */
struct main_end {
	int seen;
	uint64_t ts;
	uint64_t bytes[MP_KIND_COUNT], blocks[MP_KIND_COUNT];
};

static int on_mark(struct replay *r, const struct replay_mark *m, void *arg)
{
	struct main_end *e = arg;
	unsigned k;

	if (!(m->flags & MP_RF_MAIN_END))
		return 0;
	e->seen = 1;
	e->ts = m->ts;
	for (k = 1; k < MP_KIND_COUNT; k++) {
		e->bytes[k] = r->kinds[k].live_bytes;
		e->blocks[k] = r->kinds[k].live_blocks;
	}
	return 0;
}

static void main_end_text(const struct replay *r, const struct main_end *e)
{
	char b[HUMAN_LEN], c[HUMAN_LEN], w[HUMAN_LEN];
	unsigned k;
	int first = 1;

	if (!e->seen)
		return;
	printf("  at the end of the Python main module, %s (what leaks and check judge):",
	       human_ns(w, sizeof(w), trace_rel(r->trace, e->ts)));
	for (k = 1; k < MP_KIND_COUNT; k++) {
		if (!e->blocks[k] && !e->bytes[k])
			continue;
		printf("%s %s %s in %s block%s", first ? "" : ";", kind_name(k),
		       bytes_exact(b, sizeof(b), e->bytes[k]), fmt_count(c, sizeof(c), e->blocks[k]),
		       e->blocks[k] == 1 ? "" : "s");
		first = 0;
	}
	printf("%s\n", first ? " nothing" : "");
}

static uint64_t duration(const struct replay *r)
{
	const struct trace *t = r->trace;
	uint64_t end = t->last_ts;

	if (t->hdr.state != MP_STATE_RUNNING && t->hdr.end_mono_ns > end)
		end = t->hdr.end_mono_ns;
	if (!t->hdr.start_mono_ns || end < t->hdr.start_mono_ns)
		return end > t->first_ts ? end - t->first_ts : 0;
	return end - t->hdr.start_mono_ns;
}

static void print_text(const struct replay *r, const struct reach_view *rv,
		       const struct main_end *me)
{
	const struct trace *t = r->trace;
	const struct replay_failure **fails;
	char b1[HUMAN_LEN], b2[HUMAN_LEN], b3[HUMAN_LEN], c1[HUMAN_LEN], c2[HUMAN_LEN], c3[HUMAN_LEN];
	size_t n, i;
	unsigned k;

	report_header(stdout, r);
	printf("duration: %s, threads: %u, events: %s, marks: %s\n",
	       human_ns(b1, sizeof(b1), duration(r)), HASH_COUNT(r->threads),
	       fmt_count(c1, sizeof(c1), r->events), fmt_count(c2, sizeof(c2), r->n_marks));
	if (t->cut)
		printf("trace: cut at offset %" PRIu64 "\n", t->cut_at);
	else
		printf("trace: complete\n");
	if (t->hdr.flags & MP_HF_RAMFS)
		printf("trace: written to a RAM-backed file system (tmpfs): its pages took the "
		       "machine's memory; write traces to disk (MEMPROV_OUTPUT, memprov run -o)\n");
	printf("unmatched frees: %s (frees of memory allocated before tracing started)\n",
	       fmt_count(c1, sizeof(c1), r->unmatched_frees));
	if (r->unmatched_unmaps)
		printf("munmaps of untraced ranges: %" PRIu64 "\n", r->unmatched_unmaps);
	inherit_text(stdout, r, "");
	printf("\nfunctions:\n");
	printf("  %-24s %10s %14s %8s\n", "function", "calls", "bytes", "failed");
	for (i = 1; i < MP_FN_MAX; i++) {
		const struct replay_func *f = &r->funcs[i];

		if (!f->calls)
			continue;
		printf("  %-24s %10s %14s %8s\n", func_name((unsigned)i), fmt_count(c1, sizeof(c1), f->calls),
		       fmt_count(b1, sizeof(b1), f->bytes), fmt_count(c2, sizeof(c2), f->failed));
	}
	if (t->hdr.skipped_total) {
		printf("\nnot recorded (reached while memprov was busy): %" PRIu64 "\n",
		       t->hdr.skipped_total);
		for (i = 0; i < MP_FN_MAX; i++)
			if (t->hdr.skipped[i])
				printf("  %-24s %10" PRIu32 "\n", i ? func_name((unsigned)i) : "other",
				       t->hdr.skipped[i]);
	}
	if (t->hdr.no_room_stacks)
		printf("\nwithout native frames (too little stack left to walk): %" PRIu64 "\n",
		       t->hdr.no_room_stacks);
	printf("\nkinds:\n");
	for (k = 1; k < MP_KIND_COUNT; k++) {
		const struct replay_kind *kd = &r->kinds[k];

		if (!kd->allocs && !kd->frees)
			continue;
		printf("  %-10s allocs %s, frees %s, ", kind_name(k), fmt_count(c1, sizeof(c1), kd->allocs),
		       fmt_count(c2, sizeof(c2), kd->frees));
		printf("peak %s at %s, %s block%s at most; ", bytes_exact(b1, sizeof(b1), kd->peak_bytes),
		       human_ns(b2, sizeof(b2), trace_rel(t, kd->peak_ts)),
		       fmt_count(c3, sizeof(c3), kd->peak_blocks), kd->peak_blocks == 1 ? "" : "s");
		printf("live at end %s in %s block%s\n", bytes_exact(b3, sizeof(b3), kd->live_bytes),
		       fmt_count(c1, sizeof(c1), kd->live_blocks), kd->live_blocks == 1 ? "" : "s");
	}
	main_end_text(r, me);
	reach_text_summary(stdout, rv, r);
	if (r->have_reach && r->reach.status == MP_REACH_DONE)
		printf("  the scan took %s and %s of its own memory\n",
		       human_ns(b1, sizeof(b1), r->reach.scan_ns),
		       human_bytes(b2, sizeof(b2), r->reach.mem_bytes));
	fails = sorted_failures(r, &n);
	if (n)
		printf("\nfailed calls:\n");
	for (i = 0; i < n; i++) {
		const struct replay_failure *f = fails[i];

		printf("  %s (%s) of %s", func_name(f->key.func), kind_name(f->key.kind),
		       bytes_exact(b1, sizeof(b1), f->key.size));
		if (f->key.result)
			printf(", error %d", f->key.result);
		printf(": %s time%s\n", fmt_count(c1, sizeof(c1), f->count), f->count == 1 ? "" : "s");
	}
	free(fails);
}

static void print_json(const struct replay *r, const struct reach_view *rv,
		       const struct main_end *me)
{
	const struct trace *t = r->trace;
	const struct replay_failure **fails;
	size_t n, i;
	unsigned k;
	int first = 1;

	report_json_open(stdout, "stats");
	report_json_trace(stdout, t);
	report_json_exit(stdout, t);
	printf(",\"duration_ns\":%" PRIu64 ",\"threads\":%u,\"events\":%" PRIu64 ",\"marks\":%zu",
	       duration(r), HASH_COUNT(r->threads), r->events, r->n_marks);
	printf(",\"cut\":%s,\"cut_at\":", t->cut ? "true" : "false");
	if (t->cut)
		printf("%" PRIu64, t->cut_at);
	else
		printf("null");
	printf(",\"format_version\":%u,\"ram_backed\":%s", t->hdr.version,
	       t->hdr.flags & MP_HF_RAMFS ? "true" : "false");
	printf(",\"damaged\":%s,\"unmatched_frees\":%" PRIu64 ",\"unmatched_unmaps\":%" PRIu64
	       , t->damaged ? "true" : "false", r->unmatched_frees, r->unmatched_unmaps);
	inherit_json(stdout, r);
	printf(",\"functions\":{");
	for (i = 1; i < MP_FN_MAX; i++) {
		const struct replay_func *f = &r->funcs[i];

		if (!f->calls)
			continue;
		printf("%s\"%s\":{\"calls\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"failed\":%" PRIu64 "}",
		       first ? "" : ",", func_name((unsigned)i), f->calls, f->bytes, f->failed);
		first = 0;
	}
	printf("},\"skipped\":{");
	for (i = 0, first = 1; i < MP_FN_MAX; i++) {
		if (!t->hdr.skipped[i])
			continue;
		printf("%s\"%s\":%" PRIu32, first ? "" : ",", i ? func_name((unsigned)i) : "other",
		       t->hdr.skipped[i]);
		first = 0;
	}
	printf("},\"kinds\":{");
	for (k = 1; k < MP_KIND_COUNT; k++) {
		const struct replay_kind *kd = &r->kinds[k];

		printf("%s\"%s\":{\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"peak_bytes\":%" PRIu64
		       ",\"peak_blocks\":%" PRIu64 ",\"peak_ns\":%" PRIu64 ",\"live_bytes\":%" PRIu64
		       ",\"live_blocks\":%" PRIu64 "}",
		       k > 1 ? "," : "", kind_name(k), kd->allocs, kd->frees, kd->peak_bytes,
		       kd->peak_blocks, kd->peak_bytes ? trace_rel(t, kd->peak_ts) : 0,
		       kd->live_bytes, kd->live_blocks);
	}
	printf("},\"main_end\":");
	if (me->seen) {
		printf("{\"at_ns\":%" PRIu64 ",\"kinds\":{", trace_rel(t, me->ts));
		for (k = 1; k < MP_KIND_COUNT; k++)
			printf("%s\"%s\":{\"live_bytes\":%" PRIu64 ",\"live_blocks\":%" PRIu64 "}",
			       k > 1 ? "," : "", kind_name(k), me->bytes[k], me->blocks[k]);
		printf("}}");
	} else {
		printf("null");
	}
	printf(",");
	reach_json(stdout, rv, r);
	printf(",\"failures\":[");
	fails = sorted_failures(r, &n);
	for (i = 0; i < n; i++) {
		const struct replay_failure *f = fails[i];

		printf("%s{\"func\":\"%s\",\"kind\":\"%s\",\"size\":%" PRIu64 ",\"result\":%d,\"count\":%" PRIu64 "}",
		       i ? "," : "", func_name(f->key.func), kind_name(f->key.kind), f->key.size,
		       f->key.result, f->count);
	}
	free(fails);
	printf("]}\n");
}

static int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = { REPORT_OPT_JSON, REPORT_OPT_PARENT, REPORT_OPT_END };
	struct report_args a = { .cmd = &command_stats, .opts = opts, .n_traces = 1, .many = 1 };
	struct reach_view rv;
	struct main_end me;
	struct trace t;
	struct replay r;
	char *one = NULL;
	int ret;

	if (report_parse(&a, argc, argv, &ret) < 0)
		return ret;
	if (multi_wanted(a.traces, a.cl.n_operands)) {
		char **paths;
		size_t n, i;
		int failed;

		if (!(a.flags & REPORT_JSON))
			return multi_stats(&a);
		/* --json: a directory that holds one trace stands for it */
		failed = multi_expand(a.traces, a.cl.n_operands, &paths, &n);
		if (failed < 0)
			return EXIT_FAIL;
		for (i = 1; i < n; i++)
			free(paths[i]);
		one = paths[0];
		free(paths);
		if (failed || n != 1) {
			free(one);
			return failed ? EXIT_FAIL :
			       usage_error(&command_stats, "--json takes one trace: run `memprov stats --json` on each");
		}
	}
	memset(&me, 0, sizeof(me));
	ret = report_replay(&t, &r, one ? one : a.traces[0], on_mark, &me);
	free(one);
	if (ret)
		return EXIT_FAIL;
	inherit_held(&r);
	reach_view_totals(&rv, &r);
	if (a.flags & REPORT_JSON)
		print_json(&r, &rv, &me);
	else
		print_text(&r, &rv, &me);
	reach_view_free(&rv);
	return report_close(&t, &r);
}

const struct command command_stats = {
	.name = "stats",
	.run = cmd_stats,
	.usage = "memprov stats [--json] [--parent TRACE] TRACE|DIR...",
	.help = "Calls, bytes and failures per function; allocations, frees, peak and live\n"
		"memory per kind; the scan at exit's totals per reachability class (definitely\n"
		"lost, indirectly lost, possibly lost, still reachable); duration, threads,\n"
		"events, marks; whether the trace is cut.\n"
		"  --json         one JSON object on stdout\n"
		"Many traces, or a run directory (memprov run -d): the process tree, each process\n"
		"with how it ended, its peak and what it held at its end.\n"
		"  --parent TRACE  a forked child's parent, when its trace is not beside the child's\n",
};
