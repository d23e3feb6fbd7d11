/*
 * reach_trace.c - read this process's own trace back for the reachability
 * scan: trace_iter.c's walk (every format version memprov writes) into
 * memory the scan mapped itself, with the scan's time bound checked as
 * records go by. The file is read with pread, or where the caller's view
 * says, in the writer's own mappings (a short trace, at exit).
 *
 * Records come chunk by chunk in file order: each thread's records in its
 * own order, threads interleaved. Callers that need "the latest event for
 * an address" compare timestamps; they never need a merge by time.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls trace_iter, reach_mem and
 * sys; the descriptor is its caller's.
 */
#include "reach_int.h"
#include "trace_iter.h"

#define CLOCK_EVERY 4096 /* records between two looks at the clock */

struct walk {
	rt_fn fn;
	mp_iter_heap_fn heap;
	void *arg;
	uint64_t deadline;
	uint32_t n;
};

static int one(void *arg, uint32_t serial, const struct mp_rec_head *h)
{
	struct walk *w = arg;

	if (++w->n % CLOCK_EVERY == 0 && mp_now() > w->deadline)
		return RX_TIMEOUT;
	return w->fn(w->arg, serial, h);
}

static int batch(void *arg, uint32_t serial, const struct mp_iter_heap *ev, size_t n)
{
	struct walk *w = arg;
	uint32_t before = w->n;

	w->n += (uint32_t)n;
	if (w->n / CLOCK_EVERY != before / CLOCK_EVERY && mp_now() > w->deadline)
		return RX_TIMEOUT;
	return w->heap(w->arg, serial, ev, n);
}

int rt_walk(int fd, mp_iter_view view, uint64_t until, uint64_t until_off, uint64_t deadline,
	    struct mp_iter_horizon *hz, rt_fn fn, mp_iter_heap_fn heap, void *arg)
{
	struct walk w = { fn, heap, arg, deadline, 0 };
	void *buf;
	int r;

	if (fd < 0)
		return RX_NOTRACE;
	buf = rmem_buffer(MP_ITER_BUF); /* a short trace uses a page or two of it */
	if (!buf)
		return RX_NOMEM;
	r = mp_trace_iter_before(fd, view, buf, MP_ITER_BUF, until, until_off, hz, one,
				 heap ? batch : NULL, &w);
	rmem_free(buf);
	/* fn's own results are RX_ codes, never -1 */
	return r == -1 ? RX_NOTRACE : r;
}

int rt_fork_ts(int fd, uint32_t thread, uint64_t after, uint64_t after_off, int32_t child_pid,
	       uint32_t fork_serial, uint64_t *ts)
{
	void *buf = rmem_buffer(MP_ITER_BUF);
	int r;

	if (!buf)
		return -1;
	r = mp_trace_fork_ts(fd, buf, MP_ITER_BUF, thread, after, after_off, child_pid, fork_serial,
			     ts);
	rmem_free(buf);
	return r;
}
