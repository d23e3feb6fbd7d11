/*
 * mallocx.c - for t2310: a program that calls jemalloc's own API, as
 * Folly does, linked with cachealloc.c (which defines it): a block kept
 * only in memory from mallocx (reachable), one from mallocx dropped
 * (lost), one resized with rallocx then xallocx and freed with sdallocx,
 * one freed with dallocx; and a block kept only in memory from a mallocx
 * the program looked up with dlsym. The @ comments name lines for the
 * test.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *mallocx(size_t n, int flags);
void *rallocx(void *q, size_t n, int flags);
size_t xallocx(void *q, size_t n, size_t extra, int flags);
void sdallocx(void *q, size_t n, int flags);
void dallocx(void *q, int flags);

void **table, **table2;

int main(void)
{
	void *(*mx)(size_t, int) = (void *(*)(size_t, int))dlsym(RTLD_DEFAULT, "mallocx");
	void *r, *d;

	table = mallocx(64, 0);          /* @table */
	table[0] = malloc(100);          /* @only-in-table */
	memset(table[0], 1, 100);
	r = mallocx(32, 0);
	r = rallocx(r, 80, 0);
	xallocx(r, 96, 0, 0);
	sdallocx(r, 80, 0);
	d = mallocx(16, 0);
	dallocx(d, 0);
	d = mallocx(48, 0);              /* @dropped */
	memset(d, 2, 48);
	d = NULL;
	if (!mx)
		return 1;
	table2 = mx(64, 0);
	table2[0] = malloc(120);         /* @only-in-table2 */
	printf("mallocx ok\n");
	return 0;
}
