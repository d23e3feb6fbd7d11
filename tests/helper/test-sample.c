/*
 * test-sample.c - sampling mode's arithmetic (interpose/sample.c), linked
 * alone (t1080):
 *  - mp_sample_neg_log(u) against libm's -log(u) over (0, 1]: error below
 *    1e-5 everywhere;
 *  - for blocks of size s with a mean of N bytes between samples, the
 *    share recorded is 1 - exp(-s/N) within 5 standard deviations, over
 *    400,000 draws each, and blocks of N bytes or more are always
 *    recorded, unflagged.
 * Prints one line per check; exits 1 on a failure.
 */
#include <math.h>
#include <stdio.h>

#include "../../include/memprov_trace.h"
#include "../../interpose/sample.h"

int main(void)
{
	static const size_t sizes[] = { 16, 100, 1000, 4000, 8000 };
	const uint64_t mean = 8192;
	const int draws = 400000;
	double worst = 0;
	int bad = 0, i, k;

	for (i = 1; i <= 1000000; i++) {
		double u = i / 1000000.0, e = fabs(mp_sample_neg_log(u) + log(u));

		if (e > worst)
			worst = e;
	}
	printf("neg_log: worst error %.2e over 1e6 points in (0, 1]%s\n", worst,
	       worst < 1e-5 ? "" : "  FAIL");
	bad |= worst >= 1e-5;
	for (k = 0; k < (int)(sizeof(sizes) / sizeof(sizes[0])); k++) {
		size_t s = sizes[k];
		double p = 1 - exp(-(double)s / (double)mean), sd = sqrt(p * (1 - p) / draws);
		int rec = 0, flagged = 0;

		for (i = 0; i < draws; i++) {
			unsigned f = mp_sample(s, mean);

			rec += f != 0;
			flagged += f == MP_RF_SAMPLED;
		}
		printf("size %5zu: recorded %.5f, expected %.5f +- %.5f%s\n", s,
		       (double)rec / draws, p, 5 * sd,
		       fabs((double)rec / draws - p) <= 5 * sd && flagged == rec ? "" : "  FAIL");
		bad |= fabs((double)rec / draws - p) > 5 * sd || flagged != rec;
	}
	for (k = 0, i = 0; i < 1000; i++)
		k += mp_sample(mean + (size_t)i, mean) != 1;
	printf("blocks of the mean or more: %d of 1000 not recorded as plain blocks%s\n", k,
	       k ? "  FAIL" : "");
	bad |= k != 0;
	return bad;
}
