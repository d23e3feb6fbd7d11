/*
 * oneshot_race.c - a worker thread takes SIGUSR1 through a handler
 * installed with SA_RESETHAND; the main thread installs it again as soon
 * as the handler has started, then reads it back. memprov, putting its
 * death recorder back as the handler returned, overwrote a handler the
 * main thread had just installed (the next signal killed the process).
 * Prints "iterations=N lost=K" (K: times the handler was not there when
 * read back) and exits 0 (t2142).
 *
 *   oneshot_race [N]
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int started, spin;

static void handler(int sig)
{
	int i;

	(void)sig;
	__atomic_store_n(&started, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < spin; i++)
		__asm__ volatile("" ::: "memory");
}

static void arm(void)
{
	struct sigaction a;

	memset(&a, 0, sizeof(a));
	sigemptyset(&a.sa_mask);
	a.sa_handler = handler;
	a.sa_flags = SA_RESETHAND;
	sigaction(SIGUSR1, &a, NULL);
}

static void *worker_main(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000, lost = 0, i;
	pthread_t worker;
	sigset_t s;

	arm();
	if (pthread_create(&worker, NULL, worker_main, NULL))
		return 2;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL); /* the worker takes them all */
	for (i = 0; i < n; i++) {
		struct sigaction o;

		started = 0;
		spin = (i * 7) % 3000;
		pthread_kill(worker, SIGUSR1);
		while (!__atomic_load_n(&started, __ATOMIC_SEQ_CST))
			;
		arm();
		usleep(50);
		sigaction(SIGUSR1, NULL, &o);
		if (o.sa_handler != handler) {
			lost++;
			arm();
		}
	}
	printf("iterations=%d lost=%d\n", n, lost);
	return 0;
}
