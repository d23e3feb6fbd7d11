/*
 * timeline.h - the gap check shared by `memprov timeline` and the HTML
 * report (timeline.c): resident memory (RSS samples) against tracked host
 * memory.
 */
#ifndef MEMPROV_TIMELINE_H
#define MEMPROV_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "growth.h"

#define TIMELINE_MIN_GAP (1024 * 1024)

struct tl_gap {
	int known;               /* at least two RSS samples */
	int anon;                /* every sample has resident anonymous memory: the
				  * gap is measured on it, not on the whole RSS */
	int flagged;             /* the measured memory rose >= min_gap more than
				  * tracked, and that is at least half of its rise */
	int from_mark;           /* measured from the first sample after the first mark */
	uint64_t ts0, ts1, rel0, rel1;  /* absolute, and ns since the trace started */
	uint64_t rss0, rss1, anon0, anon1, host0, host1;
	int64_t rss_growth, anon_growth, host_growth;
	int64_t rise;            /* what the gap is measured on: anon_growth or rss_growth */
	int64_t gap;             /* rise less host_growth */
};

/* The gap over the collected trace g (its RSS pairs): figures and verdict. */
void timeline_gap(const struct growth *g, uint64_t min_gap, struct tl_gap *gap);
/* The gap as a JSON object ("null" when fewer than two RSS samples). */
void timeline_gap_json(FILE *f, const struct tl_gap *gap, uint64_t min_gap);

#endif /* MEMPROV_TIMELINE_H */
