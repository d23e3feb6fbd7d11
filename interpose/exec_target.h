/*
 * exec_target.h - what an exec is about to run (exec_target.c).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#ifndef MEMPROV_EXEC_TARGET_H
#define MEMPROV_EXEC_TARGET_H

#include <stddef.h>

#include "sys.h"

/*
 * 1 when the program an exec would run needs a sanitizer's runtime that
 * refuses to start after a preloaded library (AddressSanitizer's,
 * HWASan's). The program is the file open at fd when fd >= 0, else file;
 * search: file is looked up in the PATH of env as execvp does when it
 * has no '/'. 0 when it does not, or cannot be read.
 */
int mp_exec_needs_first(const char *file, int fd, int search, char *const *env) MP_HIDDEN;

/* Does the file name (n bytes, a base name) name such a runtime? */
int mp_exec_first_runtime(const char *name, size_t n) MP_HIDDEN;

#endif
