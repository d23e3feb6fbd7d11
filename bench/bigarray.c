/*
 * bigarray.c - big-block benchmark for memprov (bench/run.sh).
 *
 *   bigarray COUNT [SEED]
 *
 * Allocates COUNT blocks of 1 to 64 MiB (log-uniform, deterministic from
 * SEED), writes every page of each, and frees it; at most four blocks are
 * live at a time (a ring), so peak RSS stays under 256 MiB. glibc serves
 * these sizes with mmap, so the cost is page faults and the tracer's
 * per-call overhead should vanish in them. Prints only a checksum.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define RING 4
#define PAGE 4096

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

int main(int argc, char **argv)
{
	unsigned char *ring[RING] = { 0 };
	uint64_t s, sum = 0;
	long count, i;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bigarray COUNT [SEED]\n");
		return 2;
	}
	count = strtol(argv[1], NULL, 10);
	s = (argc == 3 ? strtoull(argv[2], NULL, 10) + 1 : 2) * 0x9e3779b97f4a7c15ull;
	for (i = 0; i < count; i++) {
		uint64_t r = rng_next(&s);
		size_t mib = (size_t)1 << (r % 6);          /* 1..32 MiB octave */
		size_t n = (mib << 20) + (size_t)((r >> 8) % (mib << 20));
		unsigned char *p;
		size_t off;

		free(ring[i % RING]);
		p = malloc(n);
		if (!p) {
			perror("bigarray: malloc");
			return 1;
		}
		for (off = 0; off < n; off += PAGE)
			p[off] = (unsigned char)(off >> 12);
		p[n - 1] = 1;
		sum = sum * 31 + n + p[n / 2];
		ring[i % RING] = p;
	}
	for (i = 0; i < RING; i++)
		free(ring[i]);
	printf("%016llx\n", (unsigned long long)sum);
	return 0;
}
