/*
 * manymaps.c N - keeps N anonymous one-page mappings live, then unmaps N
 * times while they are live: each round maps 3 pages, punches a hole in
 * the middle (one block becomes two), unmaps the tail block, and unmaps
 * the head together with the hole (a range that covers one block and an
 * unmapped page). At exit exactly N blocks of one page are live, from one
 * site; 3N munmap calls were made. The kept pages are mapped one by one,
 * so the kernel merges them into few areas (max_map_count stays far).
 * No malloc, no stdio. Used by t9540-munmap-scale.sh (replay cost of
 * munmap with many live mappings).
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static __attribute__((noinline)) void *keep_page(long pg)
{
	return mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static __attribute__((noinline)) int churn(long pg)
{
	char *q = mmap(NULL, 3 * (size_t)pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (q == MAP_FAILED)
		return -1;
	if (munmap(q + pg, (size_t)pg) || munmap(q + 2 * pg, (size_t)pg) ||
	    munmap(q, 2 * (size_t)pg))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE), n = argc > 1 ? atol(argv[1]) : 1000, i;

	for (i = 0; i < n; i++)
		if (keep_page(pg) == MAP_FAILED)
			return 2;
	for (i = 0; i < n; i++)
		if (churn(pg))
			return 3;
	return 0;
}
