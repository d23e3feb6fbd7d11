/* split/tail.c - a unit of tests/bin/split with its .debug_aranges, after part.c. */
#include <stdlib.h>

void *tail_alloc(size_t n);

void *tail_alloc(size_t n)
{
	return malloc(n);
}
