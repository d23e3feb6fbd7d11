/*
 * tsd.c - a leak made by a thread-specific-data destructor: glibc calls it
 * from __nptl_deallocate_tsd when the thread ends. glibc's debug symbols
 * name that function twice at one address (__nptl_deallocate_tsd and its
 * internal alias __GI___nptl_deallocate_tsd); the report must use the
 * function's own name, as valgrind and the DWARF do.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_key_t key;
static int token;

static void keydtor(void *arg)
{
	char *p = malloc(48); /* @keydtor */

	(void)arg;
	memset(p, 7, 48);
	__asm__ volatile("" : : "r"(p) : "memory"); /* kept until here, then lost */
}

static void *body(void *arg)
{
	pthread_setspecific(key, arg);
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_key_create(&key, keydtor) || pthread_create(&t, NULL, body, &token))
		return 2;
	pthread_join(t, NULL);
	return 0;
}
