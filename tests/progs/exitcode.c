/*
 * exitcode.c - prints a known text with printf (and a few allocations),
 * then leaves as argv[1] says: a number -> exit(number); "return3" ->
 * returns 3 from main; "kill" -> SIGTERM to itself; "abort" -> abort();
 * "sysexit7" -> syscall(SYS_exit_group, 7), which runs no exit handler.
 * Used by t2170-env.sh and t2190-exit-status.sh.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "0";
	char *p = NULL;

	for (int i = 0; i < 200; i++) {
		p = realloc(p, 32 + i);
		snprintf(p, 32 + i, "line %d of the program's own output", i);
		printf("%s\n", p);
	}
	free(p);
	fflush(stdout);
	if (!strcmp(how, "return3"))
		return 3;
	if (!strcmp(how, "kill"))
		raise(SIGTERM);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "sysexit7"))
		syscall(SYS_exit_group, 7);
	exit(atoi(how));
}
