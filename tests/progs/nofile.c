/*
 * nofile.c - a program that lowers its descriptor limit to the three it
 * has (RLIMIT_NOFILE 3, as sshd's pre-authentication child lowers it),
 * then runs 4 threads that churn and keep a block each (thr), and tries
 * dlopen and fopen, which fail as they would bare. Prints what failed.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static void *keep[5];

static void *thr(void *arg)
{
	int i;

	for (i = 0; i < 50000; i++)
		free(malloc((size_t)(i % 2000 + 1)));
	keep[(long)arg] = malloc(100);
	return NULL;
}

int main(void)
{
	struct rlimit three = { 3, 3 };
	pthread_t t[4];
	FILE *f;
	void *h;
	long i;

	keep[4] = malloc(555);
	if (setrlimit(RLIMIT_NOFILE, &three)) {
		perror("setrlimit");
		return 2;
	}
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, thr, (void *)i);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	h = dlopen("libm.so.6", RTLD_NOW);
	printf("dlopen %s\n", h ? "ok" : "failed");
	f = fopen("/etc/hostname", "r");
	printf("fopen %s\n", f ? "ok" : "failed");
	return 0;
}
