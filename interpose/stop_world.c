/*
 * stop_world.c - stop every other thread of the process while the
 * reachability scan reads their stacks, and get their registers, the way
 * LeakSanitizer does: a helper task that shares the address space (clone
 * with CLONE_VM but not CLONE_THREAD: a thread may not ptrace its own
 * thread group) seizes and interrupts each thread listed in
 * /proc/PID/task, reads its registers with PTRACE_GETREGS and its vector
 * registers with PTRACE_GETREGSET (a pointer may live only in an xmm or
 * ymm register after memcpy-like code), waits until
 * the scan is done and lets the threads go; a signal that arrived while a
 * thread was held is delivered when it is let go. The helper's exit
 * signal is 0: the program never sees a SIGCHLD, and its wait() calls
 * never see the helper.
 *
 * The helper makes raw system calls only: it runs on the exiting
 * thread's thread pointer, so errno and everything else thread-local is
 * not its own. Every wait is bounded. Where ptrace is refused (a debugger
 * already attached, a sandbox, a process that is not dumpable) or the
 * helper cannot start, a thread's stack pointer is read from
 * /proc/self/task/TID/syscall when it sleeps in a system call, and the
 * caller says what was not covered.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls reach_mem and sys.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <elf.h>
#include <time.h>
#include <unistd.h>

#include "reach_int.h"

#if defined(__x86_64__)

#define TRACER_STACK (256 << 10)
#define STOP_BUDGET_NS 3000000000ull   /* to stop every thread */
#define EXIT_BUDGET_NS 2000000000ull   /* for the helper to go away */

enum { SW_INIT, SW_GO, SW_STOPPED, SW_RESUME, SW_FAILED };
enum { SL_NONE, SL_STOPPED, SL_GONE, SL_REFUSED, SL_TIMEOUT };

struct sw_slot {
	int32_t tid;
	int32_t state;   /* SL_* */
	int32_t sig;     /* to deliver when let go */
	int32_t nvec;    /* words in vec */
	struct user_regs_struct regs;
	uint64_t vec[SW_VEC_WORDS];
};

struct sw_world {
	int32_t phase;   /* futex word, SW_* */
	int32_t pid, self_tid, tracer;
	int32_t n;
	int32_t ptracer_set;
	int32_t overflow;  /* more threads than SW_MAX_THREADS */
	uint64_t deadline;
	char *stack;
	struct sw_slot th[SW_MAX_THREADS];
};

/*
 * The XSAVE layout ptrace gives (the standard, uncompacted format): the
 * legacy area's xmm0-15 at 160, the AVX state (upper halves of ymm0-15)
 * at 576. AVX-512's registers, further on, are not read.
 */
#define XS_XMM 160
#define XS_YMM_HI 576
#define XS_LEN (XS_YMM_HI + 256)

static uint64_t rnow(void)
{
	struct timespec ts;

	mp_rsys(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0, 0, 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void rsleep_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	mp_rsys(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
}

static void futex_wait_ms(int32_t *w, int32_t val, long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	mp_rsys(SYS_futex, (long)w, FUTEX_WAIT, val, (long)&ts, 0, 0);
}

static void futex_wake(int32_t *w)
{
	mp_rsys(SYS_futex, (long)w, FUTEX_WAKE, 1 << 30, 0, 0, 0);
}

static void set_phase(struct sw_world *w, int32_t phase)
{
	__atomic_store_n(&w->phase, phase, __ATOMIC_RELEASE);
	futex_wake(&w->phase);
}

static int32_t get_phase(struct sw_world *w)
{
	return __atomic_load_n(&w->phase, __ATOMIC_ACQUIRE);
}

/*
 * "/proc/PID/task" (pid > 0) or "/proc/self/task"; tid > 0 adds "/TID".
 * Returns the terminating NUL.
 */
static char *task_dir(char *buf, int32_t pid, int32_t tid)
{
	char *p = buf + 6;

	memcpy(buf, "/proc/", 6);
	if (pid <= 0) {
		memcpy(p, "self", 4);
		p += 4;
	} else {
		p = mp_utoa(p, (uint64_t)pid);
	}
	memcpy(p, "/task", 5);
	p += 5;
	if (tid > 0) {
		*p++ = '/';
		p = mp_utoa(p, (uint64_t)tid);
	}
	*p = 0;
	return p;
}

/*
 * The thread ids of process pid (0: self), at most max stored; returns how
 * many there are (more than max when some were left out), -1 if unreadable.
 */
static int list_tasks(int32_t pid, int32_t *tids, int max)
{
	char path[40], buf[4096];
	long fd, got;
	int n = 0;

	task_dir(path, pid, 0);
	fd = mp_proc_sysopen(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((got = mp_rsys(SYS_getdents64, fd, (long)buf, sizeof(buf), 0, 0, 0)) > 0) {
		long off = 0;

		while (off < got) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			int32_t tid = 0;
			const char *p;

			for (p = d->name; *p >= '0' && *p <= '9'; p++)
				tid = tid * 10 + (*p - '0');
			if (!*p && tid > 0 && n++ < max)
				tids[n - 1] = tid;
			off += d->reclen;
		}
	}
	mp_rsys(SYS_close, fd, 0, 0, 0, 0, 0);
	return n;
}

/*
 * Has thread tid of process pid exited? The kernel refuses to seize a
 * thread that has (EPERM, as for a refusal): a zombie main thread that
 * left by pthread_exit while the others run on, or a thread caught
 * between its exit and its removal from the task list (one just joined).
 */
static int task_exited(int32_t pid, int32_t tid)
{
	char path[64], buf[512];
	long fd, n;
	int i;

	memcpy(task_dir(path, pid, tid), "/stat", 6);
	fd = mp_proc_sysopen(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1; /* gone from the list already */
	n = mp_rsys(SYS_read, fd, (long)buf, sizeof(buf) - 1, 0, 0, 0);
	mp_rsys(SYS_close, fd, 0, 0, 0, 0, 0);
	if (n <= 0)
		return 1;
	/* "tid (comm) S ...": the state follows the last ')' */
	for (i = (int)n - 1; i > 0 && buf[i] != ')'; i--)
		;
	return i + 2 < n && (buf[i + 2] == 'Z' || buf[i + 2] == 'X');
}

/* Wait (bounded) for a seized, interrupted thread to stop. */
static void wait_stopped(struct sw_slot *s, uint64_t until)
{
	for (;;) {
		int status = 0;
		long r = mp_rsys(SYS_wait4, s->tid, (long)&status, __WALL | WNOHANG, 0, 0, 0);

		if (r == s->tid) {
			if (WIFSTOPPED(status)) {
				if ((status >> 16) != PTRACE_EVENT_STOP)
					s->sig = WSTOPSIG(status); /* deliver it when let go */
				s->state = SL_STOPPED;
			} else {
				s->state = SL_GONE;
			}
			return;
		}
		if (r < 0 && r != -EINTR) {
			s->state = SL_GONE;
			return;
		}
		if (rnow() > until) {
			s->state = SL_TIMEOUT;
			return;
		}
		rsleep_us(200);
	}
}

static int known(const struct sw_world *w, int32_t tid)
{
	int i;

	if (tid == w->self_tid)
		return 1;
	for (i = 0; i < w->n; i++)
		if (w->th[i].tid == tid)
			return 1;
	return 0;
}

/* One pass over the task list: seize what is new; how many were new. */
MP_REALIGN static int seize_new(struct sw_world *w, uint64_t until)
{
	int32_t tids[SW_MAX_THREADS];
	int n = list_tasks(w->pid, tids, SW_MAX_THREADS), i, fresh = 0;

	if (n > SW_MAX_THREADS) {
		w->overflow = 1;
		n = SW_MAX_THREADS;
	}
	for (i = 0; i < n && w->n < SW_MAX_THREADS; i++) {
		struct sw_slot *s;
		long r;

		if (known(w, tids[i]))
			continue;
		fresh++;
		s = &w->th[w->n++];
		s->tid = tids[i];
		r = mp_rsys(SYS_ptrace, PTRACE_SEIZE, s->tid, 0, 0, 0, 0);
		if (r < 0) {
			s->state = r == -ESRCH || task_exited(w->pid, s->tid) ? SL_GONE
									      : SL_REFUSED;
			continue;
		}
		if (mp_rsys(SYS_ptrace, PTRACE_INTERRUPT, s->tid, 0, 0, 0, 0) < 0) {
			s->state = SL_GONE;
			continue;
		}
		wait_stopped(s, until);
	}
	return fresh;
}

static void copy_words(uint64_t *to, const unsigned char *from, int n)
{
	int i, b;

	for (i = 0; i < n; i++) {
		uint64_t v = 0;

		for (b = 7; b >= 0; b--)
			v = v << 8 | from[i * 8 + b];
		to[i] = v;
	}
}

/*
 * The vector registers of a stopped thread: xmm0-15 and the upper halves
 * of ymm0-15 from its XSAVE state, or xmm0-15 alone from its FXSAVE state
 * where the CPU has no XSAVE. None when both are refused.
 */
static void read_vec(struct sw_slot *s)
{
	unsigned char buf[XS_LEN];
	struct iovec iov = { buf, sizeof(buf) };

	s->nvec = 0;
	if (mp_rsys(SYS_ptrace, PTRACE_GETREGSET, s->tid, NT_X86_XSTATE, (long)&iov, 0, 0) == 0 &&
	    iov.iov_len >= XS_LEN) {
		copy_words(s->vec, buf + XS_XMM, 32);
		copy_words(s->vec + 32, buf + XS_YMM_HI, 32);
		s->nvec = 64;
		return;
	}
	iov.iov_base = buf;
	iov.iov_len = sizeof(struct user_fpregs_struct);
	if (mp_rsys(SYS_ptrace, PTRACE_GETREGSET, s->tid, NT_PRFPREG, (long)&iov, 0, 0) == 0 &&
	    iov.iov_len >= XS_XMM + 256) {
		copy_words(s->vec, buf + XS_XMM, 32);
		s->nvec = 32;
	}
}

/* The helper: stop, read registers, wait for the scan, let go. */
MP_REALIGN static int tracer_main(void *arg)
{
	struct sw_world *w = arg;
	uint64_t until;
	int i, round;

	mp_rsys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0, 0);
	while (get_phase(w) == SW_INIT) {
		if (rnow() > w->deadline)
			mp_rsys(SYS_exit, 0, 0, 0, 0, 0, 0);
		futex_wait_ms(&w->phase, SW_INIT, 10);
	}
	until = rnow() + STOP_BUDGET_NS;
	for (round = 0; round < 64; round++)
		if (!seize_new(w, until))
			break;
	for (i = 0; i < w->n; i++) {
		struct sw_slot *s = &w->th[i];

		if (s->state != SL_STOPPED)
			continue;
		if (mp_rsys(SYS_ptrace, PTRACE_GETREGS, s->tid, 0, (long)&s->regs, 0, 0) < 0) {
			mp_rsys(SYS_ptrace, PTRACE_DETACH, s->tid, 0, s->sig, 0, 0);
			s->state = SL_REFUSED;
			continue;
		}
		read_vec(s);
	}
	set_phase(w, SW_STOPPED);
	while (get_phase(w) != SW_RESUME && rnow() < w->deadline + EXIT_BUDGET_NS)
		futex_wait_ms(&w->phase, SW_STOPPED, 50);
	for (i = 0; i < w->n; i++)
		if (w->th[i].state == SL_STOPPED)
			mp_rsys(SYS_ptrace, PTRACE_DETACH, w->th[i].tid, 0, w->th[i].sig, 0, 0);
	mp_rsys(SYS_exit, 0, 0, 0, 0, 0, 0);
	return 0;
}

static int yama_restricted(void)
{
	char c = 0;
	int fd = (int)mp_proc_sysopen("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (read(fd, &c, 1) != 1)
		c = 0;
	mp_sys_close(fd);
	return c == '1';
}

static uint64_t parse_hex_field(const char *p)
{
	uint64_t v = 0;

	if (p[0] == '0' && p[1] == 'x')
		p += 2;
	for (;; p++) {
		if (*p >= '0' && *p <= '9')
			v = v * 16 + (uint64_t)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			v = v * 16 + (uint64_t)(*p - 'a' + 10);
		else
			return v;
	}
}

/*
 * A thread we could not stop: its stack pointer, from the kernel, when
 * it sleeps ("NR args... SP PC", or "-1 SP PC"); 0 when it runs.
 */
static uint64_t sleeping_sp(int32_t tid)
{
	char path[64], buf[256], *f[10];
	int fd, nf = 0, i;
	ssize_t n;
	char *p;

	memcpy(task_dir(path, 0, tid), "/syscall", 9);
	fd = (int)mp_proc_sysopen(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	mp_sys_close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (p = buf, i = 0; *p && nf < 10; i++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		f[nf++] = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	if (nf == 9)
		return parse_hex_field(f[7]);
	if (nf == 3 && f[0][0] == '-')
		return parse_hex_field(f[1]);
	return 0;
}

static void fill_regs(struct rthread *t, const struct sw_slot *s)
{
	const struct user_regs_struct *r = &s->regs;
	const unsigned long long v[16] = { r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi,
					   r->rbp, r->rsp, r->r8, r->r9, r->r10, r->r11,
					   r->r12, r->r13, r->r14, r->r15 };
	int i;

	for (i = 0; i < 16; i++)
		t->regs[i] = v[i];
	t->nregs = 16;
	t->vec = s->vec;
	t->nvec = s->nvec;
	t->sp = r->rsp;
	t->fs = r->fs_base;
	t->how = RT_STOPPED;
}

/* A stand-in for threads past the table: their stacks are not known. */
static size_t add_unknown(struct rthread *th, size_t k, size_t max)
{
	if (k >= max)
		k = max - 1;
	memset(&th[k], 0, sizeof(th[k]));
	th[k].tid = -1;
	th[k].how = RT_UNKNOWN;
	return k + 1;
}

/* Every other thread, without stopping any: what the kernel says of each. */
static size_t list_unstopped(struct rthread *th, size_t max, int32_t self)
{
	static int32_t tids[SW_MAX_THREADS] MP_BIG_BSS;
	int n = list_tasks(0, tids, SW_MAX_THREADS), i;
	size_t k = 0;

	for (i = 0; i < n && i < SW_MAX_THREADS && k < max; i++) {
		if (tids[i] == self)
			continue;
		memset(&th[k], 0, sizeof(th[k]));
		th[k].tid = tids[i];
		th[k].sp = sleeping_sp(tids[i]);
		th[k].how = th[k].sp ? RT_STACK_ONLY : RT_UNKNOWN;
		k++;
	}
	if (n > SW_MAX_THREADS)
		k = add_unknown(th, k, max);
	return k;
}

/*
 * The helper ended before it said the threads were stopped (killed, or
 * crashed): its stops went with it, as the kernel detaches a dead
 * tracer's tracees. Not reaped here: sw_resume does.
 */
static int helper_gone(struct sw_world *w)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return mp_rsys(SYS_waitid, P_PID, w->tracer, (long)&si,
		       WEXITED | WNOHANG | WNOWAIT | __WALL, 0, 0) == 0 &&
	       si.si_pid == w->tracer;
}

MP_REALIGN struct sw_world *sw_stop(struct rthread *th, size_t max, size_t *n, uint64_t deadline,
			 int helper)
{
	int32_t self = (int32_t)mp_syscall(SYS_gettid), tids[2];
	mp_sigset all = ~(mp_sigset)0, old;
	struct sw_world *w;
	long pid;
	size_t k = 0;
	int i;

	*n = 0;
	if (list_tasks(0, tids, 2) < 2)
		return NULL; /* alone: nothing to stop */
	if (!helper)
		goto unstopped;
	w = rmem_alloc(sizeof(*w));
	if (w)
		w->stack = rmem_alloc(TRACER_STACK);
	if (!w || !w->stack)
		goto unstopped;
	w->pid = getpid();
	w->self_tid = self;
	w->deadline = deadline;
	/*
	 * The helper starts with every signal blocked, and keeps them so:
	 * it has a copy of the program's handlers (no CLONE_SIGHAND), and
	 * the kernel tells a tracer of each stop with SIGCHLD. A program's
	 * SIGCHLD handler ran in it (its reaping took the stops the helper
	 * waited for: 3 s more at exit), and Go's, on a task with no
	 * signal stack of Go's, ended in a fatal error.
	 */
	mp_rsys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, sizeof(all), 0, 0);
	pid = clone(tracer_main, w->stack + TRACER_STACK, CLONE_VM | CLONE_UNTRACED, w);
	mp_rsys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, sizeof(old), 0, 0);
	if (pid <= 0)
		goto unstopped;
	w->tracer = (int32_t)pid;
	if (yama_restricted() && mp_prctl(PR_SET_PTRACER, pid, 0, 0, 0) == 0)
		w->ptracer_set = 1;
	set_phase(w, SW_GO);
	while (get_phase(w) == SW_GO && mp_now() < deadline + STOP_BUDGET_NS && !helper_gone(w))
		futex_wait_ms(&w->phase, SW_GO, 50);
	if (get_phase(w) != SW_STOPPED) {
		sw_resume(w);
		goto unstopped;
	}
	for (i = 0; i < w->n && k < max; i++) {
		struct sw_slot *s = &w->th[i];

		if (s->state == SL_GONE)
			continue;
		memset(&th[k], 0, sizeof(th[k]));
		th[k].tid = s->tid;
		if (s->state == SL_STOPPED) {
			fill_regs(&th[k], s);
		} else {
			th[k].sp = sleeping_sp(s->tid);
			th[k].how = th[k].sp ? RT_STACK_ONLY : RT_UNKNOWN;
		}
		k++;
	}
	if (w->overflow)
		k = add_unknown(th, k, max);
	*n = k;
	return w;

unstopped:
	*n = list_unstopped(th, max, self);
	return NULL;
}

MP_REALIGN void sw_resume(struct sw_world *w)
{
	uint64_t until = mp_now() + EXIT_BUDGET_NS;
	int status;

	if (!w)
		return;
	set_phase(w, SW_RESUME);
	for (;;) {
		long r = mp_rsys(SYS_wait4, w->tracer, (long)&status, __WALL | WNOHANG, 0, 0, 0);

		if (r == w->tracer || (r < 0 && r != -EINTR))
			break;
		if (mp_now() > until) {
			/* still there: leave its stack and this block mapped for it */
			rmem_forget(w->stack);
			rmem_forget(w);
			return;
		}
		rsleep_us(200);
	}
	if (w->ptracer_set)
		mp_prctl(PR_SET_PTRACER, 0, 0, 0, 0);
	rmem_free(w->stack);
	rmem_free(w);
}

#else /* not x86-64: no registers of other threads; stacks from the kernel only */

MP_REALIGN struct sw_world *sw_stop(struct rthread *th, size_t max, size_t *n, uint64_t deadline,
			 int helper)
{
	(void)helper;
	(void)th;
	(void)max;
	(void)deadline;
	*n = 0;
	return NULL;
}

MP_REALIGN void sw_resume(struct sw_world *w)
{
	(void)w;
}

#endif
