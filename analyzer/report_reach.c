/*
 * report_reach.c - the reachability classes of the scan at exit as
 * reports show them (see report_reach.h): like valgrind's leak summary,
 * definitely lost first, then indirectly lost, possibly lost, still
 * reachable, and what was allocated after the scan.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report_reach.h"
#include "util.h"

/* The order reports list the classes in. */
static const unsigned order[MP_REACH_CLASS_COUNT] = {
	MP_REACH_DEFINITE, MP_REACH_INDIRECT, MP_REACH_POSSIBLE, MP_REACH_REACHABLE,
	MP_REACH_UNKNOWN,
};

static const char *const text_name[MP_REACH_CLASS_COUNT] = {
	[MP_REACH_UNKNOWN] = "not classified", [MP_REACH_REACHABLE] = "still reachable",
	[MP_REACH_POSSIBLE] = "possibly lost", [MP_REACH_INDIRECT] = "indirectly lost",
	[MP_REACH_DEFINITE] = "definitely lost",
};

const char *reach_why_not(const struct replay *r)
{
	if (!r->have_reach) {
		switch (r->trace->hdr.state) {
		case MP_STATE_EXITED:
			if (r->trace->hdr.flags & MP_HF_EXIT_BY_RUN)
				return "no scan: the process exited past every hook (a raw exit "
				       "system call, as Go's runtime makes); memprov run saw its status";
			return "no scan in this trace (an exit memprov does not see, "
			       "or a trace from an older memprov)";
		case MP_STATE_EXEC:
			return "no scan: the process image was replaced by exec";
		case MP_STATE_STOPPED:
			return "no scan: tracing stopped before the process exited";
		case MP_STATE_KILLED:
			return "no scan: the process was killed by a signal";
		default:
			if (r->trace->hdr.flags & MP_HF_GO)
				return "no scan: a Go program, whose runtime exits by a raw system "
				       "call no hook sees (or it was killed, or still runs)";
			return "no scan: the process did not exit normally (killed, or still running)";
		}
	}
	switch (r->reach.status) {
	case MP_REACH_DONE: return NULL;
	case MP_REACH_OFF:
		if (r->reach.notes & MP_REACH_N_PYTHON)
			return "no scan at exit: a Python program, judged on what is live at the "
			       "end of its main module";
		return "the scan was switched off (MEMPROV_REACH=0)";
	case MP_REACH_TIMEOUT:
		return "the scan did not finish within its time bound (MEMPROV_REACH_TIMEOUT_MS)";
	case MP_REACH_NOMEM:
		if (r->reach.notes & MP_REACH_N_AS_LIMIT)
			return "the scan ran out of memory: the process's address-space limit "
			       "(RLIMIT_AS, ulimit -v), which it could not lift, left it no room";
		if (r->reach.notes & MP_REACH_N_MEM_ROOM)
			return "the scan ran out of memory: it takes at most half the memory the "
			       "process had left (under its cgroup's memory limit, or the "
			       "system's available memory), not to be what pushes it over";
		return "the scan ran out of memory (MEMPROV_REACH_MEMORY_MB, or mmap failed)";
	case MP_REACH_NOTRACE: return "the scan could not read the trace back";
	case MP_REACH_UNSUPPORTED:
		return "no scan: not supported here (not x86-64, or under valgrind)";
	case MP_REACH_FAULT: return "the scan faulted and gave up (a memprov bug: please report it)";
	case MP_REACH_NOMAPS:
		return "no scan: the process's memory map could not be read "
		       "(/proc not mounted, or no descriptor left under the program's RLIMIT_NOFILE)";
	case MP_REACH_PARTIAL:
		if (r->trace->hdr.flags & MP_HF_HEAP_AHEAD)
			return "no scan: the heap was not traced: the program's malloc is that of "
			       "a library preloaded before libmemprov.so (put it first in "
			       "LD_PRELOAD), or its own";
		return "no scan: the trace does not record every allocation "
		       "(MEMPROV_SAMPLE_BYTES or MEMPROV_HEAP=0)";
	default: return "the scan failed";
	}
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp((*(struct site *const *)a)->key, (*(struct site *const *)b)->key);
}

void reach_view_build(struct reach_view *v, const struct replay *r, struct symbolizer *sym,
		      enum site_mode mode, int at_end)
{
	unsigned c;

	memset(v, 0, sizeof(*v));
	v->why = reach_why_not(r);
	if (!v->why && !at_end)
		v->why = "this report is at the end of the Python main module; the scan "
			 "classifies what is live at exit";
	if (v->why)
		return;
	v->shown = 1;
	for (c = 0; c < MP_REACH_CLASS_COUNT; c++) {
		struct replay_live *live = replay_snapshot_reach(r, c), *l, *tmp;
		size_t i;

		HASH_ITER(hh, live, l, tmp) {
			v->totals[c][0] += l->blocks;
			v->totals[c][1] += l->bytes;
		}
		v->sites[c] = sites_build(r, sym, live, mode, &v->n[c]);
		replay_live_free(&live);
		v->by_key[c] = xcalloc(v->n[c] + 1, sizeof(*v->by_key[c]));
		for (i = 0; i < v->n[c]; i++)
			v->by_key[c][i] = &v->sites[c][i];
		qsort(v->by_key[c], v->n[c], sizeof(*v->by_key[c]), key_cmp);
	}
}

void reach_view_totals(struct reach_view *v, const struct replay *r)
{
	struct replay_block *const tables[2] = { r->blocks, r->mmaps };
	size_t i;

	memset(v, 0, sizeof(*v));
	v->why = reach_why_not(r);
	if (v->why)
		return;
	v->shown = 1;
	for (i = 0; i < 2; i++) {
		const struct replay_block *b, *tmp;

		HASH_ITER(hh, tables[i], b, tmp) {
			unsigned c = b->reach < MP_REACH_CLASS_COUNT ? b->reach : MP_REACH_UNKNOWN;

			v->totals[c][0] += b->weight;
			v->totals[c][1] += block_bytes(b);
		}
	}
}

void reach_view_free(struct reach_view *v)
{
	unsigned c;

	for (c = 0; c < MP_REACH_CLASS_COUNT; c++) {
		if (v->sites[c])
			sites_free(v->sites[c], v->n[c]);
		free(v->by_key[c]);
	}
	memset(v, 0, sizeof(*v));
}

void reach_site_counts(const struct reach_view *v, const struct site *s,
		       uint64_t out[MP_REACH_CLASS_COUNT][2])
{
	unsigned c;

	memset(out, 0, sizeof(uint64_t) * 2 * MP_REACH_CLASS_COUNT);
	for (c = 0; v->shown && c < MP_REACH_CLASS_COUNT; c++) {
		const struct site *key = s, **hit;

		hit = bsearch(&key, v->by_key[c], v->n[c], sizeof(*v->by_key[c]), key_cmp);
		if (hit) {
			out[c][0] = (*hit)->blocks;
			out[c][1] = (*hit)->bytes;
		}
	}
}

struct sort_item {
	uint64_t lost[3];  /* definite, indirect, possible bytes */
	size_t index;
	struct site site;
};

static int lost_cmp(const void *a, const void *b)
{
	const struct sort_item *x = a, *y = b;
	int i;

	for (i = 0; i < 3; i++)
		if (x->lost[i] != y->lost[i])
			return x->lost[i] > y->lost[i] ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

void reach_sort_sites(const struct reach_view *v, struct site *sites, size_t n)
{
	struct sort_item *it;
	size_t i;

	if (!v->shown || n < 2)
		return;
	it = xcalloc(n, sizeof(*it));
	for (i = 0; i < n; i++) {
		uint64_t c[MP_REACH_CLASS_COUNT][2];

		reach_site_counts(v, &sites[i], c);
		it[i].lost[0] = c[MP_REACH_DEFINITE][1];
		it[i].lost[1] = c[MP_REACH_INDIRECT][1];
		it[i].lost[2] = c[MP_REACH_POSSIBLE][1];
		it[i].index = i;
		it[i].site = sites[i];
	}
	qsort(it, n, sizeof(*it), lost_cmp);
	for (i = 0; i < n; i++)
		sites[i] = it[i].site;
	free(it);
}

static void print_notes(FILE *f, const struct mp_rec_reach *s)
{
	uint32_t missing = s->threads - s->threads_stopped;

	if (s->notes & MP_REACH_N_THREADS)
		fprintf(f, "  note: %u of %u threads could not be stopped (ptrace refused): their "
			"registers were not scanned; their stacks were, %u from the stack pointer "
			"the kernel reported, %u whole\n", missing, s->threads, s->threads_stack_only,
			missing - s->threads_stack_only);
	if (s->notes & MP_REACH_N_UNREADABLE)
		fprintf(f, "  note: %u memory ranges could not be read\n", s->unreadable);
	if (s->notes & MP_REACH_N_OWN_FRAMES)
		fprintf(f, "  note: the exiting thread's frames were scanned with memprov's own\n");
	if (s->notes & MP_REACH_N_NO_ARENA)
		fprintf(f, "  note: glibc's main arena was not found: its free lists were "
			"scanned as roots\n");
	if (s->notes & MP_REACH_N_FILES)
		fprintf(f, "  note: file mappings were not scanned (no fault-safe reader)\n");
	if (s->notes & MP_REACH_N_SECCOMP)
		fprintf(f, "  note: a seccomp filter is installed: no thread was stopped with ptrace\n");
	if (s->notes & MP_REACH_N_INHERITED)
		fprintf(f, "  note: a forked child: the blocks it inherited were scanned with its own "
			"(its parent's trace read up to the fork)\n");
	if (s->notes & MP_REACH_N_ALLOC_LOST)
		fprintf(f, "  note: a malloc replacement's own mappings were not all kept track "
			"of: they were scanned as roots\n");
	if (s->notes & MP_REACH_N_AS_LIMIT)
		fprintf(f, "  note: the scan ran under the process's address-space limit "
			"(RLIMIT_AS), which it could not lift\n");
	if (s->notes & MP_REACH_N_HEAP_ROOTS)
		fprintf(f, "  note: a forked child: the blocks it inherited were not scanned one by "
			"one; the allocator's memory, with them in it, was scanned as roots\n");
}

const char *reach_when(const struct replay *r)
{
	return r->trace->hdr.state == MP_STATE_KILLED ? "death" : "exit";
}

void reach_text_summary(FILE *f, const struct reach_view *v, const struct replay *r)
{
	char b2[HUMAN_LEN], nb[HUMAN_LEN];
	unsigned i;

	if (!v->shown) {
		fprintf(f, "\nreachability at %s: not %s: %s\n", reach_when(r),
			r->have_reach && r->reach.status == MP_REACH_DONE ? "shown" : "computed",
			v->why);
		return;
	}
	fprintf(f, "\nreachability at %s (%u of %u threads stopped):\n", reach_when(r),
		r->reach.threads_stopped, r->reach.threads);
	for (i = 0; i < MP_REACH_CLASS_COUNT; i++) {
		unsigned c = order[i];

		if (c == MP_REACH_UNKNOWN && !v->totals[c][0])
			continue;
		fprintf(f, "  %-16s %10s %-6s %12s%s\n", text_name[c],
			fmt_count(nb, sizeof(nb), v->totals[c][0]),
			v->totals[c][0] == 1 ? "block" : "blocks", human_bytes(b2, sizeof(b2), v->totals[c][1]),
			c != MP_REACH_UNKNOWN ? "" :
			r->inherit.held_blocks && !(r->reach.notes & MP_REACH_N_INHERITED) ?
			"  (inherited, or allocated after the scan: the scan did not see them)" :
			"  (allocated after the scan)");
	}
	print_notes(f, &r->reach);
}

void reach_text_line(FILE *f, const struct reach_view *v)
{
	char b[HUMAN_LEN], c[HUMAN_LEN];
	unsigned i;

	for (i = 0; i < MP_REACH_CLASS_COUNT; i++) {
		unsigned cls = order[i];

		if (cls == MP_REACH_UNKNOWN && !v->totals[cls][0])
			continue;
		fprintf(f, "%s%s %s", i ? ", " : "", text_name[cls],
			human_bytes(b, sizeof(b), v->totals[cls][1]));
		if (v->totals[cls][0])
			fprintf(f, " (%s block%s)", fmt_count(c, sizeof(c), v->totals[cls][0]),
				v->totals[cls][0] == 1 ? "" : "s");
	}
}

void reach_site_text(FILE *f, const uint64_t c[MP_REACH_CLASS_COUNT][2])
{
	char n[HUMAN_LEN];
	unsigned i, k = 0;

	for (i = 0; i < MP_REACH_CLASS_COUNT; i++)
		if (c[order[i]][0])
			fprintf(f, "%s%s %s", k++ ? ", " : "", fmt_count(n, sizeof(n), c[order[i]][0]),
				text_name[order[i]]);
	if (!k)
		fputs("none", f);
}

void reach_text_sites(FILE *f, const struct reach_view *v, enum site_mode mode, size_t max)
{
	unsigned i;

	for (i = 0; i < MP_REACH_CLASS_COUNT; i++) {
		unsigned c = order[i];
		size_t n = v->n[c], shown = max && n > max ? max : n;

		if (!n)
			continue;
		if (shown < n)
			fprintf(f, "\n%s: top %zu of %zu sites (--all shows every site):\n",
				text_name[c], shown, n);
		else
			fprintf(f, "\n%s: %zu site%s:\n", text_name[c], n, n == 1 ? "" : "s");
		sites_text(f, v->sites[c], shown, mode);
	}
}

const char *reach_class_text(unsigned cls)
{
	return cls < MP_REACH_CLASS_COUNT ? text_name[cls] : "not classified";
}

unsigned reach_class_at(unsigned i)
{
	return i < MP_REACH_CLASS_COUNT ? order[i] : MP_REACH_UNKNOWN;
}

void reach_json_counts(FILE *f, const uint64_t c[MP_REACH_CLASS_COUNT][2])
{
	unsigned i;

	fputc('{', f);
	for (i = 0; i < MP_REACH_CLASS_COUNT; i++)
		fprintf(f, "%s\"%s\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", i ? "," : "",
			reach_class_name(order[i]), c[order[i]][0], c[order[i]][1]);
	fputc('}', f);
}

void reach_json(FILE *f, const struct reach_view *v, const struct replay *r)
{
	const struct mp_rec_reach *s = &r->reach;
	static const char *const notes[] = { "threads", "unreadable", "own-frames",
					     "no-main-arena", "files", "seccomp", "inherited",
					     "python", "allocator-roots", "address-space-limit",
					     "heap-roots", "memory-room" };
	unsigned i, k = 0;

	fprintf(f, "\"reach\":{\"status\":\"%s\",\"shown\":%s,\"reason\":",
		r->have_reach ? reach_status_name(s->status) : "absent", v->shown ? "true" : "false");
	json_str(f, v->why);
	if (r->have_reach) {
		fprintf(f, ",\"scan_ns\":%" PRIu64 ",\"mem_bytes\":%" PRIu64 ",\"threads\":%u,"
			"\"threads_stopped\":%u,\"threads_stack_only\":%u,\"unreadable\":%u,"
			"\"notes\":[", s->scan_ns, s->mem_bytes, s->threads, s->threads_stopped,
			s->threads_stack_only, s->unreadable);
		for (i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
			if (s->notes & (1u << i))
				fprintf(f, "%s\"%s\"", k++ ? "," : "", notes[i]);
		fputc(']', f);
	}
	fprintf(f, ",\"classes\":");
	if (v->shown)
		reach_json_counts(f, (const uint64_t (*)[2])v->totals);
	else
		fputs("null", f);
	fputc('}', f);
}

void reach_json_site(FILE *f, const struct reach_view *v, const struct site *s)
{
	uint64_t c[MP_REACH_CLASS_COUNT][2];

	if (!v->shown)
		return;
	reach_site_counts(v, s, c);
	fputs(",\"reach\":", f);
	reach_json_counts(f, (const uint64_t (*)[2])c);
}
