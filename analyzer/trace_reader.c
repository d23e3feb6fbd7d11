/*
 * trace_reader.c - chunk index, per-thread record streams, k-way merge by
 * timestamp, and the checks that keep a damaged trace readable. Reads
 * format versions 1 and 2: the chunk layouts differ (fixed-size chunks,
 * or chunks of whole blocks found by walking the file), the records are
 * decoded by memprov_codec.h, and everything after that is one path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_reader.h"
#include "util.h"

static int read_full(int fd, void *buf, size_t len, uint64_t off, size_t *got)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	*got = done;
	return 0;
}

/* File offset of a chunk's first record. */
static uint64_t data_offset(const struct trace_chunk *c)
{
	return c->off + sizeof(struct mp_chunk_head);
}

static void note_cut(struct trace *t, uint64_t at)
{
	if (t->cut && t->cut_at <= at)
		return;
	t->cut = 1;
	t->cut_at = at;
}

static struct trace_thread *thread_get(struct trace *t, uint32_t serial)
{
	size_t i;

	for (i = 0; i < t->n_threads; i++)
		if (t->threads[i].serial == serial)
			return &t->threads[i];
	t->threads = xrealloc(t->threads, (t->n_threads + 1) * sizeof(*t->threads));
	memset(&t->threads[t->n_threads], 0, sizeof(*t->threads));
	t->threads[t->n_threads].serial = serial;
	return &t->threads[t->n_threads++];
}

static int chunk_cmp(const void *a, const void *b)
{
	const struct trace_chunk *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int check_header(struct trace *t)
{
	const struct mp_file_header *h = &t->hdr;

	if (memcmp(h->magic, MP_MAGIC, MP_MAGIC_LEN))
		return error("'%s' is not a memprov trace: bad magic at offset 0", t->path);
	if (h->version > MP_VERSION)
		return error("'%s': trace format version %u is newer than this memprov (%d): upgrade memprov",
			     t->path, h->version, MP_VERSION);
	if (h->version < MP_VERSION_OLDEST)
		return error("'%s': corrupt header: version %u", t->path, h->version);
	if (h->header_size < sizeof(*h) || h->header_size % 8)
		return error("'%s': corrupt header: header_size %u", t->path, h->header_size);
	if (h->chunk_size < 4096 || h->chunk_size % 8 || h->chunk_size > (1u << 30))
		return error("'%s': corrupt header: chunk_size %u", t->path, h->chunk_size);
	t->block_size = h->chunk_size;
	t->hdr.exe[sizeof(h->exe) - 1] = 0;
	t->hdr.cmdline[sizeof(h->cmdline) - 1] = 0;
	t->hdr.stop_message[sizeof(h->stop_message) - 1] = 0;
	t->hdr.host[sizeof(h->host) - 1] = 0;
	return 0;
}

/* Chunk head at off, read; 1 when got whole, 0 at the end, -1 on error. */
static int read_head(struct trace *t, uint64_t off, struct mp_chunk_head *ch)
{
	size_t got;

	if (read_full(t->fd, ch, sizeof(*ch), off, &got) < 0)
		return error("cannot read '%s' at offset %llu: %s", t->path,
			     (unsigned long long)off, strerror(errno));
	return got == sizeof(*ch);
}

static void bad_head(struct trace *t, uint64_t off, uint64_t i, const char *why)
{
	if (!(t->flags & TRACE_QUIET))
		warning("corrupt chunk head at offset %llu (chunk %llu): %s; its records are skipped",
			(unsigned long long)off, (unsigned long long)i, why);
	t->damaged = 1;
}

/* Give the chunk whose head ch is at off to its thread. */
static void add_chunk(struct trace *t, const struct mp_chunk_head *ch, uint64_t off, uint64_t i)
{
	struct trace_thread *th = thread_get(t, ch->thread_serial);
	struct trace_chunk *c;
	uint64_t room;

	if (!th->tid)
		th->tid = ch->tid;
	ALLOC_GROW(th->chunks, th->n_chunks, th->alloc_chunks);
	c = &th->chunks[th->n_chunks++];
	c->index = i;
	c->off = off;
	c->first_ts = ch->first_ts;
	c->seq = ch->seq;
	c->used = ch->used;
	c->cut = 0;
	room = t->file_size - off - sizeof(*ch);
	if (c->used > room) {
		c->used = (uint32_t)room;
		c->cut = 1;
		note_cut(t, t->file_size);
	}
}

/* How many units (v1 chunks, v2 blocks) the file holds of the n handed out. */
static uint64_t units_in_file(struct trace *t, uint64_t n, uint64_t unit)
{
	uint64_t body = t->file_size > t->hdr.header_size ? t->file_size - t->hdr.header_size : 0;
	uint64_t full = body / unit;

	if (n <= full)
		return n;
	/* the file ends before the last unit handed out */
	note_cut(t, t->file_size);
	return body % unit ? full + 1 : full;
}

/* Version 1: chunks of header.chunk_size bytes, one after another. */
static int index_v1(struct trace *t)
{
	uint64_t n = units_in_file(t, t->hdr.next_chunk, t->hdr.chunk_size), i;

	t->n_chunks = n;
	for (i = 0; i < n; i++) {
		uint64_t off = t->hdr.header_size + i * (uint64_t)t->hdr.chunk_size;
		struct mp_chunk_head ch;
		int r = read_head(t, off, &ch);

		if (r < 0)
			return -1;
		if (!r)
			break;
		if (ch.magic == 0)
			continue; /* reserved, never written */
		if (ch.magic != MP_CHUNK_MAGIC || ch.used > t->hdr.chunk_size - sizeof(ch)) {
			bad_head(t, off, i, ch.magic != MP_CHUNK_MAGIC ? "bad magic"
								 : "used exceeds the chunk");
			continue;
		}
		add_chunk(t, &ch, off, i);
	}
	return 0;
}

/*
 * Version 2: chunks of whole blocks, each head saying its size; a block
 * whose head is zero is a hole, stepped over. After a damaged head the
 * walk goes on block by block, silently, to the next valid head.
 */
static int index_v2(struct trace *t)
{
	uint64_t bs = t->block_size, n = units_in_file(t, t->hdr.next_chunk, bs), b = 0;
	int lost = 0;

	while (b < n) {
		uint64_t off = t->hdr.header_size + b * bs;
		struct mp_chunk_head ch;
		const char *why = NULL;
		int r = read_head(t, off, &ch);

		if (r < 0)
			return -1;
		if (!r)
			break;
		if (ch.magic == 0) {
			b++; /* a hole: reserved, never written */
			continue;
		}
		if (ch.magic != MP_CHUNK_MAGIC)
			why = "bad magic";
		else if (!ch.size || ch.size % bs || ch.size > (1u << 30))
			why = "size not a whole number of blocks";
		else if (ch.used > ch.size - sizeof(ch))
			why = "used exceeds the chunk";
		if (why) {
			if (!lost)
				bad_head(t, off, t->n_chunks, why);
			lost = 1;
			b++;
			continue;
		}
		lost = 0;
		add_chunk(t, &ch, off, t->n_chunks++);
		b += ch.size / bs;
	}
	return 0;
}

/* Read every chunk head and give each chunk to its thread. */
static int index_chunks(struct trace *t)
{
	size_t i;

	if (t->hdr.version >= 2 ? index_v2(t) : index_v1(t))
		return -1;
	for (i = 0; i < t->n_threads; i++)
		sort_array(t->threads[i].chunks, t->threads[i].n_chunks,
		      sizeof(struct trace_chunk), chunk_cmp);
	return 0;
}

/*
 * Bytes a buffer needs for any of these chunks: their largest used
 * length, which index_chunks clamped to the file. Never the header's
 * chunk_size: a damaged header may claim 1 GiB chunks in a 1 MB file.
 */
static size_t max_used(const struct trace_chunk *c, size_t n)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i].used > m)
			m = c[i].used;
	return m;
}

/* Load chunk th->cur into th->buf. Returns 0, or -1 when none is left. */
static int load_chunk(struct trace *t, struct trace_thread *th)
{
	while (th->cur < th->n_chunks) {
		struct trace_chunk *c = &th->chunks[th->cur];
		size_t got;

		if (read_full(t->fd, th->buf, c->used, data_offset(c), &got) < 0) {
			if (!(t->flags & TRACE_QUIET))
				warning("cannot read '%s' (chunk %llu): %s", t->path,
					(unsigned long long)c->index, strerror(errno));
			t->damaged = 1;
			got = 0;
		}
		if (got < c->used) {
			/* the file shrank under us: it is cut here */
			note_cut(t, data_offset(c) + got);
			c->cut = 1;
		}
		th->len = (uint32_t)got;
		mp_dec_init(&th->dec, t->hdr.version, th->buf, got, c->first_ts);
		if (got)
			return 0;
		th->cur++;
	}
	return -1;
}

static const char *check_pycode(const struct mp_rec_pycode *r)
{
	size_t room = r->h.size - sizeof(*r);

	if (!r->file_len || !r->name_len)
		return "pycode name length 0";
	if ((size_t)r->file_len + r->name_len > room)
		return "pycode names overrun the record";
	if (r->names[r->file_len - 1] || r->names[r->file_len + r->name_len - 1])
		return "pycode name not terminated";
	return NULL;
}

/* What is wrong with a record of a known type, or NULL. */
static const char *check_record(const struct mp_rec_head *h)
{
	static const uint16_t min_size[MP_REC_TYPE_COUNT] = {
		[MP_REC_ALLOC] = sizeof(struct mp_rec_alloc),
		[MP_REC_FREE] = sizeof(struct mp_rec_free),
		[MP_REC_STACK] = sizeof(struct mp_rec_stack),
		[MP_REC_MODULE] = sizeof(struct mp_rec_module),
		[MP_REC_UNLOAD] = sizeof(struct mp_rec_unload),
		[MP_REC_THREAD] = sizeof(struct mp_rec_thread),
		[MP_REC_MARK] = sizeof(struct mp_rec_mark),
		[MP_REC_PYCODE] = sizeof(struct mp_rec_pycode),
		[MP_REC_RSS] = MP_REC_RSS_V1_SIZE,
		[MP_REC_EXIT] = sizeof(struct mp_rec_exit),
		[MP_REC_GPU_ALLOC] = sizeof(struct mp_rec_gpu_alloc),
		[MP_REC_GPU_FREE] = sizeof(struct mp_rec_gpu_free),
		[MP_REC_CTX_RESET] = sizeof(struct mp_rec_ctx_reset),
		[MP_REC_FORK] = sizeof(struct mp_rec_fork),
		[MP_REC_REACH] = sizeof(struct mp_rec_reach),
		[MP_REC_REACH_BLOCKS] = sizeof(struct mp_rec_reach_blocks),
		[MP_REC_PYTHREAD] = sizeof(struct mp_rec_pythread),
		[MP_REC_SIGSTACK] = sizeof(struct mp_rec_sigstack),
	};

	if (h->size < min_size[h->type])
		return "record too short for its type";
	switch (h->type) {
	case MP_REC_FREE:
		if (h->func == MP_FN_munmap && h->size < sizeof(struct mp_rec_unmap))
			return "munmap record without a length";
		break;
	case MP_REC_STACK: {
		const struct mp_rec_stack *s = (const void *)h;

		if (s->n_native > MP_MAX_FRAMES || s->n_python > MP_MAX_PYFRAMES)
			return "too many frames in stack";
		if (sizeof(*s) + 8u * s->n_native + 8u * s->n_python > h->size)
			return "stack frames overrun the record";
		if (!s->id)
			return "stack id 0";
		break;
	}
	case MP_REC_MODULE: {
		const struct mp_rec_module *m = (const void *)h;

		if (!m->path_len || sizeof(*m) + m->path_len > h->size)
			return "module path length out of range";
		if (m->path[m->path_len - 1])
			return "module path not terminated";
		if (m->build_id_len > sizeof(m->build_id))
			return "module build-id length out of range";
		break;
	}
	case MP_REC_MARK: {
		const struct mp_rec_mark *m = (const void *)h;

		if (sizeof(*m) + (uint64_t)m->label_len > h->size)
			return "mark label length out of range";
		if (m->label_len && m->label[m->label_len - 1])
			return "mark label not terminated";
		break;
	}
	case MP_REC_PYCODE:
		return check_pycode((const void *)h);
	case MP_REC_REACH:
		if (((const struct mp_rec_reach *)h)->status >= MP_REACH_STATUS_COUNT)
			return "reach status out of range";
		break;
	case MP_REC_REACH_BLOCKS: {
		const struct mp_rec_reach_blocks *b = (const void *)h;

		if (b->count > MP_REACH_BLOCKS_MAX || sizeof(*b) + 8u * b->count > h->size)
			return "reach block addresses overrun the record";
		if (b->cls < MP_REACH_POSSIBLE || b->cls >= MP_REACH_CLASS_COUNT)
			return "reach block class out of range";
		break;
	}
	}
	return NULL;
}

/*
 * The next record of th's current chunk: 0 with *h, 1 at the chunk's end
 * (or where a record runs past the end of a cut file), or -1 with *why
 * for a record that is not valid. Unknown record types are skipped here.
 */
static int next_in_chunk(struct trace *t, struct trace_thread *th, const struct mp_rec_head **h,
			 const char **why)
{
	for (;;) {
		int st = mp_dec_next(&th->dec, h, th->dbuf, th->dbuf_len, why);

		switch (st) {
		case MP_DEC_OK:
			if ((*h)->type >= MP_REC_TYPE_COUNT) {
				t->skipped++;
				continue;
			}
			*why = check_record(*h);
			return *why ? -1 : 0;
		case MP_DEC_END:
			return 1;
		case MP_DEC_ROOM:
			th->dbuf_len = th->dec.need;
			th->dbuf = xrealloc(th->dbuf, th->dbuf_len);
			continue;
		case MP_DEC_SHORT:
			/* the file ends inside this record: not corruption */
			if (th->chunks[th->cur].cut)
				return 1;
			return -1;
		default:
			return -1;
		}
	}
}

/*
 * Advance th to its next valid record (th->rec), loading chunks as
 * needed; th->rec is NULL when the thread has no more. A record that is
 * not valid ends its chunk, with a warning.
 */
static void thread_advance(struct trace *t, struct trace_thread *th)
{
	for (;;) {
		const struct mp_rec_head *h;
		const char *bad;
		int st;

		if (th->cur >= th->n_chunks) {
			th->rec = NULL;
			return;
		}
		st = next_in_chunk(t, th, &h, &bad);
		if (st == 0) {
			th->rec_pos = (uint32_t)(th->dec.rec - th->buf);
			th->rec = h;
			return;
		}
		if (st < 0) {
			const struct trace_chunk *c = &th->chunks[th->cur];

			if (!(t->flags & TRACE_QUIET))
				warning("corrupt record at offset %llu (chunk %llu, thread %u): %s",
					(unsigned long long)(data_offset(c) +
							     (uint64_t)(th->dec.rec - th->buf)),
					(unsigned long long)c->index, th->serial, bad);
			t->damaged = 1;
		}
		th->cur++;
		if (load_chunk(t, th) < 0) {
			th->rec = NULL;
			return;
		}
	}
}

static int heap_less(const struct trace *t, size_t a, size_t b)
{
	const struct trace_thread *x = &t->threads[a], *y = &t->threads[b];

	if (x->rec->ts != y->rec->ts)
		return x->rec->ts < y->rec->ts;
	return x->serial < y->serial;
}

static void heap_down(struct trace *t, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, tmp;

		if (l < t->heap_len && heap_less(t, t->heap[l], t->heap[m]))
			m = l;
		if (r < t->heap_len && heap_less(t, t->heap[r], t->heap[m]))
			m = r;
		if (m == i)
			return;
		tmp = t->heap[i];
		t->heap[i] = t->heap[m];
		t->heap[m] = tmp;
		i = m;
	}
}

int trace_open(struct trace *t, const char *path, unsigned flags)
{
	struct stat st;
	size_t got, i;

	memset(t, 0, sizeof(*t));
	t->path = xstrdup(path);
	t->flags = flags;
	/* O_NONBLOCK: a FIFO named by mistake must not hang the open */
	t->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0) {
		error("cannot open '%s': %s", path, strerror(errno));
		goto out_free;
	}
	if (fstat(t->fd, &st) < 0) {
		error("cannot stat '%s': %s", path, strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		error("'%s' is not a regular file", path);
		goto out_close;
	}
	t->file_size = (uint64_t)st.st_size;
	if (read_full(t->fd, &t->hdr, sizeof(t->hdr), 0, &got) < 0) {
		error("cannot read '%s': %s", path, strerror(errno));
		goto out_close;
	}
	if (!got) {
		/* created, and the process gone before memprov wrote a byte
		 * (killed at start-up): there is nothing to read */
		error("'%s' is empty: the process ended before memprov wrote its header "
		      "(killed as it started?)", path);
		goto out_close;
	}
	if (got < MP_MAGIC_LEN || memcmp(t->hdr.magic, MP_MAGIC, MP_MAGIC_LEN)) {
		error("'%s' is not a memprov trace: bad magic at offset 0", path);
		goto out_close;
	}
	if (got < sizeof(t->hdr)) {
		error("'%s' is cut inside its header (%zu of %zu bytes): nothing to read",
		      path, got, sizeof(t->hdr));
		goto out_close;
	}
	if (check_header(t) < 0 || index_chunks(t) < 0)
		goto out_close;

	t->heap = xcalloc(t->n_threads + 1, sizeof(*t->heap));
	for (i = 0; i < t->n_threads; i++) {
		struct trace_thread *th = &t->threads[i];

		th->buf = xmalloc(max_used(th->chunks, th->n_chunks));
		th->dbuf_len = 64; /* grown to the largest record the thread has */
		th->dbuf = xmalloc(th->dbuf_len);
		th->cur = 0;
		if (load_chunk(t, th) < 0)
			continue;
		thread_advance(t, th);
		if (th->rec)
			t->heap[t->heap_len++] = i;
	}
	for (i = t->heap_len; i-- > 0;)
		heap_down(t, i);
	return 0;

out_close:
	close(t->fd);
out_free:
	free(t->path);
	t->path = NULL;
	return -1;
}

const struct mp_rec_head *trace_next(struct trace *t)
{
	struct trace_thread *th;
	const struct mp_rec_head *h;

	if (t->last) {
		/* the previous record's thread moves on now, not before */
		thread_advance(t, t->last);
		if (t->last->rec)
			heap_down(t, 0);
		else {
			t->heap[0] = t->heap[--t->heap_len];
			heap_down(t, 0);
		}
		t->last = NULL;
	}
	if (!t->heap_len)
		return NULL;
	th = &t->threads[t->heap[0]];
	h = th->rec;
	t->last = th;
	if (!t->records++)
		t->first_ts = h->ts;
	if (h->ts > t->last_ts)
		t->last_ts = h->ts;
	return h;
}

/*
 * Latest timestamp among the valid records of chunk c, read into buf;
 * dbuf (MP_MAX_RECORD bytes) takes v2's decoded records. 0: none.
 */
static uint64_t chunk_last_ts(struct trace *t, const struct trace_chunk *c, unsigned char *buf,
			      void *dbuf)
{
	const struct mp_rec_head *h;
	const char *why;
	struct mp_dec d;
	uint64_t end = 0;
	size_t got;

	if (read_full(t->fd, buf, c->used, data_offset(c), &got) < 0)
		return 0;
	mp_dec_init(&d, t->hdr.version, buf, got, c->first_ts);
	while (mp_dec_next(&d, &h, dbuf, MP_MAX_RECORD, &why) == MP_DEC_OK)
		if (h->ts > end)
			end = h->ts;
	return end;
}

uint64_t trace_end_ts(struct trace *t)
{
	unsigned char *buf = NULL;
	void *dbuf = xmalloc(MP_MAX_RECORD);
	uint64_t end = 0, ts;
	size_t i, c, room = 0;

	for (i = 0; i < t->n_threads; i++) {
		const struct trace_thread *th = &t->threads[i];

		for (c = th->n_chunks; c > 0 && !th->chunks[c - 1].used; c--)
			;
		if (!c)
			continue;
		if (th->chunks[c - 1].used > room) {
			room = th->chunks[c - 1].used;
			buf = xrealloc(buf, room);
		}
		ts = chunk_last_ts(t, &th->chunks[c - 1], buf, dbuf);
		if (ts > end)
			end = ts;
	}
	free(buf);
	free(dbuf);
	return end;
}

uint64_t trace_start_ts(const struct trace *t)
{
	return t->hdr.start_mono_ns ? t->hdr.start_mono_ns : t->first_ts;
}

uint64_t trace_rel(const struct trace *t, uint64_t ts)
{
	uint64_t start = trace_start_ts(t);

	return ts > start ? ts - start : 0;
}

uint32_t trace_last_serial(const struct trace *t)
{
	return t->last ? t->last->serial : 0;
}

uint64_t trace_last_offset(const struct trace *t)
{
	const struct trace_thread *th = t->last;

	if (!th)
		return 0;
	return data_offset(&th->chunks[th->cur]) + th->rec_pos;
}

void trace_close(struct trace *t)
{
	size_t i;

	if (!t->path)
		return;
	for (i = 0; i < t->n_threads; i++) {
		free(t->threads[i].chunks);
		free(t->threads[i].buf);
		free(t->threads[i].dbuf);
	}
	free(t->threads);
	free(t->heap);
	close(t->fd);
	free(t->path);
	t->path = NULL;
}
