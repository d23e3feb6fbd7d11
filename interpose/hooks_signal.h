/*
 * hooks_signal.h - what init.c needs of hooks_signal.c.
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md).
 */
#ifndef MEMPROV_HOOKS_SIGNAL_H
#define MEMPROV_HOOKS_SIGNAL_H

#include "sys.h"

/* At start: record the death of the process by any signal it leaves at
 * its default action (SIGABRT, SIGSEGV, SIGTERM, ...). */
void mp_signal_watch_deaths(void) MP_HIDDEN;
/* In a forked child: forget the parent's signal-handler contexts. */
void mp_signal_fork_child(void) MP_HIDDEN;
/* The signals watched for deaths get the program's own action back (a
 * sandboxed process: on_death's calls could be what kills it). */
void mp_signal_unwatch_deaths(void) MP_HIDDEN;

#endif /* MEMPROV_HOOKS_SIGNAL_H */
