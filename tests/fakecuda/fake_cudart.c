/*
 * fake_cudart.c - a fake CUDA runtime for memprov's tests, built both as
 * tests/bin/libcudart.so and as tests/bin/libcudart_fake.a (linked into
 * the program, as nvcc links the real static runtime).
 *
 * It reaches the driver the way the real runtime does: dlopen
 * "libcuda.so.1", dlsym "cuGetProcAddress_v2", then every entry point
 * through cuGetProcAddress_v2 (the _ptsz ones with the per-thread flag).
 * Without a driver each call returns cudaErrorInsufficientDriver (35).
 * Exported functions never call each other (they would go through the
 * PLT and meet memprov's runtime hooks twice).
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t,
			   CUdriverProcAddressQueryResult *);

/* Every driver function the runtime uses, by cuGetProcAddress name. */
#define DRV_FUNCS(X)                                                          \
	X(cuInit, (unsigned int), 0)                                          \
	X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice), 0)               \
	X(cuDevicePrimaryCtxReset, (CUdevice), 0)                             \
	X(cuCtxSetCurrent, (CUcontext), 0)                                    \
	X(cuMemAlloc, (CUdeviceptr *, size_t), 0)                             \
	X(cuMemAllocPitch, (CUdeviceptr *, size_t *, size_t, size_t, unsigned), 0) \
	X(cuMemAllocManaged, (CUdeviceptr *, size_t, unsigned), 0)            \
	X(cuMemAllocAsync, (CUdeviceptr *, size_t, CUstream), 0)              \
	X(cuMemAllocFromPoolAsync, (CUdeviceptr *, size_t, CUmemoryPool, CUstream), 0) \
	X(cuMemFree, (CUdeviceptr), 0)                                        \
	X(cuMemFreeAsync, (CUdeviceptr, CUstream), 0)                         \
	X(cuMemHostAlloc, (void **, size_t, unsigned), 0)                     \
	X(cuMemFreeHost, (void *), 0)                                         \
	X(cuMemHostRegister, (void *, size_t, unsigned), 0)                   \
	X(cuMemHostUnregister, (void *), 0)                                   \
	X(cuMemcpyHtoD, (CUdeviceptr, const void *, size_t), 0)               \
	X(cuMemcpyDtoH, (void *, CUdeviceptr, size_t), 0)                     \
	X(cuStreamCreate, (CUstream *, unsigned), 0)                          \
	X(cuStreamDestroy, (CUstream), 0)                                     \
	X(cuCtxSynchronize, (void), 0)

/* The per-thread-default-stream variants, fetched with the PTDS flag. */
#define DRV_PTSZ(X)                                                           \
	X(cuMemAllocAsync_ptsz, cuMemAllocAsync, (CUdeviceptr *, size_t, CUstream)) \
	X(cuMemFreeAsync_ptsz, cuMemFreeAsync, (CUdeviceptr, CUstream))

static struct {
#define DRV_FIELD(name, params, unused) CUresult(*name) params;
	DRV_FUNCS(DRV_FIELD)
#undef DRV_FIELD
#define DRV_PTSZ_FIELD(field, name, params) CUresult(*field) params;
	DRV_PTSZ(DRV_PTSZ_FIELD)
#undef DRV_PTSZ_FIELD
} drv;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cudaError_t init_error;
static __thread int cur_dev;
static __thread int have_ctx = -1;

static cudaError_t to_rt(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS: return cudaSuccess;
	case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
	case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
	case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
	case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
	case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
	case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
		return cudaErrorHostMemoryAlreadyRegistered;
	case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: return cudaErrorHostMemoryNotRegistered;
	default: return cudaErrorUnknown;
	}
}

static void load_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUdriverProcAddressQueryResult st;
	gpa_fn gpa;

	if (!h || !(gpa = (gpa_fn)dlsym(h, "cuGetProcAddress_v2"))) {
		init_error = cudaErrorInsufficientDriver;
		return;
	}
#define DRV_GET(name, params, unused)                                          \
	if (gpa(#name, (void **)&drv.name, CUDA_VERSION, 0, &st) != CUDA_SUCCESS) \
		init_error = cudaErrorInsufficientDriver;
	DRV_FUNCS(DRV_GET)
#undef DRV_GET
#define DRV_GET_PTSZ(field, name, params)                                       \
	if (gpa(#name, (void **)&drv.field, CUDA_VERSION,                       \
		CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) != CUDA_SUCCESS) \
		init_error = cudaErrorInsufficientDriver;
	DRV_PTSZ(DRV_GET_PTSZ)
#undef DRV_GET_PTSZ
	if (!init_error)
		init_error = to_rt(drv.cuInit(0));
}

/* Lazy init, then make the thread's device's primary context current. */
static cudaError_t rt_ready(void)
{
	CUcontext ctx;
	CUresult r;

	pthread_once(&once, load_driver);
	if (init_error)
		return init_error;
	if (have_ctx == cur_dev)
		return cudaSuccess;
	r = drv.cuDevicePrimaryCtxRetain(&ctx, cur_dev);
	if (r == CUDA_SUCCESS)
		r = drv.cuCtxSetCurrent(ctx);
	if (r == CUDA_SUCCESS)
		have_ctx = cur_dev;
	return to_rt(r);
}

#define READY()                                   \
	do {                                      \
		cudaError_t e_ = rt_ready();      \
		if (e_ != cudaSuccess)            \
			return e_;                \
	} while (0)

cudaError_t cudaSetDevice(int dev)
{
	cur_dev = dev;
	return rt_ready();
}

cudaError_t cudaGetDevice(int *dev)
{
	READY();
	*dev = cur_dev;
	return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
	*v = CUDART_VERSION;
	return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t n)
{
	READY();
	return to_rt(drv.cuMemAlloc((CUdeviceptr *)p, n));
}

cudaError_t cudaFree(void *p)
{
	READY();
	/* a runtime's heap calls of its own come between the two records of
	 * a free that fails (t3110: FAKECUDA_FAIL_FREE makes the driver fail it) */
	if (getenv("FAKECUDA_FAIL_FREE")) {
		void *volatile own = malloc(64); /* volatile: not folded away */

		free(own);
	}
	return to_rt(drv.cuMemFree((CUdeviceptr)p));
}

cudaError_t cudaMallocHost(void **p, size_t n)
{
	READY();
	return to_rt(drv.cuMemHostAlloc(p, n, 0));
}

cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
	READY();
	return to_rt(drv.cuMemHostAlloc(p, n, flags));
}

cudaError_t cudaFreeHost(void *p)
{
	READY();
	return to_rt(drv.cuMemFreeHost(p));
}

cudaError_t cudaMallocManaged(void **p, size_t n, unsigned int flags)
{
	READY();
	return to_rt(drv.cuMemAllocManaged((CUdeviceptr *)p, n, flags));
}

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
	READY();
	return to_rt(drv.cuMemAllocPitch((CUdeviceptr *)p, pitch, w, h, 4));
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pp, struct cudaExtent e)
{
	CUdeviceptr d;
	size_t pitch;
	CUresult r;

	READY();
	r = drv.cuMemAllocPitch(&d, &pitch, e.width, e.height * e.depth, 4);
	if (r == CUDA_SUCCESS)
		*pp = (struct cudaPitchedPtr){ (void *)d, pitch, e.width, e.height };
	return to_rt(r);
}

cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
	READY();
	return to_rt(drv.cuMemAllocAsync((CUdeviceptr *)p, n, (CUstream)s));
}

cudaError_t cudaMallocAsync_ptsz(void **p, size_t n, cudaStream_t s);
cudaError_t cudaMallocAsync_ptsz(void **p, size_t n, cudaStream_t s)
{
	READY();
	return to_rt(drv.cuMemAllocAsync_ptsz((CUdeviceptr *)p, n, (CUstream)s));
}

cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
	READY();
	return to_rt(drv.cuMemAllocFromPoolAsync((CUdeviceptr *)p, n, (CUmemoryPool)pool,
						 (CUstream)s));
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
	READY();
	return to_rt(drv.cuMemFreeAsync((CUdeviceptr)p, (CUstream)s));
}

cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s);
cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
	READY();
	return to_rt(drv.cuMemFreeAsync_ptsz((CUdeviceptr)p, (CUstream)s));
}

cudaError_t cudaHostRegister(void *p, size_t n, unsigned int flags)
{
	READY();
	return to_rt(drv.cuMemHostRegister(p, n, flags));
}

cudaError_t cudaHostUnregister(void *p)
{
	READY();
	return to_rt(drv.cuMemHostUnregister(p));
}

cudaError_t cudaDeviceReset(void)
{
	READY();
	have_ctx = -1;
	return to_rt(drv.cuDevicePrimaryCtxReset(cur_dev));
}

cudaError_t cudaDeviceSynchronize(void)
{
	READY();
	return to_rt(drv.cuCtxSynchronize());
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
	READY();
	return to_rt(drv.cuStreamCreate((CUstream *)s, 0));
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	READY();
	return to_rt(drv.cuStreamDestroy((CUstream)s));
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
	READY();
	if (kind == cudaMemcpyHostToDevice)
		return to_rt(drv.cuMemcpyHtoD((CUdeviceptr)dst, src, n));
	if (kind == cudaMemcpyDeviceToHost)
		return to_rt(drv.cuMemcpyDtoH(dst, (CUdeviceptr)src, n));
	return cudaErrorInvalidValue;
}

const char *cudaGetErrorString(cudaError_t e)
{
	return e == cudaSuccess ? "no error" :
	       e == cudaErrorMemoryAllocation ? "out of memory" :
	       e == cudaErrorInsufficientDriver ? "insufficient driver" : "fake cudart error";
}

/* Through the driver's cuGetProcAddress, as the real runtime does. */
static cudaError_t entry_point(const char *sym, void **fp, int ver, unsigned long long flags,
			       enum cudaDriverEntryPointQueryResult *st)
{
	CUdriverProcAddressQueryResult s;
	void *h;
	gpa_fn gpa;
	CUresult r;

	READY();
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	gpa = h ? (gpa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	if (!gpa)
		return cudaErrorInsufficientDriver;
	r = gpa(sym, fp, ver, flags & cudaEnablePerThreadDefaultStream ?
			 CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0, &s);
	if (st)
		*st = (enum cudaDriverEntryPointQueryResult)s;
	return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorSymbolNotFound;
}

cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fp, unsigned long long flags,
				    enum cudaDriverEntryPointQueryResult *st)
{
	return entry_point(sym, fp, CUDART_VERSION, flags, st);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fp, unsigned int ver,
					     unsigned long long flags,
					     enum cudaDriverEntryPointQueryResult *st)
{
	return entry_point(sym, fp, (int)ver, flags, st);
}
