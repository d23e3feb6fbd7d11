/*
 * writer.h - records into the trace (trace_writer.c): each thread's writer
 * context, the guard that keeps memprov from recording itself, and one
 * serializer per record type. Safe inside an allocation hook: no lock on
 * the common path, no stdio, no malloc.
 *
 * Layer: 3 writer (docs/ARCHITECTURE.md): calls trace_file, config and sys.
 */
#ifndef MEMPROV_WRITER_H
#define MEMPROV_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace_file.h"

/*
 * mp_self.guard: what this thread is doing inside memprov.
 *   NONE  not inside memprov: a hook records.
 *   REC   memprov is recording: a hook reached now can only be re-entry
 *         from a signal handler that hooks_signal.c did not wrap (a handler
 *         installed by a raw system call); it passes through and is counted
 *         in the header's skipped counters.
 *   PASS  memprov is calling out (the loader, libunwind, the CUDA driver,
 *         the interpreter): hooks reached now are those calls' own and pass
 *         through uncounted.
 * A wrapped signal handler that interrupts memprov runs with the guard at
 * NONE on a writer context of its own (hooks_signal.c), so its calls are
 * recorded.
 */
enum mp_guard {
	MP_GUARD_NONE = 0,
	MP_GUARD_REC = 1,
	MP_GUARD_PASS = 2,
};

/*
 * Per-thread state. Initial-exec TLS: reading it never allocates (a
 * dynamic TLS access may call malloc, which would recurse into the hooks).
 * The writer fields (serial to end) are one "writer context": a signal
 * handler that interrupts memprov swaps in another one (struct mp_writer).
 */
struct mp_writer {
	uint32_t serial;        /* 0 until the context's first record */
	uint32_t parent_serial; /* a signal handler's context: the thread's serial */
	uint32_t seq;           /* next chunk number of this context */
	uint32_t size;          /* the current chunk's length in bytes */
	struct mp_chunk_head *chunk; /* current chunk, NULL before the first */
	uint8_t *pos, *end;     /* free space in the current chunk; end == pos
				 * once the chunk was released (thread exit) */
	uint64_t ts, addr;      /* the encoder's base: the last record's
				 * timestamp and address in this chunk; the
				 * address stored inverted (~addr), so the scan
				 * at exit, which reads this thread's TLS as a
				 * root, never takes it for a pointer to the
				 * block last freed or allocated */
	int released;           /* the chunk left the address space */
	uint32_t seg;           /* the trace segment of the current chunk */
	uint32_t retired_seg;   /* ... and of the finished chunks still mapped: */
	uint32_t retired_len;   /* bytes ... */
	void *retired;          /* ... from here, released together */
};

struct mp_thread {
	int guard;              /* enum mp_guard */
	int disabled;           /* this thread never records (e.g. after fork) */
	uint32_t tid;
	uintptr_t last_alloc;   /* this thread's last heap ALLOC record's address
				 * (hooks_cxx.c), inverted: the scan at exit reads
				 * TLS as a root */
	uint32_t py_tracing;    /* set by the Python capture: CPython may be
				 * making the line table of a code object of
				 * this many code units for memprov's profile
				 * function (python.c), an MP_RF_INTERP block */
	uint32_t in_alloc;      /* inside a call into the real allocator: a
				 * replacement's mappings now are its own
				 * (hooks_libc.c) */
	uint32_t in_unw;        /* inside libunwind (or its opening): malloc
				 * and calloc are served from memprov's own
				 * arena, not the program's allocator, which
				 * may hold its lock here (hooks_libc.c) */
	struct mp_writer w;     /* where this thread's records go */
};

/* call, made into the real allocator (mp_self.in_alloc). */
#define MP_IN_ALLOC(call)                           \
	({                                          \
		__typeof__(call) in_alloc_r_;       \
		mp_self.in_alloc++;                 \
		in_alloc_r_ = (call);               \
		mp_self.in_alloc--;                 \
		in_alloc_r_;                        \
	})

extern __thread struct mp_thread mp_self __attribute__((tls_model("initial-exec"))) MP_HIDDEN;

/*
 * Enter memprov from a hook of function fn: returns 1 and sets the guard
 * to REC when this call should be recorded, 0 when it must pass through
 * untraced (tracing off, a thread that never records, or memprov already
 * busy on this thread: see enum mp_guard).
 */
static inline int mp_enter_fn(enum mp_func fn)
{
	if (MP_UNLIKELY(!mp_tracing) || mp_self.guard || mp_self.disabled) {
		if (MP_UNLIKELY(mp_self.guard == MP_GUARD_REC) && mp_tracing &&
		    !mp_self.disabled)
			mp_count_skipped(fn);
		return 0;
	}
	mp_self.guard = MP_GUARD_REC;
	return 1;
}

/* mp_enter_fn for what is not one function's call (marks, module scans). */
static inline int mp_enter(void)
{
	return mp_enter_fn(MP_FN_NONE);
}

static inline void mp_leave(void)
{
	mp_self.guard = MP_GUARD_NONE;
}

/*
 * Around a call out of memprov that may reach the hooks (the loader,
 * libunwind, a real CUDA function, the interpreter's API): those calls
 * pass through uncounted. Returns the guard to give mp_pass_end.
 */
static inline int mp_pass_begin(void)
{
	int g = mp_self.guard;

	mp_self.guard = MP_GUARD_PASS;
	return g;
}

static inline void mp_pass_end(int g)
{
	mp_self.guard = g;
}

/* Serializers: each writes one record stamped now, when tracing is on.
 * stack: an id from mp_capture_stack (stack.c), 0 for none. */
void mp_write_alloc(enum mp_func fn, enum mp_kind kind, const void *addr, size_t size,
		    unsigned flags, uint64_t stack) MP_HIDDEN;
void mp_write_free(enum mp_func fn, enum mp_kind kind, const void *addr,
		   unsigned flags) MP_HIDDEN;
void mp_write_unmap(const void *addr, size_t len, unsigned flags) MP_HIDDEN;
void mp_write_gpu_alloc(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			uint64_t size, uint64_t stream, int device, int result,
			uint64_t extra, unsigned flags, uint64_t stack) MP_HIDDEN;
void mp_write_gpu_free(enum mp_func fn, enum mp_kind kind, uint64_t addr,
		       uint64_t stream, int device, int result, unsigned flags) MP_HIDDEN;
void mp_write_ctx_reset(enum mp_func fn, int device) MP_HIDDEN;
void mp_write_stack(uint64_t id, void *const *ip, int n, const struct mp_pyframe *py,
		    int npy) MP_HIDDEN;
void mp_write_pycode(uint32_t id, uint32_t line, const char *file, size_t flen,
		     const char *name, size_t nlen) MP_HIDDEN;
/* MP_REC_PYTHREAD: a thread still running Python code (tid, 0: not known). */
void mp_write_pythread(uint32_t tid, uint64_t stack) MP_HIDDEN;
/* MP_REC_SIGSTACK: this thread's alternate signal stack (0, 0: disabled). */
void mp_write_sigstack(uint64_t addr, uint64_t size) MP_HIDDEN;
/* Marks; flags: MP_RF_MAIN_END or 0. */
void mp_record_mark(const char *label, unsigned flags) MP_HIDDEN;
void mp_record_exit(int status, unsigned how) MP_HIDDEN;
void mp_record_fork(pid_t child, uint32_t serial) MP_HIDDEN;
void mp_record_rss(void) MP_HIDDEN;         /* a resident-memory sample now */
void mp_rss_open(void) MP_HIDDEN;           /* once the trace is open: sampling, thread exit */
void mp_writer_fork_child(void) MP_HIDDEN;  /* after mp_trace_fork_child */
void mp_stamp_after(uint64_t t) MP_HIDDEN;   /* every later record stamped after t */
void mp_stamp_abandon(uint32_t serial) MP_HIDDEN; /* a record of that context was abandoned */

/*
 * A record that has no serializer (module records), stamped now: rec is
 * the whole record in its struct's layout (memprov_trace.h), head.type,
 * flags, func, kind and size filled in (size at most MP_MAX_RECORD; the
 * ts is not read). Written framed (memprov_codec.h).
 */
void mp_write_record(struct mp_rec_head *rec) MP_HIDDEN;

#endif /* MEMPROV_WRITER_H */
