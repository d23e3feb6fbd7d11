/*
 * test-memo.c - the walk memo's test of whether an entry still applies
 * (interpose/unwind_memo.h: memo_differs), on entries and a stack built
 * here (t1080).
 *
 * For every count of stack words an entry can hold (0 to MEMO_LOADS),
 * with and without the rbp the walk started with: the entry applies when
 * every recorded word reads the same; it does not when any one of them
 * differs (each position in turn, and the last one alone, which the
 * loop's four-at-a-time part does not read); it does not when the rbp
 * differs and the walk used it, and does when the walk did not use it; a
 * change to a word the walk did not read changes nothing. Prints one
 * line per failure and "memo: N cases, F failed"; exits 1 on a failure.
 */
#include <stdio.h>
#include <string.h>

#include "../../interpose/unwind_memo.h"

#define WORDS 128

static uint64_t stack[WORDS];
static int cases, failed;

static void expect(const struct memo_entry *e, uintptr_t bp, int want, const char *what,
		   unsigned n, unsigned k)
{
	int got = memo_differs(e, (uintptr_t)stack, bp) != 0;

	cases++;
	if (got != want) {
		failed++;
		printf("FAIL %s: %u words, reg %u, word %u: differs %d, expected %d\n", what, n,
		       e->reg, k, got, want);
	}
}

int main(void)
{
	struct memo_entry e;
	unsigned n, k, reg, i;

	for (i = 0; i < WORDS; i++)
		stack[i] = 0x5a5a000000000000ull + i * 0x1111;
	for (reg = 0; reg < 2; reg++) {
		for (n = 0; n <= MEMO_LOADS; n++) {
			memset(&e, 0, sizeof(e));
			e.nloads = (uint8_t)n;
			e.reg = (uint8_t)reg;
			e.bp = 0x7ffd0000;
			/* the words at every third slot, last first: offsets in no order */
			for (i = 0; i < n; i++) {
				e.off[i] = (uint32_t)(8 * (3 * (n - 1 - i) + 1));
				e.val[i] = stack[3 * (n - 1 - i) + 1];
			}
			expect(&e, e.bp, 0, "all the same", n, 0);
			/* a word the walk did not read */
			stack[0] ^= 1;
			expect(&e, e.bp, 0, "an unread word changed", n, 0);
			stack[0] ^= 1;
			for (k = 0; k < n; k++) {
				uint64_t *w = &stack[e.off[k] / 8];

				*w ^= 1ull << (k % 64);
				expect(&e, e.bp, 1, "one word differs", n, k);
				*w ^= 1ull << (k % 64);
			}
			expect(&e, e.bp + 16, reg, "the rbp differs", n, 0);
		}
	}
	printf("memo: %d cases, %d failed\n", cases, failed);
	return failed != 0;
}
