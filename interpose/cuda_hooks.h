/*
 * cuda_hooks.h - what hooks_dlsym.c and hooks_cuda.c share (private to
 * libmemprov.so).
 *
 * hooks_dlsym.c owns dlsym/dlvsym: it hands every lookup of a CUDA driver
 * name to hooks_cuda.c, which may return a wrapper in place of the
 * function the real lookup (elfsym.c) found.
 */
#ifndef MEMPROV_CUDA_HOOKS_H
#define MEMPROV_CUDA_HOOKS_H

#include "elfsym.h"
#include "recorder.h"

/* hooks_cuda.c: nonzero when dlsym(name) may need a wrapper. Cheap. */
int mp_cuda_wants(const char *name) MP_HIDDEN;

/*
 * hooks_cuda.c: given what the real dlsym/dlvsym returned for name from
 * handle, return the function the caller should get (a wrapper or real).
 */
void *mp_cuda_wrap_dlsym(void *handle, const char *name, void *real) MP_HIDDEN;

#endif /* MEMPROV_CUDA_HOOKS_H */
