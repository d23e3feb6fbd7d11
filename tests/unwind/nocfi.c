/*
 * nocfi.c - uw-nocfi N: N allocations made through a frame no CFI
 * describes, of each of two kinds, for t2020-unwind.sh:
 *   - nocfi_call, assembly in this executable's text with no FDE (as V8's
 *     builtins are in node's: they keep an rbp frame and have no CFI);
 *   - the same bytes copied into an anonymous executable mapping (JIT
 *     code, in no module).
 * Each trampoline sets up an rbp frame and calls its argument. memprov's
 * walk takes the frame-pointer rule there, as libunwind does, instead of
 * handing the whole stack to libunwind. Prints "kept 2N" and keeps every
 * block: the leaks are at alloc_one, called from via_text and via_jit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* push %rbp; mov %rsp,%rbp; call *%rdi; pop %rbp; ret: no .cfi_ directives */
__asm__(".text\n"
	".globl nocfi_call\n"
	".type nocfi_call, @function\n"
	"nocfi_call:\n"
	"\tpush %rbp\n"
	"\tmov %rsp, %rbp\n"
	"\tcall *%rdi\n"
	"\tpop %rbp\n"
	"\tret\n"
	".size nocfi_call, .-nocfi_call\n");
void nocfi_call(void (*fn)(void));

static const unsigned char tramp[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3 };

static void **kept;
static int nkept;

static __attribute__((noinline)) void alloc_one(void)
{
	kept[nkept] = malloc(100 + (size_t)(nkept & 1));
	nkept++;
}

static __attribute__((noinline)) void via_text(void)
{
	nocfi_call(alloc_one);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static __attribute__((noinline)) void via_jit(void (*jit)(void (*)(void)))
{
	jit(alloc_one);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, i;
	void (*jit)(void (*)(void));
	void *code;

	kept = calloc((size_t)(2 * n), sizeof(*kept));
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!kept || code == MAP_FAILED)
		return 2;
	memcpy(code, tramp, sizeof(tramp));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 3;
	jit = (void (*)(void (*)(void)))code;
	for (i = 0; i < n; i++) {
		via_text();
		via_jit(jit);
	}
	printf("kept %d\n", nkept);
	return 0;
}
