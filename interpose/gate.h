/*
 * gate.h - the fork gate (gate.c): no thread may be inside a call that
 * takes a lock of the loader or of libunwind when the process forks.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#ifndef MEMPROV_GATE_H
#define MEMPROV_GATE_H

#include "sys.h"

/* Around a call that takes such a lock: 1 entered (leave after), 0 when
 * the calling thread is the one forking, or the wait ran out: do without. */
int mp_gate_enter(void) MP_HIDDEN;
void mp_gate_leave(void) MP_HIDDEN;

/* fork's prepare handler: close the gate, wait until no thread is inside. */
void mp_gate_close(void) MP_HIDDEN;
/* In the parent after fork, and in the child (which has no other thread). */
void mp_gate_open(void) MP_HIDDEN;

#endif /* MEMPROV_GATE_H */
