/*
 * modules.h - the loaded objects, recorded for offline symbolization
 * (modules.c).
 *
 * Layer: 4 capture (docs/ARCHITECTURE.md).
 */
#ifndef MEMPROV_MODULES_H
#define MEMPROV_MODULES_H

#include "sys.h"

/* Record new objects and the unloading of those gone since the last scan. */
void mp_modules_scan(void) MP_HIDDEN;
void mp_modules_reset(void) MP_HIDDEN;      /* in a forked child: none written yet */

#endif /* MEMPROV_MODULES_H */
