/*
 * plugin_scenario.c - tests/bin/cuda-plugin MODE: a program without CUDA
 * of its own that opens tests/bin/libcudaplug.so (linked against the fake
 * runtime) with RTLD_LOCAL and allocates device memory through it. It
 * prints what it sees; under memprov the output must be the same.
 *
 *   reload     allocate 1,000 B; close the plugin (its runtime goes too),
 *              hold the runtime's old address range, open it again (the
 *              runtime lands elsewhere) and allocate 2,000 B
 *   reload-global  the same with the plugin opened RTLD_GLOBAL: a runtime
 *              in the global scope, unloaded and loaded elsewhere
 *   reload-wrap    reload, then 65,533 more dlopens and dlcloses before the
 *              second allocation (memprov's lookups are kept by generation:
 *              a 16-bit one came round to the stale runtime's again)
 *   failfree   allocate 1,000 B, then a cudaFree that the fake driver
 *              fails (FAKECUDA_FAIL_FREE): the block stays live
 *   failreset  allocate 1,000 B and 2,000 B, then a cudaDeviceReset that
 *              fails (FAKECUDA_FAIL_RESET): both stay live
 *   two        also open tests/bin/libcudaplug_b.so, the same plugin linked
 *              against a second copy of the runtime (libcudart_b.so), each
 *              RTLD_LOCAL; that runtime's device is 1: 1,000 B there, then
 *              2,000 B through the first plugin, on device 0
 *   driver     no plugin: open the driver (libcuda.so.1) with dlopen, look
 *              up cuMemAlloc_v2 with dlsym, allocate 100 B, close it, hold
 *              its old range; six times (memprov's four wrapper slots per
 *              driver function must be reused as drivers go)
 *
 * Each mode first asks dlsym(RTLD_DEFAULT, "cudaMalloc"): no runtime is
 * in the global scope, so "none", with or without memprov (and again
 * once the plugin is open RTLD_LOCAL).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef int (*alloc_fn)(size_t, void **);
typedef int (*one_fn)(void *);
typedef int (*none_fn)(void);
typedef int (*int_fn)(int);

static int global; /* open the plugin RTLD_GLOBAL */

static void *load(void)
{
	void *h = dlopen("libcudaplug.so", RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));

	if (!h) {
		fprintf(stderr, "cuda-plugin: %s\n", dlerror());
		exit(2);
	}
	return h;
}

static void probe(const char *when)
{
	printf("%s: cudaMalloc in the global scope: %s\n", when,
	       dlsym(RTLD_DEFAULT, "cudaMalloc") ? "found" : "none");
}

static int alloc(void *h, size_t n, void **p)
{
	int r = ((alloc_fn)dlsym(h, "plug_alloc"))(n, p);

	printf("cudaMalloc(%zu) = %d\n", n, r);
	return r;
}

/* The driver opened, used and closed, six times over, each time elsewhere. */
static int driver_reopen(void)
{
	typedef int (*init_fn)(unsigned);
	typedef int (*retain_fn)(void **, int);
	typedef int (*set_fn)(void *);
	typedef int (*alloc_fn_drv)(unsigned long long *, size_t);

	for (int i = 0; i < 6; i++) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), *ctx = NULL, *base = NULL;
		unsigned long long p = 0;
		Dl_info info;
		alloc_fn_drv alloc_drv;

		if (!h) {
			fprintf(stderr, "cuda-plugin: %s\n", dlerror());
			return 2;
		}
		alloc_drv = (alloc_fn_drv)dlsym(h, "cuMemAlloc_v2");
		((init_fn)dlsym(h, "cuInit"))(0);
		((retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain"))(&ctx, 0);
		((set_fn)dlsym(h, "cuCtxSetCurrent"))(ctx);
		printf("cuMemAlloc_v2(100) = %d\n", alloc_drv(&p, 100));
		if (dladdr(dlsym(h, "cuInit"), &info))
			base = info.dli_fbase;
		dlclose(h);
		if (base && mmap(base, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
				 MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED)
			perror("cuda-plugin: mmap");
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "reload";
	void *h, *p = NULL, *q = NULL;

	global = !strcmp(mode, "reload-global");
	if (!strcmp(mode, "driver"))
		return driver_reopen();
	if (!strcmp(mode, "two")) {
		void *b = dlopen("libcudaplug_b.so", RTLD_NOW | RTLD_LOCAL);

		if (!b) {
			fprintf(stderr, "cuda-plugin: %s\n", dlerror());
			return 2;
		}
		h = load();
		printf("cudaSetDevice(1) = %d\n", ((int_fn)dlsym(b, "plug_set_device"))(1));
		alloc(b, 1000, &p);
		alloc(h, 2000, &q);
		return 0;
	}
	probe("start");
	h = load();
	if (!global) /* a lookup in the global scope that finds the runtime pins it (glibc) */
		probe("plugin open");
	alloc(h, 1000, &p);
	if (!strncmp(mode, "reload", 6)) {
		Dl_info info;
		void *rt = dlsym(h, "cudaMalloc"), *base = NULL;

		if (rt && dladdr(rt, &info))
			base = info.dli_fbase;
		dlclose(h);
		/* where the runtime was, nothing else may load now */
		if (base && mmap(base, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
				 MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED)
			perror("cuda-plugin: mmap");
		h = load();
		if (!strcmp(mode, "reload-wrap")) {
			for (int i = 0; i < 32766; i++)
				dlclose(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD));
			dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
		}
		alloc(h, 2000, &q);
		return 0;
	}
	if (!strcmp(mode, "failfree")) {
		setenv("FAKECUDA_FAIL_FREE", "1", 1);
		printf("cudaFree = %d\n", ((one_fn)dlsym(h, "plug_free"))(p));
		return 0;
	}
	alloc(h, 2000, &q);
	setenv("FAKECUDA_FAIL_RESET", "1", 1);
	printf("cudaDeviceReset = %d\n", ((none_fn)dlsym(h, "plug_reset"))());
	return 0;
}
