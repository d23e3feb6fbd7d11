/*
 * forkexec.c - process life-cycle cases for t2130-fork-exec.sh. Each mode
 * leaks blocks of a distinctive size from a function named after it:
 *
 *   fork        parent leaks 111 before fork() and 333 after it; the child
 *               leaks 222 and exits 0; prints "child=PID" (write(2))
 *   exec        leaks 444, then execs itself as "exec-child"
 *   exec-child  leaks 555 and exits 0
 *   _exit       leaks 666, then _exit(7)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile keep[4];

static __attribute__((noinline)) void before_fork(void)
{
	keep[0] = malloc(111);
}

static __attribute__((noinline)) void in_child(void)
{
	keep[1] = malloc(222);
}

static __attribute__((noinline)) void after_fork(void)
{
	keep[2] = malloc(333);
}

static __attribute__((noinline)) void before_exec(void)
{
	keep[0] = malloc(444);
}

static __attribute__((noinline)) void exec_child(void)
{
	keep[0] = malloc(555);
}

static __attribute__((noinline)) void before_exit(void)
{
	keep[0] = malloc(666);
}

static int do_fork(void)
{
	char line[64];
	int st, len;
	pid_t pid;

	before_fork();
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		in_child();
		exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 3;
	after_fork();
	len = snprintf(line, sizeof(line), "child=%d\n", (int)pid);
	write(1, line, len);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "fork"))
		return do_fork();
	if (!strcmp(mode, "exec")) {
		char *args[] = { argv[0], (char *)"exec-child", NULL };

		before_exec();
		execv("/proc/self/exe", args);
		return 4;
	}
	if (!strcmp(mode, "exec-child")) {
		exec_child();
		return 0;
	}
	if (!strcmp(mode, "_exit")) {
		before_exit();
		_exit(7);
	}
	write(2, "usage: forkexec fork|exec|_exit\n", 32);
	return 64;
}
