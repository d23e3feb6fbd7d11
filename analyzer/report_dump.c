/*
 * report_dump.c - `memprov dump`: every record in merged time order, one
 * line each, for debugging the writer and for tests.
 */
#include <inttypes.h>
#include <string.h>

#include "report.h"
#include "util.h"

static void dump_flags(unsigned flags)
{
	static const char *const names[] = { "failed", "realloc", "stream", "sampled", "main-end", "fixed",
					     "placed", "interp" };
	unsigned i;
	int first = 1;

	if (!flags)
		return;
	printf(" flags=");
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (flags & (1u << i)) {
			printf("%s%s", first ? "" : ",", names[i]);
			first = 0;
		}
	}
	if (flags >> ARRAY_SIZE(names))
		printf("%s0x%x", first ? "" : ",", flags >> ARRAY_SIZE(names) << ARRAY_SIZE(names));
}

static void dump_stack(const struct mp_rec_stack *s)
{
	const struct mp_pyframe *py = (const void *)(s->native + s->n_native);
	unsigned i;

	printf(" id=0x%" PRIx64 " native=%u python=%u", s->id, s->n_native, s->n_python);
	for (i = 0; i < s->n_native; i++)
		printf(" 0x%" PRIx64, s->native[i]);
	for (i = 0; i < s->n_python; i++)
		printf(" py:%u:%u", py[i].code_id, py[i].line);
}

static void dump_module(const struct mp_rec_module *m)
{
	unsigned i;

	printf(" base=0x%" PRIx64 " lo=0x%" PRIx64 " hi=0x%" PRIx64 " build_id=", m->base, m->lo, m->hi);
	for (i = 0; i < m->build_id_len; i++)
		printf("%02x", m->build_id[i]);
	printf(" path=");
	json_str(stdout, m->path);
}

static void dump_reach(const struct mp_rec_reach *r)
{
	unsigned c;

	printf("reach status=%s notes=0x%x scan_ts=%" PRIu64 " scan_ns=%" PRIu64
	       " mem=%" PRIu64 " threads=%u stopped=%u stack_only=%u unreadable=%u"
	       " root_bytes=%" PRIu64 " block_bytes=%" PRIu64, reach_status_name(r->status),
	       r->notes, r->scan_ts, r->scan_ns, r->mem_bytes, r->threads, r->threads_stopped,
	       r->threads_stack_only, r->unreadable, r->root_bytes, r->block_bytes);
	for (c = 1; c < MP_REACH_CLASS_COUNT; c++)
		printf(" %s=%" PRIu64 "/%" PRIu64, reach_class_name(c), r->classes[c].blocks,
		       r->classes[c].bytes);
}

static void dump_record(const struct mp_rec_head *h)
{
	switch (h->type) {
	case MP_REC_ALLOC: {
		const struct mp_rec_alloc *a = (const void *)h;

		printf("alloc %s %s addr=0x%" PRIx64 " size=%" PRIu64 " stack=0x%" PRIx64,
		       func_name(h->func), kind_name(h->kind), a->addr, a->size, a->stack);
		break;
	}
	case MP_REC_FREE: {
		const struct mp_rec_free *f = (const void *)h;

		printf("free %s %s addr=0x%" PRIx64, func_name(h->func), kind_name(h->kind), f->addr);
		if (h->func == MP_FN_munmap)
			printf(" len=%" PRIu64, ((const struct mp_rec_unmap *)f)->len);
		break;
	}
	case MP_REC_STACK: printf("stack"); dump_stack((const void *)h); break;
	case MP_REC_MODULE: printf("module"); dump_module((const void *)h); break;
	case MP_REC_UNLOAD:
		printf("unload base=0x%" PRIx64, ((const struct mp_rec_unload *)h)->base);
		break;
	case MP_REC_THREAD: {
		const struct mp_rec_thread *t = (const void *)h;
		char name[17];

		memcpy(name, t->name, 16);
		name[16] = 0;
		printf("thread tid=%u serial=%u parent=%u name=", t->tid, t->serial, t->parent_serial);
		json_str(stdout, name);
		break;
	}
	case MP_REC_MARK: {
		const struct mp_rec_mark *m = (const void *)h;

		printf("mark serial=%u label=", m->serial);
		json_str(stdout, m->label_len ? m->label : "");
		break;
	}
	case MP_REC_PYCODE: {
		const struct mp_rec_pycode *p = (const void *)h;

		printf("pycode id=%u first_line=%u file=", p->code_id, p->first_line);
		json_str(stdout, p->names);
		printf(" name=");
		json_str(stdout, p->names + p->file_len);
		break;
	}
	case MP_REC_RSS: {
		const struct mp_rec_rss *s = (const void *)h;

		printf("rss rss=%" PRIu64 " vm=%" PRIu64, s->rss_bytes, s->vm_bytes);
		if (h->size >= MP_REC_RSS_ANON_SIZE)
			printf(" anon=%" PRIu64, s->anon_bytes);
		break;
	}
	case MP_REC_EXIT: {
		const struct mp_rec_exit *e = (const void *)h;

		printf("exit status=%d how=%s", e->status,
		       e->how == MP_EXIT_HOW_RETURN ? "return" :
		       e->how == MP_EXIT_HOW__EXIT ? "_exit" : "exit");
		break;
	}
	case MP_REC_GPU_ALLOC: {
		const struct mp_rec_gpu_alloc *a = (const void *)h;

		printf("gpu_alloc %s %s addr=0x%" PRIx64 " size=%" PRIu64 " stack=0x%" PRIx64
		       " stream=0x%" PRIx64 " device=%d result=%d extra=%" PRIu64,
		       func_name(h->func), kind_name(h->kind), a->addr, a->size, a->stack, a->stream,
		       a->device, a->result, a->extra);
		break;
	}
	case MP_REC_GPU_FREE: {
		const struct mp_rec_gpu_free *f = (const void *)h;

		printf("gpu_free %s %s addr=0x%" PRIx64 " stream=0x%" PRIx64 " device=%d result=%d",
		       func_name(h->func), kind_name(h->kind), f->addr, f->stream, f->device, f->result);
		break;
	}
	case MP_REC_CTX_RESET:
		printf("ctx_reset %s device=%d", func_name(h->func),
		       ((const struct mp_rec_ctx_reset *)h)->device);
		break;
	case MP_REC_FORK:
		printf("fork child=%d", ((const struct mp_rec_fork *)h)->child_pid);
		break;
	case MP_REC_REACH: dump_reach((const void *)h); break;
	case MP_REC_PYTHREAD:
		printf("pythread tid=%u stack=0x%" PRIx64, ((const struct mp_rec_pythread *)h)->tid,
		       ((const struct mp_rec_pythread *)h)->stack);
		break;
	case MP_REC_SIGSTACK:
		printf("sigstack addr=0x%" PRIx64 " size=%" PRIu64, ((const struct mp_rec_sigstack *)h)->addr,
		       ((const struct mp_rec_sigstack *)h)->size);
		break;
	case MP_REC_REACH_BLOCKS: {
		const struct mp_rec_reach_blocks *b = (const void *)h;
		uint32_t i;

		printf("reach_blocks %s %s scan_ts=%" PRIu64 " count=%u", kind_name(h->kind),
		       reach_class_name(b->cls), b->scan_ts, b->count);
		for (i = 0; i < b->count; i++)
			printf(" 0x%" PRIx64, b->addr[i]);
		break;
	}
	}
	dump_flags(h->flags);
	putchar('\n');
}

static int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = { REPORT_OPT_END };
	struct report_args a = { .cmd = &command_dump, .opts = opts, .n_traces = 1 };
	const struct mp_rec_head *h;
	struct trace t;
	int ret;

	if (report_parse(&a, argc, argv, &ret) < 0)
		return ret;
	if (trace_open(&t, a.traces[0], 0) < 0)
		return EXIT_FAIL;
	printf("# trace %s pid %d ppid %d state %s", t.path, t.hdr.pid, t.hdr.ppid,
	       state_name(t.hdr.state));
	if (t.hdr.state == MP_STATE_EXITED)
		printf(" exit_status %d", t.hdr.exit_status);
	printf(" chunk_size %u chunks %" PRIu64 " threads %zu\n", t.hdr.chunk_size,
	       t.hdr.next_chunk, t.n_threads);
	while ((h = trace_next(&t))) {
		printf("%" PRIu64 " T%u @%" PRIu64 " ", h->ts, trace_last_serial(&t), trace_last_offset(&t));
		dump_record(h);
	}
	if (t.cut)
		printf("# trace cut at offset %" PRIu64 "\n", t.cut_at);
	if (t.damaged)
		printf("# trace damaged\n");
	printf("# %" PRIu64 " records\n", t.records);
	ret = report_status(&t);
	trace_close(&t);
	return ret;
}

const struct command command_dump = {
	.name = "dump",
	.run = cmd_dump,
	.usage = "memprov dump TRACE",
	.help = "Every record of the trace in time order, one line each.\n",
};
