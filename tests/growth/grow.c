/*
 * grow.c - a loop with three allocation sites and a mark per iteration:
 * leak_a keeps one 4096-byte block per iteration (the leak), cache_b
 * keeps the last 8 blocks of 1000 bytes (a bounded FIFO: grows for 8
 * iterations, then stays), churn_c allocates 512 and 256 bytes and frees
 * them in the same iteration. No stdio.
 *
 *   grow [ITERATIONS] [noleak]     (default 50; noleak: leak_a frees too)
 *
 * Heap live at the mark after iteration i (1-based), with the leak:
 * 4096*i + 1000*min(i, 8). Peak: during the last iteration, when the
 * ninth cache block is allocated before the oldest is freed and churn_c's
 * 512-byte block is live: 4096*N + 9000 + 512 (N >= 8).
 */
#include <stdlib.h>
#include <string.h>

void memprov_mark(const char *label) __attribute__((weak));

#define MAX_ITER 100000
#define CACHE 8

static void *leaked[MAX_ITER];
static void *cache[CACHE + 1];
static int cached;

static __attribute__((noinline)) void *leak_a(void)
{
	return malloc(4096);
}

static __attribute__((noinline)) void *cache_b(void)
{
	return malloc(1000);
}

static __attribute__((noinline)) void *churn_c(size_t n)
{
	return malloc(n);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;
	int noleak = argc > 2 && !strcmp(argv[2], "noleak");
	int i;

	if (n < 1 || n > MAX_ITER)
		return 64;
	for (i = 0; i < n; i++) {
		void *c1 = churn_c(512);

		leaked[i] = leak_a();
		cache[cached++] = cache_b();
		if (cached > CACHE) {
			free(cache[0]);
			memmove(cache, cache + 1, CACHE * sizeof(cache[0]));
			cached--;
		}
		free(c1);
		c1 = churn_c(256);
		free(c1);
		if (noleak) {
			free(leaked[i]);
			leaked[i] = NULL;
		}
		if (memprov_mark)
			memprov_mark("iter");
	}
	return leaked[n - 1] || noleak ? 0 : 1;
}
