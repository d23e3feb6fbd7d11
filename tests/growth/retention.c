/*
 * retention.c - resident memory grows while live memory stays flat:
 * glibc is told never to trim the heap nor to use mmap for big blocks
 * (mallopt), and round r allocates r blocks of 256 KiB, touches them and
 * frees them all, so the heap's top and the resident size reach a new
 * high each round while nothing stays live. After each round it sleeps
 * 3 ms and makes one small allocation, so that memprov's RSS sample
 * (taken when a record is written) sees the heap with nothing live.
 * A mark "round" follows each round. No stdio.
 *
 *   retention [ROUNDS]     (default 12)
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void memprov_mark(const char *label) __attribute__((weak));

#define BLOCK (256 * 1024)
#define MAX_BLOCKS 4096

static void *blocks[MAX_BLOCKS];

static void nap(void)
{
	struct timespec ts = { 0, 3 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 12;
	int r, i;

	if (rounds < 1 || rounds > 60)
		return 64;
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_MMAP_THRESHOLD, 1 << 30);
	mallopt(M_TOP_PAD, 0);
	for (r = 1; r <= rounds; r++) {
		for (i = 0; i < r; i++) {
			blocks[i] = malloc(BLOCK);
			if (!blocks[i])
				return 2;
			memset(blocks[i], r, BLOCK);
		}
		for (i = r - 1; i >= 0; i--)
			free(blocks[i]);
		nap();
		free(malloc(16));
		if (memprov_mark)
			memprov_mark("round");
		nap();
		free(malloc(16));
	}
	return 0;
}
