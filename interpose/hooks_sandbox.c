/*
 * hooks_sandbox.c - a program that confines itself with seccomp gets no
 * system call from memprov after that.
 *
 * A seccomp filter decides, for every system call the thread makes from
 * then on, to allow it, fail it or kill the process (sshd's
 * pre-authentication child, sandboxed services and browsers list the
 * few calls they make and kill on any other). memprov's own calls (space
 * for the trace, madvise on finished chunks, the /proc files a new thread
 * reads) may not be on such a list. So the moment before the program
 * installs a filter, memprov runs it (seccomp_eval.c) for each call it
 * may make, whatever the arguments: when every one would be allowed or
 * merely fail (a deny-list that returns an error), tracing goes on.
 * Otherwise, and for strict mode, tracing stops: the header says STOPPED,
 * reason MP_STOP_SECCOMP, and what was recorded until then stays valid;
 * the signals memprov watched for deaths get the program's own action
 * back, and from then on (mp_sandboxed) the hooks make no call the
 * program would not have made.
 *
 * The two ways in that a program reaches through libc: prctl(
 * PR_SET_SECCOMP, ...) and syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER
 * or SECCOMP_SET_MODE_STRICT, ...), which is how libseccomp installs its
 * filters (glibc has no seccomp() wrapper); also libc's prctl and
 * syscall found with dlsym on a handle (hooks_dlsym.c asks
 * mp_sandbox_hook_for). A filter installed with a raw system call
 * instruction is not seen. A program a sandboxed process runs with the
 * exec family gets no libmemprov.so in LD_PRELOAD (init.c).
 *
 * A program that changes its root (chroot) may leave /proc behind: the
 * moment before, memprov keeps /proc open (sys.c mp_proc_keep), through
 * chroot() or syscall(SYS_chroot).
 *
 * syscall() is a few instructions of assembly: it must behave as libc's
 * does for every call number, clone with a new stack included (the child
 * returns on that stack), so the common path has no frame of its own.
 * memprov's own code never calls syscall() or prctl(): it has
 * mp_syscall and mp_prctl (sys.c).
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls trace_file, hooks_signal, hooks_fd, seccomp_eval,
 * libc_real and sys.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <string.h>
#include <unistd.h>

#include "hooks_fd.h"
#include "hooks_sandbox.h"
#include "hooks_signal.h"
#include "libc_real.h"
#include "seccomp_eval.h"
#include "sys.h"
#include "trace_file.h"

/*
 * The system calls memprov may make while it traces, outside the scan at
 * exit (which leaves out its ptrace helper and process_vm_readv under
 * any filter, reach.c): a filter that spares all of them, whatever their
 * arguments, leaves tracing on.
 */
static const int needed[] = {
	SYS_read, SYS_write, SYS_open, SYS_openat, SYS_close, SYS_fstat, SYS_newfstatat,
	SYS_statfs, SYS_fstatfs, SYS_pread64, SYS_pwrite64, SYS_fallocate, SYS_mmap,
	SYS_munmap, SYS_mremap, SYS_mprotect, SYS_madvise, SYS_mincore, SYS_msync, SYS_brk,
	SYS_futex,
	SYS_getpid, SYS_gettid, SYS_getppid, SYS_uname, SYS_prlimit64, SYS_fcntl,
	SYS_readlink, SYS_readlinkat, SYS_access, SYS_faccessat, SYS_faccessat2, SYS_getcwd,
	SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigpending, SYS_sigaltstack, SYS_tgkill,
	SYS_prctl, SYS_clock_gettime, SYS_getdents64, SYS_sched_yield, SYS_nanosleep,
	SYS_process_vm_readv, SYS_exit, SYS_exit_group,
	SYS_rt_sigreturn,   /* the death-watch handlers return */
	SYS_rt_sigtimedwait, /* a SIGXFSZ of memprov's own taken back (mp_xfsz_release) */
};

/* n bytes of the program's memory at src: 1 read, 0 not there (EFAULT:
 * the kernel refuses the filter too), -1 not known (process_vm_readv
 * failed otherwise: an earlier filter fails it, say). */
static int self_read(void *dst, const void *src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)src, n };
	long pid = mp_rsys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	long got = mp_rsys(SYS_process_vm_readv, pid, (long)&l, 1, (long)&r, 1, 0);

	return got == (long)n ? 1 : got == -EFAULT ? 0 : -1;
}

/*
 * Does the filter at prog (a struct sock_fprog) spare every call memprov
 * makes? A program that is not there, or has no instructions or too
 * many, is refused by the kernel (EFAULT, EINVAL) and installs nothing:
 * libseccomp probes for the call with a NULL one. That spares too. One
 * that cannot be read does not.
 */
static int filter_spares(long prog)
{
	size_t len = BPF_MAXINSNS * sizeof(struct sock_filter) + MP_SECCOMP_SCRATCH;
	struct sock_fprog fp;
	uint8_t *buf;
	int r;

	r = self_read(&fp, (const void *)prog, sizeof(fp));
	if (r <= 0)
		return !r;
	if (!fp.len || fp.len > BPF_MAXINSNS)
		return 1;
	buf = mp_sys_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 0;
	r = self_read(buf, fp.filter, fp.len * sizeof(struct sock_filter));
	if (r > 0)
		r = mp_seccomp_spares((const struct sock_filter *)buf, fp.len, needed,
				      sizeof(needed) / sizeof(needed[0]),
				      buf + BPF_MAXINSNS * sizeof(struct sock_filter),
				      MP_SECCOMP_SCRATCH);
	else
		r = !r;
	mp_sys_munmap(buf, len);
	return r;
}

/* Where an exec of the sandboxed process builds the environment it passes on (init.c). */
#define EXEC_BUF (64u << 10)
static void *exec_buf;

void *mp_sandbox_exec_buf(size_t *len)
{
	*len = EXEC_BUF;
	return exec_buf;
}

/* Called before a call that may install a filter, with the program's
 * first three arguments. */
static void sandbox_before(long nr, long a1, long a2, long a3)
{
	int strict, filter, saved = errno;

	/*
	 * The kernel reads prctl's option and mode as int, seccomp's operation
	 * and flags as unsigned int. prctl's strict mode ignores the third
	 * argument; seccomp's takes no flags and no filter, or fails with
	 * EINVAL (a probe of libseccomp's).
	 */
	if (nr == SYS_prctl) {
		if ((int)a1 != PR_SET_SECCOMP)
			return;
		strict = (int)a2 == SECCOMP_MODE_STRICT;
		filter = (int)a2 == SECCOMP_MODE_FILTER;
	} else {
		strict = (unsigned)a1 == SECCOMP_SET_MODE_STRICT && !(unsigned)a2 && !a3;
		filter = (unsigned)a1 == SECCOMP_SET_MODE_FILTER;
	}
	if ((!strict && !filter) || __atomic_load_n(&mp_sandboxed, __ATOMIC_RELAXED) ||
	    (filter && filter_spares(a3))) {
		errno = saved;
		return;
	}
	/* the last system calls of memprov's own: its buffer for execs, then the stop */
	exec_buf = mp_sys_mmap(NULL, EXEC_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
	if (exec_buf == MAP_FAILED)
		exec_buf = NULL;
	__atomic_store_n(&mp_sandboxed, 1, __ATOMIC_RELEASE);
	if (mp_tracing)
		mp_stop(MP_STOP_SECCOMP, "the program installs a seccomp filter");
	mp_signal_unwatch_deaths();
	errno = saved;
}

/*
 * prctl and syscall looked up with dlsym on a handle, such as libc's own
 * (ctypes.CDLL("libc.so.6").prctl): memprov's hook wherever the lookup
 * found libc's function (hooks_dlsym.c asks), as for the heap functions.
 */
int mp_sandbox_hook_wants(const char *name)
{
	return name[0] == 'p' ? !strcmp(name, "prctl") : name[0] == 's' && !strcmp(name, "syscall");
}

void *mp_sandbox_hook_for(const char *name, void *found)
{
	mp_hooks_need();
	if (!found)
		return found;
	if (!strcmp(name, "prctl"))
		return found == (void *)mp_real_prctl ? (void *)prctl : found;
#if defined(__x86_64__)
	if (!strcmp(name, "syscall"))
		return found == (void *)mp_real_syscall ? (void *)syscall : found;
#endif
	return found;
}

MP_EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int i;

	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	sandbox_before(SYS_prctl, option, (long)a[0], (long)a[1]);
	return mp_prctl(option, a[0], a[1], a[2], a[3]);
}

/* Before the root changes: /proc, for the scan at exit (not in a sandbox: no call of memprov's). */
static void before_chroot(void)
{
	if (__atomic_load_n(&mp_trace_ok, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&mp_sandboxed, __ATOMIC_RELAXED)) {
		mp_proc_keep();
		mp_trace_keep_dir();
	}
}

MP_EXPORT int chroot(const char *path)
{
	long r;

	before_chroot();
	r = mp_rsys(SYS_chroot, (long)path, 0, 0, 0, 0, 0);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

#if defined(__x86_64__)
/* A failed call: errno, and -1 as libc's syscall() returns. */
MP_HIDDEN __attribute__((used)) long mp_syscall_failed(long r);

long mp_syscall_failed(long r)
{
	errno = (int)-r;
	return -1;
}

#define MP_STR_(x) #x
#define MP_STR(x) MP_STR_(x)

/* A fork made with clone: init.c's fork handling runs around it (mp_clone_fork_hooks). */
static void (*clone_prepare)(void);
static void (*clone_parent)(pid_t);
static void (*clone_child)(void);
static void (*exit_group_hook)(int); /* mp_syscall_exit_hook */

void mp_syscall_exit_hook(void (*exit_group)(int))
{
	exit_group_hook = exit_group;
}

void mp_clone_fork_hooks(void (*prepare)(void), void (*parent)(pid_t), void (*child)(void))
{
	clone_prepare = prepare;
	clone_parent = parent;
	clone_child = child;
}

/* fork, or clone or clone3 that makes a copy of the process on the same stack as fork does */
static int fork_like(long nr, long a1, long a2)
{
	struct { uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack; } args;

	if (nr == SYS_fork)
		return 1;
	if (nr == SYS_clone)
		return !(a1 & (CLONE_VM | CLONE_VFORK | CLONE_THREAD)) && !a2;
	if ((unsigned long)a2 < sizeof(args) || self_read(&args, (const void *)a1, sizeof(args)) <= 0)
		return 0;
	return !(args.flags & (CLONE_VM | CLONE_VFORK | CLONE_THREAD)) && !args.stack;
}

/*
 * The slow path of syscall(): prctl, seccomp, fork, clone and clone3, chroot,
 * exit_group, and the descriptor calls (hooks_fd.c). The raw
 * result (-errno on failure): the stub turns it into libc's.
 */
MP_HIDDEN __attribute__((used)) long mp_syscall_slow(long nr, long a1, long a2, long a3, long a4,
						      long a5, long a6);

long mp_syscall_slow(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long r;

	if (nr == SYS_prctl || nr == SYS_seccomp) {
		sandbox_before(nr, a1, a2, a3);
		return mp_rsys(nr, a1, a2, a3, a4, a5, a6);
	}
	if (nr == SYS_chroot) {
		before_chroot();
		return mp_rsys(nr, a1, a2, a3, a4, a5, a6);
	}
	if (nr == SYS_exit_group && exit_group_hook)
		exit_group_hook((int)a1); /* does not return */
	if (mp_fd_syscall_wants(nr))
		return mp_fd_syscall(nr, a1, a2, a3, a4, a5, a6);
	if (!clone_prepare || !fork_like(nr, a1, a2))
		return mp_rsys(nr, a1, a2, a3, a4, a5, a6);
	clone_prepare();
	r = mp_rsys(nr, a1, a2, a3, a4, a5, a6);
	if (r == 0)
		clone_child();
	else
		clone_parent(r > 0 ? (pid_t)r : -1);
	return r;
}

/*
 * long syscall(long nr, a1..a6): nr in rdi, a1-a5 in rsi, rdx, rcx, r8,
 * r9, a6 on the stack; the kernel takes nr in rax and a1-a6 in rdi, rsi,
 * rdx, r10, r8, r9. prctl, seccomp, fork, clone, clone3, chroot,
 * exit_group and the descriptor calls go to
 * mp_syscall_slow (a6 passed on as its seventh argument), every other
 * number straight to the kernel.
 */
__asm__(".pushsection .text.syscall,\"ax\",@progbits\n"
	".globl syscall\n"
	".type syscall, @function\n"
	"syscall:\n"
	"	.cfi_startproc\n"
	"	cmpq $" MP_STR(SYS_prctl) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_seccomp) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_clone) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_fork) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_clone3) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_chroot) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_exit_group) ", %rdi\n"
	"	je 2f\n"
	/* the descriptor calls (hooks_fd.c): close, fstat, dup, dup2, fcntl,
	 * newfstatat, dup3, statx, close_range, ftruncate, fallocate */
	"	cmpq $" MP_STR(SYS_close) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_fstat) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_dup) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_dup2) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_fcntl) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_newfstatat) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_dup3) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_statx) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_close_range) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_ftruncate) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_fallocate) ", %rdi\n"
	"	je 2f\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %rdi\n"
	"	movq %rdx, %rsi\n"
	"	movq %rcx, %rdx\n"
	"	movq %r8, %r10\n"
	"	movq %r9, %r8\n"
	"	movq 8(%rsp), %r9\n"
	"	syscall\n"
	"1:	cmpq $-4095, %rax\n"
	"	jae 3f\n"
	"	ret\n"
	"3:	movq %rax, %rdi\n"
	"	jmp mp_syscall_failed\n"
	"2:	pushq 8(%rsp)\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call mp_syscall_slow\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmp 1b\n"
	"	.cfi_endproc\n"
	".size syscall, .-syscall\n"
	".popsection\n");
#endif
