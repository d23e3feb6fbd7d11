/*
 * test-intern.c - the stack-id table of interpose/intern.c, linked alone
 * (t1080): 8 threads look up the same 200,000 hashes in different orders
 * at once; every hash must be reported new exactly once over all threads
 * (the table is far from full), every thread must get the same id for it,
 * and ids must be distinct and below 2^24; the same again after
 * mp_intern_init empties the table. Prints "intern: N ids, 8 threads,
 * N new, 0 twice, 0 never, 0 differ"; exits 1 otherwise.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../interpose/intern.h"

#define THREADS 8
#define IDS 200000

static unsigned char news[IDS]; /* how many threads were told hash i is new */
static uint32_t ids[IDS];       /* the id hash i was given */
static uint32_t differ;         /* lookups that gave another id */
static unsigned char seen[1u << 24];

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

		uint32_t id, old = 0;
		int is_new;

		id = mp_intern_id(id_of(i), &is_new);
		if (is_new)
			__atomic_fetch_add(&news[i], 1, __ATOMIC_RELAXED);
		if (!id || (!__atomic_compare_exchange_n(&ids[i], &old, id, 0, __ATOMIC_RELAXED,
							 __ATOMIC_RELAXED) && old != id))
			__atomic_fetch_add(&differ, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int run(const char *what)
{
	pthread_t th[THREADS];
	uint32_t i, total = 0, twice = 0, never = 0;

	for (i = 0; i < IDS; i++)
		news[i] = 0, ids[i] = 0;
	for (i = 0; i < (1u << 24); i++)
		seen[i] = 0;
	differ = 0;
	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < IDS; i++) {
		total += news[i];
		twice += news[i] > 1;
		never += news[i] == 0;
		if (ids[i] >= (1u << 24) || seen[ids[i]]++)
			differ++; /* two hashes, one id */
	}
	printf("intern (%s): %d ids, %d threads, %u new, %u twice, %u never, %u differ\n",
	       what, IDS, THREADS, total, twice, never, differ);
	return twice || never || differ;
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
