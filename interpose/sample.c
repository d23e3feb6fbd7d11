/*
 * sample.c - sampling mode (MEMPROV_SAMPLE_BYTES=N): the bytes a thread
 * allocates are cut at points N bytes apart on average, at exponentially
 * distributed intervals (a Poisson process over bytes, as tcmalloc does);
 * an allocation that contains a point is recorded with MP_RF_SAMPLED and
 * its real size, the others are not recorded at all (no stack, no
 * record). A block of size s < N is thus recorded with probability
 * 1 - exp(-s/N); blocks of N bytes or more are always recorded,
 * unflagged. Frees are all recorded (record.c).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#include "../include/memprov_trace.h"
#include "sample.h"

static __thread uint64_t rng __attribute__((tls_model("initial-exec")));
static __thread uint64_t left __attribute__((tls_model("initial-exec")));

static uint64_t rng_next(void)
{
	uint64_t x = rng;

	if (MP_UNLIKELY(!x))
		x = mp_now() ^ (uint64_t)(uintptr_t)&rng ^ 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng = x;
	return x;
}

/* -ln(u) for u in (0, 1] (error < 1e-5): exponent and a series in t. */
double mp_sample_neg_log(double u)
{
	union { double d; uint64_t u; } v;
	double m, t, t2;
	int e;

	v.d = u;
	e = (int)((v.u >> 52) & 0x7ff) - 1023;
	v.u = (v.u & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* [1, 2) */
	m = v.d;
	t = (m - 1) / (m + 1);
	t2 = t * t;
	return -(e * 0.6931471805599453 +
		 2 * t * (1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 / 9)))));
}

static uint64_t next_gap(uint64_t mean)
{
	double u = (double)((rng_next() >> 11) + 1) * (1.0 / 9007199254740992.0);
	double g = mp_sample_neg_log(u) * (double)mean;

	return g < 1 ? 1 : g > 1e18 ? (uint64_t)1e18 : (uint64_t)g;
}

unsigned mp_sample(size_t size, uint64_t mean)
{
	if (size >= mean)
		return 1;
	if (MP_UNLIKELY(!left))
		left = next_gap(mean);
	if (left > size) {
		left -= size;
		return 0;
	}
	left = next_gap(mean);
	return MP_RF_SAMPLED;
}
