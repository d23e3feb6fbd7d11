/*
 * hooks_sandbox.h - what hooks_dlsym.c and init.c ask of hooks_sandbox.c:
 * prctl and syscall looked up through a handle get memprov's hook where
 * the lookup found libc's function; the buffer an exec builds its
 * environment in, in a sandboxed process.
 */
#ifndef MEMPROV_HOOKS_SANDBOX_H
#define MEMPROV_HOOKS_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

#include "sys.h"

int mp_sandbox_hook_wants(const char *name) MP_HIDDEN;
void *mp_sandbox_hook_for(const char *name, void *found) MP_HIDDEN;

/* In a sandboxed process: a buffer mapped before the filter went in, for
 * the environment an exec passes on (init.c), and its size in *len; NULL
 * when there is none. */
void *mp_sandbox_exec_buf(size_t *len) MP_HIDDEN;

/* What runs around a fork made with syscall(SYS_clone or SYS_clone3)
 * without CLONE_VM, on the same stack (init.c's fork handling). */
void mp_clone_fork_hooks(void (*prepare)(void), void (*parent)(pid_t), void (*child)(void)) MP_HIDDEN;
/*
 * syscall(SYS_exit_group, status) ends the process with no exit handler
 * run, as _exit does: init.c's _exit handling (the scan, the exit
 * record) runs first. A raw exit_group instruction (Go's runtime makes
 * one) is seen by nobody.
 */
void mp_syscall_exit_hook(void (*exit_group)(int)) MP_HIDDEN;

#endif /* MEMPROV_HOOKS_SANDBOX_H */
