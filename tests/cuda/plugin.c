/*
 * plugin.c - tests/bin/libcudaplug.so: a library linked against the
 * (fake) CUDA runtime, which tests/cuda/plugin_scenario.c opens with
 * RTLD_LOCAL, as Python opens an extension module: its runtime is then
 * in no global scope, and memprov's runtime hooks must still reach it.
 */
#include <cuda_runtime_api.h>
#include <stddef.h>

int plug_alloc(size_t n, void **out);
int plug_free(void *p);
int plug_reset(void);
int plug_set_device(int d);

int plug_alloc(size_t n, void **out)
{
	return (int)cudaMalloc(out, n);
}

int plug_free(void *p)
{
	return (int)cudaFree(p);
}

int plug_reset(void)
{
	return (int)cudaDeviceReset();
}

int plug_set_device(int d)
{
	return (int)cudaSetDevice(d);
}
