/*
 * fakealloc.cc - a malloc replacement in the manner of jemalloc or
 * tcmalloc, for t2310: it defines the malloc family and C++'s operator
 * new and delete, and its operators allocate without calling malloc
 * (glibc's __libc_* functions, which no preloaded library interposes).
 * Preloaded after libmemprov.so, every C++ allocation went past memprov.
 */
#include <cstddef>
#include <new>
#include <sys/mman.h>

extern "C" {
void *__libc_malloc(std::size_t n);
void *__libc_calloc(std::size_t n, std::size_t m);
void *__libc_realloc(void *p, std::size_t n);
void *__libc_memalign(std::size_t al, std::size_t n);
void __libc_free(void *p);

void *malloc(std::size_t n) { return __libc_malloc(n); }
void *calloc(std::size_t n, std::size_t m) { return __libc_calloc(n, m); }
void *realloc(void *p, std::size_t n) { return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
}

static void *get(std::size_t n, std::size_t al)
{
	void *p = al ? __libc_memalign(al, n ? n : 1) : __libc_malloc(n ? n : 1);

	if (!p)
		throw std::bad_alloc();
	return p;
}

void *operator new(std::size_t n) { return get(n, 0); }
/* 555 B come from a mapping of their own, at its start, as a fresh
 * jemalloc extent's first block does: memprov records the mapping too */
void *operator new[](std::size_t n)
{
	void *p;

	if (n != 555)
		return get(n, 0);
	p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		throw std::bad_alloc();
	return p;
}
void *operator new(std::size_t n, std::align_val_t al) { return get(n, (std::size_t)al); }
void *operator new[](std::size_t n, std::align_val_t al) { return get(n, (std::size_t)al); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return __libc_malloc(n ? n : 1); }
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return __libc_malloc(n ? n : 1); }
void operator delete(void *p) noexcept { __libc_free(p); }
void operator delete[](void *p) noexcept { __libc_free(p); }
void operator delete(void *p, std::size_t) noexcept { __libc_free(p); }
void operator delete[](void *p, std::size_t) noexcept { __libc_free(p); }
void operator delete(void *p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { __libc_free(p); }
