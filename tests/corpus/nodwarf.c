/*
 * nodwarf.c - calls into libcorpus-nodwarf.so (no DWARF, a .symtab): 2
 * blocks of 64 B leak in nd_leak, called from the line marked @main-nd.
 * The same source, stripped, is the stripped program of the corpus: its
 * frames have no names, memprov's own frames must not show either.
 */
#include <stdlib.h>

void *nd_leak(size_t n);

int main(void)
{
	int i;

	for (i = 0; i < 2; i++)
		nd_leak(64); /* @main-nd */
	return 0;
}
