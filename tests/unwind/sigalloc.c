/*
 * sigalloc.c - allocations inside signal handlers, for t2020-unwind.sh:
 * the walk meets the kernel's signal frame (__restore_rt), which the
 * simple rules cannot cross, so each of these captures falls back to
 * libunwind. 10 allocations in a handler on the normal stack and 10 on
 * a sigaltstack, each freed; 10 plain ones in main, leaked.
 *   sigalloc      prints "ok"
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void handler(int sig)
{
	void *p = malloc(100 + (size_t)sig);

	if (p)
		memset(p, 0, 8);
	free(p);
}

static __attribute__((noinline)) void leak_one(int i, void **keep)
{
	keep[i] = malloc(32);
}

int main(void)
{
	static char alt[65536];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	struct sigaction sa;
	void *keep[10];
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	if (sigaltstack(&ss, NULL))
		return 1;
	for (i = 0; i < 10; i++) {
		raise(SIGUSR1);
		raise(SIGUSR2);
		leak_one(i, keep);
	}
	printf("ok\n");
	return 0;
}
