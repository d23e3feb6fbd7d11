/*
 * turns.c - threads that take turns on one pool of blocks: on its turn a
 * thread frees and allocates blocks at random slots of the pool (blocks
 * other threads allocated among them), then sleeps, then passes the turn
 * on. Run with one malloc arena and no thread cache
 * (MALLOC_ARENA_MAX=1 GLIBC_TUNABLES=glibc.malloc.tcache_count=0), the
 * next thread's first allocations reuse the addresses the last one just
 * freed, often within one tick of the coarse clock: the case where a
 * trace must still order a free before the allocation that reused its
 * address (trace_writer.c, stamp()). The sleep keeps the takeovers under
 * a thousand a second, so the coarse clock stays in use. At the end the
 * pool stays live and the program prints "live_blocks=N live_bytes=B"
 * with write(2), no stdio. Used by t2120-threads.sh.
 *
 *   turns [THREADS [TURNS [OPS]]]     (defaults 2, 300 and 400)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 512

static struct {
	void *p;
	size_t n;
} pool[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn, threads = 2;
static long turns = 300, ops = 400;

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void *worker(void *arg)
{
	int me = (int)(long)arg;
	unsigned seed = 12345u + (unsigned)me * 7919u;
	long t, i;

	for (t = me; t < turns; t += threads) {
		struct timespec nap = { 0, 1000000 };

		pthread_mutex_lock(&lock);
		while (turn != t)
			pthread_cond_wait(&cond, &lock);
		pthread_mutex_unlock(&lock);
		for (i = 0; i < ops; i++) {
			unsigned j = next_rand(&seed) % SLOTS;

			if (pool[j].p) {
				free(pool[j].p);
				pool[j].p = NULL;
			} else {
				pool[j].n = 16 + next_rand(&seed) % 500;
				pool[j].p = malloc(pool[j].n);
				if (!pool[j].p)
					abort();
				memset(pool[j].p, 0, pool[j].n);
			}
		}
		nanosleep(&nap, NULL);
		pthread_mutex_lock(&lock);
		turn = (int)t + 1;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid[64];
	size_t blocks = 0, bytes = 0;
	char out[80];
	int i, n;

	if (argc > 1)
		threads = atoi(argv[1]);
	if (argc > 2)
		turns = atol(argv[2]);
	if (argc > 3)
		ops = atol(argv[3]);
	if (threads < 1 || threads > 64 || turns < 1 || ops < 1) {
		fprintf(stderr, "usage: turns [THREADS(1-64) [TURNS [OPS]]]\n");
		return 2;
	}
	for (i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, (void *)(long)i))
			return 1;
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < SLOTS; i++)
		if (pool[i].p) {
			blocks++;
			bytes += pool[i].n;
		}
	n = snprintf(out, sizeof(out), "live_blocks=%zu live_bytes=%zu\n", blocks, bytes);
	return write(1, out, (size_t)n) == n ? 0 : 1;
}
