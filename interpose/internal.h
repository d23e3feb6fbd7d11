/*
 * internal.h - what the core files of libmemprov.so (trace_writer.c,
 * stack.c, modules.c, hooks_libc.c, config.c, init.c) share beyond
 * recorder.h. Not for the hook files of other areas: they use recorder.h.
 */
#ifndef MEMPROV_INTERNAL_H
#define MEMPROV_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "recorder.h"

/* The trace file (trace_writer.c). */
extern struct mp_file_header *mp_header MP_HIDDEN;
int mp_trace_open(void) MP_HIDDEN;          /* 0 ok, -1 (warned) */
int mp_trace_fd(void) MP_HIDDEN;            /* the trace file, to read it back; -1 */
void mp_trace_set_state(enum mp_state st, int32_t status) MP_HIDDEN;
void mp_trace_fork_child(void) MP_HIDDEN;   /* drop the parent's file */
void mp_record_exit(int status, unsigned how) MP_HIDDEN;
void mp_record_fork(pid_t child) MP_HIDDEN;
void mp_record_rss(void) MP_HIDDEN;         /* a resident-memory sample now */

/* Stacks (stack.c). */
int mp_stack_init(void) MP_HIDDEN;
void mp_stack_reset(void) MP_HIDDEN;        /* in a forked child */
void mp_stack_fork_prepare(void) MP_HIDDEN; /* no capture runs until ... */
void mp_stack_fork_done(void) MP_HIDDEN;    /* ... this, in parent and child */

/* Loaded objects (modules.c). */
void mp_modules_scan(void) MP_HIDDEN;
void mp_modules_reset(void) MP_HIDDEN;      /* in a forked child: forget all */
int mp_self_text(uintptr_t *lo, uintptr_t *hi) MP_HIDDEN;

/* Hooks (hooks_libc.c). */
void mp_hooks_resolve(void) MP_HIDDEN;

#endif /* MEMPROV_INTERNAL_H */
