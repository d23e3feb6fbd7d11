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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gate.h"
#include "report.h"
#include "util.h"

#define DEFAULT_OUTPUT "memprov.%p.trace"
#define MAX_LISTED 5 /* other traces named one by one */

static volatile pid_t child_pid;

/* Pass on signals sent to us by another process; the terminal's reach the child anyway. */
static void forward(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (child_pid > 0 && si && si->si_code <= 0)
		kill(child_pid, sig);
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
 * Fork and exec cmd, wait for it. Returns its status as a shell gives it,
 * or -1; *started is 0 when exec failed (a close-on-exec pipe tells).
 */
static int spawn_and_wait(char **cmd, int *started)
{
	struct sigaction sa;
	int status, pfd[2], err = 0;
	pid_t pid, w;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return error("cannot create a pipe: %s", strerror(errno)), -1;
	pid = fork();
	if (pid < 0)
		return error("cannot fork: %s", strerror(errno)), -1;
	if (pid == 0) {
		close(pfd[0]);
		execvp(cmd[0], cmd);
		err = errno;
		fprintf(stderr, "memprov: error: cannot run '%s': %s\n", cmd[0], strerror(err));
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(err == ENOENT ? 127 : 126);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	*started = n != (ssize_t)sizeof(err);
	child_pid = pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return error("cannot wait for '%s': %s", cmd[0], strerror(errno)), -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/*
 * --check: gate the traces this run wrote (the command's, after any
 * exec). The command's own failure wins; when it succeeded, a gate
 * failure exits with --gate-status (23) and an unreadable trace with 2.
 */
static int run_gate(const struct gate_opts *gate, const char *tmpl, const glob_t *before, int status)
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
	ret = gate_check_process(gate, paths, n, child_pid);
	free(paths);
	globfree(&after);
	if (status)
		return status;
	return ret == 1 ? gate->gate_status : ret;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "mark-on", required_argument, NULL, 'm' },
		{ "check", no_argument, NULL, 'c' },
		GATE_LONG_OPTIONS,
		GATE_RUN_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = getenv("MEMPROV_OUTPUT");
	char *mark_on = NULL, *lib;
	size_t mark_len = 0;
	glob_t before;
	struct gate_opts gate;
	int c, ret, started = 0, check = 0;

	gate_opts_init(&gate);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+ho:", opts, NULL)) != -1) {
		if (c >= GATE_OPT_MAX_LEAK) {
			ret = gate_opts_set(&gate, "run", c, optarg);
			if (ret)
				return free(mark_on), gate_opts_release(&gate), ret;
			continue;
		}
		switch (c) {
		case 'c':
			check = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case 'm':
			if (!strchr(optarg, ':') || strchr(optarg, ','))
				return free(mark_on), usage_error("run", "--mark-on wants MODULE:FUNCTION, not '%s'", optarg);
			mark_on = xrealloc(mark_on, mark_len + strlen(optarg) + 2);
			sprintf(mark_on + mark_len, "%s%s", mark_len ? "," : "", optarg);
			mark_len = strlen(mark_on);
			break;
		case 'h':
			free(mark_on);
			show_usage(stdout, "run");
			return EXIT_OK;
		case '?':
			free(mark_on);
			gate_opts_release(&gate);
			if (optopt >= GATE_OPT_MAX_LEAK)
				return usage_error("run", "option '%s' needs a value", argv[optind - 1]);
			if (optopt)
				return usage_error("run", "option '-%c' %s", optopt,
						   optopt == 'o' ? "needs a path" : "is unknown");
			return usage_error("run", "unknown option '%s'", argv[optind - 1]);
		default:
			free(mark_on);
			return usage_error("run", "option '%s' needs a value", argv[optind - 1]);
		}
	}
	if (gate.set && !check)
		ret = usage_error("run", "gate options need --check");
	else if ((gate.flags & GATE_JSON) && (gate.flags & GATE_ANNOTATIONS))
		ret = usage_error("run", "--json and --annotations both write stdout: choose one");
	else if (optind >= argc)
		ret = usage_error("run", "no command given");
	else
		ret = 0;
	if (ret) {
		free(mark_on);
		gate_opts_release(&gate);
		return ret;
	}
	if (!output || !*output)
		output = DEFAULT_OUTPUT;
	lib = find_library();
	if (!lib || set_env(lib, output, mark_on) < 0) {
		free(lib);
		free(mark_on);
		return EXIT_FAIL;
	}
	list_traces(output, &before);
	ret = spawn_and_wait(argv + optind, &started);
	if (ret < 0)
		ret = EXIT_FAIL;
	else if (started)
		report_traces(output, child_pid, &before);
	if (check && ret >= 0 && started)
		ret = run_gate(&gate, output, &before, ret);
	gate_opts_release(&gate);
	globfree(&before);
	free(lib);
	free(mark_on);
	return ret;
}
