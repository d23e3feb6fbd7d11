/*
 * hooks_sandbox.h - what hooks_dlsym.c asks of hooks_sandbox.c: prctl and
 * syscall looked up through a handle get memprov's hook where the lookup
 * found libc's function (see hooks_sandbox.c).
 */
#ifndef MEMPROV_HOOKS_SANDBOX_H
#define MEMPROV_HOOKS_SANDBOX_H

#include "sys.h"

int mp_sandbox_hook_wants(const char *name) MP_HIDDEN;
void *mp_sandbox_hook_for(const char *name, void *found) MP_HIDDEN;

#endif /* MEMPROV_HOOKS_SANDBOX_H */
