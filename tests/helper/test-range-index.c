/*
 * test-range-index.c - analyzer/range_index.c against a plain array:
 * random inserts, replacements, removals and range queries over a small
 * address space (so that ranges overlap and queries meet many of them),
 * every answer compared with a linear scan. Prints "ok N queries" and
 * exits 0, or says what differed and exits 1. Used by t9540.
 *
 *   test-range-index [SEED [OPS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "range_index.h"

#define SPACE 4096    /* addresses 0..SPACE-1: ranges collide often */

struct ref {
	int live;
	uint64_t end;
};

static struct ref ref[SPACE];
static uint64_t items[SPACE];     /* item pointers point here: &items[start] */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int check(struct range_index *ix, uint64_t a, uint64_t b, void ***out, size_t *alloc)
{
	size_t n = range_index_find(ix, a, b, out, alloc), k = 0;
	uint64_t s;

	for (s = 0; s < SPACE; s++) {
		if (!ref[s].live || s >= b || ref[s].end <= a)
			continue;
		if (k >= n || (*out)[k] != &items[s]) {
			fprintf(stderr, "query [%llu, %llu): answer %zu is wrong or missing (start %llu)\n",
				(unsigned long long)a, (unsigned long long)b, k, (unsigned long long)s);
			return -1;
		}
		k++;
	}
	if (k != n) {
		fprintf(stderr, "query [%llu, %llu): %zu ranges, expected %zu\n",
			(unsigned long long)a, (unsigned long long)b, n, k);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1, live = 0;
	long ops = argc > 2 ? atol(argv[2]) : 200000, i, queries = 0;
	struct range_index ix = { 0 };
	void **out = NULL;
	size_t alloc = 0;

	seed = seed ? seed : 1;
	for (i = 0; i < ops; i++) {
		uint64_t op = rnd(&seed) % 8, s = rnd(&seed) % SPACE, len = 1 + rnd(&seed) % 64;

		if (op < 4) {
			/* add, or replace the range at s */
			live += !ref[s].live;
			ref[s].live = 1;
			ref[s].end = s + len;
			range_index_set(&ix, s, s + len, &items[s]);
		} else if (op < 6) {
			int was = ref[s].live;

			if (range_index_remove(&ix, s) != (was ? 0 : -1)) {
				fprintf(stderr, "remove %llu: wrong answer\n", (unsigned long long)s);
				return 1;
			}
			live -= was;
			ref[s].live = 0;
		} else {
			if (check(&ix, s, s + len * (op == 7 ? 16 : 1), &out, &alloc) < 0)
				return 1;
			queries++;
		}
		if (ix.n != live) {
			fprintf(stderr, "after op %ld: %zu ranges, expected %llu\n", i, ix.n,
				(unsigned long long)live);
			return 1;
		}
	}
	if (check(&ix, 0, UINT64_MAX, &out, &alloc) < 0)
		return 1;
	range_index_release(&ix);
	free(out);
	printf("ok %ld queries, %llu ranges at the end\n", queries + 1, (unsigned long long)live);
	return 0;
}
