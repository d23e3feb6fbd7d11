/*
 * cachealloc.c - a malloc replacement in the manner of jemalloc, for
 * t2310: its regions are cut from an arena it maps on first use, a
 * request of 1 MiB or more gets a mapping of its own, and its metadata
 * (the arena's bounds and a cache of the last 64 regions handed out or
 * freed, as jemalloc's thread cache keeps them) lies in a third mapping.
 * All three are mapped with mmap, through the preload object's hook,
 * under its lock, which it holds across fork (pthread_atfork). A
 * region is never reused and keeps its bytes when freed: the arena and
 * the cache hold pointers to blocks the program dropped.
 * It defines jemalloc's mallocx, rallocx, xallocx, sdallocx and dallocx
 * (flags ignored; xallocx never grows), and mmap and munmap as well, as
 * tcmalloc does (for its hooks):
 * the object memprov's mmap forwards to is then not libc's.
 * cachealloc_pool maps a page for its caller, outside any allocation
 * call: memory of the program's, as a library that defines malloc and
 * maps memory for other ends gives it.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARENA (64u << 20)
#define BIG (1u << 20)
#define CACHE 64
#define HDR 16 /* before each region: its size, bit 0 set for a mapping of its own */

struct meta {
	void *cache[CACHE];
	unsigned long n;
	char *arena, *top;
};

static struct meta *m;

void *mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, a, len, prot, flags, fd, off);
}

int munmap(void *a, size_t len)
{
	return (int)syscall(SYS_munmap, a, len);
}
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void take(void)
{
	pthread_mutex_lock(&lock);
}

static void give(void)
{
	pthread_mutex_unlock(&lock);
}

/* held across fork, as jemalloc and tcmalloc hold theirs */
__attribute__((constructor)) static void at_load(void)
{
	pthread_atfork(take, give, give);
}

static int setup(void)
{
	void *a;

	if (m)
		return 0;
	a = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return -1;
	m = a;
	a = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return -1;
	m->arena = m->top = a;
	return 0;
}

static size_t page_up(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

static void *get(size_t n, size_t al)
{
	size_t sz = (n + 15) & ~(size_t)15;
	uintptr_t p;

	if (al < HDR)
		al = HDR;
	if (n >= BIG) { /* mapped under the lock, as jemalloc grows its heap under one */
		char *q;

		take();
		q = mmap(NULL, page_up(sz + al), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		give();
		if (q == MAP_FAILED) {
			errno = ENOMEM;
			return NULL;
		}
		p = ((uintptr_t)q + HDR + al - 1) & ~(uintptr_t)(al - 1);
		((size_t *)p)[-2] = sz | 1;
		((size_t *)p)[-1] = (size_t)(p - (uintptr_t)q);
		return (void *)p;
	}
	take();
	if (setup()) {
		give();
		errno = ENOMEM;
		return NULL;
	}
	p = ((uintptr_t)m->top + HDR + al - 1) & ~(uintptr_t)(al - 1);
	if (p + sz > (uintptr_t)m->arena + ARENA) {
		give();
		errno = ENOMEM;
		return NULL;
	}
	m->top = (char *)(p + sz);
	((size_t *)p)[-2] = sz;
	m->cache[m->n++ % CACHE] = (void *)p;
	give();
	return (void *)p;
}

void *malloc(size_t n)
{
	return get(n, 0);
}

static void put(void *q)
{
	size_t h;

	if (!q)
		return;
	h = ((size_t *)q)[-2];
	if (h & 1) {
		char *base = (char *)q - ((size_t *)q)[-1];

		take();
		munmap(base, page_up((h & ~(size_t)1) + ((size_t *)q)[-1]));
		give();
		return;
	}
	take();
	m->cache[m->n++ % CACHE] = q;
	give();
}

void free(void *q)
{
	put(q);
}

size_t malloc_usable_size(void *q)
{
	return q ? ((size_t *)q)[-2] & ~(size_t)1 : 0;
}

void *calloc(size_t n, size_t k)
{
	void *p;

	if (k && n > (size_t)-1 / k) {
		errno = ENOMEM;
		return NULL;
	}
	p = get(n * k, 0);
	if (p)
		memset(p, 0, n * k);
	return p;
}

static void *resize(void *q, size_t n)
{
	void *p;
	size_t old;

	if (!q)
		return get(n, 0);
	p = get(n, 0);
	if (!p)
		return NULL;
	old = malloc_usable_size(q);
	memcpy(p, q, old < n ? old : n);
	put(q);
	return p;
}

void *realloc(void *q, size_t n)
{
	return resize(q, n);
}

int posix_memalign(void **out, size_t al, size_t n)
{
	void *p = get(n, al);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t al, size_t n)
{
	return get(n, al);
}

void *memalign(size_t al, size_t n)
{
	return get(n, al);
}

void *valloc(size_t n)
{
	return get(n, 4096);
}

void *pvalloc(size_t n)
{
	return get(page_up(n), 4096);
}

void *mallocx(size_t n, int flags);
void *rallocx(void *q, size_t n, int flags);
size_t xallocx(void *q, size_t n, size_t extra, int flags);
void sdallocx(void *q, size_t n, int flags);
void dallocx(void *q, int flags);

void *mallocx(size_t n, int flags)
{
	(void)flags;
	return get(n, 0);
}

void *rallocx(void *q, size_t n, int flags)
{
	(void)flags;
	return resize(q, n); /* not through the exported realloc, as jemalloc's own */
}

size_t xallocx(void *q, size_t n, size_t extra, int flags)
{
	(void)n;
	(void)extra;
	(void)flags;
	return malloc_usable_size(q);
}

void sdallocx(void *q, size_t n, int flags)
{
	(void)n;
	(void)flags;
	put(q);
}

void dallocx(void *q, int flags)
{
	(void)flags;
	put(q);
}

void **cachealloc_pool(void);

void **cachealloc_pool(void)
{
	void **p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}
