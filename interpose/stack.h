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
 * the calling thread's Python frames, innermost first, and returns how
 * many (0 when the thread runs no Python code). Must not allocate, lock,
 * or call into the interpreter in a way that can run Python code.
 */
extern int (*volatile mp_python_capture)(struct mp_pyframe *out, int max) MP_HIDDEN;
/* Set with it: the interpreter's text, where native frames stop. */
extern uintptr_t mp_python_text_lo MP_HIDDEN, mp_python_text_hi MP_HIDDEN;

#endif /* MEMPROV_STACK_H */
