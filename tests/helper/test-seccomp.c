/*
 * test-seccomp.c - interpose/seccomp_eval.c, linked alone, on crafted
 * filters (t1080): what a filter does to a call whatever its arguments.
 * Each case is a filter, a call number and the verdict expected (1: the
 * call is spared on every path). Prints one line per failed check and
 * "seccomp: N checks, F failed"; exits 1 on a failure.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/syscall.h>

#include "../../interpose/seccomp_eval.h"

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARCH BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch))
#define LD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define RET(a) BPF_STMT(BPF_RET | BPF_K, (a))
#define JEQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))
#define ALLOW RET(SECCOMP_RET_ALLOW)
#define KILL RET(SECCOMP_RET_KILL_PROCESS)

static char scratch[MP_SECCOMP_SCRATCH];
static int checks, failed;

static void check(const char *what, const struct sock_filter *f, unsigned n, int nr, int want)
{
	int got = mp_seccomp_spares(f, n, &nr, 1, scratch, sizeof(scratch));

	checks++;
	if (got != want) {
		failed++;
		printf("FAIL %s (call %d): got %d, want %d\n", what, nr, got, want);
	}
}

#define CASE(what, nr, want, ...)                                                 \
	do {                                                                      \
		static const struct sock_filter f_[] = { __VA_ARGS__ };           \
		check(what, f_, sizeof(f_) / sizeof(f_[0]), (nr), (want));        \
	} while (0)

int main(void)
{
	unsigned i;
	static struct sock_filter chain[BPF_MAXINSNS];

	CASE("allow all", SYS_read, 1, ALLOW);
	CASE("kill all", SYS_read, 0, KILL);
	CASE("trap", SYS_read, 0, RET(SECCOMP_RET_TRAP));
	CASE("user notification", SYS_read, 0, RET(SECCOMP_RET_USER_NOTIF));
	CASE("kill thread (0)", SYS_read, 0, RET(0));
	CASE("errno", SYS_read, 1, RET(SECCOMP_RET_ERRNO | 1));
	CASE("log", SYS_read, 1, RET(SECCOMP_RET_LOG));
	CASE("trace", SYS_read, 1, RET(SECCOMP_RET_TRACE));
	/* the call number decides */
	CASE("allow-list, listed", SYS_read, 1, LD_NR, JEQ(SYS_read, 0, 1), ALLOW, KILL);
	CASE("allow-list, not listed", SYS_madvise, 0, LD_NR, JEQ(SYS_read, 0, 1), ALLOW, KILL);
	CASE("deny-list kills another", SYS_read, 1, LD_NR, JEQ(SYS_ptrace, 0, 1), KILL, ALLOW);
	CASE("arch checked: x86-64", SYS_read, 1, LD_ARCH, JEQ(AUDIT_ARCH_X86_64, 1, 0), KILL, ALLOW);
	CASE("arch checked: another", SYS_read, 0, LD_ARCH, JEQ(AUDIT_ARCH_I386, 1, 0), KILL, ALLOW);
	/* an argument decides: both ways are taken */
	CASE("argument: kill one way", SYS_madvise, 0, LD_ARG(2), JEQ(4, 0, 1), ALLOW, KILL);
	CASE("argument: errno or allow", SYS_madvise, 1, LD_ARG(2), JEQ(4, 0, 1), ALLOW,
	     RET(SECCOMP_RET_ERRNO | 1));
	CASE("instruction pointer", SYS_read, 0,
	     BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
	     JEQ(0, 0, 1), ALLOW, KILL);
	CASE("return of an unknown A", SYS_read, 0, LD_ARG(0), BPF_STMT(BPF_RET | BPF_A, 0));
	CASE("return of a known A", SYS_read, 1, BPF_STMT(BPF_LD | BPF_IMM, SECCOMP_RET_ALLOW),
	     BPF_STMT(BPF_RET | BPF_A, 0));
	/* arithmetic, scratch memory, X */
	CASE("nr + 1 via X", SYS_read, 1, LD_NR, BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1),
	     BPF_STMT(BPF_MISC | BPF_TAX, 0), BPF_STMT(BPF_LD | BPF_IMM, SYS_read + 1),
	     BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1), ALLOW, KILL);
	CASE("stored and loaded back", SYS_write, 0, LD_NR, BPF_STMT(BPF_ST, 3),
	     BPF_STMT(BPF_LD | BPF_IMM, 0), BPF_STMT(BPF_LD | BPF_MEM, 3),
	     JEQ(SYS_write, 0, 1), KILL, ALLOW);
	CASE("unknown through memory", SYS_read, 0, LD_ARG(1), BPF_STMT(BPF_ST, 0),
	     LD_NR, BPF_STMT(BPF_LDX | BPF_MEM, 0), BPF_STMT(BPF_MISC | BPF_TXA, 0),
	     JEQ(7, 0, 1), KILL, ALLOW);
	CASE("jset on the number", SYS_read, 1, LD_NR,
	     BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x40000000, 0, 1), KILL, ALLOW);
	CASE("division by an unknown zero", SYS_read, 0, LD_NR, BPF_STMT(BPF_LDX | BPF_IMM, 0),
	     BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), ALLOW);
	CASE("ja over a kill", SYS_read, 1, BPF_STMT(BPF_JMP | BPF_JA, 1), KILL, ALLOW);
	/* the kernel: a divisor of 0 returns 0 (kill); shifts take the low 5 bits; A and X start at 0 */
	CASE("division by an unknown X", SYS_read, 0, LD_ARG(0), BPF_STMT(BPF_MISC | BPF_TAX, 0),
	     LD_NR, BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), ALLOW);
	CASE("modulo by X at its start (0)", SYS_read, 0, LD_NR,
	     BPF_STMT(BPF_ALU | BPF_MOD | BPF_X, 0), ALLOW);
	CASE("unknown divided by a known 7", SYS_read, 1, LD_ARG(0),
	     BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 7), ALLOW);
	CASE("shift by X = 32 is by 0", SYS_write, 0, BPF_STMT(BPF_LDX | BPF_IMM, 32), LD_NR,
	     BPF_STMT(BPF_ALU | BPF_LSH | BPF_X, 0), JEQ(0, 0, 1), ALLOW, KILL);
	CASE("A starts at 0", SYS_read, 1, JEQ(0, 0, 1), ALLOW, KILL);
	/* malformed: refused, never followed past the end */
	CASE("falls off the end", SYS_read, 0, LD_NR);
	CASE("jump past the end", SYS_read, 0, LD_NR, JEQ(SYS_read, 5, 0), ALLOW);
	CASE("load beyond seccomp_data", SYS_read, 0, BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), ALLOW);
	CASE("unaligned load", SYS_read, 0, BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), ALLOW);
	check("no instructions", NULL, 0, SYS_read, 0);

	/* 2,048 tests of an argument in a row: 2^2048 paths, bounded, refused */
	for (i = 0; i + 3 < BPF_MAXINSNS; i += 2) {
		chain[i] = (struct sock_filter)LD_ARG(i % 6);
		chain[i + 1] = (struct sock_filter)JEQ(i, 0, 0);
	}
	chain[i] = (struct sock_filter)ALLOW;
	check("paths beyond the bound", chain, i + 1, SYS_read, 0);
	printf("seccomp: %d checks, %d failed\n", checks, failed);
	return failed != 0;
}
