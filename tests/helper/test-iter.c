/*
 * test-iter.c - interpose/trace_iter.c, linked alone (t1080): walk the
 * trace named on the command line as libmemprov.so would read its own
 * trace back, into memory mapped here, and print what it saw:
 *
 *   records N allocs N alloc_bytes N frees N stacks N threads N
 *
 * (allocs and frees of every kind, stacks: distinct ids). t1080 compares
 * the figures with `memprov stats --json` and `memprov dump` of the same
 * trace, version 1 and 2. Exits 1 when the walk fails.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../interpose/trace_iter.h"

static uint64_t records, allocs, alloc_bytes, frees, stacks, threads;
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

static int one(void *arg, uint32_t serial, const struct mp_rec_head *h)
{
	(void)arg;
	records++;
	if (!seen((uint64_t *)serials, sizeof(serials) / 8, serial))
		threads++;
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

int main(int argc, char **argv)
{
	void *buf = mmap(NULL, MP_ITER_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	int fd = argc > 1 ? open(argv[1], O_RDONLY) : -1;

	if (buf == MAP_FAILED || mp_trace_iter(fd, buf, MP_ITER_BUF, one, NULL))
		return 1;
	printf("records %llu allocs %llu alloc_bytes %llu frees %llu stacks %llu threads %llu\n",
	       (unsigned long long)records, (unsigned long long)allocs,
	       (unsigned long long)alloc_bytes, (unsigned long long)frees,
	       (unsigned long long)stacks, (unsigned long long)threads);
	return 0;
}
