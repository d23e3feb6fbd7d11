/*
 * multi.h - reports over a job of many processes: a run directory
 * (`memprov run -d DIR`) or several traces named on the command line.
 * `leaks` and `growth` map each trace to its summary (the JSON that
 * `leaks --json TRACE` writes) in worker processes, several traces at
 * once, and reduce the summaries (merge.h); `stats` prints the process
 * tree.
 */
#ifndef MEMPROV_MULTI_H
#define MEMPROV_MULTI_H

#include <stddef.h>

#include "merge.h"
#include "report.h"

/* Does a report's command line name many traces (two or more, or a directory)? */
int multi_wanted(char **operands, int n);

/*
 * The traces the operands name, a directory standing for the traces in it
 * (by pid, then name): *paths newly allocated (free each and the array).
 * An operand that cannot be read, or a directory without a trace, is an
 * error said on stderr, and the others are still expanded. Returns how
 * many operands failed, or -1 when no trace at all was found (*paths
 * then untouched).
 */
int multi_expand(char **operands, int n, char ***paths, size_t *np);

/* One trace's report on stdout, as a->flags say (the map step sets
 * REPORT_JSON: the summary, one line); the exit status. */
typedef int (*multi_one_fn)(const struct report_args *a, const char *path);

/*
 * The map step over the traces a->traces name: one() on each, in
 * a->jobs worker processes (0: one per CPU), each reading one trace at a
 * time; their summaries reduced into m in the order of the traces (the
 * report does not depend on the number of workers). *n_traces: how many.
 * Returns the exit status (1: an operand, a trace or a summary lost), or
 * -1 when the operands name no trace (the errors said so; m is empty).
 */
int multi_map(const struct report_args *a, multi_one_fn one, struct merge *m, size_t *n_traces);

/* multi_map, then the merged report (text, or JSON with --json) on stdout: the exit status. */
int multi_report(const struct report_args *a, multi_one_fn one);

/* `memprov stats` over many traces: the process tree. */
int multi_stats(const struct report_args *a);

#endif /* MEMPROV_MULTI_H */
