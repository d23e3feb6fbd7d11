/*
 * nodwarf_lib.c - built into libcorpus-nodwarf.so without -g but with its
 * symbol table: a leak here is named nd_leak+0xOFF (libcorpus-nodwarf.so).
 */
#include <stdlib.h>

void *nd_leak(size_t n);

void *nd_kept[4];
int nd_n;

void *nd_leak(size_t n)
{
	void *p = malloc(n);

	nd_kept[nd_n++ & 3] = p;
	return p;
}
