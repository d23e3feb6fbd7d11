/*
 * offsets.c - allocations under 40 frames whose CFA is the stack pointer
 * plus 8, 16, ..., 320 bytes, one offset each, for t2020-unwind.sh: the
 * walk (unwind.c) branches on the commoner offsets, case by case, and a
 * case that computed the wrong CFA would give the wrong next frame.
 * off_1 .. off_40 are written in assembly, so that each frame's offset is
 * the one its CFI says whatever the compiler: off_K moves the stack
 * pointer down 8K - 8 bytes and calls off_K+1 (off_40 calls leaf). The
 * 40 frames take 8 x (1 + ... + 40) bytes, a multiple of 16: leaf, a C
 * function, starts with the stack aligned as the ABI wants.
 *   offsets N    N rounds of 3 allocations; prints how many were made
 */
#include <stdio.h>
#include <stdlib.h>

void off_1(unsigned r);
void leaf(unsigned r);

static void *volatile keep[3];
static unsigned made;

__attribute__((noinline)) void leaf(unsigned r)
{
	unsigned i;

	for (i = 0; i < 3; i++) {
		free(keep[i]);
		keep[i] = malloc(16 + (r + i) % 64);
		made += keep[i] != NULL;
	}
}

/* off_K: CFA = rsp + 8K at its call to the next */
#define OFF_FN(k, next)                                      \
	".globl off_" #k "\n"                                \
	".type off_" #k ", @function\n"                      \
	"off_" #k ":\n"                                      \
	".cfi_startproc\n"                                   \
	"sub $(8 * " #k " - 8), %rsp\n"                      \
	".cfi_adjust_cfa_offset 8 * " #k " - 8\n"            \
	"call " next "\n"                                    \
	"add $(8 * " #k " - 8), %rsp\n"                      \
	".cfi_adjust_cfa_offset -(8 * " #k " - 8)\n"         \
	"ret\n"                                              \
	".cfi_endproc\n"                                     \
	".size off_" #k ", .-off_" #k "\n"
#define OFF(k, n) OFF_FN(k, "off_" #n)

__asm__(".text\n"
	OFF(1, 2) OFF(2, 3) OFF(3, 4) OFF(4, 5) OFF(5, 6) OFF(6, 7) OFF(7, 8) OFF(8, 9)
	OFF(9, 10) OFF(10, 11) OFF(11, 12) OFF(12, 13) OFF(13, 14) OFF(14, 15) OFF(15, 16)
	OFF(16, 17) OFF(17, 18) OFF(18, 19) OFF(19, 20) OFF(20, 21) OFF(21, 22) OFF(22, 23)
	OFF(23, 24) OFF(24, 25) OFF(25, 26) OFF(26, 27) OFF(27, 28) OFF(28, 29) OFF(29, 30)
	OFF(30, 31) OFF(31, 32) OFF(32, 33) OFF(33, 34) OFF(34, 35) OFF(35, 36) OFF(36, 37)
	OFF(37, 38) OFF(38, 39) OFF(39, 40) OFF_FN(40, "leaf"));

int main(int argc, char **argv)
{
	unsigned r, n = argc > 1 ? (unsigned)atoi(argv[1]) : 100;

	for (r = 0; r < n; r++)
		off_1(r);
	printf("%u\n", made);
	return 0;
}
