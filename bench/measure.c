/*
 * measure.c - run one benchmark command and record its wall time and peak
 * RSS, for bench/run.sh.
 *
 *   measure -o FILE [-t SECONDS] [-m MIB] -- CMD [ARG...]
 *
 * Runs CMD in its own process group, waits for it and writes one line to
 * FILE: "WALL_SECONDS MAXRSS_KIB STATUS", where STATUS is the exit code,
 * 128+N for death by signal N, or "timeout". MAXRSS is ru_maxrss of the
 * command and its waited-for descendants: the largest single process, not
 * a sum. -t kills the whole group after SECONDS; -m limits the address
 * space (RLIMIT_AS) of the command and its children, so a tracer whose
 * memory runs away fails instead of taking the machine down. Exits with
 * the command's status.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t timed_out;
static pid_t child;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
	kill(-child, SIGKILL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: measure -o FILE [-t SECONDS] [-m MIB] -- CMD [ARG...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	unsigned timeout = 0;
	unsigned long mib = 0;
	struct rusage ru;
	double t0, t1;
	int opt, st, code;
	FILE *f;

	while ((opt = getopt(argc, argv, "+o:t:m:")) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 't': timeout = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'm': mib = strtoul(optarg, NULL, 10); break;
		default: return usage();
		}
	}
	if (!out || optind >= argc)
		return usage();

	t0 = now();
	child = fork();
	if (child < 0) {
		perror("measure: fork");
		return 2;
	}
	if (child == 0) {
		setpgid(0, 0);
		if (mib) {
			struct rlimit rl = { mib << 20, mib << 20 };
			setrlimit(RLIMIT_AS, &rl);
		}
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "measure: cannot run '%s': %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	setpgid(child, child);
	signal(SIGALRM, on_alarm);
	alarm(timeout);
	while (wait4(child, &st, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("measure: wait4");
			return 2;
		}
	}
	t1 = now();
	alarm(0);
	/* Reap anything the command left in its group (a tracer's helper). */
	kill(-child, SIGKILL);
	code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "measure: cannot write '%s': %s\n", out, strerror(errno));
		return 2;
	}
	if (timed_out)
		fprintf(f, "%.6f %ld timeout\n", t1 - t0, ru.ru_maxrss);
	else
		fprintf(f, "%.6f %ld %d\n", t1 - t0, ru.ru_maxrss, code);
	fclose(f);
	return code;
}
