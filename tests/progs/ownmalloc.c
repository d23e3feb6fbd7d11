/*
 * ownmalloc.c - a program that defines its own malloc, free, calloc and
 * realloc (a bump allocator over an anonymous mmap, made on first use).
 * Under the preload object the executable's definitions win, and this
 * allocator calls mmap, which memprov hooks: a recorder that allocates or
 * resolves symbols on that path would recurse or hang. Prints
 * "ownmalloc ok N" and exits 0. Used by t2130-fork-exec.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA (64u << 20)

static char *arena, *top;
static unsigned long calls;

void *malloc(size_t n)
{
	char *p;

	if (!arena) {
		arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (arena == MAP_FAILED)
			return NULL;
		top = arena;
	}
	n = (n + 15) & ~(size_t)15;
	if (n + 16 > ARENA - (size_t)(top - arena))
		return NULL;
	*(size_t *)top = n;
	p = top + 16;
	top += n + 16;
	calls++;
	return p;
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t m, size_t n)
{
	void *p;

	if (n && m > (size_t)-1 / n)
		return NULL;
	p = malloc(m * n);
	if (p)
		memset(p, 0, m * n);
	return p;
}

void *realloc(void *p, size_t n)
{
	void *q = malloc(n);
	size_t old;

	if (q && p) {
		old = *(size_t *)((char *)p - 16);
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}

int main(void)
{
	char *s = NULL;

	for (int i = 0; i < 1000; i++) {
		s = realloc(s, i + 1);
		s[i] = 'a';
		free(calloc(3, 7));
	}
	printf("ownmalloc ok %d\n", s[999] == 'a' ? 1000 : 0);
	return 0;
}
