/*
 * hooks_cxx.h - C++'s operator new and delete where a malloc replacement
 * (jemalloc, tcmalloc) defines them, and jemalloc's mallocx family
 * (hooks_cxx.c).
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md).
 */
#ifndef MEMPROV_HOOKS_CXX_H
#define MEMPROV_HOOKS_CXX_H

#include "sys.h"

/*
 * At start-up, once the modules are known: when the first operator new
 * (or mallocx) is a malloc replacement's, point every object's GOT
 * entries for its operators (and its mallocx family) at memprov's
 * wrappers. Then, around each dlopen:
 * mp_cxx_objects() before (0 when there is nothing to do), and
 * mp_cxx_patch(that count) after, for the objects the dlopen added.
 */
void mp_cxx_init(void) MP_HIDDEN;
int mp_cxx_objects(void) MP_HIDDEN;
void mp_cxx_patch(int skip) MP_HIDDEN;

/*
 * dlsym (hooks_dlsym.c): whether name may be one of jemalloc's functions
 * that memprov wraps, and what a lookup of it that found `found` gives:
 * memprov's wrapper where found is the replacement's function, else found
 * (a program that looks mallocx up itself, as Folly does).
 */
int mp_cxx_hook_wants(const char *name) MP_HIDDEN;
/*
 * Whether ra lies in the code of the object whose functions the wrappers
 * call (hooks_libc.c): its mappings inside those calls are its heap,
 * even where it is not the process's malloc (jemalloc loaded by a
 * library, after libc: its mallocx blocks lay inside its mappings,
 * recorded as the program's, counted twice and a dropped one reachable).
 */
int mp_cxx_owns(const void *ra) MP_HIDDEN;
void *mp_cxx_hook_for(const char *name, void *found) MP_HIDDEN;

#endif /* MEMPROV_HOOKS_CXX_H */
