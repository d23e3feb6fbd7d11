/*
 * mmaps.c - anonymous mmap/munmap/mremap, counted as kind mmap, and a
 * file-backed mmap that must not be counted. No malloc, no stdio. At exit
 * the anonymous mappings still live are A (4 pages, tail page unmapped:
 * 3 pages) and C (1 page grown to 3 by mremap): 2 blocks, 6 pages. B
 * (2 pages) was unmapped whole. Used by t2180-mmap.sh.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

static void *volatile keep[4];

int main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE);
	int prot = PROT_READ | PROT_WRITE, fl = MAP_PRIVATE | MAP_ANONYMOUS;
	char *a, *b, *c, *f;
	int fd;

	(void)argc;
	a = mmap(NULL, 4 * pg, prot, fl, -1, 0);
	b = mmap(NULL, 2 * pg, prot, fl, -1, 0);
	c = mmap(NULL, pg, prot, fl, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED || c == MAP_FAILED)
		return 2;
	a[0] = b[0] = c[0] = 1;
	if (munmap(b, 2 * pg) || munmap(a + 3 * pg, pg))
		return 3;
	c = mremap(c, pg, 3 * pg, MREMAP_MAYMOVE);
	if (c == MAP_FAILED)
		return 4;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return 5;
	f = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE, fd, 0);
	if (f == MAP_FAILED)
		return 6;
	close(fd);
	keep[0] = a;
	keep[1] = c;
	keep[2] = f;
	return f[1] == 'E' ? 0 : 7;	/* ELF magic */
}
