/*
 * record.c - every hook's event goes through here: the sampling decision
 * (sample.c, MEMPROV_SAMPLE_BYTES), the stack (stack.c), then the record
 * (trace_writer.c). Frees carry no stack and are never sampled.
 *
 * Layer: 5 record (docs/ARCHITECTURE.md): calls stack, sample, trace_writer
 * and config.
 */
#include "config.h"
#include "recorder.h"
#include "sample.h"

/*
 * ALLOCs still to flag MP_RF_INTERP (python.c, in a forked child: from
 * the fork until CPython calls the after-fork hooks). The child has one
 * thread then. An ALLOC whose Python capture finds CPython working for
 * memprov's profile function (mp_self.py_tracing) is flagged too.
 */
static unsigned interp_left;

void mp_record_interp(unsigned n)
{
	__atomic_store_n(&interp_left, n, __ATOMIC_RELAXED);
}

void mp_record_alloc(enum mp_func fn, enum mp_kind kind, const void *addr,
		     size_t size, unsigned flags)
{
	uint64_t stack;

	if (MP_UNLIKELY(__atomic_load_n(&interp_left, __ATOMIC_RELAXED))) {
		flags |= MP_RF_INTERP;
		__atomic_store_n(&interp_left, interp_left - 1, __ATOMIC_RELAXED);
	}
	if (MP_UNLIKELY(mp_config.sample_bytes) && !(flags & MP_RF_FAILED)) {
		unsigned sf = mp_sample(size, mp_config.sample_bytes);

		if (!sf)
			return;
		flags |= sf & MP_RF_SAMPLED;
	}
	mp_self.py_tracing = 0;
	stack = mp_capture_stack(1);
	/* the line table of a code object with that many code units, 2 or 4
	 * bytes each, made for memprov's profile function (python.c) */
	if (MP_UNLIKELY(mp_self.py_tracing) &&
	    (size == 2 * (size_t)mp_self.py_tracing || size == 4 * (size_t)mp_self.py_tracing))
		flags |= MP_RF_INTERP;
	mp_write_alloc(fn, kind, addr, size, flags, stack);
	if (kind == MP_KIND_HEAP) /* a fresh mapping's first block has its address */
		mp_self.last_alloc = ~(uintptr_t)addr;
}

void mp_record_free(enum mp_func fn, enum mp_kind kind, const void *addr,
		    unsigned flags)
{
	mp_write_free(fn, kind, addr, flags);
}

void mp_record_unmap(const void *addr, size_t len, unsigned flags)
{
	mp_write_unmap(addr, len, flags);
}

void mp_record_gpu_alloc(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			 uint64_t size, uint64_t stream, int device, int result,
			 uint64_t extra, unsigned flags)
{
	mp_write_gpu_alloc(fn, kind, addr, size, stream, device, result, extra, flags,
			   mp_capture_stack(1));
}

void mp_record_gpu_free(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			uint64_t stream, int device, int result, unsigned flags)
{
	mp_write_gpu_free(fn, kind, addr, stream, device, result, flags);
}

void mp_record_ctx_reset(enum mp_func fn, int device)
{
	mp_write_ctx_reset(fn, device);
}
