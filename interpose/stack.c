/*
 * stack.c - capture the stack of an allocation (native frames from
 * unwind.c, or from libunwind's unw_backtrace where unwind.c gives up;
 * Python frames from python.c), hash it, and intern it: an MP_REC_STACK is
 * written the first time a hash is seen in this process, and records refer
 * to the stack by that hash.
 *
 * When the thread runs Python code, native frames stop before the first
 * frame in the interpreter's text (the reports cut there anyway);
 * MEMPROV_NATIVE_FULL=1 keeps them. MEMPROV_UNWIND_CHECK=1 (tests)
 * captures with both unwinders and reports the differences at exit.
 *
 * The intern set is a lock-free open-addressing table of 64-bit hashes
 * (CAS insert). When a probe sequence is full the stack record is simply
 * written again: readers deduplicate by id.
 */
#include <libunwind.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomic.h"
#include "config.h"
#include "internal.h"
#include "reach.h"
#include "unwind.h"

#define INTERN_BITS 20
#define INTERN_SIZE (1u << INTERN_BITS)
#define INTERN_PROBES 32
#define OWN_FRAMES 16 /* room for memprov's own frames above the caller */

int (*volatile mp_python_capture)(struct mp_pyframe *out, int max);

static uint64_t *intern;
static uintptr_t self_lo, self_hi;
static int fast_ok;             /* unwind.c is usable */

int mp_stack_init(void)
{
	if (!self_hi)
		mp_self_text(&self_lo, &self_hi);
	fast_ok = mp_config.fast_unwind && self_hi && !mp_unwind_init();
	intern = mp_sys_mmap(NULL, INTERN_SIZE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (intern == MAP_FAILED) {
		intern = NULL;
		return -1;
	}
	mp_reach_own(intern, INTERN_SIZE * sizeof(uint64_t));
	return 0;
}

/*
 * The fork gate. libunwind takes an internal lock while it walks a stack,
 * and unwind.c's rule lookup may ask the loader (dl_iterate_phdr): a fork
 * while another thread holds either leaves the child a lock no one will
 * release, and it hangs at its first traced allocation. So fork's prepare
 * handler closes the gate and waits until no thread is inside the gate,
 * which each thread enters around those two calls only (unwind.c's walk
 * through cached rules takes no lock and needs no gate: two atomic
 * read-modify-writes saved on nearly every capture). A thread that
 * reaches the closed gate waits until the fork is done (it holds no
 * malloc lock there: allocations are recorded after the real call, frees
 * before it), so its stack is still complete. Only the forking thread
 * itself (a signal handler that allocates during fork) and a wait past
 * GATE_WAIT_SPINS get no native frames where the cached rules do not do.
 * Each thread counts itself in one of GATE_SLOTS padded counters (its
 * serial picks it), so captures of different threads do not share a
 * cache line. The RMW before the load of `forking` pairs with the store
 * and loads in mp_stack_fork_prepare (Dekker: both sides seq_cst).
 */
#define GATE_SLOTS 64
#define GATE_WAIT_SPINS 200000 /* ~ seconds of sched_yield: never hang */

static struct {
	uint32_t n;
	char pad[60];
} gate[GATE_SLOTS] __attribute__((aligned(64)));
static int forking;
static uint32_t forking_tid;

static inline int gate_enter(unsigned slot)
{
	unsigned spins = 0;

	for (;;) {
		__atomic_add_fetch(&gate[slot].n, 1, __ATOMIC_SEQ_CST);
		if (MP_LIKELY(!__atomic_load_n(&forking, __ATOMIC_SEQ_CST)))
			return 1;
		__atomic_sub_fetch(&gate[slot].n, 1, __ATOMIC_RELEASE);
		if (mp_self.tid == __atomic_load_n(&forking_tid, __ATOMIC_RELAXED))
			return 0;
		while (__atomic_load_n(&forking, __ATOMIC_ACQUIRE))
			if (++spins > GATE_WAIT_SPINS)
				return 0;
			else
				sched_yield();
	}
}

static inline void gate_leave(unsigned slot)
{
	__atomic_sub_fetch(&gate[slot].n, 1, __ATOMIC_RELEASE);
}

/* For unwind.c's rule lookup (dl_iterate_phdr). */
int mp_stack_gate_enter(void)
{
	return gate_enter(mp_self.w.serial % GATE_SLOTS);
}

void mp_stack_gate_leave(void)
{
	gate_leave(mp_self.w.serial % GATE_SLOTS);
}

void mp_stack_fork_prepare(void)
{
	unsigned i, spins;

	__atomic_store_n(&forking_tid, (uint32_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
	__atomic_store_n(&forking, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < GATE_SLOTS; i++)
		for (spins = 0; __atomic_load_n(&gate[i].n, __ATOMIC_SEQ_CST) &&
				spins < GATE_WAIT_SPINS; spins++)
			sched_yield();
}

/* In the parent after fork, and in the child (which has no other thread). */
void mp_stack_fork_done(void)
{
	__atomic_store_n(&forking, 0, __ATOMIC_SEQ_CST);
}

/* A forked child writes a new trace: every stack is new to it. */
void mp_stack_reset(void)
{
	if (intern)
		mp_sys_munmap(intern, INTERN_SIZE * sizeof(uint64_t));
	intern = NULL;
	mp_stack_init();
}

/*
 * A stack's id: the native frames folded by unwind.c (while it walks, or
 * by mp_unwind_hash_frames for libunwind's frames), then the Python
 * frames and the counts, then a final avalanche.
 */
static uint64_t hash_finish(uint64_t h, int n, const struct mp_pyframe *py, int npy)
{
	int i;

	for (i = 0; i < npy; i++)
		h = mp_unwind_mix(h, (uint64_t)py[i].code_id << 32 | py[i].line);
	h = mp_unwind_mix(h, (uint64_t)n << 32 | (uint64_t)npy);
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1;
}

/* 1 when h was not in the set (or the set is full): write its record. */
static int intern_insert(uint64_t h)
{
	uint32_t i = (uint32_t)h & (INTERN_SIZE - 1);
	int probe;

	if (!intern)
		return 1;
	for (probe = 0; probe < INTERN_PROBES; probe++) {
		uint64_t *slot = &intern[(i + (uint32_t)probe) & (INTERN_SIZE - 1)];
		uint64_t v = mp_atomic_load_relaxed_u64(slot);

		if (v == h)
			return 0;
		if (!v) {
			if (mp_atomic_cas_relaxed_u64(slot, 0, h))
				return 1;
			if (mp_atomic_load_relaxed_u64(slot) == h)
				return 0;
		}
	}
	return 1;
}

static void write_stack(uint64_t id, void *const *ip, int n,
			const struct mp_pyframe *py, int npy)
{
	size_t len = sizeof(struct mp_rec_stack) + 8 * (size_t)n + 8 * (size_t)npy;
	struct mp_rec_stack *r = mp_record_begin(MP_REC_STACK, len);

	if (!r)
		return;
	r->id = id;
	r->n_native = (uint16_t)n;
	r->n_python = (uint16_t)npy;
	r->reserved = 0;
	memcpy(r->native, ip, 8 * (size_t)n);
	memcpy(&r->native[n], py, 8 * (size_t)npy);
	mp_record_commit(r);
}

/* MEMPROV_UNWIND_CHECK=1: captures compared with libunwind, at exit. */
static uint64_t chk_captures, chk_fast, chk_fallback, chk_mismatch;

static void chk_print(const char *what, void *const *ip, int n)
{
	char line[64 * 20 + 64], *p = line;
	int i;

	p += mp_strlcpy(p, what, 16);
	for (i = 0; i < n && i < 64; i++) {
		uintptr_t v = (uintptr_t)ip[i];
		int b;

		*p++ = ' ';
		*p++ = '0';
		*p++ = 'x';
		for (b = 44; b >= 0; b -= 4)
			*p++ = "0123456789abcdef"[(v >> b) & 15];
	}
	*p++ = '\n';
	if (write(2, line, (size_t)(p - line)) < 0)
		return;
}

/*
 * The stack libunwind gives, cut as the fast path cuts it (depth, the
 * interpreter), against the fast path's n frames in ip[].
 */
static void unwind_check(void *const *ip, int n, const struct mp_unwind_args *a)
{
	void *buf[MP_MAX_FRAMES + OWN_FRAMES];
	int m, first = 0, i, same, g;

	__atomic_fetch_add(&chk_captures, 1, __ATOMIC_RELAXED);
	if (n < 0) {
		__atomic_fetch_add(&chk_fallback, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&chk_fast, 1, __ATOMIC_RELAXED);
	g = mp_pass_begin();
	m = unw_backtrace(buf, mp_config.depth + OWN_FRAMES);
	mp_pass_end(g);
	while (first < m && (uintptr_t)buf[first] >= self_lo &&
	       (uintptr_t)buf[first] < self_hi)
		first++;
	for (i = first; i < m && i - first < mp_config.depth; i++)
		if ((uintptr_t)buf[i] >= a->stop_lo && (uintptr_t)buf[i] < a->stop_hi)
			break;
	m = i - first;
	same = m == n && !memcmp(ip, buf + first, sizeof(void *) * (size_t)n);
	if (!same && __atomic_fetch_add(&chk_mismatch, 1, __ATOMIC_RELAXED) < 5) {
		chk_print("memprov: fast", ip, n);
		chk_print("memprov: libunwind", buf + first, m);
	}
}

__attribute__((destructor)) static void unwind_check_report(void)
{
	char msg[200], *p = msg;

	if (!mp_config.unwind_check || !chk_captures)
		return;
	p += mp_strlcpy(p, "memprov: unwind check: ", 32);
	p = mp_utoa(p, chk_captures);
	p += mp_strlcpy(p, " captures, ", 16);
	p = mp_utoa(p, chk_fast);
	p += mp_strlcpy(p, " fast, ", 16);
	p = mp_utoa(p, chk_fallback);
	p += mp_strlcpy(p, " fallback, ", 16);
	p = mp_utoa(p, chk_mismatch);
	p += mp_strlcpy(p, " mismatches\n", 16);
	if (write(2, msg, (size_t)(p - msg)) < 0)
		return;
}

/* libunwind's capture: frames of libmemprov.so itself are dropped by
 * address, not by count, so that inlining cannot shift frame 0 off the
 * hooked call's caller. Returns the first kept frame's index in buf. */
static int slow_capture(void **buf, int *np, const struct mp_unwind_args *a)
{
	int n, first = 0, i, g;

	g = mp_pass_begin(); /* libunwind maps memory of its own */
	n = unw_backtrace(buf, mp_config.depth + OWN_FRAMES);
	mp_pass_end(g);
	while (first < n && (uintptr_t)buf[first] >= self_lo &&
	       (uintptr_t)buf[first] < self_hi)
		first++;
	n -= first;
	if (n > mp_config.depth)
		n = mp_config.depth;
	for (i = 0; i < n; i++)
		if ((uintptr_t)buf[first + i] >= a->stop_lo &&
		    (uintptr_t)buf[first + i] < a->stop_hi)
			break;
	*np = i;
	return first;
}

/*
 * Python frames first: when the thread runs Python code, native frames
 * stop before the first frame in the interpreter's text (reports cut
 * there; MEMPROV_NATIVE_FULL=1 keeps them). Native frames come from
 * unwind.c, or from libunwind when unwind.c cannot walk this stack.
 */
uint64_t mp_capture_stack(int skip)
{
	void *buf[MP_MAX_FRAMES + OWN_FRAMES];
	struct mp_pyframe py[MP_MAX_PYFRAMES];
	struct mp_unwind_args a;
	int n = -1, first = 0, npy = 0, fast;
	unsigned slot;
	int (*pycap)(struct mp_pyframe *, int);
	uint64_t id;

	(void)skip;
	pycap = mp_python_capture;
	if (pycap && mp_config.python) {
		npy = pycap(py, MP_MAX_PYFRAMES);
		if (npy < 0 || npy > MP_MAX_PYFRAMES)
			npy = 0;
	}
	a.skip_lo = self_lo;
	a.skip_hi = self_hi;
	a.stop_lo = a.stop_hi = 0;
	if (npy && !mp_config.native_full)
		mp_unwind_interp(&a.stop_lo, &a.stop_hi);
	if (fast_ok)
		n = mp_unwind(buf, mp_config.depth, &a);
	fast = n >= 0;
	if (MP_UNLIKELY(n < 0 || mp_config.unwind_check)) {
		slot = mp_self.w.serial % GATE_SLOTS;
		if (gate_enter(slot)) {
			if (MP_UNLIKELY(mp_config.unwind_check))
				unwind_check(buf, n, &a);
			if (n < 0)
				first = slow_capture(buf, &n, &a);
			gate_leave(slot);
		} else if (n < 0) {
			n = 0; /* fork from this very thread: no native frames */
		}
	}
	id = hash_finish(fast ? mp_unwind_hash : mp_unwind_hash_frames(buf + first, n), n, py, npy);
	if (intern_insert(id))
		write_stack(id, buf + first, n, py, npy);
	return id;
}
