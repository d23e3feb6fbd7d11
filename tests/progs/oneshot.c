/*
 * oneshot.c - a handler that runs once (SA_RESETHAND, or sysv_signal) for
 * SIGTERM, then a block kept, then the same signal again: the default
 * action ends the process (t2142).
 *
 *   oneshot resethand|sysv|reraise|strict
 *
 * resethand, sysv: the handler prints "handled" and returns; the program
 * prints what sigaction reads back then, keeps 4096 B, raises SIGTERM.
 * reraise: the handler keeps the block and raises SIGTERM itself (pending
 * until it returns, since it is blocked while the handler runs).
 * strict: signal() as a strict ISO C program calls it (__sysv_signal),
 * for SIGUSR1, whose handler chains to the action it replaced unless that
 * was SIG_DFL or SIG_IGN; prints "previous: SIG_DFL" and "survived".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *keep;

static void handled(int sig)
{
	(void)sig;
	if (write(1, "handled\n", 8) < 0)
		_exit(3);
}

extern sighandler_t __sysv_signal(int sig, sighandler_t h);
static sighandler_t previous;

static void chained(int sig)
{
	if (previous != SIG_DFL && previous != SIG_IGN && previous != SIG_ERR)
		previous(sig);
}

static void reraise(int sig)
{
	keep = malloc(4096);
	memset(keep, 1, 4096);
	raise(sig);
	if (write(1, "handled\n", 8) < 0)
		_exit(3);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "resethand";
	struct sigaction a, o;

	memset(&a, 0, sizeof(a));
	a.sa_flags = SA_RESETHAND;
	sigemptyset(&a.sa_mask);
	if (!strcmp(how, "strict")) {
		previous = __sysv_signal(SIGUSR1, chained);
		printf("previous: %s\n", previous == SIG_DFL ? "SIG_DFL" : "a handler");
		raise(SIGUSR1);
		puts("survived");
		return 0;
	}
	if (!strcmp(how, "sysv")) {
		sysv_signal(SIGTERM, handled);
	} else if (!strcmp(how, "reraise")) {
		a.sa_handler = reraise;
		sigaction(SIGTERM, &a, NULL);
		raise(SIGTERM);
		puts("not reached");
		return 0;
	} else {
		a.sa_handler = handled;
		sigaction(SIGTERM, &a, NULL);
	}
	raise(SIGTERM);
	sigaction(SIGTERM, NULL, &o);
	printf("after: %s flags=%#x\n", o.sa_handler == SIG_DFL ? "SIG_DFL" : "a handler",
	       (unsigned)o.sa_flags);
	fflush(stdout);
	keep = malloc(4096);
	memset(keep, 1, 4096);
	raise(SIGTERM);
	puts("not reached");
	return 0;
}
