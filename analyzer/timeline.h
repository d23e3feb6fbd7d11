/*
 * timeline.h - the gap check shared by `memprov timeline` and the HTML
 * report: resident memory (RSS samples) against tracked host memory.
 */
#ifndef MEMPROV_TIMELINE_H
#define MEMPROV_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "growth.h"

#define TIMELINE_MIN_GAP (1024 * 1024)

struct tl_gap {
	int known;               /* at least two RSS samples */
	int flagged;             /* RSS rose >= min_gap more than tracked, and that is
				  * at least half of the RSS rise */
	int from_mark;           /* measured from the first sample after the first mark */
	uint64_t ts0, ts1, rel0, rel1;
	uint64_t rss0, rss1, host0, host1;
	int64_t rss_growth, host_growth, gap;
};

void timeline_gap(const struct growth *g, uint64_t min_gap, struct tl_gap *gap);
/* Fill rel0/rel1 (ns since the trace started). */
void timeline_gap_rel(const struct trace *t, struct tl_gap *gap);
void timeline_gap_json(FILE *f, const struct tl_gap *gap, uint64_t min_gap);

#endif /* MEMPROV_TIMELINE_H */
