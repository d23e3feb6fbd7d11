/*
 * tracegen.c - write a memprov trace from a small text description, for
 * the analyzer's tests (tests/t1*.sh). Reads the description on stdin:
 *
 *   # comment
 *   header pid=42 ppid=1 state=exited exit=0 chunk=4096 start=1000 end=9000
 *          exe=/bin/prog cmd="prog arg" next_chunk=N version=1 magic=XXXXXXXX
 *          page=4096 stop=1 stop_msg="why" sample=BYTES flags=N
 *          (state: running, exited, exec, stopped, killed with signal=N)
 *   thread SERIAL [tid=N]        records below go to this thread's chunks
 *   newchunk [seq=N] [size=N]    start a new chunk for the current thread
 *                                (size: v2 only, bytes, whole blocks)
 *   emptychunk                   a reserved chunk never written (magic 0)
 *   badchunk                     a chunk with a bad magic
 *   alloc ts= func=malloc kind=heap addr= size= stack= flags=failed,realloc
 *   free ts= func=free kind=heap addr= flags=realloc
 *   munmap ts= addr= len=
 *   stack ts= id= native=0x1,0x2 python=CODE:LINE,CODE:LINE
 *   module ts= base= lo= hi= buildid=HEX path=PATH
 *   unload ts= base=
 *   threadrec ts= tid= serial= parent= name=
 *   mark ts= serial= label= flags=main-end
 *   pycode ts= id= first= file= name=
 *   rss ts= rss= vm= [anon=]
 *   exit ts= status= how=
 *   gpu_alloc ts= func= kind= addr= size= stack= stream= device= result= extra= flags=
 *   gpu_free ts= func= kind= addr= stream= device= result= flags=
 *   ctx_reset ts= func= device=
 *   fork ts= child= serial=
 *   reach ts= status= notes= scan_ts= scan_ns= mem= threads= stopped= stack_only=
 *         unreadable= classes=CLS:BLOCKS:BYTES,...  (CLS: 1..4)
 *   reach_blocks ts= kind= cls= scan_ts= addrs=0x..,0x.. [count=N]
 *   rawrec ts= type= size= len= data=HEX   any head (bad sizes, unknown types)
 *          (v2: data=HEX alone, written as is: any bytes)
 *
 * Usage: tracegen [-o OUT] [-t BYTES] < description
 *   -t BYTES  truncate the file to BYTES after writing (a cut trace)
 * A ts left out is the previous one plus 10. Each record's offset in the
 * file is printed on stderr with -v ("offset N: LINE").
 *
 * Format version: 1 (what the analyzer tests were written against) unless
 * the header line says version=N or TRACEGEN_VERSION=N is in the
 * environment; from 2 on, records are written as memprov writes them
 * (include/memprov_codec.h: compact ALLOC, FREE and STACK, the others
 * framed), each chunk one block (chunk=, 4096) unless newchunk size= says
 * more. A thread's records go to a new chunk when one does not fit, and
 * (v2) when its ts is below the chunk's last one.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memprov_codec.h"
#include "memprov_trace.h"

#define MAX_CHUNKS 4096
#define MAX_TOK 64

struct chunk {
	int used_slot;
	uint32_t magic;
	uint32_t size;               /* bytes in the file */
	struct mp_chunk_head head;
	unsigned char *data;
	uint64_t ts, addr;           /* v2: the encoder's base */
};

static struct mp_file_header hdr;
static struct chunk chunks[MAX_CHUNKS];
static int n_chunks;
static int cur_chunk = -1;           /* chunk of the current thread */
static uint32_t cur_serial, cur_tid;
static uint32_t next_seq[1024];
static int thread_chunk[1024];
static uint64_t last_ts;
static int verbose, lineno;
static int next_chunk_set;
/* v2: the record being described, encoded once its line is read */
static union {
	struct mp_rec_head h;
	unsigned char b[MP_MAX_RECORD + 64];
} pending;
static int pending_line;
static uint8_t enc_buf[MP_ENC_MAX + 64];

static size_t encode(const struct chunk *c);

static void fail(const char *msg, const char *arg)
{
	fprintf(stderr, "tracegen: line %d: %s%s%s\n", lineno, msg, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

struct kv {
	char *key, *val;
};

static int tokenize(char *line, struct kv *kv)
{
	int n = 0;
	char *p = line;

	while (*p) {
		char *k, *v, *o;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			break;
		if (n == MAX_TOK)
			fail("too many fields", NULL);
		k = p;
		while (*p && !isspace((unsigned char)*p) && *p != '=')
			p++;
		v = NULL;
		if (*p == '=') {
			*p++ = 0;
			v = o = p;
			if (*p == '"') {
				p++;
				while (*p && *p != '"') {
					if (*p == '\\' && p[1])
						p++;
					*o++ = *p++;
				}
				if (*p == '"')
					p++;
			} else {
				while (*p && !isspace((unsigned char)*p))
					*o++ = *p++;
			}
			if (*p)
				p++;
			*o = 0;
		} else if (*p) {
			*p++ = 0;
		}
		kv[n].key = k;
		kv[n].val = v;
		n++;
	}
	return n;
}

static const char *get(struct kv *kv, int n, const char *key)
{
	int i;

	for (i = 1; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return kv[i].val ? kv[i].val : "";
	return NULL;
}

static uint64_t num(struct kv *kv, int n, const char *key, uint64_t def)
{
	const char *v = get(kv, n, key);
	char *end;
	uint64_t x;

	if (!v)
		return def;
	errno = 0;
	x = v[0] == '-' ? (uint64_t)strtoll(v, &end, 0) : strtoull(v, &end, 0);
	if (errno || *end || end == v)
		fail("bad number", v);
	return x;
}

static unsigned func_id(const char *name)
{
#define F(id, nm) if (!strcmp(name, #nm)) return id;
	MP_FUNCS(F)
#undef F
	if (isdigit((unsigned char)name[0]))
		return (unsigned)strtoul(name, NULL, 0);
	fail("unknown function", name);
	return 0;
}

static unsigned kind_id(const char *name)
{
	static const char *const names[] = { "none", "heap", "mmap", "pinned", "device", "managed", "registered" };
	unsigned i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return i;
	fail("unknown kind", name);
	return 0;
}

static unsigned flag_bits(const char *s)
{
	unsigned f = 0;
	char buf[256], *tok, *save;

	if (!s)
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "failed")) f |= MP_RF_FAILED;
		else if (!strcmp(tok, "realloc")) f |= MP_RF_REALLOC;
		else if (!strcmp(tok, "stream")) f |= MP_RF_STREAM;
		else if (!strcmp(tok, "sampled")) f |= MP_RF_SAMPLED;
		else if (!strcmp(tok, "main-end")) f |= MP_RF_MAIN_END;
		else f |= (unsigned)strtoul(tok, NULL, 0);
	}
	return f;
}

static int new_chunk(uint32_t magic, uint32_t size)
{
	struct chunk *c;

	if (n_chunks == MAX_CHUNKS)
		fail("too many chunks", NULL);
	if (!size || size % hdr.chunk_size)
		fail("chunk size not a whole number of blocks", NULL);
	c = &chunks[n_chunks];
	c->used_slot = 1;
	c->magic = magic;
	c->size = size;
	c->data = calloc(1, size);
	if (!c->data)
		fail("out of memory", NULL);
	return n_chunks++;
}

static void thread_new_chunk(int seq, uint32_t size)
{
	struct chunk *c;

	cur_chunk = new_chunk(MP_CHUNK_MAGIC, size ? size : hdr.chunk_size);
	c = &chunks[cur_chunk];
	c->head.magic = MP_CHUNK_MAGIC;
	c->head.tid = cur_tid;
	c->head.thread_serial = cur_serial;
	c->head.seq = seq >= 0 ? (uint32_t)seq : next_seq[cur_serial]++;
	c->head.size = hdr.version >= 2 ? c->size : 0;
	c->ts = 0;
	c->addr = 0;
	thread_chunk[cur_serial] = cur_chunk;
}

/* Room for len bytes in the current thread's chunk: a new chunk if full. */
static unsigned char *reserve(size_t len, uint64_t ts)
{
	struct chunk *c;
	unsigned char *p;

	if (!cur_serial)
		fail("no thread yet: start with 'thread N'", NULL);
	if (cur_chunk < 0)
		thread_new_chunk(-1, 0);
	c = &chunks[cur_chunk];
	if (sizeof(struct mp_chunk_head) + c->head.used + len > c->size ||
	    (hdr.version >= 2 && c->head.used && ts < c->ts)) {
		thread_new_chunk(-1, 0);
		c = &chunks[cur_chunk];
	}
	if (!c->head.used) {
		c->head.first_ts = ts;
		c->ts = ts;
	}
	p = c->data + sizeof(struct mp_chunk_head) + c->head.used;
	if (verbose) {
		uint64_t off = hdr.header_size;
		int i;

		for (i = 0; i < cur_chunk; i++)
			off += chunks[i].size;
		fprintf(stderr, "offset %llu: line %d\n",
			(unsigned long long)(off + sizeof(struct mp_chunk_head) + c->head.used), lineno);
	}
	c->head.used += (uint32_t)len;
	return p;
}

/* v2: the pending record, encoded into its thread's chunk. */
static void flush_pending(void)
{
	struct mp_rec_head *h = &pending.h;
	struct chunk *c;
	size_t len;
	int save = lineno;

	if (!pending_line)
		return;
	lineno = pending_line;
	pending_line = 0;
	if (!cur_serial)
		fail("no thread yet: start with 'thread N'", NULL);
	if (cur_chunk < 0)
		thread_new_chunk(-1, 0);
	c = &chunks[cur_chunk];
	/* a new chunk for a ts below the chunk's last (deltas never go back) */
	if (c->head.used && h->ts < c->ts)
		thread_new_chunk(-1, 0);
	len = encode(&chunks[cur_chunk]);
	if (sizeof(struct mp_chunk_head) + chunks[cur_chunk].head.used + len >
	    chunks[cur_chunk].size) {
		thread_new_chunk(-1, 0);
		len = encode(&chunks[cur_chunk]);
	}
	memcpy(reserve(len, h->ts), enc_buf, len);
	c = &chunks[cur_chunk];
	c->ts = h->ts;
	if (h->type == MP_REC_ALLOC || h->type == MP_REC_FREE)
		c->addr = ((const struct mp_rec_alloc *)h)->addr;
	lineno = save;
}

/* v2: the pending record encoded against chunk c's base, in enc_buf. */
static size_t encode(const struct chunk *c)
{
	struct mp_rec_head *h = &pending.h;
	uint64_t base_ts = c->head.used ? c->ts : h->ts;
	uint8_t *p = enc_buf;

	if (h->type == MP_REC_ALLOC || h->type == MP_REC_FREE) {
		const struct mp_rec_alloc *a = (const void *)h;
		uint64_t prev = c->head.used ? c->addr : 0;

		p = mp_enc_head(p, h->type, h->flags, h->func, h->kind, h->ts - base_ts);
		p = mp_put_svarint(p, (int64_t)(a->addr - prev));
		if (h->type == MP_REC_ALLOC) {
			p = mp_put_uvarint(p, a->size);
			p = mp_put_uvarint(p, a->stack);
		} else if (h->func == MP_FN_munmap) {
			p = mp_put_uvarint(p, ((const struct mp_rec_unmap *)h)->len);
		}
	} else if (h->type == MP_REC_STACK) {
		const struct mp_rec_stack *st = (const void *)h;
		unsigned nn = st->n_native > MP_MAX_FRAMES ? MP_MAX_FRAMES : st->n_native;
		unsigned np = st->n_python > MP_MAX_PYFRAMES ? MP_MAX_PYFRAMES : st->n_python;

		p = mp_enc_head(p, h->type, h->flags, h->func, h->kind, h->ts - base_ts);
		p = mp_enc_stack_body(p, st->id, st->native, nn,
				      (const struct mp_pyframe *)(st->native + nn), np);
	} else {
		p = mp_enc_framed(p, h, h->ts - base_ts);
	}
	return (size_t)(p - enc_buf);
}

static void *record(unsigned type, size_t len, struct kv *kv, int n)
{
	uint64_t ts = num(kv, n, "ts", last_ts + 10);
	size_t alen = MP_REC_ALIGN(len);
	struct mp_rec_head *h;

	last_ts = ts;
	if (hdr.version >= 2) {
		if (alen > MP_MAX_RECORD)
			fail("record too long", NULL);
		memset(&pending, 0, alen);
		h = &pending.h;
		pending_line = lineno;
	} else {
		h = (void *)reserve(alen, ts);
	}
	h->type = (uint8_t)type;
	h->size = (uint16_t)alen;
	h->ts = ts;
	h->flags = (uint8_t)flag_bits(get(kv, n, "flags"));
	if (get(kv, n, "func"))
		h->func = (uint16_t)func_id(get(kv, n, "func"));
	if (get(kv, n, "kind"))
		h->kind = (uint8_t)kind_id(get(kv, n, "kind"));
	return h;
}

static size_t hex_bytes(const char *s, unsigned char *out, size_t max)
{
	size_t n = 0;

	while (s && s[0] && s[1] && n < max) {
		unsigned v;

		if (sscanf(s, "%2x", &v) != 1)
			fail("bad hex", s);
		out[n++] = (unsigned char)v;
		s += 2;
	}
	return n;
}

static void rec_stack(struct kv *kv, int n)
{
	uint64_t nat[MP_MAX_FRAMES];
	struct mp_pyframe py[MP_MAX_PYFRAMES];
	char buf[8192], *tok, *save;
	const char *s;
	size_t nn = 0, np = 0;
	struct mp_rec_stack *st;

	s = get(kv, n, "native");
	if (s && *s) {
		snprintf(buf, sizeof(buf), "%s", s);
		for (tok = strtok_r(buf, ",", &save); tok && nn < MP_MAX_FRAMES; tok = strtok_r(NULL, ",", &save))
			nat[nn++] = strtoull(tok, NULL, 0);
	}
	s = get(kv, n, "python");
	if (s && *s) {
		snprintf(buf, sizeof(buf), "%s", s);
		for (tok = strtok_r(buf, ",", &save); tok && np < MP_MAX_PYFRAMES; tok = strtok_r(NULL, ",", &save)) {
			py[np].code_id = (uint32_t)strtoul(tok, &tok, 0);
			py[np].line = *tok == ':' ? (uint32_t)strtoul(tok + 1, NULL, 0) : 0;
			np++;
		}
	}
	st = record(MP_REC_STACK, sizeof(*st) + 8 * nn + 8 * np, kv, n);
	st->id = num(kv, n, "id", 1);
	st->n_native = (uint16_t)num(kv, n, "n_native", nn);
	st->n_python = (uint16_t)num(kv, n, "n_python", np);
	memcpy(st->native, nat, 8 * nn);
	memcpy(st->native + nn, py, 8 * np);
}

static void rec_names(struct kv *kv, int n, unsigned type)
{
	const char *a, *b;

	if (type == MP_REC_MODULE) {
		struct mp_rec_module *m;

		a = get(kv, n, "path");
		a = a ? a : "";
		m = record(type, sizeof(*m) + strlen(a) + 1, kv, n);
		m->base = num(kv, n, "base", 0);
		m->lo = num(kv, n, "lo", m->base);
		m->hi = num(kv, n, "hi", m->lo + 0x100000);
		m->build_id_len = (uint8_t)hex_bytes(get(kv, n, "buildid"), m->build_id, 32);
		m->path_len = (uint16_t)num(kv, n, "path_len", strlen(a) + 1);
		memcpy(m->path, a, strlen(a) + 1);
	} else if (type == MP_REC_MARK) {
		struct mp_rec_mark *m;

		a = get(kv, n, "label");
		a = a ? a : "";
		m = record(type, sizeof(*m) + strlen(a) + 1, kv, n);
		m->label_len = (uint32_t)num(kv, n, "label_len", strlen(a) + 1);
		m->serial = (uint32_t)num(kv, n, "serial", 1);
		memcpy(m->label, a, strlen(a) + 1);
	} else {
		struct mp_rec_pycode *p;

		a = get(kv, n, "file");
		b = get(kv, n, "name");
		a = a ? a : "";
		b = b ? b : "";
		p = record(type, sizeof(*p) + strlen(a) + strlen(b) + 2, kv, n);
		p->code_id = (uint32_t)num(kv, n, "id", 1);
		p->first_line = (uint32_t)num(kv, n, "first", 1);
		p->file_len = (uint16_t)(strlen(a) + 1);
		p->name_len = (uint16_t)(strlen(b) + 1);
		memcpy(p->names, a, strlen(a) + 1);
		memcpy(p->names + strlen(a) + 1, b, strlen(b) + 1);
	}
}

static void set_header(struct kv *kv, int n)
{
	const char *s;

	if ((s = get(kv, n, "magic")))
		memcpy(hdr.magic, s, strlen(s) < MP_MAGIC_LEN ? strlen(s) : MP_MAGIC_LEN);
	hdr.version = (uint32_t)num(kv, n, "version", hdr.version);
	hdr.chunk_size = (uint32_t)num(kv, n, "chunk", hdr.chunk_size);
	hdr.pid = (int32_t)num(kv, n, "pid", (uint64_t)hdr.pid);
	hdr.ppid = (int32_t)num(kv, n, "ppid", (uint64_t)hdr.ppid);
	hdr.exit_status = (int32_t)num(kv, n, "exit", (uint64_t)(int64_t)hdr.exit_status);
	hdr.start_mono_ns = num(kv, n, "start", hdr.start_mono_ns);
	hdr.end_mono_ns = num(kv, n, "end", hdr.end_mono_ns);
	hdr.page_size = (uint32_t)num(kv, n, "page", hdr.page_size);
	hdr.stop_reason = (uint32_t)num(kv, n, "stop", hdr.stop_reason);
	hdr.sample_bytes = (uint32_t)num(kv, n, "sample", hdr.sample_bytes);
	hdr.flags = (uint32_t)num(kv, n, "flags", hdr.flags);
	hdr.fork_serial = (uint32_t)num(kv, n, "fork_serial", hdr.fork_serial);
	if ((s = get(kv, n, "host")))
		snprintf(hdr.host, sizeof(hdr.host), "%s", s);
	if (get(kv, n, "next_chunk")) {
		hdr.next_chunk = num(kv, n, "next_chunk", 0);
		next_chunk_set = 1;
	}
	if ((s = get(kv, n, "state"))) {
		if (!strcmp(s, "running")) hdr.state = MP_STATE_RUNNING;
		else if (!strcmp(s, "exited")) hdr.state = MP_STATE_EXITED;
		else if (!strcmp(s, "exec")) hdr.state = MP_STATE_EXEC;
		else if (!strcmp(s, "stopped")) hdr.state = MP_STATE_STOPPED;
		else if (!strcmp(s, "killed")) hdr.state = MP_STATE_KILLED;
		else fail("unknown state", s);
	}
	hdr.term_signal = (int32_t)num(kv, n, "signal", hdr.term_signal);
	if ((s = get(kv, n, "exe")))
		snprintf(hdr.exe, sizeof(hdr.exe), "%s", s);
	if ((s = get(kv, n, "cmd")))
		snprintf(hdr.cmdline, sizeof(hdr.cmdline), "%s", s);
	if ((s = get(kv, n, "stop_msg")))
		snprintf(hdr.stop_message, sizeof(hdr.stop_message), "%s", s);
}

static void line_cmd(struct kv *kv, int n)
{
	const char *c = kv[0].key;

	flush_pending();
	if (!strcmp(c, "header")) {
		if (n_chunks)
			fail("header must come before any record", NULL);
		set_header(kv, n);
	} else if (!strcmp(c, "thread")) {
		if (n < 2 || (cur_serial = (uint32_t)strtoul(kv[1].key, NULL, 0)) == 0 || cur_serial >= 1024)
			fail("thread wants a serial 1..1023", NULL);
		cur_tid = (uint32_t)num(kv, n, "tid", 1000 + cur_serial);
		cur_chunk = next_seq[cur_serial] ? thread_chunk[cur_serial] : -1;
	} else if (!strcmp(c, "newchunk")) {
		thread_new_chunk(get(kv, n, "seq") ? (int)num(kv, n, "seq", 0) : -1,
				 (uint32_t)num(kv, n, "size", 0));
	} else if (!strcmp(c, "emptychunk")) {
		new_chunk(0, hdr.chunk_size);
	} else if (!strcmp(c, "badchunk")) {
		chunks[new_chunk(0x12345678, hdr.chunk_size)].head.magic = 0x12345678;
	} else if (!strcmp(c, "alloc")) {
		struct mp_rec_alloc *a = record(MP_REC_ALLOC, sizeof(*a), kv, n);

		if (!get(kv, n, "func")) a->h.func = MP_FN_malloc;
		if (!get(kv, n, "kind")) a->h.kind = MP_KIND_HEAP;
		a->addr = num(kv, n, "addr", 0);
		a->size = num(kv, n, "size", 0);
		a->stack = num(kv, n, "stack", 0);
	} else if (!strcmp(c, "free")) {
		struct mp_rec_free *f = record(MP_REC_FREE, sizeof(*f), kv, n);

		if (!get(kv, n, "func")) f->h.func = MP_FN_free;
		if (!get(kv, n, "kind")) f->h.kind = MP_KIND_HEAP;
		f->addr = num(kv, n, "addr", 0);
	} else if (!strcmp(c, "munmap")) {
		struct mp_rec_unmap *u = record(MP_REC_FREE, sizeof(*u), kv, n);

		u->h.func = MP_FN_munmap;
		u->h.kind = MP_KIND_MMAP;
		u->addr = num(kv, n, "addr", 0);
		u->len = num(kv, n, "len", 0);
	} else if (!strcmp(c, "stack")) {
		rec_stack(kv, n);
	} else if (!strcmp(c, "module")) {
		rec_names(kv, n, MP_REC_MODULE);
	} else if (!strcmp(c, "mark")) {
		rec_names(kv, n, MP_REC_MARK);
	} else if (!strcmp(c, "pycode")) {
		rec_names(kv, n, MP_REC_PYCODE);
	} else if (!strcmp(c, "unload")) {
		struct mp_rec_unload *u = record(MP_REC_UNLOAD, sizeof(*u), kv, n);

		u->base = num(kv, n, "base", 0);
	} else if (!strcmp(c, "threadrec")) {
		struct mp_rec_thread *t = record(MP_REC_THREAD, sizeof(*t), kv, n);
		const char *nm = get(kv, n, "name");

		t->tid = (uint32_t)num(kv, n, "tid", cur_tid);
		t->serial = (uint32_t)num(kv, n, "serial", cur_serial);
		t->parent_serial = (uint32_t)num(kv, n, "parent", 0);
		if (nm)
			memcpy(t->name, nm, strlen(nm) < sizeof(t->name) ? strlen(nm) : sizeof(t->name));
	} else if (!strcmp(c, "rss")) {
		/* anon= makes the record of writers that sample anonymous memory */
		int anon = get(kv, n, "anon") != NULL;
		struct mp_rec_rss *r = record(MP_REC_RSS, anon ? sizeof(*r) : offsetof(struct mp_rec_rss, anon_bytes),
					      kv, n);

		r->rss_bytes = num(kv, n, "rss", 0);
		r->vm_bytes = num(kv, n, "vm", 0);
		if (anon)
			r->anon_bytes = num(kv, n, "anon", 0);
	} else if (!strcmp(c, "exit")) {
		struct mp_rec_exit *e = record(MP_REC_EXIT, sizeof(*e), kv, n);

		e->status = (int32_t)num(kv, n, "status", 0);
		e->how = (uint32_t)num(kv, n, "how", 0);
	} else if (!strcmp(c, "gpu_alloc")) {
		struct mp_rec_gpu_alloc *a = record(MP_REC_GPU_ALLOC, sizeof(*a), kv, n);

		if (!get(kv, n, "func")) a->h.func = MP_FN_cudaMalloc;
		if (!get(kv, n, "kind")) a->h.kind = MP_KIND_DEVICE;
		a->addr = num(kv, n, "addr", 0);
		a->size = num(kv, n, "size", 0);
		a->stack = num(kv, n, "stack", 0);
		a->stream = num(kv, n, "stream", 0);
		a->device = (int32_t)num(kv, n, "device", 0);
		a->result = (int32_t)num(kv, n, "result", 0);
		a->extra = num(kv, n, "extra", 0);
	} else if (!strcmp(c, "gpu_free")) {
		struct mp_rec_gpu_free *f = record(MP_REC_GPU_FREE, sizeof(*f), kv, n);

		if (!get(kv, n, "func")) f->h.func = MP_FN_cudaFree;
		if (!get(kv, n, "kind")) f->h.kind = MP_KIND_DEVICE;
		f->addr = num(kv, n, "addr", 0);
		f->stream = num(kv, n, "stream", 0);
		f->device = (int32_t)num(kv, n, "device", 0);
		f->result = (int32_t)num(kv, n, "result", 0);
	} else if (!strcmp(c, "ctx_reset")) {
		struct mp_rec_ctx_reset *r = record(MP_REC_CTX_RESET, sizeof(*r), kv, n);

		if (!get(kv, n, "func")) r->h.func = MP_FN_cudaDeviceReset;
		r->device = (int32_t)num(kv, n, "device", 0);
	} else if (!strcmp(c, "fork")) {
		struct mp_rec_fork *f = record(MP_REC_FORK, sizeof(*f), kv, n);

		f->child_pid = (int32_t)num(kv, n, "child", 0);
		f->serial = (uint32_t)num(kv, n, "serial", 0);
	} else if (!strcmp(c, "reach")) {
		struct mp_rec_reach *r = record(MP_REC_REACH, sizeof(*r), kv, n);
		const char *cl = get(kv, n, "classes");

		r->status = (uint32_t)num(kv, n, "status", 0);
		r->notes = (uint32_t)num(kv, n, "notes", 0);
		r->scan_ts = num(kv, n, "scan_ts", 0);
		r->scan_ns = num(kv, n, "scan_ns", 0);
		r->mem_bytes = num(kv, n, "mem", 0);
		r->threads = (uint32_t)num(kv, n, "threads", 1);
		r->threads_stopped = (uint32_t)num(kv, n, "stopped", 1);
		r->threads_stack_only = (uint32_t)num(kv, n, "stack_only", 0);
		r->unreadable = (uint32_t)num(kv, n, "unreadable", 0);
		while (cl && *cl) {
			unsigned long k = strtoul(cl, (char **)&cl, 0);

			if (k >= MP_REACH_CLASS_COUNT || *cl++ != ':')
				fail("bad classes", get(kv, n, "classes"));
			r->classes[k].blocks = strtoull(cl, (char **)&cl, 0);
			if (*cl++ != ':')
				fail("bad classes", get(kv, n, "classes"));
			r->classes[k].bytes = strtoull(cl, (char **)&cl, 0);
			if (*cl == ',')
				cl++;
		}
	} else if (!strcmp(c, "reach_blocks")) {
		uint64_t addr[MP_REACH_BLOCKS_MAX];
		const char *a = get(kv, n, "addrs");
		size_t k = 0;
		struct mp_rec_reach_blocks *r;

		while (a && *a && k < MP_REACH_BLOCKS_MAX) {
			addr[k++] = strtoull(a, (char **)&a, 0);
			if (*a == ',')
				a++;
		}
		r = record(MP_REC_REACH_BLOCKS, sizeof(*r) + 8 * k, kv, n);
		r->scan_ts = num(kv, n, "scan_ts", 0);
		r->count = (uint32_t)num(kv, n, "count", k);
		r->cls = (uint8_t)num(kv, n, "cls", MP_REACH_DEFINITE);
		memcpy(r->addr, addr, 8 * k);
	} else if (!strcmp(c, "rawrec")) {
		unsigned char data[MP_MAX_RECORD];
		size_t dl = hex_bytes(get(kv, n, "data"), data, sizeof(data));
		uint64_t size = num(kv, n, "size", 16 + dl);
		size_t len = (size_t)num(kv, n, "len", MP_REC_ALIGN(size < 16 ? 16 : size));
		uint64_t ts = num(kv, n, "ts", last_ts + 10);
		struct mp_rec_head *h;

		last_ts = ts;
		if (hdr.version >= 2) {
			/* the bytes as they are: the chunk's base stays */
			memcpy(reserve(dl, cur_chunk >= 0 ? chunks[cur_chunk].ts : ts), data, dl);
			return;
		}
		h = (void *)reserve(len, ts);
		h->type = (uint8_t)num(kv, n, "type", 0);
		h->size = (uint16_t)size;
		h->ts = ts;
		memcpy(h + 1, data, dl < len - 16 ? dl : len - 16);
	} else {
		fail("unknown directive", c);
	}
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	long truncate_to = -1;
	char line[16384];
	struct kv kv[MAX_TOK];
	FILE *f;
	int c, i;

	while ((c = getopt(argc, argv, "o:t:v")) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': truncate_to = atol(optarg); break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: tracegen [-v] [-o OUT] [-t BYTES] < description\n");
			return 2;
		}
	}
	memcpy(hdr.magic, MP_MAGIC, MP_MAGIC_LEN);
	hdr.version = getenv("TRACEGEN_VERSION") ? (uint32_t)atoi(getenv("TRACEGEN_VERSION")) : 1;
	hdr.header_size = MP_HEADER_SIZE;
	hdr.chunk_size = 4096;
	hdr.pid = 4242;
	hdr.ppid = 1;
	hdr.page_size = 4096;
	hdr.start_mono_ns = 1000;
	hdr.exit_status = 0;
	snprintf(hdr.exe, sizeof(hdr.exe), "/usr/bin/testprog");
	snprintf(hdr.cmdline, sizeof(hdr.cmdline), "testprog");
	while (fgets(line, sizeof(line), stdin)) {
		int n;

		lineno++;
		line[strcspn(line, "\n")] = 0;
		n = tokenize(line, kv);
		if (n)
			line_cmd(kv, n);
	}
	flush_pending();
	if (!next_chunk_set)
		for (i = 0; i < n_chunks; i++)
			hdr.next_chunk += hdr.version >= 2 ? chunks[i].size / hdr.chunk_size : 1;
	f = out ? fopen(out, "w") : stdout;
	if (!f) {
		perror(out);
		return 1;
	}
	fwrite(&hdr, sizeof(hdr), 1, f);
	for (i = 0; i < n_chunks; i++) {
		if (chunks[i].magic == MP_CHUNK_MAGIC)
			memcpy(chunks[i].data, &chunks[i].head, sizeof(chunks[i].head));
		else if (chunks[i].magic)
			memcpy(chunks[i].data, &chunks[i].magic, 4);
		fwrite(chunks[i].data, chunks[i].size, 1, f);
	}
	fflush(f);
	if (truncate_to >= 0 && out && truncate(out, truncate_to) < 0) {
		perror(out);
		return 1;
	}
	if (out)
		fclose(f);
	return 0;
}
