/*
 * fake_cuda.c - a fake CUDA driver (libcuda.so.1) for memprov's tests.
 *
 * Exports the driver entry points memprov hooks (cuMemAlloc_v2 & co.,
 * the _ptsz variants, the virtual-memory calls, contexts) and
 * cuGetProcAddress / cuGetProcAddress_v2, on host memory behind fake
 * device addresses (0x2000_0000_0000 + device * 2^40, never a host
 * address). Error codes are the real CUresult values from cuda.h.
 *
 * Environment:
 *   FAKECUDA_MEM_BYTES  capacity of each fake device (default 1 GiB);
 *                       beyond it allocations fail with
 *                       CUDA_ERROR_OUT_OF_MEMORY (2)
 *   FAKECUDA_DEVICES    number of devices (default 2)
 *   FAKECUDA_LOG        append one line per cuGetProcAddress query:
 *                       "gpa NAME VERSION FLAGS caller=OBJECT", where
 *                       OBJECT is the file name of the caller's object
 *                       (libmemprov.so when memprov wrapped the lookup)
 */
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cuda.h maps these to their _v2 names; here they mean the legacy ABI. */
#undef cuMemAlloc
#undef cuGetProcAddress
#undef cuDevicePrimaryCtxReset

#define MAX_BLOCKS 65536
#define MAX_DEV 8
#define DEV_BASE 0x200000000000ull
#define VA_BASE 0x300000000000ull

enum blk_kind { B_FREE, B_DEVICE, B_MANAGED, B_PINNED, B_REGISTERED };

struct fctx {
	int dev;
	int primary;
	int alive;
};

struct blk {
	uint64_t addr;
	size_t size;
	void *host;
	enum blk_kind kind;
	struct fctx *ctx;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct blk blks[MAX_BLOCKS];
static size_t used[MAX_DEV];
static uint64_t next_addr[MAX_DEV];
static uint64_t next_va = VA_BASE;
static struct fctx primary[MAX_DEV];
static int initialized;
static __thread struct fctx *ctx_stack[8];
static __thread int ctx_depth; /* ctx_stack[ctx_depth] is current */

static struct vmm_handle {
	size_t size;
	int dev;
	int live;
} handles[1024];

static int n_devices(void)
{
	const char *e = getenv("FAKECUDA_DEVICES");
	int n = e ? atoi(e) : 2;

	return n < 0 ? 0 : n > MAX_DEV ? MAX_DEV : n;
}

static size_t capacity(void)
{
	const char *e = getenv("FAKECUDA_MEM_BYTES");

	return e ? strtoull(e, NULL, 0) : (size_t)1 << 30;
}

static struct fctx *cur(void)
{
	struct fctx *c = ctx_stack[ctx_depth];

	return c && c->alive ? c : NULL;
}

/* Take a block slot; called with lock held. */
static struct blk *blk_new(void)
{
	for (int i = 0; i < MAX_BLOCKS; i++)
		if (blks[i].kind == B_FREE)
			return &blks[i];
	return NULL;
}

static struct blk *blk_find(uint64_t addr, enum blk_kind k1, enum blk_kind k2)
{
	for (int i = 0; i < MAX_BLOCKS; i++)
		if ((blks[i].kind == k1 || blks[i].kind == k2) && blks[i].addr == addr)
			return &blks[i];
	return NULL;
}

static void blk_release(struct blk *b)
{
	if (b->kind == B_DEVICE || b->kind == B_MANAGED)
		used[b->ctx->dev] -= b->size;
	if (b->kind != B_REGISTERED)
		free(b->host);
	memset(b, 0, sizeof(*b));
}

static CUresult dev_alloc(CUdeviceptr *dp, size_t n, enum blk_kind kind)
{
	struct fctx *c = cur();
	struct blk *b;
	CUresult r = CUDA_SUCCESS;

	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!dp || !n)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (used[c->dev] + n > capacity() || !(b = blk_new())) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else if (!(b->host = calloc(1, n))) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		if (!next_addr[c->dev])
			next_addr[c->dev] = DEV_BASE + ((uint64_t)c->dev << 40);
		b->addr = next_addr[c->dev];
		next_addr[c->dev] += (n + 511) & ~(uint64_t)511;
		b->size = n;
		b->kind = kind;
		b->ctx = c;
		used[c->dev] += n;
		*dp = b->addr;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static CUresult dev_free(CUdeviceptr p)
{
	struct blk *b;

	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!p)
		return CUDA_SUCCESS;
	if (getenv("FAKECUDA_FAIL_FREE"))
		return CUDA_ERROR_NOT_PERMITTED; /* a free that fails, block kept */
	pthread_mutex_lock(&lock);
	b = blk_find(p, B_DEVICE, B_MANAGED);
	if (b)
		blk_release(b);
	pthread_mutex_unlock(&lock);
	return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult host_alloc(void **pp, size_t n)
{
	struct fctx *c = cur();
	struct blk *b;
	CUresult r = CUDA_SUCCESS;

	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!pp || !n)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (!(b = blk_new()) || !(b->host = calloc(1, n))) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		b->addr = (uintptr_t)b->host;
		b->size = n;
		b->kind = B_PINNED;
		b->ctx = c;
		*pp = b->host;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* Free every block a context owned (context destroyed or reset). */
static void ctx_free_all(struct fctx *c)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_BLOCKS; i++)
		if (blks[i].kind != B_FREE && blks[i].kind != B_REGISTERED && blks[i].ctx == c)
			blk_release(&blks[i]);
	pthread_mutex_unlock(&lock);
}

CUresult cuInit(unsigned int flags)
{
	(void)flags;
	if (!n_devices())
		return CUDA_ERROR_NO_DEVICE;
	initialized = 1;
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
	*v = CUDA_VERSION;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*n = n_devices();
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ordinal < 0 || ordinal >= n_devices())
		return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= n_devices())
		return CUDA_ERROR_INVALID_DEVICE;
	primary[dev].dev = dev;
	primary[dev].primary = 1;
	primary[dev].alive = 1;
	*pctx = (CUcontext)&primary[dev];
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return dev < 0 || dev >= n_devices() ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (getenv("FAKECUDA_FAIL_RESET"))
		return CUDA_ERROR_NOT_PERMITTED; /* a reset that fails, blocks kept */
	if (dev < 0 || dev >= n_devices())
		return CUDA_ERROR_INVALID_DEVICE;
	ctx_free_all(&primary[dev]);
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev);
CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
	return cuDevicePrimaryCtxReset_v2(dev);
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct fctx *c;

	(void)flags;
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= n_devices())
		return CUDA_ERROR_INVALID_DEVICE;
	c = calloc(1, sizeof(*c));
	c->dev = dev;
	c->alive = 1;
	ctx_stack[ctx_depth] = c;
	*pctx = (CUcontext)c;
	return CUDA_SUCCESS;
}

CUresult cuCtxCreate(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
		     CUdevice dev)
{
	(void)params;
	return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	struct fctx *c = (struct fctx *)ctx;

	if (!c || !c->alive)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_free_all(c);
	c->alive = 0; /* never freed: a stale handle stays detectable */
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	ctx_stack[ctx_depth] = (struct fctx *)ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	*pctx = (CUcontext)cur();
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *d)
{
	struct fctx *c = cur();

	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = c->dev;
	return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	if (ctx_depth >= 7)
		return CUDA_ERROR_INVALID_VALUE;
	ctx_stack[++ctx_depth] = (struct fctx *)ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = (CUcontext)ctx_stack[ctx_depth];
	ctx_depth--;
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	return cur() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
	static uintptr_t next = 0x5000;

	(void)flags;
	if (!cur())
		return CUDA_ERROR_INVALID_CONTEXT;
	*s = (CUstream)__atomic_add_fetch(&next, 16, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream s)
{
	(void)s;
	return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream s)
{
	(void)s;
	return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *fr, size_t *total)
{
	struct fctx *c = cur();

	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*total = capacity();
	*fr = capacity() - used[c->dev];
	return CUDA_SUCCESS;
}

/* Legacy 32-bit ABI: kept so that version-dependent lookups differ. */
CUresult cuMemAlloc(unsigned int *dp, unsigned int n);
CUresult cuMemAlloc(unsigned int *dp, unsigned int n)
{
	(void)dp, (void)n;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dp, size_t n)
{
	return dev_alloc(dp, n, B_DEVICE);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dp, size_t *pitch, size_t w, size_t h,
			    unsigned int elem)
{
	size_t p = (w + 511) & ~(size_t)511;
	CUresult r;

	(void)elem;
	if (!pitch)
		return CUDA_ERROR_INVALID_VALUE;
	r = dev_alloc(dp, p * h, B_DEVICE);
	if (r == CUDA_SUCCESS)
		*pitch = p;
	return r;
}

CUresult cuMemAllocManaged(CUdeviceptr *dp, size_t n, unsigned int flags)
{
	(void)flags;
	return dev_alloc(dp, n, B_MANAGED);
}

CUresult cuMemAllocAsync(CUdeviceptr *dp, size_t n, CUstream s)
{
	(void)s;
	return dev_alloc(dp, n, B_DEVICE);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dp, size_t n, CUstream s);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dp, size_t n, CUstream s)
{
	(void)s;
	return dev_alloc(dp, n, B_DEVICE);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dp, size_t n, CUmemoryPool pool, CUstream s)
{
	(void)pool, (void)s;
	return dev_alloc(dp, n, B_DEVICE);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dp, size_t n, CUmemoryPool pool,
				      CUstream s);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dp, size_t n, CUmemoryPool pool,
				      CUstream s)
{
	(void)pool, (void)s;
	return dev_alloc(dp, n, B_DEVICE);
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	return dev_free(p);
}

CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	(void)s;
	return dev_free(p);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
	(void)s;
	return dev_free(p);
}

CUresult cuMemHostAlloc(void **pp, size_t n, unsigned int flags)
{
	(void)flags;
	return host_alloc(pp, n);
}

CUresult cuMemAllocHost_v2(void **pp, size_t n)
{
	return host_alloc(pp, n);
}

CUresult cuMemFreeHost(void *p)
{
	struct blk *b;

	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&lock);
	b = blk_find((uintptr_t)p, B_PINNED, B_PINNED);
	if (b)
		blk_release(b);
	pthread_mutex_unlock(&lock);
	return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned int flags)
{
	struct blk *b;
	CUresult r = CUDA_SUCCESS;

	(void)flags;
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!cur())
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&lock);
	if (blk_find((uintptr_t)p, B_REGISTERED, B_REGISTERED))
		r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	else if (!(b = blk_new()))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else
		*b = (struct blk){ (uintptr_t)p, n, p, B_REGISTERED, cur() };
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuMemHostUnregister(void *p)
{
	struct blk *b;

	pthread_mutex_lock(&lock);
	b = blk_find((uintptr_t)p, B_REGISTERED, B_REGISTERED);
	if (b)
		blk_release(b);
	pthread_mutex_unlock(&lock);
	return b ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	struct blk *b;

	pthread_mutex_lock(&lock);
	b = blk_find(dst, B_DEVICE, B_MANAGED);
	if (b && n <= b->size)
		memcpy(b->host, src, n);
	pthread_mutex_unlock(&lock);
	return b && n <= b->size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	struct blk *b;

	pthread_mutex_lock(&lock);
	b = blk_find(src, B_DEVICE, B_MANAGED);
	if (b && n <= b->size)
		memcpy(dst, b->host, n);
	pthread_mutex_unlock(&lock);
	return b && n <= b->size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Virtual memory: physical handles count against capacity when created. */
CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	int dev = prop ? prop->location.id : 0;
	CUresult r = CUDA_ERROR_OUT_OF_MEMORY;

	(void)flags;
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= n_devices() || !n)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (used[dev] + n <= capacity())
		for (int i = 1; i < 1024; i++)
			if (!handles[i].live) {
				handles[i] = (struct vmm_handle){ n, dev, 1 };
				used[dev] += n;
				*h = (CUmemGenericAllocationHandle)i;
				r = CUDA_SUCCESS;
				break;
			}
	pthread_mutex_unlock(&lock);
	return r;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	if (h < 1 || h >= 1024 || !handles[h].live)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	used[handles[h].dev] -= handles[h].size;
	handles[h].live = 0;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t n, size_t align, CUdeviceptr addr,
			     unsigned long long flags)
{
	(void)align, (void)addr, (void)flags;
	*ptr = __atomic_fetch_add(&next_va, (n + 0xfffff) & ~(uint64_t)0xfffff,
				  __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t n)
{
	(void)ptr, (void)n;
	return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t n, size_t off, CUmemGenericAllocationHandle h,
		  unsigned long long flags)
{
	(void)off, (void)flags;
	if (!ptr || h < 1 || h >= 1024 || !handles[h].live || n > handles[h].size)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t n)
{
	(void)n;
	return ptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult e, const char **s)
{
	*s = e == CUDA_SUCCESS ? "no error" :
	     e == CUDA_ERROR_OUT_OF_MEMORY ? "out of memory" : "fake cuda error";
	return CUDA_SUCCESS;
}

CUresult cuGetExportTable(const void **tbl, const CUuuid *id)
{
	(void)tbl, (void)id;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *st);
CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags);

/* GPA table: name, lowest version, default function, per-thread variant. */
#define F(x) ((void *)(x))
static const struct gpa_ent {
	const char *name;
	int min_version;
	void *fn, *ptsz;
} gpa_tab[] = {
	{ "cuInit", 2000, F(cuInit), NULL },
	{ "cuDriverGetVersion", 2020, F(cuDriverGetVersion), NULL },
	{ "cuDeviceGet", 2000, F(cuDeviceGet), NULL },
	{ "cuDeviceGetCount", 2000, F(cuDeviceGetCount), NULL },
	{ "cuDevicePrimaryCtxRetain", 7000, F(cuDevicePrimaryCtxRetain), NULL },
	{ "cuDevicePrimaryCtxRelease", 11000, F(cuDevicePrimaryCtxRelease_v2), NULL },
	{ "cuDevicePrimaryCtxReset", 11000, F(cuDevicePrimaryCtxReset_v2), NULL },
	{ "cuCtxCreate", 3020, F(cuCtxCreate_v2), NULL },
	{ "cuCtxDestroy", 4000, F(cuCtxDestroy_v2), NULL },
	{ "cuCtxSetCurrent", 4000, F(cuCtxSetCurrent), NULL },
	{ "cuCtxGetCurrent", 4000, F(cuCtxGetCurrent), NULL },
	{ "cuCtxGetDevice", 2000, F(cuCtxGetDevice), NULL },
	{ "cuCtxPushCurrent", 4000, F(cuCtxPushCurrent_v2), NULL },
	{ "cuCtxPopCurrent", 4000, F(cuCtxPopCurrent_v2), NULL },
	{ "cuCtxSynchronize", 2000, F(cuCtxSynchronize), NULL },
	{ "cuStreamCreate", 2000, F(cuStreamCreate), NULL },
	{ "cuStreamDestroy", 4000, F(cuStreamDestroy_v2), NULL },
	{ "cuStreamSynchronize", 2000, F(cuStreamSynchronize), NULL },
	{ "cuMemGetInfo", 3020, F(cuMemGetInfo_v2), NULL },
	{ "cuMemAlloc", 3020, F(cuMemAlloc_v2), NULL },
	{ "cuMemAllocPitch", 3020, F(cuMemAllocPitch_v2), NULL },
	{ "cuMemAllocManaged", 6000, F(cuMemAllocManaged), NULL },
	{ "cuMemAllocAsync", 11020, F(cuMemAllocAsync), F(cuMemAllocAsync_ptsz) },
	{ "cuMemAllocFromPoolAsync", 11020, F(cuMemAllocFromPoolAsync),
	  F(cuMemAllocFromPoolAsync_ptsz) },
	{ "cuMemFree", 3020, F(cuMemFree_v2), NULL },
	{ "cuMemFreeAsync", 11020, F(cuMemFreeAsync), F(cuMemFreeAsync_ptsz) },
	{ "cuMemHostAlloc", 2020, F(cuMemHostAlloc), NULL },
	{ "cuMemAllocHost", 3020, F(cuMemAllocHost_v2), NULL },
	{ "cuMemFreeHost", 2000, F(cuMemFreeHost), NULL },
	{ "cuMemHostRegister", 6050, F(cuMemHostRegister_v2), NULL },
	{ "cuMemHostUnregister", 4000, F(cuMemHostUnregister), NULL },
	{ "cuMemcpyHtoD", 3020, F(cuMemcpyHtoD_v2), NULL },
	{ "cuMemcpyDtoH", 3020, F(cuMemcpyDtoH_v2), NULL },
	{ "cuMemCreate", 10020, F(cuMemCreate), NULL },
	{ "cuMemRelease", 10020, F(cuMemRelease), NULL },
	{ "cuMemAddressReserve", 10020, F(cuMemAddressReserve), NULL },
	{ "cuMemAddressFree", 10020, F(cuMemAddressFree), NULL },
	{ "cuMemMap", 10020, F(cuMemMap), NULL },
	{ "cuMemUnmap", 10020, F(cuMemUnmap), NULL },
	{ "cuGetErrorString", 6000, F(cuGetErrorString), NULL },
	{ "cuGetExportTable", 3000, F(cuGetExportTable), NULL },
};

static void gpa_log(const char *sym, int ver, cuuint64_t flags, void *caller)
{
	const char *path = getenv("FAKECUDA_LOG"), *obj = "?";
	Dl_info info;
	char line[512];
	int fd, n;

	if (!path)
		return;
	if (dladdr(caller, &info) && info.dli_fname) {
		obj = strrchr(info.dli_fname, '/');
		obj = obj ? obj + 1 : info.dli_fname;
	}
	n = snprintf(line, sizeof(line), "gpa %s %d %llu caller=%s\n", sym, ver,
		     (unsigned long long)flags, obj);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd >= 0) {
		if (write(fd, line, n) != n)
			n = -1;
		close(fd);
	}
}

static CUresult gpa(const char *sym, void **pfn, int ver, cuuint64_t flags,
		    CUdriverProcAddressQueryResult *st)
{
	CUdriverProcAddressQueryResult s = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	CUresult r = CUDA_ERROR_NOT_FOUND;

	*pfn = NULL;
	if (!strcmp(sym, "cuGetProcAddress")) {
		*pfn = ver >= 12000 ? F(cuGetProcAddress_v2) : F(cuGetProcAddress);
		s = CU_GET_PROC_ADDRESS_SUCCESS;
		r = CUDA_SUCCESS;
	} else if (!strcmp(sym, "cuMemAlloc") && ver < 3020 && ver >= 2000) {
		*pfn = F(cuMemAlloc); /* the legacy ABI, as the real driver does */
		s = CU_GET_PROC_ADDRESS_SUCCESS;
		r = CUDA_SUCCESS;
	} else {
		for (size_t i = 0; i < sizeof(gpa_tab) / sizeof(gpa_tab[0]); i++) {
			if (strcmp(sym, gpa_tab[i].name))
				continue;
			if (ver < gpa_tab[i].min_version) {
				s = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
				break;
			}
			*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
					       gpa_tab[i].ptsz ?
				       gpa_tab[i].ptsz :
				       gpa_tab[i].fn;
			s = CU_GET_PROC_ADDRESS_SUCCESS;
			r = CUDA_SUCCESS;
			break;
		}
	}
	if (st)
		*st = s;
	return r;
}

CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *st)
{
	gpa_log(sym, ver, flags, __builtin_return_address(0));
	return gpa(sym, pfn, ver, flags, st);
}

CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	gpa_log(sym, ver, flags, __builtin_return_address(0));
	return gpa(sym, pfn, ver, flags, NULL);
}
