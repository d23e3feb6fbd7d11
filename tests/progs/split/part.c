/*
 * split/part.c - the second unit of tests/bin/split, linked after
 * main.c's without an entry in .debug_aranges: an address here must get
 * this file's line, not the nearest line of main.c.
 */
#include <stdlib.h>

void *part_alloc(size_t n);

void *part_alloc(size_t n)
{
	void *p = malloc(n); /* the line t1050 expects */

	return p;
}
