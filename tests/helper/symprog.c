/*
 * symprog.c - a program with known allocation lines, built with -g, for
 * the symbolization test (tests/t1050-symbolize.sh). Keep the line numbers:
 * the test names them.
 */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void *leak_here(size_t n)
{
	void *p = malloc(n); /* line 11 */

	memset(p, 1, n);
	return p;
}

int main(void)
{
	int i;

	for (i = 0; i < 3; i++)
		leak_here(1000); /* line 22 */
	free(malloc(50));
	return 0;
}
