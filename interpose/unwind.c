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
#include "unwind_memo.h"

/*
 * Cache: entry = ip << 17 | rule; ip < 2^47 (user space) and never 0,
 * so an entry in use is never 0. Its slots are taken from the first 2^9
 * (4 KiB, one page, written at start so that it costs one page fault,
 * not a read fault then a write fault) until 2^7 rules were cached, then
 * from the first 2^12 (8 pages) until 2^11, then from all 2^16: each new
 * rule in a big table touches a new page, and a short-lived process paid
 * a page fault for most of them (ls: 16 faults for its 8 pages of 2^12
 * slots, one now; its 65 rules stay in the first page). An entry says
 * which ip it holds, so one found at a slot of the old size is still
 * right. The first stage is left a quarter full, not half: past its
 * first two slots a lookup takes the slow path (sqlite3's inserts with
 * the memo off, 30,000 rows under callgrind: 81.5 M instructions there,
 * and 1,948.5 M in all against 1,865.6 M now, 715.2 M bare; ls and
 * python3 -c pass fault in no more pages). The second stays until half
 * full: left at an eighth, it put a Python program's 1,300 rules in all
 * 128 pages of the last (pycalls: 9,970 KB of RSS against 9,400).
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

/*
 * The walks a thread made last, to be replayed rather than made again.
 * A walk is a function of its start (return address, stack pointer, rbp,
 * the thread's stack top, the frames asked and where to stop), of the
 * rules of the return addresses it meets (fixed until mp_unwind_flush),
 * and of the words it reads on the stack: a return address or a saved
 * rbp per frame. A memo entry keeps the start, each word's offset from
 * the start's stack pointer and value, and what the walk gave (frames,
 * id). A walk from the same start whose words all read the same gives
 * the same: the entry's frames are copied after one compare per word,
 * where a walk looks up a rule, bounds-checks and folds each frame (a
 * stack 23 frames deep: 883 instructions a walk, churn). Every offset
 * lies in [start, top) of this thread's stack, as it did for the walk
 * that wrote it; with the same start and top it is still this thread's
 * live stack. Entries go in sets of MEMO_WAYS, chosen by the start; an
 * entry being written is empty (ip 0) until done, and a signal handler
 * that walks meanwhile (memo_busy) walks without the memo.
 *
 * A thread gets its memo after MEMO_AFTER walks (a short-lived thread or
 * process never pays for one), one of MEMO_SLOTS slots of one mapping
 * reserved at the first (memprov's own memory: never a root of the scan
 * at exit, mp_unwind_memo_range; none under an address-space limit); a
 * thread that finds none walks as before. Its slot goes back at thread exit (mp_unwind_thread_exit);
 * another thread taking it over may find entries that still apply (the
 * words decide), never a wrong one.
 */
#define MEMO_ENTRIES 256  /* per thread, 200 KiB (touched as used) */
#define MEMO_AFTER 4096   /* walks on a thread before it gets a memo (ls: 300) */
#define MEMO_SLOTS 32     /* threads with a memo at once (at most 64) */
/*
 * Entries of a set: walks from one start, or from starts whose hash
 * falls together (with 16 sets of 4, sqlite3's inserts replayed 99.99%
 * of their walks in some runs and 77% in others, as the addresses fell).
 */
#define MEMO_WAYS 4
/*
 * A thread whose walks repeat less (fewer than three quarters of a
 * window replayed, the window after the one that fills the memo) walks
 * without it for a pause, then tries again; each pause in a row twice
 * the last (MEMO_PAUSE to MEMO_PAUSE_MAX walks), the first again after a
 * window that replayed enough. A miss costs more than a plain walk (the
 * ways are compared, then the entry is written): churn's 50 allocation
 * sites, 25 chains under one start for 4 ways, replay none (with the memo
 * always on, 2,125 instructions an operation against 1,506 without);
 * sqlite3's inserts replay 99.99%, once its start-up (a window under
 * three quarters) is past.
 */
#define MEMO_WINDOW 256
#define MEMO_PAUSE (1u << 14)
#define MEMO_PAUSE_MAX (1u << 20)

struct memo {
	struct memo_entry e[MEMO_ENTRIES];
};

_Static_assert(sizeof(struct memo_entry) == 800, "the reservation's size (6.25 MiB) is said below");

static struct memo *memo_base;   /* MEMO_SLOTS of them, reserved at the first use */
static uint64_t memo_used;       /* bit i: slot i is a thread's */
static uint32_t memo_gen = 1;    /* mp_unwind_flush: every entry is stale */
static int memo_failed;          /* the reservation failed, or MEMPROV_UNWIND_MEMO=0: no memo */
static int memo_counting;        /* MEMPROV_UNWIND_CHECK=2: walks through it and replays counted */
static uint64_t memo_through, memo_replayed;
static __thread struct memo *memo_mine __attribute__((tls_model("initial-exec")));
/*
 * Walks left before the next look at the memo (0: look now, at every
 * walk while the memo is in use): the only word the common path reads.
 */
static __thread uint32_t memo_countdown __attribute__((tls_model("initial-exec")));
static __thread int memo_started __attribute__((tls_model("initial-exec")));
static __thread int memo_busy __attribute__((tls_model("initial-exec")));
/* walks and replays in this window of MEMO_WINDOW */
static __thread uint32_t memo_tries __attribute__((tls_model("initial-exec")));
static __thread uint32_t memo_hits __attribute__((tls_model("initial-exec")));
static __thread uint32_t memo_pause __attribute__((tls_model("initial-exec"))); /* the next pause */

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
			      n >= (1u << CACHE_BITS_FIRST) / 4 ? CACHE_BITS_SECOND : CACHE_BITS_FIRST);
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
	if (slot_shift() != 64 - CACHE_BITS) {
		cache_grow(__atomic_add_fetch(&cache_fill, 1, __ATOMIC_RELAXED));
		/* its slot at the stage now: put where the old stage had it,
		 * the next lookup missed it and derived it again */
		i = cache_slot(ip, slot_shift());
	}
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

	__atomic_add_fetch(&memo_gen, 1, __ATOMIC_RELEASE);
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
 * A word the walk depends on: with rec, its offset from sp0 and its
 * value go to the memo entry me (nl counts them, past MEMO_LOADS too);
 * the rbp the walk started with (bp_off MEMO_REG), to me->reg and
 * me->bp, apart: a replay tests it once. A return address read counts at
 * once; a saved rbp only once a rule uses rbp (WBP_USE): most are read to
 * be restored and never used (a caller's loop counter in rbp would make
 * every replay miss).
 */
#define WNOTE(o_, v_)                                                         \
	do {                                                                  \
		if (MP_LIKELY(nl < MEMO_LOADS)) {                             \
			me->off[nl] = (o_);                                   \
			me->val[nl] = (v_);                                   \
		}                                                             \
		nl++;                                                         \
	} while (0)
#define WLOAD(dst, at)                                                        \
	do {                                                                  \
		const uintptr_t *w_ = (const uintptr_t *)(at);                \
		(dst) = *w_;                                                  \
		if (rec)                                                      \
			WNOTE((uint32_t)((uintptr_t)w_ - sp0), (dst));        \
	} while (0)
#define WBP(at)                                                               \
	do {                                                                  \
		const uintptr_t *w_ = (const uintptr_t *)(at);                \
		bp = *w_;                                                     \
		if (rec) {                                                    \
			bp_off = (uint32_t)((uintptr_t)w_ - sp0);             \
			bp_pend = 1;                                          \
		}                                                             \
	} while (0)
#define WBP_USE()                                                             \
	do {                                                                  \
		if (rec && bp_pend) {                                         \
			if (bp_off == MEMO_REG) {                             \
				me->reg = 1;                                  \
				me->bp = bp;                                  \
			} else {                                              \
				WNOTE(bp_off, bp);                            \
			}                                                     \
			bp_pend = 0;                                          \
		}                                                             \
	} while (0)
#define MEMO_REG 0xffffffffu

/*
 * The walk from frame 0 (return address ip, stack pointer sp, rbp bp):
 * out[] gets at most end - out return addresses. stop: whether to stop
 * before the first address in [stop_lo, stop_lo + stop_len) (inlined
 * twice, so that the common case has no such test). rec: the words it
 * depends on go to the memo entry me (memo_walk; 0 everywhere else, and
 * then the macros above are plain reads).
 */
static inline __attribute__((always_inline)) int
walk(void **out, void **end, uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t hi,
     uintptr_t stop_lo, uintptr_t stop_len, const int stop, struct memo_entry *me, const int rec)
{
	const uint64_t *c = cache;
	const unsigned shift = slot_shift();
	const uintptr_t sp0 = sp;
	void **o = out;
	uintptr_t x, cfa, off;
	uint64_t h = HASH_SEED; /* the id's native part, as stack.c folds it */
	unsigned nl = 0, bp_pend = 1;
	uint32_t bp_off = MEMO_REG; /* where bp came from: the start's register */
	long lead = 0; /* leading frames in the stop range walked past (unwind.h) */

	while (MP_LIKELY(ip < IP_MAX)) {
		if (MP_UNLIKELY(o == end))
			goto done;
		if (stop && MP_UNLIKELY(ip - stop_lo < stop_len)) {
			if (o - out != lead)
				goto done;
			if (lead == MP_UNWIND_LEAD)
				goto done; /* and none kept */
			lead++;
		}
		*o++ = (void *)ip;
		/*
		 * Common case: the first slot holds ip; x is then its rule.
		 * No entry holds 0 or 1 (rule_miss), so neither can match:
		 * they are sorted out below, off the common path.
		 */
		x = mp_atomic_load_relaxed_u64(&c[cache_slot(ip, shift)]) ^ ((uint64_t)ip << R_BITS);
		if (MP_UNLIKELY(x != R_FRAME_POINTER)) {
			/*
			 * The second slot: an address whose first slot another
			 * took lies there (a tenth of them at the first stage's
			 * load). Read only on a mismatch, after the common
			 * case's test: such a frame took the slow path at every
			 * walk, and how many there were depended on where the
			 * code happened to be loaded (churn: two such frames a
			 * walk in one build of libmemprov.so, 63 instructions an
			 * operation in rule_slow; about none in another).
			 */
			if (MP_UNLIKELY(x >= (1u << R_BITS)))
				x = mp_atomic_load_relaxed_u64(
					    &c[(cache_slot(ip, shift) + 1) & (CACHE_SIZE - 1)]) ^
				    ((uint64_t)ip << R_BITS);
			if (x != R_FRAME_POINTER)
				goto general;
		}
		/* CFA = rbp + 16, rbp saved at CFA - 16: the general case
		 * below with its bounds, for reads at rbp, rbp + 8 */
		WBP_USE();
		if (MP_UNLIKELY(bp < sp || bp > hi - 16 || bp & 7))
			return -1;
		h = mix(h, ip);
		sp = bp + 16;
		WLOAD(ip, bp + 8);
		WBP(bp);
		continue;
	general:
		if (MP_UNLIKELY(ip <= 1)) { /* 0: the outermost frame; 1: give up */
			if (ip)
				return -1;
			if (stop && lead && o - out - 1 == lead) {
				o = out + 1; /* only the leading frames: none */
				h = HASH_SEED;
			}
			mp_unwind_hash = h;
			if (rec)
				me->nloads = (uint8_t)(nl > MEMO_LOADS ? 0xff : nl);
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
					if (stop && lead && o - out == lead) {
						o = out; /* only the leading frames: none */
						h = HASH_SEED;
					}
					mp_unwind_hash = h;
					if (rec)
						me->nloads = (uint8_t)(nl > MEMO_LOADS ? 0xff : nl);
					return (int)(o - out);
				}
			}
			/* An unknown rbp is kept as 1: misaligned, so refused. */
			WBP_USE();
			cfa = bp + off;
			/* sp < cfa <= hi and aligned: the reads below are in [sp, hi). */
			if (MP_UNLIKELY(cfa - sp - 1 >= hi - sp || cfa & 7))
				return -1;
			if (MP_UNLIKELY(8 * R_BP(x) > cfa - sp && R_BP(x) != R_BP_UNKNOWN))
				return -1;
		}
		if (R_BP(x)) {
			if (R_BP(x) == R_BP_UNKNOWN) {
				bp = 1;
				bp_pend = 0; /* no word's */
			} else {
				WBP(cfa - 8 * R_BP(x));
			}
		}
		sp = cfa;
		WLOAD(ip, cfa - 8);
	}
	/* An address that cannot be cached gives up if it is to be looked up. */
	if (o != end && !(stop && ip - stop_lo < stop_len))
		return -1;
done:
	/* 0: the outermost frame; 1: give up */
	if (ip == 1)
		return -1;
	if (stop && lead && o - out == lead) {
		o = out; /* only the leading frames (or one more in the range): none */
		h = HASH_SEED;
	}
	mp_unwind_hash = h;
	if (rec)
		me->nloads = (uint8_t)(nl > MEMO_LOADS ? 0xff : nl);
	return (int)(o - out);
}
#undef WNOTE
#undef WLOAD
#undef WBP
#undef WBP_USE

/* ------------------------------------------------------------------ */
/* The memo                                                             */

/* This thread's memo, taken now if it has walked enough; NULL: none. */
static __attribute__((noinline)) struct memo *memo_take(void)
{
	struct memo *base = __atomic_load_n(&memo_base, __ATOMIC_ACQUIRE);
	uint64_t used;
	unsigned i;

	if (__atomic_load_n(&memo_failed, __ATOMIC_RELAXED))
		return NULL;
	if (!base && mp_as_limited()) {
		/* under an address-space limit the 6.25 MiB it reserves would be
		 * the program's to miss: no memo, walks as before */
		__atomic_store_n(&memo_failed, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (!base) {
		void *m = mp_sys_mmap(NULL, MEMO_SLOTS * sizeof(struct memo), PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		void *expected = NULL;

		if (m == MAP_FAILED) {
			__atomic_store_n(&memo_failed, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		if (!__atomic_compare_exchange_n(&memo_base, &expected, m, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			mp_sys_munmap(m, MEMO_SLOTS * sizeof(struct memo)); /* another thread's won */
			base = expected;
		} else {
			base = m;
		}
	}
	used = __atomic_load_n(&memo_used, __ATOMIC_RELAXED);
	do {
		uint64_t avail = ~used & (~0ull >> (64 - MEMO_SLOTS));

		if (!avail)
			return NULL;
		i = (unsigned)__builtin_ctzll(avail);
	} while (!__atomic_compare_exchange_n(&memo_used, &used, used | 1ull << i, 0,
					      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
	return &base[i];
}

void mp_unwind_thread_exit(void)
{
	struct memo *m = memo_mine;

	memo_mine = NULL;
	memo_countdown = 0;
	memo_started = memo_tries = memo_hits = memo_pause = 0;
	if (m)
		__atomic_fetch_and(&memo_used, ~(1ull << (m - memo_base)), __ATOMIC_RELEASE);
}

void mp_unwind_memo_range(uintptr_t *addr, size_t *len)
{
	struct memo *base = __atomic_load_n(&memo_base, __ATOMIC_ACQUIRE);

	*addr = (uintptr_t)base;
	*len = base ? MEMO_SLOTS * sizeof(struct memo) : 0;
}

/*
 * n frames copied a word at a time, in a loop the compiler keeps a loop:
 * as a memcpy it became a `rep movsq`, whose start-up was a quarter of a
 * replay's time (sqlite3's inserts: 4.4 million replays, perf annotate).
 */
static inline __attribute__((always_inline)) void copy_frames(void **to, void *const *from,
							      unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		to[i] = from[i];
		__asm__("" : "+r"(i)); /* not a memcpy */
	}
}

static inline uint32_t memo_slot(uintptr_t ip, uintptr_t sp)
{
	return (uint32_t)(((uint64_t)(ip ^ sp << 20) * 0x9e3779b97f4a7c15ull) >> 56);
}

/*
 * The walk from (ip, sp, bp) through the memo: the entry's frames when
 * its start and every word it read are the same, else a walk that
 * writes the entry.
 */
static inline __attribute__((always_inline)) int
memo_walk(struct memo *m, void **out, int max, uintptr_t ip, uintptr_t sp, uintptr_t bp,
	  uintptr_t hi, uintptr_t stop_lo, uintptr_t stop_len)
{
	struct memo_entry *set = &m->e[memo_slot(ip, sp) & (MEMO_ENTRIES - MEMO_WAYS)], *e;
	uint32_t gen = __atomic_load_n(&memo_gen, __ATOMIC_ACQUIRE);
	unsigned w;
	int r;

	for (w = 0; w < MEMO_WAYS; w++) {
		e = &set[w];
		if (e->ip != ip || e->sp != sp || e->hi != hi || e->max != (unsigned)max ||
		    e->stop_lo != stop_lo || e->stop_len != stop_len || e->gen != gen)
			continue;
		if (memo_differs(e, sp, bp))
			continue;
		copy_frames(out, e->frames, e->n);
		mp_unwind_hash = e->hash;
		memo_hits++;
		if (MP_UNLIKELY(memo_counting))
			__atomic_add_fetch(&memo_replayed, 1, __ATOMIC_RELAXED);
		return e->n;
	}
	/* the way after the one written last in this set */
	w = (set[0].next_way++) % MEMO_WAYS;
	e = &set[w];
	e->ip = 0; /* empty until written whole */
	e->nloads = 0;
	e->reg = 0;
	if (stop_len)
		r = walk(out, out + max, ip, sp, bp, hi, stop_lo, stop_len, 1, e, 1);
	else
		r = walk(out, out + max, ip, sp, bp, hi, 0, 0, 0, e, 1);
	if (r < 0 || r > MEMO_FRAMES || e->nloads > MEMO_LOADS)
		return r;
	e->sp = sp;
	e->hi = hi;
	e->max = (uint16_t)max;
	e->stop_lo = stop_lo;
	e->stop_len = stop_len;
	e->gen = gen;
	e->n = (uint8_t)r;
	e->hash = mp_unwind_hash;
	copy_frames(e->frames, out, (unsigned)r);
	e->ip = ip;
	return r;
}

void mp_unwind_memo_enable(int on, int count)
{
	__atomic_store_n(&memo_failed, !on, __ATOMIC_RELAXED);
	__atomic_store_n(&memo_counting, count, __ATOMIC_RELAXED);
}

void mp_unwind_memo_counts(uint64_t *through, uint64_t *replayed)
{
	*through = __atomic_load_n(&memo_through, __ATOMIC_RELAXED);
	*replayed = __atomic_load_n(&memo_replayed, __ATOMIC_RELAXED);
}

/*
 * The walk when the countdown is out: the thread's first (the countdown
 * starts), after MEMO_AFTER (the memo is taken, if one is free), after a
 * pause (the memo again), or one through the memo, counted in its window:
 * too few replays pause it for MEMO_PAUSE walks.
 */
static __attribute__((noinline)) int memo_use(void **out, int max, uintptr_t ip, uintptr_t sp,
					      uintptr_t bp, uintptr_t hi, uintptr_t stop_lo,
					      uintptr_t stop_len)
{
	int r;

	if (!memo_started) {
		memo_started = 1;
		memo_countdown = MEMO_AFTER;
		memo_pause = MEMO_PAUSE;
		goto plain;
	}
	if (memo_busy || max > 0xffff)
		goto plain; /* a handler that interrupted a walk through it */
	if (!memo_mine) {
		memo_mine = memo_take();
		if (!memo_mine) {
			memo_countdown = UINT32_MAX; /* none free: not asked again */
			goto plain;
		}
	}
	memo_busy = 1;
	if (MP_UNLIKELY(memo_counting))
		__atomic_add_fetch(&memo_through, 1, __ATOMIC_RELAXED);
	r = memo_walk(memo_mine, out, max, ip, sp, bp, hi, stop_lo, stop_len);
	if (MP_UNLIKELY(++memo_tries == 2 * MEMO_WINDOW)) {
		/* the first window after a start or a pause fills the memo:
		 * only the second is judged */
		if (memo_hits < MEMO_WINDOW / 4 * 3) {
			memo_countdown = memo_pause;
			if (memo_pause < MEMO_PAUSE_MAX)
				memo_pause *= 2;
			memo_tries = 0; /* a warm window again when it resumes */
		} else {
			memo_pause = MEMO_PAUSE;
			memo_tries = MEMO_WINDOW;
		}
		memo_hits = 0;
	} else if (memo_tries == MEMO_WINDOW) {
		memo_hits = 0;
	}
	memo_busy = 0;
	return r;
plain:
	if (stop_len)
		return walk(out, out + max, ip, sp, bp, hi, stop_lo, stop_len, 1, NULL, 0);
	return walk(out, out + max, ip, sp, bp, hi, 0, 0, 0, NULL, 0);
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
	if (MP_UNLIKELY(!memo_countdown))
		return memo_use(out, max, ip, f + 16, ((const uintptr_t *)f)[0], hi, stop_lo, stop_len);
	memo_countdown--;
	if (stop_len)
		return walk(out, out + max, ip, f + 16, ((const uintptr_t *)f)[0], hi,
			    stop_lo, stop_len, 1, NULL, 0);
	return walk(out, out + max, ip, f + 16, ((const uintptr_t *)f)[0], hi, 0, 0, 0, NULL, 0);
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
