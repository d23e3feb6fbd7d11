/*
 * leak3.c - leaks exactly 3 blocks of 100 bytes from leaky_fn, at the line
 * marked LEAK-LINE, and frees everything else. No stdio: the only heap
 * live at exit is those 300 bytes. Used by t2100-leak-sites.sh.
 */
#include <stdlib.h>

static void *keep[3];

static __attribute__((noinline)) void leaky_fn(void)
{
	for (int i = 0; i < 3; i++)
		keep[i] = malloc(100); /* LEAK-LINE */
}

static __attribute__((noinline)) void tidy_fn(void)
{
	void *p = malloc(500);
	void *q = calloc(4, 25);

	p = realloc(p, 700);
	free(q);
	free(p);
}

int main(void)
{
	tidy_fn();
	leaky_fn();
	tidy_fn();
	return keep[2] ? 0 : 1;
}
