/*
 * alloc_fn.h - the allocation API a site is named by. The innermost
 * frames of a recorded stack belong to the allocator: memprov's own hook,
 * libc's allocation functions, operator new/new[] (and delete/delete[]),
 * and wrappers such as strdup, the PyMem_ and PyObject_ allocators or
 * numpy's data allocator. Reports fold those frames away: the site is the
 * first frame outside them, and the outermost one names the API the
 * program called ("operator new", "strdup"). Users add their own
 * (`--alloc-fn NAME`, `alloc:NAME` in a suppression file).
 */
#ifndef MEMPROV_ALLOC_FN_H
#define MEMPROV_ALLOC_FN_H

#include "symbolize.h"

/*
 * Add a user's allocation function: a function name without its
 * parameters ("xmalloc", "Pool::allocate"), '*' matching any run of
 * characters. Returns 0, or -1 when NAME is not a name (empty, with
 * parameters or control characters) or is one too many (1024 at most):
 * the caller says so. A name given twice counts once.
 * The list lives as long as the process (one command per process).
 */
int alloc_fn_add(const char *name);

/*
 * The API f belongs to when it is an allocation function (built in or
 * added), else NULL: the name the program called ("strdup" for glibc's
 * __strdup, "operator new" for any of its overloads, the user's NAME).
 */
const char *alloc_fn_match(const struct sym_frame *f);

/* The same for a function name seen from frame f (its module): a callee's name. */
const char *alloc_fn_match_name(const char *function, const struct sym_frame *f);

#endif /* MEMPROV_ALLOC_FN_H */
