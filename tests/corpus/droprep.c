/*
 * droprep.c - for t2310, under cachealloc.c's malloc replacement: three
 * blocks of 100 B dropped (definitely lost, as valgrind says), one of
 * 200 B kept in a global, one of 2 MiB (a mapping of the replacement's
 * own) kept, and one of 300 B kept only in a page the program mapped
 * itself. The @ comments name lines for the test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *keep, *big;
void **own_page;

int main(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		char *p = malloc(100); /* @drop */

		memset(p, i + 1, 100);
	}
	keep = malloc(200);          /* @keep */
	big = malloc(2u << 20);      /* @big */
	memset(big, 7, 4096);
	own_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (own_page == MAP_FAILED)
		return 1;
	own_page[0] = malloc(300);   /* @own-page */
	printf("droprep ok\n");
	return 0;
}
