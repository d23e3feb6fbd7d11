/*
 * hooks_cxx.c - C++'s operator new and delete, where a malloc replacement
 * defines them; and jemalloc's own API (mallocx, rallocx, xallocx,
 * sdallocx, dallocx), the same way (JE_FNS below).
 *
 * libstdc++'s operator new calls malloc, which memprov interposes, so a
 * C++ program's allocations are seen without anything here. A malloc
 * replacement (jemalloc, tcmalloc, mimalloc: preloaded after memprov, or
 * a library the program links) defines operator new and delete too, and
 * they allocate without calling malloc: every C++ allocation went past
 * memprov, and a leaking C++ program passed the gate (a helper's sweep
 * with libjemalloc.so.2 in LD_PRELOAD).
 *
 * memprov does not define operator new itself: a C++ extension that
 * Python loads with RTLD_LOCAL would bind to it, with no libstdc++ in
 * reach to forward to. Instead, when the first definition of operator
 * new is in a shared object that defines malloc as well, each loaded
 * object's GOT entries bound to that object's operators (or lazy ones
 * not bound yet) are pointed at the wrappers below (got.c), the
 * replacement's own entries left alone; objects that dlopen loads later
 * get the same. A wrapper calls the replacement's operator and records
 * what it did as malloc or free (the site's heading names the operator
 * from the call instruction, as the analyzer does for a folded one). A
 * replacement whose operator new calls malloc has its block recorded
 * there, and the wrapper sees it (the thread's last ALLOC) and records
 * nothing more; nothing is held across the call, so an exception that
 * operator new throws leaves through the wrapper untouched (C code with
 * cleanups would need libgcc_s in every traced process). A delete
 * cannot throw: the calls out of it pass through the hooks unrecorded.
 * Both mark the thread inside the allocator (mp_self.in_alloc), so that
 * the replacement's mappings meanwhile are its own (hooks_libc.c); an
 * exception leaves the mark set on that thread, where every mapping
 * made from the replacement's code is then taken for its own.
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls record, got, elfsym,
 * config and sys.
 */
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

#include "config.h"
#include "elfsym.h"
#include "got.h"
#include "hooks_cxx.h"
#include "recorder.h"

/*
 * The operators, Itanium-mangled for x86-64 (size_t is unsigned long,
 * std::align_val_t an enum of size_t, nothrow_t passed by reference):
 * X(id, symbol, parameters, arguments). N: operator new, D: delete.
 */
#define CXX_NEW(N)                                                                      \
	N(nw, "_Znwm", (size_t n), (n))                                                 \
	N(na, "_Znam", (size_t n), (n))                                                 \
	N(nw_nt, "_ZnwmRKSt9nothrow_t", (size_t n, const void *t), (n, t))              \
	N(na_nt, "_ZnamRKSt9nothrow_t", (size_t n, const void *t), (n, t))              \
	N(nw_al, "_ZnwmSt11align_val_t", (size_t n, size_t al), (n, al))                \
	N(na_al, "_ZnamSt11align_val_t", (size_t n, size_t al), (n, al))                \
	N(nw_al_nt, "_ZnwmSt11align_val_tRKSt9nothrow_t", (size_t n, size_t al, const void *t), \
	  (n, al, t))                                                                   \
	N(na_al_nt, "_ZnamSt11align_val_tRKSt9nothrow_t", (size_t n, size_t al, const void *t), \
	  (n, al, t))
#define CXX_DELETE(D)                                                                   \
	D(dl, "_ZdlPv", (void *p), (p))                                                 \
	D(da, "_ZdaPv", (void *p), (p))                                                 \
	D(dl_sz, "_ZdlPvm", (void *p, size_t n), (p, n))                                \
	D(da_sz, "_ZdaPvm", (void *p, size_t n), (p, n))                                \
	D(dl_nt, "_ZdlPvRKSt9nothrow_t", (void *p, const void *t), (p, t))              \
	D(da_nt, "_ZdaPvRKSt9nothrow_t", (void *p, const void *t), (p, t))              \
	D(dl_al, "_ZdlPvSt11align_val_t", (void *p, size_t al), (p, al))                \
	D(da_al, "_ZdaPvSt11align_val_t", (void *p, size_t al), (p, al))                \
	D(dl_sz_al, "_ZdlPvmSt11align_val_t", (void *p, size_t n, size_t al), (p, n, al)) \
	D(da_sz_al, "_ZdaPvmSt11align_val_t", (void *p, size_t n, size_t al), (p, n, al)) \
	D(dl_al_nt, "_ZdlPvSt11align_val_tRKSt9nothrow_t", (void *p, size_t al, const void *t), \
	  (p, al, t))                                                                   \
	D(da_al_nt, "_ZdaPvSt11align_val_tRKSt9nothrow_t", (void *p, size_t al, const void *t), \
	  (p, al, t))

/*
 * jemalloc's own API (mallocx and the rest), which Folly calls where
 * jemalloc is loaded: its blocks were not recorded, and under the scan's
 * rule that a replacement's mappings are not roots (hooks_libc.c), a
 * block only such memory pointed to was called lost.
 */
#define JE_FNS(J)                                                                       \
	J(mallocx, "mallocx")                                                           \
	J(rallocx, "rallocx")                                                           \
	J(xallocx, "xallocx")                                                           \
	J(sdallocx, "sdallocx")                                                         \
	J(dallocx, "dallocx")

enum {
#define INDEX(id, sym, params, args) I_##id,
	CXX_NEW(INDEX) CXX_DELETE(INDEX)
#undef INDEX
	N_CXX,
	I_JE_BEFORE = N_CXX - 1, /* so that the first of JE_FNS is N_CXX */
#define JINDEX(id, sym) I_##id,
	JE_FNS(JINDEX)
#undef JINDEX
	N_FNS
};

/* The replacement's operators, by I_*: what each wrapper calls and the
 * only GOT entries it takes over (NULL: not defined there, left alone). */
static const void *only[N_FNS];

static uintptr_t rep_base; /* the replacement's load bias; 0: none found */
static uintptr_t own_lo, own_hi; /* its text */
static int active;

static void record_new(void *p, size_t n)
{
	if (p && ~(uintptr_t)p != mp_self.last_alloc && mp_config.heap && mp_enter_fn(MP_FN_malloc)) {
		mp_record_alloc(MP_FN_malloc, MP_KIND_HEAP, p, n, 0);
		mp_leave();
	}
}

/* Recorded before the real call: another thread may get the address at once. */
static int record_delete(void *p)
{
	if (p && mp_config.heap && mp_enter_fn(MP_FN_free)) {
		mp_record_free(MP_FN_free, MP_KIND_HEAP, p, 0);
		mp_leave();
	}
	return mp_pass_begin();
}

#define WRAP_NEW(id, sym, params, args)                                \
	MP_REALIGN static void *w_##id params                          \
	{                                                              \
		void *p;                                               \
		mp_self.last_alloc = 0;                                \
		p = MP_IN_ALLOC(((void *(*) params)only[I_##id]) args); \
		record_new(p, n);                                      \
		return p;                                              \
	}
#define WRAP_DEL(id, sym, params, args)                                \
	MP_REALIGN static void w_##id params                           \
	{                                                              \
		int g = record_delete(p);                              \
		mp_self.in_alloc++;                                    \
		((void (*) params)only[I_##id]) args;                  \
		mp_self.in_alloc--;                                    \
		mp_pass_end(g);                                        \
	}
CXX_NEW(WRAP_NEW)
CXX_DELETE(WRAP_DEL)
#undef WRAP_NEW
#undef WRAP_DEL

MP_REALIGN static void *w_mallocx(size_t n, int flags)
{
	void *p;

	mp_self.last_alloc = 0;
	p = MP_IN_ALLOC(((void *(*)(size_t, int))only[I_mallocx])(n, flags));
	record_new(p, n);
	return p;
}

/* A resize, as realloc's: the free half before the call, the alloc half after. */
static int resize_begin(void *p)
{
	int rec = p && mp_config.heap && mp_enter_fn(MP_FN_realloc);

	if (rec) {
		mp_record_free(MP_FN_realloc, MP_KIND_HEAP, p, MP_RF_REALLOC);
		mp_leave();
	}
	return rec;
}

static void resize_end(int rec, void *q, size_t n)
{
	if (rec && mp_enter_fn(MP_FN_realloc)) {
		mp_record_alloc(MP_FN_realloc, MP_KIND_HEAP, q, n,
				MP_RF_REALLOC | (q ? 0 : MP_RF_FAILED));
		mp_leave();
	}
}

MP_REALIGN static void *w_rallocx(void *p, size_t n, int flags)
{
	int rec = resize_begin(p);
	void *q = MP_IN_ALLOC(((void *(*)(void *, size_t, int))only[I_rallocx])(p, n, flags));

	resize_end(rec, q, n); /* NULL: p stays as it was */
	return q;
}

/* Resized in place, never moved: the size it has now. */
MP_REALIGN static size_t w_xallocx(void *p, size_t n, size_t extra, int flags)
{
	int rec = resize_begin(p);
	size_t got = MP_IN_ALLOC(
		((size_t(*)(void *, size_t, size_t, int))only[I_xallocx])(p, n, extra, flags));

	resize_end(rec, p, got);
	return got;
}

MP_REALIGN static void w_sdallocx(void *p, size_t n, int flags)
{
	int g = record_delete(p);

	mp_self.in_alloc++;
	((void (*)(void *, size_t, int))only[I_sdallocx])(p, n, flags);
	mp_self.in_alloc--;
	mp_pass_end(g);
}

MP_REALIGN static void w_dallocx(void *p, int flags)
{
	int g = record_delete(p);

	mp_self.in_alloc++;
	((void (*)(void *, int))only[I_dallocx])(p, flags);
	mp_self.in_alloc--;
	mp_pass_end(g);
}

static const struct mp_got_fn fns[] = {
#define FN(id, sym, params, args) { sym, (void *)w_##id },
	CXX_NEW(FN)
	CXX_DELETE(FN)
#undef FN
#define JFN(id, sym) { sym, (void *)w_##id },
	JE_FNS(JFN)
#undef JFN
};

struct patch {
	int skip; /* objects to leave (loaded before a dlopen) */
	int seen;
};

static int patch_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct patch *pt = arg;

	(void)size;
	if (pt->seen++ < pt->skip || info->dlpi_addr == rep_base)
		return 0;
	mp_got_redirect_bound(info, fns, only, N_FNS);
	return 0;
}

static int count_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	++*(int *)arg;
	return 0;
}

int mp_cxx_objects(void)
{
	int n = 0;

	if (__atomic_load_n(&active, __ATOMIC_ACQUIRE))
		dl_iterate_phdr(count_one, &n);
	return n;
}

void mp_cxx_patch(int skip)
{
	struct patch pt = { skip, 0 };

	if (__atomic_load_n(&active, __ATOMIC_ACQUIRE))
		dl_iterate_phdr(patch_one, &pt);
}

int mp_cxx_owns(const void *ra)
{
	return (uintptr_t)ra >= own_lo && (uintptr_t)ra < own_hi;
}

int mp_cxx_hook_wants(const char *name)
{
	size_t n = strlen(name);

	/* each of JE_FNS ends so */
	return n >= 6 && !strcmp(name + n - 6, "allocx") && __atomic_load_n(&active, __ATOMIC_ACQUIRE);
}

void *mp_cxx_hook_for(const char *name, void *found)
{
	int i;

	for (i = N_CXX; i < N_FNS && found; i++)
		if (found == only[i] && !strcmp(name, fns[i].name))
			return fns[i].addr;
	return found;
}

/*
 * The load bias of the shared object that holds name's first definition
 * and defines malloc too: a malloc replacement's (0: none, or the
 * program's own, called directly, never through a GOT).
 */
static uintptr_t replacement_of(const char *name)
{
	static const char *const mal[1] = { "malloc" };
	void *at = mp_elf_lookup(name), *found[1];
	Dl_info di;

	if (!at || !dladdr(at, &di) || !di.dli_fbase || !di.dli_fname || !*di.dli_fname)
		return 0;
	mp_dlsym_at_each((uintptr_t)di.dli_fbase, mal, found, 1);
	return found[0] ? (uintptr_t)di.dli_fbase : 0;
}

MP_REALIGN void mp_cxx_init(void)
{
	static const char *const names[N_FNS] = {
#define NAME(id, sym, params, args) sym,
		CXX_NEW(NAME) CXX_DELETE(NAME)
#undef NAME
#define JNAME(id, sym) sym,
		JE_FNS(JNAME)
#undef JNAME
	};
	void *found[N_FNS];
	uintptr_t cxx = replacement_of("_Znwm"), je = replacement_of("mallocx");
	int i;

	/* no malloc of its own: libstdc++'s operator new, whose new calls malloc */
	if (cxx) {
		mp_dlsym_at_each(cxx, names, found, N_CXX);
		for (i = 0; i < N_CXX; i++)
			only[i] = found[i];
	}
	/* jemalloc's API, in the same object (or where libstdc++'s new came first) */
	if (je && (!cxx || je == cxx)) {
		mp_dlsym_at_each(je, names + N_CXX, found + N_CXX, N_FNS - N_CXX);
		for (i = N_CXX; i < N_FNS; i++)
			only[i] = found[i];
	}
	rep_base = cxx ? cxx : (je && only[I_mallocx] ? je : 0);
	if (!rep_base)
		return;
	for (i = 0; i < N_FNS && !own_hi; i++)
		if (only[i])
			mp_elf_text_of(only[i], &own_lo, &own_hi);
	__atomic_store_n(&active, 1, __ATOMIC_RELEASE);
	mp_cxx_patch(0);
}
