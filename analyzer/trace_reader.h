/*
 * trace_reader.h - read a memprov trace (format version 1 or 2) as one
 * stream of records in time order, whatever state the file is in.
 *
 * The reader never maps the whole file: it reads chunk heads once, then
 * keeps one chunk per thread in memory and merges the threads' records by
 * timestamp with a heap. Memory is O(threads * chunk_size + chunks).
 * Records come out in the structs of memprov_trace.h whatever the version
 * (version 2's compact records are decoded by memprov_codec.h). Corrupt
 * records end their chunk with a warning; a trace cut by SIGKILL or still
 * being written is read up to what is complete.
 */
#ifndef MEMPROV_TRACE_READER_H
#define MEMPROV_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "memprov_codec.h"
#include "memprov_trace.h"

struct trace_chunk {
	uint64_t index;      /* chunk number in the file (v2: in file order) */
	uint64_t off;        /* file offset of its head */
	uint64_t first_ts;   /* head.first_ts: v2's timestamp base */
	uint32_t seq;
	uint32_t used;       /* snapshot of head.used, clamped to the file */
	int cut;             /* the file ends inside this chunk's records */
};

struct trace_thread {
	uint32_t serial;
	uint32_t tid;
	struct trace_chunk *chunks;
	size_t n_chunks, alloc_chunks;
	size_t cur;          /* index of the chunk in buf */
	unsigned char *buf;  /* records of chunk cur */
	uint32_t len;        /* bytes valid in buf */
	struct mp_dec dec;   /* where the next record of buf starts */
	void *dbuf;          /* v2: the current record, decoded */
	size_t dbuf_len;
	uint32_t rec_pos;    /* where the current record starts in buf */
	const struct mp_rec_head *rec; /* current record, NULL when done */
};

enum trace_flags {
	TRACE_QUIET = 1 << 0, /* no warnings on stderr for damage */
};

struct trace {
	char *path;
	int fd;
	unsigned flags;
	struct mp_file_header hdr;
	uint64_t file_size;
	uint64_t n_chunks;       /* chunks read from the file */
	uint64_t block_size;     /* v2: the unit of chunks and next_chunk */
	struct trace_thread *threads;
	size_t n_threads;
	size_t *heap;            /* thread indices ordered by current record ts */
	size_t heap_len;
	struct trace_thread *last; /* thread of the record returned last */
	int damaged;             /* corrupt records or chunk heads were skipped */
	int cut;                 /* the file ends before the trace does */
	uint64_t cut_at;
	uint64_t records;        /* records returned so far */
	uint64_t skipped;        /* records of unknown types skipped */
	uint64_t first_ts, last_ts;
};

/*
 * Open path and index its chunks. Returns 0, or -1 after printing why
 * (cannot open, bad magic, newer version, bad header).
 */
int trace_open(struct trace *t, const char *path, unsigned flags);

/*
 * The next record in time order, or NULL at the end. The pointer stays
 * valid until the next call. Records are checked: their size covers their
 * type's fields and inner lengths; unknown types are skipped.
 */
const struct mp_rec_head *trace_next(struct trace *t);

/*
 * Timestamp of the last record, without reading the trace through: the
 * latest among the valid records of each thread's last chunk (0: none).
 * Leaves the stream where it is.
 */
uint64_t trace_end_ts(struct trace *t);

/* When the trace started: the header's start time, else its first record. */
uint64_t trace_start_ts(const struct trace *t);
/* ns from the start of the trace to ts (0 for ts before it). */
uint64_t trace_rel(const struct trace *t, uint64_t ts);

/* Serial of the thread that wrote the record trace_next returned last. */
uint32_t trace_last_serial(const struct trace *t);
/* File offset of the record trace_next returned last. */
uint64_t trace_last_offset(const struct trace *t);

void trace_close(struct trace *t);

#endif /* MEMPROV_TRACE_READER_H */
