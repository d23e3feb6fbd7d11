/*
 * unwind.h - libmemprov.so's own native stack walker (unwind.c), used by
 * stack.c before libunwind. It walks x86-64 frames with simple rules
 * (CFA = rsp+N or rbp+N, return address at CFA-8, rbp unchanged or saved
 * at CFA-k) taken from each module's .eh_frame and cached per return
 * address; anything else makes it give up, and the caller captures the
 * whole stack with unw_backtrace instead.
 */
#ifndef MEMPROV_UNWIND_H
#define MEMPROV_UNWIND_H

#include <stdint.h>

#include "recorder.h"

struct mp_unwind_args {
	uintptr_t skip_lo, skip_hi; /* leading frames in here are dropped (ours) */
	uintptr_t stop_lo, stop_hi; /* stop before the first frame in here */
};

/* Map the rule cache and find the interpreter's text. 0 ok, -1 (no fast path). */
int mp_unwind_init(void) MP_HIDDEN;

/*
 * Return addresses of the calling thread, starting with the caller of
 * mp_unwind's caller (frames in [skip_lo, skip_hi) before the first kept
 * one are dropped), innermost first, at most max. Returns how many, or -1
 * when a frame needs more than the simple rules (signal frame, DWARF
 * expression, unknown opcode, no FDE, a read outside this thread's stack):
 * capture with unw_backtrace then. Never reads memory outside the
 * calling thread's stack but the modules' .eh_frame sections.
 */
int mp_unwind(void **ip, int max, const struct mp_unwind_args *a) MP_HIDDEN;

/* Forget every cached rule (after dlclose: code may reappear at an address). */
void mp_unwind_flush(void) MP_HIDDEN;

/* The interpreter's text (libpython or the python executable), or 0/0. */
void mp_unwind_interp(uintptr_t *lo, uintptr_t *hi) MP_HIDDEN;

#endif /* MEMPROV_UNWIND_H */
