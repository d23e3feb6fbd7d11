/*
 * test-iter.c - interpose/trace_iter.c, linked alone (t1080): walk the
 * trace named on the command line as libmemprov.so would read its own
 * trace back, into memory mapped here, and print what it saw:
 *
 *   records N allocs N alloc_bytes N frees N stacks N threads N
 *   sequence HEX
 *
 * (allocs and frees of every kind, stacks: distinct ids; sequence: a hash
 * of every ALLOC and FREE in the order given, with its thread, time,
 * address and size). t1080 compares the figures with `memprov stats
 * --json` and `memprov dump` of the same trace, version 1 and 2.
 *
 *   test-iter --heap TRACE
 *
 * walks with the compact heap records in batches (trace_iter.h), as the
 * scan at exit does, and prints the same two lines, then "batched N": the
 * records that came in batches. Exits 1 when the walk fails.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../interpose/trace_iter.h"

static uint64_t records, allocs, alloc_bytes, frees, stacks, threads, sequence, batched;
static uint64_t ids[65536];
static uint32_t serials[4096];

static int seen(uint64_t *set, size_t n, uint64_t v)
{
	size_t i;

	for (i = 0; i < n && set[i]; i++)
		if (set[i] == v)
			return 1;
	if (i < n)
		set[i] = v;
	return 0;
}

static void mix(uint64_t v)
{
	sequence = (sequence ^ v) * 0x100000001b3ull;
	sequence ^= sequence >> 29;
}

static void in_sequence(uint32_t serial, unsigned type, uint64_t ts, uint64_t addr, uint64_t size)
{
	mix(serial);
	mix(type);
	mix(ts);
	mix(addr);
	mix(size);
}

static int one(void *arg, uint32_t serial, const struct mp_rec_head *h)
{
	(void)arg;
	records++;
	if (!seen((uint64_t *)serials, sizeof(serials) / 8, serial))
		threads++;
	if (h->type == MP_REC_ALLOC)
		in_sequence(serial, h->type, h->ts, ((const struct mp_rec_alloc *)h)->addr,
			    ((const struct mp_rec_alloc *)h)->size);
	else if (h->type == MP_REC_FREE)
		in_sequence(serial, h->type, h->ts, ((const struct mp_rec_free *)h)->addr, 0);
	if (h->type == MP_REC_ALLOC || h->type == MP_REC_GPU_ALLOC) {
		allocs++;
		if (!(h->flags & MP_RF_FAILED))
			alloc_bytes += h->type == MP_REC_ALLOC ? ((const struct mp_rec_alloc *)h)->size
							       : ((const struct mp_rec_gpu_alloc *)h)->size;
	} else if (h->type == MP_REC_FREE || h->type == MP_REC_GPU_FREE) {
		frees++;
	} else if (h->type == MP_REC_STACK &&
		   !seen(ids, sizeof(ids) / 8, ((const struct mp_rec_stack *)h)->id)) {
		stacks++;
	}
	return 0;
}

static int batch(void *arg, uint32_t serial, const struct mp_iter_heap *ev, size_t n)
{
	size_t i;

	(void)arg;
	if (!n || n > MP_ITER_BATCH)
		return 2;
	for (i = 0; i < n; i++) {
		struct mp_rec_alloc a = { 0 };

		a.h.type = ev[i].alloc ? MP_REC_ALLOC : MP_REC_FREE;
		a.h.ts = ev[i].ts;
		a.h.size = ev[i].alloc ? sizeof(a) : sizeof(struct mp_rec_free);
		a.addr = ev[i].addr;
		a.size = ev[i].size;
		one(NULL, serial, &a.h);
		batched++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	void *buf = mmap(NULL, MP_ITER_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	int heap = argc > 2 && !strcmp(argv[1], "--heap");
	int fd = argc > 1 ? open(argv[1 + heap], O_RDONLY) : -1;

	if (buf == MAP_FAILED ||
	    mp_trace_iter_before(fd, NULL, buf, MP_ITER_BUF, UINT64_MAX, UINT64_MAX, NULL, one,
				 heap ? batch : NULL, NULL))
		return 1;
	printf("records %llu allocs %llu alloc_bytes %llu frees %llu stacks %llu threads %llu\n",
	       (unsigned long long)records, (unsigned long long)allocs,
	       (unsigned long long)alloc_bytes, (unsigned long long)frees,
	       (unsigned long long)stacks, (unsigned long long)threads);
	printf("sequence %016llx\n", (unsigned long long)sequence);
	if (heap)
		printf("batched %llu\n", (unsigned long long)batched);
	return 0;
}
