/*
 * unwind.h - libmemprov.so's own native stack walker (unwind.c), used by
 * stack.c before libunwind.
 *
 * Layer: 2 storage and walk (docs/ARCHITECTURE.md): calls cfi, gate and
 * sys; knows nothing of Python or of its callers. It walks x86-64 frames with simple rules
 * (CFA = rsp+N or rbp+N, return address at CFA-8, rbp unchanged or saved
 * at CFA-k) taken from each module's .eh_frame and cached per return
 * address; anything else makes it give up, and the caller captures the
 * whole stack with unw_backtrace instead.
 */
#ifndef MEMPROV_UNWIND_H
#define MEMPROV_UNWIND_H

#include <stdint.h>

#include "sys.h"

struct mp_unwind_args {
	uintptr_t skip_lo, skip_hi; /* leading frames in here are dropped (ours) */
	uintptr_t stop_lo, stop_hi; /* stop before the first frame in here... */
};

/*
 * ... unless the frames before it are all in there too, at most this many
 * (the interpreter's allocator called by an extension module: PyMem_Malloc
 * is one frame on python3.11; PyType_GenericAlloc four on 3.10, three on
 * 3.13): those are walked past. When a frame outside follows them, they
 * are kept with it and the walk stops at the next frame in the range;
 * when the range holds one more, no frame is. mp_unwind_cut() applies the
 * same rule to the frames of another walk.
 */
#define MP_UNWIND_LEAD 4

/* How many of the n frames f[] a walk with a's stop range keeps. */
static inline int mp_unwind_cut(void *const *f, int n, const struct mp_unwind_args *a)
{
	uintptr_t len = a->stop_hi - a->stop_lo;
	int i, lead = 0;

	for (i = 0; i < n; i++) {
		if ((uintptr_t)f[i] - a->stop_lo >= len)
			continue;
		if (i != lead)
			break;
		if (lead == MP_UNWIND_LEAD)
			return 0;
		lead++;
	}
	return i == lead ? 0 : i;
}

/* Map the rule cache. 0 ok, -1 (no fast path). */
int mp_unwind_init(void) MP_HIDDEN;
/* Where the rule cache is mapped (len 0: not mapped): memprov's own memory. */
void mp_unwind_cache_range(uintptr_t *addr, size_t *len) MP_HIDDEN;
/* Where the threads' memos of their last walks are (len 0: none yet): the same. */
void mp_unwind_memo_range(uintptr_t *addr, size_t *len) MP_HIDDEN;
/* The calling thread ends: its memo goes back (unwind.c). */
void mp_unwind_thread_exit(void) MP_HIDDEN;
/*
 * on 0: no thread gets a memo of its walks (MEMPROV_UNWIND_MEMO=0); 1 by
 * default. count: walks through a memo and replays are counted (tests),
 * read by mp_unwind_memo_counts.
 */
void mp_unwind_memo_enable(int on, int count) MP_HIDDEN;
void mp_unwind_memo_counts(uint64_t *through, uint64_t *replayed) MP_HIDDEN;

/*
 * Return addresses of the calling thread, starting with the caller of
 * mp_unwind's caller (frames in [skip_lo, skip_hi) before the first kept
 * one are dropped), innermost first, at most max. Returns how many, or -1
 * when a frame needs more than the simple rules (signal frame, DWARF
 * expression, unknown opcode, no FDE, a read outside this thread's stack):
 * capture with unw_backtrace then. Never reads memory outside the
 * calling thread's stack but the modules' .eh_frame sections.
 * MP_UNWIND_NO_ROOM (below): too little stack left to walk.
 */
int mp_unwind(void **ip, int max, const struct mp_unwind_args *a) MP_HIDDEN;

/*
 * Stack the walk may use below mp_unwind's own frame: its deepest path, a
 * rule read from a module's .eh_frame for the first time (through
 * dl_iterate_phdr and the CFI reader), took 2,336 B (measured with gdb,
 * stepping instruction by instruction through a thread's first
 * allocations, tracking the lowest stack pointer). With less room left mp_unwind
 * returns MP_UNWIND_NO_ROOM, and the allocation has no native frames: a
 * program whose thread stack is nearly full must not overflow it because
 * of memprov.
 */
#define MP_WALK_ROOM 3072u
#define MP_UNWIND_NO_ROOM (-2)

/*
 * Like mp_unwind_room, without a system call: 0 only when sp is on this
 * thread's stack, already known, within room of its low end.
 */
int mp_unwind_room_known(uintptr_t sp, size_t room) MP_HIDDEN;

/*
 * Around the walk's one call that may reach the hooks (glibc's thread
 * attributes, where the memory map cannot be read): the caller's
 * functions that let such calls pass through uncounted. Without them,
 * that thread's stack is not known.
 */
void mp_unwind_set_pass(int (*begin)(void), void (*end)(int)) MP_HIDDEN;

/*
 * Whether the calling thread has room bytes of stack below sp: 1, or 0
 * when sp is on an alternate signal stack with less room than that, or
 * on this thread's stack (once known) within room of its low end. A
 * stack memprov knows nothing of counts as roomy.
 */
int mp_unwind_room(uintptr_t sp, size_t room) MP_HIDDEN;

/*
 * Read the .eh_frame of module info from its file, path (absolute), with
 * pread rather than in memory, when its table is big enough for that to
 * keep pages out of the program's RSS (cfi.h). Call from a dl_iterate_phdr
 * callback (the loader's lock held), when the module is first seen.
 */
struct dl_phdr_info;
void mp_unwind_add_file(const struct dl_phdr_info *info, const char *path) MP_HIDDEN;
/* The module at load bias base is gone: its file is no longer read. */
void mp_unwind_forget_file(uintptr_t base) MP_HIDDEN;

/* Forget every cached rule (after dlclose: code may reappear at an address). */
void mp_unwind_flush(void) MP_HIDDEN;

/*
 * The native part of a stack's id (stack.c finishes it): the return
 * addresses folded one by one, by the walk as it goes (the last
 * successful mp_unwind leaves it in mp_unwind_hash) or by
 * mp_unwind_hash_frames for libunwind's frames, so a stack has the same
 * id whichever unwinder captured it.
 */
extern __thread uint64_t mp_unwind_hash __attribute__((tls_model("initial-exec"))) MP_HIDDEN;
uint64_t mp_unwind_hash_frames(void *const *ip, int n) MP_HIDDEN;
uint64_t mp_unwind_mix(uint64_t h, uint64_t x) MP_HIDDEN;

#endif /* MEMPROV_UNWIND_H */
