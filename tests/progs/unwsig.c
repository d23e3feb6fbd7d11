/*
 * unwsig.c - a signal handler that allocates, interrupting a thread
 * that allocates in a loop: under MEMPROV_UNWIND_CHECK=1 each of the
 * loop's stacks is also taken by libunwind, so the handler often runs
 * while memprov is inside libunwind, where memprov serves allocations
 * from its own arena. The handler's own must still come from the
 * program's allocator and be recorded. Keeps HANDLER (40-byte) blocks
 * made in the handler and 100 48-byte blocks made after the loop, and
 * prints how many of each. The loop maps and unmaps a page rather than
 * calling malloc: a handler's malloc that interrupts glibc's malloc may
 * corrupt its heap (21 of 200 bare runs of a malloc loop crashed).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>

#define HANDLER 200

static void *keep[HANDLER], *after[100];
static volatile int kept;

static void on_prof(int sig)
{
	(void)sig;
	if (kept < HANDLER) {
		keep[kept] = malloc(40);
		kept++;
	}
}

int main(void)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct sigaction sa;
	long i;
	int n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &it, NULL))
		return 2;
	for (i = 0; i < 2000000 && kept < HANDLER; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	for (n = 0; n < 100; n++)
		after[n] = malloc(48);
	printf("handler blocks %d, after %d\n", kept, n);
	return 0;
}
