/*
 * cachealloc.c - a malloc replacement in the manner of jemalloc, for
 * t2215: its arena is mapped with a raw system call (memprov does not see
 * it), and the arena's first page keeps the last 64 addresses it handed
 * out, as jemalloc's thread cache keeps the regions of a slab it gave
 * away. Those words are the allocator's, not the program's: a block the
 * program dropped is lost, whatever the cache still says. Blocks are cut
 * from the arena and never reused (free only forgets them).
 */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARENA (256ul << 20)
#define CACHE 64
#define HDR 16

static char *arena;
static size_t cut;
static int lock;

struct cache {
	void *recent[CACHE];
	unsigned next;
};

static void take(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void give(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

static void *cut_block(size_t n, size_t align)
{
	char *p = NULL;
	size_t at;

	if (align < HDR)
		align = HDR;
	take();
	if (!arena) {
		long r = syscall(SYS_mmap, 0, ARENA, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		arena = r == -1 ? NULL : (char *)r;
		cut = sizeof(struct cache);
	}
	if (arena) {
		at = (cut + HDR + align - 1) & ~(align - 1);
		if (n <= ARENA - at) {
			struct cache *c = (struct cache *)arena;

			p = arena + at;
			memcpy(p - HDR, &n, sizeof(n));
			cut = at + n;
			c->recent[c->next++ % CACHE] = p;
		}
	}
	give();
	if (!p)
		errno = ENOMEM;
	return p;
}

static size_t size_of(void *p)
{
	size_t n;

	memcpy(&n, (char *)p - HDR, sizeof(n));
	return n;
}

void *malloc(size_t n)
{
	return cut_block(n ? n : 1, HDR);
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t n, size_t m)
{
	if (m && n > SIZE_MAX / m) {
		errno = ENOMEM;
		return NULL;
	}
	return malloc(n * m); /* the arena is fresh: zero */
}

void *realloc(void *p, size_t n)
{
	void *q;
	size_t old;

	if (!p)
		return malloc(n);
	q = malloc(n);
	old = size_of(p);
	if (q)
		memcpy(q, p, old < n ? old : n);
	return q;
}

void *memalign(size_t align, size_t n)
{
	return cut_block(n ? n : 1, align);
}

void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = memalign(align, n);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return memalign(4096, n);
}

size_t malloc_usable_size(void *p)
{
	return p ? size_of(p) : 0;
}
