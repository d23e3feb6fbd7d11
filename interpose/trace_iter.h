/*
 * trace_iter.h - read a trace file back inside libmemprov.so (trace_iter.c),
 * record by record, with no allocation: for code that needs what the
 * process itself recorded (the reachability scan at exit). Versions 1 and
 * 2; records come decoded, in the structs of memprov_trace.h.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 *
 * Use:
 *
 *	static int one(void *arg, uint32_t serial, const struct mp_rec_head *h)
 *	{
 *		if (h->type == MP_REC_ALLOC) ...     // (const struct mp_rec_alloc *)h
 *		return 0;                            // nonzero stops the walk
 *	}
 *	buf = (memory of MP_ITER_BUF bytes the caller mapped itself);
 *	r = mp_trace_iter(fd, buf, MP_ITER_BUF, one, arg);
 *
 * fd: the trace, read with pread; or, where the caller passes a view,
 * through memory the view names (the writer's own mappings of a short
 * trace: a page fault maps sixteen pages back from the page cache, where
 * pread faulted in a buffer page for each four kilobytes). Records come chunk by
 * chunk in file order: each thread's records in its own order, threads
 * interleaved, so a caller that needs "the latest event for an address"
 * compares timestamps (h->ts). A record pointer is valid during the call
 * only. A corrupt record ends its chunk; chunks reserved but never written
 * and chunks past the end of the file are skipped.
 */
#ifndef MEMPROV_TRACE_ITER_H
#define MEMPROV_TRACE_ITER_H

#include <stddef.h>
#include <stdint.h>

#include "../include/memprov_trace.h"
#include "sys.h"

/* Buffer mp_trace_iter needs: the file header, the largest chunk memprov
 * writes, one decoded record. */
#define MP_ITER_BUF (MP_HEADER_SIZE + MP_DEFAULT_CHUNK_SIZE + MP_MAX_RECORD + 64)

typedef int (*mp_iter_fn)(void *arg, uint32_t serial, const struct mp_rec_head *rec);

/*
 * The common records, for a caller that wants them without their structs:
 * a malloc or free of the heap in the compact encoding of version 2 (no
 * flags, the default function and kind), handed over in batches of up to
 * MP_ITER_BATCH, in the thread's order, between the other records of the
 * chunk where they lie. size is 0 for a free; the stack is not given.
 */
#define MP_ITER_BATCH 32

struct mp_iter_heap {
	uint64_t ts, addr, size;
	uint32_t alloc;  /* 1: MP_REC_ALLOC (malloc), 0: MP_REC_FREE (free) */
	uint32_t pad;
};

typedef int (*mp_iter_heap_fn)(void *arg, uint32_t serial, const struct mp_iter_heap *ev,
			       size_t n);

/* Bytes [off, off + len) of the trace, readable in memory; NULL: pread them. */
typedef const void *(*mp_iter_view)(uint64_t off, size_t len);

/*
 * Horizons, for a caller that forgets what no later record can change:
 * before each chunk's records, now is a time before which no record still
 * to come is stamped (the earliest start of the chunks after it), or 0
 * when that is not known. ts and off are the caller's memory for cap
 * chunks (a first pass reads every chunk's head); with more chunks, or
 * when the trace changes between the passes, now stays 0. Only for a
 * trace no thread writes while it is read.
 */
struct mp_iter_horizon {
	uint64_t *ts, *off;
	uint64_t cap, n;
	uint64_t now;
	uint64_t from;  /* the same bound for this chunk's records too (its start) */
};

/*
 * Call fn for every record of the trace open on fd. Returns 0 once every
 * record was given, fn's return when it was nonzero, or -1 when fd is not
 * a trace this memprov reads (or len < MP_ITER_BUF).
 */
int mp_trace_iter(int fd, void *buf, size_t len, mp_iter_fn fn, void *arg) MP_HIDDEN;
/* The same, for the records stamped before until in the chunks that
 * start before byte until_off only (later chunks are not read), with
 * horizons when hz is not NULL, read through view where it says; the
 * compact heap records through heap when it is not NULL (the scan at
 * exit of sqlite3's 8.8 million records: 225 ms against 350 one by one,
 * medians of 6 runs). */
int mp_trace_iter_before(int fd, mp_iter_view view, void *buf, size_t len, uint64_t until,
			 uint64_t until_off, struct mp_iter_horizon *hz, mp_iter_fn fn,
			 mp_iter_heap_fn heap, void *arg) MP_HIDDEN;

/*
 * The FORK record a parent wrote for a child, found from the child: the
 * first record of thread serial thread (the one that forked) stamped at
 * or after after (its atfork handler's instant: that thread writes
 * nothing in between; after_off: the file's extent then). 0 with its
 * timestamp in *ts when it names child_pid and fork_serial; -1 when not
 * (not written yet, or no trace).
 */
int mp_trace_fork_ts(int fd, void *buf, size_t len, uint32_t thread, uint64_t after,
		     uint64_t after_off, int32_t child_pid, uint32_t fork_serial,
		     uint64_t *ts) MP_HIDDEN;

#endif /* MEMPROV_TRACE_ITER_H */
