/*
 * hooks_dlsym.c - interposed dlsym and dlvsym.
 *
 * The CUDA runtime (shared or linked statically into the program) reaches
 * the driver through dlsym(handle, "cuGetProcAddress_v2"); to hook the
 * driver's allocation entry points we must see that lookup (see
 * docs/ARCHITECTURE.md, "GPU memory"). Everything else must behave exactly
 * as without us:
 *
 *  - The real dlsym/dlvsym come from elfsym.c, which reads libc's dynamic
 *    symbol table (never the public dlsym: that would be ourselves).
 *    Nothing here allocates, so anything may call dlsym through this hook
 *    before memprov is initialized.
 *  - dlsym(RTLD_NEXT, ...) depends on the caller's return address. The
 *    x86-64 entry points are a few instructions of assembly that ask
 *    mp_dlsym_route whether the lookup needs memprov and otherwise jump
 *    to the real function, so it sees the original return address. A
 *    CUDA name looked up with RTLD_NEXT is resolved by walking the
 *    objects after the caller ourselves (mp_dlsym_next_after).
 *  - A heap function (malloc, free, ..., mmap) looked up through a
 *    handle, not RTLD_NEXT, that finds the very function memprov's hook
 *    forwards to gets the hook instead: a program (ctypes'
 *    CDLL("libc.so.6")) that allocates and frees through libc's own
 *    handle is recorded as one that calls malloc. RTLD_NEXT lookups are
 *    left alone: that is how an allocator wrapper finds the next malloc.
 *
 * jemalloc's mallocx family looked up so gets memprov's wrappers too
 * (hooks_cxx.c).
 *
 * Layer: 7 entry points (docs/ARCHITECTURE.md): calls hooks_cuda, hooks_libc,
 * hooks_cxx and elfsym.
 */
#include <dlfcn.h>
#include <stdint.h>

#include "cuda_hooks.h"
#include "elfsym.h"
#include "hooks_cxx.h"
#include "hooks_libc.h"
#include "hooks_sandbox.h"

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

int mp_dlsym_route(const char *name, void *handle) MP_HIDDEN;
void *mp_dlsym_cuda(void *handle, const char *name) MP_HIDDEN;
void *mp_dlvsym_cuda(void *handle, const char *name, const char *version) MP_HIDDEN;

/* Called by the entry points: 1 when the lookup needs memprov's path
 * (a CUDA name; a heap function through a handle other than RTLD_NEXT). */
int mp_dlsym_route(const char *name, void *handle)
{
	mp_elf_resolve_dlsym();
	/* a sanitizer's runtime sets itself up by dlsym: nothing of memprov's there */
	if (MP_UNLIKELY(mp_elf_sanitizer() != NULL))
		return 0;
	return name && (mp_cuda_wants(name) ||
			(handle != RTLD_NEXT && (mp_heap_hook_wants(name) || mp_sandbox_hook_wants(name) ||
						 mp_cxx_hook_wants(name))));
}

/* What memprov makes of a lookup that found p (NULL: nothing). */
static void *ours(void *handle, const char *name, void *p)
{
	if (!p)
		return NULL;
	if (mp_cuda_wants(name))
		return mp_cuda_wrap_dlsym(handle, name, p);
	if (mp_sandbox_hook_wants(name))
		return mp_sandbox_hook_for(name, p);
	if (mp_cxx_hook_wants(name))
		return mp_cxx_hook_for(name, p);
	return mp_heap_hook_for(name, p);
}

/* memprov's path of dlsym: the return address is still the caller's. */
void *mp_dlsym_cuda(void *handle, const char *name)
{
	void *p;

	if (handle == RTLD_NEXT)
		p = mp_dlsym_next_after(__builtin_return_address(0), name);
	else
		p = mp_real_dlsym(handle, name);
	return ours(handle, name, p);
}

void *mp_dlvsym_cuda(void *handle, const char *name, const char *version)
{
	void *p;

	if (handle == RTLD_NEXT)
		p = mp_dlsym_next_after(__builtin_return_address(0), name);
	else
		p = mp_real_dlvsym(handle, name, version);
	return ours(handle, name, p);
}

#if defined(__x86_64__)
/*
 * dlsym(handle, name) / dlvsym(handle, name, version): save the
 * arguments, ask mp_dlsym_route(name), restore them, then either jump to
 * the CUDA path or to the real function. Jumps, not calls: the callee
 * sees our caller's return address, which is what RTLD_NEXT needs.
 */
__asm__(
	"	.pushsection .text.dlsym,\"ax\",@progbits\n"
	"	.globl dlsym\n"
	"	.type dlsym, @function\n"
	"	.p2align 4\n"
	"dlsym:\n"
	"	.cfi_startproc\n"
	"	.byte 0xf3, 0x0f, 0x1e, 0xfa\n" /* endbr64 */
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %rdi\n"
	"	movq %rax, %rsi\n"
	"	call mp_dlsym_route\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testl %eax, %eax\n"
	"	jnz mp_dlsym_cuda\n"
	"	jmp *mp_dlsym_ptr(%rip)\n"
	"	.cfi_endproc\n"
	"	.size dlsym, .-dlsym\n"
	"\n"
	"	.globl dlvsym\n"
	"	.type dlvsym, @function\n"
	"	.p2align 4\n"
	"dlvsym:\n"
	"	.cfi_startproc\n"
	"	.byte 0xf3, 0x0f, 0x1e, 0xfa\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %rdi\n"
	"	movq %rax, %rsi\n"
	"	call mp_dlsym_route\n"
	"	popq %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testl %eax, %eax\n"
	"	jnz mp_dlvsym_cuda\n"
	"	jmp *mp_dlvsym_ptr(%rip)\n"
	"	.cfi_endproc\n"
	"	.size dlvsym, .-dlvsym\n"
	"	.popsection\n");
#else
/*
 * Portable fallback: correct when the compiler turns the forwarding call
 * into a sibling call (it does at -O2), which keeps RTLD_NEXT right.
 */
MP_EXPORT void *dlsym(void *handle, const char *name)
{
	if (mp_dlsym_route(name, handle))
		return mp_dlsym_cuda(handle, name);
	return ((dlsym_fn)mp_dlsym_ptr)(handle, name);
}

MP_EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
	if (mp_dlsym_route(name, handle))
		return mp_dlvsym_cuda(handle, name, version);
	return ((dlvsym_fn)mp_dlvsym_ptr)(handle, name, version);
}
#endif
