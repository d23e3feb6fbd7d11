/*
 * sigrecv.c OUT - blocks SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1,
 * SIGUSR2, SIGALRM, SIGWINCH and SIGCONT, writes "ready\n" to the file
 * OUT, then takes each signal as it comes (sigtimedwait) and appends its
 * number and whether another process sent it ("10 user\n"). Exits 0 after
 * SIGTERM, or 3 when no signal came for 20 seconds (a bound for the test
 * that drives it). Writes with write(2) only. Used by t2210-run-signals.sh.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const int sigs[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGCONT,
};

static void put(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		_exit(4);
}

int main(int argc, char **argv)
{
	struct timespec limit = { 20, 0 };
	siginfo_t si;
	sigset_t set;
	char line[32];
	unsigned i;
	int fd, sig;

	if (argc < 2)
		return 64;
	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0)
		return 2;
	put(fd, "ready\n");
	for (;;) {
		sig = sigtimedwait(&set, &si, &limit);
		if (sig < 0)
			return 3;
		snprintf(line, sizeof(line), "%d %s\n", sig, si.si_code <= 0 ? "user" : "kernel");
		put(fd, line);
		if (sig == SIGTERM)
			return 0;
	}
}
