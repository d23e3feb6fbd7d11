/*
 * forkrep.c - for t2310, under cachealloc.c's malloc replacement: a
 * thread maps and unmaps 2 MiB blocks (the replacement's mappings, made
 * under its lock) while the main thread forks 50 times. The replacement
 * holds its lock across fork; memprov held its table's lock across fork
 * too, taken first, and the thread mapping under the replacement's lock
 * waited for memprov's: the fork waited for ever. Prints "forkrep 50".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;

static void *worker(void *arg)
{
	(void)arg;
	while (!stop)
		free(malloc(2u << 20));
	return NULL;
}

int main(void)
{
	pthread_t t;
	int i, done = 0;

	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	usleep(10000);
	for (i = 0; i < 50; i++) {
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		if (p > 0 && waitpid(p, NULL, 0) == p)
			done++;
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("forkrep %d\n", done);
	return 0;
}
