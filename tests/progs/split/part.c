/*
 * split/part.c - a unit of tests/bin/split linked between main.c and
 * tail.c without an entry in .debug_aranges: libdwfl takes main.c's unit
 * for it (the one named before), as it took runtime/cgo's gcc_mmap.c for
 * every Go function of a cgo program, and found no line there.
 */
#include <stdlib.h>

void *part_alloc(size_t n);

void *part_alloc(size_t n)
{
	void *p = malloc(n); /* the line t1050 expects in part.c */

	return p;
}
