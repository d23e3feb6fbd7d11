/*
 * drv_scenario.c - the CUDA driver API called directly (the program links
 * libcuda.so.1), with exactly known sizes, for the t3* tests.
 *
 *   cuda-drv basic   every driver allocation API on device 1, incl. the
 *                    virtual-memory calls and cuGetProcAddress_v2
 *   cuda-drv ctx     allocations freed by cuCtxDestroy and by
 *                    cuDevicePrimaryCtxReset, then one leak
 *   cuda-drv oom     cuMemAlloc and cuMemCreate beyond FAKECUDA_MEM_BYTES
 *
 * Lines that leave memory allocated carry a LEAK_* tag. Exit 0 when every
 * call returned what was expected.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad;

static void expect(const char *what, CUresult got, CUresult want)
{
	printf("%s %d\n", what, (int)got);
	if (got != want)
		bad = 1;
}

static void use_device(int ordinal)
{
	CUdevice dev;
	CUcontext ctx;

	expect("cuInit", cuInit(0), 0);
	expect("cuDeviceGet", cuDeviceGet(&dev, ordinal), 0);
	expect("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev), 0);
	expect("cuCtxSetCurrent", cuCtxSetCurrent(ctx), 0);
}

static CUmemGenericAllocationHandle vmm_create(size_t n, int dev, CUresult want)
{
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle h = 0;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	expect("cuMemCreate", cuMemCreate(&h, n, &prop, 0), want); /* VMM_CREATE */
	return h;
}

static void basic(void)
{
	CUdeviceptr d, d2, p, va, va2;
	CUmemGenericAllocationHandle h, h2;
	CUresult (*gpa_alloc)(CUdeviceptr *, size_t);
	CUdriverProcAddressQueryResult st;
	void *ph, *ph2, *host;
	size_t pitch;
	CUstream s;

	use_device(1);
	expect("cuMemAlloc", cuMemAlloc(&d, 1111), 0); /* LEAK_DRV_DEVICE */
	expect("cuMemAlloc", cuMemAlloc(&d2, 2222), 0);
	expect("cuMemFree", cuMemFree(d2), 0);
	expect("cuMemAllocHost", cuMemAllocHost(&ph, 3333), 0); /* LEAK_DRV_PINNED */
	expect("cuMemHostAlloc", cuMemHostAlloc(&ph2, 4444, 0), 0);
	expect("cuMemFreeHost", cuMemFreeHost(ph2), 0);
	expect("cuMemAllocManaged", cuMemAllocManaged(&d2, 5555, 1), 0); /* LEAK_DRV_MANAGED */
	expect("cuMemAllocPitch", cuMemAllocPitch(&p, &pitch, 600, 3, 4), 0); /* LEAK_DRV_PITCH */
	host = malloc(4096); /* LEAK_DRV_HOST */
	expect("cuMemHostRegister", cuMemHostRegister(host, 4096, 0), 0); /* LEAK_DRV_REG */
	h = vmm_create(2 << 20, 1, 0);
	expect("cuMemAddressReserve", cuMemAddressReserve(&va, 2 << 20, 0, 0, 0), 0);
	expect("cuMemMap", cuMemMap(va, 2 << 20, 0, h, 0), 0); /* LEAK_DRV_MAP */
	h2 = vmm_create(1 << 20, 1, 0);
	expect("cuMemAddressReserve", cuMemAddressReserve(&va2, 1 << 20, 0, 0, 0), 0);
	expect("cuMemMap", cuMemMap(va2, 1 << 20, 0, h2, 0), 0);
	expect("cuMemUnmap", cuMemUnmap(va2, 1 << 20), 0);
	expect("cuMemRelease", cuMemRelease(h2), 0);
	expect("cuGetProcAddress",
	       cuGetProcAddress("cuMemAlloc", (void **)&gpa_alloc, 12000, 0, &st), 0);
	expect("gpa cuMemAlloc", gpa_alloc(&d, 7777), 0); /* LEAK_DRV_GPA */
	expect("cuStreamCreate", cuStreamCreate(&s, 0), 0);
	expect("cuMemAllocAsync", cuMemAllocAsync(&d, 8888, s), 0); /* LEAK_DRV_ASYNC */
	expect("cuMemAllocAsync", cuMemAllocAsync(&d2, 9999, s), 0);
	expect("cuMemFreeAsync", cuMemFreeAsync(d2, s), 0);
}

static void ctx(void)
{
	CUcontext c;
	CUdeviceptr d;
	void *h;

	use_device(1);
	expect("cuCtxCreate", cuCtxCreate(&c, NULL, 0, 0), 0);
	expect("cuMemAlloc", cuMemAlloc(&d, 1000), 0);
	expect("cuMemAllocHost", cuMemAllocHost(&h, 2000), 0);
	expect("cuCtxDestroy", cuCtxDestroy(c), 0);
	use_device(1);
	expect("cuMemAlloc", cuMemAlloc(&d, 3000), 0);
	expect("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset(1), 0);
	use_device(1);
	expect("cuMemAlloc", cuMemAlloc(&d, 4000), 0); /* LEAK_DRV_AFTER_RESET */
}

static void oom(void)
{
	CUdeviceptr d;

	use_device(0);
	expect("cuMemAlloc", cuMemAlloc(&d, 20000), CUDA_ERROR_OUT_OF_MEMORY); /* DRV_OOM */
	vmm_create(30000, 0, CUDA_ERROR_OUT_OF_MEMORY);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";

	if (!strcmp(mode, "basic"))
		basic();
	else if (!strcmp(mode, "ctx"))
		ctx();
	else if (!strcmp(mode, "oom"))
		oom();
	else
		return 2;
	return bad;
}
