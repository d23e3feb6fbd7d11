/*
 * deaths.c - how a process may die (t2310). Each mode keeps 1000 B first.
 *   corpus-deaths dfree     a double free: glibc aborts (SIGABRT)
 *   corpus-deaths segv      a write through NULL (SIGSEGV)
 *   corpus-deaths term      SIGTERM to itself, left at its default action
 *   corpus-deaths handled   SIGTERM to itself with a handler: exit 5
 *   corpus-deaths query     prints what sigaction says of SIGSEGV and
 *                           SIGTERM (the program's view: default)
 *   corpus-deaths mallinfo  prints mallinfo2() before any allocation of
 *                           its own
 */
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep;
static volatile sig_atomic_t got;

static void on_term(int sig)
{
	got = sig;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "mallinfo")) {
		struct mallinfo2 mi = mallinfo2();

		printf("arena=%zu uordblks=%zu hblks=%zu\n", mi.arena, mi.uordblks, mi.hblks);
		return 0;
	}
	if (!strcmp(m, "query")) {
		struct sigaction a, b;

		sigaction(SIGSEGV, NULL, &a);
		sigaction(SIGTERM, NULL, &b);
		printf("SIGSEGV %s, SIGTERM %s\n", a.sa_handler == SIG_DFL ? "default" : "handled",
		       b.sa_handler == SIG_DFL ? "default" : "handled");
		return 0;
	}
	keep = malloc(1000); /* @keep */
	if (!strcmp(m, "segv"))
		*(volatile int *)(uintptr_t)(argc - 2) = 1;
	if (!strcmp(m, "term")) {
		kill(getpid(), SIGTERM);
		pause();
	}
	if (!strcmp(m, "handled")) {
		signal(SIGTERM, on_term);
		kill(getpid(), SIGTERM);
		return got == SIGTERM ? 5 : 1;
	}
	if (!strcmp(m, "dfree")) {
		char *volatile p = malloc(50);

		free(p);
		free(p);
	}
	return 0;
}
