/*
 * hooks_signal.h - what init.c needs of hooks_signal.c.
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md).
 */
#ifndef MEMPROV_HOOKS_SIGNAL_H
#define MEMPROV_HOOKS_SIGNAL_H

#include "sys.h"

/* In a forked child: forget the parent's signal-handler contexts. */
void mp_signal_fork_child(void) MP_HIDDEN;

#endif /* MEMPROV_HOOKS_SIGNAL_H */
