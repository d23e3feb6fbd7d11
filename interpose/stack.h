/*
 * stack.h - the stack of an allocation, captured and interned (stack.c).
 *
 * Layer: 4 capture (docs/ARCHITECTURE.md).
 */
#ifndef MEMPROV_STACK_H
#define MEMPROV_STACK_H

#include <stdint.h>

#include "writer.h"

int mp_stack_init(void) MP_HIDDEN;          /* 0, or -1: stacks written repeatedly */
void mp_stack_reset(void) MP_HIDDEN;        /* in a forked child */

/*
 * Capture the caller's stack (native frames with memprov's unwinder or
 * libunwind, then Python frames through mp_python_capture when set),
 * intern it, and return its id; writes an MP_REC_STACK the first time an
 * id is seen in this process. skip: unused (memprov's own frames are
 * dropped by address).
 */
uint64_t mp_capture_stack(int skip) MP_HIDDEN;
/* The id of a stack of these Python frames (innermost first) and no native ones. */
uint64_t mp_stack_python(const struct mp_pyframe *py, int npy) MP_HIDDEN;

/*
 * Set by python.c once it finds CPython in the process: fills out[] with
 * the calling thread's Python frames, innermost first, sets *hash to
 * their mp_pyframes_hash, and returns how many (0 when the thread runs
 * no Python code). Must not allocate, lock, or call into the
 * interpreter in a way that can run Python code.
 */
extern int (*volatile mp_python_capture)(struct mp_pyframe *out, int max,
					 uint64_t *hash) MP_HIDDEN;

/*
 * The part of a stack's id that its Python frames make: folded from the
 * outermost frame in, so that a capture that finds its outer frames as
 * they were (python_walk.c's memo) takes their part as it was and folds
 * only the frames below.
 */
#define MP_PYHASH_SEED 0x8a5cd789635d2dffull

static inline uint64_t mp_pyhash_step(uint64_t h, const struct mp_pyframe *f)
{
	h ^= (uint64_t)f->code_id << 32 | f->line;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

/* py[0 .. n - 1], innermost first, folded outermost first. */
static inline uint64_t mp_pyframes_hash(const struct mp_pyframe *py, int n)
{
	uint64_t h = MP_PYHASH_SEED;

	while (n > 0)
		h = mp_pyhash_step(h, &py[--n]);
	return h;
}
/* Set with it: the interpreter's text, where native frames stop. */
extern uintptr_t mp_python_text_lo MP_HIDDEN, mp_python_text_hi MP_HIDDEN;

#endif /* MEMPROV_STACK_H */
