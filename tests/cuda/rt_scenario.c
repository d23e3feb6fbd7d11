/*
 * rt_scenario.c - CUDA runtime calls with exactly known sizes, for the t3*
 * tests. Built against the fake runtime twice: shared (cuda-rt-dyn) and
 * linked statically (cuda-rt-static). Lines that leave memory allocated
 * carry a LEAK_* tag the tests look up to check file:line in the report.
 *
 *   cuda-rt-* basic     every runtime allocation API; leaks listed below
 *   cuda-rt-* oom       allocations beyond FAKECUDA_MEM_BYTES fail
 *   cuda-rt-* reset     allocations, then cudaDeviceReset, then one leak
 *   cuda-rt-* threads   8 threads x 50 rounds: half the device blocks leak
 *   cuda-rt-* gpa       driver entry points via cudaGetDriverEntryPoint*
 *
 * Prints one line per call result and exits 0 when every call returned
 * what the scenario expects (the statuses are also what the no-driver
 * test compares with and without memprov).
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cudaError_t cudaMallocAsync_ptsz(void **p, size_t n, cudaStream_t s);
cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s);

static int bad;

static void expect(const char *what, int got, int want)
{
	printf("%s %d\n", what, got);
	if (got != want)
		bad = 1;
}

static void basic(void)
{
	void *d1, *d2, *h1, *h2, *m1, *p1, *a1, *a2, *a3, *a4;
	struct cudaPitchedPtr pp;
	size_t pitch;
	cudaStream_t s;
	char *host, *host2;

	expect("cudaMalloc", cudaMalloc(&d1, 1000), 0); /* LEAK_RT_DEVICE */
	expect("cudaMalloc", cudaMalloc(&d2, 2000), 0);
	expect("cudaFree", cudaFree(d2), 0);
	expect("cudaFree(NULL)", cudaFree(NULL), 0);
	expect("cudaMallocHost", cudaMallocHost(&h1, 3000), 0); /* LEAK_RT_PINNED */
	expect("cudaHostAlloc", cudaHostAlloc(&h2, 4000, 0), 0);
	expect("cudaFreeHost", cudaFreeHost(h2), 0);
	expect("cudaMallocManaged", cudaMallocManaged(&m1, 5000, 1), 0); /* LEAK_RT_MANAGED */
	expect("cudaMallocPitch", cudaMallocPitch(&p1, &pitch, 100, 10), 0); /* LEAK_RT_PITCH */
	expect("cudaMalloc3D", cudaMalloc3D(&pp, (struct cudaExtent){ 100, 4, 2 }), 0); /* LEAK_RT_3D */
	expect("cudaStreamCreate", cudaStreamCreate(&s), 0);
	expect("cudaMallocAsync", cudaMallocAsync(&a1, 6000, s), 0); /* LEAK_RT_ASYNC */
	expect("cudaMallocAsync", cudaMallocAsync(&a2, 7000, s), 0);
	expect("cudaFreeAsync", cudaFreeAsync(a2, s), 0);
	expect("cudaMallocAsync_ptsz", cudaMallocAsync_ptsz(&a3, 6500, s), 0); /* LEAK_RT_PTSZ */
	expect("cudaMallocAsync_ptsz", cudaMallocAsync_ptsz(&a4, 7500, s), 0);
	expect("cudaFreeAsync_ptsz", cudaFreeAsync_ptsz(a4, s), 0);
	host = malloc(8192); /* LEAK_HOST */
	memset(host, 1, 8192);
	expect("cudaHostRegister", cudaHostRegister(host, 8192, 0), 0); /* LEAK_RT_REG */
	host2 = malloc(4096);
	expect("cudaHostRegister", cudaHostRegister(host2, 4096, 0), 0);
	expect("cudaHostUnregister", cudaHostUnregister(host2), 0);
	free(host2);
	printf("pitch %zu %zu\n", pitch, pp.pitch);
}

static void oom(void)
{
	void *d1, *d2, *d3;

	expect("cudaMalloc", cudaMalloc(&d1, 600000), 0); /* LEAK_OOM_OK */
	expect("cudaMalloc", cudaMalloc(&d2, 600000), cudaErrorMemoryAllocation); /* OOM_FAIL */
	expect("cudaMallocAsync", cudaMallocAsync(&d3, 2000000, 0), cudaErrorMemoryAllocation);
}

static void reset(void)
{
	void *d, *h, *m, *d2;

	expect("cudaMalloc", cudaMalloc(&d, 1000), 0);
	expect("cudaMallocHost", cudaMallocHost(&h, 2000), 0);
	expect("cudaMallocManaged", cudaMallocManaged(&m, 3000, 1), 0);
	expect("cudaDeviceReset", cudaDeviceReset(), 0);
	expect("cudaMalloc", cudaMalloc(&d2, 4444), 0); /* LEAK_AFTER_RESET */
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++) {
		void *d, *h;

		if (cudaMalloc(&d, 1024) || cudaMallocHost(&h, 256)) /* LEAK_THREAD */
			bad = 1;
		if (i % 2 && cudaFree(d))
			bad = 1;
		if (cudaFreeHost(h))
			bad = 1;
	}
	return NULL;
}

static void threads(void)
{
	pthread_t t[8];

	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	printf("threads %d\n", bad);
}

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);

static void gpa(void)
{
	enum cudaDriverEntryPointQueryResult st;
	void *fn = NULL, *fn_ptsz = NULL, *legacy = NULL;
	CUdeviceptr d;
	cudaStream_t s;

	expect("cudaStreamCreate", cudaStreamCreate(&s), 0);
	expect("entry cuMemAlloc", cudaGetDriverEntryPoint("cuMemAlloc", &fn, 0, &st), 0);
	expect("call cuMemAlloc", ((alloc_fn)fn)(&d, 1234), 0); /* LEAK_GPA */
	expect("entry cuMemAlloc 3010",
	       cudaGetDriverEntryPointByVersion("cuMemAlloc", &legacy, 3010, 0, &st), 0);
	expect("call legacy cuMemAlloc", ((alloc_fn)legacy)(&d, 99), 801);
	expect("entry cuMemAllocAsync ptsz",
	       cudaGetDriverEntryPoint("cuMemAllocAsync", &fn_ptsz,
				       cudaEnablePerThreadDefaultStream, &st), 0);
	expect("call cuMemAllocAsync_ptsz",
	       ((alloc_async_fn)fn_ptsz)(&d, 2345, (CUstream)s), 0); /* LEAK_GPA_PTSZ */
	expect("entry cuMemAllocAsync",
	       cudaGetDriverEntryPoint("cuMemAllocAsync", &fn, 0, &st), 0);
	expect("call cuMemAllocAsync", ((alloc_async_fn)fn)(&d, 3456, (CUstream)s), 0); /* LEAK_GPA_ASYNC */
	printf("distinct %d\n", fn != fn_ptsz);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";

	if (!strcmp(mode, "basic"))
		basic();
	else if (!strcmp(mode, "oom"))
		oom();
	else if (!strcmp(mode, "reset"))
		reset();
	else if (!strcmp(mode, "threads"))
		threads();
	else if (!strcmp(mode, "gpa"))
		gpa();
	else if (!strcmp(mode, "nodriver"))
		expect("cudaMalloc", cudaMalloc(&(void *){ NULL }, 4096), cudaErrorInsufficientDriver);
	else
		return 2;
	return bad;
}
