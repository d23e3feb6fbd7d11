/*
 * test-intern.c - the stack-id set of interpose/intern.c, linked alone
 * (t1080): 8 threads insert the same 200,000 ids in different orders at
 * once; every id must be reported new exactly once over all threads (the
 * set is far from full), and again once after mp_intern_init empties it.
 * Prints "intern: N ids, 8 threads, N new, 0 twice, 0 never"; exits 1
 * otherwise.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../interpose/intern.h"

#define THREADS 8
#define IDS 200000

static unsigned char news[IDS]; /* how many threads were told id i is new */

static uint64_t id_of(uint32_t i)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull + 1;

	x ^= x >> 29; /* ids share low bits often enough to fill probe runs */
	return x | 1;
}

static void *worker(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg, k;

	for (k = 0; k < IDS; k++) {
		uint32_t i = (k * 7919u + t * 104729u) % IDS; /* a different order each */

		if (mp_intern_insert(id_of(i)))
			__atomic_fetch_add(&news[i], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int run(const char *what)
{
	pthread_t th[THREADS];
	uint32_t i, total = 0, twice = 0, never = 0;

	for (i = 0; i < IDS; i++)
		news[i] = 0;
	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < IDS; i++) {
		total += news[i];
		twice += news[i] > 1;
		never += news[i] == 0;
	}
	printf("intern (%s): %d ids, %d threads, %u new, %u twice, %u never\n", what, IDS,
	       THREADS, total, twice, never);
	return twice || never;
}

int main(void)
{
	int bad;

	if (mp_intern_init())
		return 1;
	bad = run("first");
	if (mp_intern_init()) /* a forked child's fresh set */
		return 1;
	bad |= run("after a reset");
	return bad;
}
