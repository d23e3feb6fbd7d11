/*
 * memo.c - walks that repeat, for t2020-unwind.sh: the walk's memo
 * (unwind.c) replays a thread's walk when its start and every stack word
 * it read are the same. Three threads and main allocate from two sites,
 * each reached through chains of different depths and callers (one start,
 * several walks), thousands of times; a timer's handler maps memory on
 * every thread it interrupts (a walk inside a walk through the memo, and
 * one across a signal frame). Each thread keeps its last 8 blocks, leaked
 * at exit, so that the leak report names the sites.
 *   memo N      N allocations a thread; prints "memo ok"
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>

#define KEEP 8

static long n_allocs;

/* mmap, not malloc: async-signal-safe, and hooked all the same (a handler
 * that called malloc deadlocked on the arena lock it had interrupted) */
static void on_alarm(int sig)
{
	void *p = mmap(NULL, 4096 * (size_t)(sig & 1 ? 1 : 2), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		munmap(p, 4096 * (size_t)(sig & 1 ? 1 : 2));
}

static __attribute__((noinline)) void *site_a(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) void *site_b(size_t n)
{
	return calloc(1, n);
}

static __attribute__((noinline)) void *down(int depth, int i);

static __attribute__((noinline)) void *left(int depth, int i)
{
	void *p = down(depth - 1, i);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static __attribute__((noinline)) void *right(int depth, int i)
{
	void *p = down(depth - 1, i / 3);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static __attribute__((noinline)) void *down(int depth, int i)
{
	if (depth <= 0)
		return i & 1 ? site_a(32 + (size_t)(i & 7) * 8) : site_b(24);
	return (i >> depth) & 1 ? left(depth, i) : right(depth, i);
}

static void *work(void *arg)
{
	void *keep[KEEP] = { 0 };
	long i;

	(void)arg;
	for (i = 0; i < n_allocs; i++) {
		void *p = down(2 + (int)(i % 3), (int)(i % 6));

		free(keep[i % KEEP]);
		keep[i % KEEP] = p;
	}
	/* the last KEEP blocks: leaked, no pointer left but on this stack */
	memset(keep, 0, sizeof(keep));
	return NULL;
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	struct sigaction sa;
	pthread_t t[3];
	int i;

	n_allocs = argc > 1 ? atol(argv[1]) : 20000;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, work, NULL))
			return 1;
	work(NULL);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("memo ok\n");
	return 0;
}
