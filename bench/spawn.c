/*
 * spawn.c - what one short process costs under memprov, measured without
 * perf or env in between: `spawn RUNS LIB DIR CMD [ARG...]` starts CMD
 * (an absolute path) RUNS times in each of four variants, the variants
 * taking turns run by run (bare, loaded, traced, full, bare, ...), so
 * that the machine's load moves them alike:
 *
 *   bare    the command alone
 *   loaded  LD_PRELOAD=LIB with MEMPROV_DISABLE=1: the loader's work
 *   traced  LD_PRELOAD=LIB with MEMPROV_REACH=0: recording, no scan
 *   full    LD_PRELOAD=LIB: recording and the scan at exit
 *
 * Each run is posix_spawn to waitpid, stdout to /dev/null, traces to DIR
 * (emptied as it goes). Prints the median and the mean of each variant in
 * microseconds, and the medians' differences. bench/profile.sh
 * startup-spawn runs it on `ls -d /`.
 */
#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define VARIANTS 4

static const char *const names[VARIANTS] = { "bare", "loaded", "traced", "full" };

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The environment of variant v: the caller's, less its LD_PRELOAD and
 * MEMPROV_*, plus the variant's. */
static char **env_for(int v, const char *lib, const char *dir)
{
	static char pre[4096], out[4096], disable[] = "MEMPROV_DISABLE=1", noscan[] = "MEMPROV_REACH=0";
	size_t n = 0, i;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 5, sizeof(*env));
	if (!env)
		return NULL;
	for (n = 0, i = 0; environ[i]; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "MEMPROV_", 8))
			env[n++] = environ[i];
	if (v == 0)
		return env;
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", lib);
	snprintf(out, sizeof(out), "MEMPROV_OUTPUT=%s/", dir);
	env[n++] = pre;
	env[n++] = out;
	if (v == 1)
		env[n++] = disable;
	if (v == 2)
		env[n++] = noscan;
	return env;
}

static void empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	char **env[VARIANTS];
	double *t[VARIANTS], med[VARIANTS];
	long runs;
	int v, i;

	if (argc < 5 || (runs = strtol(argv[1], NULL, 10)) < 1 || argv[4][0] != '/') {
		fprintf(stderr, "usage: spawn RUNS LIB DIR /ABSOLUTE/CMD [ARG...]\n");
		return 2;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (v = 0; v < VARIANTS; v++) {
		env[v] = env_for(v, argv[2], argv[3]);
		t[v] = calloc((size_t)runs, sizeof(double));
		if (!env[v] || !t[v]) {
			perror("spawn");
			return 2;
		}
	}
	for (i = 0; i < runs; i++) {
		for (v = 0; v < VARIANTS; v++) {
			double start = now_us();
			pid_t pid;
			int st;

			if (posix_spawn(&pid, argv[4], &fa, NULL, argv + 4, env[v])) {
				perror(argv[4]);
				return 2;
			}
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
				fprintf(stderr, "spawn: %s (%s) did not exit with status 0\n", argv[4],
					names[v]);
				return 1;
			}
			t[v][i] = now_us() - start;
		}
		if (i % 50 == 49)
			empty_dir(argv[3]);
	}
	empty_dir(argv[3]);
	for (v = 0; v < VARIANTS; v++) {
		double sum = 0;

		for (i = 0; i < runs; i++)
			sum += t[v][i];
		qsort(t[v], (size_t)runs, sizeof(double), cmp_double);
		med[v] = t[v][runs / 2];
		printf("%-6s median %6.0f us, mean %6.0f us\n", names[v], med[v], sum / (double)runs);
	}
	printf("medians: loading +%.0f, recording +%.0f, scan at exit +%.0f: %.0f us over bare\n",
	       med[1] - med[0], med[2] - med[1], med[3] - med[2], med[3] - med[0]);
	return 0;
}
