/*
 * libc_edge.c - one malloc-family edge case per mode (argv[1]), each
 * leaving an exactly known heap live at exit; compared against valgrind
 * and known figures by t2110-valgrind-agree.sh. No stdio. The figures
 * in the comments are what is live at exit from this program's own calls
 * (thread modes add glibc's per-thread bookkeeping, which valgrind with
 * --run-libc-freeres=no counts too).
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile sink[16];
static volatile size_t huge = SIZE_MAX / 2;

/* realloc(p, 0) frees p on glibc and returns NULL. Live: 30 B in 1 block. */
static int m_realloc0(void)
{
	void *p = malloc(50);
	void *q = malloc(30);

	sink[0] = realloc(p, 0);
	sink[1] = q;
	return 0;
}

/* memalign: 2 blocks kept (100 + 200), one freed (300). Live: 300 B / 2. */
static int m_memalign(void)
{
	sink[0] = memalign(64, 100);
	sink[1] = memalign(4096, 200);
	free(memalign(128, 300));
	return 0;
}

/* pvalloc (valgrind aborts on it): 1 kept, asked 100; 1 freed. */
static int m_pvalloc(void)
{
	sink[0] = pvalloc(100);
	free(pvalloc(5000));
	return 0;
}

/* valloc: kept 100 + 5000, freed 70. Live: 5100 B / 2. */
static int m_valloc(void)
{
	sink[0] = valloc(100);
	sink[1] = valloc(5000);
	free(valloc(70));
	return 0;
}

/* aligned_alloc: kept 128 (align 64) + 4096 (align 4096). Live: 4224 B / 2. */
static int m_aligned_alloc(void)
{
	sink[0] = aligned_alloc(64, 128);
	sink[1] = aligned_alloc(4096, 4096);
	free(aligned_alloc(32, 64));
	return 0;
}

/* posix_memalign: kept 100 + 1000, freed 50; a bad alignment fails.
 * Live: 1100 B / 2. */
static int m_posix_memalign(void)
{
	void *p = NULL, *q = NULL, *r = NULL, *bad = NULL;

	if (posix_memalign(&p, 32, 100) || posix_memalign(&q, 256, 1000) ||
	    posix_memalign(&r, 16, 50))
		return 2;
	free(r);
	if (posix_memalign(&bad, 3, 10) == 0)	/* not a power of two: EINVAL */
		return 3;
	sink[0] = p;
	sink[1] = q;
	return 0;
}

/* calloc overflow fails (NULL); nothing live from it. Live: 40 B / 1. */
static int m_calloc_overflow(void)
{
	sink[0] = calloc(huge, 4);
	if (sink[0])
		return 2;
	sink[1] = calloc(4, 10);
	return 0;
}

/* reallocarray overflow fails and leaves p as it was. Live: 64 B / 1.
 * Then a good reallocarray moves q 16 -> 3*40. Live: 184 B / 2. */
static int m_reallocarray_overflow(void)
{
	void *p = malloc(64);
	void *q = malloc(16);

	if (reallocarray(p, huge, 4))
		return 2;
	sink[0] = p;
	sink[1] = reallocarray(q, 3, 40);
	return 0;
}

/* Huge malloc fails. Live: 0 B / 0. */
static int m_hugefail(void)
{
	sink[0] = malloc(huge);
	sink[1] = malloc(huge * 2 + 1);	/* SIZE_MAX */
	return sink[0] || sink[1] ? 2 : 0;
}

static void *thr_body(void *arg)
{
	size_t n = (size_t)(uintptr_t)arg;
	void *a = malloc(10 * n);
	void *b = calloc(n, 20);
	void *c = malloc(1000);

	free(c);
	a = realloc(a, 100 * n);
	free(b);
	return a;	/* handed to main, which keeps it: 100*n bytes */
}

/* 4 threads; each leaves 100*n (n = 1..4) to main. Program's own: 1000 B / 4. */
static int m_threads(void)
{
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, thr_body, (void *)(uintptr_t)(i + 1)))
			return 2;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], (void **)&sink[i]);
	return 0;
}

static pthread_key_t key_free, key_keep;

extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso);
extern void *__dso_handle;

static void *tls_body(void *arg)
{
	(void)arg;
	pthread_setspecific(key_free, malloc(64));	/* freed by its destructor */
	pthread_setspecific(key_keep, malloc(32));	/* no destructor: leaks */
	__cxa_thread_atexit_impl(free, malloc(48), &__dso_handle); /* freed */
	return NULL;
}

/* 2 threads with TLS destructors that free at thread exit.
 * Program's own live: 2 * 32 = 64 B / 2. */
static int m_tlsdtor(void)
{
	pthread_t t[2];

	if (pthread_key_create(&key_free, free) || pthread_key_create(&key_keep, NULL))
		return 2;
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, tls_body, NULL))
			return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
} modes[] = {
	{ "realloc0", m_realloc0 },
	{ "memalign", m_memalign },
	{ "pvalloc", m_pvalloc },
	{ "valloc", m_valloc },
	{ "aligned_alloc", m_aligned_alloc },
	{ "posix_memalign", m_posix_memalign },
	{ "calloc_overflow", m_calloc_overflow },
	{ "reallocarray_overflow", m_reallocarray_overflow },
	{ "hugefail", m_hugefail },
	{ "threads", m_threads },
	{ "tlsdtor", m_tlsdtor },
};

int main(int argc, char **argv)
{
	for (size_t i = 0; argc > 1 && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(argv[1], modes[i].name))
			return modes[i].fn();
	write(2, "usage: libc_edge MODE\n", 22);
	return 64;
}
