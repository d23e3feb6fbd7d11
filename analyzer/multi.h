/*
 * multi.h - reports over a job of many processes: a run directory
 * (`memprov run -d DIR`) or several traces named on the command line.
 * `leaks` merges the sites of every process by their symbolized stack,
 * with per-process counts; `stats` prints the process tree.
 */
#ifndef MEMPROV_MULTI_H
#define MEMPROV_MULTI_H

#include <stddef.h>

#include "report.h"

/* Does a report's command line name many traces (two or more, or a directory)? */
int multi_wanted(char **operands, int n);

/*
 * The traces the operands name, a directory standing for the traces in it
 * (by pid, then name): *paths newly allocated (free each and the array).
 * Returns 0, or -1 after the error (an operand that cannot be read, or a
 * directory without a trace).
 */
int multi_expand(char **operands, int n, char ***paths, size_t *np);

/* `memprov leaks` over many traces (a->traces): the exit status. */
int multi_leaks(const struct report_args *a, int per_process);

/* `memprov stats` over many traces: the process tree. */
int multi_stats(const struct report_args *a);

#endif /* MEMPROV_MULTI_H */
