/*
 * hooks_libc.h - what hooks_dlsym.c and init.c ask of the heap hooks (hooks_libc.c).
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md).
 */
#ifndef MEMPROV_HOOKS_LIBC_H
#define MEMPROV_HOOKS_LIBC_H

#include "sys.h"

/* Whether name is one of the heap functions memprov hooks (malloc, free,
 * ..., mmap, munmap, mremap). */
int mp_heap_hook_wants(const char *name) MP_HIDDEN;

/*
 * What a dlsym of heap function name through a handle should give when
 * the loader found `found`: memprov's hook where found is the very
 * function the hook forwards to (libc's malloc looked up in libc's own
 * handle, as ctypes.CDLL("libc.so.6").malloc does: its blocks went
 * unrecorded, and its frees left blocks live), else found.
 */
void *mp_heap_hook_for(const char *name, void *found) MP_HIDDEN;

/*
 * Look for the malloc replacement (the object whose malloc memprov
 * forwards to, if not libc's) now, in memprov's constructor: looked for at
 * its first mapping instead, it would be inside that allocation, with
 * the replacement's locks held, and the loader's lock taken then could
 * deadlock with a thread allocating under it.
 */
void mp_replacement_find(void) MP_HIDDEN;

#endif /* MEMPROV_HOOKS_LIBC_H */
