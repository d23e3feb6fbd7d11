/*
 * sample.h - sampling mode's arithmetic (sample.c): which allocations to
 * record when MEMPROV_SAMPLE_BYTES=N is set.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#ifndef MEMPROV_SAMPLE_H
#define MEMPROV_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "sys.h"

/*
 * For an allocation of size bytes on this thread, with samples mean
 * bytes apart on average: 0 skip it, 1 record it, MP_RF_SAMPLED record it
 * flagged as a sample.
 */
unsigned mp_sample(size_t size, uint64_t mean) MP_HIDDEN;

/* -ln(u) for u uniform in (0, 1], without libm; exposed for tests. */
double mp_sample_neg_log(double u) MP_HIDDEN;

#endif /* MEMPROV_SAMPLE_H */
