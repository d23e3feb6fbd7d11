/*
 * small_stacks - allocations made on the smallest stacks a program may
 * give its code: memprov's capture runs on them too.
 *
 *   small_stacks threads [own]   8 threads, one after another, each on a
 *                                PTHREAD_STACK_MIN (16 KiB) stack (own:
 *                                one the program allocated), 1,000
 *                                malloc/free each
 *   small_stacks altstack SIZE   a SIGUSR1 handler on a SIZE-byte
 *                                alternate stack mallocs and frees, 1,000
 *                                times; then how much of it was used
 *   small_stacks deep ROOM       a thread on a PTHREAD_STACK_MIN stack
 *                                recurses, mallocing at each level, until
 *                                under ROOM bytes are left; there 1,000
 *                                malloc/free pairs; then one 777-byte
 *                                block leaked from the top (deep_leak);
 *                                stderr: the levels and how much stack
 *                                the deepest allocations used
 *
 * Prints what it did; exit 0.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;
static volatile long hits;

static void *worker(void *arg)
{
	long n = 0;
	int i;

	(void)arg;
	for (i = 0; i < 1000; i++) {
		sink = malloc(16 + (size_t)(i % 300));
		free(sink);
		n++;
	}
	return (void *)n;
}

static int threads(int own)
{
	long total = 0;
	int r;

	for (r = 0; r < 8; r++) {
		pthread_attr_t at;
		pthread_t t;
		void *stk = NULL, *res;

		pthread_attr_init(&at);
		if (own) {
			stk = aligned_alloc(4096, PTHREAD_STACK_MIN);
			pthread_attr_setstack(&at, stk, PTHREAD_STACK_MIN);
		} else {
			pthread_attr_setstacksize(&at, PTHREAD_STACK_MIN);
		}
		if (pthread_create(&t, &at, worker, NULL)) {
			printf("pthread_create failed\n");
			return 1;
		}
		pthread_join(t, &res);
		pthread_attr_destroy(&at);
		total += (long)res;
		free(stk);
	}
	printf("8 threads on %d-byte stacks: %ld allocations\n", (int)PTHREAD_STACK_MIN, total);
	return 0;
}

static void handler(int sig)
{
	(void)sig;
	sink = malloc(64);
	free(sink);
	hits++;
}

static int altstack(size_t size)
{
	unsigned char *st = malloc(size);
	stack_t ss = { .ss_sp = st, .ss_size = size, .ss_flags = 0 };
	struct sigaction sa;
	size_t untouched = 0;
	int i;

	memset(st, 0xaa, size);
	if (sigaltstack(&ss, NULL)) {
		perror("sigaltstack");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < 1000; i++)
		raise(SIGUSR1);
	while (untouched < size && st[untouched] == 0xaa)
		untouched++;
	printf("handler ran %ld times on a %zu-byte alternate stack\n", hits, size);
	fprintf(stderr, "used %zu bytes of it\n", size - untouched);
	return 0;
}

struct level {
	struct level *up;
	char data[40];
};

static uintptr_t deep_lo;
static size_t deep_room;
static long deep_levels;
static size_t deep_used;

/* The bottom: pairs of malloc/free with the stack below filled with a
 * pattern, then how far down the pattern was overwritten. */
static __attribute__((noinline)) void bottom(void)
{
	volatile char here;
	unsigned char *lo = (unsigned char *)deep_lo;
	size_t fill = (size_t)((uintptr_t)&here - deep_lo) - 160, i = 0;
	int k;

	memset(lo, 0xaa, fill);
	for (k = 0; k < 1000; k++) {
		sink = malloc(8 + (size_t)(k % 500));
		free(sink);
	}
	while (i < fill && lo[i] == 0xaa)
		i++;
	deep_used = (size_t)((uintptr_t)&here - (deep_lo + i));
}

static __attribute__((noinline)) long descend(struct level *up)
{
	volatile char pad[96];
	struct level *l;
	long n;

	pad[0] = 1;
	if ((uintptr_t)pad - deep_lo < deep_room) {
		bottom();
		return 0;
	}
	l = malloc(sizeof(*l));
	if (!l)
		return -1;
	l->up = up;
	deep_levels++;
	n = descend(l);
	free(l);
	return pad[0] == 1 ? n : -1;
}

static __attribute__((noinline)) void deep_leak(void)
{
	sink = malloc(777);
	memset(sink, 1, 777);
}

static void *deep_worker(void *arg)
{
	pthread_attr_t at;
	void *addr;
	size_t size;

	(void)arg;
	if (pthread_getattr_np(pthread_self(), &at) || pthread_attr_getstack(&at, &addr, &size))
		return (void *)-1L;
	pthread_attr_destroy(&at);
	deep_lo = (uintptr_t)addr;
	deep_leak();
	free(malloc(1)); /* free's lazy binding, up here: 1.5 KiB of stack */
	return (void *)descend(NULL);
}

static int deep(size_t room)
{
	pthread_attr_t at;
	pthread_t t;
	void *res;

	deep_room = room;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, PTHREAD_STACK_MIN);
	if (pthread_create(&t, &at, deep_worker, NULL)) {
		printf("pthread_create failed\n");
		return 1;
	}
	pthread_join(t, &res);
	printf("recursed on a %d-byte stack to under %zu bytes left: %s\n", (int)PTHREAD_STACK_MIN,
	       room, res ? "failed" : "1,000 allocations there");
	fprintf(stderr, "%ld levels; the deepest allocations used %zu bytes of stack\n",
		deep_levels, deep_used);
	return res != NULL;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "threads"))
		return threads(argc > 2);
	if (argc == 3 && !strcmp(argv[1], "altstack"))
		return altstack(strtoul(argv[2], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "deep"))
		return deep(strtoul(argv[2], NULL, 0));
	fprintf(stderr, "usage: small_stacks threads [own] | altstack SIZE | deep ROOM\n");
	return 2;
}
