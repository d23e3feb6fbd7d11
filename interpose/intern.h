/*
 * intern.h - the stacks already written to the trace (intern.c): a
 * lock-free table from a stack's hash to the small id the trace names it
 * by; a stack's record is written the first time its hash is seen in the
 * process.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#ifndef MEMPROV_INTERN_H
#define MEMPROV_INTERN_H

#include <stdint.h>

#include "sys.h"

/* Map (or, in a forked child, map anew) an empty table; ids start at 1
 * again. 0, or -1. */
int mp_intern_init(void) MP_HIDDEN;
/* Where the set is mapped (len 0: not mapped): memprov's own memory. */
void mp_intern_range(uintptr_t *addr, size_t *len) MP_HIDDEN;
/*
 * The id (1, 2, ... below 2^24) of the stack whose hash is hash: *is_new
 * is 1 when this call gave it (write the stack's record then), 0 when it
 * had one already. 0 when the table cannot hold it (no table, or its
 * probe run is full). Safe from any thread and from a signal handler.
 */
uint32_t mp_intern_id(uint64_t hash, int *is_new) MP_HIDDEN;

#endif /* MEMPROV_INTERN_H */
