/*
 * goexit.c - ends as a Go program does: with a raw exit_group system
 * call that no library function makes, so no hook of libmemprov.so sees
 * the exit. It carries Go's build ID note (owner "Go", type 4) as Go's
 * linkers write it, unless built with -DNO_GO_NOTE (tests/bin/rawexit).
 *
 *   goexit raw N     keep one block reachable from a global, lose one,
 *                    map 1 MiB through a function named x_cgo_mmap (as a
 *                    cgo program's runtime maps its heap), print "ready",
 *                    then exit_group(N)
 *
 * Used by t2195-raw-exit.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef NO_GO_NOTE
/* namesz 4 ("Go" and two NULs, as Go writes it), descsz 8, type 4 */
__asm__(".pushsection .note.go.buildid,\"a\",@note\n"
	".balign 4\n"
	".long 4, 8, 4\n"
	".asciz \"Go\"\n"
	".byte 0\n"
	".ascii \"testbid!\"\n"
	".popsection\n");
#endif

static void *kept;

/* the name cgo's runtime gives the function its mmap goes through */
void *x_cgo_mmap(size_t len);
__attribute__((noinline)) void *x_cgo_mmap(size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

__attribute__((noreturn)) static void raw_exit_group(int code)
{
#if defined(__x86_64__)
	__asm__ volatile("syscall" : : "a"(SYS_exit_group), "D"(code) : "rcx", "r11", "memory");
#endif
	_exit(code); /* not reached on x86-64 */
}

int main(int argc, char **argv)
{
	char *lost;
	void *heap;

	if (argc < 3 || strcmp(argv[1], "raw")) {
		fprintf(stderr, "usage: goexit raw N\n");
		return 2;
	}
	kept = malloc(1000);
	memset(kept, 1, 1000);
	lost = malloc(300);
	memset(lost, 2, 300);
	lost = NULL;
	heap = x_cgo_mmap(1 << 20);
	if (heap == MAP_FAILED)
		return 1;
	memset(heap, 3, 4096);
	printf("ready\n");
	fflush(stdout);
	raw_exit_group(atoi(argv[2]));
}
