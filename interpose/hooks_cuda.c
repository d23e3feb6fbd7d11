/*
 * hooks_cuda.c - CUDA runtime and driver allocation hooks.
 *
 * GPU memory is caught at the driver and named at the runtime (see
 * docs/ARCHITECTURE.md, "GPU memory"):
 *
 *  - Driver entry points (cuMemAlloc_v2, cuMemHostAlloc, cuMemMap, ...)
 *    reach a program three ways: dlsym on the driver's handle (the runtime
 *    asks for cuGetProcAddress_v2 that way), cuGetProcAddress (every other
 *    entry point), and direct linking. The first two hand back a wrapper
 *    in place of exactly the pointer the real lookup returned: each hook
 *    has CU_SLOTS wrappers, each remembering its own real pointer, so
 *    versions and _ptsz/_ptds variants each keep theirs. The third is
 *    served by exporting the _v2 names from libmemprov.so.
 *  - Runtime entry points (cudaMalloc, ...) are exported too. They set a
 *    thread-local "current runtime API" so that the driver call they make
 *    is recorded once, under the runtime's name; when no driver hook
 *    recorded it (the runtime failed before reaching the driver, or the
 *    driver was not wrapped) the runtime hook records. A runtime linked
 *    statically into the program has no hook: driver names appear then.
 *  - Driver hooks hold the recorder guard around the real call, so the
 *    driver's own malloc/mmap are not counted as host memory.
 *
 * MEMPROV_CUDA=0 makes every hook a pass-through and wraps nothing.
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls record, elfsym, config and sys.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"
#include "config.h"
#include "cuda_hooks.h"

#define CU_SLOTS 4
#define MP_UNPAREN(...) __VA_ARGS__

/*
 * The driver hooks: X(name, symbol, min_version, params, args).
 * name: cuGetProcAddress's name for it (and the MP_FN_ id); symbol: the
 * exported name with this ABI; min_version: the lowest cudaVersion for
 * which cuGetProcAddress(name) returns this ABI (older ones differ).
 */
#define CU_HOOKS(X)                                                                \
	X(cuMemAlloc, cuMemAlloc_v2, 3020, (CUdeviceptr * dp, size_t n), (dp, n))   \
	X(cuMemAllocPitch, cuMemAllocPitch_v2, 3020,                                \
	  (CUdeviceptr * dp, size_t *pitch, size_t w, size_t h, unsigned int e),    \
	  (dp, pitch, w, h, e))                                                      \
	X(cuMemAllocManaged, cuMemAllocManaged, 0,                                  \
	  (CUdeviceptr * dp, size_t n, unsigned int fl), (dp, n, fl))                \
	X(cuMemAllocAsync, cuMemAllocAsync, 0,                                      \
	  (CUdeviceptr * dp, size_t n, CUstream s), (dp, n, s))                      \
	X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 0,                      \
	  (CUdeviceptr * dp, size_t n, CUmemoryPool pool, CUstream s),              \
	  (dp, n, pool, s))                                                          \
	X(cuMemFree, cuMemFree_v2, 3020, (CUdeviceptr p), (p))                      \
	X(cuMemFreeAsync, cuMemFreeAsync, 0, (CUdeviceptr p, CUstream s), (p, s))   \
	X(cuMemHostAlloc, cuMemHostAlloc, 0,                                        \
	  (void **pp, size_t n, unsigned int fl), (pp, n, fl))                       \
	X(cuMemAllocHost, cuMemAllocHost_v2, 3020, (void **pp, size_t n), (pp, n))  \
	X(cuMemFreeHost, cuMemFreeHost, 0, (void *p), (p))                          \
	X(cuMemHostRegister, cuMemHostRegister_v2, 6050,                            \
	  (void *p, size_t n, unsigned int fl), (p, n, fl))                          \
	X(cuMemHostUnregister, cuMemHostUnregister, 0, (void *p), (p))              \
	X(cuMemCreate, cuMemCreate, 0,                                              \
	  (CUmemGenericAllocationHandle * hp, size_t n, const void *prop,           \
	   unsigned long long fl),                                                   \
	  (hp, n, prop, fl))                                                         \
	X(cuMemRelease, cuMemRelease, 0, (CUmemGenericAllocationHandle hd), (hd))   \
	X(cuMemMap, cuMemMap, 0,                                                    \
	  (CUdeviceptr va, size_t n, size_t off, CUmemGenericAllocationHandle hd,   \
	   unsigned long long fl),                                                   \
	  (va, n, off, hd, fl))                                                      \
	X(cuMemUnmap, cuMemUnmap, 0, (CUdeviceptr va, size_t n), (va, n))           \
	X(cuCtxDestroy, cuCtxDestroy_v2, 4000, (CUcontext ctx), (ctx))              \
	X(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2, 11000,               \
	  (CUdevice dev), (dev))                                                     \
	X(cuGetProcAddress, cuGetProcAddress, 0,                                    \
	  (const char *sym, void **pfn, int ver, unsigned long long fl),            \
	  (sym, pfn, ver, fl))                                                       \
	X(cuGetProcAddress_v2, cuGetProcAddress_v2, 12000,                          \
	  (const char *sym, void **pfn, int ver, unsigned long long fl, int *st),   \
	  (sym, pfn, ver, fl, st))

/* Other exported names with the same ABI as a hook: X(name, symbol). */
#define CU_ALIASES(X)                                                   \
	X(cuMemAllocAsync, cuMemAllocAsync_ptsz)                          \
	X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz)          \
	X(cuMemFreeAsync, cuMemFreeAsync_ptsz)                            \
	X(cuCtxDestroy, cuCtxDestroy)                                     \
	X(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset)

enum cu_hook {
#define CU_ENUM(name, sym, minver, params, args) HK_##name,
	CU_HOOKS(CU_ENUM)
#undef CU_ENUM
	HK_COUNT
};

#define CU_TYPEDEF(name, sym, minver, params, args) typedef CUresult(*pfn_##name) params;
CU_HOOKS(CU_TYPEDEF)
#undef CU_TYPEDEF

/* What the runtime hooks tell the driver hooks below them (per thread). */
struct cuda_tls {
	uint16_t rt_fn;   /* runtime API in progress, MP_FN_NONE if none */
	uint8_t rt_done;  /* its allocation has been recorded */
	uint8_t rt_free;  /* it is a free/reset the runtime hook recorded */
};
static __thread struct cuda_tls ct __attribute__((tls_model("initial-exec")));

/* The real pointer behind each wrapper slot; NULL: slot unused. */
static void *slot_real[HK_COUNT][CU_SLOTS];

/* MEMPROV_CUDA=0 makes every hook a pass-through. */
static inline int cuda_on(void)
{
	return mp_config_need()->cuda;
}

/*
 * Enter the recorder from a CUDA hook. The guard is PASS from here on:
 * the real CUDA call made inside it allocates host memory of its own,
 * which is the driver's, not the program's.
 */
static inline int cu_enter(void)
{
	if (!mp_enter())
		return 0;
	mp_self.guard = MP_GUARD_PASS;
	return 1;
}

/*
 * A driver function we call ourselves (not a hook), looked up afresh in
 * the loaded libcuda.so* each time: the runtime may have dlclosed the
 * driver after a failed start.
 */
static void *drv_sym(const char *name)
{
	return mp_dlsym_in_object("libcuda.so", name);
}

/* The calling thread's current device ordinal, -1 when unknown. */
static int cur_device(void)
{
	CUresult (*get)(CUdevice *) = (CUresult(*)(CUdevice *))drv_sym("cuCtxGetDevice");
	CUdevice d = -1;

	if (!get || get(&d) != CUDA_SUCCESS)
		return -1;
	return d;
}

/* The device a context belongs to: make it current for a moment. */
static int ctx_device(CUcontext ctx)
{
	CUresult (*push)(CUcontext) = (CUresult(*)(CUcontext))drv_sym("cuCtxPushCurrent_v2");
	CUresult (*pop)(CUcontext *) = (CUresult(*)(CUcontext *))drv_sym("cuCtxPopCurrent_v2");
	CUcontext old;
	int d;

	if (!push || !pop || push(ctx) != CUDA_SUCCESS)
		return -1;
	d = cur_device();
	pop(&old);
	return d;
}

/*
 * Record an allocation made by a driver hook: under the runtime API in
 * progress on this thread if it has not recorded one yet.
 */
static void drv_alloc(enum mp_func fn, enum mp_kind kind, CUresult r, uint64_t addr,
		      uint64_t size, uint64_t stream, uint64_t extra, unsigned flags)
{
	if (ct.rt_fn && !ct.rt_done) {
		fn = (enum mp_func)ct.rt_fn;
		ct.rt_done = 1;
	}
	if (r != CUDA_SUCCESS) {
		flags |= MP_RF_FAILED;
		addr = 0;
	}
	mp_record_gpu_alloc(fn, kind, addr, size, stream, cur_device(), r, extra, flags);
}

/* A free made by a driver hook, before the real call. */
static void drv_free(enum mp_func fn, enum mp_kind kind, uint64_t addr, uint64_t stream,
		     unsigned flags)
{
	if (ct.rt_free || !addr)
		return; /* the runtime hook above us recorded it */
	mp_record_gpu_free(fn, kind, addr, stream, cur_device(), 0, flags);
}

/* After the real free: a failure is worth a record of its own. */
static void drv_free_failed(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			    uint64_t stream, CUresult r, unsigned flags)
{
	if (r == CUDA_SUCCESS || ct.rt_free || !addr)
		return;
	mp_record_gpu_free(fn, kind, addr, stream, cur_device(), r, flags | MP_RF_FAILED);
}

/*
 * Physical allocations of the virtual-memory API: handle -> device, so
 * cuMemMap can name the device. Open addressing, lock-free.
 */
#define VMM_SLOTS 4096
#define VMM_GONE UINT64_MAX
static struct {
	uint64_t handle;
	int device;
} vmm[VMM_SLOTS] MP_BIG_BSS;

static void vmm_put(uint64_t h, int device)
{
	for (unsigned i = 0, k = (unsigned)(h * 0x9e3779b97f4a7c15ull >> 52); i < VMM_SLOTS;
	     i++, k = (k + 1) % VMM_SLOTS) {
		uint64_t cur = __atomic_load_n(&vmm[k].handle, __ATOMIC_ACQUIRE);

		if ((cur == 0 || cur == VMM_GONE) &&
		    __atomic_compare_exchange_n(&vmm[k].handle, &cur, h, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			vmm[k].device = device;
			return;
		}
	}
}

static int vmm_find(uint64_t h, int forget)
{
	for (unsigned i = 0, k = (unsigned)(h * 0x9e3779b97f4a7c15ull >> 52); i < VMM_SLOTS;
	     i++, k = (k + 1) % VMM_SLOTS) {
		uint64_t cur = __atomic_load_n(&vmm[k].handle, __ATOMIC_ACQUIRE);

		if (cur == 0)
			break;
		if (cur == h) {
			int d = vmm[k].device;

			if (forget)
				__atomic_store_n(&vmm[k].handle, VMM_GONE, __ATOMIC_RELEASE);
			return d;
		}
	}
	return -1;
}

static void *wrap_gpa(const char *sym, void *real, int ver);

/*
 * The hook bodies, one per entry in CU_HOOKS: h_NAME(real, args...).
 * Same shape everywhere: pass through when not recording, else call the
 * real function inside the guard and record (a free records first).
 */
#define CU_INLINE static inline __attribute__((always_inline))

/* 1: record this driver call (the guard is up); 0: pass it straight through. */
CU_INLINE int drv_enter(void)
{
	return cuda_on() && cu_enter();
}

/* After a driver allocation that returned r: record it, leave the guard. */
static void drv_alloc_done(enum mp_func fn, enum mp_kind kind, CUresult r, uint64_t addr,
			   uint64_t size, uint64_t stream, uint64_t extra, unsigned flags)
{
	drv_alloc(fn, kind, r, addr, size, stream, extra, flags);
	mp_leave();
}

/* After a driver free (recorded before it) that returned r: a failure
 * puts the block back; leave the guard. */
static void drv_free_done(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			  uint64_t stream, unsigned flags, CUresult r)
{
	drv_free_failed(fn, kind, addr, stream, r, flags);
	mp_leave();
}

CU_INLINE CUresult h_cuMemAlloc(pfn_cuMemAlloc real, CUdeviceptr *dp, size_t n)
{
	CUresult r;

	if (!drv_enter())
		return real(dp, n);
	r = real(dp, n);
	drv_alloc_done(MP_FN_cuMemAlloc, MP_KIND_DEVICE, r, r ? 0 : (uint64_t)(*dp), n,
		       0, 0, 0);
	return r;
}

CU_INLINE CUresult h_cuMemAllocPitch(pfn_cuMemAllocPitch real, CUdeviceptr *dp,
				     size_t *pitch, size_t w, size_t h, unsigned int e)
{
	CUresult r;

	if (!drv_enter())
		return real(dp, pitch, w, h, e);
	r = real(dp, pitch, w, h, e);
	drv_alloc_done(MP_FN_cuMemAllocPitch, MP_KIND_DEVICE, r, r ? 0 : (uint64_t)(*dp), r ? w * h : *pitch * h,
		       0, r ? 0 : *pitch, 0);
	return r;
}

CU_INLINE CUresult h_cuMemAllocManaged(pfn_cuMemAllocManaged real, CUdeviceptr *dp,
				       size_t n, unsigned int fl)
{
	CUresult r;

	if (!drv_enter())
		return real(dp, n, fl);
	r = real(dp, n, fl);
	drv_alloc_done(MP_FN_cuMemAllocManaged, MP_KIND_MANAGED, r, r ? 0 : (uint64_t)(*dp), n,
		       0, fl, 0);
	return r;
}

CU_INLINE CUresult h_cuMemAllocAsync(pfn_cuMemAllocAsync real, CUdeviceptr *dp, size_t n,
				     CUstream s)
{
	CUresult r;

	if (!drv_enter())
		return real(dp, n, s);
	r = real(dp, n, s);
	drv_alloc_done(MP_FN_cuMemAllocAsync, MP_KIND_DEVICE, r, r ? 0 : (uint64_t)(*dp), n,
		       (uintptr_t)s, 0, MP_RF_STREAM);
	return r;
}

CU_INLINE CUresult h_cuMemAllocFromPoolAsync(pfn_cuMemAllocFromPoolAsync real,
					     CUdeviceptr *dp, size_t n, CUmemoryPool pool,
					     CUstream s)
{
	CUresult r;

	if (!drv_enter())
		return real(dp, n, pool, s);
	r = real(dp, n, pool, s);
	drv_alloc_done(MP_FN_cuMemAllocFromPoolAsync, MP_KIND_DEVICE, r, r ? 0 : (uint64_t)(*dp), n,
		       (uintptr_t)s, (uintptr_t)pool, MP_RF_STREAM);
	return r;
}

CU_INLINE CUresult h_cuMemFree(pfn_cuMemFree real, CUdeviceptr p)
{
	CUresult r;

	if (!drv_enter())
		return real(p);
	drv_free(MP_FN_cuMemFree, MP_KIND_DEVICE, p, 0, 0);
	r = real(p);
	drv_free_done(MP_FN_cuMemFree, MP_KIND_DEVICE, p, 0,
		      0, r);
	return r;
}

CU_INLINE CUresult h_cuMemFreeAsync(pfn_cuMemFreeAsync real, CUdeviceptr p, CUstream s)
{
	CUresult r;

	if (!drv_enter())
		return real(p, s);
	drv_free(MP_FN_cuMemFreeAsync, MP_KIND_DEVICE, p, (uintptr_t)s, MP_RF_STREAM);
	r = real(p, s);
	drv_free_done(MP_FN_cuMemFreeAsync, MP_KIND_DEVICE, p, (uintptr_t)s,
		      MP_RF_STREAM, r);
	return r;
}

CU_INLINE CUresult h_cuMemHostAlloc(pfn_cuMemHostAlloc real, void **pp, size_t n,
				    unsigned int fl)
{
	CUresult r;

	if (!drv_enter())
		return real(pp, n, fl);
	r = real(pp, n, fl);
	drv_alloc_done(MP_FN_cuMemHostAlloc, MP_KIND_PINNED, r, r ? 0 : (uintptr_t)*pp, n,
		       0, fl, 0);
	return r;
}

CU_INLINE CUresult h_cuMemAllocHost(pfn_cuMemAllocHost real, void **pp, size_t n)
{
	CUresult r;

	if (!drv_enter())
		return real(pp, n);
	r = real(pp, n);
	drv_alloc_done(MP_FN_cuMemAllocHost, MP_KIND_PINNED, r, r ? 0 : (uintptr_t)*pp, n,
		       0, 0, 0);
	return r;
}

CU_INLINE CUresult h_cuMemFreeHost(pfn_cuMemFreeHost real, void *p)
{
	CUresult r;

	if (!drv_enter())
		return real(p);
	drv_free(MP_FN_cuMemFreeHost, MP_KIND_PINNED, (uint64_t)((uintptr_t)p), 0, 0);
	r = real(p);
	drv_free_done(MP_FN_cuMemFreeHost, MP_KIND_PINNED, (uint64_t)((uintptr_t)p), 0,
		      0, r);
	return r;
}

CU_INLINE CUresult h_cuMemHostRegister(pfn_cuMemHostRegister real, void *p, size_t n,
				       unsigned int fl)
{
	CUresult r;

	if (!drv_enter())
		return real(p, n, fl);
	r = real(p, n, fl);
	drv_alloc_done(MP_FN_cuMemHostRegister, MP_KIND_REGISTERED, r, r ? 0 : (uint64_t)((uintptr_t)p), n,
		       0, fl, 0);
	return r;
}

CU_INLINE CUresult h_cuMemHostUnregister(pfn_cuMemHostUnregister real, void *p)
{
	CUresult r;

	if (!drv_enter())
		return real(p);
	drv_free(MP_FN_cuMemHostUnregister, MP_KIND_REGISTERED, (uint64_t)((uintptr_t)p), 0, 0);
	r = real(p);
	drv_free_done(MP_FN_cuMemHostUnregister, MP_KIND_REGISTERED, (uint64_t)((uintptr_t)p), 0,
		      0, r);
	return r;
}

/* Physical memory is not live until mapped: only a failure is recorded. */
CU_INLINE CUresult h_cuMemCreate(pfn_cuMemCreate real, CUmemGenericAllocationHandle *hp,
				 size_t n, const void *prop, unsigned long long fl)
{
	const struct cu_mem_alloc_prop_head *ph = prop;
	CUresult r;

	if (!cuda_on() || !cu_enter())
		return real(hp, n, prop, fl);
	r = real(hp, n, prop, fl);
	if (r == CUDA_SUCCESS)
		vmm_put(*hp, ph ? ph->location_id : cur_device());
	else
		mp_record_gpu_alloc(MP_FN_cuMemCreate, MP_KIND_DEVICE, 0, n, 0,
				    ph ? ph->location_id : cur_device(), r, 0,
				    MP_RF_FAILED);
	mp_leave();
	return r;
}

CU_INLINE CUresult h_cuMemRelease(pfn_cuMemRelease real, CUmemGenericAllocationHandle hd)
{
	CUresult r = real(hd);

	if (r == CUDA_SUCCESS)
		vmm_find(hd, 1);
	return r;
}

CU_INLINE CUresult h_cuMemMap(pfn_cuMemMap real, CUdeviceptr va, size_t n, size_t off,
			      CUmemGenericAllocationHandle hd, unsigned long long fl)
{
	CUresult r;
	int d;

	if (!cuda_on() || !cu_enter())
		return real(va, n, off, hd, fl);
	r = real(va, n, off, hd, fl);
	d = vmm_find(hd, 0);
	mp_record_gpu_alloc(MP_FN_cuMemMap, MP_KIND_DEVICE, r ? 0 : va, n, 0,
			    d >= 0 ? d : cur_device(), r, hd, r ? MP_RF_FAILED : 0);
	mp_leave();
	return r;
}

CU_INLINE CUresult h_cuMemUnmap(pfn_cuMemUnmap real, CUdeviceptr va, size_t n)
{
	CUresult r;

	if (!drv_enter())
		return real(va, n);
	drv_free(MP_FN_cuMemUnmap, MP_KIND_DEVICE, va, 0, 0);
	r = real(va, n);
	drv_free_done(MP_FN_cuMemUnmap, MP_KIND_DEVICE, va, 0,
		      0, r);
	return r;
}

/* A context going away frees everything it owned: recorded once it went
 * (its device asked for before, while it is still there). */
CU_INLINE CUresult h_cuCtxDestroy(pfn_cuCtxDestroy real, CUcontext ctx)
{
	CUresult r;
	int d;

	if (!cuda_on() || !cu_enter())
		return real(ctx);
	d = ct.rt_free ? -1 : ctx_device(ctx);
	r = real(ctx);
	if (!ct.rt_free && r == CUDA_SUCCESS)
		mp_record_ctx_reset(MP_FN_cuCtxDestroy, d);
	mp_leave();
	return r;
}

CU_INLINE CUresult h_cuDevicePrimaryCtxReset(pfn_cuDevicePrimaryCtxReset real,
					     CUdevice dev)
{
	CUresult r;

	if (!cuda_on() || !cu_enter())
		return real(dev);
	r = real(dev);
	if (!ct.rt_free && r == CUDA_SUCCESS)
		mp_record_ctx_reset(MP_FN_cuDevicePrimaryCtxReset, dev);
	mp_leave();
	return r;
}

/* Lookups: hand out wrappers for what the real lookup found. */
CU_INLINE CUresult h_cuGetProcAddress(pfn_cuGetProcAddress real, const char *sym,
				      void **pfn, int ver, unsigned long long fl)
{
	CUresult r = real(sym, pfn, ver, fl);

	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = wrap_gpa(sym, *pfn, ver);
	return r;
}

CU_INLINE CUresult h_cuGetProcAddress_v2(pfn_cuGetProcAddress_v2 real, const char *sym,
					 void **pfn, int ver, unsigned long long fl, int *st)
{
	CUresult r = real(sym, pfn, ver, fl, st);

	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = wrap_gpa(sym, *pfn, ver);
	return r;
}

/* The wrapper slots: w_NAME_K calls h_NAME with slot K's real pointer. */
#define CU_SLOT(name, params, args, k)                                               \
	static CUresult w_##name##_##k params                                        \
	{                                                                            \
		return h_##name((pfn_##name)__atomic_load_n(&slot_real[HK_##name][k], \
							    __ATOMIC_ACQUIRE),       \
				MP_UNPAREN args);                                    \
	}
#define CU_SLOTS_DEFINE(name, sym, minver, params, args)                              \
	CU_SLOT(name, params, args, 0) CU_SLOT(name, params, args, 1)                 \
	CU_SLOT(name, params, args, 2) CU_SLOT(name, params, args, 3)
CU_HOOKS(CU_SLOTS_DEFINE)
#undef CU_SLOTS_DEFINE

static void *const slot_fn[HK_COUNT][CU_SLOTS] = {
#define CU_SLOT_FNS(name, sym, minver, params, args)                                  \
	[HK_##name] = { (void *)w_##name##_0, (void *)w_##name##_1, (void *)w_##name##_2, \
			(void *)w_##name##_3 },
	CU_HOOKS(CU_SLOT_FNS)
#undef CU_SLOT_FNS
};

/*
 * Direct linking: the program's own calls to cuMemAlloc_v2 & co. bind to
 * these; the real function is the next definition after libmemprov.so in
 * any loaded object (libcuda may be a dependency of an RTLD_LOCAL
 * library), looked up again after a dlopen or dlclose (a driver unloaded
 * and loaded again elsewhere: the first address found was called after
 * the library had gone, and a program that reloads a plugin died of
 * SIGSEGV). dlsym never hands these out (mp_cuda_wrap_dlsym): a runtime
 * probing dlsym(RTLD_DEFAULT, "cuGetProcAddress") must not think a
 * driver is loaded because memprov is.
 */
#define CU_EXPORT(name, sym, params, args)                                             \
	MP_EXPORT CUresult sym params;                                                 \
	CUresult sym params                                                            \
	{                                                                              \
		static mp_sym_cache real;                                              \
		void *real_ = mp_next_cached(&real, (void *)cuda_on, #sym);           \
		if (MP_UNLIKELY(!real_))                                               \
			return CUDA_ERROR_NOT_INITIALIZED;                             \
		return h_##name((pfn_##name)real_, MP_UNPAREN args);                   \
	}
#define CU_EXPORT_HOOK(name, sym, minver, params, args) CU_EXPORT(name, sym, params, args)
CU_HOOKS(CU_EXPORT_HOOK)
#undef CU_EXPORT_HOOK

/* The aliases share their hook's parameter list; spelled out here. */
CU_EXPORT(cuMemAllocAsync, cuMemAllocAsync_ptsz,
	  (CUdeviceptr * dp, size_t n, CUstream s), (dp, n, s))
CU_EXPORT(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz,
	  (CUdeviceptr * dp, size_t n, CUmemoryPool pool, CUstream s), (dp, n, pool, s))
CU_EXPORT(cuMemFreeAsync, cuMemFreeAsync_ptsz, (CUdeviceptr p, CUstream s), (p, s))
CU_EXPORT(cuCtxDestroy, cuCtxDestroy, (CUcontext ctx), (ctx))
CU_EXPORT(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset, (CUdevice dev), (dev))

/* The load address of the object holding p, or NULL (none: unloaded). */
static void *object_of(void *p)
{
	Dl_info i;

	return dladdr(p, &i) ? i.dli_fbase : NULL;
}

/* Is p one of our own functions (never wrap a wrapper)? */
static int is_ours(void *p)
{
	void *o = object_of(p);

	return o && o == object_of((void *)is_ours);
}

/* The object each slot's real pointer was in when it was handed out. */
static void *slot_object[HK_COUNT][CU_SLOTS];
static int slot_reclaiming;

/*
 * Every slot of hk taken: one whose driver was unloaded since (its real
 * pointer no longer in the object it was in) serves real. A driver
 * loaded and unloaded again and again (each static CUDA runtime of a
 * plugin reloads it, elsewhere) had filled all four slots, then every
 * new lookup warned on the program's stderr and went untracked. One
 * thread at a time: another that finds one reclaiming passes real on.
 */
static void *wrap_reclaim(enum cu_hook hk, void *real)
{
	void *got = NULL;

	if (__atomic_exchange_n(&slot_reclaiming, 1, __ATOMIC_ACQUIRE))
		return NULL;
	for (int k = 0; k < CU_SLOTS && !got; k++) {
		void *cur = __atomic_load_n(&slot_real[hk][k], __ATOMIC_ACQUIRE);

		if (cur && object_of(cur) != slot_object[hk][k] &&
		    __atomic_compare_exchange_n(&slot_real[hk][k], &cur, real, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			slot_object[hk][k] = object_of(real);
			got = slot_fn[hk][k];
		}
	}
	__atomic_store_n(&slot_reclaiming, 0, __ATOMIC_RELEASE);
	return got;
}

/* Wrapper of hook hk around real: its slot, or real when all are taken. */
static void *wrap(enum cu_hook hk, void *real)
{
	void *got;

	if (is_ours(real))
		return real;
	for (int k = 0; k < CU_SLOTS; k++) {
		void *cur = __atomic_load_n(&slot_real[hk][k], __ATOMIC_ACQUIRE);

		if (!cur && __atomic_compare_exchange_n(&slot_real[hk][k], &cur, real, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			slot_object[hk][k] = object_of(real);
			return slot_fn[hk][k];
		}
		if (cur == real)
			return slot_fn[hk][k];
	}
	got = wrap_reclaim(hk, real);
	if (got)
		return got;
	if (!__atomic_load_n(&slot_reclaiming, __ATOMIC_ACQUIRE))
		mp_warn("cuda: too many variants of one driver function", "; one is not tracked");
	return real;
}

static const struct cu_name {
	const char *name;
	enum cu_hook hook;
	int min_version;
} gpa_names[] = {
#define CU_GPA_NAME(name, sym, minver, params, args) { #name, HK_##name, minver },
	CU_HOOKS(CU_GPA_NAME)
#undef CU_GPA_NAME
}, sym_names[] = {
#define CU_SYM_NAME(name, sym, minver, params, args) { #sym, HK_##name, 0 },
	CU_HOOKS(CU_SYM_NAME)
#undef CU_SYM_NAME
#define CU_ALIAS_NAME(name, sym) { #sym, HK_##name, 0 },
	CU_ALIASES(CU_ALIAS_NAME)
#undef CU_ALIAS_NAME
};

#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

/* cuGetProcAddress(sym, version) found real: wrap it if it is ours to track. */
static void *wrap_gpa(const char *sym, void *real, int ver)
{
	if (!cuda_on() || !sym)
		return real;
	if (!strcmp(sym, "cuGetProcAddress"))
		return wrap(ver >= 12000 ? HK_cuGetProcAddress_v2 : HK_cuGetProcAddress, real);
	for (unsigned i = 0; i < N_ELEM(gpa_names); i++)
		if (!strcmp(sym, gpa_names[i].name)) {
			if (ver < gpa_names[i].min_version || gpa_names[i].hook ==
			    HK_cuGetProcAddress_v2)
				return real;
			return wrap(gpa_names[i].hook, real);
		}
	return real;
}

/* A runtime entry point's name (cudaMalloc, ...), not the driver's (cu[A-Z]). */
static int runtime_name(const char *name)
{
	return !strncmp(name, "cuda", 4);
}

/* Even with MEMPROV_CUDA=0: our own exports must stay hidden from dlsym. */
int mp_cuda_wants(const char *name)
{
	return name[0] == 'c' && name[1] == 'u' &&
	       (name[2] == 'M' || name[2] == 'C' || name[2] == 'D' || name[2] == 'G' ||
		runtime_name(name));
}

void *mp_cuda_wrap_dlsym(void *handle, const char *name, void *real)
{
	(void)handle;
	if (is_ours(real)) {
		/*
		 * Without memprov the lookup would have found nothing (a
		 * program probing for a CUDA runtime or driver must not find
		 * one because memprov is loaded), or the definition after
		 * ours, which our export calls and records: the same pointer
		 * as the program's own &cuMemAlloc_v2 then, as bare.
		 */
		return mp_real_dlsym(RTLD_NEXT, name) ? real : NULL;
	}
	if (!cuda_on())
		return real;
	for (unsigned i = 0; i < N_ELEM(sym_names); i++) {
		if (strcmp(name, sym_names[i].name))
			continue;
		return wrap(sym_names[i].hook, real);
	}
	return real;
}

/*
 * Runtime hooks: X(name, params, args). Each finds the real function for
 * its caller (rt_lookup, below), kept until a dlopen or dlclose.
 * dlsym(RTLD_NEXT) found only the global scope, so a runtime that a
 * library opened with RTLD_LOCAL brought (a Python extension, ctypes.CDLL)
 * was not found, and every call failed with cudaErrorInsufficientDriver
 * where it ran bare.
 */
#define RT_HOOKS(X)                                                                  \
	X(cudaMalloc, (void **p, size_t n), (p, n))                                  \
	X(cudaFree, (void *p), (p))                                                  \
	X(cudaMallocHost, (void **p, size_t n), (p, n))                              \
	X(cudaHostAlloc, (void **p, size_t n, unsigned int fl), (p, n, fl))          \
	X(cudaFreeHost, (void *p), (p))                                              \
	X(cudaMallocManaged, (void **p, size_t n, unsigned int fl), (p, n, fl))      \
	X(cudaMallocPitch, (void **p, size_t *pitch, size_t w, size_t h),            \
	  (p, pitch, w, h))                                                          \
	X(cudaMalloc3D, (struct cuda_pitched_ptr * pp, struct cuda_extent e), (pp, e)) \
	X(cudaMallocAsync, (void **p, size_t n, cudaStream_t s), (p, n, s))          \
	X(cudaMallocAsync_ptsz, (void **p, size_t n, cudaStream_t s), (p, n, s))     \
	X(cudaMallocFromPoolAsync,                                                   \
	  (void **p, size_t n, cudaMemPool_t pool, cudaStream_t s), (p, n, pool, s))  \
	X(cudaMallocFromPoolAsync_ptsz,                                              \
	  (void **p, size_t n, cudaMemPool_t pool, cudaStream_t s), (p, n, pool, s))  \
	X(cudaFreeAsync, (void *p, cudaStream_t s), (p, s))                          \
	X(cudaFreeAsync_ptsz, (void *p, cudaStream_t s), (p, s))                     \
	X(cudaHostRegister, (void *p, size_t n, unsigned int fl), (p, n, fl))        \
	X(cudaHostUnregister, (void *p), (p))                                        \
	X(cudaDeviceReset, (void), ())                                               \
	X(cudaGetDriverEntryPoint,                                                   \
	  (const char *sym, void **fp, unsigned long long fl, int *st),             \
	  (sym, fp, fl, st))                                                         \
	X(cudaGetDriverEntryPoint_ptsz,                                              \
	  (const char *sym, void **fp, unsigned long long fl, int *st),             \
	  (sym, fp, fl, st))                                                         \
	X(cudaGetDriverEntryPointByVersion,                                          \
	  (const char *sym, void **fp, unsigned int ver, unsigned long long fl,      \
	   int *st),                                                                 \
	  (sym, fp, ver, fl, st))                                                    \
	X(cudaGetDriverEntryPointByVersion_ptsz,                                     \
	  (const char *sym, void **fp, unsigned int ver, unsigned long long fl,      \
	   int *st),                                                                 \
	  (sym, fp, ver, fl, st))

/*
 * The runtime the caller would have reached without memprov: the one in
 * its own object's scope (the object and its dependencies: a plugin's own
 * libcudart, when two plugins opened with RTLD_LOCAL bring a runtime each
 * and the first one found served both, mixing their devices), else the
 * next definition after libmemprov.so. Kept per calling object (a few),
 * until a dlopen or dlclose.
 */
#define RT_CALLERS 4
struct rt_cache {
	void *obj[RT_CALLERS];     /* the calling object's load address */
	mp_sym_cache c[RT_CALLERS];
};
static __thread const void *rt_caller __attribute__((tls_model("initial-exec")));

/* caller: an address in the calling object (NULL: not known) */
static void *rt_find(const void *caller, const char *name)
{
	void *p = caller ? mp_dlsym_in_scope(caller, name) : NULL;

	if (!p || is_ours(p))
		p = mp_dlsym_next_after((void *)cuda_on, name);
	return p;
}

static void *rt_lookup(struct rt_cache *rc, const char *name)
{
	const void *caller = rt_caller;
	Dl_info di;
	void *obj;

	if (!caller || !dladdr(caller, &di))
		return rt_find(NULL, name);
	obj = di.dli_fbase;
	for (int k = 0; k < RT_CALLERS; k++) {
		void *o = __atomic_load_n(&rc->obj[k], __ATOMIC_ACQUIRE);

		if (o == obj || (!o && __atomic_compare_exchange_n(&rc->obj[k], &o, obj, 0,
								   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) ||
		    o == obj)
			return mp_sym_cached(&rc->c[k], rt_find, caller, name);
	}
	return rt_find(caller, name); /* more calling objects than slots: looked up each time */
}

#define RT_REAL(name, params, args)                                           \
	typedef cudaError_t(*rpfn_##name) params;                             \
	static rpfn_##name rt_real_##name(void)                               \
	{                                                                     \
		static struct rt_cache real;                                  \
		return (rpfn_##name)rt_lookup(&real, #name);                  \
	}                                                                     \
	MP_EXPORT cudaError_t name params;
RT_HOOKS(RT_REAL)
#undef RT_REAL

/* Call the caller's real runtime function, or fail as a runtime without a driver. */
#define RT_CALL(name, args)                                                          \
	({                                                                           \
		rpfn_##name f_;                                                      \
		rt_caller = __builtin_return_address(0);                             \
		f_ = rt_real_##name();                                               \
		f_ ? f_(MP_UNPAREN args) : cudaErrorInsufficientDriver;              \
	})

static int rt_device(void)
{
	static struct rt_cache c;
	cudaError_t (*get)(int *) = (cudaError_t(*)(int *))rt_lookup(&c, "cudaGetDevice");
	int d = -1;

	if (!get || get(&d) != cudaSuccess)
		return -1;
	return d;
}

static void rt_begin(enum mp_func fn, int is_free)
{
	ct.rt_fn = (uint16_t)fn;
	ct.rt_done = 0;
	ct.rt_free = (uint8_t)is_free;
}

/* After a runtime allocation: record it unless a driver hook did. */
static void rt_end_alloc(enum mp_kind kind, cudaError_t r, uint64_t addr, uint64_t size,
			 uint64_t stream, uint64_t extra, unsigned flags)
{
	enum mp_func fn = (enum mp_func)ct.rt_fn;
	int done = ct.rt_done;

	ct.rt_fn = 0;
	ct.rt_done = 0;
	if (done || !cu_enter())
		return;
	if (r != cudaSuccess)
		flags |= MP_RF_FAILED;
	mp_record_gpu_alloc(fn, kind, r ? 0 : addr, size, stream,
			    r ? cur_device() : rt_device(), r, extra, flags);
	mp_leave();
}

/* Before a runtime free: record it here; the driver hook below stays quiet. */
static void rt_free_begin(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			  uint64_t stream, unsigned flags)
{
	if (addr && cu_enter()) {
		mp_record_gpu_free(fn, kind, addr, stream, cur_device(), 0, flags);
		mp_leave();
	}
}

static void rt_end_free(enum mp_kind kind, cudaError_t r, uint64_t addr, uint64_t stream,
			unsigned flags)
{
	enum mp_func fn = (enum mp_func)ct.rt_fn;

	ct.rt_fn = 0;
	ct.rt_free = 0;
	if (r == cudaSuccess || !addr || !cu_enter())
		return;
	mp_record_gpu_free(fn, kind, addr, stream, cur_device(), r, flags | MP_RF_FAILED);
	mp_leave();
}

/*
 * Enter a runtime hook: 1 when this call is to be recorded (rt_begin
 * done), 0 when it passes straight through: off, or inside another
 * runtime hook or memprov itself.
 */
static int rt_enter(enum mp_func fn, int is_free)
{
	if (!cuda_on() || ct.rt_fn || mp_self.guard)
		return 0;
	rt_begin(fn, is_free);
	return 1;
}

cudaError_t cudaMalloc(void **p, size_t n)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaMalloc, 0))
		return RT_CALL(cudaMalloc, (p, n));
	r = RT_CALL(cudaMalloc, (p, n));
	rt_end_alloc(MP_KIND_DEVICE, r, r ? 0 : (uintptr_t)*p, n,
		     0, 0, 0);
	return r;
}

cudaError_t cudaMallocHost(void **p, size_t n)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaMallocHost, 0))
		return RT_CALL(cudaMallocHost, (p, n));
	r = RT_CALL(cudaMallocHost, (p, n));
	rt_end_alloc(MP_KIND_PINNED, r, r ? 0 : (uintptr_t)*p, n,
		     0, 0, 0);
	return r;
}

cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int fl)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaHostAlloc, 0))
		return RT_CALL(cudaHostAlloc, (p, n, fl));
	r = RT_CALL(cudaHostAlloc, (p, n, fl));
	rt_end_alloc(MP_KIND_PINNED, r, r ? 0 : (uintptr_t)*p, n,
		     0, fl, 0);
	return r;
}

cudaError_t cudaMallocManaged(void **p, size_t n, unsigned int fl)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaMallocManaged, 0))
		return RT_CALL(cudaMallocManaged, (p, n, fl));
	r = RT_CALL(cudaMallocManaged, (p, n, fl));
	rt_end_alloc(MP_KIND_MANAGED, r, r ? 0 : (uintptr_t)*p, n,
		     0, fl, 0);
	return r;
}

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaMallocPitch, 0))
		return RT_CALL(cudaMallocPitch, (p, pitch, w, h));
	r = RT_CALL(cudaMallocPitch, (p, pitch, w, h));
	rt_end_alloc(MP_KIND_DEVICE, r, r ? 0 : (uintptr_t)*p, r ? w * h : *pitch * h,
		     0, r ? 0 : *pitch, 0);
	return r;
}

cudaError_t cudaMalloc3D(struct cuda_pitched_ptr *pp, struct cuda_extent e)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaMalloc3D, 0))
		return RT_CALL(cudaMalloc3D, (pp, e));
	r = RT_CALL(cudaMalloc3D, (pp, e));
	rt_end_alloc(MP_KIND_DEVICE, r, r ? 0 : (uintptr_t)pp->ptr, (r ? e.width : pp->pitch) * e.height * e.depth,
		     0, r ? 0 : pp->pitch, 0);
	return r;
}

cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaMallocAsync, 0))
		return RT_CALL(cudaMallocAsync, (p, n, s));
	r = RT_CALL(cudaMallocAsync, (p, n, s));
	rt_end_alloc(MP_KIND_DEVICE, r, r ? 0 : (uintptr_t)*p, n,
		     (uintptr_t)s, 0, MP_RF_STREAM);
	return r;
}

cudaError_t cudaMallocAsync_ptsz(void **p, size_t n, cudaStream_t s)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaMallocAsync, 0))
		return RT_CALL(cudaMallocAsync_ptsz, (p, n, s));
	r = RT_CALL(cudaMallocAsync_ptsz, (p, n, s));
	rt_end_alloc(MP_KIND_DEVICE, r, r ? 0 : (uintptr_t)*p, n, (uintptr_t)s, 0, MP_RF_STREAM);
	return r;
}

cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaMallocFromPoolAsync, 0))
		return RT_CALL(cudaMallocFromPoolAsync, (p, n, pool, s));
	r = RT_CALL(cudaMallocFromPoolAsync, (p, n, pool, s));
	rt_end_alloc(MP_KIND_DEVICE, r, r ? 0 : (uintptr_t)*p, n,
		     (uintptr_t)s, (uintptr_t)pool, MP_RF_STREAM);
	return r;
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t n, cudaMemPool_t pool,
					 cudaStream_t s)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaMallocFromPoolAsync, 0))
		return RT_CALL(cudaMallocFromPoolAsync_ptsz, (p, n, pool, s));
	r = RT_CALL(cudaMallocFromPoolAsync_ptsz, (p, n, pool, s));
	rt_end_alloc(MP_KIND_DEVICE, r, r ? 0 : (uintptr_t)*p, n, (uintptr_t)s,
		     (uintptr_t)pool, MP_RF_STREAM);
	return r;
}

cudaError_t cudaHostRegister(void *p, size_t n, unsigned int fl)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaHostRegister, 0))
		return RT_CALL(cudaHostRegister, (p, n, fl));
	r = RT_CALL(cudaHostRegister, (p, n, fl));
	rt_end_alloc(MP_KIND_REGISTERED, r, r ? 0 : (uintptr_t)p, n,
		     0, fl, 0);
	return r;
}

cudaError_t cudaFree(void *p)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaFree, 1))
		return RT_CALL(cudaFree, (p));
	rt_free_begin(MP_FN_cudaFree, MP_KIND_DEVICE, (uintptr_t)p, 0, 0);
	r = RT_CALL(cudaFree, (p));
	rt_end_free(MP_KIND_DEVICE, r, (uintptr_t)p, 0, 0);
	return r;
}

cudaError_t cudaFreeHost(void *p)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaFreeHost, 1))
		return RT_CALL(cudaFreeHost, (p));
	rt_free_begin(MP_FN_cudaFreeHost, MP_KIND_PINNED, (uintptr_t)p, 0, 0);
	r = RT_CALL(cudaFreeHost, (p));
	rt_end_free(MP_KIND_PINNED, r, (uintptr_t)p, 0, 0);
	return r;
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaFreeAsync, 1))
		return RT_CALL(cudaFreeAsync, (p, s));
	rt_free_begin(MP_FN_cudaFreeAsync, MP_KIND_DEVICE, (uintptr_t)p, (uintptr_t)s, MP_RF_STREAM);
	r = RT_CALL(cudaFreeAsync, (p, s));
	rt_end_free(MP_KIND_DEVICE, r, (uintptr_t)p, (uintptr_t)s, MP_RF_STREAM);
	return r;
}

cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaFreeAsync, 1))
		return RT_CALL(cudaFreeAsync_ptsz, (p, s));
	rt_free_begin(MP_FN_cudaFreeAsync, MP_KIND_DEVICE, (uintptr_t)p, (uintptr_t)s, MP_RF_STREAM);
	r = RT_CALL(cudaFreeAsync_ptsz, (p, s));
	rt_end_free(MP_KIND_DEVICE, r, (uintptr_t)p, (uintptr_t)s, MP_RF_STREAM);
	return r;
}

cudaError_t cudaHostUnregister(void *p)
{
	cudaError_t r;

	if (!rt_enter(MP_FN_cudaHostUnregister, 1))
		return RT_CALL(cudaHostUnregister, (p));
	rt_free_begin(MP_FN_cudaHostUnregister, MP_KIND_REGISTERED, (uintptr_t)p, 0, 0);
	r = RT_CALL(cudaHostUnregister, (p));
	rt_end_free(MP_KIND_REGISTERED, r, (uintptr_t)p, 0, 0);
	return r;
}

/*
 * Everything the primary context of the current device owned goes away:
 * recorded once the reset succeeded (recorded before, a reset that failed
 * had dropped every block of the device from the reports). The device is
 * asked for first, while its context is still there.
 */
cudaError_t cudaDeviceReset(void)
{
	cudaError_t r;
	int d;

	if (!rt_enter(MP_FN_cudaDeviceReset, 1))
		return RT_CALL(cudaDeviceReset, ());
	d = rt_device();
	r = RT_CALL(cudaDeviceReset, ());
	if (r == cudaSuccess && cu_enter()) {
		mp_record_ctx_reset(MP_FN_cudaDeviceReset, d);
		mp_leave();
	}
	ct.rt_fn = 0;
	ct.rt_free = 0;
	return r;
}

/* The runtime's own version decides which ABI "cuGetProcAddress" means. */
static int rt_version(void)
{
	static struct rt_cache c;
	cudaError_t (*get)(int *) = (cudaError_t(*)(int *))rt_lookup(&c, "cudaRuntimeGetVersion");
	int v = 0;

	if (!get || get(&v) != cudaSuccess)
		return 12000;
	return v;
}

#define RT_ENTRY_POINT(name, args, ver)                                \
	do {                                                           \
		cudaError_t r_ = RT_CALL(name, args);                  \
		if (r_ == cudaSuccess && fp && *fp)                    \
			*fp = wrap_gpa(sym, *fp, ver);                 \
		return r_;                                             \
	} while (0)

cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fp, unsigned long long fl,
				    int *st)
{
	RT_ENTRY_POINT(cudaGetDriverEntryPoint, (sym, fp, fl, st), rt_version());
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *sym, void **fp, unsigned long long fl,
					 int *st)
{
	RT_ENTRY_POINT(cudaGetDriverEntryPoint_ptsz, (sym, fp, fl, st), rt_version());
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fp, unsigned int ver,
					     unsigned long long fl, int *st)
{
	RT_ENTRY_POINT(cudaGetDriverEntryPointByVersion, (sym, fp, ver, fl, st), (int)ver);
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *sym, void **fp,
						  unsigned int ver, unsigned long long fl,
						  int *st)
{
	RT_ENTRY_POINT(cudaGetDriverEntryPointByVersion_ptsz, (sym, fp, ver, fl, st),
		       (int)ver);
}
