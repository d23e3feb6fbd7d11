/*
 * recorder.h - what the hooks of libmemprov.so call to record an event.
 *
 * Implemented by trace_writer.c (records, chunks, the trace file) and
 * stack.c (libunwind capture and interning). Used by hooks_libc.c,
 * hooks_cuda.c and python.c. Everything here is safe to call from inside
 * an allocation hook: no lock on the common path, no stdio, no malloc.
 *
 * Every hook has the same shape:
 *
 *	void *malloc(size_t n)
 *	{
 *		void *p = real_malloc(n);        // resolved by hooks_libc.c
 *		if (mp_enter_fn(MP_FN_malloc)) { // 0: re-entry, off, or not ready
 *			mp_record_alloc(MP_FN_malloc, MP_KIND_HEAP, p, n, p ? 0 : MP_RF_FAILED);
 *			mp_leave();
 *		}
 *		return p;
 *	}
 *
 * A free is recorded before the real call: once the memory is handed back,
 * another thread may be given the same address at once.
 */
#ifndef MEMPROV_RECORDER_H
#define MEMPROV_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "../include/memprov_trace.h"
#include "sys.h"

#define MP_HIDDEN __attribute__((visibility("hidden")))
#define MP_EXPORT __attribute__((visibility("default")))
#define MP_LIKELY(x) __builtin_expect(!!(x), 1)
#define MP_UNLIKELY(x) __builtin_expect(!!(x), 0)

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
	struct mp_chunk_head *chunk; /* current chunk, NULL before the first */
	char *pos, *end;        /* free space in the current chunk */
};

struct mp_thread {
	int guard;              /* enum mp_guard */
	int disabled;           /* this thread never records (e.g. after fork) */
	uint32_t tid;
	struct mp_writer w;     /* where this thread's records go */
	uint64_t sample_left;   /* sampling mode: bytes until the next sample */
};

extern __thread struct mp_thread mp_self __attribute__((tls_model("initial-exec"))) MP_HIDDEN;

/* 1 while the trace is open and recording; cleared for good on failure. */
extern volatile int mp_tracing MP_HIDDEN;

/* A hook call that found memprov busy (guard REC): count it (trace_writer.c). */
void mp_count_skipped(enum mp_func fn) MP_HIDDEN;

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

/* Host allocations (trace_writer.c). Call between mp_enter and mp_leave. */
void mp_record_alloc(enum mp_func fn, enum mp_kind kind, const void *addr,
		     size_t size, unsigned flags) MP_HIDDEN;
void mp_record_free(enum mp_func fn, enum mp_kind kind, const void *addr,
		    unsigned flags) MP_HIDDEN;
void mp_record_unmap(const void *addr, size_t len) MP_HIDDEN;

/* CUDA allocations (trace_writer.c), for hooks_cuda.c. */
void mp_record_gpu_alloc(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			 uint64_t size, uint64_t stream, int device, int result,
			 uint64_t extra, unsigned flags) MP_HIDDEN;
void mp_record_gpu_free(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			uint64_t stream, int device, int result,
			unsigned flags) MP_HIDDEN;
void mp_record_ctx_reset(enum mp_func fn, int device) MP_HIDDEN;

/* Marks (trace_writer.c); flags: MP_RF_MAIN_END or 0. */
void mp_record_mark(const char *label, unsigned flags) MP_HIDDEN;

/*
 * Raw access for records that have no helper above (python.c's
 * MP_REC_PYCODE, module records): reserve len bytes (rounded up to 8) in
 * this thread's chunk with the head filled in (type, size, ts = now), fill
 * the rest, then commit. Returns NULL when tracing stopped. No other
 * record may be started between the two calls on this thread.
 */
void *mp_record_begin(enum mp_rec_type type, size_t len) MP_HIDDEN;
void mp_record_commit(void *rec) MP_HIDDEN;

/*
 * Capture the caller's stack (native frames with libunwind, then Python
 * frames through mp_python_capture when set), intern it, and return its
 * id; writes an MP_REC_STACK the first time an id is seen in this
 * process. skip: frames of memprov itself to drop. (stack.c)
 */
uint64_t mp_capture_stack(int skip) MP_HIDDEN;

/*
 * Set by python.c once it finds CPython in the process: fills out[] with
 * the calling thread's Python frames, innermost first, and returns how
 * many (0 when the thread runs no Python code). Must not allocate, lock,
 * or call into the interpreter in a way that can run Python code.
 */
extern int (*volatile mp_python_capture)(struct mp_pyframe *out, int max) MP_HIDDEN;

/* Stop tracing for good: mark the header, warn once. */
void mp_stop(enum mp_stop why, const char *msg) MP_HIDDEN;

#endif /* MEMPROV_RECORDER_H */
