/*
 * unwind_pipe.h - libunwind's memory check without a descriptor of its
 * own (unwind_pipe.c).
 *
 * Layer: 2 walk (docs/ARCHITECTURE.md): calls got and sys.
 */
#ifndef MEMPROV_UNWIND_PIPE_H
#define MEMPROV_UNWIND_PIPE_H

#include "sys.h"

/* Point libunwind's pipe2, read and write at memprov's; once, before
 * libunwind's first use. */
void mp_unwind_pipe_init(void) MP_HIDDEN;

#endif /* MEMPROV_UNWIND_PIPE_H */
