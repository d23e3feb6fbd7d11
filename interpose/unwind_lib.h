/*
 * unwind_lib.h - libunwind, opened the first time a stack needs it, with
 * its memory check kept off the program's descriptors (unwind_lib.c).
 *
 * Layer: 2 walk (docs/ARCHITECTURE.md): calls libc_real, elfsym, got and sys.
 */
#ifndef MEMPROV_UNWIND_LIB_H
#define MEMPROV_UNWIND_LIB_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "sys.h"

/* The libunwind functions memprov calls. */
struct mp_unw {
	int (*backtrace)(void **buf, int size);
	int (*getcontext)(unw_context_t *uc);
	int (*init_local)(unw_cursor_t *cur, unw_context_t *uc);
	int (*get_reg)(unw_cursor_t *cur, unw_regnum_t reg, unw_word_t *val);
	int (*step)(unw_cursor_t *cur);
};

/*
 * libunwind's functions, opening libunwind.so.8 on the first call (with
 * the loader's lock, and allocations of the loader's: the caller lets
 * them pass untraced). NULL where it cannot be opened (not installed), or
 * not now: the process has more than one thread (the loader's lock could
 * be held by a thread waiting for a lock the caller holds; init.c opens
 * it before the first pthread_create), another thread is opening it, or
 * the loader is in the middle of mapping an object (this thread may be
 * inside dlopen), where the caller goes without.
 */
const struct mp_unw *mp_unw_get(void) MP_HIDDEN;

/*
 * Open libunwind now, ahead of any need, where that is safe (init.c,
 * before the first thread starts): nothing is said if it cannot be; a
 * stack that needs it later says so then.
 */
void mp_unw_prepare(void) MP_HIDDEN;

/* Whether libunwind is open already (mp_unw_get opens nothing then). */
int mp_unw_is_open(void) MP_HIDDEN;

#endif /* MEMPROV_UNWIND_LIB_H */
