/*
 * cuda_hooks.h - what hooks_dlsym.c and hooks_cuda.c share (private to
 * libmemprov.so).
 *
 * hooks_dlsym.c owns dlsym/dlvsym: it finds libc's real ones by reading
 * libc's dynamic symbol table itself (never through the public dlsym) and
 * hands every lookup of a CUDA driver name to hooks_cuda.c, which may
 * return a wrapper in place of the function the real lookup found.
 */
#ifndef MEMPROV_CUDA_HOOKS_H
#define MEMPROV_CUDA_HOOKS_H

#include "recorder.h"

/*
 * The real dlsym/dlvsym. Called from C inside libmemprov.so, so
 * RTLD_NEXT means "after libmemprov.so". NULL result when the symbol is
 * not found (or the real dlsym could not be located at all).
 */
void *mp_real_dlsym(void *handle, const char *name) MP_HIDDEN;
void *mp_real_dlvsym(void *handle, const char *name, const char *version) MP_HIDDEN;

/*
 * Look name up (default version) in the objects loaded after the one that
 * contains caller, as dlsym(RTLD_NEXT, name) called from caller would.
 */
void *mp_dlsym_next_after(const void *caller, const char *name) MP_HIDDEN;

/*
 * Look name up (default version) in the first loaded object whose file
 * name starts with prefix. Walks the loaded objects on every call: an
 * object found once may have been dlclosed since.
 */
void *mp_dlsym_in_object(const char *prefix, const char *name) MP_HIDDEN;

/* hooks_cuda.c: nonzero when dlsym(name) may need a wrapper. Cheap. */
int mp_cuda_wants(const char *name) MP_HIDDEN;

/*
 * hooks_cuda.c: given what the real dlsym/dlvsym returned for name from
 * handle, return the function the caller should get (a wrapper or real).
 */
void *mp_cuda_wrap_dlsym(void *handle, const char *name, void *real) MP_HIDDEN;

#endif /* MEMPROV_CUDA_HOOKS_H */
