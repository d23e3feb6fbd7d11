/*
 * python_alloc.c - CPython's own allocators, seen from inside: pymalloc's
 * arenas always, and with MEMPROV_PYTHON_OBJECTS=1 every block of the
 * "mem" (PyMem_Malloc) and "object" (PyObject_Malloc) domains.
 *
 * pymalloc carves blocks of 512 bytes or less out of arenas (1 MiB from
 * 3.10, 256 KiB before) that it maps itself. To the mmap hook an arena is
 * one more anonymous mapping, charged to whichever line happened to need
 * a new one. So at load, before the interpreter starts, an arena
 * allocator that wraps the one in place (PyObject_SetArenaAllocator)
 * records each arena as an MMAP block under PyObject_ArenaAlloc, freed
 * under PyObject_ArenaFree: the analyzer tells arenas from the program's
 * own mappings by that function id.
 *
 * With MEMPROV_PYTHON_OBJECTS=1, hooks on the "mem" and "object" domains
 * (PyMem_SetAllocator, chaining to the allocator in place, as tracemalloc
 * does) record every block, small or large, as a HEAP block under
 * PyMem_* / PyObject_* with its stack. python.c installs them from its
 * pending call, with the GIL held: these two domains are only ever called
 * with the GIL held, so no call can run while their tables are swapped.
 * Blocks made before that are not seen; their frees count as frees of
 * untraced blocks. The "raw" domain is malloc itself, whose hook records
 * its blocks already; it is also called without the GIL, so swapping its
 * table while the program runs could race with another thread's call.
 *
 * A domain hook calls the allocator it replaced with the guard at PASS,
 * so a large block that pymalloc hands on to malloc is recorded once, by
 * the domain hook. An arena mapped from inside a domain hook is recorded
 * all the same: pa_outer keeps the guard the domain hook was called with.
 * Only a re-entry (guard REC) leaves an arena event unrecorded, counted.
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls record, trace_writer and
 * trace_file (the guard), and config.
 */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "python_api.h"
#include "recorder.h"

struct pa_domain {
	struct py_mem_allocator old;
	enum mp_func fn_malloc, fn_calloc, fn_realloc, fn_free;
};

static struct pa_domain pa_mem = {
	.fn_malloc = MP_FN_PyMem_Malloc, .fn_calloc = MP_FN_PyMem_Calloc,
	.fn_realloc = MP_FN_PyMem_Realloc, .fn_free = MP_FN_PyMem_Free,
};
static struct pa_domain pa_obj = {
	.fn_malloc = MP_FN_PyObject_Malloc, .fn_calloc = MP_FN_PyObject_Calloc,
	.fn_realloc = MP_FN_PyObject_Realloc, .fn_free = MP_FN_PyObject_Free,
};
static struct py_arena_allocator pa_arena_old;

/* Domain hooks running on this thread, and the guard the outermost found. */
static __thread int pa_depth __attribute__((tls_model("initial-exec")));
static __thread int pa_outer __attribute__((tls_model("initial-exec")));

/* Around a call to the allocator a domain hook replaced. */
static inline int pa_begin(void)
{
	int g = mp_pass_begin();

	if (!pa_depth++)
		pa_outer = g;
	return g;
}

static inline void pa_end(int g)
{
	pa_depth--;
	mp_pass_end(g);
}

/*
 * Enter for an arena event, judged by the guard the call into pymalloc
 * found (the domain hook's, when pymalloc maps an arena from inside one).
 * An arena is recorded even when memprov's own call into the interpreter
 * (guard PASS) made pymalloc map it: the program's objects fill it next.
 * 1: record, then put *saved back in the guard.
 */
static int pa_arena_enter(enum mp_func fn, int *saved)
{
	int outer;

	*saved = mp_self.guard;
	if (!mp_config.mmap)
		return 0;
	outer = pa_depth ? pa_outer : *saved;
	mp_self.guard = outer == MP_GUARD_PASS ? MP_GUARD_NONE : outer;
	if (mp_enter_fn(fn))
		return 1;
	mp_self.guard = *saved;
	return 0;
}

static void *pa_arena_alloc(void *ctx, size_t n)
{
	int g = mp_pass_begin(), saved;
	void *p = pa_arena_old.alloc(pa_arena_old.ctx, n);

	(void)ctx;
	mp_pass_end(g);
	if (p && pa_arena_enter(MP_FN_PyObject_ArenaAlloc, &saved)) {
		mp_record_alloc(MP_FN_PyObject_ArenaAlloc, MP_KIND_MMAP, p, n, 0);
		mp_self.guard = saved;
	}
	return p;
}

/* Recorded before the real call: the range can be mapped again at once. */
static void pa_arena_free(void *ctx, void *p, size_t n)
{
	int g, saved;

	(void)ctx;
	if (p && pa_arena_enter(MP_FN_PyObject_ArenaFree, &saved)) {
		mp_record_free(MP_FN_PyObject_ArenaFree, MP_KIND_MMAP, p, 0);
		mp_self.guard = saved;
	}
	g = mp_pass_begin();
	pa_arena_old.free(pa_arena_old.ctx, p, n);
	mp_pass_end(g);
}

static inline int pa_enter(enum mp_func fn)
{
	return mp_config.heap && mp_enter_fn(fn);
}

static void *pa_record_new(enum mp_func fn, void *p, size_t n)
{
	if (pa_enter(fn)) {
		mp_record_alloc(fn, MP_KIND_HEAP, p, n, p ? 0 : MP_RF_FAILED);
		mp_leave();
	}
	return p;
}

static void *pa_malloc(void *ctx, size_t n)
{
	struct pa_domain *d = ctx;
	int g = pa_begin();
	void *p = d->old.malloc(d->old.ctx, n);

	pa_end(g);
	return pa_record_new(d->fn_malloc, p, n);
}

static void *pa_calloc(void *ctx, size_t n, size_t m)
{
	struct pa_domain *d = ctx;
	int g = pa_begin();
	void *p = d->old.calloc(d->old.ctx, n, m);
	size_t sz;

	pa_end(g);
	if (__builtin_mul_overflow(n, m, &sz))
		sz = SIZE_MAX; /* recorded as a failure of SIZE_MAX bytes */
	return pa_record_new(d->fn_calloc, p, sz);
}

/* As realloc's hook: the free half before the call, the new block after. */
static void *pa_realloc(void *ctx, void *p, size_t n)
{
	struct pa_domain *d = ctx;
	int g, rec = 0;
	void *q;

	if (p && pa_enter(d->fn_realloc)) {
		rec = 1;
		mp_record_free(d->fn_realloc, MP_KIND_HEAP, p, MP_RF_REALLOC);
		mp_leave();
	}
	g = pa_begin();
	q = d->old.realloc(d->old.ctx, p, n);
	pa_end(g);
	if (!p)
		return pa_record_new(d->fn_realloc, q, n);
	if (rec && mp_enter_fn(d->fn_realloc)) {
		/* CPython's realloc never frees: NULL leaves the old block */
		if (q)
			mp_record_alloc(d->fn_realloc, MP_KIND_HEAP, q, n, MP_RF_REALLOC);
		else
			mp_record_alloc(d->fn_realloc, MP_KIND_HEAP, NULL, n,
					MP_RF_REALLOC | MP_RF_FAILED);
		mp_leave();
	}
	return q;
}

static void pa_free(void *ctx, void *p)
{
	struct pa_domain *d = ctx;
	int g;

	if (p && pa_enter(d->fn_free)) {
		mp_record_free(d->fn_free, MP_KIND_HEAP, p, 0);
		mp_leave();
	}
	g = pa_begin();
	d->old.free(d->old.ctx, p);
	pa_end(g);
}

int pyalloc_arenas(const struct py_api *api)
{
	struct py_arena_allocator a = { NULL, pa_arena_alloc, pa_arena_free };

	if (!api->PyObject_GetArenaAllocator || !api->PyObject_SetArenaAllocator)
		return -1;
	api->PyObject_GetArenaAllocator(&pa_arena_old);
	if (!pa_arena_old.alloc || !pa_arena_old.free || pa_arena_old.alloc == pa_arena_alloc)
		return -1;
	api->PyObject_SetArenaAllocator(&a);
	return 0;
}

static int pa_hook(const struct py_api *api, int domain, struct pa_domain *d)
{
	struct py_mem_allocator a = { d, pa_malloc, pa_calloc, pa_realloc, pa_free };

	api->PyMem_GetAllocator(domain, &d->old);
	if (!d->old.malloc || !d->old.calloc || !d->old.realloc || !d->old.free ||
	    d->old.malloc == pa_malloc)
		return -1;
	api->PyMem_SetAllocator(domain, &a);
	return 0;
}

int pyalloc_objects(const struct py_api *api)
{
	if (!api->PyMem_GetAllocator || !api->PyMem_SetAllocator)
		return -1;
	if (pa_hook(api, PY_DOMAIN_OBJ, &pa_obj))
		return -1;
	return pa_hook(api, PY_DOMAIN_MEM, &pa_mem);
}
