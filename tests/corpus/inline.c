/*
 * inline.c - C leaks whose stacks must read the same at -O0 and at -O2,
 * where add() and make() are inlined into main: `add inline.c:L1 <- main
 * inline.c:L2`, as valgrind and LeakSanitizer print them. Lines marked
 * "@name" are the ones the reports must name (t2300-accuracy-corpus.sh
 * finds them with grep). No stdio: every live block at exit is below.
 *   add:     3 blocks of 12 B (strdup), kept in keep[]
 *   make:    1 block of 100 B (malloc), lost
 *   xmalloc: 2 blocks of 40 B through a wrapper (--alloc-fn xmalloc)
 */
#include <stdlib.h>
#include <string.h>

/* globals, not statics: -O2 would drop stores no one reads, and the mallocs */
char *keep[8];
void *wrapped[2];
void *volatile lost;
int nkeep;

static void add(const char *s)
{
	keep[nkeep++] = strdup(s); /* @add */
}

static void *make(size_t n)
{
	return malloc(n); /* @make */
}

static __attribute__((noinline)) void *xmalloc(size_t n)
{
	void *p = malloc(n); /* @xmalloc-inner */

	if (!p)
		abort();
	return p;
}

static __attribute__((noinline)) void fill(void)
{
	int i;

	for (i = 0; i < 2; i++)
		wrapped[i] = xmalloc(40); /* @fill */
}

int main(int argc, char **argv)
{
	int i;

	(void)argv;
	for (i = 0; i < 2 + argc; i++)
		add("hello world"); /* @main-add */
	lost = make(100); /* @main-make */
	lost = NULL;
	fill(); /* @main-fill */
	free(make(10));
	return 0;
}
