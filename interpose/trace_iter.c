/*
 * trace_iter.c - read a trace file back, record by record, with pread and
 * the caller's memory: the walk of the chunk layout (fixed-size chunks in
 * version 1, chunks of whole blocks in version 2) and the decoder of
 * include/memprov_codec.h. See trace_iter.h.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../include/memprov_codec.h"
#include "trace_iter.h"

/* pread without a cancellation point; bytes read, short at the end. */
static size_t read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		long n = mp_syscall(SYS_pread64, fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/*
 * The compact heap records from d on, batched for heap: 1 when the chunk
 * ends here (a damaged record, or one stamped at or after until), 0 when
 * the next record is for the general path (or the batch is full), or
 * heap's nonzero return in *r.
 */
static int heap_run(struct mp_dec *d, uint32_t serial, uint64_t until, mp_iter_heap_fn heap,
		    void *arg, int *r)
{
	struct mp_iter_heap ev[MP_ITER_BATCH];
	struct mp_rec_alloc a;
	const char *why;
	size_t n = 0;
	int end = 0;

	while (n < MP_ITER_BATCH && d->end - d->p >= 64) {
		int st = mp_dec_compact(d, &a.h, &why);

		if (st < 0)
			break; /* not a compact heap record */
		if (st != MP_DEC_OK || a.h.ts >= until) {
			end = 1; /* damage ends the chunk; its records are in time order */
			break;
		}
		ev[n].ts = a.h.ts;
		ev[n].addr = a.addr;
		ev[n].size = a.size;
		ev[n].alloc = a.h.type == MP_REC_ALLOC;
		ev[n].pad = 0;
		n++;
	}
	*r = n ? heap(arg, serial, ev, n) : 0;
	return end;
}

/* The records of one chunk (its head and used bytes in data). */
static int walk_chunk(const struct mp_chunk_head *c, uint32_t version, const uint8_t *data,
		      size_t used, void *rec, uint64_t until, mp_iter_fn fn, mp_iter_heap_fn heap,
		      void *arg)
{
	const struct mp_rec_head *h;
	const char *why;
	struct mp_dec d;
	int r;

	mp_dec_init(&d, version, data, used, c->first_ts);
	for (;;) {
		if (heap && version >= 2) {
			const uint8_t *at = d.p;

			if (heap_run(&d, c->thread_serial, until, heap, arg, &r) || r)
				return r;
			if (d.p != at)
				continue; /* a full batch, or the general path's turn next */
		}
		if (mp_dec_next(&d, &h, rec, MP_MAX_RECORD, &why) != MP_DEC_OK)
			return 0;
		if (h->ts >= until)
			return 0; /* a chunk's records are in time order */
		if (h->type >= MP_REC_TYPE_COUNT)
			continue; /* a type this memprov does not know */
		r = fn(arg, c->thread_serial, h);
		if (r)
			return r;
	}
}

int mp_trace_iter(int fd, void *buf, size_t len, mp_iter_fn fn, void *arg)
{
	return mp_trace_iter_before(fd, NULL, buf, len, UINT64_MAX, UINT64_MAX, NULL, fn, NULL, arg);
}

struct layout {
	int fd;
	mp_iter_view view;             /* or NULL */
	uint32_t version;
	uint64_t unit, n;              /* block size; blocks handed out */
	uint64_t until, until_off;
};

/* n bytes at off: in memory through the view, else read into dst; NULL
 * when fewer could be read. */
static const void *bytes_at(const struct layout *l, void *dst, size_t n, uint64_t off)
{
	const void *p = l->view ? l->view(off, n) : NULL;

	if (p)
		return p;
	return read_at(l->fd, dst, n, off) == n ? dst : NULL;
}

/* A chunk's records (up to c->used bytes after its head at off), walked. */
static int walk_at(const struct layout *l, const struct mp_chunk_head *c, uint64_t off,
		   uint8_t *data, void *rec, uint64_t until, mp_iter_fn fn, mp_iter_heap_fn heap,
		   void *arg)
{
	const void *p = l->view ? l->view(off + sizeof(*c), c->used) : NULL;

	if (p)
		return walk_chunk(c, l->version, p, c->used, rec, until, fn, heap, arg);
	return walk_chunk(c, l->version, data, read_at(l->fd, data, c->used, off + sizeof(*c)),
			  rec, until, fn, heap, arg);
}

/*
 * The next chunk to read at or after block *i: its head in *c and its
 * file offset in *off, *i moved past it. 0, or -1 when there is none.
 */
static int next_chunk(const struct layout *l, uint64_t *i, struct mp_chunk_head *c,
		      uint64_t *off)
{
	while (*i < l->n) {
		const void *p;
		uint64_t size;

		*off = MP_HEADER_SIZE + *i * l->unit;
		if (*off >= l->until_off)
			return -1; /* handed out after the instant */
		p = bytes_at(l, c, sizeof(*c), *off);
		if (!p)
			return -1; /* reserved past the end of the file */
		if (p != c)
			memcpy(c, p, sizeof(*c));
		size = l->version >= 2 ? c->size : l->unit;
		if (c->magic != MP_CHUNK_MAGIC || !size || size % l->unit ||
		    size > MP_DEFAULT_CHUNK_SIZE || c->used > size - sizeof(*c)) {
			(*i)++; /* never written, or not a chunk: the next block */
			continue;
		}
		*i += size / l->unit;
		if (c->first_ts < l->until)
			return 0;
		/* all of it after the instant: not read */
	}
	return -1;
}

/*
 * The horizon of each chunk to be read: the earliest first_ts of the
 * chunks after it, which bounds every record not read yet (a chunk's
 * records are stamped at or after its first_ts). For the k-th chunk,
 * h->ts[k], as suffix minima, and its offset h->off[k]; h->n chunks, 0
 * when they do not fit.
 */
static void horizons(const struct layout *l, struct mp_iter_horizon *h)
{
	struct mp_chunk_head c;
	uint64_t i = 0, off, k = 0, min = UINT64_MAX;

	h->n = 0;
	while (!next_chunk(l, &i, &c, &off)) {
		if (k == h->cap)
			return; /* too many: no horizons */
		h->off[k] = off;
		h->ts[k++] = c.first_ts;
	}
	h->n = k;
	while (k--) {
		uint64_t first = h->ts[k];

		h->ts[k] = min;
		if (first < min)
			min = first;
	}
}

/* The file's layout from its header (read into buf, or seen through
 * view); -1: not a trace this memprov reads. */
static int layout_of(int fd, mp_iter_view view, void *buf, size_t len, uint64_t until,
		     uint64_t until_off, struct layout *l)
{
	const struct mp_file_header *hdr;

	l->fd = fd;
	l->view = view;
	if (fd < 0 || len < MP_ITER_BUF)
		return -1;
	hdr = bytes_at(l, buf, MP_HEADER_SIZE, 0);
	if (!hdr || memcmp(hdr->magic, MP_MAGIC, MP_MAGIC_LEN) || hdr->version < MP_VERSION_OLDEST ||
	    hdr->version > MP_VERSION || hdr->header_size != MP_HEADER_SIZE)
		return -1;
	l->version = hdr->version;
	l->unit = hdr->chunk_size;
	l->n = hdr->next_chunk;
	l->until = until;
	l->until_off = until_off;
	if (l->unit < 4096 || l->unit > MP_DEFAULT_CHUNK_SIZE || l->unit % 8)
		return -1;
	return 0;
}

int mp_trace_iter_before(int fd, mp_iter_view view, void *buf, size_t len, uint64_t until,
			 uint64_t until_off, struct mp_iter_horizon *hz, mp_iter_fn fn,
			 mp_iter_heap_fn heap, void *arg)
{
	uint8_t *data = (uint8_t *)buf + MP_HEADER_SIZE;
	void *rec = data + MP_DEFAULT_CHUNK_SIZE;
	struct mp_chunk_head c;
	struct layout l;
	uint64_t i = 0, off, k = 0;

	if (layout_of(fd, view, buf, len, until, until_off, &l))
		return -1;
	if (hz) {
		hz->now = hz->from = 0;
		horizons(&l, hz);
	}
	while (!next_chunk(&l, &i, &c, &off)) {
		int r;

		/*
		 * A chunk the first pass did not see where this one is (the
		 * trace changed in between): no horizon from here on.
		 */
		if (hz && (k >= hz->n || hz->off[k] != off))
			hz->n = 0;
		if (hz)
			hz->now = hz->n ? hz->ts[k] : 0;
		if (hz)
			hz->from = hz->now < c.first_ts ? hz->now : c.first_ts;
		k++;
		r = walk_at(&l, &c, off, data, rec, until, fn, heap, arg);
		if (r)
			return r;
	}
	return 0;
}

struct fork_find {
	uint64_t after, ts;
	int32_t pid;
	uint32_t serial;
	int found; /* 1: the record, -1: another one came first */
};

static int fork_one(void *arg, uint32_t serial, const struct mp_rec_head *h)
{
	struct fork_find *f = arg;
	const struct mp_rec_fork *r = (const void *)h;

	(void)serial;
	if (h->ts < f->after)
		return 0;
	f->found = h->type == MP_REC_FORK && h->size >= sizeof(*r) && r->child_pid == f->pid &&
			   r->serial == f->serial ? 1 : -1;
	f->ts = h->ts;
	return 1;
}

int mp_trace_fork_ts(int fd, void *buf, size_t len, uint32_t thread, uint64_t after,
		     uint64_t after_off, int32_t child_pid, uint32_t fork_serial, uint64_t *ts)
{
	uint8_t *data = (uint8_t *)buf + MP_HEADER_SIZE;
	void *rec = data + MP_DEFAULT_CHUNK_SIZE;
	struct fork_find f = { after, 0, child_pid, fork_serial, 0 };
	struct mp_chunk_head c;
	struct layout l;
	uint64_t i = 0, off, from = UINT64_MAX;

	if (!thread || layout_of(fd, NULL, buf, len, UINT64_MAX, after_off, &l))
		return -1;
	/*
	 * The thread's last chunk started by then (taken before then too, in
	 * the file's first after_off bytes): the record is in it or after.
	 */
	while (!next_chunk(&l, &i, &c, &off))
		if (c.thread_serial == thread && c.first_ts <= after)
			from = off;
	if (from == UINT64_MAX)
		return -1;
	l.until_off = UINT64_MAX;
	i = (from - MP_HEADER_SIZE) / l.unit;
	while (!f.found && !next_chunk(&l, &i, &c, &off))
		if (c.thread_serial == thread &&
		    walk_at(&l, &c, off, data, rec, UINT64_MAX, fork_one, NULL, &f) < 0)
			break;
	if (f.found != 1)
		return -1;
	*ts = f.ts;
	return 0;
}
