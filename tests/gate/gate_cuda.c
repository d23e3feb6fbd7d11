/*
 * gate_cuda.c - a CUDA program that frees everything it allocates (device,
 * pinned, managed, stream-ordered), for the CI gate tests: the gate must
 * pass it with no options. With "leak", one 4096 B device block stays
 * (LEAK-DEVICE). Built against the fake runtime, shared and static.
 */
#include <cuda_runtime_api.h>
#include <string.h>

int main(int argc, char **argv)
{
	void *d, *h, *m, *a, *l;
	cudaStream_t s;
	int bad = 0;

	bad |= cudaMalloc(&d, 1 << 20) != cudaSuccess;
	bad |= cudaMallocHost(&h, 65536) != cudaSuccess;
	bad |= cudaMallocManaged(&m, 8192, cudaMemAttachGlobal) != cudaSuccess;
	bad |= cudaStreamCreate(&s) != cudaSuccess;
	bad |= cudaMallocAsync(&a, 12288, s) != cudaSuccess;
	if (argc > 1 && !strcmp(argv[1], "leak"))
		bad |= cudaMalloc(&l, 4096) != cudaSuccess; /* LEAK-DEVICE */
	bad |= cudaFreeAsync(a, s) != cudaSuccess;
	bad |= cudaDeviceSynchronize() != cudaSuccess;
	bad |= cudaStreamDestroy(s) != cudaSuccess;
	bad |= cudaFree(m) != cudaSuccess;
	bad |= cudaFreeHost(h) != cudaSuccess;
	bad |= cudaFree(d) != cudaSuccess;
	return bad;
}
