/*
 * reach.h - the reachability scan at exit: which live blocks are still
 * reachable, possibly lost, indirectly lost or definitely lost (valgrind's
 * classes), computed by libmemprov.so from its own trace and a scan of the
 * process's roots, and written to the trace (MP_REC_REACH_BLOCKS,
 * MP_REC_REACH). The entry point for the rest of libmemprov.so (init.c).
 */
#ifndef MEMPROV_REACH_H
#define MEMPROV_REACH_H

#include <stddef.h>
#include <stdint.h>

#include "sys.h"

/*
 * Scan and record, once per process, on a normal exit path (exit, _exit,
 * return from main), before the header says EXITED; the caller holds the
 * recorder guard. Called from memprov's own exit hooks and destructor
 * only: the walk back to the program's frame stops at the first frame
 * outside libmemprov.so, unless mp_reach_note_exit kept it already.
 * MEMPROV_REACH=0 records that the scan is off and does nothing else.
 */
void mp_reach_at_exit(void) MP_HIDDEN;

/*
 * The same at a death by signal, from the handler that records it (the
 * recorder guard held): uc, the signal's context, gives the interrupted
 * thread's registers and stack pointer; the handler's frames, perhaps on
 * an alternate signal stack, are memprov's. Called on a stack of
 * memprov's own (mp_call_on_own_stack): a program's alternate stack is
 * often 8 KiB (Rust's), less than the scan takes.
 */
void mp_reach_at_death(const void *uc) MP_HIDDEN;

/*
 * No scan at exit in this process, for the reason note says
 * (MP_REACH_N_PYTHON): mp_reach_at_exit records status OFF with it.
 */
void mp_reach_not_needed(unsigned note) MP_HIDDEN;

/*
 * Keep the calling thread's registers and stack pointer as the program
 * had them at its call into memprov's exit hook (exit, the return from
 * main), for a scan that mp_reach_at_exit makes later on the same thread:
 * after the exit handlers and the destructors, whose frames lie below.
 */
void mp_reach_note_exit(void) MP_HIDDEN;

/*
 * The same from one of the program's exit handlers, for an exit() made
 * inside the object that holds lib (libc's err, error, a thread's start
 * code): the registers of the first frame outside it and libmemprov.so,
 * or else of the first outside libmemprov.so.
 */
void mp_reach_note_exit_past(const void *lib) MP_HIDDEN;

/*
 * Memory the program took from the break itself, with sbrk or brk:
 * [lo, hi) added, or (add 0) the break lowered to lo. glibc's malloc
 * moves the break with calls of its own, never through these. The
 * ranges are roots of the scan though they lie in [heap], glibc's main
 * arena otherwise; a pointer the program keeps there is a pointer (the
 * scan called such blocks definitely lost, where valgrind says
 * reachable). At most MP_REACH_BRK_MAX ranges: more are left out.
 */
#define MP_REACH_BRK_MAX 32
void mp_reach_program_break(uint64_t lo, uint64_t hi, int add) MP_HIDDEN;

/*
 * A mapping a malloc replacement made for itself (hooks_libc.c): [lo, hi)
 * added, or (add 0) unmapped or mapped over by someone else. The ranges
 * are the replacement's heap, as glibc's arenas are glibc's: never roots
 * of the scan (its free lists, thread caches and freed regions hold
 * stale pointers). At most MP_REACH_ALLOC_MAX ranges: one more is left
 * out, a root as before; a range that cannot be taken out (the lock
 * busy past a bound, or held by a thread a fork left behind) makes the
 * scan leave the whole table out, every range a root; either way the
 * scan says so (MP_REACH_N_ALLOC_LOST).
 */
#define MP_REACH_ALLOC_MAX 1024
int mp_reach_allocator_map(uint64_t lo, uint64_t hi, int add) MP_HIDDEN; /* add 0: 1 if all of it was there */
void mp_reach_fork_child(void) MP_HIDDEN;
void mp_reach_note_replacement(void) MP_HIDDEN; /* one is in use: glibc's arena may never be */

/*
 * The program's callee-saved registers (rbx, rbp, r12-r15) and stack
 * pointer at its call into an exit hook, stored by the hook's first
 * instructions (MP_ENTRY_STUB, before any of memprov's code can change a
 * register) and taken, once, by the scan: the program's own values
 * without unwinding memprov's frames with libunwind, which cost a short
 * process 45 system calls and 0.15 ms at exit. set: 1 when stored and
 * not yet taken, on this thread.
 */
struct mp_entry_regs {
	uint64_t regs[6];
	uint64_t sp;
	uint64_t set;
};
extern __thread struct mp_entry_regs mp_entry_regs
	__attribute__((tls_model("initial-exec"))) MP_HIDDEN;

#if defined(__x86_64__)
/*
 * A function NAME (global; VIS: "" to export it, or ".hidden NAME") whose
 * code stores the registers in mp_entry_regs and jumps to IMPL, with the
 * arguments and the stack untouched (rax and rcx are free at a call); its
 * CFI says the return address is at the stack pointer, so that a stack
 * taken inside it (a signal) unwinds.
 */
#define MP_ENTRY_STUB(name, impl, vis)                                      \
	__asm__(".section .text." #name ",\"ax\",@progbits\n\t.globl " #name \
		"\n\t" vis "\n\t.type " #name                                \
		", @function\n" #name ":\n\t.cfi_startproc\n\t"               \
		"movq mp_entry_regs@gottpoff(%rip), %rax\n\t"                  \
		"movq %rbx, %fs:0(%rax)\n\tmovq %rbp, %fs:8(%rax)\n\t"         \
		"movq %r12, %fs:16(%rax)\n\tmovq %r13, %fs:24(%rax)\n\t"       \
		"movq %r14, %fs:32(%rax)\n\tmovq %r15, %fs:40(%rax)\n\t"       \
		"leaq 8(%rsp), %rcx\n\tmovq %rcx, %fs:48(%rax)\n\t"           \
		"movq $1, %fs:56(%rax)\n\tjmp " #impl "\n\t.cfi_endproc\n\t"  \
		".size " #name ", .-" #name "\n\t.previous")
#endif

#endif /* MEMPROV_REACH_H */
