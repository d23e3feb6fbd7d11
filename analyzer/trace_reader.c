/*
 * trace_reader.c - chunk index, per-thread record streams, k-way merge by
 * timestamp, and the checks that keep a damaged trace readable.
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

static uint64_t chunk_offset(const struct trace *t, uint64_t index)
{
	return t->hdr.header_size + index * (uint64_t)t->hdr.chunk_size;
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
	if (h->version == 0)
		return error("'%s': corrupt header: version 0", t->path);
	if (h->header_size < sizeof(*h) || h->header_size % 8)
		return error("'%s': corrupt header: header_size %u", t->path, h->header_size);
	if (h->chunk_size < 4096 || h->chunk_size % 8 || h->chunk_size > (1u << 30))
		return error("'%s': corrupt header: chunk_size %u", t->path, h->chunk_size);
	t->hdr.exe[sizeof(h->exe) - 1] = 0;
	t->hdr.cmdline[sizeof(h->cmdline) - 1] = 0;
	t->hdr.stop_message[sizeof(h->stop_message) - 1] = 0;
	return 0;
}

/* Read every chunk head and give each chunk to its thread. */
static int index_chunks(struct trace *t)
{
	uint64_t body = t->file_size > t->hdr.header_size ? t->file_size - t->hdr.header_size : 0;
	uint64_t full = body / t->hdr.chunk_size, i;
	uint64_t n = t->hdr.next_chunk;

	if (n > full) {
		/* the file ends before the last chunk handed out */
		if (body % t->hdr.chunk_size)
			n = full + 1;
		else
			n = full;
		note_cut(t, t->file_size);
	}
	t->n_chunks = n;
	for (i = 0; i < n; i++) {
		struct mp_chunk_head ch;
		struct trace_thread *th;
		struct trace_chunk *c;
		uint64_t off = chunk_offset(t, i), room;
		size_t got;

		if (read_full(t->fd, &ch, sizeof(ch), off, &got) < 0)
			return error("cannot read '%s' at offset %llu: %s", t->path,
				     (unsigned long long)off, strerror(errno));
		if (got < sizeof(ch))
			break;
		if (ch.magic == 0)
			continue; /* reserved, never written */
		if (ch.magic != MP_CHUNK_MAGIC || ch.used > t->hdr.chunk_size - sizeof(ch)) {
			if (!(t->flags & TRACE_QUIET))
				warning("corrupt chunk head at offset %llu (chunk %llu): %s; its records are skipped",
					(unsigned long long)off, (unsigned long long)i,
					ch.magic != MP_CHUNK_MAGIC ? "bad magic" : "used exceeds the chunk");
			t->damaged = 1;
			continue;
		}
		th = thread_get(t, ch.thread_serial);
		if (!th->tid)
			th->tid = ch.tid;
		ALLOC_GROW(th->chunks, th->n_chunks, th->alloc_chunks);
		c = &th->chunks[th->n_chunks++];
		c->index = i;
		c->seq = ch.seq;
		c->used = ch.used;
		c->cut = 0;
		room = t->file_size - off - sizeof(ch);
		if (c->used > room) {
			c->used = (uint32_t)room;
			c->cut = 1;
			note_cut(t, t->file_size);
		}
	}
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

		if (read_full(t->fd, th->buf, c->used,
			      chunk_offset(t, c->index) + sizeof(struct mp_chunk_head), &got) < 0) {
			if (!(t->flags & TRACE_QUIET))
				warning("cannot read '%s' (chunk %llu): %s", t->path,
					(unsigned long long)c->index, strerror(errno));
			t->damaged = 1;
			got = 0;
		}
		if (got < c->used) {
			/* the file shrank under us: it is cut here */
			note_cut(t, chunk_offset(t, c->index) + sizeof(struct mp_chunk_head) + got);
			c->cut = 1;
		}
		th->len = (uint32_t)got;
		th->pos = 0;
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
		[MP_REC_RSS] = sizeof(struct mp_rec_rss),
		[MP_REC_EXIT] = sizeof(struct mp_rec_exit),
		[MP_REC_GPU_ALLOC] = sizeof(struct mp_rec_gpu_alloc),
		[MP_REC_GPU_FREE] = sizeof(struct mp_rec_gpu_free),
		[MP_REC_CTX_RESET] = sizeof(struct mp_rec_ctx_reset),
		[MP_REC_FORK] = sizeof(struct mp_rec_fork),
		[MP_REC_REACH] = sizeof(struct mp_rec_reach),
		[MP_REC_REACH_BLOCKS] = sizeof(struct mp_rec_reach_blocks),
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
		if (((const struct mp_rec_reach *)h)->status > MP_REACH_PARTIAL)
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

/* Does the record at h run past the left bytes of its chunk? */
static int record_overruns(const struct mp_rec_head *h, uint32_t left)
{
	return left < sizeof(*h) || h->size > left;
}

/* What is wrong with the record at h (left bytes of the chunk from h on), or NULL. */
static const char *record_problem(const struct mp_rec_head *h, uint32_t left)
{
	if (record_overruns(h, left))
		return left < sizeof(*h) ? "record head past the used bytes"
					 : "record size past the used bytes";
	if (h->size < sizeof(*h) || h->size % 8)
		return "record size not a multiple of 8 or under 16";
	if (h->type == MP_REC_INVALID)
		return "record type 0";
	if (h->type < MP_REC_TYPE_COUNT)
		return check_record(h);
	return NULL;
}

/*
 * Advance th to its next valid record (th->rec), loading chunks as
 * needed; th->rec is NULL when the thread has no more.
 */
static void thread_advance(struct trace *t, struct trace_thread *th)
{
	for (;;) {
		const struct mp_rec_head *h;
		const char *bad;
		uint32_t left;

		if (th->cur >= th->n_chunks) {
			th->rec = NULL;
			return;
		}
		left = th->len - th->pos;
		if (left == 0) {
			th->cur++;
			if (load_chunk(t, th) < 0) {
				th->rec = NULL;
				return;
			}
			continue;
		}
		h = (const void *)(th->buf + th->pos);
		if (record_overruns(h, left) && th->chunks[th->cur].cut) {
			/* the file ends inside this record: not corruption */
			th->pos = th->len;
			continue;
		}
		bad = record_problem(h, left);
		if (bad) {
			if (!(t->flags & TRACE_QUIET))
				warning("corrupt record at offset %llu (chunk %llu, thread %u): %s",
					(unsigned long long)(chunk_offset(t, th->chunks[th->cur].index) +
							     sizeof(struct mp_chunk_head) + th->pos),
					(unsigned long long)th->chunks[th->cur].index, th->serial, bad);
			t->damaged = 1;
			th->pos = th->len;
			continue;
		}
		th->pos += h->size;
		if (h->type >= MP_REC_TYPE_COUNT) {
			t->skipped++;
			continue;
		}
		th->rec = h;
		return;
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

/* Latest timestamp among the valid records of chunk c, read into buf (0: none). */
static uint64_t chunk_last_ts(struct trace *t, const struct trace_chunk *c, unsigned char *buf)
{
	uint64_t end = 0;
	uint32_t pos = 0;
	size_t got;

	if (read_full(t->fd, buf, c->used, chunk_offset(t, c->index) + sizeof(struct mp_chunk_head),
		      &got) < 0)
		return 0;
	while (pos < got) {
		const struct mp_rec_head *h = (const void *)(buf + pos);

		if (record_problem(h, (uint32_t)(got - pos)))
			break;
		if (h->ts > end)
			end = h->ts;
		pos += h->size;
	}
	return end;
}

uint64_t trace_end_ts(struct trace *t)
{
	unsigned char *buf = NULL;
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
		ts = chunk_last_ts(t, &th->chunks[c - 1], buf);
		if (ts > end)
			end = ts;
	}
	free(buf);
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
	return chunk_offset(t, th->chunks[th->cur].index) + sizeof(struct mp_chunk_head) +
	       (uint64_t)((const unsigned char *)th->rec - th->buf);
}

void trace_close(struct trace *t)
{
	size_t i;

	if (!t->path)
		return;
	for (i = 0; i < t->n_threads; i++) {
		free(t->threads[i].chunks);
		free(t->threads[i].buf);
	}
	free(t->threads);
	free(t->heap);
	close(t->fd);
	free(t->path);
	t->path = NULL;
}
