/*
 * hooks_libc.c - the malloc family, anonymous mmap, and dlopen/dlclose,
 * interposed. Each hook calls the real function, then records on success
 * (frees are recorded before the real call: the address can be reused by
 * another thread at once). Real functions are found with
 * dlsym(RTLD_NEXT, ...); dlsym itself may call calloc/malloc before they
 * are known, so those calls are served from a static bootstrap arena
 * whose blocks are never freed.
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls record, modules, unwind, got,
 * hooks_cxx, libc_real, elfsym, config and sys.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomic.h"
#include "config.h"
#include "elfsym.h"
#include "got.h"
#include "hooks_cxx.h"
#include "hooks_libc.h"
#include "libc_real.h"
#include "modules.h"
#include "reach.h"
#include "recorder.h"
#include "unwind.h"

/* Bootstrap arena: each block is preceded by 16 bytes holding its size. */
static char arena[256 << 10] MP_BIG_BSS __attribute__((aligned(16)));
static uint64_t arena_used;

static void *arena_alloc(size_t n)
{
	size_t len = ((n + 15) & ~(size_t)15) + 16;
	uint64_t off;

	if (n > sizeof(arena))
		return NULL;
	off = mp_atomic_add_relaxed_u64(&arena_used, len);
	if (off + len > sizeof(arena))
		return NULL;
	*(size_t *)(arena + off) = n;
	return arena + off + 16;
}

static inline int in_arena(const void *p)
{
	return (const char *)p >= arena && (const char *)p < arena + sizeof(arena);
}

static inline int heap_enter(enum mp_func fn)
{
	return mp_config.heap && mp_enter_fn(fn);
}

static inline int mmap_enter(enum mp_func fn)
{
	return mp_config.mmap && mp_enter_fn(fn);
}

static inline void *record_new(enum mp_func fn, void *p, size_t n)
{
	if (heap_enter(fn)) {
		mp_record_alloc(fn, MP_KIND_HEAP, p, n, p ? 0 : MP_RF_FAILED);
		mp_leave();
	}
	return p;
}

/*
 * An allocation made inside libunwind, for memprov: glibc allocating
 * libunwind's thread-local storage on its first use on a thread (and the
 * loader, when it is opened). memprov may be there from the program's
 * own allocator, which holds its lock while it maps memory (jemalloc
 * making an arena: rustc hung), and calling the allocator again would
 * wait on that lock for good. Served from the bootstrap arena, which
 * takes no lock; the program's allocator only when the arena is full.
 */
static inline void *unw_alloc(size_t n)
{
	return MP_UNLIKELY(mp_self.in_unw) ? arena_alloc(n) : NULL;
}

MP_EXPORT void *malloc(size_t n)
{
	void *p;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_malloc))
		return arena_alloc(n);
	if (MP_UNLIKELY((p = unw_alloc(n)) != NULL))
		return p;
	return record_new(MP_FN_malloc, MP_IN_ALLOC(mp_real_malloc(n)), n);
}

MP_EXPORT void *calloc(size_t n, size_t m)
{
	size_t sz;
	void *p;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_calloc)) {
		if (__builtin_mul_overflow(n, m, &sz))
			return NULL;
		return arena_alloc(sz); /* static memory is zero */
	}
	if (__builtin_mul_overflow(n, m, &sz))
		sz = SIZE_MAX; /* recorded as a failure of SIZE_MAX bytes */
	else if (MP_UNLIKELY((p = unw_alloc(sz)) != NULL))
		return p; /* the arena is never reused: still zero */
	return record_new(MP_FN_calloc, MP_IN_ALLOC(mp_real_calloc(n, m)), sz);
}

static void free_common(enum mp_func fn, void *p)
{
	if (!p || in_arena(p))
		return;
	mp_hooks_need();
	if (heap_enter(fn)) {
		mp_record_free(fn, MP_KIND_HEAP, p, 0);
		mp_leave();
	}
	if (MP_LIKELY(mp_real_free != NULL)) {
		mp_self.in_alloc++;
		mp_real_free(p);
		mp_self.in_alloc--;
	}
}

MP_EXPORT void free(void *p)
{
	free_common(MP_FN_free, p);
}

MP_EXPORT void free_sized(void *p, size_t size)
{
	(void)size;
	free_common(MP_FN_free_sized, p);
}

MP_EXPORT void free_aligned_sized(void *p, size_t align, size_t size)
{
	(void)align;
	(void)size;
	free_common(MP_FN_free_aligned_sized, p);
}

/* realloc of a bootstrap block: move it to real memory. */
static void *realloc_arena(void *p, size_t n)
{
	size_t old = *(size_t *)((char *)p - 16);
	void *q = malloc(n);

	if (q)
		memcpy(q, p, old < n ? old : n);
	return q;
}

/*
 * The free half of a resize (before the call), the call, then the alloc
 * half. glibc's realloc(p, 0) frees p and returns NULL: the FREE stands
 * alone. A failed resize leaves the old block valid: ALLOC with
 * MP_RF_FAILED tells the reader to restore it. reallocarray is done here
 * with the real realloc: glibc's own reallocarray calls realloc through
 * the PLT, which would record the call twice.
 */
static void *resize(enum mp_func fn, void *p, size_t sz)
{
	int rec;
	void *q;

	if (!p)
		return record_new(fn, MP_IN_ALLOC(mp_real_realloc(NULL, sz)), sz);
	rec = heap_enter(fn);
	if (rec) {
		mp_record_free(fn, MP_KIND_HEAP, p, MP_RF_REALLOC);
		mp_leave();
	}
	q = MP_IN_ALLOC(mp_real_realloc(p, sz));
	if (rec && mp_enter_fn(fn)) {
		if (q)
			mp_record_alloc(fn, MP_KIND_HEAP, q, sz, MP_RF_REALLOC);
		else if (sz != 0)
			mp_record_alloc(fn, MP_KIND_HEAP, NULL, sz,
					MP_RF_REALLOC | MP_RF_FAILED);
		mp_leave();
	}
	return q;
}

MP_EXPORT void *realloc(void *p, size_t n)
{
	mp_hooks_need();
	if (MP_UNLIKELY(in_arena(p)))
		return realloc_arena(p, n);
	if (MP_UNLIKELY(!mp_real_realloc))
		return p ? NULL : arena_alloc(n);
	return resize(MP_FN_realloc, p, n);
}

MP_EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
	size_t sz;

	mp_hooks_need();
	/* the program's realloc is another object's: glibc's reallocarray
	 * calls it (memprov's resize would hand the block to glibc's) */
	if (MP_UNLIKELY(mp_heap_ahead) && mp_real_reallocarray)
		return mp_real_reallocarray(p, n, m);
	if (__builtin_mul_overflow(n, m, &sz)) {
		/* p stays valid: a failed resize, or a failed alloc for NULL */
		if (heap_enter(MP_FN_reallocarray)) {
			if (p)
				mp_record_free(MP_FN_reallocarray, MP_KIND_HEAP, p, MP_RF_REALLOC);
			mp_record_alloc(MP_FN_reallocarray, MP_KIND_HEAP, NULL, SIZE_MAX,
					MP_RF_FAILED | (p ? MP_RF_REALLOC : 0));
			mp_leave();
		}
		errno = ENOMEM;
		return NULL;
	}
	if (MP_UNLIKELY(in_arena(p)))
		return realloc_arena(p, sz);
	if (MP_UNLIKELY(!mp_real_realloc))
		return p ? NULL : arena_alloc(sz);
	return resize(MP_FN_reallocarray, p, sz);
}

MP_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int r;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_posix_memalign))
		return ENOMEM;
	r = MP_IN_ALLOC(mp_real_posix_memalign(out, align, n));
	record_new(MP_FN_posix_memalign, r ? NULL : *out, n);
	return r;
}

#define MP_ALIGNED_HOOK(name, params, args, size)                 \
	MP_EXPORT void *name params                               \
	{                                                         \
		mp_hooks_need();                                  \
		if (MP_UNLIKELY(!mp_real_##name)) {               \
			errno = ENOMEM;                           \
			return NULL;                              \
		}                                                 \
		return record_new(MP_FN_##name, MP_IN_ALLOC(mp_real_##name args), size); \
	}

MP_ALIGNED_HOOK(aligned_alloc, (size_t align, size_t n), (align, n), n)
MP_ALIGNED_HOOK(memalign, (size_t align, size_t n), (align, n), n)
MP_ALIGNED_HOOK(valloc, (size_t n), (n), n)
MP_ALIGNED_HOOK(pvalloc, (size_t n), (n), n)

/*
 * A malloc replacement (jemalloc, tcmalloc, mimalloc: the object whose
 * malloc memprov forwards to, when that is not libc's nor the program's)
 * maps its arenas, their metadata and its caches with mmap, through
 * these hooks. Those mappings are its heap, as glibc's arenas (mapped
 * with calls no hook sees) are glibc's: not blocks of their own, and not
 * roots of the scan at exit (mp_reach_allocator_map). As blocks, they
 * were mimalloc's 32 MiB reservation "possibly lost" at exit in every
 * program, and a large allocation counted twice (the heap block and its
 * mapping); as roots, jemalloc's thread cache and freed regions kept
 * every one of 3 dropped blocks of 100 B reachable. Told by the caller
 * and the moment: a call from the replacement's code while this thread
 * is inside a call into it (mp_self.in_alloc: malloc, free, operator
 * new...), so that a library that defines malloc to forward it and maps
 * memory of its own for other ends keeps its mappings recorded, and
 * roots. The object is looked for in memprov's constructor (init.c), or
 * at the first such call before it. An unmapping of the replacement's
 * own memory, by whoever, is not recorded.
 */
static uintptr_t rep_lo, rep_hi;
static int rep_state; /* 0: not looked for; 1: looked (rep_hi 0: no replacement) */

void mp_replacement_find(void)
{
	uintptr_t lo, hi, llo, lhi, plo, phi;

	mp_hooks_need();
	if (!mp_real_malloc)
		return; /* not known yet: asked again at the next call */
	/* libc, by a function no replacement defines: tcmalloc defines mmap too */
	if (!mp_elf_text_of((const void *)mp_real_malloc, &lo, &hi) &&
	    !mp_elf_text_of((const void *)getauxval, &llo, &lhi) && lo != llo &&
	    (mp_elf_text_of((const void *)getauxval(AT_ENTRY), &plo, &phi) || plo != lo)) {
		rep_lo = lo;
		rep_hi = hi;
		mp_reach_note_replacement();
	}
	__atomic_store_n(&rep_state, 1, __ATOMIC_RELEASE);
}

static int by_replacement(const void *ra)
{
	if (MP_UNLIKELY(!__atomic_load_n(&rep_state, __ATOMIC_ACQUIRE)))
		mp_replacement_find(); /* a call before tracing started (mp_init) */
	return ((uintptr_t)ra >= rep_lo && (uintptr_t)ra < rep_hi) || mp_cxx_owns(ra);
}

/* A mapping the replacement makes for itself: from its code, inside a call into it. */
static int replacement_map(const void *ra)
{
	return mp_self.in_alloc && by_replacement(ra);
}

/*
 * Anonymous mappings are MP_KIND_MMAP blocks; file mappings are not
 * recorded. MAP_FIXED replaces whatever was mapped there: recorded as an
 * unmap of the range first, flagged MP_RF_FIXED when the new mapping is
 * recorded next (anonymous), so that the scan at exit knows it for a
 * piece of what it replaced (a reservation committed part by part). A
 * mapping at the address the program gave (MAP_FIXED, MAP_FIXED_NOREPLACE)
 * is flagged MP_RF_PLACED: the program may name it by that address alone.
 * A malloc replacement's own mappings are not recorded (see above).
 */
static void *mmap_common(enum mp_func fn, void *(*real)(void *, size_t, int, int, int, off_t),
			 const void *ra, void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	int anon = (flags & MAP_ANONYMOUS) != 0;
	int own = anon && replacement_map(ra);
	int rec = !own && mmap_enter(fn);
	void *q;

	if (rec) {
		if (flags & MAP_FIXED)
			mp_record_unmap(a, len, anon ? MP_RF_FIXED : 0);
		mp_leave();
	}
	if ((flags & MAP_FIXED) && !own)
		mp_reach_allocator_map((uintptr_t)a, (uintptr_t)a + len, 0);
	q = real ? real(a, len, prot, flags, fd, off) : mp_sys_mmap(a, len, prot, flags, fd, off);
	if (own && q != MAP_FAILED)
		mp_reach_allocator_map((uintptr_t)q, (uintptr_t)q + len, 1);
	if (rec && anon && mp_enter_fn(fn)) {
		if (q == MAP_FAILED)
			mp_record_alloc(fn, MP_KIND_MMAP, NULL, len, MP_RF_FAILED);
		else
			mp_record_alloc(fn, MP_KIND_MMAP, q, len,
					flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) && q == a ?
						MP_RF_PLACED : 0);
		mp_leave();
	}
	return q;
}

MP_EXPORT void *mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	mp_hooks_need();
	return mmap_common(MP_FN_mmap, mp_real_mmap, __builtin_return_address(0), a, len, prot,
			   flags, fd, off);
}

MP_EXPORT void *mmap64(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	mp_hooks_need();
	return mmap_common(MP_FN_mmap64, mp_real_mmap64, __builtin_return_address(0), a, len,
			   prot, flags, fd, off);
}

MP_EXPORT int munmap(void *a, size_t len)
{
	mp_hooks_need();
	/* all of it the replacement's own: it was never recorded */
	if (!mp_reach_allocator_map((uintptr_t)a, (uintptr_t)a + len, 0) &&
	    mmap_enter(MP_FN_munmap)) {
		mp_record_unmap(a, len, 0);
		mp_leave();
	}
	if (MP_UNLIKELY(!mp_real_munmap))
		return mp_sys_munmap(a, len);
	return mp_real_munmap(a, len);
}

/*
 * The break moved by the program itself (glibc's malloc moves it with
 * calls of its own, which no hook sees): what the program takes so is
 * its memory, a root of the scan at exit (reach.c), not an allocation.
 */
MP_EXPORT void *sbrk(intptr_t incr)
{
	void *old;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_sbrk)) {
		errno = ENOMEM;
		return (void *)-1;
	}
	old = mp_real_sbrk(incr);
	if (old != (void *)-1 && incr && !replacement_map(__builtin_return_address(0)))
		mp_reach_program_break(incr > 0 ? (uintptr_t)old : (uintptr_t)old + (uintptr_t)incr,
				       (uintptr_t)old + (uintptr_t)incr, incr > 0);
	return old;
}

MP_EXPORT int brk(void *addr)
{
	void *old;
	int r;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_brk || !mp_real_sbrk)) {
		errno = ENOMEM;
		return -1;
	}
	old = mp_real_sbrk(0);
	r = mp_real_brk(addr);
	if (!r && old != (void *)-1 && addr != old && !replacement_map(__builtin_return_address(0)))
		mp_reach_program_break(addr > old ? (uintptr_t)old : (uintptr_t)addr,
				       (uintptr_t)addr, addr > old);
	return r;
}

MP_EXPORT void *mremap(void *old, size_t oldlen, size_t newlen, int flags, ...)
{
	void *na = NULL, *q;
	va_list ap;
	int rec, own;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		na = va_arg(ap, void *);
		va_end(ap);
	}
	mp_hooks_need();
	own = replacement_map(__builtin_return_address(0));
	rec = !own && mmap_enter(MP_FN_mremap);
	if (rec) {
		mp_record_free(MP_FN_mremap, MP_KIND_MMAP, old, MP_RF_REALLOC);
		mp_leave();
	}
	if (MP_UNLIKELY(!mp_real_mremap))
		q = (void *)mp_syscall(SYS_mremap, old, oldlen, newlen, flags, na);
	else
		q = mp_real_mremap(old, oldlen, newlen, flags, na);
	if (q != MAP_FAILED) { /* the old range moved or grew, over what lay at the new one */
		mp_reach_allocator_map((uintptr_t)old, (uintptr_t)old + oldlen, 0);
		mp_reach_allocator_map((uintptr_t)q, (uintptr_t)q + newlen, 0);
		if (own)
			mp_reach_allocator_map((uintptr_t)q, (uintptr_t)q + newlen, 1);
	}
	if (rec && mp_enter_fn(MP_FN_mremap)) {
		if (q == MAP_FAILED)
			mp_record_alloc(MP_FN_mremap, MP_KIND_MMAP, NULL, newlen,
					MP_RF_REALLOC | MP_RF_FAILED);
		else
			mp_record_alloc(MP_FN_mremap, MP_KIND_MMAP, q, newlen, MP_RF_REALLOC);
		mp_leave();
	}
	return q;
}

/* After the loader changed the module list: record what is new or gone. */
static void rescan(void)
{
	int g;

	if (!mp_tracing || mp_self.disabled)
		return;
	g = mp_self.guard;
	mp_self.guard = MP_GUARD_REC;
	mp_modules_scan();
	mp_self.guard = g;
}

/*
 * A bare name (no '/') is searched by the loader from its caller's point of
 * view, and the caller of the real dlopen is libmemprov.so: the program's
 * DT_RPATH/DT_RUNPATH would be lost. When the plain call fails, ask the
 * loader for the search path of the object that called us (dlinfo
 * RTLD_DI_SERINFO on its link map: its RPATH and its loaders', then
 * LD_LIBRARY_PATH, its RUNPATH and the system directories, with $ORIGIN,
 * $LIB and $PLATFORM expanded by the loader itself) and try each
 * directory. If none works, the plain call is made again so that dlerror()
 * says what it would have said.
 */
#define SERINFO_MAX 16384

static void *dlopen_from_caller(const char *file, int mode, const void *ret)
{
	char buf[SERINFO_MAX] __attribute__((aligned(16)));
	Dl_serinfo *si = (Dl_serinfo *)buf;
	Dl_serinfo size;
	struct link_map *lm = NULL;
	Dl_info info;
	char path[4096];
	unsigned i;
	size_t flen = strlen(file);

	if (!dladdr1(ret, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return NULL;
	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &size) || size.dls_size > sizeof(buf))
		return NULL;
	si->dls_size = size.dls_size;
	si->dls_cnt = size.dls_cnt;
	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, si) || dlinfo(lm, RTLD_DI_SERINFO, si))
		return NULL;
	for (i = 0; i < si->dls_cnt; i++) {
		const char *dir = si->dls_serpath[i].dls_name;
		size_t dlen = strlen(dir);
		void *h;

		if (!dlen || dlen + 1 + flen >= sizeof(path))
			continue;
		memcpy(path, dir, dlen);
		path[dlen] = '/';
		memcpy(path + dlen + 1, file, flen + 1);
		h = mp_real_dlopen(path, mode);
		if (h)
			return h;
	}
	return NULL;
}

/*
 * A library opened with RTLD_DEEPBIND (and what it brings in) looks its
 * symbols up in itself and its dependencies first: its malloc and free
 * are libc's, not memprov's. A block it frees would stay live in the
 * report, a block strdup allocated for it (libc calls malloc through the
 * global scope) would be a phantom. So the GOT entries of the objects
 * this dlopen added are pointed at memprov's hooks for these functions.
 */
static const struct mp_got_fn heap_fns[] = {
	{ "malloc", (void *)malloc }, { "free", (void *)free }, { "calloc", (void *)calloc },
	{ "realloc", (void *)realloc }, { "reallocarray", (void *)reallocarray },
	{ "posix_memalign", (void *)posix_memalign }, { "aligned_alloc", (void *)aligned_alloc },
	{ "memalign", (void *)memalign }, { "valloc", (void *)valloc },
	{ "pvalloc", (void *)pvalloc }, { "free_sized", (void *)free_sized },
	{ "free_aligned_sized", (void *)free_aligned_sized }, { "mmap", (void *)mmap },
	{ "mmap64", (void *)mmap64 }, { "munmap", (void *)munmap }, { "mremap", (void *)mremap },
};

/* The function each hook of heap_fns forwards to, in the same order. */
static void **const heap_real[] = {
	(void **)&mp_real_malloc, (void **)&mp_real_free, (void **)&mp_real_calloc,
	(void **)&mp_real_realloc, (void **)&mp_real_reallocarray,
	(void **)&mp_real_posix_memalign, (void **)&mp_real_aligned_alloc,
	(void **)&mp_real_memalign, (void **)&mp_real_valloc,
	(void **)&mp_real_pvalloc, (void **)&mp_real_free_sized,
	(void **)&mp_real_free_aligned_sized, (void **)&mp_real_mmap,
	(void **)&mp_real_mmap64, (void **)&mp_real_munmap, (void **)&mp_real_mremap,
};

_Static_assert(sizeof(heap_real) / sizeof(heap_real[0]) == sizeof(heap_fns) / sizeof(heap_fns[0]),
	       "heap_real and heap_fns list the same functions");

static int heap_index(const char *name)
{
	int i;

	for (i = 0; i < (int)(sizeof(heap_fns) / sizeof(heap_fns[0])); i++)
		if (!strcmp(name, heap_fns[i].name))
			return i;
	return -1;
}

int mp_heap_hook_wants(const char *name)
{
	/* every name of heap_fns starts with one of these */
	return strchr("mfcrpav", name[0]) && heap_index(name) >= 0;
}

void *mp_heap_hook_for(const char *name, void *found)
{
	int i = heap_index(name);

	mp_hooks_need();
	return i >= 0 && found && found == *heap_real[i] ? heap_fns[i].addr : found;
}

static int count_objects(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	++*(int *)arg;
	return 0;
}

struct deep {
	int skip; /* objects loaded before the dlopen */
	int seen;
};

static int redirect_new(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct deep *d = arg;

	(void)size;
	if (d->seen++ >= d->skip)
		mp_got_redirect(info, heap_fns, (int)(sizeof(heap_fns) / sizeof(heap_fns[0])));
	return 0;
}

MP_EXPORT void *dlopen(const char *file, int mode)
{
	const void *ret = __builtin_return_address(0);
	struct deep deep = { 0, 0 };
	void *h;
	int g, cxx;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_dlopen))
		return NULL;
	if (mode & RTLD_DEEPBIND)
		dl_iterate_phdr(count_objects, &deep.skip);
	cxx = mp_cxx_objects();
	h = mp_real_dlopen(file, mode);
	if (!h && file && *file && !strchr(file, '/')) {
		g = mp_pass_begin(); /* the loader's own allocations pass through */
		h = dlopen_from_caller(file, mode, ret);
		mp_pass_end(g);
		if (!h)
			h = mp_real_dlopen(file, mode);
	}
	if (h && (mode & RTLD_DEEPBIND) && mp_config.heap)
		dl_iterate_phdr(redirect_new, &deep);
	if (h && cxx)
		mp_cxx_patch(cxx);
	if (h) {
		mp_dl_changed(); /* a definition memprov looked for may be here now */
		rescan();
	}
	return h;
}

MP_EXPORT int dlclose(void *h)
{
	int r;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_dlclose))
		return -1;
	r = mp_real_dlclose(h);
	if (r == 0) {
		mp_unwind_flush(); /* a module may come back at the same address */
		mp_dl_changed();   /* and what memprov found in it may be gone */
	}
	rescan();
	return r;
}
