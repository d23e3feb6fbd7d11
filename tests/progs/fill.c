/*
 * fill.c - allocation-heavy: 200,000 malloc/free pairs of varying sizes
 * from a few different call sites, then prints a checksum with printf and
 * exits 3. Its output and status must not change when the trace's
 * filesystem fills up (t2150-fullfs.sh) or when memprov runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) void *site_a(size_t n) { return malloc(n); }
static __attribute__((noinline)) void *site_b(size_t n) { return calloc(1, n); }
static __attribute__((noinline)) void *site_c(void *p, size_t n) { return realloc(p, n); }

int main(void)
{
	unsigned long sum = 0;
	char *p;

	for (unsigned i = 0; i < 200000; i++) {
		switch (i % 3) {
		case 0: p = site_a(16 + i % 700); break;
		case 1: p = site_b(16 + i % 300); break;
		default: p = site_c(site_a(8), 16 + i % 900); break;
		}
		if (!p)
			return 2;
		p[0] = (char)i;
		sum += (unsigned char)p[0] + i % 7;
		free(p);
	}
	printf("fill done checksum=%lu\n", sum);
	for (int i = 0; i < 50; i++)
		printf("line %d %s\n", i, "the program's own output must be unchanged");
	return 3;
}
