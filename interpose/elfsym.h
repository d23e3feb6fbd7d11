/*
 * elfsym.h - symbols and text ranges of loaded objects (elfsym.c).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#ifndef MEMPROV_ELFSYM_H
#define MEMPROV_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

#include "sys.h"

/*
 * The real dlsym/dlvsym. Called from C inside libmemprov.so, so
 * RTLD_NEXT means "after libmemprov.so". NULL result when the symbol is
 * not found (or the real dlsym could not be located at all).
 */
void *mp_real_dlsym(void *handle, const char *name) MP_HIDDEN;
void *mp_real_dlvsym(void *handle, const char *name, const char *version) MP_HIDDEN;
/* Find them now if not yet (idempotent); mp_dlsym_ptr is then set. */
void mp_elf_resolve_dlsym(void) MP_HIDDEN;
extern void *mp_dlsym_ptr MP_HIDDEN;
extern void *mp_dlvsym_ptr MP_HIDDEN;

/*
 * Look name up (default version) in the objects loaded after the one that
 * contains caller, as dlsym(RTLD_NEXT, name) called from caller would.
 */
void *mp_dlsym_next_after(const void *caller, const char *name) MP_HIDDEN;
/* The same for n names in one walk: found[i] for names[i], or NULL. */
void mp_dlsym_next_after_each(const void *caller, const char *const *names, void **found,
			      size_t n) MP_HIDDEN;
/* The same, and which object ahead of the caller's defines names[0] (elfsym.c). */
void mp_dlsym_next_after_each_ahead(const void *caller, const char *const *names, void **found,
				    size_t n, const char **ahead_obj) MP_HIDDEN;

/*
 * A lookup kept until the loaded objects change: mp_dl_changed(), which
 * the dlopen and dlclose hooks call, makes every kept one stale, so a
 * function found in a library that was unloaded is never called, and
 * one that a dlopen brought in is found. The generation is 64 bits (a
 * 16-bit one came round again after 65,536 loads, and a pointer into an
 * unloaded runtime was called), read around the pointer as a sequence
 * lock; one writer at a time. Zero-initialised: not looked up yet.
 */
typedef struct {
	uint64_t gen; /* 1 + the generation p was found in; 0: none (or being written) */
	void *p;
} mp_sym_cache;
void mp_dl_changed(void) MP_HIDDEN;
/* find(arg, name), kept in *c (NULL kept too) until the loaded objects change. */
void *mp_sym_cached(mp_sym_cache *c, void *(*find)(const void *arg, const char *name),
		    const void *arg, const char *name) MP_HIDDEN;
/*
 * name as the object holding caller would find it in its own scope: that
 * object, then the objects its DT_NEEDED entries name (one level); NULL
 * when none of them defines it (a symbol of the global scope, then).
 */
void *mp_dlsym_in_scope(const void *caller, const char *name) MP_HIDDEN;
/* name after the object holding self, as mp_dlsym_next_after, kept in *c. */
void *mp_next_cached(mp_sym_cache *c, const void *self, const char *name) MP_HIDDEN;

/*
 * Look name up (default version) in the first loaded object whose file
 * name starts with prefix. Walks the loaded objects on every call: an
 * object found once may have been dlclosed since.
 */
void *mp_dlsym_in_object(const char *prefix, const char *name) MP_HIDDEN;

/* names[i] as the object loaded at base defines it, in found[i] (NULL: not there). */
void mp_dlsym_at_each(uintptr_t base, const char *const *names, void **found, size_t n) MP_HIDDEN;

/* name's first definition in load order, as dlsym(RTLD_DEFAULT, name)
 * finds it, without dlsym (and so without dlerror's buffer); or NULL. */
void *mp_elf_lookup(const char *name) MP_HIDDEN;

/*
 * The sanitizer whose runtime is in the process ("AddressSanitizer",
 * "ThreadSanitizer", ...; "a sanitizer" for one linked into the program
 * by gcc, which does not say which), or NULL. Looked for once, the first time
 * asked. memprov stands aside in such a process: the heap is the
 * runtime's (AddressSanitizer's checks its own leaks).
 */
const char *mp_elf_sanitizer(void) MP_HIDDEN;

/* The executable range of the object holding addr. 0, or -1 (none). */
int mp_elf_text_of(const void *addr, uintptr_t *lo, uintptr_t *hi) MP_HIDDEN;

#endif /* MEMPROV_ELFSYM_H */
