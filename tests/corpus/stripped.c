/*
 * stripped.c - built -O2 and stripped of every symbol and all DWARF: 5
 * blocks of 24 B leak from leak_here, which only module+offset can name.
 * memprov's own frames (its main wrapper, its hooks) must not show.
 */
#include <stdlib.h>

/* a global, not a static: -O2 would drop stores no one reads, and the mallocs */
void *kept[5];

static __attribute__((noinline)) void leak_here(int i)
{
	kept[i] = malloc(24); /* @leak_here */
}

int main(void)
{
	int i;

	for (i = 0; i < 5; i++)
		leak_here(i);
	return 0;
}
