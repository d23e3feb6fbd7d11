/*
 * unwind.c - a fast native stack walker for the allocation hooks (x86-64).
 *
 * libunwind's unw_backtrace costs ~85 instructions a frame; most frames
 * only need "CFA = rsp+N or rbp+N, return address at CFA-8, rbp unchanged
 * or saved at CFA-k". This file computes that rule for a return address
 * from its module's .eh_frame (found through .eh_frame_hdr's sorted table,
 * PT_GNU_EH_FRAME, with dl_iterate_phdr) with a small CFI interpreter, and
 * caches it in a lock-free table: one 64-bit word per entry holding the
 * address and the rule, so that a reader never sees half an entry.
 *
 * Anything beyond the simple rules (a signal frame, a DWARF expression, a
 * CFA in another register, an unknown opcode) gives the rule "fallback":
 * the walk returns -1 and stack.c captures the whole stack with
 * unw_backtrace. Code with no CFI (no FDE covers it, or it lies in no
 * module: JIT code) gets the frame-pointer rule, as libunwind assumes
 * there. The walk reads memory only inside the
 * calling thread's stack, found once per thread from /proc/self/maps (raw
 * system calls: no lock, no malloc), and only at aligned addresses between
 * the current stack pointer and the stack's top; it stops at the
 * outermost frame (return address undefined in the CFI) or at a zero
 * return address.
 *
 * Layer: 2 storage and walk (docs/ARCHITECTURE.md): calls cfi, gate and sys; knows nothing of
 * Python or of its callers.
 */
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomic.h"
#include "cfi.h"
#include "gate.h"
#include "unwind.h"

/*
 * Cache: entry = ip << 17 | rule; ip < 2^47 (user space) and never 0,
 * so an entry in use is never 0. Its slots are taken from the first 2^9
 * (4 KiB, one page, written at start so that it costs one page fault,
 * not a read fault then a write fault) until 2^8 rules were cached, then
 * from the first 2^12 (8 pages) until 2^11, then from all 2^16: each new
 * rule in a big table touches a new page, and a short-lived process paid
 * a page fault for most of them (ls: 16 faults for its 8 pages of 2^12
 * slots, one now). An entry says which ip it holds, so one found at a
 * slot of the old size is still right.
 */
#define CACHE_BITS 16
#define CACHE_BITS_FIRST 9
#define CACHE_BITS_SECOND 12
#define CACHE_SIZE (1u << CACHE_BITS)
#define CACHE_PROBES 4
#define IP_MAX ((uintptr_t)1 << 47)
#define OWN_MAX 32 /* memprov's own frames above a capture, at most */

static uint64_t *cache;
static unsigned cache_shift = 64 - CACHE_BITS_FIRST; /* 64 - bits in use */
static uint32_t cache_fill;                        /* rules cached so far */

/* This thread's stack: reads are allowed in [sp, hi); sp must be >= lo. */
static __thread uintptr_t stk_lo, stk_hi;
static __thread int stk_state; /* 0 not known yet, 1 known, -1 unusable */

static inline uint32_t cache_slot(uintptr_t ip, unsigned shift)
{
	/* the multiplier of mix() below: one constant register in the walk */
	return (uint32_t)(((uint64_t)ip * 0xff51afd7ed558ccdull) >> shift);
}

static inline unsigned slot_shift(void)
{
	return __atomic_load_n(&cache_shift, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Frames of more than 32 KiB                                           */

/*
 * Their wide rules (cfi.h) do not fit a cache entry: the entry holds
 * R_BIG and this table the rule, by return address. Entries are added
 * with the loader's lock held (one writer at a time), the rule before
 * the address; a reader checks the address again after the rule. Few
 * functions have such frames: when the table is full, the walk falls
 * back to libunwind for the others.
 */
#define BIG_SLOTS 128

static struct {
	uint64_t ip;   /* 0: empty */
	uint64_t rule; /* a wide rule */
} big[BIG_SLOTS] MP_BIG_BSS;

/* The cache's rule for ip whose rule is r: R_BIG once r is in the table. */
static unsigned big_put(uintptr_t ip, unsigned r)
{
	uint32_t i = cache_slot(ip, 64 - 7), p;

	if (!(r >> R_WIDE_SHIFT))
		return r;
	for (p = 0; p < BIG_SLOTS; p++) {
		uint32_t j = (i + p) % BIG_SLOTS;
		uint64_t at = __atomic_load_n(&big[j].ip, __ATOMIC_ACQUIRE);

		if (at == ip)
			return R_BIG;
		if (at)
			continue;
		__atomic_store_n(&big[j].rule, r, __ATOMIC_RELAXED);
		__atomic_store_n(&big[j].ip, ip, __ATOMIC_RELEASE);
		return R_BIG;
	}
	return R_FALLBACK;
}

/* The wide rule of ip (R_BIG in the cache): its base and rbp in *x, its
 * offset in *off. 0 when it is not (or no longer) in the table. */
static __attribute__((noinline)) int big_get(uintptr_t ip, uintptr_t *x, uintptr_t *off)
{
	uint32_t i = cache_slot(ip, 64 - 7), p;

	for (p = 0; p < BIG_SLOTS; p++) {
		uint32_t j = (i + p) % BIG_SLOTS;
		uint64_t at = __atomic_load_n(&big[j].ip, __ATOMIC_ACQUIRE), r;

		if (!at)
			return 0;
		if (at != ip)
			continue;
		r = __atomic_load_n(&big[j].rule, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&big[j].ip, __ATOMIC_ACQUIRE) != ip || !(r >> R_WIDE_SHIFT))
			return 0;
		*x = (uintptr_t)(r & (R_CFA_RBP | 0xfu));
		*off = (uintptr_t)R_WIDE_OFF(r);
		return 1;
	}
	return 0;
}

static void big_flush(void)
{
	uint32_t j;

	for (j = 0; j < BIG_SLOTS; j++) {
		__atomic_store_n(&big[j].ip, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&big[j].rule, 0, __ATOMIC_RELAXED);
	}
}

/* ------------------------------------------------------------------ */
/* Modules whose .eh_frame is read from their file (cfi.h)              */

/*
 * A module with an .eh_frame_hdr of 12 KiB (1,500 FDEs, an .eh_frame of
 * some 60 KiB: one fault-around window) or more: python3.11 (80 KiB),
 * libc (29 KiB), libsqlite3 and bash (about 20 KiB). A smaller one is
 * mapped whole by the first fault, and an open would cost more than it
 * saves. At most FILE_SLOTS of them, each with a descriptor of its own
 * (sys.c's owned descriptors: high, close-on-exec), and none when the
 * program may open fewer than FILE_MIN_NOFILE files. Whether it is still
 * memprov's (a program may close it, or dup2 over it) is checked by its
 * inode at every 64th lookup and after any lookup that had to read in
 * memory: whatever a descriptor taken over reads, an FDE that does not
 * parse to a simple rule is read in memory (cfi.c), and pread neither
 * moves a file's offset nor reads from a pipe or socket. Entries are
 * added and used with the loader's lock held (a dl_iterate_phdr
 * callback); an unloaded module's entry is only marked gone, and closed
 * by the next add.
 */
#define FILE_SLOTS 16
#define FILE_MIN_HDR (12 * 1024)
#define FILE_MIN_NOFILE 256 /* descriptors the program may open, at least */

static struct eh_file {
	uintptr_t base; /* the module's load bias (0 for a fixed-address program) */
	size_t hdr_size; /* 0: a free entry */
	int gone;       /* unloaded, or its descriptor is no longer ours */
	unsigned uses;
	uint64_t checked_at; /* f.from_memory when the descriptor was last checked */
	struct mp_owned_fd fd;
	struct mp_cfi_file f;
} files[FILE_SLOTS] MP_BIG_BSS;
/* entries [0, files_used) were ever taken: the loops stop there, so a
 * short process reads one page of the table, not three (zero-page faults) */
static int files_used;

MP_REALIGN void mp_unwind_add_file(const struct dl_phdr_info *info, const char *path)
{
	size_t hdr = mp_cfi_hdr_size(info);
	struct eh_file *e = NULL;
	int i;

	struct rlimit rl;

	if (!cache || hdr < FILE_MIN_HDR || !path || path[0] != '/')
		return;
	/* under a small descriptor limit, memory is cheaper than descriptors */
	if (getrlimit(RLIMIT_NOFILE, &rl) || (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < FILE_MIN_NOFILE))
		return;
	for (i = 0; i <= files_used && i < FILE_SLOTS; i++) {
		if (files[i].hdr_size && __atomic_load_n(&files[i].gone, __ATOMIC_ACQUIRE)) {
			mp_fd_release(&files[i].fd);
			files[i].hdr_size = 0;
		}
		if (files[i].hdr_size && files[i].base == info->dlpi_addr)
			return; /* a forked child's new scan: the parent's entry holds */
		if (!files[i].hdr_size && !e)
			e = &files[i];
	}
	if (!e || mp_fd_adopt(&e->fd, mp_sys_open(path, O_RDONLY | O_CLOEXEC, 0)))
		return;
	if (mp_cfi_file_init(&e->f, info, e->fd.fd)) {
		mp_fd_release(&e->fd);
		return;
	}
	e->base = info->dlpi_addr;
	e->gone = 0;
	e->uses = 1; /* mp_fd_adopt has just checked it */
	e->checked_at = 0;
	e->hdr_size = hdr;
	if (e - files >= files_used)
		__atomic_store_n(&files_used, (int)(e - files) + 1, __ATOMIC_RELEASE);
}

void mp_unwind_forget_file(uintptr_t base)
{
	int i;

	for (i = 0; i < __atomic_load_n(&files_used, __ATOMIC_ACQUIRE); i++)
		if (__atomic_load_n(&files[i].hdr_size, __ATOMIC_ACQUIRE) && files[i].base == base)
			__atomic_store_n(&files[i].gone, 1, __ATOMIC_RELEASE);
}

/* The file to read module info's .eh_frame from, or NULL (its memory). */
static struct mp_cfi_file *file_of(const struct dl_phdr_info *info)
{
	int i;

	for (i = 0; i < __atomic_load_n(&files_used, __ATOMIC_ACQUIRE); i++) {
		struct eh_file *e = &files[i];

		if (!e->hdr_size || e->base != info->dlpi_addr || e->gone ||
		    e->hdr_size != mp_cfi_hdr_size(info))
			continue;
		/* a dup2 onto its number moved the descriptor (hooks_fd.c):
		 * read through the new one, checked now */
		int fd = __atomic_load_n(&e->fd.fd, __ATOMIC_ACQUIRE);

		if (MP_UNLIKELY(fd != e->f.fd)) {
			e->f.fd = fd;
			e->uses = 0;
		}
		if ((e->uses++ & 63) == 0 || e->checked_at != e->f.from_memory) {
			e->checked_at = e->f.from_memory;
			if (!mp_fd_ours(&e->fd)) {
				/* closed or taken over: never used or closed again */
				e->fd.fd = -1;
				e->gone = 1;
				return NULL;
			}
		}
		return &e->f;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Finding the rule of an address                                       */

struct find {
	uintptr_t target;   /* return address - 1 */
	unsigned rule;
	int found;
};

/* dl_iterate_phdr callback: runs with the loader's lock held, so the
 * module cannot be unmapped while its .eh_frame is read (and the table
 * of wide rules has one writer at a time). */
static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;

	(void)size;
	/* the range first: file_of costs more than the test, for every module */
	if (!mp_cfi_covers(info, f->target))
		return 0;
	f->rule = big_put(f->target + 1, mp_cfi_module_rule(info, f->target, file_of(info)));
	f->found = 1;
	return 1;
}

/* The native part of a stack's id: see unwind.h. */
#define HASH_SEED 0x9e3779b97f4a7c15ull

static inline __attribute__((always_inline)) uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

__thread uint64_t mp_unwind_hash __attribute__((tls_model("initial-exec")));

uint64_t mp_unwind_mix(uint64_t h, uint64_t x)
{
	return mix(h, x);
}

uint64_t mp_unwind_hash_frames(void *const *ip, int n)
{
	uint64_t h = HASH_SEED;
	int i;

	for (i = 0; i < n; i++)
		h = mix(h, (uintptr_t)ip[i]);
	return h;
}

/*
 * n rules are cached: the slots in use grow to the stage for n (never
 * shrink). The thread that grows them copies the rules of the old stage's
 * slots to their slots of the new one: found again there, not derived
 * again (a rule_miss walks the loaded objects and their CFI; a Python
 * start-up derives 1,303 rules for the 1,265 it caches, where every rule
 * cached before a stage change was derived twice). A copy that finds its
 * run full is dropped; a lookup meanwhile may miss and derive.
 */
static void cache_grow(uint32_t n)
{
	unsigned want = 64 - (n >= (1u << CACHE_BITS_SECOND) / 2 ? CACHE_BITS :
			      n >= (1u << CACHE_BITS_FIRST) / 2 ? CACHE_BITS_SECOND : CACHE_BITS_FIRST);
	unsigned cur = slot_shift();
	uint32_t i, p, j;

	do {
		if (want >= cur)
			return;
	} while (!__atomic_compare_exchange_n(&cache_shift, &cur, want, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	for (i = 0; i < (1u << (64 - cur)) + CACHE_PROBES; i++) { /* runs may go past the end */
		uint64_t e = mp_atomic_load_relaxed_u64(&cache[i]);

		if (!e)
			continue;
		j = cache_slot((uintptr_t)(e >> R_BITS), want);
		for (p = 0; p < CACHE_PROBES; p++) {
			uint64_t *slot = &cache[(j + p) & (CACHE_SIZE - 1)];

			if (mp_atomic_load_relaxed_u64(slot) == e || mp_atomic_cas_relaxed_u64(slot, 0, e))
				break;
		}
	}
}

static __attribute__((noinline)) unsigned rule_miss(uintptr_t ip)
{
	struct find f = { ip - 1, R_FALLBACK, 0 };
	uint32_t i = cache_slot(ip, slot_shift()), p;
	uint64_t e;
	mp_sigset old;
	int blocked;

	if (ip >= IP_MAX || ip <= 1)
		return R_FALLBACK; /* cannot be cached (the walk counts on 0, 1) */
	/* the loader's lock: never held across a fork, nor left held by a
	 * signal handler that interrupts us and leaves by longjmp */
	if (!mp_gate_enter())
		return R_FALLBACK; /* fork from this very thread: not cached */
	blocked = mp_signals_block(&old);
	dl_iterate_phdr(find_module, &f);
	mp_signals_restore(&old, blocked);
	mp_gate_leave();
	if (!f.found)
		f.rule = R_FRAME_POINTER; /* in no module: JIT code, as V8's, LuaJIT's */
	e = (uint64_t)ip << R_BITS | f.rule;
	if (slot_shift() != 64 - CACHE_BITS)
		cache_grow(__atomic_add_fetch(&cache_fill, 1, __ATOMIC_RELAXED));
	for (p = 0; p < CACHE_PROBES; p++) {
		uint64_t *slot = &cache[(i + p) & (CACHE_SIZE - 1)];

		if (mp_atomic_cas_relaxed_u64(slot, 0, e))
			return f.rule;
	}
	__atomic_store_n(&cache[i], e, __ATOMIC_RELAXED); /* evict */
	return f.rule;
}

static inline unsigned rule_of(uintptr_t ip)
{
	uint32_t i = cache_slot(ip, slot_shift()), p;

	for (p = 0; p < CACHE_PROBES; p++) {
		uint64_t e = mp_atomic_load_relaxed_u64(&cache[(i + p) & (CACHE_SIZE - 1)]);

		if ((e >> R_BITS) == ip)
			return (unsigned)e & ((1u << R_BITS) - 1);
		if (!e)
			break;
	}
	return rule_miss(ip);
}

void mp_unwind_flush(void)
{
	uint32_t i;

	big_flush();
	if (!cache)
		return;
	for (i = 0; i < CACHE_SIZE; i++)
		if (mp_atomic_load_relaxed_u64(&cache[i]))
			__atomic_store_n(&cache[i], 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* This thread's stack                                                  */

/* The main thread's stack grows down from hi to its rlimit (1 GiB at
 * most); nothing else is mapped in that range. Its low end, or lo if
 * lower. */
static uintptr_t main_stack_lo(uintptr_t hi, uintptr_t lo)
{
	struct rlimit rl;
	uintptr_t room = (uintptr_t)1 << 30;

	if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur < room)
		room = rl.rlim_cur;
	return hi - room < lo ? hi - room : lo;
}

/* One line of /proc/self/maps: does it hold sp (arg)? */
static int maps_line(uintptr_t lo, uintptr_t hi, const char *s, void *arg)
{
	uintptr_t sp = (uintptr_t)arg;

	if (sp < lo || sp >= hi)
		return 0;
	stk_hi = hi;
	stk_lo = strstr(s, "[stack]") ? main_stack_lo(hi, lo) : lo;
	return 1;
}

/*
 * The main thread's stack without reading /proc/self/maps (a short
 * process paid for that read at its first allocation): its frames lie
 * below the stack pointer the program started with (__libc_stack_end,
 * set by the loader), and the page that holds it is mapped. 0 when this
 * thread is not the main one or runs elsewhere (a forked child of
 * another thread, a coroutine's stack).
 */
extern void *__libc_stack_end;

static int main_stack(uintptr_t here)
{
	uintptr_t top = ((uintptr_t)__libc_stack_end + 4095) & ~(uintptr_t)4095, lo;

	if (!__libc_stack_end || here >= top || mp_syscall(SYS_gettid) != getpid())
		return 0;
	/* Only inside the range the stack may grow into, where nothing else
	 * is mapped: a coroutine's stack mapped 200 MiB below would make the
	 * range span holes the walk must never read. */
	lo = main_stack_lo(top, top);
	if (here < lo)
		return 0;
	stk_hi = top;
	stk_lo = lo;
	return 1;
}

/*
 * Another thread's stack from its attributes, where the map cannot be
 * read: a program that lowered RLIMIT_NOFILE below the descriptors it
 * has (as sshd's pre-authentication child does) left memprov none to
 * open it with, and every stack of its threads went to libunwind. glibc
 * knows a thread's stack (the main thread's it would read from the map:
 * main_stack has it). Its copy of the thread's CPU set is allocated, in
 * libc, through the hooks: the caller's pass functions (stack.c's
 * mp_pass_begin and mp_pass_end) let those calls through uncounted.
 */
static int (*pass_begin)(void);
static void (*pass_end)(int);

void mp_unwind_set_pass(int (*begin)(void), void (*end)(int))
{
	pass_begin = begin;
	pass_end = end;
}

static int attr_stack(uintptr_t here)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	int ok, g, r;

	if (!pass_begin || !pass_end)
		return 0;
	g = pass_begin();
	r = pthread_getattr_np(pthread_self(), &a);
	pass_end(g);
	if (r)
		return 0;
	ok = !pthread_attr_getstack(&a, &addr, &size) && here >= (uintptr_t)addr &&
	     here - (uintptr_t)addr < size;
	if (ok) {
		stk_lo = (uintptr_t)addr;
		stk_hi = (uintptr_t)addr + size;
	}
	g = pass_begin();
	pthread_attr_destroy(&a);
	pass_end(g);
	return ok;
}

/*
 * Find the mapping that holds this thread's stack pointer. Raw system
 * calls: not a cancellation point, no stdio, no malloc (but where the
 * map cannot be read: attr_stack).
 */
static __attribute__((noinline)) void stack_find(void)
{
	mp_sigset old;
	int blocked;
	int found;

	if (main_stack((uintptr_t)__builtin_frame_address(0))) {
		stk_state = 1;
		return;
	}
	/* once per thread, and slow: a handler that interrupted it and left
	 * by longjmp would leave the state half-set for good */
	blocked = mp_signals_block(&old);
	found = mp_maps_each(maps_line, __builtin_frame_address(0)) ||
		attr_stack((uintptr_t)__builtin_frame_address(0));
	/* A glibc thread's descriptor sits at the top of its stack: the
	 * tighter bound, should the mapping have merged with a neighbour. */
	if (found && (uintptr_t)pthread_self() > (uintptr_t)&old &&
	    (uintptr_t)pthread_self() < stk_hi)
		stk_hi = (uintptr_t)pthread_self();
	stk_state = found ? 1 : -1;
	mp_signals_restore(&old, blocked);
}

int mp_unwind_room(uintptr_t sp, size_t room)
{
	stack_t ss;

	if (stk_state == 1 && sp >= stk_lo && sp < stk_hi)
		return sp - stk_lo >= room;
	if (mp_syscall(SYS_sigaltstack, NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK) &&
	    sp >= (uintptr_t)ss.ss_sp && sp < (uintptr_t)ss.ss_sp + ss.ss_size)
		return sp - (uintptr_t)ss.ss_sp >= room;
	return 1;
}

int mp_unwind_room_known(uintptr_t sp, size_t room)
{
	return stk_state != 1 || sp < stk_lo || sp >= stk_hi || sp - stk_lo >= room;
}

/* ------------------------------------------------------------------ */
/* The walk                                                             */

/*
 * The rule of ip, past the first cache slot (which the walk checked): the
 * other probes, then the FDE. ip is in [2, IP_MAX).
 */
static __attribute__((noinline)) unsigned rule_slow(uintptr_t ip)
{
	return rule_of(ip);
}

/*
 * sp + off, for a frame whose CFA is the stack pointer plus off (a
 * multiple of 8). The sum is the walk's chain from one frame to the next:
 * the next return address is read at the CFA, and off comes from the
 * cache entry the return address before it selected, so each frame
 * waited on two loads one after the other (about 8.5 ns a frame in
 * sqlite3). Here the common offsets are branched on instead: the branch
 * predictor, which has seen the same stacks walked over and over, picks
 * the case before the cache entry is read, and the read at the next CFA
 * starts at once; the entry then only confirms the guess. A wrong guess
 * costs what the two loads cost. Each case is made opaque to the
 * compiler, which would otherwise fold them all back into sp + off.
 */
#define CFA_CASE(k)                                   \
	case 8 * (k):                                 \
		cfa = sp + 8 * (k);                   \
		__asm__("" : "+r"(cfa));              \
		return cfa;
static inline __attribute__((always_inline)) uintptr_t cfa_of(uintptr_t sp, uintptr_t off)
{
	uintptr_t cfa;

	switch (off) {
		CFA_CASE(1) CFA_CASE(2) CFA_CASE(3) CFA_CASE(4) CFA_CASE(5) CFA_CASE(6)
		CFA_CASE(7) CFA_CASE(8) CFA_CASE(9) CFA_CASE(10) CFA_CASE(11) CFA_CASE(12)
		CFA_CASE(13) CFA_CASE(14) CFA_CASE(15) CFA_CASE(16) CFA_CASE(17) CFA_CASE(18)
		CFA_CASE(19) CFA_CASE(20) CFA_CASE(21) CFA_CASE(22) CFA_CASE(23) CFA_CASE(24)
		CFA_CASE(25) CFA_CASE(26) CFA_CASE(27) CFA_CASE(28) CFA_CASE(29) CFA_CASE(30)
		CFA_CASE(31) CFA_CASE(32)
	default:
		return sp + off;
	}
}
#undef CFA_CASE

/*
 * The walk from frame 0 (return address ip, stack pointer sp, rbp bp):
 * out[] gets at most end - out return addresses. stop: whether to stop
 * before the first address in [stop_lo, stop_lo + stop_len) (inlined
 * twice, so that the common case has no such test).
 */
static inline __attribute__((always_inline)) int
walk(void **out, void **end, uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t hi,
     uintptr_t stop_lo, uintptr_t stop_len, const int stop)
{
	const uint64_t *c = cache;
	const unsigned shift = slot_shift();
	void **o = out;
	uintptr_t x, cfa, off;
	uint64_t h = HASH_SEED; /* the id's native part, as stack.c folds it */

	while (MP_LIKELY(ip < IP_MAX)) {
		if (MP_UNLIKELY(o == end) || (stop && MP_UNLIKELY(ip - stop_lo < stop_len)))
			goto done;
		*o++ = (void *)ip;
		/*
		 * Common case: the first slot holds ip; x is then its rule.
		 * No entry holds 0 or 1 (rule_miss), so neither can match:
		 * they are sorted out below, off the common path.
		 */
		x = mp_atomic_load_relaxed_u64(&c[cache_slot(ip, shift)]) ^ ((uint64_t)ip << R_BITS);
		if (MP_LIKELY(x == R_FRAME_POINTER)) {
			/* CFA = rbp + 16, rbp saved at CFA - 16: the general
			 * case below with its bounds, for reads at rbp, rbp + 8 */
			if (MP_UNLIKELY(bp < sp || bp > hi - 16 || bp & 7))
				return -1;
			h = mix(h, ip);
			sp = bp + 16;
			ip = ((const uintptr_t *)bp)[1];
			bp = ((const uintptr_t *)bp)[0];
			continue;
		}
		if (MP_UNLIKELY(ip <= 1)) { /* 0: the outermost frame; 1: give up */
			if (ip)
				return -1;
			mp_unwind_hash = h;
			return (int)(o - out) - 1;
		}
		h = mix(h, ip);
		if (MP_UNLIKELY(x >= (1u << R_BITS)))
			x = rule_slow(ip);
		off = (x >> 1) & (R_OFF_MAX << 3);
		if (MP_LIKELY(!(x & R_CFA_RBP))) {
			/* 8 <= off: sp < cfa, aligned; row_rule made 8k <= off */
			cfa = cfa_of(sp, off);
		rsp_checked:
			if (MP_UNLIKELY(cfa > hi))
				return -1;
		} else {
			if (MP_UNLIKELY(!off)) { /* R_END, R_BIG or R_FALLBACK */
				if (x == R_BIG) {
					if (!big_get(ip, &x, &off))
						return -1;
					if (!(x & R_CFA_RBP)) {
						cfa = sp + off;
						goto rsp_checked;
					}
				} else if (x != R_END) {
					return -1;
				} else {
					mp_unwind_hash = h;
					return (int)(o - out);
				}
			}
			/* An unknown rbp is kept as 1: misaligned, so refused. */
			cfa = bp + off;
			/* sp < cfa <= hi and aligned: the reads below are in [sp, hi). */
			if (MP_UNLIKELY(cfa - sp - 1 >= hi - sp || cfa & 7))
				return -1;
			if (MP_UNLIKELY(8 * R_BP(x) > cfa - sp && R_BP(x) != R_BP_UNKNOWN))
				return -1;
		}
		if (R_BP(x))
			bp = R_BP(x) == R_BP_UNKNOWN ? 1 : *(const uintptr_t *)(cfa - 8 * R_BP(x));
		sp = cfa;
		ip = *(const uintptr_t *)(cfa - 8);
	}
	/* An address that cannot be cached gives up if it is to be looked up. */
	if (o != end && !(stop && ip - stop_lo < stop_len))
		return -1;
done:
	/* 0: the outermost frame; 1: give up */
	if (ip == 1)
		return -1;
	mp_unwind_hash = h;
	return (int)(o - out);
}

int __attribute__((noinline)) mp_unwind(void **out, int max, const struct mp_unwind_args *a)
{
	/*
	 * Built with frame pointers: each of memprov's own frames is [saved
	 * rbp, return address], and the saved rbp is the caller's frame. The
	 * first return address outside memprov is frame 0; its caller's
	 * stack pointer is just above it, its rbp is the one saved below it.
	 * This is what the CFI of our own code says at each call.
	 */
	uintptr_t f = (uintptr_t)__builtin_frame_address(0), next, ip, hi;
	uintptr_t skip_lo = a->skip_lo, skip_len = a->skip_hi - a->skip_lo;
	uintptr_t stop_lo = a->stop_lo, stop_len = a->stop_hi - a->stop_lo;
	int own;

	if (MP_UNLIKELY(stk_state <= 0)) {
		if (stk_state < 0 || !cache)
			return -1;
		stack_find();
		if (stk_state < 0)
			return -1;
	}
	hi = stk_hi;
	if (f < stk_lo || f > hi - 16 || f & 7) /* on another stack (sigaltstack, coroutine) */
		return -1;
	if (MP_UNLIKELY(f - stk_lo < MP_WALK_ROOM))
		return MP_UNWIND_NO_ROOM;
	for (own = 0;; own++) {
		ip = ((const uintptr_t *)f)[1];
		if (ip - skip_lo >= skip_len)
			break;
		next = ((const uintptr_t *)f)[0];
		if (MP_UNLIKELY(own == OWN_MAX || next <= f || next > hi - 16 || next & 7))
			return -1;
		f = next;
	}
	if (stop_len)
		return walk(out, out + max, ip, f + 16, ((const uintptr_t *)f)[0], hi,
			    stop_lo, stop_len, 1);
	return walk(out, out + max, ip, f + 16, ((const uintptr_t *)f)[0], hi, 0, 0, 0);
}

/* ------------------------------------------------------------------ */
/* Set-up                                                               */

/* Called at start-up (constructor) and again in a forked child. */
int mp_unwind_init(void)
{
	if (cache)
		return 0; /* the child keeps the parent's rules: same mappings */
	cache = mp_sys_mmap(NULL, CACHE_SIZE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (cache == MAP_FAILED) {
		cache = NULL;
		return -1;
	}
	/* the first stage's page, by a write: one fault, not a read then a write */
	__atomic_store_n(&cache[0], 0, __ATOMIC_RELAXED);
	return 0;
}

void mp_unwind_cache_range(uintptr_t *addr, size_t *len)
{
	*addr = (uintptr_t)cache;
	*len = cache ? CACHE_SIZE * sizeof(uint64_t) : 0;
}
