/*
 * seccomp_eval.c - what a seccomp filter would do to a system call, for
 * every value of the arguments at once (see seccomp_eval.h).
 *
 * A filter is a classic BPF program over struct seccomp_data: the call
 * number, the architecture, the instruction pointer and six arguments.
 * The number and the architecture are known here, the rest is not: a
 * value loaded from them is unknown, and so is anything computed from
 * it. A conditional jump on a known value goes one way; on an unknown
 * one, both ways are followed. BPF jumps only forward, so every path
 * ends; the paths are walked depth first with a stack of pending
 * branches, under a bound on the steps. The call is spared when every
 * path ends in an action that leaves the process alone (ALLOW, LOG,
 * ERRNO, TRACE): anything else (KILL_PROCESS, KILL_THREAD, TRAP,
 * USER_NOTIF, an unknown action, a return of an unknown value, a bound
 * reached, an instruction the kernel would refuse) counts as fatal.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls no other file of memprov.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>

#include "seccomp_eval.h"

#define MEM_WORDS 16              /* BPF_MEMWORDS */
#define MAX_STEPS (1u << 18)      /* instructions run, over all paths of a call */
#define MAX_PENDING 256           /* branches not yet followed */

/* A register or scratch word: its value, and whether it is known. */
struct val {
	uint32_t v;
	uint32_t known;
};

struct state {
	unsigned pc;
	struct val a, x, mem[MEM_WORDS];
};

_Static_assert(MAX_PENDING * sizeof(struct state) <= MP_SECCOMP_SCRATCH, "scratch too small");

static int action_spares(uint32_t ret)
{
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
	case SECCOMP_RET_LOG:
	case SECCOMP_RET_ERRNO:
	case SECCOMP_RET_TRACE: /* no tracer: ENOSYS */
		return 1;
	default:
		return 0;
	}
}

/* A 32-bit load at offset k of struct seccomp_data: the number and the
 * architecture are known, the instruction pointer and arguments not. */
static int load_data(uint32_t k, int nr, struct val *a)
{
	if (k % 4 || k >= sizeof(struct seccomp_data))
		return -1;
	a->known = k == offsetof(struct seccomp_data, nr) ||
		   k == offsetof(struct seccomp_data, arch);
	a->v = k == offsetof(struct seccomp_data, nr) ? (uint32_t)nr :
	       k == offsetof(struct seccomp_data, arch) ? AUDIT_ARCH_X86_64 : 0;
	return 0;
}

static int alu(uint16_t code, struct val *a, struct val src)
{
	uint32_t s = src.v;

	if (BPF_OP(code) == BPF_NEG) {
		a->v = -a->v;
		return 0;
	}
	/* a divisor that may be 0: the kernel's filter returns 0 there, KILL_THREAD */
	if ((BPF_OP(code) == BPF_DIV || BPF_OP(code) == BPF_MOD) && (!src.known || !s))
		return -1;
	a->known = a->known && src.known;
	if (!a->known)
		return 0;
	switch (BPF_OP(code)) {
	case BPF_ADD: a->v += s; break;
	case BPF_SUB: a->v -= s; break;
	case BPF_MUL: a->v *= s; break;
	case BPF_DIV: a->v /= s; break;
	case BPF_MOD: a->v %= s; break;
	case BPF_AND: a->v &= s; break;
	case BPF_OR: a->v |= s; break;
	case BPF_XOR: a->v ^= s; break;
	/* the kernel shifts by the low 5 bits (a constant of 32 or more is refused) */
	case BPF_LSH: a->v <<= s & 31; break;
	case BPF_RSH: a->v >>= s & 31; break;
	default: return -1;
	}
	return 0;
}

/* A conditional jump: 1 taken, 0 not, -1 not known. */
static int cond(uint16_t code, struct val a, struct val src)
{
	if (!a.known || !src.known)
		return -1;
	switch (BPF_OP(code)) {
	case BPF_JEQ: return a.v == src.v;
	case BPF_JGT: return a.v > src.v;
	case BPF_JGE: return a.v >= src.v;
	case BPF_JSET: return (a.v & src.v) != 0;
	default: return -2;
	}
}

/* Every path of the filter for call nr: 1 when all of them spare it. */
static int spares_call(const struct sock_filter *f, unsigned n, int nr,
		       struct state *pending)
{
	unsigned depth = 1, steps = 0;
	struct state s;

	/* A and X start at 0, as in the kernel; scratch words never stored are
	 * refused by the kernel's checker, and unknown here */
	memset(&pending[0], 0, sizeof(pending[0]));
	pending[0].a.known = pending[0].x.known = 1;
	while (depth) {
		s = pending[--depth];
		for (;;) {
			const struct sock_filter *i;
			struct val k;
			int c;

			if (s.pc >= n || ++steps > MAX_STEPS)
				return 0;
			i = &f[s.pc++];
			k.v = i->k;
			k.known = 1;
			switch (BPF_CLASS(i->code)) {
			case BPF_LD:
				if (i->code == (BPF_LD | BPF_W | BPF_ABS)) {
					if (load_data(i->k, nr, &s.a))
						return 0;
				} else if (i->code == (BPF_LD | BPF_IMM)) {
					s.a = k;
				} else if (i->code == (BPF_LD | BPF_MEM) && i->k < MEM_WORDS) {
					s.a = s.mem[i->k];
				} else if (i->code == (BPF_LD | BPF_W | BPF_LEN)) {
					s.a.v = sizeof(struct seccomp_data);
					s.a.known = 1;
				} else {
					return 0;
				}
				continue;
			case BPF_LDX:
				if (i->code == (BPF_LDX | BPF_IMM)) {
					s.x = k;
				} else if (i->code == (BPF_LDX | BPF_MEM) && i->k < MEM_WORDS) {
					s.x = s.mem[i->k];
				} else if (i->code == (BPF_LDX | BPF_W | BPF_LEN)) {
					s.x.v = sizeof(struct seccomp_data);
					s.x.known = 1;
				} else {
					return 0;
				}
				continue;
			case BPF_ST:
			case BPF_STX:
				if (i->k >= MEM_WORDS)
					return 0;
				s.mem[i->k] = BPF_CLASS(i->code) == BPF_ST ? s.a : s.x;
				continue;
			case BPF_ALU:
				if (alu(i->code, &s.a, BPF_SRC(i->code) == BPF_X ? s.x : k))
					return 0;
				continue;
			case BPF_JMP:
				if (BPF_OP(i->code) == BPF_JA) {
					s.pc += i->k;
					continue;
				}
				c = cond(i->code, s.a, BPF_SRC(i->code) == BPF_X ? s.x : k);
				if (c == -2)
					return 0;
				if (c < 0) { /* both ways: the jump's target waits */
					if (depth == MAX_PENDING)
						return 0;
					pending[depth] = s;
					pending[depth++].pc += i->jt;
					s.pc += i->jf;
				} else {
					s.pc += c ? i->jt : i->jf;
				}
				continue;
			case BPF_RET:
				if (BPF_RVAL(i->code) == BPF_K ? !action_spares(i->k) :
				    BPF_RVAL(i->code) == BPF_A ? !s.a.known || !action_spares(s.a.v) : 1)
					return 0;
				break;
			case BPF_MISC:
				if (BPF_MISCOP(i->code) == BPF_TAX)
					s.x = s.a;
				else
					s.a = s.x;
				continue;
			default:
				return 0;
			}
			break; /* a RET that spares: the next pending path */
		}
	}
	return 1;
}

MP_REALIGN int mp_seccomp_spares(const struct sock_filter *f, unsigned n, const int *nrs,
				 unsigned n_nrs, void *scratch, size_t scratch_len)
{
	unsigned j;

	if (!n || n > BPF_MAXINSNS || scratch_len < MP_SECCOMP_SCRATCH)
		return 0;
	for (j = 0; j < n_nrs; j++)
		if (!spares_call(f, n, nrs[j], scratch))
			return 0;
	return 1;
}
