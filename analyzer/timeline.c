/*
 * timeline.c - the gap check that `memprov timeline` and the HTML report
 * share: resident memory (the RSS samples growth_collect paired with
 * tracked host memory) against tracked host memory, from the first sample
 * (or the first one after the first mark) to the last one before the end
 * of the Python main module. A gap is allocator retention or memory
 * memprov does not see, not a leak at any site.
 */
#include <inttypes.h>
#include <string.h>

#include "timeline.h"

void timeline_gap(const struct growth *g, uint64_t min_gap, struct tl_gap *gap)
{
	const struct gpair *a = g->rss_from_mark.ts ? &g->rss_from_mark : &g->rss_first;
	const struct gpair *b = &g->rss_last;

	memset(gap, 0, sizeof(*gap));
	if (g->rss_samples < 2 || b->ts <= a->ts)
		return;
	gap->known = 1;
	/*
	 * Resident anonymous memory where the samples have it: the pages of
	 * files (the libraries' code and data as loaded: numpy's import
	 * added 9.6 MiB of them to a clean `import json, numpy`, which the
	 * whole RSS called a gap) are no allocator's, whatever the program
	 * does; freed memory an allocator keeps, and memory memprov does not
	 * track, are anonymous.
	 */
	gap->anon = !g->rss_no_anon;
	gap->from_mark = a == &g->rss_from_mark;
	gap->ts0 = a->ts;
	gap->ts1 = b->ts;
	gap->rss0 = a->rss;
	gap->rss1 = b->rss;
	gap->anon0 = a->anon;
	gap->anon1 = b->anon;
	gap->host0 = a->host;
	gap->host1 = b->host;
	gap->rss_growth = (int64_t)(b->rss - a->rss);
	gap->anon_growth = (int64_t)(b->anon - a->anon);
	gap->host_growth = (int64_t)(b->host - a->host);
	gap->rise = gap->anon ? gap->anon_growth : gap->rss_growth;
	/* wrapping, not undefined, on absurd figures from a damaged trace */
	gap->gap = (int64_t)((uint64_t)gap->rise - (uint64_t)gap->host_growth);
	gap->flagged = gap->rise > 0 && gap->gap >= (int64_t)min_gap &&
		       gap->gap >= gap->rise / 2 + (gap->rise & 1);
	gap->rel0 = trace_rel(g->r.trace, gap->ts0);
	gap->rel1 = trace_rel(g->r.trace, gap->ts1);
}

void timeline_gap_json(FILE *f, const struct tl_gap *gap, uint64_t min_gap)
{
	if (!gap->known) {
		fprintf(f, "null");
		return;
	}
	fprintf(f, "{\"flagged\":%s,\"from\":\"%s\",\"from_ns\":%" PRIu64 ",\"to_ns\":%" PRIu64
		",\"rss_start\":%" PRIu64 ",\"rss_end\":%" PRIu64 ",\"tracked_start\":%" PRIu64
		",\"tracked_end\":%" PRIu64 ",\"rss_growth\":%" PRId64 ",\"tracked_growth\":%" PRId64
		",\"gap_bytes\":%" PRId64 ",\"min_gap\":%" PRIu64 ",\"basis\":\"%s\"",
		gap->flagged ? "true" : "false", gap->from_mark ? "first-mark" : "first-sample",
		gap->rel0, gap->rel1, gap->rss0, gap->rss1, gap->host0, gap->host1, gap->rss_growth,
		gap->host_growth, gap->gap, min_gap, gap->anon ? "anonymous" : "resident");
	if (gap->anon)
		fprintf(f, ",\"anon_start\":%" PRIu64 ",\"anon_end\":%" PRIu64 ",\"anon_growth\":%" PRId64 "}",
			gap->anon0, gap->anon1, gap->anon_growth);
	else
		fprintf(f, ",\"anon_start\":null,\"anon_end\":null,\"anon_growth\":null}");
}
