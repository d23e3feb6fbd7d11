/*
 * merge.h - the reduce step of a job of many processes: per-process
 * summaries (what `memprov leaks --json`, `growth --json` or `peak --json`
 * writes for one trace) merged into one report. Sites merge by their key (kind, API and
 * symbolized frames, no addresses), each with the processes that hold it,
 * worst first. `memprov leaks DIR` and `growth DIR` reduce the summaries
 * their workers wrote (multi.c); `memprov merge` reduces summaries read
 * from files, written on any host; both print through here, so the two
 * give the same report.
 */
#ifndef MEMPROV_MERGE_H
#define MEMPROV_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json_read.h"
#include "memprov_trace.h"

enum merge_kind {
	MERGE_NONE = 0,   /* no summary yet */
	MERGE_LEAKS,      /* memprov.leaks/1: live at each process's end, its own */
	MERGE_GROWTH,     /* memprov.growth/1: each process's growing sites */
	MERGE_PEAK,       /* memprov.peak/1: live at each process's peak */
};

struct merge_proc {
	char *trace, *host, *command, *ending, *unit;
	int32_t pid, ppid;
	int exec;                /* an image replaced by exec: not a process of its own */
	uint64_t blocks, bytes;  /* leaks: live at its end, its own; growth: at the windows'
				    ends; peak: at its peak, the program's */
	uint64_t peak;           /* peak: live bytes of every kind at its peak */
	int64_t growth;          /* growth: over its window, all suspects */
	uint64_t inherited;      /* leaks: bytes inherited from its parent and held */
	uint64_t cls[MP_REACH_CLASS_COUNT][2];  /* leaks: its sites' blocks and bytes by class */
	size_t n_sites;
};

struct merge_share {
	size_t proc;
	uint64_t blocks, bytes;
	int64_t growth;
	double slope, confidence;
	uint64_t cls[MP_REACH_CLASS_COUNT][2];  /* leaks: blocks and bytes by the scan's class */
};

struct merge_site;

struct merge {
	enum merge_kind kind;
	struct merge_proc *procs;
	size_t n_procs, alloc_procs;
	struct merge_site *sites;
	FILE *per_process;       /* non-NULL: each summary's own sites listed apart here */
	size_t duplicates;       /* summaries given again (same pid, trace and host): skipped */
};

/*
 * Add one summary (a parsed `leaks --json` or `growth --json` object);
 * where names it in errors (a file name). Returns 0, or -1 after the
 * error (not such a summary, another kind than those before it, a member
 * missing).
 */
int merge_add(struct merge *m, const struct jval *doc, const char *where);

/* The merged report, text or one JSON object, on f. */
void merge_print(struct merge *m, FILE *f, size_t n_traces);
void merge_print_json(struct merge *m, FILE *f, size_t n_traces);

void merge_release(struct merge *m);

/* Read a file of summaries (one JSON object, or one per line) into m;
 * *count grows by the summaries read. */
int merge_read_file(struct merge *m, const char *path, size_t *count);

#endif /* MEMPROV_MERGE_H */
