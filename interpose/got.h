/*
 * got.h - point a loaded object's GOT entries for given functions at
 * memprov's hooks (got.c), for objects that bypass interposition: a
 * library opened with RTLD_DEEPBIND binds malloc and free to libc's own,
 * ahead of the preloaded library.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#ifndef MEMPROV_GOT_H
#define MEMPROV_GOT_H

#include <link.h>

#include "sys.h"

struct mp_got_fn {
	const char *name;
	void *addr;
};

/*
 * Rewrite every JUMP_SLOT and GLOB_DAT relocation of the object info that
 * names one of fns[0..n) so that it holds that function's addr (pages of
 * RELRO made writable for the write, then read-only again). Returns how
 * many entries were rewritten, or -1 when the object's dynamic section is
 * not understood (nothing rewritten).
 */
int mp_got_redirect(const struct dl_phdr_info *info, const struct mp_got_fn *fns, int n) MP_HIDDEN;
/*
 * The same for the entries still bound to only[k] (the function fns[k]
 * stands in for), or not bound yet (lazy binding: the entry points into
 * the object itself, and would bind to the first definition), the
 * object's own definitions of those names included; an entry bound to
 * anything else (the object's own definition too), or a name whose
 * only[k] is NULL, is left.
 */
int mp_got_redirect_bound(const struct dl_phdr_info *info, const struct mp_got_fn *fns,
			  const void *const *only, int n) MP_HIDDEN;

#endif /* MEMPROV_GOT_H */
