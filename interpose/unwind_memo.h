/*
 * unwind_memo.h - an entry of the walk memo (unwind.c) and the test of
 * whether it still applies: apart from unwind.c so that a test can build
 * entries and stacks of its own (tests/helper/test-memo.c).
 *
 * Layer: 2 storage and walk (docs/ARCHITECTURE.md), a part of unwind.c:
 * calls nothing.
 */
#ifndef MEMPROV_UNWIND_MEMO_H
#define MEMPROV_UNWIND_MEMO_H

#include <stdint.h>

#define MEMO_FRAMES 32    /* a walk giving more is not kept */
#define MEMO_LOADS 39     /* nor one reading more stack words (and the rbp it started with) */

struct memo_entry {
	uint64_t ip, sp, hi;     /* the start (ip 0: empty) and the stack's top */
	uint64_t stop_lo, stop_len;
	uint64_t hash;           /* the walk's mp_unwind_hash */
	uint32_t gen;            /* memo_gen when it was written */
	uint16_t max;            /* frames asked */
	uint8_t n, nloads;       /* frames given, words read */
	uint8_t next_way;        /* a set's first entry: the way to write next */
	uint8_t reg;             /* 1: the walk used the rbp it started with, */
	uint64_t bp;             /* this one */
	uint32_t off[MEMO_LOADS]; /* each stack word read: its offset from sp, */
	uint64_t val[MEMO_LOADS]; /* and its value */
	void *frames[MEMO_FRAMES];
};

/*
 * Whether a word that entry e's walk read differs now: the rbp it
 * started with, then its stack words four at a time, with no branch per
 * word (every offset lies between sp and the stack's top, as when it
 * was recorded: safe to read whether or not an earlier one differed).
 * sqlite3: a compare and a branch per word, and a test per word of
 * whether it was the rbp, were two thirds of a replay's instructions.
 */
static inline __attribute__((always_inline)) int memo_differs(const struct memo_entry *e,
							      uintptr_t sp, uintptr_t bp)
{
	const uint32_t *off = e->off;
	const uint64_t *val = e->val;
	unsigned i = 0, n = e->nloads;
	uint64_t d = e->reg ? bp ^ e->bp : 0;

#define W(k) (*(const uint64_t *)(sp + off[i + (k)]) ^ val[i + (k)])
	for (; i + 4 <= n; i += 4) {
		d |= W(0) | W(1) | W(2) | W(3);
		if (d)
			return 1;
	}
	for (; i < n; i++)
		d |= W(0);
#undef W
	return d != 0;
}

#endif
