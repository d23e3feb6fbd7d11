/*
 * test-sort.c - the scan's two sorts of interpose/reach_mem.c, linked
 * alone (t1080): rsort_blocks (the live blocks by address) and rsort
 * (the generic one), each on 400 arrays of up to 200,000 elements:
 * random, sorted, reversed, few distinct keys, and a zigzag that defeats
 * a median of three. After each sort the keys must ascend, every element
 * keep its payload, and the keys be the same multiset as before. Prints
 * "sort: N arrays, M elements, 0 failed"; exits 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../interpose/reach_int.h"

#define ARRAYS 400
#define MAX_N 200000

static struct rblock b[MAX_N];
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int block_less(const void *x, const void *y)
{
	return ((const struct rblock *)x)->addr < ((const struct rblock *)y)->addr;
}

/* 0 when b[0 .. n) ascends, pairs and sums as filled; else 1 */
static int check(size_t n, uint64_t sum, uint64_t squares)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i && b[i - 1].addr > b[i].addr)
			return 1;
		if (b[i].size != b[i].addr * 3 + 1)
			return 1;
		sum -= b[i].addr;
		squares -= b[i].addr * b[i].addr;
	}
	return sum || squares;
}

int main(void)
{
	unsigned long elements = 0, failed = 0;
	int t;

	for (t = 0; t < ARRAYS; t++) {
		size_t n = t < 300 ? (size_t)(rnd() % 300) : (size_t)(rnd() % MAX_N), i;
		uint64_t sum = 0, squares = 0;
		int mode = t % 5;

		for (i = 0; i < n; i++) {
			uint64_t v = mode == 0 ? rnd() : mode == 1 ? i : mode == 2 ? n - i :
				     mode == 3 ? rnd() % 7 : (i % 2 ? i : n - i);

			b[i].addr = v;
			b[i].size = v * 3 + 1;
			b[i].sib = (uint32_t)i;
			sum += v;
			squares += v * v;
		}
		if (t % 2)
			rsort_blocks(b, n);
		else
			rsort(b, n, sizeof(*b), block_less);
		if (check(n, sum, squares)) {
			printf("FAIL: array %d (%zu elements, mode %d, %s)\n", t, n, mode,
			       t % 2 ? "rsort_blocks" : "rsort");
			failed++;
		}
		elements += n;
	}
	printf("sort: %d arrays, %lu elements, %lu failed\n", ARRAYS, elements, failed);
	return failed != 0;
}
