/*
 * steps.c - allocates 100 bytes per step and keeps every block; after each
 * step has returned from malloc it writes "step N live=X blocks=B\n"
 * (write(2), no stdio) to the file named by argv[1]: X and B count every
 * block the program holds, the calloc'd array of pointers included. Runs
 * until killed, or stops after argv[2] steps (default 1,000,000) and waits
 * in pause(). Used by
 * t2140-sigkill.sh, which kills it with SIGKILL mid-run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static __attribute__((noinline)) void *step_alloc(void)
{
	return malloc(100);
}

int main(int argc, char **argv)
{
	long max = argc > 2 ? atol(argv[2]) : 1000000;
	void **keep;
	char line[64];
	int fd, len;

	if (argc < 2)
		return 64;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	keep = calloc(max + 1, sizeof(*keep));
	if (fd < 0 || !keep)
		return 2;
	for (long i = 1; i <= max; i++) {
		keep[i] = step_alloc();
		if (!keep[i])
			return 3;
		len = snprintf(line, sizeof(line), "step %ld live=%ld blocks=%ld\n",
			       i, 100 * i + (max + 1) * (long)sizeof(*keep), i + 1);
		write(fd, line, len);
	}
	for (;;)
		pause();
}
