/*
 * pagefaults.c MODE - what memprov's own work costs a process in page
 * faults (ten microseconds each on a VM), for t2130 and t2215:
 *
 *   fork   forks; the child prints "child_faults=N", the page faults it
 *          took between fork() and its first instruction after it (the
 *          fork handlers, memprov's included), and exits
 *   data   a megabyte of initialized data the program only reads, and 5
 *          blocks of 64 B kept in a global; exits
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static long table[131072] = { 1 }; /* 1 MiB in .data, never written */
static void *keep[5];

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	long sum = 0;
	int i, st;

	if (mode[0] == 'f') {
		pid_t pid = fork();
		struct rusage u;

		if (pid == 0) {
			getrusage(RUSAGE_SELF, &u);
			printf("child_faults=%ld\n", u.ru_minflt);
			fflush(stdout);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
		return 0;
	}
	for (i = 0; i < 131072; i += 512)
		sum += table[i];
	for (i = 0; i < 5; i++)
		keep[i] = malloc(64);
	return sum == 1 ? 0 : 1;
}
