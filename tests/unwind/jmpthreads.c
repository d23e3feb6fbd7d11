/*
 * jmpthreads.c - setjmp/longjmp out of allocating frames, threads on
 * glibc's stacks and on a caller-provided stack, and code built with
 * -O2 -fomit-frame-pointer (rsp-based CFA) and alloca (rbp-based CFA),
 * for t2020-unwind.sh.
 *   jmpthreads    prints "ok"; leaks 3 threads x 50 blocks of 48 bytes
 */
#include <alloca.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf env;
static void *volatile sink;

static __attribute__((noinline)) void deep(int n)
{
	char *a = alloca(16 + (size_t)n * 16); /* rbp-based CFA */

	if (n > 100)
		return;
	memset(a, n, 16);
	sink = malloc(16 + (size_t)a[0]);
	free(sink);
	if (n <= 0)
		longjmp(env, 1);
	else
		deep(n - 1);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void *leaf(int i)
{
	return malloc(48 + 0 * (size_t)i);
}

static __attribute__((noinline)) void *work(void *arg)
{
	void **keep = arg;
	volatile int i;

	for (i = 0; i < 50; i++)
		keep[i] = leaf(i);
	for (i = 0; i < 20; i++) {
		if (!setjmp(env) && i >= 0)
			deep(i % 7);
	}
	return NULL;
}

int main(void)
{
	static void *keep[3][50];
	static char stack[256 * 1024] __attribute__((aligned(64)));
	pthread_attr_t attr;
	pthread_t t[2];

	work(keep[0]); /* main thread: env is used by one thread at a time */
	pthread_create(&t[0], NULL, work, keep[1]);
	pthread_join(t[0], NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, stack, sizeof(stack));
	pthread_create(&t[1], &attr, work, keep[2]);
	pthread_join(t[1], NULL);
	printf("ok\n");
	return 0;
}
