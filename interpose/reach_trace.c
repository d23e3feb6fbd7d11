/*
 * reach_trace.c - read this process's own trace back, record by record,
 * for the reachability scan. The file is read with pread into memory the
 * scan mapped itself, never through the writer's mappings (segments may
 * be dropped from the address space once written). This is the one place
 * in libmemprov.so that walks the chunk layout on the reading side: a new
 * trace format changes this file, not its callers.
 *
 * Records come chunk by chunk in file order: each thread's records in its
 * own order, threads interleaved. Callers that need "the latest event for
 * an address" compare timestamps; they never need a merge by time.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls reach_mem and sys; the
 * descriptor is its caller's.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "reach_int.h"

#define BATCH_CHUNKS 2 /* chunks per pread */

static ssize_t pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, off + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* The records of one chunk; nonzero from fn stops. */
static int walk_chunk(const struct mp_chunk_head *c, uint32_t chunk_size, rt_fn fn, void *arg)
{
	const char *p = (const char *)(c + 1);
	uint32_t used = c->used, off = 0;

	if (c->magic != MP_CHUNK_MAGIC)
		return 0;
	if (used > chunk_size - sizeof(*c))
		used = chunk_size - sizeof(*c);
	while (off + sizeof(struct mp_rec_head) <= used) {
		const struct mp_rec_head *h = (const void *)(p + off);
		int r;

		if (h->size < sizeof(*h) || h->size % 8 || h->size > used - off)
			break;
		r = fn(arg, c->thread_serial, h);
		if (r)
			return r;
		off += h->size;
	}
	return 0;
}

int rt_walk(int fd, uint64_t deadline, rt_fn fn, void *arg)
{
	struct mp_file_header hdr;
	uint64_t i, n_chunks;
	size_t cs, batch;
	char *buf;
	int ret = RX_OK;

	if (fd < 0 || pread_full(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    memcmp(hdr.magic, MP_MAGIC, MP_MAGIC_LEN) || hdr.version != MP_VERSION)
		return RX_NOTRACE;
	cs = hdr.chunk_size;
	if (cs < 4096 || cs > (1u << 24) || cs % 8 || hdr.header_size != MP_HEADER_SIZE)
		return RX_NOTRACE;
	n_chunks = hdr.next_chunk;
	batch = cs * BATCH_CHUNKS;
	buf = rmem_alloc(batch);
	if (!buf)
		return RX_NOMEM;
	for (i = 0; i < n_chunks && ret == RX_OK; i += BATCH_CHUNKS) {
		uint64_t k, want = n_chunks - i < BATCH_CHUNKS ? n_chunks - i : BATCH_CHUNKS;
		ssize_t got = pread_full(fd, buf, (size_t)(want * cs),
					 (off_t)(MP_HEADER_SIZE + i * cs));

		if (got < 0) {
			ret = RX_NOTRACE;
			break;
		}
		for (k = 0; k < want && (k + 1) * cs <= (uint64_t)got; k++) {
			int r = walk_chunk((const void *)(buf + k * cs), (uint32_t)cs, fn, arg);

			if (r) {
				ret = r;
				break;
			}
		}
		if ((uint64_t)got < want * cs)
			break; /* chunks reserved past the end of the file */
		if (mp_now() > deadline)
			ret = RX_TIMEOUT;
	}
	rmem_free(buf);
	return ret;
}
