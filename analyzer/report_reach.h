/*
 * report_reach.h - the reachability classes of the scan at exit (records
 * MP_REC_REACH and MP_REC_REACH_BLOCKS) as reports show them: totals per
 * class, sites per class, each site's classes, and why a trace has none.
 */
#ifndef MEMPROV_REPORT_REACH_H
#define MEMPROV_REPORT_REACH_H

#include <stdio.h>

#include "replay.h"
#include "sites.h"

struct reach_view {
	int shown;        /* the blocks at the report's instant carry classes */
	const char *why;  /* when not shown: why not, for people */
	uint64_t totals[MP_REACH_CLASS_COUNT][2];  /* blocks, bytes per class */
	struct site *sites[MP_REACH_CLASS_COUNT];   /* each class's sites, biggest first */
	size_t n[MP_REACH_CLASS_COUNT];
	struct site **by_key[MP_REACH_CLASS_COUNT]; /* the same, sorted by key */
};

/* When the scan ran, for people: "exit", or "death" (killed by a request
 * to end, hooks_signal.c: the scan ran as the signal came). */
const char *reach_when(const struct replay *r);

/* Why r has no classes, for people (no scan, or one that did not finish); NULL: it has. */
const char *reach_why_not(const struct replay *r);

/*
 * The classes of what is live at the end of r (at_end 0: the report's
 * instant is not the end of the trace, e.g. the end of a Python main
 * module, and classes are not shown). Release with reach_view_free.
 */
void reach_view_build(struct reach_view *v, const struct replay *r, struct symbolizer *sym,
		      enum site_mode mode, int at_end);
/* The totals and why only, no sites (stats): every block live at the end of r. */
void reach_view_totals(struct reach_view *v, const struct replay *r);
void reach_view_free(struct reach_view *v);

/* A site's blocks and bytes in each class (0 where it has none). */
void reach_site_counts(const struct reach_view *v, const struct site *s,
		       uint64_t out[MP_REACH_CLASS_COUNT][2]);
/* Sort sites definitely lost first, then indirectly, possibly, then as they were. */
void reach_sort_sites(const struct reach_view *v, struct site *sites, size_t n);

/* Text: the summary lines; then the sites of each class (top max, 0: all). */
void reach_text_summary(FILE *f, const struct reach_view *v, const struct replay *r);
void reach_text_sites(FILE *f, const struct reach_view *v, enum site_mode mode, size_t max);
/* One line's worth, no newline: "definitely lost 16 B (1 block), indirectly lost 0 B, ..." */
void reach_text_line(FILE *f, const struct reach_view *v);
/* A site's blocks by class: "1 definitely lost, 2 still reachable", or "none". */
void reach_site_text(FILE *f, const uint64_t c[MP_REACH_CLASS_COUNT][2]);

/* "definitely lost", "still reachable": a class as text. */
const char *reach_class_text(unsigned cls);
/* The i-th class in report order: definitely lost first, not classified last. */
unsigned reach_class_at(unsigned i);

/* JSON: {"definitely_lost":{"blocks":N,"bytes":N},...}: counts per class. */
void reach_json_counts(FILE *f, const uint64_t c[MP_REACH_CLASS_COUNT][2]);
/* JSON: "reach":{...} (the member, no comma); a site's ,"reach":{...}. */
void reach_json(FILE *f, const struct reach_view *v, const struct replay *r);
void reach_json_site(FILE *f, const struct reach_view *v, const struct site *s);

#endif /* MEMPROV_REPORT_REACH_H */
