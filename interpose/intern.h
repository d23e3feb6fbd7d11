/*
 * intern.h - a lock-free set of 64-bit stack ids (intern.c): a stack's
 * record is written the first time its id is seen in the process.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#ifndef MEMPROV_INTERN_H
#define MEMPROV_INTERN_H

#include <stdint.h>

#include "sys.h"

/* Map (or, in a forked child, map anew) an empty set. 0, or -1. */
int mp_intern_init(void) MP_HIDDEN;
/* Where the set is mapped (len 0: not mapped): memprov's own memory. */
void mp_intern_range(uintptr_t *addr, size_t *len) MP_HIDDEN;
/*
 * 1 when id (never 0) was not in the set and now is, or the set cannot
 * hold it (no set, or its probe run is full): write its record then.
 * 0 when it was there. Safe from any thread and from a signal handler.
 */
int mp_intern_insert(uint64_t id) MP_HIDDEN;

#endif /* MEMPROV_INTERN_H */
