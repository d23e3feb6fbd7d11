/*
 * lockalloc.c - liblockalloc.so, for t2020-unwind.sh with
 * tests/progs/unwlock.c: a malloc of a library's own (preloaded after
 * libmemprov.so), or of the executable's (uw-lockexe, as rustc's jemalloc
 * is built into rustc), that
 * counts the calls made while lockalloc_holding says its lock is held. A
 * real allocator would wait on that lock for good.
 */
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

int lockalloc_holding;  /* set by the program around its mmap */
int lockalloc_reentered;

static void entered(void)
{
	if (__atomic_load_n(&lockalloc_holding, __ATOMIC_RELAXED))
		__atomic_add_fetch(&lockalloc_reentered, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
	entered();
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	entered();
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	entered();
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}
