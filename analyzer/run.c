/*
 * run.c - `memprov run`: start a command with libmemprov.so preloaded,
 * wait for it, say where its trace went (the program's own, after a
 * launcher's execs; the others in one line), gate it with --check, and
 * exit with its status as a shell would.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <gelf.h>
#include <time.h>
#include <unistd.h>

#include "../include/memprov_sigboard.h"

#include "command.h"
#include "gate.h"
#include "trace_chain.h"
#include "util.h"

#define DEFAULT_OUTPUT "memprov.%p.trace"
#define MAX_LISTED 3 /* other traces named one by one */
#define PYTEST_PLUGIN "memprov_pytest"

/* The command line of `memprov run`. */
struct run_args {
	const char *output;         /* trace template, as given */
	const char *dir;            /* -d DIR: a run directory */
	char *dir_output;           /* its template, DIR/memprov.%p.trace */
	char *index;                /* its index, absolute */
	char *mark_on;              /* MODULE:FUNC,MODULE:FUNC... or NULL */
	char *skip_exe;             /* --skip-exe PATTERN,PATTERN... or NULL */
	int check;                  /* --check */
	int python_objects;         /* --python-objects */
	int pytest;                 /* --pytest */
	int no_clobber;             /* --no-clobber */
	int output_given;           /* -o on the command line */
	int json_stdout;            /* --json: refused, it would go into CMD's stdout */
	const char *json_file;      /* --json-file FILE */
	struct gate_opts gate;
	char **cmd;
};

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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Signals another process sent us (si_code <= 0: kill, sigqueue, tgkill),
 * queued per signal, for the wait loop to decide on (decide_signals):
 * the handler only notes them. Those the terminal sends (Ctrl-C, Ctrl-\,
 * a window resize) go to the whole foreground process group: the command
 * has them already.
 */
#define SIG_QUEUE 8 /* receipts of one signal not decided on yet, at most */
static struct {
	volatile unsigned head;     /* the handler's: receipts so far */
	unsigned tail;              /* the wait loop's: decided so far */
	pid_t sender[SIG_QUEUE];
	uint64_t at[SIG_QUEUE];
} sig_q[MP_SIGBOARD_SIGS];
static int wake_fd[2] = { -1, -1 }; /* a byte per signal: the wait loop wakes up */

static void wake(void)
{
	char c = 0;

	if (wake_fd[1] >= 0 && write(wake_fd[1], &c, 1) < 0)
		return; /* full: the loop has bytes to wake on already */
}

static void forward(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;

	(void)ctx;
	if (child_pid > 0 && si && si->si_code <= 0 && sig < MP_SIGBOARD_SIGS) {
		/* the signal is blocked while its handler runs: one writer */
		unsigned h = sig_q[sig].head;

		if (h - sig_q[sig].tail < SIG_QUEUE) {
			sig_q[sig].sender[h % SIG_QUEUE] = si->si_pid;
			sig_q[sig].at[h % SIG_QUEUE] = mono_ns();
			__atomic_signal_fence(__ATOMIC_RELEASE);
			sig_q[sig].head = h + 1;
		}
		wake();
	}
	errno = saved;
}

static void child_changed(int sig)
{
	int saved = errno;

	(void)sig;
	wake();
	errno = saved;
}

static void wake_close(void)
{
	for (int k = 0; k < 2; k++) {
		if (wake_fd[k] >= 0)
			close(wake_fd[k]);
		wake_fd[k] = -1;
	}
}

/* The board shared with the command (include/memprov_sigboard.h), or NULL. */
static struct mp_sigboard *board;
static int board_fd = -1;

static void board_make(void)
{
	int fd = memfd_create("memprov-signals", MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		return;
	p = ftruncate(fd, sizeof(*board)) ? MAP_FAILED :
	    mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return;
	}
	board = p;
	board_fd = fd;
}

static void board_drop(void)
{
	if (board)
		munmap(board, sizeof(*board));
	if (board_fd >= 0)
		close(board_fd);
	board = NULL;
	board_fd = -1;
}

/* In the forked command, before exec: the board is its, and named in its environment. */
static void board_give(void)
{
	char spec[64];

	if (!board)
		return;
	board->magic = MP_SIGBOARD_MAGIC;
	board->pid = (int32_t)getpid();
	snprintf(spec, sizeof(spec), "/proc/%d/fd/%d:%d", (int)getppid(), board_fd, (int)getpid());
	setenv(MP_SIGBOARD_ENV, spec, 1);
}

/* Bit sig of the mask on line "NAME:" of /proc/PID/status. */
static int status_bit(const char *status, const char *name, int sig)
{
	const char *l = strstr(status, name);
	unsigned long long mask;

	return l && sscanf(l + strlen(name), " %llx", &mask) == 1 && sig >= 1 && sig <= 64 &&
	       (mask >> (sig - 1) & 1);
}

/* /proc/PID/status of the command, in buf; 0 when it cannot be read. */
static int read_status(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return 1;
}

#define SAME_SEND_NS 100000000ull /* a note this close to our own receipt is the same send */
#define WAIT_NOTE_NS 50000000ull  /* how long to wait for the command's note */

/*
 * The command's notes already matched to a signal of ours (each serves
 * one), and those still owed to one we found pending in the command (its
 * note comes when it takes it, and must not serve another).
 */
static uint32_t notes_used[MP_SIGBOARD_SIGS], notes_owed[MP_SIGBOARD_SIGS];

/*
 * Did the command get sig from sender too, at about t? A note on the
 * board not matched yet (a handler of its own, memprov's watch of a deadly
 * signal, or sigwait & co. took it), or the signal still pending there
 * (blocked). Waits for the note while the command catches sig. *caught:
 * whether it does (its /proc status, readable until it is reaped).
 */
static int command_got(pid_t child, int sig, pid_t sender, uint64_t t, int *caught)
{
	char st[4096];
	uint64_t until = t + WAIT_NOTE_NS;

	*caught = 0;
	for (;;) {
		if (board) {
			const struct mp_sigboard_slot *s = &board->slot[sig];
			uint32_t count = __atomic_load_n(&s->count, __ATOMIC_ACQUIRE);
			uint64_t ns = __atomic_load_n(&s->ns, __ATOMIC_RELAXED);

			while (notes_owed[sig] && count != notes_used[sig]) {
				notes_owed[sig]--;
				notes_used[sig]++;
			}
			if (count != notes_used[sig] &&
			    __atomic_load_n(&s->sender, __ATOMIC_RELAXED) == sender &&
			    ns + SAME_SEND_NS >= t && ns <= t + SAME_SEND_NS) {
				notes_used[sig] = count;
				return 1;
			}
		}
		if (!read_status(child, st, sizeof(st)))
			return 0; /* gone */
		*caught = status_bit(st, "SigCgt:", sig);
		if (status_bit(st, "SigPnd:", sig) || status_bit(st, "ShdPnd:", sig)) {
			notes_owed[sig] += *caught; /* a handler notes it when it runs */
			return 1;
		}
		if (!board || !*caught || mono_ns() >= until)
			return 0;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
}

/*
 * The signals the handler noted. One another process sent us goes on to
 * the command, unless it got it too (a signal to the whole process
 * group: timeout(1), `kill 0`, a shell's `kill %1`). One the command sent
 * us was for its parent, bare: it goes on to ours, unless the command got
 * it too (it signalled its own group, ours), and only when the command
 * catches that signal, so that its note would have told: one it ignores
 * or takes from a signalfd leaves none (`trap '' TERM; kill -TERM 0`
 * would otherwise have reached our parent, which a group signal from
 * the command never reaches bare).
 */
static void decide_signals(pid_t child)
{
	for (int sig = 1; sig < MP_SIGBOARD_SIGS; sig++) {
		while (sig_q[sig].tail != sig_q[sig].head) {
			unsigned i = sig_q[sig].tail % SIG_QUEUE;
			pid_t sender, up;
			uint64_t t;
			int caught;

			__atomic_signal_fence(__ATOMIC_ACQUIRE);
			sender = sig_q[sig].sender[i];
			t = sig_q[sig].at[i];
			sig_q[sig].tail++;
			if (command_got(child, sig, sender, t, &caught))
				continue;
			if (sender != child)
				kill(child, sig);
			else if (caught && (up = getppid()) > 1)
				kill(up, sig);
		}
	}
}

/* What forward_signals() changed, to put back. */
struct sig_state {
	sigset_t mask;                          /* the mask before */
	struct sigaction old[ARRAY_SIZE(forwarded)];
	unsigned char caught[ARRAY_SIZE(forwarded)];
	unsigned char ignored[ARRAY_SIZE(forwarded)]; /* when memprov started */
};

/*
 * Block the forwarded signals and catch them. Those ignored when memprov
 * started (nohup; SIGINT and SIGQUIT in a script's background job) are
 * caught too, and the command starts with them ignored: it may take one
 * back with a handler of its own, and then gets it as bare (`kill -INT
 * $!` in a script reached its handler bare, and memprov ignored it). They
 * stay blocked until spawn_and_wait knows the command's pid.
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
	sa.sa_flags = SA_SIGINFO; /* the wait returns EINTR: decide_signals() then */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(forwarded); i++) {
		st->caught[i] = 0;
		if (sigaction(forwarded[i], NULL, &st->old[i]) < 0)
			continue;
		st->ignored[i] = !(st->old[i].sa_flags & SA_SIGINFO) &&
				 st->old[i].sa_handler == SIG_IGN;
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

/* Where the library and the pytest plugin are, relative to this program. */
static const char *const library_paths[] = {
	"/../interpose/libmemprov.so", "/../lib/libmemprov.so",
};
static const char *const plugin_paths[] = {
	"/../python/" PYTEST_PLUGIN ".py", "/../share/memprov/python/" PYTEST_PLUGIN ".py",
};

/*
 * A file memprov ships: $var when set (var may be NULL), else the first
 * of rel[] that exists beside this program. Its real path, or NULL after
 * an error naming what.
 */
static char *find_beside(const char *const *rel, size_t nrel, const char *var, const char *what)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *slash, *real;
	const char *env = var ? getenv(var) : NULL;
	ssize_t n;
	size_t i;

	if (env && *env) {
		if (!readable_file(env)) {
			error("%s is '%s', which is not a readable file: set it to %s", var, env, what);
			return NULL;
		}
		real = realpath(env, NULL);
		return real ? real : xstrdup(env);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		error("cannot read /proc/self/exe to find %s: %s", what, strerror(errno));
		return NULL;
	}
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	for (i = 0; i < nrel; i++) {
		snprintf(path, sizeof(path), "%s%s", exe, rel[i]);
		if (readable_file(path)) {
			real = realpath(path, NULL);
			return real ? real : xstrdup(path);
		}
	}
	error("cannot find %s in %s%.*s or %s%.*s: build it with make%s%s", what, exe,
	      (int)(strrchr(rel[0], '/') - rel[0]), rel[0], exe,
	      (int)(strrchr(rel[1], '/') - rel[1]), rel[1], var ? ", or set " : "", var ? var : "");
	return NULL;
}

/* Is path among the first n entries of g? */
static int in_glob_n(const glob_t *g, size_t n, const char *path)
{
	size_t i;

	for (i = 0; i < n && i < g->gl_pathc; i++)
		if (!strcmp(g->gl_pathv[i], path))
			return 1;
	return 0;
}

static int in_glob(const glob_t *g, const char *path)
{
	return in_glob_n(g, g->gl_pathc, path);
}

/*
 * What a fixed -o NAME (no %p) held before the run. An older memprov
 * trace there is replaced (with its numbered siblings, the other traces
 * of that earlier run), unless --no-clobber: otherwise the library would
 * write NAME.1.trace beside it and the user would read the old one.
 * Anything that is not a memprov trace is never touched.
 */
enum clobber {
	CLOBBER_NONE,           /* the name was free, or has a %p */
	CLOBBER_REPLACED,       /* an older trace was removed */
	CLOBBER_KEPT,           /* an older trace was kept (--no-clobber) */
	CLOBBER_FOREIGN,        /* a file that is not a trace: kept */
	CLOBBER_NOT_FILE,       /* a link, a directory, a device...: kept */
};

/* Is path base's numbered sibling: NAME.N.trace for NAME.trace? */
static int numbered(const char *path, const char *base)
{
	size_t n = strlen(base), stem = n >= 6 && !strcmp(base + n - 6, ".trace") ? n - 6 : n;
	size_t digits;

	if (strncmp(path, base, stem) || path[stem] != '.')
		return 0;
	digits = strspn(path + stem + 1, "0123456789");
	return digits && !strcmp(path + stem + 1 + digits, base + stem);
}

static enum clobber clobber_old(const char *tmpl, int no_clobber, char **base_out)
{
	struct mp_file_header h, *hs;
	enum clobber c = CLOBBER_NONE;
	struct stat st;
	glob_t g;
	size_t i, j;
	int *earlier, grew;

	*base_out = NULL;
	if (!trace_template_fixed(tmpl))
		return CLOBBER_NONE;
	*base_out = trace_expand(tmpl, "");
	if (lstat(*base_out, &st) < 0)
		return CLOBBER_NONE;
	if (!S_ISREG(st.st_mode))
		return CLOBBER_NOT_FILE;
	if (trace_peek(*base_out, &h) < 0)
		return CLOBBER_FOREIGN;
	if (no_clobber)
		return CLOBBER_KEPT;
	trace_glob(tmpl, &g);
	earlier = xcalloc(g.gl_pathc + 1, sizeof(*earlier));
	hs = xcalloc(g.gl_pathc + 1, sizeof(*hs));
	/*
	 * The earlier run's other traces: the numbered siblings its
	 * processes wrote, an exec'd image (same pid) or a child (its parent
	 * one of them), started after it. A copy the user made beside it
	 * (NAME.baseline.trace) or a numbered trace of another run stays.
	 * earlier[]: 2 the name itself, 1 a candidate, 3 one of that run's.
	 */
	for (i = 0; i < g.gl_pathc; i++) {
		const char *p = g.gl_pathv[i];

		if (!strcmp(p, *base_out)) {
			earlier[i] = 2;
			hs[i] = h;
		} else {
			earlier[i] = !in_glob_n(&g, i, p) && numbered(p, *base_out) &&
				     !trace_peek(p, &hs[i]) && hs[i].start_real_ns >= h.start_real_ns;
		}
	}
	for (grew = 1; grew;) {
		grew = 0;
		for (i = 0; i < g.gl_pathc; i++)
			for (j = 0; j < g.gl_pathc && earlier[i] == 1; j++)
				if (earlier[j] >= 2 && (hs[i].pid == hs[j].pid || hs[i].ppid == hs[j].pid))
					earlier[i] = 3, grew = 1;
	}
	for (i = 0; i < g.gl_pathc; i++) {
		const char *p = g.gl_pathv[i];

		if (earlier[i] < 2)
			continue;
		if (unlink(p) < 0)
			warning("cannot remove the older trace '%s': %s", p, strerror(errno));
		else if (!strcmp(p, *base_out))
			c = CLOBBER_REPLACED;
	}
	free(earlier);
	free(hs);
	trace_glob_free(&g);
	return c;
}

/*
 * When no new trace has a header naming pid (the library could not
 * write one): the name the library would have used for pid, or the first
 * numbered name it falls back to when that name was taken before the run.
 */
static char *name_for_pid(const char *tmpl, pid_t pid, const glob_t *before)
{
	char pidstr[16], *base, *alt;
	size_t len;
	int k;

	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	base = trace_expand(tmpl, pidstr);
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

/* The traces this run wrote: new names matching the template, headers read. */
struct run_traces {
	glob_t g;
	char **path;
	struct mp_file_header *h;
	int *ok;                 /* h was read */
	size_t n;
	size_t last;             /* the command's own, after every exec; n if none */
};

static void run_traces_find(struct run_traces *t, const char *tmpl, const glob_t *before,
			    pid_t pid)
{
	size_t i;

	trace_glob(tmpl, &t->g);
	t->path = xcalloc(t->g.gl_pathc + 1, sizeof(*t->path));
	t->h = xcalloc(t->g.gl_pathc + 1, sizeof(*t->h));
	t->ok = xcalloc(t->g.gl_pathc + 1, sizeof(*t->ok));
	t->n = 0;
	for (i = 0; i < t->g.gl_pathc; i++) {
		const char *p = t->g.gl_pathv[i];

		if (in_glob(before, p) || in_glob_n(&t->g, i, p))
			continue;
		t->path[t->n] = t->g.gl_pathv[i];
		t->ok[t->n] = !trace_peek(p, &t->h[t->n]);
		t->n++;
	}
	/* the program pid finally became: the latest trace of that pid */
	t->last = t->n;
	for (i = 0; i < t->n; i++)
		if (t->ok[i] && t->h[i].pid == pid &&
		    (t->last == t->n || t->h[i].start_mono_ns > t->h[t->last].start_mono_ns))
			t->last = i;
}

static void run_traces_release(struct run_traces *t)
{
	trace_glob_free(&t->g);
	free(t->path);
	free(t->h);
	free(t->ok);
}

/* What another trace of the run was: an image replaced by exec, or a child. */
static const char *other_role(const struct run_traces *t, size_t i, pid_t pid)
{
	if (!t->ok[i])
		return "another process";
	return t->h[i].pid == pid ? "replaced by exec" : "child process";
}

/* The line about the run's other traces: their names when few, else counts and where. */
static void report_others(const struct run_traces *t, pid_t pid, const char *mine)
{
	size_t i, others = 0, execd = 0, shown = 0;
	char *dir, *slash;

	for (i = 0; i < t->n; i++) {
		if (!strcmp(t->path[i], mine))
			continue;
		others++;
		execd += t->ok[i] && t->h[i].pid == pid;
	}
	if (!others)
		return;
	if (others <= MAX_LISTED) {
		fprintf(stderr, "memprov: other trace%s of this run: ", others == 1 ? "" : "s");
		for (i = 0; i < t->n; i++) {
			if (!strcmp(t->path[i], mine))
				continue;
			fprintf(stderr, "%s%s (%s)", shown++ ? ", " : "", t->path[i],
				other_role(t, i, pid));
		}
		fputc('\n', stderr);
		return;
	}
	dir = xstrdup(mine);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = 0;
	fprintf(stderr, "memprov: %zu other traces of this run in %s", others, slash ? dir : ".");
	if (execd == others || !execd)
		fprintf(stderr, ", all of %s\n", execd ? "programs replaced by exec on the way "
				"(a launcher such as a pyenv shim, env or sh -c)" : "child processes");
	else
		fprintf(stderr, ": %zu of programs replaced by exec on the way (a launcher such as "
			"a pyenv shim, env or sh -c), %zu of child processes\n",
			execd, others - execd);
	free(dir);
}

/*
 * The command ended in a way its libmemprov.so could not note, and its
 * trace still says running: the reports said "killed or still running".
 * memprov run saw how it ended in the status and writes that into the
 * header of the command's own trace (the process is gone: nothing else
 * writes there), the state last:
 *
 *   - died of signal sig (SIGKILL: the OOM killer, `kill -9`, a
 *     timeout's last word; a crash in a process whose tracing hooks were
 *     gone): state killed, term_signal;
 *   - exited with status code past every hook (a raw exit_group system
 *     call: Go's runtime ends every Go program so): state exited,
 *     exit_status, and MP_HF_EXIT_BY_RUN, which tells the reports and
 *     the gate that no scan ran at this exit.
 *
 * The end time stays unset: the reports take the last record's, not this
 * later instant. The index gets the line the process would have written.
 */
static void note_end(const char *path, const struct mp_file_header *h, pid_t pid, int sig,
		     int code, const char *index)
{
	uint32_t state = sig ? MP_STATE_KILLED : MP_STATE_EXITED, flags = h->flags | MP_HF_EXIT_BY_RUN;
	int32_t value = sig ? sig : code;
	struct timespec now;
	char line[2048];
	const char *c;
	int fd, n, ok;

	if (h->pid != pid || h->state != MP_STATE_RUNNING)
		return;
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (sig)
		ok = pwrite(fd, &value, sizeof(value), offsetof(struct mp_file_header, term_signal)) ==
		     (ssize_t)sizeof(value);
	else
		ok = pwrite(fd, &value, sizeof(value), offsetof(struct mp_file_header, exit_status)) ==
			     (ssize_t)sizeof(value) &&
		     pwrite(fd, &flags, sizeof(flags), offsetof(struct mp_file_header, flags)) ==
			     (ssize_t)sizeof(flags);
	ok = ok && pwrite(fd, &state, sizeof(state), offsetof(struct mp_file_header, state)) ==
			   (ssize_t)sizeof(state);
	close(fd);
	if (!ok || !index || (fd = open(index, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return;
	/* the line the process would have written (run_index.c's format) */
	clock_gettime(CLOCK_MONOTONIC, &now);
	n = snprintf(line, sizeof(line) - 1, "%s\t%d\t%d\t%llu\t%d\t", sig ? "killed" : "exit",
		     (int)h->pid, (int)h->ppid,
		     (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec,
		     (int)value);
	if (n > 0 && n < (int)sizeof(line) - 1) {
		/* COMMAND: its tabs and newlines made spaces, as the library's put() */
		size_t len = h->cmdline[0] ? strnlen(h->cmdline, sizeof(h->cmdline)) :
					     strnlen(h->exe, sizeof(h->exe));

		c = h->cmdline[0] ? h->cmdline : h->exe;
		if (len > 1024)
			len = 1024;
		for (; len && n < (int)sizeof(line) - 1; len--, c++)
			line[n++] = *c == '\t' || *c == '\n' || *c == '\r' ? ' ' : *c;
		line[n++] = '\n';
		(void)!write(fd, line, (size_t)n);
	}
	close(fd);
}

/* cmd's file, as execvp finds it, in path (PATH_MAX): 0, or -1 if none. */
static int command_path(const char *cmd, char *path)
{
	const char *dirs = getenv("PATH");
	struct stat st;

	if (strchr(cmd, '/')) {
		snprintf(path, PATH_MAX, "%s", cmd);
	} else {
		path[0] = 0;
		while (dirs && *dirs && !path[0]) { /* as execvp searches PATH */
			size_t n = strcspn(dirs, ":");

			snprintf(path, PATH_MAX, "%.*s/%s", n ? (int)n : 1, n ? dirs : ".", cmd);
			if (access(path, X_OK) || stat(path, &st) || !S_ISREG(st.st_mode))
				path[0] = 0;
			dirs += n + (dirs[n] == ':');
		}
	}
	return path[0] && !stat(path, &st) && S_ISREG(st.st_mode) ? 0 : -1;
}

/*
 * The sanitizer cmd's executable is built with, from its file: a runtime
 * it needs (DT_NEEDED) or one linked into it (clang's default, gcc's
 * -static-libasan: the function that starts it among its symbols; where
 * those are stripped, gcc's shows by the hooks it looks for, weak
 * __sanitizer_* symbols, in a program that defines malloc). *first: the runtime
 * refuses to start with a library preloaded before it (AddressSanitizer's
 * gcc libasan or clang libclang_rt.asan, HWASan's), which checks that it
 * comes first and exits ("ASan runtime does not come first in initial
 * library list", exit 1), or with the check turned off crashed before
 * main (a helper's sweep). Elsewhere libmemprov.so stands aside in the
 * process (elfsym.c's mp_elf_sanitizer). NULL: none.
 */
static const char *sanitizer_of_path(const char *path, int *first, int depth)
{
	static const char *const needs[][3] = {
		{ "libasan.so", "AddressSanitizer", "1" },
		{ "libclang_rt.asan", "AddressSanitizer", "1" },
		{ "libhwasan.so", "HWAddressSanitizer", "1" },
		{ "libclang_rt.hwasan", "HWAddressSanitizer", "1" },
		{ "libtsan.so", "ThreadSanitizer", "" },
		{ "libclang_rt.tsan", "ThreadSanitizer", "" },
		{ "libclang_rt.msan", "MemorySanitizer", "" },
		{ "liblsan.so", "LeakSanitizer", "" },
		{ "libclang_rt.lsan", "LeakSanitizer", "" },
	};
	static const char *const inits[][2] = {
		{ "__asan_init", "AddressSanitizer" },
		{ "__hwasan_init", "HWAddressSanitizer" },
		{ "__tsan_init", "ThreadSanitizer" },
		{ "__msan_init", "MemorySanitizer" },
		{ "__lsan_init", "LeakSanitizer" },
	};
	static char named[160];
	const char *found = NULL;
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd, own_malloc = 0, hooks = 0, best = -1;
	char line[257];
	ssize_t got;

	*first = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	/* a script: its interpreter's (one level, as the exec hooks look) */
	got = pread(fd, line, sizeof(line) - 1, 0);
	if (got > 2 && line[0] == '#' && line[1] == '!') {
		char *p = line + 2;

		close(fd);
		line[got] = 0;
		p += strspn(p, " \t");
		p[strcspn(p, " \t\n")] = 0;
		return *p && !depth ? sanitizer_of_path(p, first, 1) : NULL;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !*first && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_DYNAMIC && sh.sh_type != SHT_DYNSYM &&
		     sh.sh_type != SHT_SYMTAB) ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; !*first && i < n; i++) {
			const char *name = NULL;
			GElf_Dyn d;
			GElf_Sym sym;
			size_t k;

			if (sh.sh_type == SHT_DYNAMIC && gelf_getdyn(data, (int)i, &d) && d.d_tag == DT_NEEDED) {
				name = elf_strptr(e, sh.sh_link, (size_t)d.d_un.d_val);
			} else if (sh.sh_type != SHT_DYNAMIC && gelf_getsym(data, (int)i, &sym)) {
				name = elf_strptr(e, sh.sh_link, sym.st_name);
				if (name && sh.sh_type == SHT_DYNSYM && sym.st_shndx == SHN_UNDEF &&
				    GELF_ST_BIND(sym.st_info) == STB_WEAK &&
				    (!strncmp(name, "__sanitizer_", 12) || !strncmp(name, "__lsan_", 7)))
					hooks = 1;
				if (name && sh.sh_type == SHT_DYNSYM && !strcmp(name, "malloc") &&
				    sym.st_shndx != SHN_UNDEF)
					own_malloc = 1;
				if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
					name = NULL;
			}
			if (!name)
				continue;
			for (k = 0; sh.sh_type == SHT_DYNAMIC && k < ARRAY_SIZE(needs); k++)
				if (!strncmp(name, needs[k][0], strlen(needs[k][0]))) {
					snprintf(named, sizeof(named), "%s (%s)", needs[k][1], name);
					found = named;
					*first = needs[k][2][0] != 0;
				}
			for (k = 0; sh.sh_type != SHT_DYNAMIC && k < ARRAY_SIZE(inits); k++)
				if (!strcmp(name, inits[k][0]) && (best < 0 || (int)k < best))
					best = (int)k; /* ASan's defines __lsan_init too */
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	if (!found && best >= 0)
		found = inits[best][1];
	/* linked in by gcc, its symbols stripped: its hooks tell it, not which */
	return found ? found : own_malloc && hooks ? "a sanitizer" : NULL;
}

/* The entry of the LD_PRELOAD in the environment that is a sanitizer's
 * runtime refusing to come after another library (libasan.so for an
 * extension built with AddressSanitizer), or NULL. */
static const char *preloaded_first_runtime(void)
{
	static const char *const first[] = { "libasan.so", "libhwasan.so", "libclang_rt.asan",
					     "libclang_rt.hwasan" };
	static char entry[PATH_MAX];
	const char *s = getenv("LD_PRELOAD");
	size_t k;

	while (s && *s) {
		size_t n = strcspn(s, ": ");
		const char *base = s;

		for (k = 0; k < n; k++)
			if (s[k] == '/')
				base = s + k + 1;
		for (k = 0; k < ARRAY_SIZE(first) && n < sizeof(entry); k++)
			if (!strncmp(base, first[k], strlen(first[k])) &&
			    (size_t)(s + n - base) >= strlen(first[k])) {
				memcpy(entry, s, n);
				entry[n] = 0;
				return entry;
			}
		s += n + (s[n] != 0);
	}
	return NULL;
}

static const char *sanitizer_of(const char *cmd, int *first)
{
	char path[PATH_MAX];

	*first = 0;
	return command_path(cmd, path) ? NULL : sanitizer_of_path(path, first, 0);
}

/*
 * Why the loader would not have loaded libmemprov.so into cmd, where
 * that can be told from its file: a static executable has no loader; a
 * setuid or setgid one (another user's or group's) or one with file
 * capabilities runs in secure mode, where LD_PRELOAD is ignored; one
 * built with AddressSanitizer was run without it (sanitizer_needed).
 * NULL: none of these (a script, a command not found, one that dropped
 * privileges itself).
 */
static const char *untraceable_why(const char *cmd)
{
	char path[PATH_MAX];
	struct stat st;
	ElfW(Ehdr) eh;
	int fd = -1, interp = 0, i;

	int first;
	const char *san = sanitizer_of(cmd, &first);

	if (preloaded_first_runtime())
		return "run with a sanitizer's runtime in LD_PRELOAD, which must come before any "
		       "other library: it ran without libmemprov.so";

	if (san) {
		static char why[256];

		snprintf(why, sizeof(why), first ?
			 "built with %s, whose runtime must come before any preloaded library: it "
			 "ran without libmemprov.so" :
			 "built with %s, whose runtime replaces malloc: libmemprov.so stood aside "
			 "in it", san);
		return why;
	}
	if (command_path(cmd, path) || stat(path, &st))
		return NULL;
	if (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getgid()))
		return "a setuid or setgid program: the loader ignores LD_PRELOAD for it";
	if (getuid() && getxattr(path, "security.capability", NULL, 0) > 0)
		return "a program with file capabilities: the loader ignores LD_PRELOAD for it";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_phentsize != sizeof(ElfW(Phdr))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (i = 0; i < eh.e_phnum && !interp; i++) {
		ElfW(Phdr) ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		interp = ph.p_type == PT_INTERP;
	}
	close(fd);
	return interp || i < eh.e_phnum ? NULL :
	       "statically linked: no dynamic loader runs in it to load libmemprov.so";
}

/*
 * Say where the traces are: the command's own (the program its pid
 * finally became, after any exec), then one line on the others. sig: the
 * signal that killed the command (0: none); else code: its exit status.
 * 1: the command left no trace, for a reason said (untraceable_why, or
 * --skip-exe given).
 */
static int report_traces(const char *tmpl, pid_t pid, const glob_t *before, enum clobber c,
			 const char *base, int sig, int code, const char *index, const char *cmd,
			 const char *skip_exe)
{
	struct run_traces t;
	const char *why = NULL;
	char *mine;
	int untraced = 0;

	run_traces_find(&t, tmpl, before, pid);
	if (t.last < t.n)
		note_end(t.path[t.last], &t.h[t.last], pid, sig, code, index);
	mine = t.last < t.n ? xstrdup(t.path[t.last]) : name_for_pid(tmpl, pid, before);
	if (!readable_file(mine) && (why = untraceable_why(cmd)))
		fprintf(stderr, "memprov: no trace at %s: %s is %s\n", mine, cmd, why);
	else if ((untraced = !readable_file(mine)) && skip_exe)
		fprintf(stderr, "memprov: no trace at %s: --skip-exe %s may name the command, else it "
			"may not have started under libmemprov.so, or its trace could not be created "
			"(its message above says why)\n", mine, skip_exe);
	else if (!readable_file(mine))
		fprintf(stderr, "memprov: no trace at %s: the command may not have started under "
			"libmemprov.so, or its trace could not be created (its message above says why)\n",
			mine);
	else if (c == CLOBBER_REPLACED && !strcmp(mine, base))
		fprintf(stderr, "memprov: trace written to %s (an older trace there was replaced)\n", mine);
	else if (c >= CLOBBER_KEPT && strcmp(mine, base))
		fprintf(stderr, "memprov: trace written to %s (%s was left as it was: %s)\n", mine, base,
			c == CLOBBER_KEPT ? "an older trace, --no-clobber" :
			c == CLOBBER_FOREIGN ? "not a memprov trace" : "not a regular file");
	else
		fprintf(stderr, "memprov: trace written to %s\n", mine);
	if (skip_exe && t.last < t.n && t.ok[t.last] && t.h[t.last].state == MP_STATE_EXEC) {
		fprintf(stderr, "memprov: the program the command became by exec left no trace: "
			"--skip-exe %s may name it\n", skip_exe);
		untraced = 1;
	}
	report_others(&t, pid, mine);
	run_traces_release(&t);
	free(mine);
	return why != NULL || (untraced && skip_exe);
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

/* Is word one of the sep-separated items of list? */
static int has_item(const char *list, const char *word, char sep)
{
	size_t n = strlen(word);

	while (list && *list) {
		if (!strncmp(list, word, n) && (list[n] == sep || !list[n]))
			return 1;
		list = strchr(list, sep);
		if (list)
			list++;
	}
	return 0;
}

/* name=value, or value put before (sep) what name already holds. */
static int prepend_env(const char *name, const char *value, const char *sep)
{
	const char *old = getenv(name);
	char *v;
	int ret;

	if (!old || !*old)
		return setenv(name, value, 1);
	v = xmalloc(strlen(value) + strlen(sep) + strlen(old) + 1);
	sprintf(v, "%s%s%s", value, sep, old);
	ret = setenv(name, v, 1);
	free(v);
	return ret;
}

/* dir, its '%' written '%%' (a template's), then '/' (unless dir ends in one) and leaf */
static char *template_in(const char *dir, const char *leaf)
{
	char *t = xmalloc(2 * strlen(dir) + 1 + strlen(leaf) + 1), *o = t;
	const char *c;

	for (c = dir; *c; c++) {
		if (*c == '%')
			*o++ = '%';
		*o++ = *c;
	}
	if (o == t || o[-1] != '/')
		*o++ = '/';
	strcpy(o, leaf);
	return t;
}

/*
 * The template as the command's processes get it: absolute, from the
 * directory memprov runs in (its '%' written '%%'), since a process of
 * the command that changes directory (make -C, a build that cd's, a
 * daemon's chdir("/")) would otherwise create its trace there: among
 * the program's own files, where memprov run's reports and --children
 * never look, or nowhere (a warning on the program's stderr) where it
 * may not write. The reports still name the traces as given. A template
 * that would be too long made absolute (a cwd near PATH_MAX: the library
 * ignores a MEMPROV_OUTPUT of PATH_MAX bytes or more, with a warning on
 * the program's stderr, and cannot open a longer path) stays relative.
 */
static char *absolute_output(const char *output)
{
	char *cwd, *abs;

	if (output[0] == '/' || !(cwd = getcwd(NULL, 0)))
		return xstrdup(output);
	abs = template_in(cwd, output);
	free(cwd);
	/* room for the pid, a numbered name's ".9999", a directory's leaf */
	if (strlen(abs) + 64 >= PATH_MAX) {
		free(abs);
		return xstrdup(output);
	}
	return abs;
}

/*
 * The environment the command starts with: the library first in
 * LD_PRELOAD, the settings asked for, and with --pytest the plugin's
 * directory first in PYTHONPATH and the plugin in PYTEST_PLUGINS.
 */
static int set_env(const struct run_args *a, const char *lib, const char *plugin_dir)
{
	char *output = absolute_output(a->output);
	int ret = (lib && prepend_env("LD_PRELOAD", lib, " ")) || setenv("MEMPROV_OUTPUT", output, 1) ||
		  (a->mark_on && setenv("MEMPROV_MARK_ON", a->mark_on, 1)) ||
		  (a->skip_exe && setenv("MEMPROV_SKIP_EXE", a->skip_exe, 1)) ||
		  (a->python_objects && setenv("MEMPROV_PYTHON_OBJECTS", "1", 1));

	if (!ret && plugin_dir)
		ret = prepend_env("PYTHONPATH", plugin_dir, ":") ||
		      (!has_item(getenv("PYTEST_PLUGINS"), PYTEST_PLUGIN, ',') &&
		       prepend_env("PYTEST_PLUGINS", PYTEST_PLUGIN, ","));
	free(output);
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
	struct sigaction old_chld;
	struct sig_state ss;
	siginfo_t info;
	int status, pfd[2], err = 0, ret;
	pid_t pid;
	ssize_t n;
	size_t i;

	*sig = 0;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return error("cannot create a pipe: %s", strerror(errno)), -1;
	if (pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return error("cannot create a pipe: %s", strerror(errno)), -1;
	}
	board_make();
	sigaction(SIGCHLD, &(struct sigaction){ .sa_handler = child_changed }, &old_chld);
	forward_signals(&ss);
	pid = fork();
	if (pid < 0) {
		forward_stop(&ss);
		sigaction(SIGCHLD, &old_chld, NULL);
		board_drop();
		wake_close();
		close(pfd[0]);
		close(pfd[1]);
		return error("cannot fork: %s", strerror(errno)), -1;
	}
	if (pid == 0) {
		/* the command starts with memprov's own signal state */
		for (i = 0; i < ARRAY_SIZE(forwarded); i++)
			if (ss.caught[i])
				signal(forwarded[i], ss.ignored[i] ? SIG_IGN : SIG_DFL);
		sigaction(SIGCHLD, &old_chld, NULL);
		sigprocmask(SIG_SETMASK, &ss.mask, NULL);
		board_give();
		close(pfd[0]);
		execvp(cmd[0], cmd);
		err = errno;
		fprintf(stderr, "memprov: error: cannot run '%s': %s\n", cmd[0], strerror(err));
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(err == ENOENT ? 127 : 126);
	}
	child_pid = *child = pid;
	/*
	 * memprov's own lines (the trace's name, the gate's report) must not
	 * kill it where the reader of its stderr has gone (`memprov run
	 * --check -- t 2>&1 | head`): the command's status and the gate's
	 * verdict would be lost (141). The command keeps its own disposition.
	 */
	signal(SIGPIPE, SIG_IGN);
	/* the caller's mask, but SIGCHLD: the wait loop wakes on it (a caller
	 * that reads SIGCHLD from a signalfd blocks it) */
	{
		sigset_t wait_mask = ss.mask;

		sigdelset(&wait_mask, SIGCHLD);
		sigprocmask(SIG_SETMASK, &wait_mask, NULL);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	*started = n != (ssize_t)sizeof(err);
	/*
	 * Wait without reaping: until it is reaped, the pid cannot be reused,
	 * so a signal forwarded meanwhile cannot reach another process. Every
	 * signal (SIGCHLD too) writes a byte to wake_fd: one that comes after
	 * a look and before the poll is not lost.
	 */
	for (;;) {
		struct pollfd w = { wake_fd[0], POLLIN, 0 };
		char drain[64];

		info.si_pid = 0;
		ret = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT | WNOHANG);
		if (ret < 0 && errno == EINTR)
			continue;
		/* also once it ended: a signal it sent just before (kill $PPID) */
		decide_signals(pid);
		if (ret < 0 || info.si_pid == pid)
			break;
		/* a second at most: nothing is lost if a wake-up is */
		if (poll(&w, 1, 1000) < 0 && errno != EINTR)
			break;
		while (read(wake_fd[0], drain, sizeof(drain)) > 0)
			;
	}
	if (ret == 0 && info.si_pid != pid) /* the poll failed: wait the old way */
		while ((ret = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT)) < 0 &&
		       errno == EINTR)
			;
	forward_stop(&ss);
	sigaction(SIGCHLD, &old_chld, NULL);
	child_pid = 0;
	board_drop();
	wake_close();
	if (ret < 0 || waitpid(pid, &status, 0) < 0)
		return error("cannot wait for '%s': %s", cmd[0], strerror(errno)), -1;
	if (WIFSIGNALED(status)) {
		*sig = WTERMSIG(status);
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

/* The number after "key " on a line of file path, or -1. */
static long count_in(const char *path, const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long n = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			n = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return n;
}

/*
 * How many processes the OOM killer has ended: the system's count
 * (/proc/vmstat) and this cgroup's (memory.events, cgroup v2: a
 * container's limit), summed; -1 when neither can be read. The gate
 * tells a SIGKILL from a parent (a timeout) from an OOM kill by whether
 * the count moved while the command ran.
 */
static long oom_kill_count(void)
{
	char line[PATH_MAX], path[PATH_MAX + 64];
	long sys = count_in("/proc/vmstat", "oom_kill"), cg = -1;
	FILE *f = fopen("/proc/self/cgroup", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.events", line + 3);
			cg = count_in(path, "oom_kill");
			break;
		}
	if (f)
		fclose(f);
	if (sys < 0 && cg < 0)
		return -1;
	return (sys > 0 ? sys : 0) + (cg > 0 ? cg : 0);
}

/*
 * --check: gate the traces this run wrote (the command's, after any
 * exec). The command's own failure wins; when it succeeded, a gate
 * failure exits with --gate-status (23) and an unreadable trace with 2.
 * What the gate writes on stdout goes to stderr (the text report and
 * annotations: the command's stdout is its own, perhaps a file or a
 * pipe), or with --json-file to that file (json_fd, opened before the
 * run); never into the command's output.
 */
static int run_gate(const struct run_args *a, int json_fd, const char *tmpl, const glob_t *before,
		    pid_t pid, int status)
{
	struct gate_opts gate;
	struct run_traces t;
	int ret, err, saved = -1;

	run_traces_find(&t, tmpl, before, pid);
	error_exit_status_set(2); /* not the command's status, nor the gate's */
	fflush(stdout);
	saved = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (json_fd >= 0)
		dup2(json_fd, 1);
	else
		dup2(2, 1);
	gate = a->gate;
	if (a->dir)
		gate.flags |= GATE_RUN_DIR;
	ret = gate_check_process(&gate, t.path, t.n, pid);
	err = stdout_flush_take();
	if (saved >= 0) {
		dup2(saved, 1);
		close(saved);
	} else {
		close(1); /* stdout was closed: leave it so */
	}
	if (json_fd >= 0 && err) {
		error("cannot write the gate report (JSON) to %s: %s", a->json_file, strerror(err));
		ret = EXIT_USAGE;
	} else if (json_fd >= 0) {
		fprintf(stderr, "memprov: gate report (JSON) written to %s\n", a->json_file);
	}
	run_traces_release(&t);
	if (status)
		return status;
	return ret == 1 ? a->gate.gate_status : ret;
}

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
	if (a->json_stdout && !a->json_file)
		return usage_error(&command_run, "--json would go into the output of CMD: give --json-file FILE");
	if (a->json_file && !a->check)
		return usage_error(&command_run, "--json-file needs --check");
	if ((a->gate.flags & GATE_JSON) && (a->gate.flags & GATE_ANNOTATIONS))
		return usage_error(&command_run, "--json-file and --annotations: choose one");
	if (a->check && gate_opts_check(&a->gate, &command_run))
		return EXIT_USAGE;
	if (a->dir && a->output_given)
		return usage_error(&command_run, "-o and -d: choose one (-d DIR names every trace DIR/memprov.PID.trace)");
	if (a->dir && !*a->dir)
		return usage_error(&command_run, "-d wants a directory");
	if (!n_cmd)
		return usage_error(&command_run, "no command given");
	return 0;
}

/*
 * -d DIR: create DIR (0700; an existing one must be an empty directory),
 * every trace in it, and its index (MEMPROV_RUN_INDEX, absolute: the
 * program may chdir).
 */
static int make_run_dir(struct run_args *a)
{
	char *abs;
	DIR *d;
	struct dirent *de;
	int fd;

	if (mkdir(a->dir, 0700) < 0) {
		if (errno != EEXIST)
			return error("cannot create the run directory '%s': %s", a->dir, strerror(errno));
		d = opendir(a->dir);
		if (!d)
			return error("cannot use the run directory '%s': %s", a->dir, strerror(errno));
		while ((de = readdir(d)) && (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")))
			;
		closedir(d);
		if (de)
			return error("the run directory '%s' is not empty: give a new one", a->dir);
	}
	abs = realpath(a->dir, NULL);
	if (!abs)
		return error("cannot use the run directory '%s': %s", a->dir, strerror(errno));
	/* DIR's own '%' written '%%' (a DIR named run%p) */
	a->dir_output = template_in(abs, "memprov.%p.trace");
	a->index = xmalloc(strlen(abs) + sizeof("/index"));
	sprintf(a->index, "%s/index", abs);
	free(abs);
	/*
	 * Claim DIR: two runs given the same new DIR at once both found it
	 * empty (neither had written yet), shared it, and each named the
	 * other's traces as its own child processes. The index is created
	 * here, once: the second run finds it there and is refused.
	 */
	fd = open(a->index, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return error(errno == EEXIST ?
			     "the run directory '%s' is not empty (another run is using it?): give a new one" :
			     "cannot create the index in the run directory '%s': %s",
			     a->dir, strerror(errno));
	close(fd);
	a->output = a->dir_output;
	if (setenv("MEMPROV_RUN_INDEX", a->index, 1) < 0)
		return error("cannot set the environment: %s", strerror(errno));
	return 0;
}

/* One option of run's own (or the gate's): 0, or a usage error's status. */
static int run_opt(struct run_args *a, int c, const char *arg)
{
	if (c == GATE_OPT_JSON) {
		a->json_stdout = 1;
		return 0;
	}
	if (c >= GATE_OPT_MAX_LEAK)
		return gate_opts_set(&a->gate, &command_run, c, arg);
	switch (c) {
	case 'c':
		a->check = 1;
		return 0;
	case 'o':
		a->output = arg;
		a->output_given = 1;
		return 0;
	case 'd':
		a->dir = arg;
		return 0;
	case 'm':
		return add_mark_on(a, arg);
	case 'S':
		return skip_exe_add(&a->skip_exe, &command_run, arg);
	case 'P':
		a->python_objects = 1;
		return 0;
	case 'T':
		a->pytest = 1;
		return 0;
	case 'n':
		a->no_clobber = 1;
		return 0;
	case 'J':
		a->json_file = arg;
		a->gate.flags |= GATE_JSON;
		return 0;
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
		{ "dir", required_argument, NULL, 'd' },
		{ "mark-on", required_argument, NULL, 'm' },
		{ "skip-exe", required_argument, NULL, 'S' },
		{ "check", no_argument, NULL, 'c' },
		{ "python-objects", no_argument, NULL, 'P' },
		{ "pytest", no_argument, NULL, 'T' },
		{ "no-clobber", no_argument, NULL, 'n' },
		{ "json-file", required_argument, NULL, 'J' },
		GATE_LONG_OPTIONS,
		GATE_RUN_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct cmdline cl = { .cmd = &command_run, .argc = argc, .argv = argv, .shortopts = "o:d:",
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

/* --json-file FILE, opened before the run so that a bad path fails early. */
static int open_json_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

	if (fd < 0)
		error("cannot write '%s': %s", path, strerror(errno));
	return fd;
}

static int cmd_run(int argc, char **argv)
{
	struct run_args a = { .output = getenv("MEMPROV_OUTPUT") };
	glob_t before = { 0 };
	char *lib = NULL, *plugin = NULL, *tmpl = NULL, *base = NULL;
	const char *san;
	int san_first = 0;
	int ret, started = 0, sig = 0, json_fd = -1;
	enum clobber clob;
	pid_t pid = 0;
	long oom0 = -1;

	gate_opts_init(&a.gate);
	if (run_parse(&a, argc, argv, &ret) < 0)
		goto out;
	ret = EXIT_FAIL;
	lib = find_beside(library_paths, ARRAY_SIZE(library_paths), "MEMPROV_LIB", "libmemprov.so");
	if (!lib)
		goto out;
	if (a.pytest) {
		plugin = find_beside(plugin_paths, ARRAY_SIZE(plugin_paths), NULL, PYTEST_PLUGIN ".py");
		if (!plugin)
			goto out;
		*strrchr(plugin, '/') = 0;
	}
	if ((san = preloaded_first_runtime())) {
		san_first = 1;
		fprintf(stderr, "memprov: LD_PRELOAD names %s, a sanitizer's runtime that refuses to "
			"start after a preloaded library: %s runs without libmemprov.so, not traced\n",
			san, a.cmd[0]);
	} else if ((san = sanitizer_of(a.cmd[0], &san_first)) && san_first)
		fprintf(stderr, "memprov: %s is built with %s, whose runtime refuses to start after "
			"a preloaded library: it runs without libmemprov.so, not traced (its LeakSanitizer "
			"checks its leaks)\n", a.cmd[0], san);
	if ((a.dir && make_run_dir(&a) < 0) || check_output(a.output) < 0 ||
	    set_env(&a, san && san_first ? NULL : lib, plugin) < 0)
		goto out;
	if ((a.check && gate_preflight(&a.gate) < 0) ||
	    (a.json_file && (json_fd = open_json_file(a.json_file)) < 0)) {
		ret = EXIT_USAGE;
		goto out;
	}
	tmpl = trace_template(a.output);
	clob = clobber_old(tmpl, a.no_clobber, &base);
	trace_glob(tmpl, &before);
	oom0 = a.check ? oom_kill_count() : -1;
	ret = spawn_and_wait(a.cmd, &pid, &started, &sig);
	if (ret < 0) {
		ret = EXIT_FAIL;
		goto out;
	}
	if (!started)
		goto out;
	own_line();
	if (report_traces(tmpl, pid, &before, clob, base, sig, ret, a.index, a.cmd[0], a.skip_exe))
		a.gate.flags |= GATE_RUN_UNTRACED;
	if (a.check) {
		long oom1 = oom0 < 0 ? -1 : oom_kill_count();

		a.gate.oom_kills = oom1 < 0 ? -1 : oom1 - oom0;
		ret = run_gate(&a, json_fd, tmpl, &before, pid, ret);
	}
out:
	if (json_fd >= 0)
		close(json_fd);
	trace_glob_free(&before);
	gate_opts_release(&a.gate);
	free(lib);
	free(plugin);
	free(tmpl);
	free(base);
	free(a.mark_on);
	free(a.skip_exe);
	free(a.dir_output);
	free(a.index);
	if (sig && ret == 128 + sig)
		die_of_signal(sig);
	return ret;
}

const struct command command_run = {
	.name = "run",
	.run = cmd_run,
	.usage = "memprov run [-o PATH | -d DIR] [--no-clobber] [--mark-on MODULE:FUNCTION]... [--skip-exe PATTERN]... [--python-objects] [--pytest] [--check [CHECK OPTIONS] [--json-file FILE]] -- CMD [ARGS...]",
	.help = "Run CMD with libmemprov.so preloaded and write its trace.\n"
		"  -o, --output PATH        trace path; %p is the pid (default $MEMPROV_OUTPUT, else\n"
		"                           memprov.%p.trace); an older memprov trace there is replaced\n"
		"  -d, --dir DIR            a run directory: every process's trace in DIR (created,\n"
		"                           0700), and DIR/index, one line per process event\n"
		"  --no-clobber             keep an older trace at PATH: NAME.trace stays, the new\n"
		"                           one is NAME.1.trace (or the next free number)\n"
		"  --mark-on MODULE:FUNC    put a mark each time this Python function is called\n"
		"  --skip-exe PATTERN[,...] trace no process of a program it names (its children\n"
		"                           still): `*`, `?`; with a `/` the path the program was\n"
		"                           run by or resolves to, else the last part of either\n"
		"  --python-objects         record every Python object (pymalloc block) with its\n"
		"                           stack (MEMPROV_PYTHON_OBJECTS=1); slower\n"
		"  --pytest                 load the memprov_pytest plugin into pytest: a mark at\n"
		"                           the start and the end of each test\n"
		"  --check [CHECK OPTIONS]  then gate the trace as `memprov check` does (its options\n"
		"                           go here too): the command's own trace, after any exec\n"
		"  --json-file FILE         with --check: the gate's JSON object goes to FILE\n"
		"  --children               with --check: gate its child processes' traces too\n"
		"  --gate-status N          with --check: exit status when CMD succeeded but the\n"
		"                           gate failed (default 23); 2 when no trace could be read\n"
		"Names the trace of the program CMD finally became (after a launcher's execs)\n"
		"and sums up the other traces of the run in one line.\n"
		"Exits with CMD's status, 127 if CMD is not found; dies of signal N when CMD does.\n"
		"HUP, INT, QUIT, TERM, USR1, USR2, ALRM, WINCH and CONT sent to memprov go to CMD.\n"
		"The library is $MEMPROV_LIB, else ../interpose/libmemprov.so or ../lib/libmemprov.so\n"
		"next to this program; the pytest plugin ../python/memprov_pytest.py or\n"
		"../share/memprov/python/memprov_pytest.py.\n",
};
