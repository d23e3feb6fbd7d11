// nvcc_prog.cu - a small program built by the real nvcc (static runtime by
// default, and with -cudart shared) for the t3* tests: it allocates device
// and pinned memory, prints every status and exits 7 when cudaMalloc
// failed (no GPU here: 35, cudaErrorInsufficientDriver), 0 otherwise.
// Leaves 1 MiB of device memory and 4096 pinned bytes allocated.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void touch(char *p) { p[threadIdx.x] = 1; }

int main()
{
	void *d = nullptr, *d2 = nullptr, *h = nullptr;
	cudaError_t e1 = cudaMalloc(&d, 1 << 20); // NVCC_DEVICE
	cudaError_t e2 = cudaHostAlloc(&h, 4096, cudaHostAllocDefault); // NVCC_PINNED
	cudaError_t e3 = cudaMalloc(&d2, 2 << 20);
	cudaError_t e4 = cudaFree(d2);
	if (e1 == cudaSuccess) {
		touch<<<1, 32>>>((char *)d);
		cudaDeviceSynchronize();
	}
	printf("cudaMalloc %d\ncudaHostAlloc %d\ncudaMalloc %d\ncudaFree %d\n", (int)e1, (int)e2,
	       (int)e3, (int)e4);
	return e1 == cudaSuccess ? 0 : 7;
}
