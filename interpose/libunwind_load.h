/*
 * libunwind_load.h - libunwind, loaded for memprov alone (libunwind_load.c).
 *
 * Layer: 2 walk (docs/ARCHITECTURE.md): calls elfsym and libc_real.
 */
#ifndef MEMPROV_LIBUNWIND_LOAD_H
#define MEMPROV_LIBUNWIND_LOAD_H

#ifndef UNW_LOCAL_ONLY
#define UNW_LOCAL_ONLY /* the types and register numbers; no function is linked */
#endif
#include <libunwind.h>

#include "sys.h"

/* libunwind's functions memprov calls; all NULL when it could not be loaded. */
struct mp_libunwind {
	int (*backtrace)(void **, int);
	int (*getcontext)(unw_context_t *);
	int (*init_local)(unw_cursor_t *, unw_context_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*step)(unw_cursor_t *);
};

extern struct mp_libunwind mp_unw MP_HIDDEN;

/* Load libunwind (once; a forked child has it): 0, or -1 when it is not
 * there (stacks the fast walk cannot walk then have no native frames). */
int mp_libunwind_load(void) MP_HIDDEN;

#endif /* MEMPROV_LIBUNWIND_LOAD_H */
