/*
 * recorder.h - what the hooks of libmemprov.so call to record an event:
 * record.c, which for each event samples, captures the stack and writes
 * the record; and, through writer.h, the guard (mp_enter, mp_leave).
 * Everything here is safe to call from inside an allocation hook: no lock
 * on the common path, no stdio, no malloc.
 *
 * Layer: 5 record (docs/ARCHITECTURE.md): record.c calls stack, sample,
 * trace_writer and config.
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

#include "stack.h"
#include "writer.h"

/*
 * The next n ALLOCs are the interpreter's own (MP_RF_INTERP): CPython
 * remaking its state in a forked child (python.c). 0 ends it.
 */
void mp_record_interp(unsigned n) MP_HIDDEN;

/* Host allocations. Call between mp_enter_fn and mp_leave. */
void mp_record_alloc(enum mp_func fn, enum mp_kind kind, const void *addr,
		     size_t size, unsigned flags) MP_HIDDEN;
void mp_record_free(enum mp_func fn, enum mp_kind kind, const void *addr,
		    unsigned flags) MP_HIDDEN;
/* flags: MP_RF_FIXED for the range a MAP_FIXED mmap replaces */
void mp_record_unmap(const void *addr, size_t len, unsigned flags) MP_HIDDEN;

/* CUDA allocations, for hooks_cuda.c. */
void mp_record_gpu_alloc(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			 uint64_t size, uint64_t stream, int device, int result,
			 uint64_t extra, unsigned flags) MP_HIDDEN;
void mp_record_gpu_free(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			uint64_t stream, int device, int result,
			unsigned flags) MP_HIDDEN;
void mp_record_ctx_reset(enum mp_func fn, int device) MP_HIDDEN;

#endif /* MEMPROV_RECORDER_H */
