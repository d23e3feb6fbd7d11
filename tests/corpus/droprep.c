/*
 * droprep.c - for t2310, under cachealloc.c's malloc replacement: three
 * blocks of 100 B dropped (definitely lost, as valgrind says), one of
 * 200 B kept in a global, one of 2 MiB (a mapping of the replacement's
 * own) kept, and one of 300 B kept only in a page the program mapped
 * itself, one of 400 B kept only in a page the replacement mapped for
 * the program (cachealloc_pool, found with dlsym: it is there only when
 * cachealloc is). The @ comments name lines for the test.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *keep, *big;
void **own_page, **lib_page;

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
	{
		void **(*pool)(void) = (void **(*)(void))dlsym(RTLD_DEFAULT, "cachealloc_pool");

		if (pool && (lib_page = pool()) != NULL)
			lib_page[0] = malloc(400); /* @lib-page */
	}
	printf("droprep ok\n");
	return 0;
}
