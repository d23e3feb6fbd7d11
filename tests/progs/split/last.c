/*
 * split/last.c - the last unit of tests/bin/split, without an entry in
 * .debug_aranges: past the last address they name, libdwfl finds no unit.
 */
#include <stdlib.h>

void *last_alloc(size_t n);

void *last_alloc(size_t n)
{
	void *p = malloc(n); /* the line t1050 expects in last.c */

	return p;
}
