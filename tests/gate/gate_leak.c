/*
 * gate_leak.c - allocation patterns with exactly known figures for the CI
 * gate tests (tests/t7*.sh). Lines that leave memory live carry a LEAK-*
 * tag the tests look up.
 *
 *   gate_leak leak     3 x 1000 B heap blocks that leak_here drops the last
 *                      pointer to (LEAK-HEAP): definitely lost
 *   gate_leak keep     3 x 1000 B heap blocks kept in a global by keep_here
 *                      (LEAK-KEEP): still reachable
 *   gate_leak kinds    leak, plus one 8192 B anonymous mmap dropped (LEAK-MMAP)
 *   gate_leak clean    allocates and frees everything, prints a line (the
 *                      stdout buffer glibc keeps until exit)
 *   gate_leak grow N   N marks "step I"; keeps 2048 B per step (LEAK-GROW),
 *                      after a warm-up of 3 steps that keep 64 KiB each
 *                      (LEAK-WARM); frees it all before exit
 *   gate_leak threads  starts 4 threads and joins them (glibc keeps each
 *                      finished thread's stack, and its DTV, for reuse)
 *   gate_leak pipe     keep, then writes lines to stdout until a closed
 *                      pipe's SIGPIPE kills it (`gate_leak pipe | head -n 1`)
 *   gate_leak term     keep, then dies of SIGTERM
 *   gate_leak termleak keep and leak, then dies of SIGTERM (sent by itself)
 *   gate_leak die SIG SIZE [leak]   on an alternate signal stack of SIZE
 *                      bytes (0: none), holds a 400 B block in a live frame
 *                      only (LEAK-HOLD), with leak also drops 3 blocks
 *                      (leak_here), then dies of SIG: "abrt" (abort(), as
 *                      a googletest death test's child), "segv" (a write
 *                      to address 0) or "term" (raise)
 *   gate_leak daemon FILE  keep, then daemon(0, 0); the daemon writes to FILE
 *                      (created as FILE.tmp, then renamed) its pid, its
 *                      directory, what fd 1 is, whether it leads its
 *                      session, and exits 0
 *   gate_leak textdomain   binds a gettext domain (bindtextdomain,
 *                      bind_textdomain_codeset, textdomain), then dies of
 *                      SIGTERM: glibc's gettext state is all it holds
 */
#include <libintl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void memprov_mark(const char *label) __attribute__((weak));

static void *keep[3];

/* Overwrite the dead stack below the caller: no stale copy of a pointer. */
static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[64 << 10];

	memset((char *)buf, 0, sizeof(buf));
}

static __attribute__((noinline)) void leak_here(void)
{
	for (int i = 0; i < 3; i++) {
		char *p = malloc(1000); /* LEAK-HEAP */

		memset(p, 1, 1000);
	}
}

/* The block held by die's frame: the only pointer to it is on the stack. */
static __attribute__((noinline)) void *hold_here(void)
{
	char *p = malloc(400); /* LEAK-HOLD */

	memset(p, 2, 400);
	return p;
}

static __attribute__((noinline)) int die(const char *sig, size_t alt, int leak)
{
	void *volatile held = hold_here();
	stack_t ss;

	if (alt) {
		ss.ss_sp = mmap(NULL, alt, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ss.ss_size = alt;
		ss.ss_flags = 0;
		if (ss.ss_sp == MAP_FAILED || sigaltstack(&ss, NULL))
			return 3;
	}
	if (leak) {
		leak_here();
		scrub();
	}
	if (!strcmp(sig, "abrt"))
		abort();
	if (!strcmp(sig, "segv"))
		*(volatile int *)0 = 1;
	if (!strcmp(sig, "term"))
		raise(SIGTERM);
	return held ? 5 : 6;
}

static __attribute__((noinline)) void keep_here(void)
{
	for (int i = 0; i < 3; i++)
		keep[i] = malloc(1000); /* LEAK-KEEP */
}

static int daemon_mode(const char *file)
{
	char cwd[256] = "", out[256] = "", tmp[512], line[1024];
	ssize_t n;
	FILE *f;

	keep_here();
	if (daemon(0, 0))
		return 3;
	if (!getcwd(cwd, sizeof(cwd)))
		return 4;
	n = readlink("/proc/self/fd/1", out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = 0;
	snprintf(line, sizeof(line), "%d %s %s %d\n", (int)getpid(), cwd, out,
		 getsid(0) == getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f)
		return 5;
	fputs(line, f);
	fclose(f);
	return rename(tmp, file) ? 6 : 0;
}

static __attribute__((noinline)) int map_here(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); /* LEAK-MMAP */

	if (p == MAP_FAILED)
		return -1;
	memset(p, 1, 8192);
	return 0;
}

static __attribute__((noinline)) void tidy(void)
{
	char *p = malloc(500), *q = calloc(10, 10);

	p = realloc(p, 5000);
	free(q);
	free(p);
}

static __attribute__((noinline)) void *grow_step(void)
{
	return malloc(2048); /* LEAK-GROW */
}

static __attribute__((noinline)) void *warm_step(void)
{
	return malloc(65536); /* LEAK-WARM */
}

static int grow(int n)
{
	void **kept = calloc((size_t)n * 2 + 1, sizeof(*kept));
	char label[32];
	int i, k = 0;

	for (i = 0; i < n; i++) {
		if (i < 3)
			kept[k++] = warm_step();
		kept[k++] = grow_step();
		tidy();
		snprintf(label, sizeof(label), "step %d", i);
		if (memprov_mark)
			memprov_mark(label);
	}
	while (k > 0)
		free(kept[--k]);
	free(kept);
	return 0;
}

static void *thread_fn(void *arg)
{
	free(malloc(100));
	return arg;
}

static int threads(void)
{
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, thread_fn, NULL))
			return 3;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "leak";

	tidy();
	if (!strcmp(mode, "leak")) {
		leak_here();
		scrub();
	} else if (!strcmp(mode, "keep")) {
		keep_here();
	} else if (!strcmp(mode, "kinds")) {
		leak_here();
		if (map_here() < 0)
			return 3;
		scrub();
	} else if (!strcmp(mode, "clean")) {
		printf("clean\n");
	} else if (!strcmp(mode, "threads")) {
		return threads();
	} else if (!strcmp(mode, "grow")) {
		return grow(argc > 2 ? atoi(argv[2]) : 10);
	} else if (!strcmp(mode, "pipe")) {
		keep_here();
		for (;;)
			if (puts("line") == EOF)
				return 4; /* SIGPIPE ignored: the gate would see an exit */
	} else if (!strcmp(mode, "term")) {
		keep_here();
		raise(SIGTERM);
		return 5;
	} else if (!strcmp(mode, "termleak")) {
		keep_here();
		leak_here();
		scrub();
		raise(SIGTERM);
		return 5;
	} else if (!strcmp(mode, "daemon") && argc > 2) {
		return daemon_mode(argv[2]);
	} else if (!strcmp(mode, "die") && argc > 3) {
		return die(argv[2], (size_t)atol(argv[3]), argc > 4);
	} else if (!strcmp(mode, "textdomain")) {
		bindtextdomain("memprov-test", "/usr/share/locale");
		bind_textdomain_codeset("memprov-test", "UTF-8");
		textdomain("memprov-test");
		raise(SIGTERM);
		return 5;
	} else {
		return 2;
	}
	return 0;
}
