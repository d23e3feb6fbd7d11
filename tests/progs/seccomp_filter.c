/*
 * seccomp_filter.c - a program that confines itself with a seccomp filter
 * listing the only system calls it makes from then on, and kills itself on
 * any other (SECCOMP_RET_KILL_PROCESS), as sshd's pre-authentication
 * child and sandboxed services do. Bare, it runs to the end and exits 0;
 * a tool that makes a system call of its own after the filter is in force
 * gets it killed by SIGSYS.
 *
 *   seccomp_filter prctl|syscall|dlsym|strict|strict3|denyerrno|denykill|args|fsize|twofilters|closefrom|killstat [N]
 *   seccomp_filter exec|nocreate
 *   seccomp_filter ownlist
 *   seccomp_filter calls
 *
 * prctl: the filter through prctl(PR_SET_SECCOMP); syscall: through
 * syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER) as libseccomp does;
 * dlsym: the prctl filter through libc's prctl found with dlsym on
 * dlopen("libc.so.6") (as ctypes.CDLL("libc.so.6").prctl does);
 * strict: SECCOMP_MODE_STRICT, then 20,000 kept blocks of 64 B from a
 * heap grown beforehand (no system call), strict3 the same with a third
 * argument of 1, which prctl ignores in strict mode (read, write, _exit
 * and sigreturn only: the
 * program ends with a raw exit); denyerrno: every call allowed but
 * madvise, process_vm_readv and ptrace, which fail with EPERM (a deny-list
 * as container runtimes install); denykill: every call allowed but
 * madvise, which kills; args: madvise allowed for MADV_DONTNEED only,
 * anything else kills (glibc's free needs no other advice); fsize: prctl
 * with the file-size limit set to 0 first, as sshd's child does (a write
 * to a file on stderr then raises SIGXFSZ); twofilters: denyerrno's
 * filter (process_vm_readv fails with EPERM from then on), then
 * denykill's. closefrom: an allow-list without fstat, with close and
 * close_range, then closefrom(3). All but
 * prctl, syscall and strict go through prctl. Before the filter it leaks one block
 * (before_filter); after it, N (default 200,000) malloc/free pairs of
 * 16 B to 4 KiB, one more leak (after_filter), and "done" on stdout.
 *
 * exec: the prctl filter with what a program's start-up needs added,
 * then execv of this program as "child", which prints LD_PRELOAD (bare,
 * "(unset)") and exits 0; a tool whose start-up makes other calls kills
 * the child. nocreate: a filter under which openat with O_CREAT fails
 * with ENOSYS and all else is allowed (man-db's children), then the same
 * execv: the child can create no file. killstat: a filter that kills on
 * stat (glibc uses newfstatat), then directory streams from fdopendir.
 *
 * ownlist: a filter that allows the calls memprov may make while it
 * traces (hooks_sandbox.c's list, copied here) and the program's own
 * (threads), and kills on any other; then 3 threads churn and keep a
 * block each, dlopen and dlclose, more churn, "done". memprov goes on
 * tracing under it, through the scan at exit.
 *
 * calls: no filter; syscall() as programs use it, one line each: a
 * result, errno on failure, the sixth argument (an mmap offset), a child
 * of SYS_fork returning through it, one of SYS_clone (fork-like) that
 * allocates, prctl's name round trip.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <dirent.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[2];
static void *many[20000]; /* strict mode's blocks, kept */

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
/* what glibc's malloc and exit need here */
#define ALLOW_HEAP_EXIT ALLOW(SYS_brk), ALLOW(SYS_mmap), ALLOW(SYS_munmap), ALLOW(SYS_mremap), \
	ALLOW(SYS_write), ALLOW(SYS_exit_group), ALLOW(SYS_exit), ALLOW(SYS_futex), \
	ALLOW(SYS_rt_sigprocmask)

static struct sock_filter rules[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	/* what glibc's malloc, stdio and exit need here, nothing more */
	ALLOW_HEAP_EXIT, ALLOW(SYS_newfstatat), ALLOW(SYS_fstat),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

/* rules without fstat, with close and close_range: closefrom after the
 * filter is the program's own call, and nothing may be added to it */
static struct sock_filter close_rules[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	ALLOW_HEAP_EXIT, ALLOW(SYS_close), ALLOW(SYS_close_range),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

/* rules, and what the loader and libc's start-up need in a new program */
static struct sock_filter exec_rules[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	ALLOW_HEAP_EXIT, ALLOW(SYS_newfstatat), ALLOW(SYS_fstat),
	ALLOW(SYS_execve), ALLOW(SYS_arch_prctl), ALLOW(SYS_access), ALLOW(SYS_openat),
	ALLOW(SYS_read), ALLOW(SYS_close), ALLOW(SYS_pread64), ALLOW(SYS_mprotect),
	ALLOW(SYS_set_tid_address), ALLOW(SYS_set_robust_list), ALLOW(SYS_rseq),
	ALLOW(SYS_prlimit64), ALLOW(SYS_getrandom),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

/* openat with O_CREAT fails with ENOSYS, everything else is allowed (man-db's children: no file created) */
static struct sock_filter no_create[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 3),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* stat (not newfstatat, which glibc uses) kills, everything else is allowed */
static struct sock_filter kill_stat[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_stat, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static struct sock_filter own_list[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_open), ALLOW(SYS_openat), ALLOW(SYS_close),
	ALLOW(SYS_fstat), ALLOW(SYS_newfstatat), ALLOW(SYS_statfs), ALLOW(SYS_fstatfs),
	ALLOW(SYS_pread64), ALLOW(SYS_pwrite64), ALLOW(SYS_fallocate), ALLOW(SYS_mmap),
	ALLOW(SYS_munmap), ALLOW(SYS_mremap), ALLOW(SYS_mprotect), ALLOW(SYS_madvise),
	ALLOW(SYS_mincore), ALLOW(SYS_brk), ALLOW(SYS_futex), ALLOW(SYS_getpid), ALLOW(SYS_gettid),
	ALLOW(SYS_getppid), ALLOW(SYS_uname), ALLOW(SYS_prlimit64), ALLOW(SYS_fcntl),
	ALLOW(SYS_readlink), ALLOW(SYS_readlinkat), ALLOW(SYS_access), ALLOW(SYS_faccessat),
	ALLOW(SYS_faccessat2), ALLOW(SYS_getcwd), ALLOW(SYS_rt_sigaction), ALLOW(SYS_rt_sigprocmask),
	ALLOW(SYS_rt_sigpending), ALLOW(SYS_sigaltstack), ALLOW(SYS_tgkill), ALLOW(SYS_prctl),
	ALLOW(SYS_clock_gettime), ALLOW(SYS_getdents64), ALLOW(SYS_sched_yield),
	ALLOW(SYS_nanosleep), ALLOW(SYS_process_vm_readv), ALLOW(SYS_exit), ALLOW(SYS_exit_group),
	ALLOW(SYS_rt_sigreturn), ALLOW(SYS_rt_sigtimedwait), ALLOW(SYS_msync),
	/* the program's own: threads */
	ALLOW(SYS_clone3), ALLOW(SYS_clone), ALLOW(SYS_set_robust_list), ALLOW(SYS_rseq),
	ALLOW(SYS_getrandom),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

static void *kept[3];

static void *churn_thread(void *arg)
{
	long i;

	for (i = 0; i < 100000; i++)
		free(malloc((size_t)(i % 3000 + 1)));
	kept[(long)arg] = malloc(4321);
	return NULL;
}

static struct sock_filter deny_errno[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1 /* EPERM */),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static struct sock_filter deny_kill[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static struct sock_filter by_args[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 0, 3),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_DONTNEED, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

#define PROG(r) { sizeof(r) / sizeof((r)[0]), (r) }

__attribute__((noinline)) static void *before_filter(void)
{
	return malloc(777);
}

__attribute__((noinline)) static void *after_filter(void)
{
	return malloc(999);
}

static int calls(const char *self)
{
	char name[16] = "", a[64];
	long r, pid;
	int fd = open(self, O_RDONLY), st;
	void *m;

	printf("getpid %d\n", syscall(SYS_getpid) == getpid());
	errno = 0;
	r = syscall(SYS_close, -1);
	printf("close(-1) %ld %s\n", r, errno == EBADF ? "EBADF" : "?");
	/* six arguments: the offset is the sixth */
	m = (void *)syscall(SYS_mmap, NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
	printf("mmap offset %d\n", m != MAP_FAILED && pread(fd, a, sizeof(a), 4096) == sizeof(a) &&
				       !memcmp(a, m, sizeof(a)));
	munmap(m, 4096);
	close(fd);
	pid = syscall(SYS_fork);
	if (pid == 0)
		_exit(7);
	printf("fork child %d\n", pid > 0 && waitpid((pid_t)pid, &st, 0) == pid &&
				      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	/* a fork made with clone, as bubblewrap makes its sandboxed child */
	pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	if (pid == 0) {
		int k;

		for (k = 0; k < 20000; k++)
			free(malloc(64 + (size_t)(k % 100)));
		_exit(8);
	}
	printf("clone child %d\n", pid > 0 && waitpid((pid_t)pid, &st, 0) == pid &&
				       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	prctl(PR_SET_NAME, "memprov-x", 0, 0, 0);
	syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0);
	printf("prctl name %s\n", name);
	return 0;
}

int main(int argc, char **argv)
{
	struct sock_fprog prog = { sizeof(rules) / sizeof(rules[0]), rules };
	const char *mode = argc > 1 ? argv[1] : "prctl";
	long n = argc > 2 ? atol(argv[2]) : 200000, i;
	int strict = !strcmp(mode, "strict") || !strcmp(mode, "strict3");
	int r;

	if (!strcmp(mode, "calls"))
		return calls(argv[0]);
	if (!strcmp(mode, "child")) {
		printf("child: LD_PRELOAD %s\n", getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "(unset)");
		return 0;
	}
	keep[0] = before_filter();
	setvbuf(stdout, NULL, _IONBF, 0); /* no buffer to allocate later */
	if (!strcmp(mode, "fsize")) {
		struct rlimit none = { 0, 0 };

		setrlimit(RLIMIT_FSIZE, &none);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		perror("PR_SET_NO_NEW_PRIVS");
		return 2;
	}
	if (strict) {
		/* room in the heap for what strict mode allocates: no brk then */
		mallopt(M_TRIM_THRESHOLD, 64 << 20);
		mallopt(M_MMAP_THRESHOLD, 64 << 20);
		free(malloc(8 << 20));
		r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, !strcmp(mode, "strict3"), 0, 0);
		for (i = 0; !r && i < 20000; i++)
			many[i] = malloc(64);
	}
	else if (!strcmp(mode, "dlsym")) {
		int (*libc_prctl)(int, ...) =
			(int (*)(int, ...))dlsym(dlopen("libc.so.6", RTLD_NOW), "prctl");

		r = libc_prctl ? libc_prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) : -1;
	} else if (!strcmp(mode, "syscall"))
		r = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	else {
		struct sock_fprog other[] = { PROG(deny_errno), PROG(deny_kill), PROG(by_args),
					      PROG(exec_rules), PROG(own_list), PROG(close_rules),
					      PROG(no_create), PROG(kill_stat) };
		int k = !strcmp(mode, "denyerrno") ? 0 : !strcmp(mode, "denykill") ? 1 :
			!strcmp(mode, "twofilters") ? 0 :
			!strcmp(mode, "args") ? 2 : !strcmp(mode, "exec") ? 3 :
			!strcmp(mode, "ownlist") ? 4 : !strcmp(mode, "closefrom") ? 5 :
			!strcmp(mode, "nocreate") ? 6 : !strcmp(mode, "killstat") ? 7 : -1;

		r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, k < 0 ? &prog : &other[k], 0, 0);
		if (!r && !strcmp(mode, "twofilters")) {
			/* memprov goes on tracing under the first: churn through chunks */
			for (i = 0; i < n; i++)
				free(malloc(16 + (size_t)(i * 7919 % 4081)));
			r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &other[1], 0, 0);
		}
	}
	if (r) {
		perror("seccomp");
		return 2;
	}
	if (!strcmp(mode, "ownlist")) {
		pthread_t t[3];
		void *h;

		for (i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, churn_thread, (void *)i);
		for (i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		h = dlopen("libm.so.6", RTLD_NOW);
		if (h)
			dlclose(h);
	}
	if (!strcmp(mode, "killstat")) {
		/* directory streams made from descriptors, on procfs too */
		const char *dirs[] = { "/tmp", "/proc/self", "/proc/self/fd" };
		int entries = 0;

		for (i = 0; i < 3; i++) {
			DIR *d = fdopendir(open(dirs[i], O_RDONLY | O_DIRECTORY));

			while (d && readdir(d))
				entries++;
			if (d)
				closedir(d);
		}
		printf("listed: %d\n", entries > 0);
	}
	if (!strcmp(mode, "closefrom"))
		closefrom(3); /* close_range: memprov's descriptors among them */
	if (!strcmp(mode, "exec") || !strcmp(mode, "nocreate")) {
		char child[] = "child", *args[] = { argv[0], child, NULL };

		execv(argv[0], args);
		return 4;
	}
	for (i = 0; i < n && !strict; i++) {
		char *p = malloc(16 + (size_t)(i * 7919 % 4081));

		p[0] = (char)i;
		free(p);
	}
	if (!strict)
		keep[1] = after_filter();
	if (write(1, "done\n", 5) != 5)
		return 3;
	if (strict)
		syscall(SYS_exit, 0); /* exit_group is not allowed in strict mode */
	return 0;
}
