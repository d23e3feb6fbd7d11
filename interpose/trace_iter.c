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
		long n = syscall(SYS_pread64, fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* The records of one chunk (its head and used bytes in data). */
static int walk_chunk(const struct mp_chunk_head *c, uint32_t version, const uint8_t *data,
		      size_t used, void *rec, uint64_t until, mp_iter_fn fn, void *arg)
{
	const struct mp_rec_head *h;
	const char *why;
	struct mp_dec d;
	int r;

	mp_dec_init(&d, version, data, used, c->first_ts);
	while (mp_dec_next(&d, &h, rec, MP_MAX_RECORD, &why) == MP_DEC_OK) {
		if (h->ts >= until)
			break; /* a chunk's records are in time order */
		if (h->type >= MP_REC_TYPE_COUNT)
			continue; /* a type this memprov does not know */
		r = fn(arg, c->thread_serial, h);
		if (r)
			return r;
	}
	return 0;
}

int mp_trace_iter(int fd, void *buf, size_t len, mp_iter_fn fn, void *arg)
{
	return mp_trace_iter_before(fd, buf, len, UINT64_MAX, UINT64_MAX, fn, arg);
}

int mp_trace_iter_before(int fd, void *buf, size_t len, uint64_t until, uint64_t until_off,
			 mp_iter_fn fn, void *arg)
{
	struct mp_file_header *hdr = buf;
	uint8_t *data = (uint8_t *)buf + MP_HEADER_SIZE;
	void *rec = data + MP_DEFAULT_CHUNK_SIZE;
	uint64_t unit, n, i, off;
	uint32_t version;

	if (fd < 0 || len < MP_ITER_BUF || read_at(fd, hdr, MP_HEADER_SIZE, 0) != MP_HEADER_SIZE ||
	    memcmp(hdr->magic, MP_MAGIC, MP_MAGIC_LEN) || hdr->version < MP_VERSION_OLDEST ||
	    hdr->version > MP_VERSION || hdr->header_size != MP_HEADER_SIZE)
		return -1;
	version = hdr->version;
	unit = hdr->chunk_size;
	n = hdr->next_chunk;
	if (unit < 4096 || unit > MP_DEFAULT_CHUNK_SIZE || unit % 8)
		return -1;
	for (i = 0; i < n;) {
		struct mp_chunk_head c;
		uint64_t size;
		int r;

		off = MP_HEADER_SIZE + i * unit;
		if (off >= until_off)
			break; /* handed out after the instant */
		if (read_at(fd, &c, sizeof(c), off) != sizeof(c))
			break; /* reserved past the end of the file */
		size = version >= 2 ? c.size : unit;
		if (c.magic != MP_CHUNK_MAGIC || !size || size % unit ||
		    size > MP_DEFAULT_CHUNK_SIZE || c.used > size - sizeof(c)) {
			i++; /* never written, or not a chunk: the next block */
			continue;
		}
		i += size / unit;
		if (c.first_ts >= until)
			continue; /* all of it after the instant */
		r = walk_chunk(&c, version, data, read_at(fd, data, c.used, off + sizeof(c)), rec,
			       until, fn, arg);
		if (r)
			return r;
	}
	return 0;
}
