/*
 * split/main.c - the first unit of tests/bin/split (see tests/progs.mk):
 * its .debug_aranges names it, the second unit's (part.c) was removed.
 * Used by t1050-symbolize.sh.
 */
#include <stdlib.h>

void *part_alloc(size_t n);
void *main_alloc(size_t n);

void *main_alloc(size_t n)
{
	return malloc(n);
}

int main(void)
{
	static void *keep[2];

	keep[0] = main_alloc(100);
	keep[1] = part_alloc(200);
	return keep[0] && keep[1] ? 0 : 1;
}
