/*
 * dlrel_lib.c - built twice, as libcorpus-dlrel.so and libcorpus-deep.so
 * (t2310): churn() frees everything it allocates (through strdup, whose
 * malloc is libc's call, and through malloc itself); keep() keeps one
 * block of LIB_KEEP bytes.
 */
#include <stdlib.h>
#include <string.h>

void churn(int n);
char *keep(void);

void churn(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		char *s = strdup("transient");
		void *p = malloc(100);

		free(s);
		free(p);
	}
}

char *keep(void)
{
	return calloc(1, LIB_KEEP); /* @keep */
}
