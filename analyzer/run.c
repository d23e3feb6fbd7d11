/*
 * run.c - `memprov run`: start a command with libmemprov.so preloaded,
 * wait for it, say where its trace (and its children's) went, and exit
 * with its status as a shell would.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command.h"
#include "gate.h"
#include "util.h"

#define DEFAULT_OUTPUT "memprov.%p.trace"
#define MAX_LISTED 5 /* other traces named one by one */

/*
 * Signals memprov passes on to the command instead of dying of them (as
 * timeout(1) does): the job-control and user signals a supervisor, a CI
 * runner or a user sends to the process it started.
 */
static const int forwarded[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGCONT,
};

/* Signals whose default action dumps core. */
static const int core_signals[] = {
	SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ, SIGSYS,
};

static volatile pid_t child_pid;

/*
 * Pass on signals another process sent us (si_code <= 0: kill, sigqueue,
 * tgkill). Those the terminal sends (Ctrl-C, Ctrl-\, a window resize) go
 * to the whole foreground process group: the command has them already.
 */
static void forward(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;

	(void)ctx;
	if (child_pid > 0 && si && si->si_code <= 0)
		kill(child_pid, sig);
	errno = saved;
}

/* What forward_signals() changed, to put back. */
struct sig_state {
	sigset_t mask;                          /* the mask before */
	struct sigaction old[ARRAY_SIZE(forwarded)];
	unsigned char caught[ARRAY_SIZE(forwarded)];
};

/*
 * Block the forwarded signals and catch them, but those ignored when
 * memprov started (nohup): the command inherits the ignoring. They stay
 * blocked until spawn_and_wait knows the command's pid.
 */
static void forward_signals(struct sig_state *st)
{
	struct sigaction sa;
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, &st->mask);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(forwarded); i++) {
		st->caught[i] = 0;
		if (sigaction(forwarded[i], NULL, &st->old[i]) < 0 || st->old[i].sa_handler == SIG_IGN)
			continue;
		st->caught[i] = !sigaction(forwarded[i], &sa, NULL);
	}
}

/* Put the actions and the mask back as they were. */
static void forward_stop(const struct sig_state *st)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(forwarded); i++)
		if (st->caught[i])
			sigaction(forwarded[i], &st->old[i], NULL);
	sigprocmask(SIG_SETMASK, &st->mask, NULL);
}

/*
 * End memprov the way its command ended: killed by sig, so that its
 * parent sees the same death (as `timeout --preserve-status` and `env`
 * do). memprov must not dump core itself: the command's core is the one
 * wanted. Returns only if sig does not end a process.
 */
static void die_of_signal(int sig)
{
	struct rlimit rl;
	sigset_t set;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(core_signals); i++)
		if (core_signals[i] == sig && !getrlimit(RLIMIT_CORE, &rl) && rl.rlim_cur) {
			rl.rlim_cur = 0;
			setrlimit(RLIMIT_CORE, &rl);
		}
	fflush(stdout);
	fflush(stderr);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

/*
 * Start memprov's lines on a line of their own: the command may have left
 * an unterminated line on the stderr it shares with us. On a regular file
 * the byte before the write position tells. A terminal or a pipe cannot
 * be read back: there one newline always comes first.
 */
static void own_line(void)
{
	struct stat st;
	off_t off;
	char c = 0;
	int fd;

	if (fstat(2, &st) < 0)
		return;
	if (S_ISREG(st.st_mode)) {
		off = lseek(2, 0, SEEK_CUR);
		if (off <= 0)
			return;
		/* stderr is usually write-only: read the file through /proc */
		fd = open("/proc/self/fd/2", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			if (pread(fd, &c, 1, off - 1) != 1)
				c = 0;
			close(fd);
		}
		if (c == '\n')
			return;
	}
	fputc('\n', stderr);
}

static int readable_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, R_OK);
}

/* The preload object: $MEMPROV_LIB, else beside this program. */
static char *find_library(void)
{
	static const char *const rel[] = { "/../interpose/libmemprov.so", "/../lib/libmemprov.so" };
	char exe[PATH_MAX], path[PATH_MAX + 64], *slash, *real;
	const char *env = getenv("MEMPROV_LIB");
	ssize_t n;
	size_t i;

	if (env && *env) {
		if (!readable_file(env)) {
			error("MEMPROV_LIB is '%s', which is not a readable file: set it to libmemprov.so", env);
			return NULL;
		}
		real = realpath(env, NULL);
		return real ? real : xstrdup(env);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		error("cannot read /proc/self/exe: %s; set MEMPROV_LIB to libmemprov.so", strerror(errno));
		return NULL;
	}
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	for (i = 0; i < ARRAY_SIZE(rel); i++) {
		snprintf(path, sizeof(path), "%s%s", exe, rel[i]);
		if (readable_file(path)) {
			real = realpath(path, NULL);
			return real ? real : xstrdup(path);
		}
	}
	error("cannot find libmemprov.so in %s/../interpose or %s/../lib: build it with make, or set MEMPROV_LIB",
	      exe, exe);
	return NULL;
}

/* template with every %p replaced by rep and %% by %, as the library does. */
static char *expand(const char *tmpl, const char *rep)
{
	size_t n = strlen(tmpl) + 1, rl = strlen(rep);
	char *out = xmalloc(n * (rl + 1) + 1), *o = out;

	for (; *tmpl; tmpl++) {
		if (tmpl[0] == '%' && tmpl[1] == 'p') {
			memcpy(o, rep, rl);
			o += rl;
			tmpl++;
		} else if (tmpl[0] == '%' && tmpl[1] == '%') {
			*o++ = '%';
			tmpl++;
		} else {
			*o++ = *tmpl;
		}
	}
	*o = 0;
	return out;
}

/*
 * Trace files the template can produce: %p as any pid, and the numbered
 * names the writer falls back to (NAME.<k>.trace) when a name is taken,
 * as after an exec.
 */
static void list_traces(const char *tmpl, glob_t *g)
{
	char *pat = expand(tmpl, "*"), *num;
	size_t len = strlen(pat);

	memset(g, 0, sizeof(*g));
	num = xmalloc(len + 8);
	if (len >= 6 && !strcmp(pat + len - 6, ".trace"))
		sprintf(num, "%.*s.*.trace", (int)(len - 6), pat);
	else
		sprintf(num, "%s.*", pat);
	if (glob(pat, 0, NULL, g) && glob(num, 0, NULL, g))
		memset(g, 0, sizeof(*g));
	else
		glob(num, GLOB_APPEND, NULL, g);
	free(pat);
	free(num);
}

static int in_glob(const glob_t *g, const char *path)
{
	size_t i;

	for (i = 0; i < g->gl_pathc; i++)
		if (!strcmp(g->gl_pathv[i], path))
			return 1;
	return 0;
}

/* Is entry i of g also an earlier entry (two patterns can match one file)? */
static int seen_before(const glob_t *g, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(g->gl_pathv[j], g->gl_pathv[i]))
			return 1;
	return 0;
}

/*
 * The command's own trace: the name for its pid, or, when that name was
 * taken before the run (an old trace at -o PATH), the first numbered name
 * the library fell back to (NAME.<k>.trace).
 */
static char *own_trace(const char *tmpl, pid_t pid, const glob_t *before)
{
	char pidstr[16], *base, *alt;
	size_t len;
	int k;

	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	base = expand(tmpl, pidstr);
	if (!in_glob(before, base))
		return base;
	len = strlen(base);
	alt = xmalloc(len + 16);
	for (k = 1; k < 1000; k++) {
		if (len >= 6 && !strcmp(base + len - 6, ".trace"))
			sprintf(alt, "%.*s.%d.trace", (int)(len - 6), base, k);
		else
			sprintf(alt, "%s.%d", base, k);
		if (!in_glob(before, alt) && readable_file(alt)) {
			free(base);
			return alt;
		}
	}
	free(alt);
	return base;
}

/* Say where the traces are: the command's own, then any new ones (children). */
static void report_traces(const char *tmpl, pid_t pid, const glob_t *before)
{
	char *mine;
	size_t i, others = 0;
	glob_t after;

	mine = own_trace(tmpl, pid, before);
	if (readable_file(mine))
		fprintf(stderr, "memprov: trace written to %s\n", mine);
	else
		fprintf(stderr, "memprov: no trace at %s: the command may not have started under libmemprov.so\n",
			mine);
	list_traces(tmpl, &after);
	for (i = 0; i < after.gl_pathc; i++) {
		const char *p = after.gl_pathv[i];

		if (!strcmp(p, mine) || in_glob(before, p) || seen_before(&after, i))
			continue;
		if (++others <= MAX_LISTED)
			fprintf(stderr, "memprov: trace of a child or exec'd process written to %s\n", p);
	}
	if (others > MAX_LISTED)
		fprintf(stderr, "memprov: and %zu more traces of child or exec'd processes\n",
			others - MAX_LISTED);
	globfree(&after);
	free(mine);
}

/*
 * The directory the trace will be created in must exist and be writable
 * before the command starts: a run whose trace cannot be written is
 * refused (exit 1), not run untraced. A template that is a directory
 * (or ends in '/') gets its traces inside it; a directory part holding a
 * '%' depends on the pid and is left to the library.
 */
static int check_output(const char *output)
{
	const char *slash = strrchr(output, '/');
	char *dir;
	struct stat st;
	int ret = 0;

	if (!stat(output, &st) && S_ISDIR(st.st_mode))
		dir = xstrdup(output);
	else if (!slash)
		dir = xstrdup(".");
	else
		dir = xstrndup(output, slash == output ? 1 : (size_t)(slash - output));
	if (strchr(dir, '%'))
		goto out;
	if (stat(dir, &st) < 0 || (!S_ISDIR(st.st_mode) && (errno = ENOTDIR)) ||
	    access(dir, W_OK | X_OK) < 0)
		ret = error("cannot write the trace '%s' in '%s': %s", output, dir, strerror(errno));
out:
	free(dir);
	return ret;
}

static int set_env(const char *lib, const char *output, const char *mark_on)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload;
	int ret;

	if (old && *old) {
		preload = xmalloc(strlen(lib) + strlen(old) + 2);
		sprintf(preload, "%s %s", lib, old);
	} else {
		preload = xstrdup(lib);
	}
	ret = setenv("LD_PRELOAD", preload, 1) || setenv("MEMPROV_OUTPUT", output, 1) ||
	      (mark_on && setenv("MEMPROV_MARK_ON", mark_on, 1));
	free(preload);
	return ret ? error("cannot set the environment: %s", strerror(errno)) : 0;
}

/*
 * Fork and exec cmd (pid in *child), wait for it, passing signals on.
 * Returns its status as a shell gives it (*sig: the signal that killed
 * it, else 0), or -1; *started is 0 when exec failed (a close-on-exec
 * pipe tells).
 */
static int spawn_and_wait(char **cmd, pid_t *child, int *started, int *sig)
{
	struct sig_state ss;
	siginfo_t info;
	int status, pfd[2], err = 0, ret;
	pid_t pid;
	ssize_t n;
	size_t i;

	*sig = 0;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return error("cannot create a pipe: %s", strerror(errno)), -1;
	forward_signals(&ss);
	pid = fork();
	if (pid < 0) {
		forward_stop(&ss);
		close(pfd[0]);
		close(pfd[1]);
		return error("cannot fork: %s", strerror(errno)), -1;
	}
	if (pid == 0) {
		/* the command starts with memprov's own signal state */
		for (i = 0; i < ARRAY_SIZE(forwarded); i++)
			if (ss.caught[i])
				signal(forwarded[i], SIG_DFL);
		sigprocmask(SIG_SETMASK, &ss.mask, NULL);
		close(pfd[0]);
		execvp(cmd[0], cmd);
		err = errno;
		fprintf(stderr, "memprov: error: cannot run '%s': %s\n", cmd[0], strerror(err));
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(err == ENOENT ? 127 : 126);
	}
	child_pid = *child = pid;
	sigprocmask(SIG_SETMASK, &ss.mask, NULL);
	close(pfd[1]);
	do
		n = read(pfd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	*started = n != (ssize_t)sizeof(err);
	/*
	 * Wait without reaping: until it is reaped, the pid cannot be reused,
	 * so a signal forwarded meanwhile cannot reach another process.
	 */
	do
		ret = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT);
	while (ret < 0 && errno == EINTR);
	forward_stop(&ss);
	child_pid = 0;
	if (ret < 0 || waitpid(pid, &status, 0) < 0)
		return error("cannot wait for '%s': %s", cmd[0], strerror(errno)), -1;
	if (WIFSIGNALED(status)) {
		*sig = WTERMSIG(status);
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

/*
 * --check: gate the traces this run wrote (the command's, after any
 * exec). The command's own failure wins; when it succeeded, a gate
 * failure exits with --gate-status (23) and an unreadable trace with 2.
 */
static int run_gate(const struct gate_opts *gate, const char *tmpl, const glob_t *before,
		    pid_t pid, int status)
{
	glob_t after;
	char **paths;
	size_t i, n = 0;
	int ret;

	list_traces(tmpl, &after);
	paths = xcalloc(after.gl_pathc + 1, sizeof(*paths));
	for (i = 0; i < after.gl_pathc; i++)
		if (!in_glob(before, after.gl_pathv[i]) && !seen_before(&after, i))
			paths[n++] = after.gl_pathv[i];
	fflush(stdout);
	ret = gate_check_process(gate, paths, n, pid);
	free(paths);
	globfree(&after);
	if (status)
		return status;
	return ret == 1 ? gate->gate_status : ret;
}

/* The command line of `memprov run`. */
struct run_args {
	const char *output;         /* trace template */
	char *mark_on;              /* MODULE:FUNC,MODULE:FUNC... or NULL */
	int check;                  /* --check */
	struct gate_opts gate;
	char **cmd;
};

/* --mark-on MODULE:FUNCTION, appended to the list. */
static int add_mark_on(struct run_args *a, const char *arg)
{
	size_t len = a->mark_on ? strlen(a->mark_on) : 0;

	if (!strchr(arg, ':') || strchr(arg, ','))
		return usage_error(&command_run, "--mark-on wants MODULE:FUNCTION, not '%s'", arg);
	a->mark_on = xrealloc(a->mark_on, len + strlen(arg) + 2);
	sprintf(a->mark_on + len, "%s%s", len ? "," : "", arg);
	return 0;
}

/* What must hold once the options are read: 0, or a usage error's status. */
static int check_args(const struct run_args *a, int n_cmd)
{
	if (a->gate.set && !a->check)
		return usage_error(&command_run, "gate options need --check");
	if ((a->gate.flags & GATE_JSON) && (a->gate.flags & GATE_ANNOTATIONS))
		return usage_error(&command_run, "--json and --annotations both write stdout: choose one");
	if (!n_cmd)
		return usage_error(&command_run, "no command given");
	return 0;
}

/* One option of run's own (or the gate's): 0, or a usage error's status. */
static int run_opt(struct run_args *a, int c, const char *arg)
{
	if (c >= GATE_OPT_MAX_LEAK)
		return gate_opts_set(&a->gate, &command_run, c, arg);
	switch (c) {
	case 'c':
		a->check = 1;
		return 0;
	case 'o':
		a->output = arg;
		return 0;
	case 'm':
		return add_mark_on(a, arg);
	}
	return usage_error(&command_run, "unknown option code %d", c);
}

/*
 * Parse the options up to the command (the shared rule, but the command
 * and its arguments are CMD's own). Returns 0 to go on, or -1 when the
 * command ends here with *status (0 after --help, 2 after a usage error,
 * already printed).
 */
static int run_parse(struct run_args *a, int argc, char **argv, int *status)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "mark-on", required_argument, NULL, 'm' },
		{ "check", no_argument, NULL, 'c' },
		GATE_LONG_OPTIONS,
		GATE_RUN_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct cmdline cl = { .cmd = &command_run, .argc = argc, .argv = argv, .shortopts = "o:",
			      .longopts = opts, .stop_at_operand = 1 };
	const char *arg;
	int c, ret = 0;

	while ((c = cmdline_next(&cl, &arg)) > 0) {
		ret = run_opt(a, c, arg);
		if (ret) {
			c = cmdline_fail(&cl, ret);
			break;
		}
	}
	if (c == CMDLINE_END)
		cl.status = check_args(a, cl.n_operands);
	a->cmd = cl.operands;
	if (!a->output || !*a->output)
		a->output = DEFAULT_OUTPUT;
	*status = cl.status;
	return *status || c == CMDLINE_STOP ? -1 : 0;
}

static int cmd_run(int argc, char **argv)
{
	struct run_args a = { .output = getenv("MEMPROV_OUTPUT") };
	glob_t before = { 0 };
	char *lib = NULL;
	int ret, started = 0, sig = 0;
	pid_t pid = 0;

	gate_opts_init(&a.gate);
	if (run_parse(&a, argc, argv, &ret) < 0)
		goto out;
	lib = find_library();
	if (!lib || check_output(a.output) < 0 || set_env(lib, a.output, a.mark_on) < 0) {
		ret = EXIT_FAIL;
		goto out;
	}
	list_traces(a.output, &before);
	ret = spawn_and_wait(a.cmd, &pid, &started, &sig);
	if (ret < 0) {
		ret = EXIT_FAIL;
		goto out;
	}
	if (!started)
		goto out;
	own_line();
	report_traces(a.output, pid, &before);
	if (a.check)
		ret = run_gate(&a.gate, a.output, &before, pid, ret);
out:
	globfree(&before);
	gate_opts_release(&a.gate);
	free(lib);
	free(a.mark_on);
	if (sig && ret == 128 + sig)
		die_of_signal(sig);
	return ret;
}

const struct command command_run = {
	.name = "run",
	.run = cmd_run,
	.usage = "memprov run [-o PATH] [--mark-on MODULE:FUNCTION]... [--check [CHECK OPTIONS]] -- CMD [ARGS...]",
	.help = "Run CMD with libmemprov.so preloaded and write its trace.\n"
		"  -o, --output PATH        trace path; %p is the pid (default memprov.%p.trace)\n"
		"  --mark-on MODULE:FUNC    put a mark each time this Python function is called\n"
		"  --check [CHECK OPTIONS]  then gate the trace as `memprov check` does (its options\n"
		"                           go here too): the command's own trace, after any exec\n"
		"  --children               with --check: gate its child processes' traces too\n"
		"  --gate-status N          with --check: exit status when CMD succeeded but the\n"
		"                           gate failed (default 23); 2 when no trace could be read\n"
		"Exits with CMD's status, 127 if CMD is not found; dies of signal N when CMD does.\n"
		"HUP, INT, QUIT, TERM, USR1, USR2, ALRM, WINCH and CONT sent to memprov go to CMD.\n"
		"The library is $MEMPROV_LIB, else ../interpose/libmemprov.so or ../lib/libmemprov.so\n"
		"next to this program.\n",
};
