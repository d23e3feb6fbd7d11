/*
 * hooks_sandbox.c - a program that confines itself with seccomp gets no
 * system call from memprov after that.
 *
 * A seccomp filter decides, for every system call the thread makes from
 * then on, to allow it, fail it or kill the process (sshd's
 * pre-authentication child, sandboxed services and browsers list the
 * few calls they make and kill on any other). memprov's own calls (space
 * for the trace, madvise on finished chunks, the /proc files a new thread
 * reads, the scan at exit) are not on such a list, and memprov does not
 * read the filter's rules. So the moment before the program asks for a
 * filter, tracing stops: the header says STOPPED, reason MP_STOP_SECCOMP,
 * and what was recorded until then stays valid; the signals memprov
 * watched for deaths get the program's own action back, and from then on
 * (mp_sandboxed) the hooks make no call the program would not have made.
 *
 * The two ways in that a program reaches through libc: prctl(
 * PR_SET_SECCOMP, ...) and syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER
 * or SECCOMP_SET_MODE_STRICT, ...), which is how libseccomp installs its
 * filters (glibc has no seccomp() wrapper). A filter installed with a
 * raw system call instruction is not seen.
 *
 * syscall() is a few instructions of assembly: it must behave as libc's
 * does for every call number, clone with a new stack included (the child
 * returns on that stack), so the common path has no frame of its own.
 * memprov's own code never calls syscall() or prctl(): it has
 * mp_syscall and mp_prctl (sys.c).
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls trace_file, hooks_signal and sys.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "hooks_signal.h"
#include "sys.h"
#include "trace_file.h"

/* Called before a call that may install a filter (the program's arguments). */
MP_HIDDEN __attribute__((used)) void mp_sandbox_before(long nr, long a1);

void mp_sandbox_before(long nr, long a1)
{
	int filter = nr == SYS_prctl ? a1 == PR_SET_SECCOMP :
		     nr == SYS_seccomp && (a1 == SECCOMP_SET_MODE_FILTER ||
					   a1 == SECCOMP_SET_MODE_STRICT);
	int saved = errno;

	if (!filter || __atomic_exchange_n(&mp_sandboxed, 1, __ATOMIC_RELAXED))
		return;
	if (mp_tracing)
		mp_stop(MP_STOP_SECCOMP, "the program installs a seccomp filter");
	mp_signal_unwatch_deaths();
	errno = saved;
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
	mp_sandbox_before(SYS_prctl, option);
	return mp_prctl(option, a[0], a[1], a[2], a[3]);
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

/*
 * long syscall(long nr, a1..a6): nr in rdi, a1-a5 in rsi, rdx, rcx, r8,
 * r9, a6 on the stack; the kernel takes nr in rax and a1-a6 in rdi, rsi,
 * rdx, r10, r8, r9. prctl and seccomp see mp_sandbox_before first, with
 * the argument registers kept around it.
 */
__asm__(".text\n"
	".globl syscall\n"
	".type syscall, @function\n"
	"syscall:\n"
	"	.cfi_startproc\n"
	"	cmpq $" MP_STR(SYS_prctl) ", %rdi\n"
	"	je 2f\n"
	"	cmpq $" MP_STR(SYS_seccomp) ", %rdi\n"
	"	je 2f\n"
	"1:	movq %rdi, %rax\n"
	"	movq %rsi, %rdi\n"
	"	movq %rdx, %rsi\n"
	"	movq %rcx, %rdx\n"
	"	movq %r8, %r10\n"
	"	movq %r9, %r8\n"
	"	movq 8(%rsp), %r9\n"
	"	syscall\n"
	"	cmpq $-4095, %rax\n"
	"	jae 3f\n"
	"	ret\n"
	"3:	movq %rax, %rdi\n"
	"	jmp mp_syscall_failed\n"
	"2:	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rcx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %r8\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %r9\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call mp_sandbox_before\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %r9\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %r8\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rcx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmp 1b\n"
	"	.cfi_endproc\n"
	".size syscall, .-syscall\n");
#endif
