/*
 * churn.c - 8 threads x 100,000 mixed operations (malloc, calloc, realloc,
 * free), with blocks handed to other threads through a mutex-protected
 * queue and freed there. Deterministic per-thread PRNG. At the end the
 * program counts what it still holds (slots and queue), leaves it all
 * live, and prints "live_blocks=N live_bytes=B" with write(2), no stdio.
 * Used by t2120-threads.sh.
 *
 *   churn [THREADS [OPS]]     (defaults 8 and 100000)
 *
 * THREADS 0 runs one worker's operations in the main thread, which then
 * is the only thread that ever allocates.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 64
#define QCAP 4096

struct block {
	void *p;
	size_t n;
};

static struct block queue[QCAP];
static size_t q_head, q_len;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
/* all threads exist at once: glibc gives each its own bookkeeping */
static pthread_barrier_t start;

struct worker {
	pthread_t t;
	unsigned seed;
	long ops;
	struct block slot[SLOTS];
};

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static int q_push(struct block b)
{
	int ok = 0;

	pthread_mutex_lock(&q_lock);
	if (q_len < QCAP) {
		queue[(q_head + q_len) % QCAP] = b;
		q_len++;
		ok = 1;
	}
	pthread_mutex_unlock(&q_lock);
	return ok;
}

static int q_pop(struct block *b)
{
	int ok = 0;

	pthread_mutex_lock(&q_lock);
	if (q_len) {
		*b = queue[q_head];
		q_head = (q_head + 1) % QCAP;
		q_len--;
		ok = 1;
	}
	pthread_mutex_unlock(&q_lock);
	return ok;
}

static __attribute__((noinline)) void *churn_malloc(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) void *churn_calloc(size_t n)
{
	return calloc(1, n);
}

static __attribute__((noinline)) void *churn_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

static void one_op(struct worker *w)
{
	unsigned r = next_rand(&w->seed);
	struct block *s = &w->slot[r % SLOTS];
	size_t n = 1 + (next_rand(&w->seed) % 512);
	struct block b;

	switch ((r / SLOTS) % 6) {
	case 0:
	case 1:
		if (s->p)
			free(s->p);
		s->p = (r & 1) ? churn_malloc(n) : churn_calloc(n);
		s->n = n;
		break;
	case 2:
		if (s->p) {
			void *q = churn_realloc(s->p, n);
			if (q) {
				s->p = q;
				s->n = n;
			}
		}
		break;
	case 3:
		free(s->p);
		s->p = NULL;
		s->n = 0;
		break;
	case 4:		/* hand our block to whoever pops it */
		if (s->p && q_push(*s)) {
			s->p = NULL;
			s->n = 0;
		}
		break;
	case 5:		/* free a block another thread allocated */
		if (q_pop(&b))
			free(b.p);
		break;
	}
}

static void *run(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&start);
	for (long i = 0; i < w->ops; i++)
		one_op(w);
	return NULL;
}

int main(int argc, char **argv)
{
	int nt = argc > 1 ? atoi(argv[1]) : 8;
	int in_main = nt == 0;
	long ops = argc > 2 ? atol(argv[2]) : 100000;
	struct worker *w;
	size_t blocks = 0, bytes = 0;
	char line[128];
	int len;

	if (in_main)
		nt = 1;
	w = calloc(nt, sizeof(*w));
	if (!w || nt < 1 || pthread_barrier_init(&start, NULL, nt))
		return 2;
	for (int i = 0; i < nt; i++) {
		w[i].seed = 7919u * (i + 1);
		w[i].ops = ops;
		if (in_main) {
			run(&w[i]);
			break;
		}
		if (pthread_create(&w[i].t, NULL, run, &w[i]))
			return 2;
	}
	for (int i = 0; i < nt && !in_main; i++)
		pthread_join(w[i].t, NULL);
	for (int i = 0; i < nt; i++)
		for (int j = 0; j < SLOTS; j++)
			if (w[i].slot[j].p) {
				blocks++;
				bytes += w[i].slot[j].n;
			}
	for (size_t k = 0; k < q_len; k++) {
		blocks++;
		bytes += queue[(q_head + k) % QCAP].n;
	}
	/* the worker array itself stays live too */
	blocks++;
	bytes += nt * sizeof(*w);
	len = snprintf(line, sizeof(line), "live_blocks=%zu live_bytes=%zu\n", blocks, bytes);
	write(1, line, len);
	return 0;
}
