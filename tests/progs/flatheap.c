/*
 * flatheap.c - a flat heap under heavy churn, for t2145's footprint test:
 * each of THREADS threads keeps 2,000 live blocks of 16 B-1 KiB and
 * replaces one at random OPS times (a free, then a malloc of another
 * size), so the heap stays the same size while the trace takes millions
 * of records; the blocks stay live to the end (no drop of tracked memory
 * for a resident-memory check to see). Main calls memprov_mark("begin")
 * once every thread holds its blocks, and memprov_mark("end") when every
 * thread is done but still alive (when memprov is there: the trace samples
 * its RSS at each mark), then prints its own resident size at each:
 *
 *   flatheap THREADS OPS   ->   "begin N", "rss N" (bytes, /proc/self/statm,
 *                                at the two marks), "trace N" (bytes of
 *                                memprov's trace mapped, /proc/self/smaps,
 *                                at the end mark), a checksum
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIVE 2000

void memprov_mark(const char *label) __attribute__((weak));

static long ops;
static pthread_barrier_t ready, done, go;

static void *worker(void *arg)
{
	uint64_t s = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1, sum = 0;
	static __thread void *live[LIVE];
	long i;

	for (i = 0; i < LIVE; i++)
		live[i] = malloc(16 + i % 1009);
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&ready);
	for (i = 0; i < ops; i++) {
		unsigned k;

		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		k = (unsigned)(s % LIVE);
		free(live[k]);
		live[k] = malloc(16 + (s >> 20) % 1009);
		if (!live[k])
			abort();
		memset(live[k], 1, 8);
		sum += (uintptr_t)live[k] & 0xff;
	}
	pthread_barrier_wait(&done);
	pthread_barrier_wait(&go);
	return (void *)(uintptr_t)(sum | 1); /* the blocks stay live to the end */
}

/* The resident bytes of the mappings of files named *.trace (memprov's). */
static unsigned long trace_resident(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long kb, sum = 0;
	int in_trace = 0;

	while (f && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (strchr(line, '-') && strchr(line, ' ') > strchr(line, '-'))
			in_trace = n > 7 && !strcmp(line + n - 7, ".trace\n");
		else if (in_trace && sscanf(line, "Rss: %lu kB", &kb) == 1)
			sum += kb;
	}
	if (f)
		fclose(f);
	return sum * 1024;
}

static unsigned long resident(void)
{
	unsigned long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f && fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	if (f)
		fclose(f);
	return res * (unsigned long)sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
	pthread_t th[8];
	int n = argc > 2 ? atoi(argv[1]) : 1, i;
	uint64_t sum = 0;
	unsigned long begin;

	ops = argc > 2 ? atol(argv[2]) : 1000;
	if (n < 1 || n > 8)
		return 2;
	pthread_barrier_init(&ready, NULL, (unsigned)n + 1);
	pthread_barrier_init(&done, NULL, (unsigned)n + 1);
	pthread_barrier_init(&go, NULL, (unsigned)n + 1);
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	pthread_barrier_wait(&ready);
	if (memprov_mark)
		memprov_mark("begin");
	begin = resident();
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&done);
	if (memprov_mark)
		memprov_mark("end");
	printf("begin %lu\nrss %lu\n", begin, resident());
	printf("trace %lu\n", trace_resident());
	pthread_barrier_wait(&go);
	for (i = 0; i < n; i++) {
		void *r;

		pthread_join(th[i], &r);
		sum += (uintptr_t)r;
	}
	printf("flatheap %d threads %ld ops: %llx\n", n, ops, (unsigned long long)sum);
	return 0;
}
