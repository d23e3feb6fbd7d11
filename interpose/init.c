/*
 * init.c - the life of a traced process: start-up (settings, trace file,
 * modules), exit()/_exit() and the end of main, fork() (the child writes
 * its own trace), the exec family and posix_spawn (the trace says the
 * process image was replaced; a program that needs a sanitizer's runtime
 * first starts without libmemprov.so). Also the public API of
 * include/memprov.h.
 *
 * Layer: 7 entry points (docs/ARCHITECTURE.md): calls every layer below: it starts and ends tracing.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <pthread.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "elfsym.h"
#include "exe_skip.h"
#include "exec_target.h"
#include "gate.h"
#include "hooks_cxx.h"
#include "hooks_libc.h"
#include "hooks_sandbox.h"
#include "hooks_signal.h"
#include "libc_real.h"
#include "modules.h"
#include "reach.h"
#include "run_index.h"
#include "sigboard.h"
#include "stack.h"
#include "unwind_lib.h"
#include "writer.h"

/* include/memprov.h declares these weak for callers; defined strong here. */
MP_EXPORT void memprov_mark(const char *label);
MP_EXPORT int memprov_active(void);

static int atfork_done;
static int traced_before_fork;
/* forks of this process so far; the one this thread is making (the child's too) */
static uint32_t fork_count;
static __thread uint32_t fork_serial __attribute__((tls_model("initial-exec")));
static __thread uint64_t fork_ts __attribute__((tls_model("initial-exec"))); /* just before it */
static __thread uint64_t fork_extent __attribute__((tls_model("initial-exec"))); /* trace bytes then */

/* forked: in the child of fork() (the run index says so). */
static void start_tracing(int forked)
{
	int g = mp_pass_begin();

	if (mp_trace_open(forked) == 0) {
		mp_rss_open();
		mp_modules_scan();
		if (!forked)
			mp_cxx_init(); /* a forked child has its parent's GOT */
		mp_trace_set_exe(NULL); /* the scan did not name the program: /proc/self/exe */
		mp_record_rss();
		mp_tracing = 1;
		mp_index_open(mp_config.run_index);
		mp_index_header_event(mp_header, "start", forked ? "fork" : "new");
		if (!forked)
			mp_sigboard_open(mp_config.run_signals);
	}
	mp_pass_end(g);
}

static void atfork_prepare(void)
{
	int saved_errno = errno;

	fork_serial = __atomic_add_fetch(&fork_count, 1, __ATOMIC_RELAXED);
	fork_ts = mp_now();
	fork_extent = mp_trace_extent();
	traced_before_fork = mp_tracing;
	mp_gate_close();
	errno = saved_errno;
}

static void atfork_parent(void)
{
	int saved_errno = errno;

	mp_stamp_after(fork_ts); /* the FORK record and what follows it */
	mp_gate_open();
	errno = saved_errno;
}

/* The child never writes to its parent's file: it opens its own. */
static void start_forked(void *arg)
{
	(void)arg;
	start_tracing(1);
}

static void atfork_child(void)
{
	int saved_errno = errno; /* the child's, as fork left it: memprov's new trace is not its business */

	/* mp_self still holds the forking thread's writer context: its serial */
	mp_trace_fork_child(fork_ts, fork_extent, mp_self.w.serial, fork_serial);
	mp_writer_fork_child();
	mp_signal_fork_child();
	mp_reach_fork_child();
	mp_gate_open();
	mp_stack_reset();
	mp_modules_reset();
	/* on a stack of memprov's own: the forking thread's may be glibc's
	 * least, 16 KiB with its TLS in it, and a new trace's start-up took
	 * more than was left (the child died of SIGSEGV before fork returned) */
	if (traced_before_fork && mp_call_on_own_stack(start_forked, NULL) < 0)
		start_tracing(1);
	/* one thread here: the reader learns that a parent's memory came with it */
	if (mp_tracing && mp_header) {
		mp_header->fork_serial = fork_serial;
		mp_header->flags |= MP_HF_FORKED;
	}
	fork_count = 0;
	errno = saved_errno;
}

/* The parent of a fork made with syscall(SYS_clone): what fork() does after glibc's handlers. */
static void clone_parent(pid_t pid)
{
	atfork_parent();
	if (pid > 0 && mp_enter()) {
		mp_record_fork(pid, fork_serial);
		mp_leave();
	}
}

static __attribute__((noreturn)) void exit_group_seen(int status);

/* glibc hands constructors the program's argc, argv and environment. */
__attribute__((constructor(101))) static void mp_init(int argc, char **argv, char **envp)
{
	int g = mp_pass_begin(), saved_errno = errno; /* main starts with the errno it had bare */

	(void)envp;

	/*
	 * A sanitizer's runtime replaces malloc (AddressSanitizer's checks
	 * its own leaks): memprov stands aside (asked first, as MemorySanitizer sets itself
	 * up at the first call to one of its interceptors, which the lookups
	 * of mp_hooks_need would be).
	 */
	if (mp_elf_sanitizer())
		goto out;
	mp_hooks_need(); /* a constructor's malloc before this one may have resolved them */
	mp_replacement_find();
	if (getauxval(AT_SECURE))
		goto out; /* setuid/setgid: leave it alone */
	mp_warn_init();
	mp_config_load();
	if (mp_heap_ahead && mp_config.heap && !mp_config.disable) {
		/*
		 * The program's malloc and free are another object's: memprov
		 * would see only the calls that object left to it (an
		 * allocation by reallocarray, never its free), and call live
		 * what was freed. No heap, and the reports say why.
		 */
		mp_config.heap = 0;
		mp_trace_add_flags(MP_HF_HEAP_AHEAD);
		/* a preload order the user can change is said on stderr; the
		 * program's own malloc only in the trace (its stderr is its own) */
		if (*mp_heap_ahead)
			mp_warn("the heap is not traced: malloc is that of a library preloaded "
				"before libmemprov.so (put libmemprov.so first in LD_PRELOAD): ",
				mp_heap_ahead);
	}
	/* disabled, a program MEMPROV_SKIP_EXE names, or a constructor before
	 * this one confined the process (hooks_sandbox.c) */
	if (mp_config.disable || mp_exe_skipped(mp_config.skip_exe) ||
	    __atomic_load_n(&mp_sandboxed, __ATOMIC_RELAXED))
		goto out;
	if (mp_stack_init())
		mp_warn("cannot map the stack table; stacks are written repeatedly", NULL);
	if (!atfork_done) {
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		mp_clone_fork_hooks(atfork_prepare, clone_parent, atfork_child);
		mp_syscall_exit_hook(exit_group_seen);
		atfork_done = 1;
	}
	mp_pass_end(g);
	mp_trace_set_args(argc, argv);
	start_tracing(0);
	if (mp_tracing)
		mp_signal_watch_deaths();
	errno = saved_errno;
	return;
out:
	mp_pass_end(g);
	errno = saved_errno;
}

static int is_tracing_self(void)
{
	return mp_tracing && !mp_self.disabled && mp_header &&
	       mp_header->pid == (int32_t)mp_syscall(SYS_getpid);
}

/* The run index's line for the end of this process. */
static void index_exit(int32_t status)
{
	char buf[24];

	mp_index_header_event(mp_header, "exit",
			      status == MP_EXIT_UNKNOWN ? "?" : mp_index_num(buf, status));
}

/*
 * Another thread's deadly signal is ending the process: on_death has said
 * so in the trace, and the default action follows as its handler returns
 * (a fault happens again then). An exit now would win that race and end
 * the process with the exit status, the trace saying it was killed: a
 * crash in a C extension's thread at CPython's exit exited 0 so. Wait for
 * the signal (a second at most: its action may have been changed
 * meanwhile, or the fault's page made readable; then the exit goes on,
 * recorded as usual).
 */
MP_REALIGN static void await_death(void)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	if (!mp_header || __atomic_load_n(&mp_header->state, __ATOMIC_ACQUIRE) != MP_STATE_KILLED ||
	    mp_header->pid != (int32_t)mp_syscall(SYS_getpid))
		return;
	for (i = 0; i < 1000; i++) {
		mp_syscall(SYS_nanosleep, &ms, NULL);
		if (__atomic_load_n(&mp_header->state, __ATOMIC_ACQUIRE) != MP_STATE_KILLED)
			return;
	}
	mp_trace_set_state(MP_STATE_RUNNING, 0);
}

/* Scan (once), then say how the process left. */
static void record_exit(int status, unsigned how)
{
	int g = mp_self.guard;

	await_death();
	if (!is_tracing_self())
		return;
	mp_self.guard = MP_GUARD_REC;
	mp_reach_at_exit();
	mp_record_exit(status, how);
	mp_trace_set_state(MP_STATE_EXITED, status);
	index_exit(status);
	mp_self.guard = g;
}

/*
 * exit() was called or main returned: the scan and the exit record wait
 * for mp_fini, after the exit handlers and the program's destructors (an
 * atexit handler or a destructor that drops the last pointer to a block
 * leaves it lost, as valgrind and LeakSanitizer say).
 */
static int exit_pending;
static int32_t exit_pid;        /* a child forked by a handler is not it */
static int exit_status;
static unsigned exit_how;
/*
 * A vfork child called exit() in our memory (after a failed exec, a
 * common pattern): libc ran the exit handlers, mp_fini's among them, and
 * marked them done for the parent too, which then leaves past every
 * handler. The parent records its exit where it notes it instead.
 */
static int exit_handlers_spent;

/* Keep how the process leaves and the program's registers, for mp_fini. */
static void note_exit_past(int status, unsigned how, const void *lib)
{
	int g = mp_self.guard;

	if (!is_tracing_self()) {
		/* a vfork child's exit(): the parent's handlers go with it */
		if (mp_tracing && mp_header && mp_header->pid != (int32_t)mp_syscall(SYS_getpid))
			__atomic_store_n(&exit_handlers_spent, 1, __ATOMIC_RELEASE);
		return;
	}
	mp_self.guard = MP_GUARD_REC;
	mp_reach_note_exit_past(lib);
	exit_status = status;
	exit_how = how;
	exit_pid = mp_header->pid;
	__atomic_store_n(&exit_pending, 1, __ATOMIC_RELEASE);
	mp_self.guard = g;
	if (__atomic_load_n(&exit_handlers_spent, __ATOMIC_ACQUIRE))
		record_exit(status, how); /* no mp_fini will follow */
}

static void note_exit(int status, unsigned how)
{
	note_exit_past(status, how, NULL);
}

/*
 * exit() called by libc from inside itself, where no hook sees it: err(),
 * errx(), error(), argp's exits, and the return of the last thread of a
 * process whose main left by pthread_exit. Its handlers run all the same:
 * this one, registered before the program's, runs after theirs and keeps
 * the status, as the exit hook does (which has, when it was the hook's
 * call: nothing to add then). Without it the trace said "main returned;
 * status not recorded" and had no scan, so the gate counted every block
 * still reachable as a leak. Registered as main starts: after libc's own
 * handler that runs the destructors (mp_fini among them), so before it.
 */
static void libc_exit_seen(int status, void *arg)
{
	(void)arg;
	if (__atomic_load_n(&exit_pending, __ATOMIC_ACQUIRE) && mp_header &&
	    exit_pid == mp_header->pid) {
		/*
		 * Another status: an exit() libc made from inside a handler
		 * that ran after main returned or exit() was called (errx
		 * in an atexit handler), which the process leaves with.
		 */
		if (status != exit_status) {
			exit_status = status;
			exit_how = MP_EXIT_HOW_EXIT;
		}
		return;
	}
	/* the program's frame: past libc's (err's, exit's) and the handlers' */
	note_exit_past(status, MP_EXIT_HOW_EXIT, (const void *)mp_real_exit);
}

/*
 * The last of the program's destructors has run (the program's own run
 * before this preloaded object's, in the loader's order): the scan and
 * the exit record of an exit() or a return from main. Otherwise (main
 * not wrapped), the header says the process exited, status unknown.
 */
__attribute__((destructor)) static void mp_fini(void)
{
	await_death();
	if (__atomic_load_n(&exit_pending, __ATOMIC_ACQUIRE) && mp_header &&
	    mp_header->pid == exit_pid && mp_header->state == MP_STATE_RUNNING) {
		record_exit(exit_status, exit_how);
		return;
	}
	if (mp_header && mp_header->state == MP_STATE_RUNNING &&
	    mp_header->pid == (int32_t)mp_syscall(SYS_getpid)) {
		if (mp_enter()) {
			mp_record_rss();
			mp_leave();
		}
		mp_trace_set_state(MP_STATE_EXITED, MP_EXIT_UNKNOWN);
		index_exit(MP_EXIT_UNKNOWN);
	}
}

/*
 * main's return value: libc calls exit() on it from inside itself, where
 * no hook can see it, so main is wrapped instead. The wrapper adds one
 * frame (in libmemprov) at the outer end of every stack of the main
 * thread; the analyzer drops it with the start code. The scan waits for
 * mp_fini, as after exit().
 */
static int (*user_main)(int, char **, char **);

#ifdef MP_ENTRY_STUB
/*
 * The hooks' entry points store the program's registers first
 * (reach.h); the C functions behind them are these.
 */
#define EXIT_HOOK(name) MP_HIDDEN __attribute__((used, noreturn)) void mp_##name##_c(int status)
EXIT_HOOK(exit);
EXIT_HOOK(_exit);
EXIT_HOOK(_Exit);
EXIT_HOOK(quick_exit);
MP_ENTRY_STUB(exit, mp_exit_c, "");
MP_ENTRY_STUB(_exit, mp__exit_c, "");
MP_ENTRY_STUB(_Exit, mp__Exit_c, "");
MP_ENTRY_STUB(quick_exit, mp_quick_exit_c, "");
int main_wrapper(int argc, char **argv, char **envp) MP_HIDDEN __attribute__((used));
int mp_main_entry(int argc, char **argv, char **envp) MP_HIDDEN;
MP_ENTRY_STUB(mp_main_entry, main_wrapper, ".hidden mp_main_entry");
#define MAIN_WRAPPER mp_main_entry
#else
#define EXIT_HOOK(name) MP_EXPORT __attribute__((noreturn)) void name(int status)
#define MAIN_WRAPPER main_wrapper
#endif

/*
 * The registers libc's start code had at its call of main are those it
 * has when main returns: kept from the wrapper's entry for note_exit.
 */
static struct mp_entry_regs main_entry;

MP_HIDDEN int main_wrapper(int argc, char **argv, char **envp)
{
	int status;

	main_entry = mp_entry_regs;
	mp_entry_regs.set = 0;
	on_exit(libc_exit_seen, NULL);
	status = user_main(argc, argv, envp);
	mp_entry_regs = main_entry;
	note_exit(status, MP_EXIT_HOW_RETURN);
	return status;
}

int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
		      void (*init)(void), void (*fini)(void), void (*rtld_fini)(void),
		      void *stack_end);

MP_EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc,
				char **argv, void (*init)(void), void (*fini)(void),
				void (*rtld_fini)(void), void *stack_end)
{
	mp_hooks_need();
	if (mp_elf_sanitizer()) /* standing aside: not even a frame in its stacks */
		return mp_real___libc_start_main(main, argc, argv, init, fini, rtld_fini, stack_end);
	user_main = main;
	return mp_real___libc_start_main(MAIN_WRAPPER, argc, argv, init, fini,
					 rtld_fini, stack_end);
}

/* Record how the process leaves, then leave through libc (or the kernel). */
static __attribute__((noreturn)) void leave(void (*real)(int), int status, unsigned how)
{
	record_exit(status, how);
	if (real)
		real(status);
	for (;;)
		mp_syscall(SYS_exit_group, status);
}

/* exit(): the handlers and destructors run first, then mp_fini records. */
EXIT_HOOK(exit)
{
	mp_hooks_need();
	if (mp_real_exit) {
		note_exit(status, MP_EXIT_HOW_EXIT);
		mp_real_exit(status);
	}
	leave(NULL, status, MP_EXIT_HOW_EXIT);
}

EXIT_HOOK(_exit)
{
	mp_hooks_need();
	leave(mp_real__exit, status, MP_EXIT_HOW__EXIT);
}

EXIT_HOOK(_Exit)
{
	mp_hooks_need();
	leave(mp_real__Exit, status, MP_EXIT_HOW__EXIT);
}

/* syscall(SYS_exit_group, status): as _exit (hooks_sandbox.c). */
static __attribute__((noreturn)) void exit_group_seen(int status)
{
	mp_hooks_need();
	leave(mp_real__exit, status, MP_EXIT_HOW__EXIT);
}

EXIT_HOOK(quick_exit)
{
	mp_hooks_need();
	leave(mp_real_quick_exit, status, MP_EXIT_HOW_EXIT);
}

/*
 * The program's first thread: libunwind is opened now if no stack needed
 * it yet, while the process still has one thread, so that no other
 * thread can hold the loader's lock the open takes. Later, an allocation
 * that opened it could wait for that lock held by a thread inside dlopen
 * whose library constructor waits for a lock the allocating thread
 * holds (unwind_lib.c opens it lazily only while single-threaded).
 */
MP_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			     void *arg)
{
	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_pthread_create))
		return EAGAIN;
	if (MP_UNLIKELY(__libc_single_threaded) && mp_tracing && !mp_unw_is_open()) {
		int g = mp_pass_begin(); /* the loader's allocations are its own */

		mp_unw_prepare();
		mp_pass_end(g);
	}
	return mp_real_pthread_create(t, attr, fn, arg);
}

MP_EXPORT pid_t fork(void)
{
	pid_t pid;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_fork)) {
		errno = ENOSYS;
		return -1;
	}
	pid = mp_real_fork();
	if (pid > 0 && mp_enter()) {
		mp_record_fork(pid, fork_serial);
		mp_leave();
	}
	return pid;
}

/*
 * daemon(): glibc's forks and ends the parent with an _exit(0) of its own,
 * inside libc, which no hook sees: the parent's trace had no exit and no
 * scan, and `memprov run --check --children` gated all it held (a test
 * that starts a daemon failed on 64 B still reachable). So it is done
 * here as glibc does it, through memprov's fork and exit: the parent
 * leaves by _exit(0); the child starts a new session, changes to / unless
 * nochdir, and unless noclose points 0, 1 and 2 at /dev/null, once it
 * has checked that /dev/null is the null device (-1 with ENODEV if not).
 */
MP_EXPORT int daemon(int nochdir, int noclose)
{
	struct stat st;
	pid_t pid;
	int fd;

	mp_hooks_need();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0)
		leave(mp_real__exit, 0, MP_EXIT_HOW__EXIT);
	if (setsid() < 0)
		return -1;
	if (!nochdir && chdir("/") < 0) {
		/* a failure is ignored, as glibc ignores it */
	}
	if (noclose)
		return 0;
	fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		close(fd);
		return -1;
	}
	if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
		close(fd);
		errno = ENODEV;
		return -1;
	}
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	return 0;
}

/*
 * A sandboxed process (a seccomp filter under which memprov's own calls
 * could kill it, hooks_sandbox.c) that runs a program hands it the
 * filter, and memprov's start-up there would make those calls. The
 * program gets the environment without libmemprov.so in LD_PRELOAD, as
 * if memprov had never been preloaded (the variable goes when nothing is
 * left in it). The new arrays are built, without a system call, in a
 * buffer hooks_sandbox.c mapped before the filter went in (a vfork child
 * uses it while its parent waits; two threads that exec at the same
 * instant would share it). An environment too big for it goes as it is.
 */

/* Is the LD_PRELOAD entry s (n bytes) this libmemprov.so, by its file name? */
static int is_self(const char *s, size_t n)
{
	static const char *self;
	const char *base = s, *p;
	Dl_info info;

	if (!self && dladdr((void *)is_self, &info) && info.dli_fname)
		self = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname;
	for (p = s; p < s + n; p++)
		if (*p == '/')
			base = p + 1;
	return self && strlen(self) == (size_t)(s + n - base) && !memcmp(self, base, strlen(self));
}

/* envp without this libmemprov.so in LD_PRELOAD, built in out (room
 * bytes); envp as it is when it does not fit. */
static char *const *strip_self(char *const *envp, char **out, size_t room)
{
	static const char key[] = "LD_PRELOAD=";
	size_t n = 0, i, j, vlen = 0, k = sizeof(key) - 1;
	char *val, *w;

	for (; envp[n]; n++)
		if (!strncmp(envp[n], key, k))
			vlen += strlen(envp[n]) + 1;
	if ((n + 1) * sizeof(char *) + vlen + 1 > room)
		return envp;
	val = (char *)(out + n + 1);
	for (i = j = 0; i < n; i++) {
		const char *s = envp[i] + k, *end;

		if (strncmp(envp[i], key, k)) {
			out[j++] = envp[i];
			continue;
		}
		/* the loader splits the list at spaces and colons */
		memcpy(val, key, k);
		w = val + k;
		for (; *s; s = *end ? end + 1 : end) {
			end = s + strcspn(s, ": ");
			if (end == s || is_self(s, (size_t)(end - s)))
				continue;
			if (w != val + k)
				*w++ = ':';
			memcpy(w, s, (size_t)(end - s));
			w += end - s;
		}
		*w++ = 0;
		if (w - val > (ptrdiff_t)k + 1)
			out[j++] = val;
		val = w;
	}
	out[j] = NULL;
	return out;
}

static char *const *exec_env(char *const *envp)
{
	size_t room;
	char **out;

	if (MP_LIKELY(!__atomic_load_n(&mp_sandboxed, __ATOMIC_RELAXED)) || !envp)
		return envp;
	out = mp_sandbox_exec_buf(&room);
	return out ? strip_self(envp, out, room) : envp;
}

#define PRELOADS_SELF 1
#define PRELOADS_FIRST 2 /* a sanitizer's runtime that must come first */

/* Is the LD_PRELOAD entry s (n bytes) a sanitizer runtime that must be first? */
static int is_first_runtime(const char *s, size_t n)
{
	const char *base = s;

	for (size_t i = 0; i < n; i++)
		if (s[i] == '/')
			base = s + i + 1;
	return mp_exec_first_runtime(base, (size_t)(s + n - base));
}

/* What envp's LD_PRELOAD holds: PRELOADS_SELF, PRELOADS_FIRST. */
static int preloads(char *const *envp)
{
	static const char key[] = "LD_PRELOAD=";
	int what = 0;

	for (; envp && *envp; envp++) {
		const char *s, *end;

		if (strncmp(*envp, key, sizeof(key) - 1))
			continue;
		for (s = *envp + sizeof(key) - 1; *s; s = *end ? end + 1 : end) {
			end = s + strcspn(s, ": ");
			if (end != s && is_self(s, (size_t)(end - s)))
				what |= PRELOADS_SELF;
			else if (end != s && is_first_runtime(s, (size_t)(end - s)))
				what |= PRELOADS_FIRST;
		}
	}
	return what;
}

/*
 * Must the program start without libmemprov.so: it needs a sanitizer's
 * runtime that refuses a library preloaded before it, or the environment
 * preloads that runtime itself (LD_PRELOAD=libasan.so for a Python
 * extension built with AddressSanitizer)?
 */
static int must_go_alone(const char *file, int fd, int search, char *const *envp)
{
	int what;

	if (__atomic_load_n(&mp_sandboxed, __ATOMIC_RELAXED))
		return 0; /* exec_env leaves libmemprov.so out anyway */
	what = preloads(envp);
	return (what & PRELOADS_SELF) &&
	       ((what & PRELOADS_FIRST) || MP_UNLIKELY(mp_exec_needs_first(file, fd, search, environ)));
}

/*
 * Around every exec: the header says EXEC while the call runs, RUNNING
 * again if it failed. A vfork child shares our memory but has its own
 * pid: it must not touch the parent's header.
 */
static int exec_begin(void)
{
	if (!mp_tracing || !mp_header || mp_header->pid != (int32_t)mp_syscall(SYS_getpid))
		return 0;
	mp_trace_set_state(MP_STATE_EXEC, 0);
	mp_index_header_event(mp_header, "exec", "-");
	return 1;
}

static int exec_end(int marked, int r)
{
	int saved = errno;

	if (marked) {
		mp_trace_set_state(MP_STATE_RUNNING, 0);
		mp_index_header_event(mp_header, "exec-failed", "-");
	}
	errno = saved;
	return r;
}

/* One exec call: of the file open at fd (fexecve) when fd >= 0, else of
 * file, looked up in PATH when search (execvp, execvpe). */
struct exec_call {
	const char *file;
	int fd, search;
	char *const *argv;
	int by_fd; /* fexecve: fd, whatever its value */
};

static int exec_real(const struct exec_call *c, char *const *env)
{
	if (c->by_fd)
		return mp_real_fexecve(c->fd, c->argv, env);
	if (c->search)
		return mp_real_execvpe(c->file, c->argv, env);
	return mp_real_execve(c->file, c->argv, env);
}

/* How much of the stack an environment without libmemprov.so may take:
 * a thread's may be 16 KiB in all; a bigger one is mapped (and left
 * behind in the parent of a vfork child, whose exec succeeded). */
#define EXEC_ALONE_STACK 2048

/* The bytes strip_self needs for envp. */
static size_t strip_room(char *const *envp)
{
	size_t n = 0, len = 0;

	for (; envp[n]; n++)
		if (!strncmp(envp[n], "LD_PRELOAD=", 11))
			len += strlen(envp[n]) + 1;
	return (n + 1) * sizeof(char *) + len + 1;
}

/* Room for strip_self: on the stack when it fits there (stack, its
 * EXEC_ALONE_STACK bytes), else mapped (*mapped). */
static char **alone_room(char *const *envp, char **stack, size_t *room, size_t *mapped)
{
	void *m;

	*room = strip_room(envp);
	*mapped = 0;
	if (*room <= EXEC_ALONE_STACK)
		return stack;
	m = mp_sys_mmap(NULL, *room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	*mapped = *room;
	return m;
}

/*
 * Run a program that needs a sanitizer's runtime first (exec_target.c)
 * without libmemprov.so in LD_PRELOAD: with it, the runtime refuses to
 * start (AddressSanitizer exits 1), changing what the program does. The
 * environment is built on this stack (a vfork child has no other memory
 * of its own) or, beyond EXEC_ALONE_STACK bytes, in a mapping.
 */
static __attribute__((noinline)) int exec_alone(const struct exec_call *c, char *const *envp)
{
	char *stack[EXEC_ALONE_STACK / sizeof(char *)];
	size_t room, mapped;
	char **out = alone_room(envp, stack, &room, &mapped);
	int marked = exec_begin(), r, saved;

	r = exec_end(marked, exec_real(c, out ? strip_self(envp, out, room) : envp));
	saved = errno;
	if (mapped)
		mp_sys_munmap(out, mapped);
	errno = saved;
	return r;
}

/* envp: the environment the program passed (environ for execv, execvp). */
static int exec_hook(const struct exec_call *c, char *const *envp)
{
	char *const *env;
	int marked;

	mp_hooks_need();
	if (MP_UNLIKELY(c->by_fd ? !mp_real_fexecve : c->search ? !mp_real_execvpe : !mp_real_execve)) {
		errno = ENOSYS;
		return -1;
	}
	if (must_go_alone(c->file, c->fd, c->search, envp))
		return exec_alone(c, envp);
	env = exec_env(envp);
	marked = exec_begin();
	return exec_end(marked, exec_real(c, env));
}

MP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	struct exec_call c = { path, -1, 0, argv, 0 };

	return exec_hook(&c, envp);
}

MP_EXPORT int execv(const char *path, char *const argv[])
{
	struct exec_call c = { path, -1, 0, argv, 0 };

	return exec_hook(&c, environ);
}

MP_EXPORT int execvp(const char *file, char *const argv[])
{
	struct exec_call c = { file, -1, 1, argv, 0 };

	return exec_hook(&c, environ);
}

MP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct exec_call c = { file, -1, 1, argv, 0 };

	return exec_hook(&c, envp);
}

MP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct exec_call c = { NULL, fd, 0, argv, 1 }; /* a bad fd: libc's error */

	return exec_hook(&c, envp);
}

/*
 * posix_spawn and posix_spawnp (glibc's system and popen, GNU make's
 * recipes, Python's subprocess in some cases): libc's exec inside them
 * is not hooked, so the environment is settled here, as for an exec: no
 * libmemprov.so for a program that needs a sanitizer's runtime first (on
 * this stack), nor in a sandboxed process.
 */
struct spawn_call {
	pid_t *pid;
	const char *file;
	int search;
	const posix_spawn_file_actions_t *actions;
	const posix_spawnattr_t *attr;
	char *const *argv;
};

static int spawn_real(const struct spawn_call *c, char *const *env)
{
	return (c->search ? mp_real_posix_spawnp : mp_real_posix_spawn)(c->pid, c->file, c->actions,
									 c->attr, c->argv, env);
}

static __attribute__((noinline)) int spawn_alone(const struct spawn_call *c, char *const *envp)
{
	char *stack[EXEC_ALONE_STACK / sizeof(char *)];
	size_t room, mapped;
	char **out = alone_room(envp, stack, &room, &mapped);
	int r = spawn_real(c, out ? strip_self(envp, out, room) : envp);

	if (mapped)
		mp_sys_munmap(out, mapped);
	return r;
}

static int spawn_hook(const struct spawn_call *c, char *const *envp)
{
	mp_hooks_need();
	if (MP_UNLIKELY(c->search ? !mp_real_posix_spawnp : !mp_real_posix_spawn))
		return ENOSYS;
	if (must_go_alone(c->file, -1, c->search, envp))
		return spawn_alone(c, envp);
	return spawn_real(c, exec_env(envp));
}

MP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct spawn_call c = { pid, path, 0, actions, attr, argv };

	return spawn_hook(&c, envp);
}

MP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct spawn_call c = { pid, file, 1, actions, attr, argv };

	return spawn_hook(&c, envp);
}

#define MAX_EXECL_ARGS 4096

/* Collect execl-style arguments up to the NULL; -1 (E2BIG) if too many. */
static int collect_args(const char *arg0, va_list ap, char **argv)
{
	int n = 0;
	const char *a = arg0;

	while (a) {
		if (n == MAX_EXECL_ARGS - 1) {
			errno = E2BIG;
			return -1;
		}
		argv[n++] = (char *)a;
		a = va_arg(ap, const char *);
	}
	argv[n] = NULL;
	return n;
}

MP_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	va_list ap;
	int n;

	va_start(ap, arg);
	n = collect_args(arg, ap, argv);
	va_end(ap);
	return n < 0 ? -1 : execv(path, argv);
}

MP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	va_list ap;
	int n;

	va_start(ap, arg);
	n = collect_args(arg, ap, argv);
	va_end(ap);
	return n < 0 ? -1 : execvp(file, argv);
}

MP_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	char *const *envp;
	va_list ap;
	int n;

	va_start(ap, arg);
	n = collect_args(arg, ap, argv);
	envp = va_arg(ap, char *const *);
	va_end(ap);
	return n < 0 ? -1 : execve(path, argv, envp);
}

MP_EXPORT void memprov_mark(const char *label)
{
	if (mp_enter()) {
		mp_record_mark(label, 0);
		mp_leave();
	}
}

MP_EXPORT int memprov_active(void)
{
	return mp_tracing != 0;
}
