/*
 * reach.c - the reachability scan at exit, step by step, and its records.
 *
 * On exit(), _exit() or the return from main (never on SIGKILL, where the
 * trace stays as it is), once per process:
 *
 *  1. the exiting thread's registers and stack pointer as the program had
 *     them when it called memprov's exit hook (libunwind, back to the
 *     first frame outside libmemprov.so), so memprov's own frames are not
 *     roots; after exit() or the return from main they were taken then
 *     (mp_reach_note_exit) and the scan runs later, once the exit handlers
 *     and the program's destructors have run, where valgrind and
 *     LeakSanitizer look too: frames below that stack pointer (exit's own,
 *     the handlers') are dead to the program and are not roots;
 *  2. inside a dl_iterate_phdr callback, so that no stopped thread can hold
 *     the loader's lock the scan needs: stop the other threads
 *     (stop_world.c), read the live blocks back from the trace
 *     (reach_live.c), the memory map (reach_maps.c), the roots
 *     (reach_roots.c), mark and classify (reach_mark.c), let the threads
 *     go;
 *  3. write one MP_REC_REACH_BLOCKS record per kind and lost class (up to
 *     MP_REACH_BLOCKS_MAX addresses each), then MP_REC_REACH.
 *
 * The scan has a time bound (MEMPROV_REACH_TIMEOUT_MS) and a memory bound
 * (MEMPROV_REACH_MEMORY_MB); past either, or when the trace cannot be read
 * back, MP_REC_REACH says why and no block gets a class. It never changes
 * the program's output, exit status, files or signals; its memory is its
 * own mappings, unmapped before it returns.
 *
 * Layer: 4 capture (docs/ARCHITECTURE.md): calls the reach_* leaves and
 * stop_world, the trace file (to read it back), the writer (its records),
 * config, libc_real, elfsym, intern and unwind for where their tables
 * are, and unwind_lib (libunwind, where no entry stub kept the program's
 * registers); called by init.c only.
 */
#include <errno.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "config.h"
#include "elfsym.h"
#include "intern.h"
#include "libc_real.h"
#include "reach.h"
#include "reach_int.h"
#include "stack.h"
#include "trace_file.h"
#include "unwind.h"
#include "unwind_lib.h"
#include "writer.h"

/*
 * A forked child's scan reads its ancestors' traces up to the fork (their
 * blocks are in its memory), newest first, as long as what they wrote
 * before the fork totals at most MEMPROV_REACH_INHERIT_MB (1 MiB).
 * Reading them back costs the child its parent's whole history at every
 * exit (3 ms a MiB here): a shell whose trace was 61 MB paid 0.2 s at
 * each $(...), 36 times the bare script's time for 30 of them. Past it,
 * or with a trace closed or stopped, the inherited blocks are not in the
 * live set: the allocator's memory is scanned as roots instead
 * (rroots.heap_roots), and only the pages the child wrote since the fork
 * are read (rmaps.own_pages_only): what the child changed, not what its
 * parent did before.
 * A child running CPython does not read them at all: reports judge a
 * Python program by what is live, not by its classes, and marking a whole
 * inherited interpreter (numpy imported: 230 ms) at each worker's exit
 * made a multiprocessing pool pay that for nothing.
 */
#define REACH_KEEP_MAX (4ull << 20) /* a scan this small is not unmapped */

struct job {
	int ran;
	int sandboxed;          /* a seccomp filter: no ptrace helper, no process_vm_readv */
	int status;             /* enum mp_reach_status */
	uint64_t deadline, scan_ts;
	struct rthread self;
	uint64_t tls_static;    /* glibc's static TLS size, 0 if not known */
	struct rlive live;
	struct rstats st;
};

static int once;

/* The exiting thread's registers where it called exit or main returned. */
static struct {
	int32_t tid;
	int ok;
	struct rthread t;
} noted;

__thread struct mp_entry_regs mp_entry_regs __attribute__((tls_model("initial-exec")));

/*
 * A safety net, not a part of the design: should the scan itself fault
 * (a bug in memprov, or memory the map did not describe), the program
 * must still exit as it would have. SIGSEGV and SIGBUS go to a handler of
 * memprov's only while this thread scans (installed after the ptrace
 * helper was started, so it never inherits it), and are given back as
 * they were.
 */
static sigjmp_buf fault_jmp;
static volatile pid_t fault_tid;
static struct sigaction old_segv, old_bus;

static void on_fault(int sig)
{
	if ((pid_t)mp_syscall(SYS_gettid) == fault_tid)
		mp_real_siglongjmp(fault_jmp, sig);
	/* not the scanning thread: its own handling, and the fault again */
	mp_real_sigaction(SIGSEGV, &old_segv, NULL);
	mp_real_sigaction(SIGBUS, &old_bus, NULL);
}

/*
 * The real sigaction and siglongjmp, not memprov's hooks (hooks_signal.c):
 * what the kernel had is put back exactly, trampolines included.
 */
static int fault_net(int on)
{
	struct sigaction sa;

	if (!mp_real_sigaction || !mp_real_siglongjmp)
		return -1;
	if (!on) {
		mp_real_sigaction(SIGSEGV, &old_segv, NULL);
		mp_real_sigaction(SIGBUS, &old_bus, NULL);
		fault_tid = 0;
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	fault_tid = (pid_t)mp_syscall(SYS_gettid);
	if (mp_real_sigaction(SIGSEGV, &sa, &old_segv))
		return -1;
	if (mp_real_sigaction(SIGBUS, &sa, &old_bus)) {
		mp_real_sigaction(SIGSEGV, &old_segv, NULL);
		return -1;
	}
	return 0;
}

static int status_of(int r)
{
	switch (r) {
	case RX_OK: return MP_REACH_DONE;
	case RX_TIMEOUT: return MP_REACH_TIMEOUT;
	case RX_NOTRACE: return MP_REACH_NOTRACE;
	case RX_NOMAPS: return MP_REACH_NOMAPS;
	default: return MP_REACH_NOMEM;
	}
}

#if defined(__x86_64__)

/*
 * The program's registers at its call into memprov: those the exit hook
 * stored as it was entered (reach.h), or else memprov's frames unwound
 * with libunwind: the first frame outside libmemprov.so has the
 * callee-saved registers and stack pointer the program had. 0, or -1.
 * lib: also pass over the frames of the object that holds this address
 * (libc, for an exit libc made from inside itself: its frames, err's and
 * exit's, are not the program's), unless no frame outside it is left (a
 * thread's start code calls exit after the last thread returns).
 */
static MP_REALIGN int own_regs_past(struct rthread *t, const void *lib)
{
	static const int regs[] = { UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
				    UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15 };
	const struct mp_unw *u;
	unw_context_t uc;
	unw_cursor_t cur;
	uintptr_t lo, hi, llo = 0, lhi = 0;
	uint64_t first[7];
	int i, k, have = 0;

	if (mp_entry_regs.set) {
		/* stored by the exit hook's first instructions (reach.h) */
		mp_entry_regs.set = 0;
		for (k = 0; k < 6; k++)
			t->regs[t->nregs++] = mp_entry_regs.regs[k];
		t->sp = mp_entry_regs.sp;
		return 0;
	}
	if (!(u = mp_unw_get()) || mp_elf_text_of((const void *)&own_regs_past, &lo, &hi) ||
	    u->getcontext(&uc) || u->init_local(&cur, &uc))
		return -1;
	if (lib && mp_elf_text_of(lib, &llo, &lhi))
		llo = lhi = 0;
	for (i = 0; i < 64; i++) {
		unw_word_t ip, v;

		if (u->get_reg(&cur, UNW_REG_IP, &ip))
			break;
		if (ip < lo || ip >= hi) {
			uint64_t r[7];

			for (k = 0; k < 6; k++) {
				if (u->get_reg(&cur, regs[k], &v))
					goto out;
				r[k] = v;
			}
			if (u->get_reg(&cur, UNW_REG_SP, &v))
				goto out;
			r[6] = v;
			if (ip < llo || ip >= lhi) {
				memcpy(first, r, sizeof(first));
				have = 1;
				break;
			}
			if (!have) {
				/* the first frame outside memprov: kept if nothing follows */
				memcpy(first, r, sizeof(first));
				have = 1;
			}
		}
		if (u->step(&cur) <= 0)
			break;
	}
out:
	if (!have)
		return -1;
	for (k = 0; k < 6; k++)
		t->regs[t->nregs++] = first[k];
	t->sp = first[6];
	return 0;
}

static int own_regs(struct rthread *t)
{
	return own_regs_past(t, NULL);
}

/* When unwinding fails: scan from here, memprov's frames included. */
static void own_regs_here(struct rthread *t)
{
	uint64_t r[6];

	__asm__ volatile("movq %%rbx, 0(%0)\n\tmovq %%rbp, 8(%0)\n\tmovq %%r12, 16(%0)\n\t"
			 "movq %%r13, 24(%0)\n\tmovq %%r14, 32(%0)\n\tmovq %%r15, 40(%0)"
			 : : "r"(r) : "memory");
	memcpy(t->regs, r, sizeof(r));
	t->nregs = 6;
	t->sp = (uintptr_t)__builtin_frame_address(0);
}

static uint64_t thread_pointer(void)
{
	uint64_t tp;

	__asm__("movq %%fs:0, %0" : "=r"(tp));
	return tp;
}

/* glibc's static TLS size (what LeakSanitizer asks too), 0 if not known. */
static uint64_t tls_static_size(void)
{
	void (*get)(size_t *, size_t *) =
		(void (*)(size_t *, size_t *))mp_elf_lookup("_dl_get_tls_static_info");
	size_t size = 0, align = 0;

	if (get)
		get(&size, &align);
	return size;
}

/* The program's own ranges of the break (mp_reach_program_break). */
static uint64_t prog_brk[MP_REACH_BRK_MAX][2];
static size_t n_prog_brk;

void mp_reach_program_break(uint64_t lo, uint64_t hi, int add)
{
	size_t i, k;

	if (!add) { /* the break came down to lo: nothing above it is left */
		for (i = k = 0; i < n_prog_brk; i++) {
			if (prog_brk[i][0] >= lo)
				continue;
			prog_brk[k][0] = prog_brk[i][0];
			prog_brk[k++][1] = prog_brk[i][1] < lo ? prog_brk[i][1] : lo;
		}
		n_prog_brk = k;
		return;
	}
	if (lo >= hi)
		return;
	if (n_prog_brk && prog_brk[n_prog_brk - 1][1] == lo)
		prog_brk[n_prog_brk - 1][1] = hi;
	else if (n_prog_brk < MP_REACH_BRK_MAX) {
		prog_brk[n_prog_brk][0] = lo;
		prog_brk[n_prog_brk++][1] = hi;
	}
}

/* A malloc replacement's own mappings (mp_reach_allocator_map), sorted by start, apart. */
static uint64_t alloc_maps[MP_REACH_ALLOC_MAX][2];
static size_t n_alloc_maps;
static int alloc_lock;
static int alloc_lost;    /* a range could not be taken out: the table is not trusted */
static int alloc_dropped; /* a range could not be kept: it is a root */

static int alloc_take(void)
{
	unsigned n;

	/* held for a few hundred instructions: spin, then let a preempted holder run */
	for (n = 0; n < 1000 + 100000; n++) {
		if (!__atomic_exchange_n(&alloc_lock, 1, __ATOMIC_ACQUIRE))
			return 1;
		if (n < 1000)
			__builtin_ia32_pause();
		else
			mp_syscall(SYS_sched_yield);
	}
	return 0; /* a holder stopped for good (a debugger): the caller says so */
}

/* A malloc replacement is in use (hooks_libc.c): glibc's arena may never be. */
static int replacement;

void mp_reach_note_replacement(void)
{
	replacement = 1;
}

/*
 * Take [lo, hi) out of every range (a split with no slot left keeps its
 * left part): the bytes of it the ranges held.
 */
static uint64_t alloc_cut(uint64_t lo, uint64_t hi)
{
	size_t i, k, n = n_alloc_maps;
	uint64_t held = 0;

	for (i = 0; i < n; i++) {
		uint64_t a = alloc_maps[i][0], b = alloc_maps[i][1];

		if (b <= lo || a >= hi)
			continue;
		held += (b < hi ? b : hi) - (a > lo ? a : lo);
		if (a < lo && b > hi) { /* the middle goes: the right part needs a slot */
			if (n_alloc_maps >= MP_REACH_ALLOC_MAX) {
				alloc_maps[i][1] = lo; /* the right part a root, as before */
				alloc_dropped = 1;
				break;
			}
			memmove(alloc_maps[i + 2], alloc_maps[i + 1],
				(n_alloc_maps - i - 1) * sizeof(alloc_maps[0]));
			alloc_maps[i][1] = lo;
			alloc_maps[i + 1][0] = hi;
			alloc_maps[i + 1][1] = b;
			n_alloc_maps++;
			break;
		}
		if (a < lo)
			alloc_maps[i][1] = lo;
		else if (b > hi)
			alloc_maps[i][0] = hi;
		else
			alloc_maps[i][0] = alloc_maps[i][1] = 0; /* gone: dropped below */
	}
	for (i = k = 0; i < n_alloc_maps; i++)
		if (alloc_maps[i][0] < alloc_maps[i][1]) {
			alloc_maps[k][0] = alloc_maps[i][0];
			alloc_maps[k++][1] = alloc_maps[i][1];
		}
	n_alloc_maps = k;
	return held;
}

/* Add [lo, hi), which no range overlaps (alloc_cut first), joining its neighbours. */
static void alloc_add(uint64_t lo, uint64_t hi)
{
	size_t i = 0;

	while (i < n_alloc_maps && alloc_maps[i][1] < lo)
		i++;
	if (i < n_alloc_maps && alloc_maps[i][1] == lo) {
		alloc_maps[i][1] = hi;
		if (i + 1 < n_alloc_maps && alloc_maps[i + 1][0] == hi) {
			alloc_maps[i][1] = alloc_maps[i + 1][1];
			memmove(alloc_maps[i + 1], alloc_maps[i + 2],
				(n_alloc_maps - i - 2) * sizeof(alloc_maps[0]));
			n_alloc_maps--;
		}
		return;
	}
	if (i < n_alloc_maps && alloc_maps[i][0] == hi) {
		alloc_maps[i][0] = lo;
		return;
	}
	if (n_alloc_maps >= MP_REACH_ALLOC_MAX) {
		alloc_dropped = 1; /* left out: a root, as before */
		return;
	}
	memmove(alloc_maps[i + 1], alloc_maps[i], (n_alloc_maps - i) * sizeof(alloc_maps[0]));
	alloc_maps[i][0] = lo;
	alloc_maps[i][1] = hi;
	n_alloc_maps++;
}

int mp_reach_allocator_map(uint64_t lo, uint64_t hi, int add)
{
	mp_sigset old;
	uint64_t held;
	int blocked;

	/* the kernel maps and unmaps whole pages; an unaligned start or no length fails */
	if ((lo & 4095) || lo >= hi || (!add && !__atomic_load_n(&n_alloc_maps, __ATOMIC_RELAXED)))
		return 0;
	hi = (hi + 4095) & ~(uint64_t)4095;
	blocked = mp_signals_block(&old); /* a handler's mmap on this thread cannot spin on it */
	if (!alloc_take()) {
		__atomic_store_n(add ? &alloc_dropped : &alloc_lost, 1, __ATOMIC_RELAXED);
		mp_signals_restore(&old, blocked);
		return 0;
	}
	held = alloc_cut(lo, hi);
	if (add)
		alloc_add(lo, hi);
	__atomic_store_n(&alloc_lock, 0, __ATOMIC_RELEASE);
	mp_signals_restore(&old, blocked);
	return held == hi - lo;
}

/*
 * In a forked child (init.c), alone now: a lock another thread held at
 * the fork is released, and the table it was changing is not trusted.
 * Not taken around the fork: a replacement maps memory under its own
 * lock, which its fork handler takes after memprov's, so holding this
 * one across the fork stalled forks (tcmalloc: up to 49 s).
 */
void mp_reach_fork_child(void)
{
	if (__atomic_load_n(&alloc_lock, __ATOMIC_RELAXED)) {
		alloc_lost = 1;
		__atomic_store_n(&alloc_lock, 0, __ATOMIC_RELEASE);
	}
}

/* Step 2, with the loader's lock held (see the file's head). */
MP_REALIGN static int scan_locked(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct job *j = arg;
	struct rthread *th;
	struct sw_world *w;
	struct rmaps maps;
	struct rroots roots;
	struct stat st;
	int fd = mp_trace_fd(), r;
	size_t n = 0, i;

	(void)info;
	(void)size;
	if (j->ran++)
		return 1;
	memset(&maps, 0, sizeof(maps));
	maps.pagemap_fd = maps.mem_fd = -1;
	memset(&roots, 0, sizeof(roots));
	roots.tls_static = j->tls_static;
	roots.prog_brk = (const uint64_t (*)[2])prog_brk;
	roots.n_prog_brk = n_prog_brk;
	th = rmem_alloc((SW_MAX_THREADS + 1) * sizeof(*th));
	if (!th) {
		j->status = MP_REACH_NOMEM;
		return 1;
	}
	th[0] = j->self;
	w = sw_stop(th + 1, SW_MAX_THREADS, &n, j->deadline, !j->sandboxed);
	/* the other threads are stopped: a range half updated is at worst left out */
	roots.alloc_maps = (const uint64_t (*)[2])alloc_maps;
	roots.n_alloc_maps = __atomic_load_n(&alloc_lost, __ATOMIC_RELAXED) ? 0 : n_alloc_maps;
	roots.replacement = replacement;
	if (alloc_lost || alloc_dropped)
		j->st.notes |= MP_REACH_N_ALLOC_LOST;
	j->st.threads = (uint32_t)n + 1;
	for (i = 0; i <= n; i++) {
		j->st.stopped += th[i].how == RT_STOPPED;
		j->st.stack_only += th[i].how == RT_STACK_ONLY;
	}
	j->scan_ts = mp_now();
	mp_stamp_after(j->scan_ts); /* what comes after the scan is stamped after it */
	if (sigsetjmp(fault_jmp, 1)) {
		fault_net(0);
		rmaps_close(&maps);
		sw_resume(w);
		j->status = MP_REACH_FAULT;
		return 1;
	}
	if (fault_net(1)) {
		sw_resume(w);
		j->status = MP_REACH_FAULT;
		return 1;
	}
	{
		struct rl_source src[MP_MAX_ANCESTORS + 1];
		struct mp_ancestor anc[MP_MAX_ANCESTORS];
		int k, na = mp_python_capture ? 0 : mp_trace_ancestors(anc, MP_MAX_ANCESTORS);
		int n = 0, read = 0;
		uint64_t bytes = 0;

		/* the newest ancestors whose traces before the fork are small enough */
		for (k = na; k > 0 && bytes + anc[k - 1].until_off <=
					  (uint64_t)mp_config.reach_inherit_mb << 20; k--)
			bytes += anc[k - 1].until_off;
		for (; k < na; k++) {
			uint64_t ts;

			/*
			 * Up to the FORK record, as the analyzer: the other
			 * threads' events while fork copied the address space
			 * (milliseconds; the thread caches keep serving) count
			 * for both. Cut at the instant before the fork, the
			 * scan kept the blocks they freed and called them lost.
			 * What they allocated meanwhile may be missing from the
			 * child's copy of the pointer that holds it (its page
			 * copied before the store): never called lost here.
			 */
			if (!rt_fork_ts(anc[k].fd, anc[k].thread, anc[k].until_ts, anc[k].until_off,
					anc[k].child_pid, anc[k].fork_serial, &ts))
				src[n++] = (struct rl_source){ anc[k].fd, NULL, ts, UINT64_MAX, 0,
							       anc[k].until_ts };
			else
				src[n++] = (struct rl_source){ anc[k].fd, NULL, anc[k].until_ts,
							       anc[k].until_off, 0, 0 };
		}
		src[n] = (struct rl_source){ fd, mp_trace_view, UINT64_MAX, UINT64_MAX,
					     j->st.stopped == j->st.threads, 0 };
		r = rl_build(&j->live, src, n + 1, j->deadline, &read);
		if (na && read == na)
			j->st.notes |= MP_REACH_N_INHERITED;
		if (read < na || mp_trace_forks() > na) {
			roots.heap_roots = 1;
			j->st.notes |= MP_REACH_N_HEAP_ROOTS;
		}
	}
	if (!r && !j->live.n)
		goto done; /* nothing live: nothing to classify */
	if (!r)
		r = rmaps_read(&maps, !j->sandboxed);
	maps.all_safe = j->st.stopped != j->st.threads;
	maps.own_pages_only = roots.heap_roots && !r && rmaps_exclusive_works(&maps);
	if (!r)
		r = rroots_build(&roots, &j->live, &maps, th, n + 1,
				 fd >= 0 && !mp_sys_fstat(fd, &st) ? (uint64_t)st.st_ino : 0);
	j->st.notes |= roots.notes;
	if (!r)
		r = rmark_run(&j->live, &roots, &maps, &j->st, j->deadline);
done:
	fault_net(0);
	rmaps_close(&maps);
	sw_resume(w);
	j->status = status_of(r);
	return 1;
}

static int find_valgrind(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	return info->dlpi_name && strstr(info->dlpi_name, "/vgpreload_core");
}

void mp_reach_note_exit_past(const void *lib)
{
	int g, r;

	memset(&noted, 0, sizeof(noted));
	g = mp_pass_begin(); /* what libunwind maps is its own */
	r = own_regs_past(&noted.t, lib);
	mp_pass_end(g);
	if (r)
		return;
	noted.tid = (int32_t)mp_syscall(SYS_gettid);
	noted.ok = 1;
}

void mp_reach_note_exit(void)
{
	mp_reach_note_exit_past(NULL);
}

/* A signal's interrupted context: the thread's registers and stack, for the scan. */
static void note_context(const ucontext_t *uc)
{
	static const int gp[] = { REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_RBP,
				  REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14,
				  REG_R15 };
	static uint64_t xmm[32];
	size_t k;

	memset(&noted, 0, sizeof(noted));
	for (k = 0; k < sizeof(gp) / sizeof(gp[0]); k++)
		noted.t.regs[noted.t.nregs++] = (uint64_t)uc->uc_mcontext.gregs[gp[k]];
	/* interrupted anywhere: a leaf function's red zone below the stack
	 * pointer holds its data (the kernel put the signal frame past it) */
	noted.t.sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP] - 128;
	if (uc->uc_mcontext.fpregs) {
		memcpy(xmm, uc->uc_mcontext.fpregs->_xmm, sizeof(xmm));
		noted.t.vec = xmm;
		noted.t.nvec = 32;
	}
	noted.tid = (int32_t)mp_syscall(SYS_gettid);
	noted.ok = 1;
}

void mp_reach_at_death(const void *uc)
{
	if (uc)
		note_context(uc);
	mp_reach_at_exit();
}

static void run(struct job *j)
{
	if (dl_iterate_phdr(find_valgrind, NULL)) {
		/* memcheck would flag every word read; ptrace is not emulated */
		j->status = MP_REACH_UNSUPPORTED;
		return;
	}
	if (noted.ok && noted.tid == (int32_t)mp_syscall(SYS_gettid)) {
		j->self = noted.t;
	} else if (own_regs(&j->self)) {
		j->self.nregs = 0;
		own_regs_here(&j->self);
		j->st.notes |= MP_REACH_N_OWN_FRAMES;
	}
	j->self.tid = (int32_t)mp_syscall(SYS_gettid);
	j->self.fs = thread_pointer();
	j->self.how = RT_STOPPED;
	j->self.self = 1;
	j->tls_static = tls_static_size();
	dl_iterate_phdr(scan_locked, j);
}

#else

void mp_reach_note_exit(void)
{
}

void mp_reach_note_exit_past(const void *lib)
{
	(void)lib;
}

static void run(struct job *j)
{
	j->status = MP_REACH_UNSUPPORTED;
}

void mp_reach_at_death(const void *uc)
{
	(void)uc;
	mp_reach_at_exit();
}

#endif

/*
 * One MP_REC_REACH_BLOCKS record per kind, class and MP_REACH_BLOCKS_MAX
 * blocks, built in the scan's own memory and handed to the writer whole.
 */
static void write_blocks(const struct job *j, unsigned cls, unsigned kind)
{
	struct mp_rec_reach_blocks *r = rmem_alloc(MP_MAX_RECORD);
	size_t i, n = 0;

	if (!r)
		return;
	r->h.type = MP_REC_REACH_BLOCKS;
	r->h.kind = (uint8_t)kind;
	r->scan_ts = j->scan_ts;
	r->cls = (uint8_t)cls;
	for (i = 0; i <= j->live.n; i++) {
		const struct rblock *b = i < j->live.n ? &j->live.b[i] : NULL;

		if (b && (b->state != cls || b->kind != kind))
			continue;
		if (n && (!b || n == MP_REACH_BLOCKS_MAX)) {
			r->h.size = (uint16_t)(sizeof(*r) + 8 * n);
			r->count = (uint32_t)n;
			mp_write_record(&r->h);
			n = 0;
		}
		if (!b)
			break;
		r->addr[n++] = b->addr;
	}
	rmem_free(r);
}

MP_REALIGN static void write_summary(const struct job *j, uint64_t t0)
{
	struct mp_rec_reach rec, *r = &rec;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->h.type = MP_REC_REACH;
	r->h.size = sizeof(*r);
	r->status = (uint32_t)j->status;
	r->notes = j->st.notes;
	r->scan_ts = j->scan_ts;
	r->scan_ns = t0 ? mp_now() - t0 : 0;
	r->mem_bytes = rmem_peak();
	r->threads = j->st.threads;
	r->threads_stopped = j->st.stopped;
	r->threads_stack_only = j->st.stack_only;
	r->unreadable = j->st.unreadable;
	r->root_bytes = j->st.root_bytes;
	r->block_bytes = j->st.block_bytes;
	for (i = 0; j->status == MP_REACH_DONE && i < j->live.n; i++) {
		const struct rblock *b = &j->live.b[i];

		r->classes[b->state].blocks++;
		r->classes[b->state].bytes += b->size;
	}
	mp_write_record(&r->h);
}

/* memprov's tables are its own memory, never roots. */
static void own_tables(void)
{
	uintptr_t a;
	size_t len;

	mp_intern_range(&a, &len);
	rmem_own(a, len);
	mp_unwind_cache_range(&a, &len);
	rmem_own(a, len);
	mp_unwind_memo_range(&a, &len);
	rmem_own(a, len);
	if (mp_own_stack_len) /* mp_call_on_own_stack's, the scan's at a death */
		rmem_own(mp_own_stack_lo, mp_own_stack_len);
}

static unsigned not_needed; /* mp_reach_not_needed's note, or 0 */

void mp_reach_not_needed(unsigned note)
{
	__atomic_store_n(&not_needed, note, __ATOMIC_RELAXED);
}

/*
 * An address-space limit (ulimit -v, RLIMIT_AS) counts the scan's
 * mappings and the trace's: a program that filled it (it allocates until
 * malloc fails, then exits) leaves the scan no room, and the gate, with
 * no scan, counts all it held live. The limit is lifted for the scan and
 * the records after it (to none where the process may, as root; else the
 * soft one to the hard one) and put back as it was: the process is
 * leaving, and its other threads are stopped for most of that time.
 * Under a seccomp filter prlimit64 may be what kills it: not called.
 * Returns 1 if *old is to be put back; a limit left in force is noted.
 */
static int as_lift(struct rlimit *old, int sandboxed, struct job *j)
{
	struct rlimit up = { RLIM_INFINITY, RLIM_INFINITY };

	if (sandboxed || mp_syscall(SYS_prlimit64, 0, RLIMIT_AS, NULL, old) ||
	    old->rlim_cur == RLIM_INFINITY)
		return 0;
	if (!mp_syscall(SYS_prlimit64, 0, RLIMIT_AS, &up, NULL))
		return 1;
	j->st.notes |= MP_REACH_N_AS_LIMIT;
	if (old->rlim_max == old->rlim_cur)
		return 0;
	up.rlim_cur = up.rlim_max = old->rlim_max;
	return !mp_syscall(SYS_prlimit64, 0, RLIMIT_AS, &up, NULL);
}

/*
 * A program that opened descriptors up to its limit (it opens until open
 * fails, then exits) left the scan none for /proc/self/maps: no scan,
 * and the gate counted all it held live (100 reachable blocks: 6,400 B
 * gated). The soft limit is raised by NOFILE_ROOM for the scan (the hard
 * one too where the process may, as root) and put back after it; not
 * under a seccomp filter. Returns 1 if *old is to be put back.
 */
#define NOFILE_ROOM 16

static int nofile_lift(struct rlimit *old, int sandboxed)
{
	struct rlimit up;

	if (sandboxed || mp_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, old) ||
	    old->rlim_cur == RLIM_INFINITY || old->rlim_cur > RLIM_INFINITY - NOFILE_ROOM)
		return 0;
	up.rlim_cur = old->rlim_cur + NOFILE_ROOM;
	up.rlim_max = old->rlim_max != RLIM_INFINITY && old->rlim_max < up.rlim_cur ?
			      up.rlim_cur : old->rlim_max;
	if (!mp_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &up, NULL))
		return 1;
	if (old->rlim_max == old->rlim_cur)
		return 0;
	up.rlim_cur = up.rlim_max = old->rlim_max;
	return !mp_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &up, NULL);
}

/*
 * Never the scan that pushes the process over its memory limit (a
 * cgroup's OOM kill at exit changes its status): half the room it has
 * left at most. Asked only once the scan's own memory passes
 * ROOM_CHECK_AT: reading /proc/meminfo, the cgroup and its limits cost
 * every exit six more files to open and read, which a short process
 * (`true`: its scan 0.4 ms) should not pay for nothing.
 */
#define ROOM_CHECK_AT (8ull << 20)
static int room_bounded;

static uint64_t room_bound(void)
{
	uint64_t room = rroom_bytes() / 2;

	if (room >= (uint64_t)mp_config.reach_memory_mb << 20)
		return UINT64_MAX;
	room_bounded = 1;
	return room;
}

MP_REALIGN void mp_reach_at_exit(void)
{
	struct job j;
	struct rlimit as_old, nofile_old;
	uint64_t t0;
	int saved = errno, g, lifted, fds_lifted;
	unsigned cls, kind;

	if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
		return;
	memset(&j, 0, sizeof(j));
	if (__atomic_load_n(&not_needed, __ATOMIC_RELAXED) && mp_config.reach) {
		/*
		 * CPython's own executable: the reports judge what is live at
		 * the end of its main module. Its interpreter has been
		 * finalized by now; a C extension's thread that takes the
		 * interpreter lock meanwhile (PyGILState_Ensure) crashes on
		 * its freed state, which the scan's milliseconds made likely
		 * (6 of 10 exits of such a program).
		 */
		j.status = MP_REACH_OFF;
		j.st.notes = not_needed;
		write_summary(&j, 0);
		return;
	}
	if (!mp_config.reach || mp_config.sample_bytes || !mp_config.heap) {
		/* blocks the trace does not know would hide what they point to */
		j.status = mp_config.reach ? MP_REACH_PARTIAL : MP_REACH_OFF;
		write_summary(&j, 0);
		return;
	}
	t0 = mp_now();
	j.deadline = t0 + (uint64_t)mp_config.reach_timeout_ms * 1000000u;
	/*
	 * Under a seccomp filter a system call the program never makes may
	 * kill it: no ptrace helper, no process_vm_readv, no prlimit64.
	 */
	j.sandboxed = mp_prctl(PR_GET_SECCOMP, 0, 0, 0, 0) > 0;
	if (j.sandboxed)
		j.st.notes |= MP_REACH_N_SECCOMP;
	lifted = as_lift(&as_old, j.sandboxed, &j);
	fds_lifted = nofile_lift(&nofile_old, j.sandboxed);
	rmem_init((uint64_t)mp_config.reach_memory_mb << 20);
	rmem_bound_later(ROOM_CHECK_AT, room_bound);
	room_bounded = 0;
	own_tables();
	j.status = MP_REACH_NOMEM;
	g = mp_pass_begin(); /* what the loader and libunwind allocate is theirs */
	run(&j);
	mp_pass_end(g);
	if (j.status == MP_REACH_NOMEM && room_bounded)
		j.st.notes |= MP_REACH_N_MEM_ROOM;
	if (j.status == MP_REACH_DONE)
		for (cls = MP_REACH_POSSIBLE; cls <= MP_REACH_DEFINITE; cls++)
			for (kind = 1; kind < MP_KIND_COUNT; kind++)
				write_blocks(&j, cls, kind);
	write_summary(&j, t0);
	/*
	 * The process ends next (the scan runs in the last destructor or at
	 * _exit): a small scan's mappings go with it. Unmapping them cost a
	 * short process more than its marking (a system call and a TLB flush
	 * each: 7 for ls); a large scan gives its memory back first.
	 */
	if (rmem_peak() > REACH_KEEP_MAX)
		rmem_release();
	if (lifted)
		mp_syscall(SYS_prlimit64, 0, RLIMIT_AS, &as_old, NULL);
	if (fds_lifted)
		mp_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &nofile_old, NULL);
	errno = saved;
}
