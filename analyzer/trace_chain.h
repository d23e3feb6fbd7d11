/*
 * trace_chain.h - traces found by their names and headers alone, without
 * reading their records: the names libmemprov.so gives for an output
 * template, and which trace continues one whose process called exec.
 */
#ifndef MEMPROV_TRACE_CHAIN_H
#define MEMPROV_TRACE_CHAIN_H

#include <glob.h>

#include "../include/memprov_trace.h"

/*
 * The file header of path: 0 when path is a regular file that starts
 * with a memprov trace header, -1 otherwise (nothing printed).
 */
int trace_peek(const char *path, struct mp_file_header *h);

/* tmpl with every %p replaced by rep and %% by %, as the library does. */
char *trace_expand(const char *tmpl, const char *rep);

/*
 * The template the library really uses: a directory (an existing one, or
 * a name ending in '/') stands for DIR/memprov.%p.trace. Newly allocated.
 */
char *trace_template(const char *tmpl);

/* Does the template name one file whatever the pid (no %p)? */
int trace_template_fixed(const char *tmpl);

/*
 * Every file the template can have produced: %p as any pid, and the
 * numbered names the library falls back to when a name is taken
 * (NAME.<k>.trace, or NAME.<k> without the .trace suffix). A name can be
 * listed twice; g is empty when nothing matches. Free g with
 * trace_glob_free, not globfree.
 */
void trace_glob(const char *tmpl, glob_t *g);
void trace_glob_free(glob_t *g);

/*
 * The trace that continues the one at path (header h, state exec): a
 * trace of the same pid among its numbered siblings, begun when h ended.
 * Newly allocated, or NULL when none is there.
 */
char *trace_exec_successor(const char *path, const struct mp_file_header *h);

#endif /* MEMPROV_TRACE_CHAIN_H */
