/*
 * bigframe.c - allocations under frames of more than 32 KiB, for
 * t2020-unwind.sh: their CFA offsets do not fit the walk's cache entry
 * (cfi.h's wide rules); unwind.c must still walk them, rsp-based (built
 * with -O2 -fomit-frame-pointer) and rbp-based (-fno-omit-frame-pointer
 * for the one function marked so), the same frames as libunwind.
 *   bigframe N    N rounds; prints the checksum
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

static __attribute__((noinline)) void grab(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 1, n);
	free((void *)sink);
	sink = p;
}

/* 40 KiB and 100 KiB of locals: CFA = rsp + 40,000-odd / 100,000-odd */
static __attribute__((noinline)) unsigned forty(unsigned r)
{
	volatile char buf[40 << 10];

	buf[r % sizeof(buf)] = (char)r;
	grab(16 + r % 64);
	return (unsigned)buf[r % sizeof(buf)] + r;
}

static __attribute__((noinline)) unsigned hundred(unsigned r)
{
	volatile char buf[100 << 10];

	buf[r % sizeof(buf)] = (char)r;
	grab(32 + r % 64);
	return (unsigned)buf[(r * 7) % sizeof(buf)] + forty(r);
}

/* rbp-based: CFA = rbp + 16 is not wide, but its callee's frame is */
static __attribute__((noinline, optimize("no-omit-frame-pointer"))) unsigned framed(unsigned r)
{
	volatile char buf[64 << 10];

	buf[r % sizeof(buf)] = (char)r;
	return hundred(r) + (unsigned)buf[r % sizeof(buf)];
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 100, i, sum = 0;

	for (i = 0; i < n; i++)
		sum += framed(i);
	free((void *)sink);
	printf("%u\n", sum);
	return 0;
}
