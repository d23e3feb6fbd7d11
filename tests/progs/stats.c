/*
 * stats.c - a fixed sequence of calls for t2100's `memprov stats` checks:
 * malloc 7 calls (1 failed, 1710 bytes in the 6 that succeeded), calloc 2
 * calls (1 failed by overflow, 100 bytes), realloc 1 call (400 bytes),
 * free 6 calls. Heap peak: 1910 bytes in 6 blocks, reached right after the
 * last allocation; live at exit: 60 bytes in 1 block. No stdio.
 */
#include <stdint.h>
#include <stdlib.h>

static volatile size_t huge = SIZE_MAX / 2;
static void *volatile keep;

int main(void)
{
	char *a = malloc(100);		/* live 100 / 1 */
	char *b = malloc(200);		/* 300 / 2 */
	char *c = malloc(300);		/* 600 / 3 */
	char *d, *e, *f, *g, *h, *i;

	free(b);			/* 400 / 2 */
	d = calloc(10, 10);		/* 500 / 3 */
	e = calloc(huge, 8);		/* fails: overflow */
	f = malloc(huge);		/* fails: too big */
	h = malloc(50);			/* 550 / 4 */
	i = malloc(60);			/* 610 / 5 */
	a = realloc(a, 400);		/* 910 / 5 */
	g = malloc(1000);		/* 1910 / 6: the peak */
	free(g);
	free(a);
	free(c);
	free(d);
	free(h);			/* 60 / 1 */
	keep = i;
	return e || f ? 1 : 0;
}
