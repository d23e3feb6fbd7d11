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
 *
 * Prints what it did; exit 0.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
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

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "threads"))
		return threads(argc > 2);
	if (argc == 3 && !strcmp(argv[1], "altstack"))
		return altstack(strtoul(argv[2], NULL, 0));
	fprintf(stderr, "usage: small_stacks threads [own] | altstack SIZE\n");
	return 2;
}
