/*
 * sigboard.h - the command's side of memprov run's signal board
 * (include/memprov_sigboard.h; sigboard.c).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#ifndef MEMPROV_SIGBOARD_INT_H
#define MEMPROV_SIGBOARD_INT_H

#include <signal.h>

#include "sys.h"

/* Map the board MEMPROV_RUN_SIGNALS names ("": none), if this process is its command. */
void mp_sigboard_open(const char *spec) MP_HIDDEN;
/* In a signal handler: note sig from si's sender. Async-signal-safe. */
void mp_sigboard_note(int sig, const siginfo_t *si) MP_HIDDEN;

#endif /* MEMPROV_SIGBOARD_INT_H */
