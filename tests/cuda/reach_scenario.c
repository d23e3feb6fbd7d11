/*
 * reach_scenario.c - CUDA blocks with known reachability at exit, for
 * t3300: device, managed and pinned blocks whose address a global keeps
 * (still reachable), whose address is dropped (definitely lost), and a
 * device block whose address only a lost heap block holds (indirectly
 * lost). Lines carry REACH_* tags the test looks up. Exits 0 when every
 * call succeeded.
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

struct holder {
	void *dev;
	char pad[56];
};

static void *kept_dev, *kept_pinned, *kept_managed;
static int bad;

/* Overwrite the dead stack below the caller: no stale copy of a pointer. */
static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[64 << 10];

	memset((char *)buf, 0, sizeof(buf));
}

static __attribute__((noinline)) void drop(void)
{
	void *d = NULL, *h = NULL, *m = NULL;
	struct holder *x = malloc(sizeof(*x)); /* REACH_HOLDER */

	bad |= cudaMalloc(&d, 1000) != 0;            /* REACH_DEV_LOST */
	bad |= cudaHostAlloc(&h, 3000, 0) != 0;      /* REACH_PIN_LOST */
	bad |= cudaMallocManaged(&m, 6000, 1) != 0;  /* REACH_MAN_LOST */
	bad |= cudaMalloc(&x->dev, 5000) != 0;       /* REACH_DEV_INDIRECT */
}

int main(void)
{
	bad |= cudaMalloc(&kept_dev, 2000) != 0;              /* REACH_DEV_KEPT */
	bad |= cudaHostAlloc(&kept_pinned, 4000, 0) != 0;     /* REACH_PIN_KEPT */
	bad |= cudaMallocManaged(&kept_managed, 7000, 1) != 0; /* REACH_MAN_KEPT */
	drop();
	scrub();
	return bad;
}
