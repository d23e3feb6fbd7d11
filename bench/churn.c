/*
 * churn.c - allocation churn benchmark for memprov (bench/run.sh).
 *
 *   churn THREADS OPS [SEED]
 *
 * Each of THREADS threads keeps a table of 10,000 live blocks and performs
 * OPS operations; one operation frees a random slot's block and allocates
 * a new one there. Every allocation goes through a 20-deep chain of
 * distinct non-inlined functions chosen by its site number (50 sites, so
 * 50 distinct stacks), and its size is log-uniform between 16 B and
 * 64 KiB (exact sizes, not rounded). One site in ten uses calloc, the rest
 * malloc. Everything is deterministic from SEED (default 1); the program
 * frees all its blocks before it exits and prints only a checksum, which
 * must be the same bare and under any tracer.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH 20
#define SITES 50
#define LIVE 10000

struct walk {
	unsigned site;
	size_t size;
	uint64_t sum;
};

struct worker {
	pthread_t tid;
	uint64_t seed;
	long ops;
	uint64_t sum;
};

typedef void *step_fn(struct walk *w);
static step_fn *const chain[DEPTH][2];

/* Bit of the site number that picks the variant at a level: 50 sites, 50 paths. */
static inline void *next_step(struct walk *w, int level)
{
	if (level == DEPTH) {
		void *p = w->site % 10 == 0 ? calloc(1, w->size) : malloc(w->size);
		if (p)
			memset(p, (int)w->site, w->size < 8 ? w->size : 8);
		return p;
	}
	return chain[level][(w->site >> (level % 6)) & 1](w);
}

/*
 * One function per level and variant. The work after the call keeps the
 * compiler from turning it into a tail call, so every frame stays on the
 * stack.
 */
#define STEP(n, v)                                                   \
	static __attribute__((noinline)) void *step_##n##_##v(struct walk *w) \
	{                                                            \
		void *p = next_step(w, n + 1);                       \
		w->sum += (uint64_t)(n * 2 + v);                     \
		__asm__ volatile("" : : "r"(p) : "memory");          \
		return p;                                            \
	}
#define LEVEL(n) STEP(n, 0) STEP(n, 1)
LEVEL(0) LEVEL(1) LEVEL(2) LEVEL(3) LEVEL(4) LEVEL(5) LEVEL(6) LEVEL(7)
LEVEL(8) LEVEL(9) LEVEL(10) LEVEL(11) LEVEL(12) LEVEL(13) LEVEL(14)
LEVEL(15) LEVEL(16) LEVEL(17) LEVEL(18) LEVEL(19)

#define ROW(n) { step_##n##_0, step_##n##_1 }
static step_fn *const chain[DEPTH][2] = {
	ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7),
	ROW(8), ROW(9), ROW(10), ROW(11), ROW(12), ROW(13), ROW(14),
	ROW(15), ROW(16), ROW(17), ROW(18), ROW(19),
};

/* xorshift64*: small, fast, deterministic. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Log-uniform in [16, 65536): an octave 16<<k, then uniform inside it. */
static size_t pick_size(uint64_t r)
{
	size_t base = (size_t)16 << (r % 12);

	return base + (size_t)((r >> 8) % base);
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	void **slot = calloc(LIVE, sizeof(*slot));
	uint64_t s = wk->seed;
	struct walk w = { 0, 0, 0 };
	long i;

	if (!slot) {
		perror("churn: calloc");
		exit(1);
	}
	for (i = 0; i < wk->ops; i++) {
		uint64_t r = rng_next(&s);
		unsigned k = (unsigned)(r % LIVE);

		free(slot[k]);
		r = rng_next(&s);
		w.site = (unsigned)(r % SITES);
		w.size = pick_size(r >> 6);
		slot[k] = chain[0][w.site & 1](&w);
		if (!slot[k]) {
			perror("churn: malloc");
			exit(1);
		}
		w.sum += w.size ^ ((unsigned char *)slot[k])[0];
	}
	for (i = 0; i < LIVE; i++)
		free(slot[i]);
	free(slot);
	wk->sum = w.sum;
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *wk;
	uint64_t seed = 1, sum = 0;
	long threads, ops, t;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: churn THREADS OPS [SEED]\n");
		return 2;
	}
	threads = strtol(argv[1], NULL, 10);
	ops = strtol(argv[2], NULL, 10);
	if (argc == 4)
		seed = strtoull(argv[3], NULL, 10);
	if (threads < 1 || threads > 256 || ops < 0) {
		fprintf(stderr, "churn: THREADS must be 1..256 and OPS >= 0\n");
		return 2;
	}
	wk = calloc((size_t)threads, sizeof(*wk));
	if (!wk)
		return 1;
	for (t = 0; t < threads; t++) {
		wk[t].seed = (seed + 1) * 0x9e3779b97f4a7c15ull + (uint64_t)t * 7919;
		wk[t].ops = ops;
		if (pthread_create(&wk[t].tid, NULL, worker_main, &wk[t])) {
			fprintf(stderr, "churn: cannot create thread %ld\n", t);
			return 1;
		}
	}
	for (t = 0; t < threads; t++) {
		pthread_join(wk[t].tid, NULL);
		sum = sum * 31 + wk[t].sum;
	}
	free(wk);
	printf("%016llx\n", (unsigned long long)sum);
	return 0;
}
