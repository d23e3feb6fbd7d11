/*
 * libunwind_load.h - libunwind's functions as memprov calls them
 * (libunwind_load.c says why libgcc_s is loaded before libunwind).
 *
 * Layer: 2 walk (docs/ARCHITECTURE.md): calls nothing of memprov's.
 */
#ifndef MEMPROV_LIBUNWIND_LOAD_H
#define MEMPROV_LIBUNWIND_LOAD_H

#ifndef UNW_LOCAL_ONLY
#define UNW_LOCAL_ONLY /* the local unwinder's names (_UL...) */
#endif
#include <libunwind.h>

#include "sys.h"

/* libunwind's functions memprov calls (NULL before mp_libunwind_load). */
struct mp_libunwind {
	int (*backtrace)(void **, int);
	int (*getcontext)(unw_context_t *);
	int (*init_local)(unw_cursor_t *, unw_context_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*step)(unw_cursor_t *);
};

extern struct mp_libunwind mp_unw MP_HIDDEN;

/* Fill mp_unw: 0. */
int mp_libunwind_load(void) MP_HIDDEN;

#endif /* MEMPROV_LIBUNWIND_LOAD_H */
