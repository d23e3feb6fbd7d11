/*
 * test-unwind.c - memprov's stack walker (interpose/unwind.c), linked
 * alone with the files below it (cfi.c, gate.c, sys.c), against libunwind
 * on real frames (t1080).
 *
 * Chains of functions with and without frame pointers, small and large
 * frames, alloca, recursion, and a capture inside a signal handler: for
 * each, the walk must give exactly libunwind's return addresses, or give
 * up (-1) where its simple rules do not apply (a signal frame, a frame
 * larger than its rules encode); never a wrong frame. Prints one line per
 * case and "unwind: N cases, F fast, G gave up, 0 wrong"; exits 1 on any
 * wrong frame or when a case that must be walked fast is not.
 */
#define UNW_LOCAL_ONLY
#include <alloca.h>
#include <libunwind.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../interpose/unwind.h"

#define MAXF 64
#define NOINLINE __attribute__((noinline, noclone))
#define NO_FP __attribute__((optimize("omit-frame-pointer")))
#define FP __attribute__((optimize("no-omit-frame-pointer")))

static int cases, fast, gave_up, wrong;
static volatile int sink;

/*
 * Both walks from one point: mp_unwind's frame 0 is the return address in
 * capture() itself, libunwind's frame 0 another address in capture(); from
 * frame 1 on (capture's caller and up) they must agree, up to the depth
 * mp_unwind reached (libunwind may go past the outermost frame's end rule).
 */
static NOINLINE FP int capture(const char *what, int must_be_fast)
{
	void *ours[MAXF], *theirs[MAXF];
	struct mp_unwind_args a = { 0, 0, 0, 0 };
	int n = mp_unwind(ours, MAXF, &a);
	int m = unw_backtrace(theirs, MAXF);
	int i, ok = 1;

	cases++;
	if (n < 0) {
		gave_up++;
		printf("%-36s gave up (libunwind: %d frames)\n", what, m);
		if (must_be_fast) {
			printf("  expected a fast walk here\n");
			wrong++;
		}
		return n;
	}
	fast++;
	if (n < 3 || m < n - 1)
		ok = 0;
	for (i = 1; ok && i < n; i++)
		if (ours[i] != theirs[i])
			ok = 0;
	printf("%-36s %d frames %s\n", what, n, ok ? "agree" : "DIFFER");
	if (!ok) {
		wrong++;
		for (i = 0; i < (n > m ? n : m) && i < MAXF; i++)
			printf("  %2d %18p %18p\n", i, i < n ? ours[i] : NULL,
			       i < m ? theirs[i] : NULL);
	}
	return n;
}

/* A chain of 4 with frame pointers. */
static NOINLINE FP int fp3(const char *w) { int r = capture(w, 1); sink++; return r; }
static NOINLINE FP int fp2(const char *w) { int r = fp3(w); sink++; return r; }
static NOINLINE FP int fp1(const char *w) { int r = fp2(w); sink++; return r; }

/* Without frame pointers, with locals of several sizes. */
static NOINLINE NO_FP int nf3(const char *w)
{
	volatile char buf[200];
	int r;

	buf[0] = 1;
	r = capture(w, 1);
	return r + buf[0] - 1;
}

static NOINLINE NO_FP int nf2(const char *w)
{
	volatile long big[600];
	int r;

	big[0] = 0;
	r = nf3(w);
	return r + (int)big[0];
}

static NOINLINE NO_FP int nf1(const char *w)
{
	int r = nf2(w);

	sink++;
	return r;
}

/* Mixed: no frame pointer, frame pointer, alloca (the CFA on rbp). */
static NOINLINE FP int mixed_alloca(const char *w, int n)
{
	volatile char *p = alloca((size_t)n);

	p[0] = 1;
	return capture(w, 1) + p[0] - 1;
}

static NOINLINE NO_FP int mixed_nofp(const char *w)
{
	volatile int x = 3;
	int r = mixed_alloca(w, 100 + x);

	sink += x;
	return r;
}

/* Recursion 40 deep, no frame pointers. */
static NOINLINE NO_FP int rec(const char *w, int depth)
{
	volatile int pad[8];
	int r;

	pad[0] = depth;
	if (depth == 0)
		return capture(w, 1);
	r = rec(w, depth - 1);
	return r + pad[0] - depth;
}

/* A frame larger than a cache entry encodes (32 KiB): a wide rule, walked. */
static NOINLINE NO_FP int huge(const char *w)
{
	volatile char buf[40000];
	int r;

	buf[0] = 2;
	r = capture(w, 0);
	return r + buf[0] - 2;
}

/* Inside a signal handler: the walk meets the signal frame. */
static int in_handler = -2;

static void on_usr1(int sig)
{
	(void)sig;
	in_handler = capture("in a signal handler", 0);
}

int main(void)
{
	struct sigaction sa;

	if (mp_unwind_init()) {
		printf("mp_unwind_init failed\n");
		return 1;
	}
	fp1("frame pointers, 4 deep");
	nf1("no frame pointers, 3 deep");
	mixed_nofp("alloca under no frame pointer");
	rec("recursion 40 deep", 40);
	huge("a 40 KB frame");
	/* the rules are cached now: walk the same chains again */
	fp1("frame pointers, cached");
	nf1("no frame pointers, cached");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1);
	if (in_handler > 0) {
		/* a walk through a signal frame must have been refused */
		printf("  the walk went through the signal frame\n");
		wrong++;
	}
	printf("unwind: %d cases, %d fast, %d gave up, %d wrong\n", cases, fast, gave_up, wrong);
	return wrong ? 1 : 0;
}
