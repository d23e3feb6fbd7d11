/*
 * hooks_signal.c - signal handlers that interrupt memprov still have their
 * allocations recorded.
 *
 * A signal can arrive while this thread is inside memprov (writing a
 * record, capturing a stack, or calling the loader for it); a handler
 * that then allocates (mmap is async-signal-safe) reaches the hooks with
 * the guard up. Rather than let that call pass through unseen, every
 * handler the program installs with sigaction(), signal(), sysv_signal()
 * or bsd_signal() is run through a trampoline. When the trampoline finds
 * memprov busy on this thread, it gives the handler a writer context of
 * its own (another chunk, another thread serial whose parent is the
 * thread's) and the guard down, so the handler's calls are recorded in
 * order with everything else; when the handler returns, the thread's
 * context comes back as it was. A handler that leaves by longjmp or
 * siglongjmp gives the thread's context back the same way (the jump
 * functions are hooked for that: they see which handlers the target
 * leaves); the memprov call it interrupted is abandoned, as the program
 * abandoned its own call.
 *
 * The program sees its own handlers: sigaction() and signal() report what
 * it installed, never the trampoline. Handlers installed behind memprov's
 * back (a raw system call) are not wrapped; the calls they make while
 * memprov is busy are counted in the trace header (mp_count_skipped).
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls trace_writer, unwind, libc_real, sigboard,
 * reach (the scan at a death on request) and sys.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hooks_signal.h"
#include "trace_file.h"
#include "libc_real.h"
#include "reach.h"
#include "recorder.h"
#include "run_index.h"
#include "sigboard.h"
#include "unwind.h"

#define NEST_MAX 4 /* handlers nested inside memprov, per thread (each level
		    * is 200 B of static TLS, which glibc takes out of
		    * every thread's stack: 8 levels took 1.6 KiB of a
		    * 16 KiB stack) */

/* Flags of struct sigaction that glibc's headers leave out (as_kept). */
#if defined(__x86_64__)
#define MP_SA_RESTORER 0x04000000
#else
#define MP_SA_RESTORER 0
#endif
#define MP_SA_UNSUPPORTED 0x400
#define MP_SA_KNOWN (SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART | \
		     SA_NODEFER | SA_RESETHAND | MP_SA_RESTORER)

struct user_action {
	struct sigaction act;     /* as the program installed it */
	int wrapped;              /* the kernel runs the trampoline for it */
};


static struct user_action user[_NSIG] MP_BIG_BSS;

/*
 * The table and the kernel's actions change together, one thread at a
 * time: a thread that put memprov's death recorder back after a one-shot
 * handler (rewatch_oneshot) could otherwise overwrite a handler another
 * thread installed between its check and its install (the handler lost:
 * the next signal killed the process). Signals are held off meanwhile, so
 * that a handler on the same thread never waits for its own thread.
 */
static int table_busy;

static int table_enter(mp_sigset *mask)
{
	int blocked = mp_signals_block(mask);

	while (__atomic_exchange_n(&table_busy, 1, __ATOMIC_ACQUIRE))
		mp_syscall(SYS_sched_yield);
	return blocked;
}

static void table_leave(const mp_sigset *mask, int blocked)
{
	__atomic_store_n(&table_busy, 0, __ATOMIC_RELEASE);
	mp_signals_restore(mask, blocked);
}

/*
 * A handler running on a writer context of its own: what the thread had
 * before (restored when the handler returns, or when a longjmp leaves it)
 * and where the trampoline's frame is, to tell which levels a longjmp
 * leaves.
 */
struct level {
	struct mp_writer outer;
	uint64_t outer_hash;
	uintptr_t sp;                   /* the trampoline's frame */
	uintptr_t alt_lo, alt_hi;       /* the alternate stack it ran on, or 0 */
	int outer_guard;
	uint32_t outer_unw;             /* mp_self.in_unw of the interrupted call */
};

struct nest_tls {
	int depth;                      /* levels in use: lv[0 .. depth-1] */
	struct level lv[NEST_MAX];
	struct mp_writer ctx[NEST_MAX]; /* level k's writer context, kept for reuse */
};

static __thread struct nest_tls nest __attribute__((tls_model("initial-exec")));

static int is_handler(const struct sigaction *a)
{
	/* one field: with SA_SIGINFO too, the kernel takes SIG_DFL and
	 * SIG_IGN for themselves (wrapped, SIG_IGN was called at address 1) */
	return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN &&
	       a->sa_handler != SIG_ERR;
}

/* The program has a handler of its own: memprov's loader-lock sections
 * block signals from now on (sys.h, mp_signals_block). */
static void handler_seen(void)
{
	if (!__atomic_load_n(&mp_handlers_seen, __ATOMIC_RELAXED))
		__atomic_store_n(&mp_handlers_seen, 1, __ATOMIC_RELAXED);
}

static int ours(const struct sigaction *a);
static int quiet_abort_begin(int sig, const siginfo_t *si);
static void quiet_abort_end(void);
static void rewatch_oneshot(int sig, int wrapped, int flags);

static void call_user(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;
	int quiet, wrapped = 0;

	a.sa_flags = __atomic_load_n(&user[sig].act.sa_flags, __ATOMIC_ACQUIRE);
	a.sa_sigaction = __atomic_load_n(&user[sig].act.sa_sigaction, __ATOMIC_ACQUIRE);
	if (!is_handler(&a))
		return;
	if (MP_UNLIKELY(a.sa_flags & SA_RESETHAND))
		wrapped = __atomic_load_n(&user[sig].wrapped, __ATOMIC_RELAXED);
	quiet = quiet_abort_begin(sig, si);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	if (quiet)
		quiet_abort_end();
	if (MP_UNLIKELY(a.sa_flags & SA_RESETHAND))
		rewatch_oneshot(sig, wrapped, a.sa_flags);
}

/* The alternate signal stack this frame runs on, if it does. */
static void alt_stack(uintptr_t *lo, uintptr_t *hi)
{
	stack_t ss;

	*lo = *hi = 0;
	if (!mp_syscall(SYS_sigaltstack, NULL, &ss) && (ss.ss_flags & SS_ONSTACK)) {
		*lo = (uintptr_t)ss.ss_sp;
		*hi = *lo + ss.ss_size;
	}
}

/*
 * The handler of every wrapped signal. The order of the stores matters:
 * the guard stays up while the writer context changes, so that a signal
 * arriving in between switches contexts too instead of writing into a
 * half-changed one; depth is published only once its level is filled.
 */
MP_REALIGN static void trampoline(int sig, siginfo_t *si, void *uc)
{
	int guard = mp_self.guard, d = nest.depth;
	struct level *lv;

	mp_sigboard_note(sig, si); /* memprov run: the command got it */
	if (MP_LIKELY(guard == MP_GUARD_NONE) || d >= NEST_MAX) {
		call_user(sig, si, uc);
		return;
	}
	lv = &nest.lv[d];
	lv->outer = mp_self.w;
	lv->outer_hash = mp_unwind_hash;
	lv->outer_guard = guard;
	lv->outer_unw = mp_self.in_unw;
	lv->sp = (uintptr_t)__builtin_frame_address(0);
	alt_stack(&lv->alt_lo, &lv->alt_hi);
	if (!nest.ctx[d].serial)
		nest.ctx[d].parent_serial = lv->outer.serial;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	nest.depth = d + 1;
	mp_self.w = nest.ctx[d];
	mp_self.in_unw = 0; /* the handler's allocations are the program's */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mp_self.guard = MP_GUARD_NONE;

	call_user(sig, si, uc);

	mp_self.guard = MP_GUARD_PASS;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	nest.ctx[d] = mp_self.w;
	mp_self.w = lv->outer;
	mp_unwind_hash = lv->outer_hash;
	mp_self.in_unw = lv->outer_unw;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	nest.depth = d;
	mp_self.guard = guard;
}

/* In a forked child: the contexts' chunks belong to the parent's trace. */
void mp_signal_fork_child(void)
{
	memset(&nest, 0, sizeof(nest));
}

/* glibc keeps the stack pointer in a jmp_buf mangled with the thread's
 * pointer guard (x86-64: rotated left 17 bits after xor with %fs:0x30). */
static uintptr_t jmp_target_sp(const void *env)
{
	uintptr_t v = ((const uintptr_t *)env)[6], g;

	__asm__("mov %%fs:0x30, %0" : "=r"(g));
	v = (v >> 17) | (v << (64 - 17));
	return v ^ g;
}

/* Does a jump to stack pointer sp leave level lv (its frame)? */
static int leaves(const struct level *lv, uintptr_t sp)
{
	if (lv->alt_hi && (sp < lv->alt_lo || sp >= lv->alt_hi))
		return 1; /* from the alternate stack back to another */
	return sp > lv->sp && sp - lv->sp < (256u << 20);
}

/*
 * A longjmp out of handlers that had their own writer context: give the
 * thread back the context it had before the outermost level it leaves,
 * with the guard down (the jump lands in the program, and the memprov
 * call that was interrupted is abandoned: it never committed its record).
 */
static void before_jump(const void *env)
{
	uintptr_t sp;
	int d;

	if (MP_LIKELY(!nest.depth))
		return;
	sp = jmp_target_sp(env);
	mp_self.guard = MP_GUARD_PASS;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (d = nest.depth - 1; d >= 0 && leaves(&nest.lv[d], sp); d--) {
		nest.ctx[d] = mp_self.w;
		/* the handler's context and the call it interrupted stop mid-record */
		mp_stamp_abandon(mp_self.w.serial);
		mp_self.w = nest.lv[d].outer;
		mp_stamp_abandon(mp_self.w.serial);
		mp_unwind_hash = nest.lv[d].outer_hash;
		mp_self.in_unw = 0; /* the call into libunwind it interrupted is left too */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		nest.depth = d;
	}
	mp_self.guard = MP_GUARD_NONE;
}

#define MP_JUMP_HOOK(name, env_t)                                             \
	MP_EXPORT __attribute__((noreturn)) void name(env_t env, int val)     \
	{                                                                     \
		mp_hooks_need();                                              \
		before_jump(env);                                             \
		mp_real_##name(env, val);                                     \
		__builtin_unreachable();                                      \
	}

MP_JUMP_HOOK(longjmp, jmp_buf)
MP_JUMP_HOOK(_longjmp, jmp_buf)
MP_JUMP_HOOK(siglongjmp, sigjmp_buf)
MP_JUMP_HOOK(__longjmp_chk, jmp_buf)

/*
 * Signals whose default action ends the process. While the program leaves
 * one at SIG_DFL, the kernel runs on_death for it instead (the program
 * still sees SIG_DFL): the trace records the death, then the default
 * action runs as it would have.
 */
static const int deadly[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGUSR1,
	SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGVTALRM,
	SIGPROF, SIGSYS,
};

static int is_deadly(int sig)
{
	unsigned i;

	for (i = 0; i < sizeof(deadly) / sizeof(deadly[0]); i++)
		if (deadly[i] == sig)
			return 1;
	return 0;
}

/*
 * The default action of sig is about to end the process: say so in the
 * trace. SA_RESETHAND has made the action the default again; a fault the
 * kernel raised (a bad access, an illegal or arithmetic instruction)
 * happens again when this returns. Anything else is sent again and
 * unblocked here, so that it ends the process before this returns: the
 * mask the return restores may block it (a thread in sigsuspend, ppoll
 * or epoll_pwait with the signal blocked otherwise survived it, pending,
 * where without memprov the process ended). Either way the process ends
 * as without memprov, core dump included.
 */
/*
 * Deaths scanned as they come, as at an exit (valgrind checks for leaks
 * at such deaths too): a request to end (SIGTERM, SIGINT, SIGHUP,
 * SIGUSR1, SIGUSR2, SIGALRM: a parent done with its worker, `timeout`,
 * Ctrl-C), an abort (abort(), a failed assert, std::terminate) and a
 * fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE). Without the scan the gate
 * counted all such a process held: apt's download methods, which apt
 * ends with SIGINT, failed every run, and so did every googletest suite
 * with a death test (EXPECT_DEATH: a child that aborts on purpose, with
 * a vector in a live frame). The scan reads no allocator state it
 * trusts: a heap a bug broke can misname a block's class, not crash the
 * scan (its reads are fault-safe). Not for SIGQUIT (a core is asked
 * for, at once), nor SIGPIPE (the gate gives that death no verdict), nor
 * when the signal came while this thread was inside memprov (a record
 * half written, or glibc's malloc aborting on a corrupt heap: the trace
 * stays as it was, no scan).
 */
static int scanned_death(int sig)
{
	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGUSR1 ||
	       sig == SIGUSR2 || sig == SIGALRM || sig == SIGABRT || sig == SIGSEGV ||
	       sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

static void scan_at_death(int sig, void *uc)
{
	if (!scanned_death(sig) || !mp_tracing || mp_self.guard || mp_self.disabled ||
	    !mp_header || mp_header->state != MP_STATE_RUNNING ||
	    mp_header->pid != (int32_t)mp_syscall(SYS_getpid))
		return;
	mp_self.guard = MP_GUARD_REC;
	mp_reach_at_death(uc);
	mp_self.guard = MP_GUARD_NONE;
}

struct death {
	int sig;
	void *uc;
	int scan;
};

/* The scan (when one is due) and the death's records. */
static void record_death(void *arg)
{
	const struct death *d = arg;

	if (d->scan)
		scan_at_death(d->sig, d->uc);
	mp_trace_killed(d->sig);
	if (mp_header && mp_header->state == MP_STATE_KILLED && mp_header->term_signal == d->sig &&
	    mp_header->pid == (int32_t)mp_syscall(SYS_getpid)) {
		char buf[24];

		mp_index_header_event(mp_header, "killed", mp_index_num(buf, d->sig));
	}
}

static void on_death(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	int fault = si && si->si_code > 0 &&
		    (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE);
	struct death d = { sig, uc, 1 };

	mp_sigboard_note(sig, si);
	/*
	 * On a stack of memprov's own: this handler runs on the program's
	 * alternate signal stack where it has one (8 KiB, Rust's), and the
	 * scan overflowed it: SIGTERM became SIGSEGV. Under a seccomp filter
	 * no new system call; where no stack can be had, no scan.
	 */
	if (mp_sandboxed || mp_call_on_own_stack(record_death, &d)) {
		d.scan = 0;
		record_death(&d);
	}
	if (!fault) {
		mp_sigset again = MP_SIGBIT(sig);

		mp_syscall(SYS_tgkill, mp_syscall(SYS_getpid), mp_syscall(SYS_gettid), sig);
		mp_rsys(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&again, 0, sizeof(again), 0, 0);
	}
	errno = saved;
}

/* Let the kernel run on_death for sig, which the program leaves at SIG_DFL. */
static int watch_death(int sig, const struct sigaction *dfl, struct sigaction *prev)
{
	struct sigaction a;

	memset(&a, 0, sizeof(a));
	a.sa_sigaction = on_death;
	/* SA_UNSUPPORTED: what the kernel keeps of it tells as_kept whether
	 * it clears flags it does not know */
	a.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK | MP_SA_UNSUPPORTED;
	sigemptyset(&a.sa_mask);
	user[sig].act = *dfl;
	user[sig].wrapped = 0;
	return mp_real_sigaction(sig, &a, prev);
}

/*
 * A handler of a fault that runs on an alternate signal stack is a crash
 * handler (Rust's report of a stack overflow, a program's own), and it
 * usually ends in abort(). That SIGABRT would need a second signal frame
 * on the alternate stack for on_death (3.6 KiB with AVX-512 state): more
 * than a small stack has left, the kernel cannot deliver it and the
 * process dies of SIGSEGV instead of SIGABRT. So while such a handler
 * runs, SIGABRT's action is SIG_DFL (its death is not recorded as a
 * signal; the status is the program's), and on_death comes back if the
 * handler returns. 1: SIGABRT was set to SIG_DFL.
 */
static int quiet_abort_begin(int sig, const siginfo_t *si)
{
	struct sigaction cur, dfl;
	uintptr_t lo, hi;

	if (!si || si->si_code <= 0 || !mp_real_sigaction ||
	    (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE))
		return 0;
	alt_stack(&lo, &hi);
	if (!hi || mp_real_sigaction(SIGABRT, NULL, &cur) || !(cur.sa_flags & SA_SIGINFO) ||
	    cur.sa_sigaction != on_death)
		return 0;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	return !mp_real_sigaction(SIGABRT, &dfl, NULL);
}

static void quiet_abort_end(void)
{
	struct sigaction cur;
	mp_sigset mask;
	int blocked = table_enter(&mask);

	/* unless the handler installed an action of its own meanwhile */
	if (!mp_real_sigaction(SIGABRT, NULL, &cur) && !(cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_handler == SIG_DFL)
		watch_death(SIGABRT, &cur, NULL);
	table_leave(&mask, blocked);
}

void mp_signal_watch_deaths(void)
{
	struct sigaction cur;
	unsigned i;

	if (!mp_real_sigaction)
		return;
	for (i = 0; i < sizeof(deadly) / sizeof(deadly[0]); i++) {
		if (mp_real_sigaction(deadly[i], NULL, &cur))
			continue;
		if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL)
			watch_death(deadly[i], &cur, NULL);
		else if (is_handler(&cur) && !ours(&cur))
			handler_seen(); /* installed before memprov's hooks were */
	}
}

void mp_signal_unwatch_deaths(void)
{
	struct sigaction cur;
	unsigned i;

	if (!mp_real_sigaction)
		return;
	for (i = 0; i < sizeof(deadly) / sizeof(deadly[0]); i++)
		if (!mp_real_sigaction(deadly[i], NULL, &cur) && cur.sa_sigaction == on_death)
			mp_real_sigaction(deadly[i], &user[deadly[i]].act, NULL);
}

/* Is this kernel action one of memprov's own (the program never sees them)? */
static int ours(const struct sigaction *a)
{
	return a->sa_sigaction == trampoline || a->sa_sigaction == on_death;
}

/*
 * A vfork child (CPython's subprocess: vfork, then it sets the handlers
 * it was given back to SIG_DFL before exec) runs in its parent's memory
 * but has signal dispositions of its own. The table is the parent's: the
 * child reads it, never writes it, or a signal the parent then receives
 * would find SIG_DFL in the table behind its trampoline and be lost.
 */
static int in_vfork_child(void)
{
	return mp_header && mp_header->pid != (int32_t)mp_syscall(SYS_getpid);
}

/*
 * What a program reads back is what the kernel kept of what it installed:
 * SIGKILL and SIGSTOP out of the mask, flag bits the kernel does not know
 * cleared (Linux 5.11 on: programs probe with SA_UNSUPPORTED), and libc's
 * restorer, which glibc's sigaction adds to every action (SA_RESTORER and
 * its address). Where the kernel holds memprov's action, the table's copy
 * of the program's is made so, from the kernel's copy of memprov's: the
 * trampoline's (made from the program's action: its mask and flags as the
 * kernel kept them, less the SA_SIGINFO memprov added), or on_death's
 * (installed with SA_UNSUPPORTED: the kernel that clears it clears every
 * bit it does not know). Called right after memprov's action went in; if
 * another thread's is there already, that one updated the table.
 */
static void as_kept(int sig, struct sigaction *a, int wrapped)
{
	struct sigaction k;
	int flags = a->sa_flags;

	if (mp_real_sigaction(sig, NULL, &k))
		return;
	if (wrapped && k.sa_sigaction == trampoline) {
		flags = k.sa_flags & ~(a->sa_flags & SA_SIGINFO ? 0 : SA_SIGINFO);
		a->sa_mask = k.sa_mask;
	} else if (!wrapped && k.sa_sigaction == on_death) {
		if (!(k.sa_flags & MP_SA_UNSUPPORTED))
			flags &= MP_SA_KNOWN;
		if (k.sa_flags & MP_SA_RESTORER)
			flags |= MP_SA_RESTORER;
		sigdelset(&a->sa_mask, SIGKILL);
		sigdelset(&a->sa_mask, SIGSTOP);
	} else {
		return;
	}
	if (flags & MP_SA_RESTORER)
		a->sa_restorer = k.sa_restorer;
	/* the trampoline may read the flags meanwhile (a signal now) */
	__atomic_store_n(&a->sa_flags, flags, __ATOMIC_RELEASE);
}

/*
 * *old as glibc fills it from the kernel's: the handler, flags, restorer
 * and the kernel's 8 bytes of the mask; the rest of the caller's sigset_t
 * is left as it was.
 */
static void put_old(struct sigaction *old, const struct sigaction *a)
{
	old->sa_sigaction = a->sa_sigaction;
	old->sa_flags = a->sa_flags;
	old->sa_restorer = a->sa_restorer;
	memcpy(&old->sa_mask, &a->sa_mask, _NSIG / 8);
}

/*
 * The action the program reads back where the kernel holds kern: the
 * program's own behind memprov's; where SA_RESETHAND made a trampoline
 * the default again, the kernel's without the SA_SIGINFO memprov added.
 */
static void read_back(const struct sigaction *kern, const struct user_action *u,
		      struct sigaction *old)
{
	if (ours(kern)) {
		put_old(old, &u->act);
		return;
	}
	put_old(old, kern);
	if (u->wrapped && kern->sa_handler == SIG_DFL && (u->act.sa_flags & SA_RESETHAND) &&
	    !(u->act.sa_flags & SA_SIGINFO))
		old->sa_flags &= ~SA_SIGINFO;
}

/*
 * A handler installed with SA_RESETHAND (sysv_signal's too) for a signal
 * whose default action ends the process has returned: the kernel made the
 * action the default again as it ran it. Unless the handler installed an
 * action of its own, on_death watches the signal again, so that a second
 * delivery, or one the handler raised (pending until it returned), is
 * recorded as the death it is (it said "killed or still running"); the
 * program reads back the default action, as it would have. wrapped,
 * flags: the handler's entry in the table when it ran.
 */
MP_REALIGN static void rewatch_oneshot(int sig, int wrapped, int flags)
{
	struct sigaction cur, view;
	struct user_action was;
	mp_sigset mask;
	int blocked;

	if (!is_deadly(sig) || !mp_tracing || mp_sandboxed || in_vfork_child())
		return;
	/* another thread may install a handler meanwhile: not between the two */
	blocked = table_enter(&mask);
	if (!mp_real_sigaction(sig, NULL, &cur) && cur.sa_handler == SIG_DFL) {
		memset(&was, 0, sizeof(was));
		was.wrapped = wrapped;
		was.act.sa_flags = flags;
		read_back(&cur, &was, &view);
		if (!watch_death(sig, &view, NULL))
			as_kept(sig, &user[sig].act, 0);
	}
	table_leave(&mask, blocked);
}

/* sigaction in a vfork child, or once the program is sandboxed (no
 * getpid): the kernel's only, what the program sees kept. */
static int install_in_child(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev;
	int r = mp_real_sigaction(sig, act, &prev);

	if (!r && old)
		read_back(&prev, &user[sig], old);
	return r;
}

/*
 * Install the program's action act for sig (NULL: query), with the
 * trampoline in place of a handler function; *old gets what the program
 * installed before. The table is updated before the kernel, so that a
 * signal delivered at once finds the new handler.
 */
static int install_locked(int sig, const struct sigaction *act, struct sigaction *old);

MP_REALIGN static int install(int sig, const struct sigaction *act, struct sigaction *old)
{
	mp_sigset mask;
	int r, blocked;

	if (sig <= 0 || sig >= _NSIG)
		return mp_real_sigaction(sig, act, old);
	if (MP_UNLIKELY(mp_sandboxed || in_vfork_child()))
		return install_in_child(sig, act, old);
	blocked = table_enter(&mask);
	r = install_locked(sig, act, old);
	table_leave(&mask, blocked);
	return r;
}

MP_REALIGN static int install_locked(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction mine, prev;
	struct user_action before;
	int r, wrap;

	before = user[sig];
	wrap = act && is_handler(act);
	if (act && (ours(act) || (void *)act->sa_handler == (void *)trampoline ||
		    (void *)act->sa_handler == (void *)on_death)) {
		/* our own action, read back behind our back: keep the table */
		wrap = 0;
		act = NULL;
	}
	if (act && !wrap && mp_tracing && is_deadly(sig) && !(act->sa_flags & SA_SIGINFO) &&
	    act->sa_handler == SIG_DFL) {
		r = watch_death(sig, act, &prev);
		if (r) {
			user[sig] = before;
			return r;
		}
		as_kept(sig, &user[sig].act, 0);
		if (old)
			read_back(&prev, &before, old);
		return 0;
	}
	if (wrap) {
		mine = *act;
		mine.sa_sigaction = trampoline;
		mine.sa_flags |= SA_SIGINFO;
		__atomic_store_n(&user[sig].act.sa_sigaction, act->sa_sigaction,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&user[sig].act.sa_flags, act->sa_flags, __ATOMIC_RELEASE);
		user[sig].act.sa_mask = act->sa_mask;
		user[sig].act.sa_restorer = act->sa_restorer;
	}
	r = mp_real_sigaction(sig, wrap ? &mine : act, &prev);
	if (r) {
		if (wrap)
			user[sig] = before;
		return r;
	}
	if (act)
		user[sig].wrapped = wrap;
	if (wrap)
		as_kept(sig, &user[sig].act, 1);
	if (old)
		read_back(&prev, &before, old);
	return 0;
}

MP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_sigaction)) {
		errno = ENOSYS;
		return -1;
	}
	if (act && is_handler(act))
		handler_seen();
	if (!mp_tracing && !user[sig > 0 && sig < _NSIG ? sig : 0].wrapped)
		return mp_real_sigaction(sig, act, old);
	return install(sig, act, old);
}

/*
 * signal() and its variants: libc decides the flags (SA_RESTART unless
 * siginterrupt() said otherwise, SA_RESETHAND for System V), then the
 * handler it installed is put behind the trampoline. A signal that comes
 * in between runs the handler directly, as without memprov.
 */
static sighandler_t wrap_signal(int sig, sighandler_t h, sighandler_t prev,
				const struct user_action *before)
{
	struct sigaction cur;

	if (prev == SIG_ERR)
		return prev;
	if ((void *)prev == (void *)trampoline || (void *)prev == (void *)on_death)
		prev = before->act.sa_flags & SA_SIGINFO ?
			       (sighandler_t)(void *)before->act.sa_sigaction :
			       before->act.sa_handler;
	if (in_vfork_child())
		return prev; /* the table is the parent's (install) */
	if (h != SIG_IGN && h != SIG_ERR && mp_tracing &&
	    !mp_real_sigaction(sig, NULL, &cur) && cur.sa_handler == h)
		install(sig, &cur, NULL);
	else
		user[sig].wrapped = 0;
	return prev;
}

#define MP_SIGNAL_HOOK(name)                                                  \
	MP_EXPORT MP_REALIGN sighandler_t name(int sig, sighandler_t h)              \
	{                                                                     \
		struct user_action before;                                    \
		sighandler_t prev;                                            \
                                                                              \
		mp_hooks_need();                                              \
		if (MP_UNLIKELY(!mp_real_##name)) {                           \
			errno = ENOSYS;                                       \
			return SIG_ERR;                                       \
		}                                                             \
		if (h != SIG_DFL && h != SIG_IGN && h != SIG_ERR)            \
			handler_seen();                                       \
		if (sig <= 0 || sig >= _NSIG)                                 \
			return mp_real_##name(sig, h);                        \
		before = user[sig];                                           \
		prev = mp_real_##name(sig, h);                                \
		return wrap_signal(sig, h, prev, &before);                    \
	}

MP_SIGNAL_HOOK(signal)
MP_SIGNAL_HOOK(sysv_signal)
/* what signal() is in a strict ISO C program (-std=c99, c11): unhooked, it
 * returned memprov's death recorder as the previous action, and a handler
 * that chained to it killed the process (the second review) */
MP_SIGNAL_HOOK(__sysv_signal)
MP_SIGNAL_HOOK(bsd_signal)

/*
 * A program that takes its signals with sigtimedwait, sigwaitinfo or sigwait runs
 * no handler for them: memprov run's board is told here instead (a
 * signalfd reader still tells it nothing).
 */
MP_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	siginfo_t own;
	int sig;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_sigtimedwait)) {
		errno = ENOSYS;
		return -1;
	}
	sig = mp_real_sigtimedwait(set, info ? info : &own, timeout);
	if (sig > 0)
		mp_sigboard_note(sig, info ? info : &own);
	return sig;
}

/* glibc's is sigtimedwait without a timeout, as here */
MP_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	return sigtimedwait(set, info, NULL);
}

/* glibc's sigwait calls its own sigtimedwait, not through the hook: the
 * same here, EINTR retried, the error returned rather than set */
MP_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	siginfo_t info;
	int r;

	do
		r = sigtimedwait(set, &info, NULL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno;
	*sig = r;
	return 0;
}

/*
 * sigaltstack(): the stack a thread's handlers run on is memory the
 * program must keep while it is set, and one it allocated for that (a
 * heap block: CPython's faulthandler.enable() takes 16 KiB with malloc,
 * under the line that called it) is not a leak of that line. The call
 * that set or disabled a stack is recorded (MP_REC_SIGSTACK); the reports
 * set the block apart while it is the stack. A call that failed, or that
 * only asked (ss NULL), records nothing.
 */
MP_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
	int r, saved;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_sigaltstack)) {
		errno = ENOSYS;
		return -1;
	}
	r = mp_real_sigaltstack(ss, old);
	if (r || !ss || !mp_tracing)
		return r;
	saved = errno;
	if (mp_enter()) {
		if (ss->ss_flags & SS_DISABLE)
			mp_write_sigstack(0, 0);
		else
			mp_write_sigstack((uint64_t)(uintptr_t)ss->ss_sp, (uint64_t)ss->ss_size);
		mp_leave();
	}
	errno = saved;
	return r;
}
