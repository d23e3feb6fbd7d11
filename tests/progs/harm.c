/*
 * harm.c - programs that do what memprov must survive without changing
 * what they do (tests/t9500-harm.sh). Each mode prints what it saw; the
 * exit status is 0 when the program got what it would get without
 * memprov.
 *
 *   harm closefd FILE     close every descriptor from 3 up (as a close
 *                         loop or closefrom does), open FILE, write 9
 *                         bytes, then keep 1001 blocks of 64 B (after
 *                         100000 malloc/free pairs: new trace segments); prints
 *                         "fd=N size_after=S kept=1001"
 *   harm dup2over FILE    open FILE, write 9 bytes, dup2 it over every
 *                         other descriptor from 3 to 1023, then keep 1001
 *                         blocks; prints "size_after=S"
 *   harm forkpipe         close every descriptor from 3 up, make a pipe,
 *                         dup2 its read end over every number from 3 to
 *                         511, write 9 bytes, fork; the child checks
 *                         that every one of those numbers is still that
 *                         pipe and reads the 9 bytes through number 3:
 *                         exit 3 if not
 *   harm stdio            stdout and stderr are closed by the caller:
 *                         writes to 1 and 2 must fail with EBADF after
 *                         allocating; exit 3 if one succeeds
 *   harm fsize BYTES      lower RLIMIT_FSIZE to BYTES, then allocate
 *                         200000 blocks; prints "done"
 *   harm stderrfile FILE  started with stderr closed by the caller: open
 *                         FILE (it gets number 2), write a line, lower
 *                         RLIMIT_FSIZE to 30000, allocate 200000 blocks,
 *                         write a second line; FILE holds just the two
 *   harm cancel T         T threads each malloc/free 300000 times with no
 *                         cancellation point of their own, then call
 *                         pthread_testcancel; main cancels them at once
 *                         and joins; prints "joined T"
 *   harm sigmmap RAW      T=2 threads malloc/free while SIGALRM (every
 *                         200 us) runs a handler that mmaps 4 KiB and
 *                         keeps it; RAW=1 installs the handler with the
 *                         raw system call (memprov cannot wrap it);
 *                         prints "kept=N"
 *   harm sigjmp           a SIGALRM handler siglongjmps out of a loop
 *                         of mmap/munmap (system calls: no libc lock to
 *                         leave held) 2000 times, inside memprov's hooks
 *                         too; then 1000 blocks of 4000 B are kept;
 *                         prints "jumps=N maps=M"
 *   harm quickexit        keep one block of 77 B and leave through
 *                         quick_exit(3)
 *   harm misaligned       call malloc, calloc, realloc and free with the
 *                         stack 8 bytes off the ABI's 16-byte alignment
 *                         (as hand-written assembly may): keeps 100
 *                         blocks of 1000 B; prints "kept=100"
 *   harm vforksig         handlers for SIGHUP and SIGUSR1; a vfork child
 *                         sets them back to SIG_DFL (sigaction, signal)
 *                         and asks for them (as CPython's subprocess does
 *                         before exec), then _exits; the parent raises
 *                         both: prints "hup=1 usr1=1 child-saw-dfl=1"
 *   harm badpath          open, openat, creat, __open_2, fopen and fstatat
 *                         of a path the kernel cannot read (an unreadable
 *                         page, or "/dev/fd/" running into one): prints
 *                         each result, "call N: -1 EFAULT"
 *   harm errno            prints errno as main found it, and in a forked
 *                         child and its parent right after fork: 0, 0, 0
 *   harm hidden           every number /proc/self/fd lists from 3 up
 *                         that fcntl calls not open (memprov's own) must
 *                         act as not open to close, dup and dup2 from it,
 *                         fstat, fstatat and statx (also as syscall()
 *                         by number: fstat, fcntl, close), ftruncate
 *                         and fallocate (syscall(): ftruncate), open,
 *                         openat, fopen, creat, truncate and freopen of
 *                         /dev/fd/N, /proc/{self,PID}/fd/N and
 *                         /proc/self/task/TID/fd/N (ENOENT),
 *                         close_range with bad flags fails (EINVAL),
 *                         fcntl(F_DUPFD, N) gives N, and it takes a dup2
 *                         onto it: a pipe's write end
 *                         put there carries a byte; then close_range(3,
 *                         ~0) and closefrom(3), and 1001 blocks kept;
 *                         stderr: "hidden=N kept_open=K" (K: of those N,
 *                         still listed after close_range and closefrom)
 *   harm crashabort       a stack overflow caught by a SIGSEGV handler on
 *                         a small alternate stack (the CPU's minimum
 *                         signal frame and 4 KiB), which says "overflow"
 *                         and calls abort(), as Rust's runtime does: the
 *                         process dies of SIGABRT
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[1001];

/* 100000 malloc/free pairs (about 6 MB of trace: new segments), then
 * n blocks of size kept. */
static void keep_blocks(size_t n, size_t size)
{
	size_t i;

	for (i = 0; i < 100000; i++) {
		void *p = malloc(16 + i % 100);

		*(volatile char *)p = 1;
		free(p);
	}
	for (i = 0; i < n && i < 1001; i++) {
		keep[i] = malloc(size);
		memset(keep[i], 1, size);
	}
}

static void close_from_3(void)
{
	int fd;

	for (fd = 3; fd < 65536; fd++)
		close(fd);
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

static int mode_closefd(const char *path)
{
	int fd;

	close_from_3();
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "user data", 9) != 9)
		return 2;
	keep_blocks(1001, 64);
	printf("fd=%d size_after=%ld kept=1001\n", fd, file_size(path));
	return file_size(path) == 9 ? 0 : 3;
}

static int mode_dup2over(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), n;

	if (fd < 0 || write(fd, "user data", 9) != 9)
		return 2;
	for (n = 3; n < 1024; n++)
		if (n != fd)
			dup2(fd, n);
	keep_blocks(1001, 64);
	printf("size_after=%ld\n", file_size(path));
	return file_size(path) == 9 ? 0 : 3;
}

/* The numbers /proc/self/fd lists from 3 up that fcntl says are not
 * open, into out (at most max); how many. */
static int unseen_fds(int *out, int max)
{
	char path[64];
	int n = 0, fd;

	for (fd = 3; fd < 65536 && n < max; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (access(path, F_OK) == 0 && fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			out[n++] = fd;
	}
	return n;
}

static int mode_hidden(void)
{
	int h[64], n = unseen_fds(h, 64), i, bad = 0, kept = 0;

	for (i = 0; i < n; i++) {
		int p[2], d;
		char c = 0;

		errno = 0;
		if (close(h[i]) != -1 || errno != EBADF)
			printf("close(%d) did not fail with EBADF\n", h[i]), bad++;
		if (dup(h[i]) != -1 || dup2(h[i], 1000) != -1 || dup3(h[i], 1000, 0) != -1)
			printf("dup of %d did not fail\n", h[i]), bad++;
		{
			struct stat st;
			struct statx sx;

			errno = 0;
			if (fstat(h[i], &st) != -1 || errno != EBADF ||
			    fstatat(h[i], "", &st, AT_EMPTY_PATH) != -1 || errno != EBADF ||
			    statx(h[i], "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx) != -1 || errno != EBADF)
				printf("fstat, fstatat or statx of %d did not fail with EBADF\n", h[i]), bad++;
			/* by number through syscall(), as libuv does */
			errno = 0;
			if (syscall(SYS_fstat, h[i], &st) != -1 || errno != EBADF ||
			    syscall(SYS_fcntl, h[i], F_GETFD) != -1 || errno != EBADF ||
			    syscall(SYS_close, h[i]) != -1 || errno != EBADF)
				printf("syscall(fstat, fcntl or close) of %d did not fail with EBADF\n", h[i]), bad++;
			/* cut short, the trace's mapping killed the program with SIGBUS */
			errno = 0;
			if (ftruncate(h[i], 0) != -1 || errno != EBADF ||
			    fallocate(h[i], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) != -1 ||
			    errno != EBADF || syscall(SYS_ftruncate, h[i], 0) != -1 || errno != EBADF)
				printf("ftruncate or fallocate of %d did not fail with EBADF\n", h[i]), bad++;
		}
		{
			/* by path: /dev/fd/N and /proc/.../fd/N, as not open: ENOENT */
			char p1[64], p2[64], p3[64];
			FILE *f;
			int o1, o2, o3, e1, e2, e3;

			snprintf(p1, sizeof(p1), "/dev/fd/%d", h[i]);
			snprintf(p2, sizeof(p2), "/proc/self/fd/%d", h[i]);
			snprintf(p3, sizeof(p3), "/proc/%d/fd/%d", (int)getpid(), h[i]);
			errno = 0;
			o1 = open(p1, O_RDONLY);
			e1 = errno;
			o2 = openat(AT_FDCWD, p2, O_RDWR | O_TRUNC);
			e2 = errno;
			f = fopen(p3, "r+");
			e3 = errno;
			o3 = creat(p1, 0600);
			if (o1 != -1 || e1 != ENOENT || o2 != -1 || e2 != ENOENT || f || e3 != ENOENT ||
			    o3 != -1 || errno != ENOENT)
				printf("open, openat, fopen or creat of %s did not fail with ENOENT\n", p1), bad++;
			/* truncate, freopen, and a thread's own directory */
			snprintf(p3, sizeof(p3), "/proc/self/task/%d/fd/%d", (int)syscall(SYS_gettid), h[i]);
			errno = 0;
			o1 = truncate(p1, 0);
			e1 = errno;
			f = fopen("/proc/self/stat", "r");
			errno = 0;
			if (f)
				f = freopen(p2, "r+", f);
			e2 = errno;
			errno = 0;
			o3 = open(p3, O_RDWR | O_TRUNC);
			if (o1 != -1 || e1 != ENOENT || f || e2 != ENOENT || o3 != -1 || errno != ENOENT)
				printf("truncate, freopen or open of %s did not fail with ENOENT\n", p3), bad++;
			/* the same paths spelled with "//" and "/./" */
			snprintf(p1, sizeof(p1), "//dev//fd/%d", h[i]);
			snprintf(p2, sizeof(p2), "/proc/./self/.//fd/%d", h[i]);
			errno = 0;
			o1 = open(p1, O_RDWR | O_TRUNC);
			e1 = errno;
			errno = 0;
			o2 = open(p2, O_RDWR | O_TRUNC);
			if (o1 != -1 || e1 != ENOENT || o2 != -1 || errno != ENOENT)
				printf("open of %s or %s did not fail with ENOENT\n", p1, p2), bad++;
		}
		errno = 0;
		if (close_range((unsigned)h[i], (unsigned)h[i], 0xff) != -1 || errno != EINVAL)
			printf("close_range(%d, %d, 0xff) did not fail with EINVAL\n", h[i], h[i]), bad++;
		if (pipe(p))
			return 2;
		if ((d = fcntl(p[0], F_DUPFD, h[i])) != h[i] || close(h[i]))
			printf("fcntl(F_DUPFD, %d) gave %d\n", h[i], d), bad++;
		if (dup2(p[1], h[i]) != h[i] || write(h[i], "x", 1) != 1 ||
		    read(p[0], &c, 1) != 1 || c != 'x' || fcntl(h[i], F_GETFD) < 0 || close(h[i]))
			printf("dup2 onto %d: the program's pipe did not get the byte\n", h[i]), bad++;
		close(p[0]);
		close(p[1]);
	}
	n = unseen_fds(h, 64);
	{
		/* a listing of /proc/self/fd leaves them out; fdopendir on one
		 * fails with EBADF; a stream closed behind memprov's back (libc's
		 * closedir by dlsym) leaves no mark on the next one at its address */
		int (*libc_closedir)(DIR *) =
			(int (*)(DIR *))dlsym(dlopen("libc.so.6", RTLD_NOW), "closedir");
		DIR *d = opendir("/proc/self/fd");
		struct dirent *e;
		int listed = 0, files = 0;
		char name[64];

		while (d && (e = readdir(d)))
			for (i = 0; i < n; i++)
				listed += atoi(e->d_name) == h[i];
		errno = 0;
		if (!d || listed || (n && (fdopendir(h[0]) || errno != EBADF)))
			printf("the listing showed %d of memprov's descriptors, or fdopendir did not fail with EBADF\n", listed), bad++;
		if (d && libc_closedir)
			libc_closedir(d);
		mkdir("hidden-names", 0700);
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "hidden-names/%d", h[i]);
			close(creat(name, 0600));
		}
		d = opendir("hidden-names");
		while (d && (e = readdir(d)))
			files += e->d_name[0] != '.';
		if (d)
			closedir(d);
		if (files != n)
			printf("a directory of files named as memprov's descriptors listed %d of %d\n", files, n), bad++;
	}
	if (close_range(3, ~0u, 0))
		printf("close_range failed: %s\n", strerror(errno)), bad++;
	closefrom(3);
	for (i = 0; i < n; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/fd/%d", h[i]);
		kept += access(path, F_OK) == 0;
	}
	keep_blocks(1001, 64);
	fprintf(stderr, "hidden=%d kept_open=%d\n", n, kept);
	printf("hidden numbers act as not open, a dup2 onto one is the program's; kept=1001\n");
	return bad ? 3 : 0;
}

static int mode_forkpipe(void)
{
	int p[2], n, status;
	char buf[16];
	struct stat pst, st;
	pid_t pid;

	close_from_3();
	if (pipe(p) || fstat(p[0], &pst))
		return 2;
	for (n = 3; n < 512; n++)
		if (n != p[0] && n != p[1])
			dup2(p[0], n);
	if (write(p[1], "pipe data", 9) != 9)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		free(malloc(100)); /* the child's trace starts */
		for (n = 3; n < 512; n++)
			if (n != p[1] && (fstat(n, &st) || st.st_ino != pst.st_ino)) {
				printf("child: descriptor %d is not the pipe any more\n", n);
				_exit(3);
			}
		n = (int)read(3, buf, sizeof(buf));
		printf("child read %d bytes\n", n);
		_exit(n == 9 ? 0 : 3);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

static int mode_stdio(void)
{
	int bad = 0;

	keep_blocks(1001, 64);
	errno = 0;
	if (write(1, "x\n", 2) >= 0 || errno != EBADF)
		bad = 1;
	errno = 0;
	if (write(2, "y\n", 2) >= 0 || errno != EBADF)
		bad = 1;
	return bad ? 3 : 0;
}

static int mode_fsize(long bytes)
{
	struct rlimit rl = { (rlim_t)bytes, (rlim_t)bytes };
	long i;

	if (setrlimit(RLIMIT_FSIZE, &rl))
		return 2;
	for (i = 0; i < 200000; i++)
		free(malloc(32 + (size_t)(i % 64)));
	printf("done\n");
	return 0;
}

static int mode_stderrfile(const char *path)
{
	struct rlimit rl = { 30000, 30000 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	long i;

	if (fd < 0 || dprintf(fd, "program data, fd %d\n", fd) < 0 || setrlimit(RLIMIT_FSIZE, &rl))
		return 2;
	for (i = 0; i < 200000; i++)
		free(malloc(32 + (size_t)(i % 64)));
	dprintf(fd, "program end\n");
	return close(fd) ? 2 : 0;
}

static void *cancel_loop(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < 300000; i++) {
		void *p = malloc(16 + (size_t)(i % 200));

		*(volatile char *)p = 1;
		free(p);
	}
	pthread_testcancel();
	return NULL;
}

static int mode_cancel(int n)
{
	pthread_t t[64];
	int i;

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, cancel_loop, NULL);
	for (i = 0; i < n; i++)
		pthread_cancel(t[i]);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("joined %d\n", n);
	return 0;
}

/* ---- signal handlers that map memory ---- */

#define MAX_KEPT 100000
static void *kept_maps[MAX_KEPT];
static long n_kept;              /* mappings kept: handlers may run at once */
static volatile int stop_threads;

static void on_alarm_map(int sig)
{
	int saved = errno;
	void *p;

	(void)sig;
	if (__atomic_load_n(&n_kept, __ATOMIC_RELAXED) < MAX_KEPT) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			long k = __atomic_fetch_add(&n_kept, 1, __ATOMIC_RELAXED);

			if (k < MAX_KEPT)
				kept_maps[k] = p;
		}
	}
	errno = saved;
}

static void *churn(void *arg)
{
	unsigned long i = 0;

	(void)arg;
	while (!stop_threads) {
		void *p = malloc(24 + i++ % 300);

		*(volatile char *)p = 1;
		free(p);
	}
	return NULL;
}

/* The kernel's signal return, for a handler installed without libc. */
extern void harm_restore_rt(void);
__asm__(".text\n"
	".align 16\n"
	"harm_restore_rt:\n"
	"	movq $15, %rax\n" /* rt_sigreturn */
	"	syscall\n");

struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

static int mode_sigmmap(int raw)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	pthread_t t[2];
	int i;

	if (raw) {
		struct kernel_sigaction ka = { on_alarm_map, 0x04000000 /* SA_RESTORER */ |
						SA_RESTART, harm_restore_rt, 0 };

		if (syscall(SYS_rt_sigaction, SIGALRM, &ka, NULL, 8))
			return 2;
	} else {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm_map;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
	}
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (__atomic_load_n(&n_kept, __ATOMIC_RELAXED) < 3000)
		usleep(1000);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	stop_threads = 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("kept=%ld\n", __atomic_load_n(&n_kept, __ATOMIC_RELAXED));
	return 0;
}

static sigjmp_buf jump_back;
static volatile sig_atomic_t jumps;
static volatile long maps;

static void on_alarm_jump(int sig)
{
	(void)sig;
	jumps++;
	siglongjmp(jump_back, 1);
}

static int mode_sigjmp(void)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm_jump;
	sigaction(SIGALRM, &sa, NULL);
	sigsetjmp(jump_back, 1);
	if (jumps < 2000) {
		setitimer(ITIMER_REAL, &it, NULL);
		for (;;) {
			void *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p != MAP_FAILED)
				munmap(p, 8192);
			maps++;
		}
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	keep_blocks(1000, 4000);
	printf("jumps=%d maps=%ld\n", (int)jumps, maps);
	return 0;
}

static int mode_quickexit(void)
{
	keep[0] = malloc(77);
	quick_exit(3);
}

/* fn(a, b) called with rsp 8 bytes off the 16-byte alignment at the call */
static void *call_misaligned(void *fn, unsigned long a, unsigned long b)
{
	void *ret;

	__asm__ volatile("mov %%rsp, %%rbx\n\t"
			 "and $-16, %%rsp\n\t"
			 "sub $8, %%rsp\n\t"
			 "call *%[fn]\n\t"
			 "mov %%rbx, %%rsp\n\t"
			 : "=a"(ret), "+D"(a), "+S"(b)
			 : [fn] "r"(fn)
			 : "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "memory", "cc", "xmm0",
			   "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
			   "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	return ret;
}

static int mode_misaligned(void)
{
	int i;

	for (i = 0; i < 200; i++) {
		void *p = call_misaligned((void *)malloc, 500, 0);

		p = call_misaligned((void *)realloc, (unsigned long)p, 1000);
		keep[i] = i % 2 ? p : call_misaligned((void *)calloc, 10, 100);
		if (i % 2 == 0)
			call_misaligned((void *)free, (unsigned long)p, 0);
		else
			call_misaligned((void *)free, (unsigned long)keep[i - 1], 0);
	}
	for (i = 0; i < 200; i++)
		if (i % 2)
			memset(keep[i], 1, 1000);
	printf("kept=100\n");
	return 0;
}

/* ---- a crash handler on a small alternate stack ---- */

static void on_overflow(int sig)
{
	static const char m[] = "overflow\n";

	(void)sig;
	if (write(2, m, sizeof(m) - 1) < 0)
		_exit(5);
	abort();
}

static __attribute__((noinline)) int recurse(int n)
{
	volatile char buf[512];

	buf[0] = (char)n;
	return n ? recurse(n + 1) + buf[0] : 0;
}

static int mode_crashabort(void)
{
	unsigned long min = getauxval(AT_MINSIGSTKSZ);
	struct sigaction sa;
	stack_t ss;

	ss.ss_size = (min > 2048 ? min : 2048) + 4096;
	ss.ss_sp = malloc(ss.ss_size);
	ss.ss_flags = 0;
	if (!ss.ss_sp || sigaltstack(&ss, NULL))
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_overflow;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL))
		return 2;
	return recurse(1);
}

/* ---- a vfork child resets handlers ---- */

static volatile sig_atomic_t n_hup, n_usr1;

static void on_hup(int sig)
{
	(void)sig;
	n_hup++;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	n_usr1++;
}

static int mode_vforksig(void)
{
	struct sigaction sa, dfl, now;
	static volatile int child_saw_dfl;
	int st;
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (signal(SIGHUP, on_hup) == SIG_ERR || sigaction(SIGUSR1, &sa, NULL))
		return 1;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	pid = vfork();
	if (pid == 0) {
		/* only async-signal-safe calls, in the parent's memory */
		signal(SIGHUP, SIG_DFL);
		sigaction(SIGUSR1, &dfl, NULL);
		child_saw_dfl = !sigaction(SIGUSR1, NULL, &now) && now.sa_handler == SIG_DFL &&
				signal(SIGHUP, SIG_DFL) == SIG_DFL;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	raise(SIGHUP);
	raise(SIGUSR1);
	printf("hup=%d usr1=%d child-saw-dfl=%d\n", (int)n_hup, (int)n_usr1, child_saw_dfl);
	return 0;
}

/*
 * Paths the kernel cannot read: each call fails with EFAULT as bare (the
 * hooks read a path's first bytes without faulting), and a path that
 * runs into an unreadable page (its bytes "/dev/fd/" there) too.
 */
extern int __open_2(const char *, int);

static int mode_badpath(void)
{
	char *pg = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *bad;
	struct stat st;
	FILE *f;
	int r[7], e[7], i;

	if (pg == MAP_FAILED || mprotect(pg + 4096, 4096, PROT_NONE))
		return 2;
	bad = pg + 4096;
	memcpy(bad - 8, "/dev/fd/", 8); /* no NUL before the unreadable page */
	errno = 0, r[0] = open(bad, O_RDONLY), e[0] = errno;
	errno = 0, r[1] = openat(AT_FDCWD, bad, O_RDWR | O_TRUNC), e[1] = errno;
	errno = 0, r[2] = creat(bad, 0600), e[2] = errno;
	errno = 0, r[3] = __open_2(bad, O_RDONLY), e[3] = errno;
	errno = 0, f = fopen(bad, "r"), r[4] = f ? 0 : -1, e[4] = errno;
	errno = 0, r[5] = open(bad - 8, O_RDONLY), e[5] = errno;
	errno = 0, r[6] = fstatat(AT_FDCWD, bad, &st, 0), e[6] = errno;
	for (i = 0; i < 7; i++)
		printf("call %d: %d %s\n", i, r[i], e[i] == EFAULT ? "EFAULT" : strerror(e[i]));
	return 0;
}

static int errno_at_main;

/* errno as main and a forked child find it: 0, as bare, whatever memprov did first */
static int mode_errno(void)
{
	pid_t pid;
	int st;

	printf("main %d\n", errno_at_main);
	errno = 0;
	pid = fork();
	if (pid == 0) {
		printf("child %d\n", errno);
		_exit(0);
	}
	st = errno;
	waitpid(pid, NULL, 0);
	printf("parent %d\n", st);
	return 0;
}

/*
 * A SIGCHLD handler that reaps and says so, a thread that sleeps, a
 * child reaped, then a normal exit: the handler runs once. memprov's
 * scan at exit stops the thread through a helper task that had a copy
 * of the program's handlers, and the kernel sends a tracer SIGCHLD at
 * each stop: the handler ran in the helper too, and its waitpid took the
 * stops the helper waited for.
 */
static volatile sig_atomic_t chld_runs;

static void on_chld(int sig)
{
	static const char line[] = "sigchld handler\n";
	int st, e = errno;

	(void)sig;
	chld_runs++;
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
	if (write(2, line, sizeof(line) - 1) < 0)
		st = 0;
	errno = e;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int mode_sigchld(void)
{
	struct sigaction sa;
	pthread_t t;
	pid_t pid;

	keep_blocks(3, 48);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGCHLD, &sa, NULL) || pthread_create(&t, NULL, sleeper, NULL))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		_exit(0);
	while (!chld_runs)
		usleep(1000);
	printf("handler runs before exit: %d\n", (int)chld_runs);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	errno_at_main = errno;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(m, "badpath"))
		return mode_badpath();
	if (!strcmp(m, "errno"))
		return mode_errno();
	if (!strcmp(m, "closefd") && argc == 3)
		return mode_closefd(argv[2]);
	if (!strcmp(m, "dup2over") && argc == 3)
		return mode_dup2over(argv[2]);
	if (!strcmp(m, "forkpipe"))
		return mode_forkpipe();
	if (!strcmp(m, "stdio"))
		return mode_stdio();
	if (!strcmp(m, "fsize") && argc == 3)
		return mode_fsize(atol(argv[2]));
	if (!strcmp(m, "stderrfile") && argc == 3)
		return mode_stderrfile(argv[2]);
	if (!strcmp(m, "cancel") && argc == 3)
		return mode_cancel(atoi(argv[2]));
	if (!strcmp(m, "sigmmap") && argc == 3)
		return mode_sigmmap(atoi(argv[2]));
	if (!strcmp(m, "sigjmp"))
		return mode_sigjmp();
	if (!strcmp(m, "quickexit"))
		return mode_quickexit();
	if (!strcmp(m, "misaligned"))
		return mode_misaligned();
	if (!strcmp(m, "vforksig"))
		return mode_vforksig();
	if (!strcmp(m, "crashabort"))
		return mode_crashabort();
	if (!strcmp(m, "hidden"))
		return mode_hidden();
	if (!strcmp(m, "sigchld"))
		return mode_sigchld();
	fprintf(stderr, "usage: harm closefd FILE | dup2over FILE | forkpipe | stdio |\n"
			"       fsize BYTES | stderrfile FILE | cancel T | sigmmap 0|1 | sigjmp | quickexit |\n"
			"       misaligned | vforksig | crashabort | hidden | sigchld\n");
	return 2;
}
