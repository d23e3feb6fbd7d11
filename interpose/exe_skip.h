/*
 * exe_skip.h - whether this process's program is one MEMPROV_SKIP_EXE
 * names (exe_skip.c).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md).
 */
#ifndef MEMPROV_EXE_SKIP_H
#define MEMPROV_EXE_SKIP_H

#include "sys.h"

/*
 * 1 when one of the comma-separated patterns (`*`, `?`) names the program
 * this process runs: with a `/`, its path as run (AT_EXECFN) or resolved
 * (/proc/self/exe); without, the last component of either.
 */
int mp_exe_skipped(const char *patterns) MP_HIDDEN;

#endif
