/*
 * forkinherit.c - forked children and what they inherit, for
 * t2135-fork-inherit.sh and t2136-run-dir.sh. Modes:
 *
 *   inherit  the parent keeps 1000 B (parent_keeps) and 200 B
 *            (parent_lends), then forks; the child frees the 200 B block
 *            it inherited, leaks 3 x 50 B (child_leaks) and exits 0; the
 *            parent waits, frees both blocks and exits 0. Its child's
 *            live set at exit: 1150 B in 4 blocks, 1000 B inherited.
 *   reach    as inherit, but the child also allocates 40 B (child_hangs)
 *            whose only pointer it stores inside the inherited 1000 B
 *            block: still reachable (through a global), not lost.
 *   pool N L a pool of N forked workers; worker L (0-based) leaks
 *            3 x 4096 B (worker_leaks), the others free what they
 *            allocate; worker i exits with status i; the parent waits
 *            for all and exits 0.
 *
 * Prints "child=PID" for each child (write(2): no stdio buffer to copy).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile kept;
static void *volatile lent;

static void say_child(pid_t pid)
{
	char line[64];
	int len = snprintf(line, sizeof(line), "child=%d\n", (int)pid);

	if (write(1, line, (size_t)len) != len)
		_exit(3);
}

static __attribute__((noinline)) void parent_keeps(void)
{
	kept = malloc(1000);
	memset(kept, 0, 1000);
}

static __attribute__((noinline)) void parent_lends(void)
{
	lent = malloc(200);
}

/* Lose p: its last pointer goes with this frame. */
static __attribute__((noinline)) void drop(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static __attribute__((noinline)) void child_leaks(void)
{
	int i;

	for (i = 0; i < 3; i++)
		drop(malloc(50));
}

static __attribute__((noinline)) void child_hangs(void)
{
	((void **)kept)[0] = malloc(40);
}

static int fork_one(int reach)
{
	int st;
	pid_t pid;

	parent_keeps();
	parent_lends();
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		free(lent);
		child_leaks();
		if (reach)
			child_hangs();
		exit(0);
	}
	say_child(pid);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	free(lent);
	free(kept);
	return 0;
}

static __attribute__((noinline)) void worker_leaks(void)
{
	int i;

	for (i = 0; i < 3; i++)
		drop(malloc(4096));
}

static __attribute__((noinline)) void worker_works(void)
{
	free(malloc(4096));
}

static int pool(int n, int leaker)
{
	pid_t pids[64];
	int i, st, bad = 0;

	if (n < 1 || n > 64)
		return 2;
	parent_keeps();
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return 2;
		if (pids[i] == 0) {
			if (i == leaker)
				worker_leaks();
			else
				worker_works();
			exit(i);
		}
		say_child(pids[i]);
	}
	for (i = 0; i < n; i++)
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != i)
			bad = 1;
	free(kept);
	return bad;
}

/* Before its i-th fork (from 0) the parent allocates (i + 1) * 100 bytes
 * and keeps them: child i inherits 100 * (i + 1) * (i + 2) / 2 bytes. */
static __attribute__((noinline)) void *parent_steps(size_t n)
{
	void *p = malloc(n);

	memset(p, 1, n);
	return p;
}

static int ladder(int n)
{
	void *steps[64];
	int i, st, bad = 0;

	if (n < 1 || n > 64)
		return 2;
	for (i = 0; i < n; i++) {
		pid_t pid;

		steps[i] = parent_steps((size_t)(i + 1) * 100);
		pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0)
			_exit(0);
		say_child(pid);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	for (i = 0; i < n; i++)
		free(steps[i]);
	return bad;
}

/* A block that only a thread of the parent holds (on its stack): lost in
 * a forked child, which has no such thread. The child leaks 50 B itself. */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cond = PTHREAD_COND_INITIALIZER;
static int held_ready, held_go;

static __attribute__((noinline)) void *thread_holds(void *arg)
{
	char *volatile p = malloc(777);

	memset(p, 1, 777);
	pthread_mutex_lock(&held_lock);
	held_ready = 1;
	pthread_cond_broadcast(&held_cond);
	while (!held_go)
		pthread_cond_wait(&held_cond, &held_lock);
	pthread_mutex_unlock(&held_lock);
	free(p);
	return arg;
}

static int thread_held(void)
{
	pthread_t t;
	pid_t pid;
	int st;

	if (pthread_create(&t, NULL, thread_holds, NULL))
		return 2;
	pthread_mutex_lock(&held_lock);
	while (!held_ready)
		pthread_cond_wait(&held_cond, &held_lock);
	pthread_mutex_unlock(&held_lock);
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		drop(malloc(50));
		exit(0);
	}
	say_child(pid);
	waitpid(pid, &st, 0);
	pthread_mutex_lock(&held_lock);
	held_go = 1;
	pthread_cond_broadcast(&held_cond);
	pthread_mutex_unlock(&held_lock);
	pthread_join(t, NULL);
	return !WIFEXITED(st) || WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "inherit"))
		return fork_one(0);
	if (argc > 1 && !strcmp(argv[1], "reach"))
		return fork_one(1);
	if (argc > 3 && !strcmp(argv[1], "pool"))
		return pool(atoi(argv[2]), atoi(argv[3]));
	if (argc > 1 && !strcmp(argv[1], "threadheld"))
		return thread_held();
	if (argc > 2 && !strcmp(argv[1], "ladder"))
		return ladder(atoi(argv[2]));
	fprintf(stderr, "usage: forkinherit inherit|reach|pool N LEAKER|ladder N|threadheld\n");
	return 2;
}
