/*
 * trace_file.h - the trace file (trace_file.c): creation, header, the
 * chunks handed to writers, and how tracing ends.
 *
 * Layer: 2 storage and walk (docs/ARCHITECTURE.md): calls config and sys.
 */
#ifndef MEMPROV_TRACE_FILE_H
#define MEMPROV_TRACE_FILE_H

#include <stdint.h>

#include "../include/memprov_trace.h"
#include "sys.h"

/* 1 while the trace is open and recording; cleared for good on failure. */
extern volatile int mp_tracing MP_HIDDEN;
/* 1 while the file is open and not stopped (writers test it first). */
extern int mp_trace_ok MP_HIDDEN;
/* The file's header, mapped; NULL before the trace is open. */
extern struct mp_file_header *mp_header MP_HIDDEN;

/* Create the trace file (MEMPROV_OUTPUT) and its header. 0, or -1 (warned). */
int mp_trace_open(int forked) MP_HIDDEN;
/* Before the process changes its root: the trace's directory kept open (trace_file.c). */
void mp_trace_keep_dir(void) MP_HIDDEN;
/* The program's argv as its constructors get it: the command line is read
 * there, not from /proc/self/cmdline (strings not laid out as the kernel
 * does: ignored). Before mp_trace_open. */
void mp_trace_set_args(int argc, char **argv) MP_HIDDEN;
/*
 * The executable's path for the header, once known: the module scan's
 * (the file mapped, as /proc/self/exe names it); NULL or "": read
 * /proc/self/exe. The first call sets it; a forked child has its
 * parent's from the start.
 */
void mp_trace_set_exe(const char *path) MP_HIDDEN;
/* Header flags (MP_HF_*) learned after the trace was made: kept for the
 * traces of forked children too. */
void mp_trace_add_flags(uint32_t flags) MP_HIDDEN;
/* The state the header shows (exit, exec, running again after a failed exec). */
void mp_trace_set_state(enum mp_state st, int32_t status) MP_HIDDEN;
/* The process is being killed by sig (its default action is about to
 * run): the header says so. Async-signal-safe. */
void mp_trace_killed(int sig) MP_HIDDEN;
/* Stop tracing for good: mark the header, warn once. */
void mp_stop(enum mp_stop why, const char *msg) MP_HIDDEN;
/* A hook call that found memprov busy (guard REC): counted in the header. */
void mp_count_skipped(enum mp_func fn) MP_HIDDEN;
/* An allocation recorded without native frames: too little stack for the walk. */
void mp_count_no_room(void) MP_HIDDEN;
/*
 * A chunk never used before, mapped and present, for a writer to fill: want
 * blocks of MP_BLOCK_SIZE or fewer, never fewer than min; its length in
 * *bytes, and in *seg the segment it lies in (for mp_chunk_retire). NULL
 * when tracing stopped.
 */
struct mp_chunk_head *mp_chunk_reserve(unsigned want, unsigned min, uint32_t *bytes,
				       uint32_t *seg) MP_HIDDEN;
/*
 * Bytes [off, off + len) of the trace in this process's own mappings of
 * it, for reading back at exit; NULL where they are not mapped, lie past
 * the space the file was given, past the first MiB, or in a chunk whose
 * pages were released (those are read with pread: read through the
 * mappings, their pages would come back into the process's resident
 * memory).
 */
const void *mp_trace_view(uint64_t off, size_t len) MP_HIDDEN;
/* The writer is done with chunk c (bytes long): its pages leave the
 * address space, its data stays in the file. */
void mp_chunk_release(void *c, uint32_t bytes) MP_HIDDEN;
/* Chunk c is written again after mp_chunk_release. */
void mp_chunk_present(void *c, uint32_t bytes) MP_HIDDEN;
/* Chunks [c, c + bytes) of segment seg are finished for good (never
 * written or presented again): released, and the segment unmapped once
 * all of it is. */
void mp_chunk_retire(void *c, uint32_t bytes, uint32_t seg) MP_HIDDEN;
/* Bytes of the trace now mapped and present in the process (the header
 * page and the chunks in use): what the RSS samples leave out. */
uint64_t mp_trace_resident(void) MP_HIDDEN;
/* The file's descriptor, checked, to read the trace back; -1 when not open. */
int mp_trace_fd(void) MP_HIDDEN;
/*
 * In a forked child: stop writing the parent's file, but keep it open to
 * read back (close-on-exec) as the newest ancestor, with fork_ts, the
 * instant before the fork: the child's memory holds what the parent's
 * trace has live before it (and what the parent itself inherited). thread
 * is the serial of the parent's thread that forked, fork_serial the
 * fork's (they find the parent's FORK record: trace_iter.h).
 */
void mp_trace_fork_child(uint64_t fork_ts, uint64_t fork_extent, uint32_t thread,
			 uint32_t fork_serial) MP_HIDDEN;
/* Bytes of the file handed out so far (header and every chunk reserved):
 * taken just before a fork, no record of the child's time lies past it. */
uint64_t mp_trace_extent(void) MP_HIDDEN;

#define MP_MAX_ANCESTORS 8 /* ancestors' traces kept open, newest ones */

/* A trace the process inherited memory from: read it before until_ts,
 * in its first until_off bytes; or up to the FORK record that thread
 * wrote for child_pid's fork fork_serial, once found. */
struct mp_ancestor {
	int fd;
	uint64_t until_ts, until_off;
	uint32_t thread, fork_serial;
	int32_t child_pid;
};

/* The ancestors' traces still open, oldest first, at most max: how many. */
int mp_trace_ancestors(struct mp_ancestor *out, int max) MP_HIDDEN;
/* How many forks since the exec this process's memory comes through: more
 * than mp_trace_ancestors says when a trace was let go, closed or stopped. */
int mp_trace_forks(void) MP_HIDDEN;

#endif /* MEMPROV_TRACE_FILE_H */
