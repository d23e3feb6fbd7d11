/*
 * stack.c - capture the stack of an allocation (native frames from
 * unwind.c, or from libunwind's unw_backtrace where unwind.c gives up,
 * libunwind opened then (unwind_lib.c);
 * Python frames from python.c), hash it, and intern it: an MP_REC_STACK is
 * written the first time a hash is seen in this process, and records refer
 * to the stack by the small id intern.c gave it (by its hash, with
 * MP_STACK_HASHED, when the table is full).
 *
 * When the thread runs Python code, native frames stop before the first
 * frame in the interpreter's text (the reports cut there anyway);
 * MEMPROV_NATIVE_FULL=1 keeps them. MEMPROV_UNWIND_CHECK=1 (tests)
 * captures with both unwinders and reports the differences at exit.
 *
 * Layer: 4 capture (docs/ARCHITECTURE.md): calls unwind, unwind_lib, intern, gate, elfsym,
 * trace_writer, trace_file (a count in the header), config and sys.
 */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomic.h"
#include "config.h"
#include "intern.h"
#include "stack.h"
#include "elfsym.h"
#include "gate.h"
#include "unwind.h"
#include "trace_file.h"
#include "unwind_lib.h"

#define OWN_FRAMES 16 /* room for memprov's own frames above the caller */

int (*volatile mp_python_capture)(struct mp_pyframe *out, int max, uint64_t *hash);
uintptr_t mp_python_text_lo, mp_python_text_hi;

static uintptr_t self_lo, self_hi;
static int fast_ok;             /* unwind.c is usable */

static int pass_begin(void)
{
	return mp_pass_begin();
}

static void pass_end(int g)
{
	mp_pass_end(g);
}

int mp_stack_init(void)
{
	mp_unwind_set_pass(pass_begin, pass_end);
	if (!self_hi)
		mp_elf_text_of((const void *)mp_capture_stack, &self_lo, &self_hi);
	fast_ok = mp_config.fast_unwind && self_hi && !mp_unwind_init();
	mp_unwind_memo_enable(mp_config.unwind_memo, mp_config.unwind_check == 2);
	if (!fast_ok || mp_config.unwind_check)
		(void)mp_unw_get(); /* every stack needs it: opened now, not inside a hook */
	return mp_intern_init();
}

/* A forked child writes a new trace: every stack is new to it. */
void mp_stack_reset(void)
{
	mp_stack_init();
}

/*
 * A stack's id: the native frames folded by unwind.c (while it walks, or
 * by mp_unwind_hash_frames for libunwind's frames), then the Python
 * frames' part (mp_pyframes_hash, from whoever read them), then the
 * counts, then a final avalanche.
 */
static uint64_t hash_finish(uint64_t h, int n, uint64_t pyhash, int npy)
{
	if (npy)
		h = mp_unwind_mix(h, pyhash);
	h = mp_unwind_mix(h, (uint64_t)n << 32 | (uint64_t)npy);
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1;
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
	uint64_t hash = mp_unwind_hash; /* the fast path's, before libunwind runs */
	const struct mp_unw *u;
	int m, first = 0, same, g;

	__atomic_fetch_add(&chk_captures, 1, __ATOMIC_RELAXED);
	if (n < 0) {
		__atomic_fetch_add(&chk_fallback, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&chk_fast, 1, __ATOMIC_RELAXED);
	if (!(u = mp_unw_get()))
		return;
	g = mp_pass_begin();
	mp_self.in_unw++;
	m = u->backtrace(buf, mp_config.depth + OWN_FRAMES);
	mp_self.in_unw--;
	mp_pass_end(g);
	while (first < m && (uintptr_t)buf[first] >= self_lo &&
	       (uintptr_t)buf[first] < self_hi)
		first++;
	if (m - first > mp_config.depth)
		m = first + mp_config.depth;
	m = m > first ? mp_unwind_cut(buf + first, m - first, a) : 0;
	/* the frames, and the id the walk folded from them */
	same = m == n && !memcmp(ip, buf + first, sizeof(void *) * (size_t)n) &&
	       hash == mp_unwind_hash_frames(ip, n);
	if (!same && __atomic_fetch_add(&chk_mismatch, 1, __ATOMIC_RELAXED) < 5) {
		chk_print("memprov: fast", ip, n);
		chk_print("memprov: libunwind", buf + first, m);
	}
}

__attribute__((destructor)) static void unwind_check_report(void)
{
	char msg[320], *p = msg;

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
	if (mp_config.unwind_check == 2) {
		uint64_t through, replayed;

		mp_unwind_memo_counts(&through, &replayed);
		p += mp_strlcpy(p, "memprov: unwind memo: ", 32);
		p = mp_utoa(p, replayed);
		p += mp_strlcpy(p, " of ", 8);
		p = mp_utoa(p, through);
		p += mp_strlcpy(p, " walks through it replayed\n", 32);
	}
	if (write(2, msg, (size_t)(p - msg)) < 0)
		return;
}

/*
 * Stack libunwind's walk needs below its caller (its context and cursor,
 * 2 KiB, and what stepping through the DWARF rules takes): a handler that
 * allocates, on an alternate stack, used 3,176 B of it under memprov
 * without libunwind and 8,520 B with it, its first calls bound lazily
 * (2,888 B bare). With less room than this, the allocation has no
 * native frames.
 */
#define SLOW_ROOM (8u << 10)

/*
 * Stack the first use needs to open libunwind (the loader maps it and
 * liblzma and relocates them): until then, a stack with less room than
 * this below it has no native frames.
 */
#define OPEN_ROOM (64u << 10)

/* libunwind's capture: frames of libmemprov.so itself are dropped by
 * address, not by count, so that inlining cannot shift frame 0 off the
 * hooked call's caller. Returns the first kept frame's index in buf.
 * Without room for libunwind, no native frame. */
static int slow_capture(void **buf, int *np, const struct mp_unwind_args *a)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	const struct mp_unw *u = NULL;
	int n, first = 0, g;

	*np = 0;
	if (!mp_unwind_room(sp, mp_unw_is_open() ? SLOW_ROOM : OPEN_ROOM)) {
		mp_count_no_room();
		return 0;
	}
	g = mp_pass_begin(); /* libunwind maps memory of its own, the loader allocates */
	mp_self.in_unw++; /* its allocations: none from the program's allocator */
	u = mp_unw_get();
	n = u ? u->backtrace(buf, mp_config.depth + OWN_FRAMES) : 0;
	mp_self.in_unw--;
	mp_pass_end(g);
	while (first < n && (uintptr_t)buf[first] >= self_lo &&
	       (uintptr_t)buf[first] < self_hi)
		first++;
	n -= first;
	if (n > mp_config.depth)
		n = mp_config.depth;
	*np = n > 0 ? mp_unwind_cut(buf + first, n, a) : 0;
	return first;
}

/* The id of the stack of that hash, its MP_REC_STACK written the first time. */
static inline __attribute__((always_inline)) uint64_t
intern(uint64_t hash, void *const *ip, int n, const struct mp_pyframe *py, int npy)
{
	int is_new;
	uint64_t id = mp_intern_id(hash, &is_new);

	if (MP_UNLIKELY(!id)) {
		id = hash | MP_STACK_HASHED; /* no room for an id: written each time */
		is_new = 1;
	}
	if (is_new)
		mp_write_stack(id, ip, n, py, npy);
	return id;
}

/*
 * Python frames first: when the thread runs Python code, native frames
 * stop before the first frame in the interpreter's text (reports cut
 * there; MEMPROV_NATIVE_FULL=1 keeps them). Native frames come from
 * unwind.c, or from libunwind when unwind.c cannot walk this stack.
 * Into the caller's arrays: buf has room for mp_config.depth +
 * OWN_FRAMES frames, py for MP_MAX_PYFRAMES when pycap is set (the
 * Python frames), else for none.
 */
static inline __attribute__((always_inline)) uint64_t
capture(void **buf, struct mp_pyframe *py, int (*pycap)(struct mp_pyframe *, int, uint64_t *),
	const int walk)
{
	struct mp_unwind_args a;
	int n = -1, first = 0, npy = 0, fast;
	uint64_t hash, pyhash = MP_PYHASH_SEED;

	if (pycap) {
		npy = pycap(py, MP_MAX_PYFRAMES, &pyhash);
		if (npy < 0 || npy > MP_MAX_PYFRAMES)
			npy = 0;
	}
	a.skip_lo = self_lo;
	a.skip_hi = self_hi;
	a.stop_lo = a.stop_hi = 0;
	if (npy && !mp_config.native_full) {
		a.stop_lo = mp_python_text_lo;
		a.stop_hi = mp_python_text_hi;
	}
	if (!walk)
		n = 0;
	else if (fast_ok)
		n = mp_unwind(buf, mp_config.depth, &a);
	if (MP_UNLIKELY(n == MP_UNWIND_NO_ROOM)) {
		mp_count_no_room();
		n = 0;
	}
	fast = n >= 0;
	if (MP_UNLIKELY(walk && (n < 0 || mp_config.unwind_check))) {
		if (mp_gate_enter()) {
			if (MP_UNLIKELY(mp_config.unwind_check))
				unwind_check(buf, n, &a);
			if (n < 0)
				first = slow_capture(buf, &n, &a);
			mp_gate_leave();
		} else if (n < 0) {
			n = 0; /* fork from this very thread: no native frames */
		}
	}
	hash = hash_finish(fast ? mp_unwind_hash : mp_unwind_hash_frames(buf + first, n), n,
			   pyhash, npy);
	return intern(hash, buf + first, n, py, npy);
}

uint64_t mp_stack_python(const struct mp_pyframe *py, int npy)
{
	return intern(hash_finish(mp_unwind_hash_frames(NULL, 0), 0, mp_pyframes_hash(py, npy), npy),
		      NULL, 0, py, npy);
}

/*
 * The arrays are sized for the stacks this process can have: at the
 * default depth and without Python, 80 frames (640 B), not the 272
 * native and 128 Python frames (3.2 KiB) of the most allowed. A thread's
 * own stack may be 16 KiB, a signal handler's 8: a handler that
 * allocated on 8 KiB had 800 bytes left with the big arrays.
 */
#define SMALL_DEPTH 64

static MP_REALIGN __attribute__((noinline)) uint64_t capture_small(void)
{
	void *buf[SMALL_DEPTH + OWN_FRAMES];

	return capture(buf, NULL, NULL, 1);
}

static MP_REALIGN __attribute__((noinline)) uint64_t
capture_big(int (*pycap)(struct mp_pyframe *, int, uint64_t *))
{
	void *buf[MP_MAX_FRAMES + OWN_FRAMES];
	struct mp_pyframe py[MP_MAX_PYFRAMES];

	return capture(buf, py, pycap, 1);
}

/*
 * With too little stack left for the arrays and the walk, an allocation
 * gets a stack without frames (counted in the header): the id of the
 * empty stack. One pointer of array, no Python walk.
 */
static MP_REALIGN __attribute__((noinline)) uint64_t capture_none(void)
{
	void *buf[1];

	mp_count_no_room();
	return capture(buf, NULL, NULL, 0);
}

/*
 * Stack the capture needs below mp_capture_stack: the arrays (the
 * compiler's frame sizes, -fstack-usage: capture_small 752 B,
 * capture_big 3,328 B), the walk (MP_WALK_ROOM), and the Python walk's
 * own frames, which run before the native walk: pywalk_capture 2,240 B,
 * and on a code object's first sight pw_code_slow's 3,152 B (its names
 * read into buffers) and the record's, 5.5 KiB at most of PY_ROOM and
 * MP_WALK_ROOM.
 */
#define SMALL_ROOM (1024u + MP_WALK_ROOM)
#define BIG_ROOM (3584u + MP_WALK_ROOM)
#define PY_ROOM (4608u)

MP_REALIGN uint64_t mp_capture_stack(int skip)
{
	int (*pycap)(struct mp_pyframe *, int, uint64_t *) =
		mp_config.python ? mp_python_capture : NULL;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);

	(void)skip;
	if (!pycap && mp_config.depth <= SMALL_DEPTH) {
		if (MP_UNLIKELY(!mp_unwind_room_known(sp, SMALL_ROOM)))
			return capture_none();
		return capture_small();
	}
	if (MP_UNLIKELY(!mp_unwind_room_known(sp, BIG_ROOM + (pycap ? PY_ROOM : 0))))
		return capture_none();
	return capture_big(pycap);
}
