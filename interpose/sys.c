/*
 * sys.c - the bottom layer of libmemprov.so (see sys.h): clock, raw
 * system calls, warnings, string helpers and memprov's own descriptors.
 * It calls no other file of memprov.
 *
 * Layer: 0 base (docs/ARCHITECTURE.md): calls no other file of memprov.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"

#define MAX_WARNINGS 10

static uint32_t warn_count;

#if !defined(__x86_64__)
long mp_rsys(long n, long a, long b, long c, long d, long e, long f)
{
	long r = syscall(n, a, b, c, d, e, f);

	return r == -1 ? -errno : r;
}
#endif

int mp_sandboxed;

/* As glibc's own syscall() does: six arguments taken, the unused ones ignored by the kernel. */
long mp_syscall(long nr, ...)
{
	long a[6], r;
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	r = mp_rsys(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

int mp_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
	return (int)mp_syscall(SYS_prctl, (long)option, a2, a3, a4, a5);
}

uint64_t mp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t mp_now_coarse(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t mp_now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void *mp_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)mp_syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int mp_sys_munmap(void *addr, size_t len)
{
	return (int)mp_syscall(SYS_munmap, addr, len);
}

int mp_sys_open(const char *path, int flags, int mode)
{
	return (int)mp_syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static struct mp_owned_fd proc_root = { .fd = -1 };
static int root_changed;

int mp_root_changed(void)
{
	return __atomic_load_n(&root_changed, __ATOMIC_RELAXED);
}

void mp_proc_keep(void)
{
	__atomic_store_n(&root_changed, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&proc_root.fd, __ATOMIC_ACQUIRE) < 0 || !mp_fd_ours(&proc_root))
		mp_fd_adopt(&proc_root, mp_sys_open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
}

long mp_proc_sysopen(const char *path, int flags)
{
	int fd = __atomic_load_n(&proc_root.fd, __ATOMIC_ACQUIRE);
	struct stat st;

	/* still memprov's, checked raw: stop_world's helper has no errno of its own */
	if (fd >= 0 && !mp_rsys(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) &&
	    st.st_dev == proc_root.dev && st.st_ino == proc_root.ino)
		return mp_rsys(SYS_openat, fd, (long)(path + 6), flags, 0, 0, 0);
	return mp_rsys(SYS_openat, AT_FDCWD, (long)path, flags, 0, 0, 0);
}

int mp_proc_open(const char *leaf, int thread)
{
	char path[64];
	size_t n = mp_strlcpy(path, thread ? "/proc/thread-self/" : "/proc/self/", sizeof(path));
	long fd;

	mp_strlcpy(path + n, leaf, sizeof(path) - n);
	fd = mp_proc_sysopen(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errno = (int)-fd;
		return -1;
	}
	return (int)fd;
}

int mp_proc_open_any(const char *leaf)
{
	int fd = mp_proc_open(leaf, 0);

	return fd >= 0 ? fd : mp_proc_open(leaf, 1);
}

size_t mp_self_exe(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0)
		n = readlink("/proc/thread-self/exe", buf, size - 1);
	n = n > 0 ? n : 0;
	buf[n] = 0;
	return (size_t)n;
}

int mp_sys_fstat(int fd, struct stat *st)
{
	return (int)mp_syscall(SYS_fstat, fd, st);
}

int mp_sys_close(int fd)
{
	return (int)mp_syscall(SYS_close, fd);
}

size_t mp_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size) {
		size_t c = n < size - 1 ? n : size - 1;
		memcpy(dst, src, c);
		dst[c] = 0;
	}
	return n;
}

int mp_streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

int mp_starts(const char *s, const char *prefix)
{
	while (*prefix && *s == *prefix)
		s++, prefix++;
	return !*prefix;
}

const char *mp_basename(const char *path)
{
	const char *base = path;

	for (; *path; path++)
		if (*path == '/')
			base = path + 1;
	return base;
}

char *mp_utoa(char *buf, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*buf++ = tmp[--n];
	*buf = 0;
	return buf;
}

int mp_handlers_seen;

int mp_as_limited(void)
{
	struct rlimit rl;

	return !getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY;
}

int mp_signals_block(mp_sigset *old)
{
	/* all but glibc's own two (cancellation, setxid), as pthread_sigmask */
	mp_sigset all = ~(MP_SIGBIT(32) | MP_SIGBIT(33));

	if (!__atomic_load_n(&mp_handlers_seen, __ATOMIC_RELAXED))
		return 0;
	mp_rsys(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)old, sizeof(all), 0, 0);
	return 1;
}

void mp_signals_restore(const mp_sigset *old, int blocked)
{
	if (blocked)
		mp_rsys(SYS_rt_sigprocmask, SIG_SETMASK, (long)old, 0, sizeof(*old), 0, 0);
}

static uintptr_t parse_hex(const char **s)
{
	uintptr_t v = 0;

	for (;; (*s)++) {
		char ch = **s;

		if (ch >= '0' && ch <= '9')
			v = v << 4 | (uintptr_t)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v = v << 4 | (uintptr_t)(ch - 'a' + 10);
		else
			return v;
	}
}

/* One line of /proc/self/maps: "lo-hi rest". */
static int maps_line(const char *s, int (*fn)(uintptr_t, uintptr_t, const char *, void *),
		     void *arg)
{
	uintptr_t lo = parse_hex(&s), hi;

	if (*s++ != '-')
		return 0;
	hi = parse_hex(&s);
	return fn(lo, hi, s, arg);
}

/*
 * The lines of the map open on fd (its first n bytes read into buf), each
 * handed to fn until it returns non-zero; fd is closed. A line whole in
 * buf is parsed there; one cut by the end of a read is put together in
 * line (cut at its size). A byte at a time, the copy cost more than the
 * kernel's formatting of the map: 100,000 instructions of a short
 * process's start-up (callgrind, ls).
 */
static int maps_lines(long fd, long n, char *buf, size_t bufsz, char *line, size_t linesz,
		      int (*fn)(uintptr_t, uintptr_t, const char *, void *), void *arg)
{
	size_t ll = 0;
	int r = 0;

	while (!r && n > 0) {
		char *p = buf, *end = buf + n;

		while (!r && p < end) {
			char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = (size_t)((nl ? nl : end) - p), room = linesz - 1 - ll;

			if (nl && !ll) {
				*nl = 0;
				r = maps_line(p, fn, arg);
			} else {
				memcpy(line + ll, p, len < room ? len : room);
				ll += len < room ? len : room;
				if (!nl)
					break; /* the rest comes with the next read */
				line[ll] = 0;
				ll = 0;
				r = maps_line(line, fn, arg);
			}
			p = nl + 1;
		}
		if (!r)
			n = mp_syscall(SYS_read, fd, buf, bufsz);
	}
	mp_syscall(SYS_close, fd);
	return r;
}

/*
 * The buffers of a read of the map are mapped for it, not on the stack:
 * this runs at a thread's first allocation, and a thread with a 16 KiB
 * stack (PTHREAD_STACK_MIN) had no room left for 8 KiB of them (it died
 * of SIGSEGV here). Where no page can be mapped (an address-space limit),
 * small ones on the stack; a line longer than the line buffer is cut.
 */
#define MAPS_READ 4096
#define MAPS_LINE 4096
#define MAPS_SMALL 256

int mp_maps_each(int (*fn)(uintptr_t lo, uintptr_t hi, const char *rest, void *arg),
		 void *arg)
{
	char small[2 * MAPS_SMALL], *buf, *line, *mem;
	size_t bufsz = MAPS_READ, linesz = MAPS_LINE;
	long fd, n = 0;
	int r = 0, thread;

	mem = mp_sys_mmap(NULL, MAPS_READ + MAPS_LINE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		mem = NULL;
		buf = small;
		line = small + MAPS_SMALL;
		bufsz = linesz = MAPS_SMALL;
	} else {
		buf = mem;
		line = mem + MAPS_READ;
	}
	for (thread = 0; thread < 2; thread++) {
		fd = mp_proc_open("maps", thread);
		if (fd < 0)
			continue;
		n = mp_syscall(SYS_read, fd, buf, bufsz);
		if (n > 0)
			break;
		mp_syscall(SYS_close, fd); /* empty: the main thread has left */
	}
	if (thread < 2)
		r = maps_lines(fd, n, buf, bufsz, line, linesz, fn, arg);
	if (mem)
		mp_sys_munmap(mem, MAPS_READ + MAPS_LINE);
	return r;
}

/* Whether SIGXFSZ is pending for this thread or the process. */
static int xfsz_pending(void)
{
	mp_sigset pend = 0;

	return !mp_rsys(SYS_rt_sigpending, (long)&pend, sizeof(pend), 0, 0, 0, 0) &&
	       (pend & MP_SIGBIT(SIGXFSZ));
}

MP_REALIGN void mp_xfsz_hold(struct mp_xfsz *x)
{
	mp_sigset xfsz = MP_SIGBIT(SIGXFSZ);

	x->old = 0;
	mp_rsys(SYS_rt_sigprocmask, SIG_BLOCK, (long)&xfsz, (long)&x->old, sizeof(xfsz), 0, 0);
	x->was_pending = xfsz_pending();
}

MP_REALIGN void mp_xfsz_release(struct mp_xfsz *x, int efbig)
{
	mp_sigset xfsz = MP_SIGBIT(SIGXFSZ);

	if (efbig && !x->was_pending && xfsz_pending()) {
		struct timespec zero = { 0, 0 };

		mp_rsys(SYS_rt_sigtimedwait, (long)&xfsz, 0, (long)&zero, sizeof(xfsz), 0, 0);
	}
	mp_rsys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&x->old, 0, sizeof(x->old), 0, 0);
}

/* To stderr, under the program's file-size limit too (mp_xfsz_hold). */
static void write_all(const char *buf, size_t len)
{
	struct mp_xfsz x;
	int efbig = 0;

	mp_xfsz_hold(&x);
	while (len) {
		ssize_t n = write(2, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		efbig = n < 0 && errno == EFBIG;
		if (n <= 0)
			break;
		buf += n;
		len -= (size_t)n;
	}
	mp_xfsz_release(&x, efbig);
}

/* What descriptor 2 was at start-up (mp_warn_init): 0 not known yet, 1 open, -1 closed. */
static int err_state;
static dev_t err_dev;
static ino_t err_ino;

void mp_warn_init(void)
{
	struct stat st;

	if (mp_sys_fstat(2, &st)) {
		err_state = -1;
		return;
	}
	err_dev = st.st_dev;
	err_ino = st.st_ino;
	err_state = 1;
}

/* Is descriptor 2 still the stderr memprov started with? */
static int stderr_same(void)
{
	struct stat st;

	if (!err_state)
		return 1; /* a warning before start-up's check */
	return err_state > 0 && !mp_sys_fstat(2, &st) && st.st_dev == err_dev && st.st_ino == err_ino;
}

void mp_warn(const char *msg1, const char *msg2)
{
	char buf[512];
	size_t n;
	int saved = errno;

	if (!stderr_same() ||
	    __atomic_fetch_add(&warn_count, 1, __ATOMIC_RELAXED) >= MAX_WARNINGS) {
		errno = saved;
		return;
	}
	n = mp_strlcpy(buf, "memprov: ", sizeof(buf));
	if (msg1 && n < sizeof(buf))
		n += mp_strlcpy(buf + n, msg1, sizeof(buf) - n);
	if (msg2 && n < sizeof(buf))
		n += mp_strlcpy(buf + n, msg2, sizeof(buf) - n);
	if (n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	write_all(buf, n);
	errno = saved;
}

int mp_fds_scarce(void)
{
	struct rlimit rl;

	return !getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	       rl.rlim_cur < MP_FDS_SCARCE;
}

/*
 * The lowest number memprov's descriptors take: high in the soft limit
 * (896 of the usual 1024), where programs that open files one by one
 * rarely go; at most 4032 when the limit is huge.
 */
static int high_fd_floor(void)
{
	struct rlimit rl;
	rlim_t cur;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 10;
	cur = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 4608 ? 4608 : rl.rlim_cur;
	/* under 24: the top 4 (at 16, 12-15), not 3 up, where every number
	 * a program then opened came out shifted by memprov's */
	if (cur < 24)
		return cur > 7 ? (int)cur - 4 : 3;
	return (int)(cur - cur / 8);
}

/*
 * The descriptors hidden from the program (hooks_fd.c asks): every owned
 * descriptor's struct, registered once (static storage: never removed),
 * and the lowest number any of them had, below which no lookup is needed.
 */
#define HIDDEN_MAX 32
static struct mp_owned_fd *hidden[HIDDEN_MAX];
static int hidden_min = INT_MAX;

static void hidden_lower(int fd)
{
	int m = __atomic_load_n(&hidden_min, __ATOMIC_RELAXED);

	while (fd < m && !__atomic_compare_exchange_n(&hidden_min, &m, fd, 1, __ATOMIC_RELEASE,
						      __ATOMIC_RELAXED))
		;
}

void mp_fd_hide(struct mp_owned_fd *o)
{
	int i;

	for (i = 0; i < HIDDEN_MAX; i++) {
		struct mp_owned_fd *cur = __atomic_load_n(&hidden[i], __ATOMIC_ACQUIRE);

		if (cur == o)
			break;
		if (!cur && __atomic_compare_exchange_n(&hidden[i], &cur, o, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
			break;
		if (cur == o)
			break;
	}
	if (o->fd >= 0)
		hidden_lower(o->fd);
}

/* The struct of memprov's lowest descriptor in [first, last], or NULL. */
static struct mp_owned_fd *owned_in(unsigned first, unsigned last)
{
	struct mp_owned_fd *best = NULL;
	int i, best_fd = -1;

	if (last < (unsigned)__atomic_load_n(&hidden_min, __ATOMIC_ACQUIRE))
		return NULL;
	for (i = 0; i < HIDDEN_MAX; i++) {
		struct mp_owned_fd *o = __atomic_load_n(&hidden[i], __ATOMIC_ACQUIRE);
		int fd;

		if (!o)
			break;
		fd = __atomic_load_n(&o->fd, __ATOMIC_ACQUIRE);
		if (fd >= 0 && (unsigned)fd >= first && (unsigned)fd <= last &&
		    (best_fd < 0 || fd < best_fd) && mp_fd_ours(o)) {
			best = o;
			best_fd = fd;
		}
	}
	return best;
}

struct mp_owned_fd *mp_fd_owner(int fd)
{
	return fd < 0 ? NULL : owned_in((unsigned)fd, (unsigned)fd);
}

int mp_fd_owned_next(unsigned first, unsigned last)
{
	struct mp_owned_fd *o = owned_in(first, last);

	return o ? __atomic_load_n(&o->fd, __ATOMIC_ACQUIRE) : -1;
}

/* A new number for fd, high and close-on-exec (never 0-2); -1. */
static int dup_high(int fd)
{
	long hi = mp_syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, high_fd_floor());

	if (hi < 0)
		hi = mp_syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3);
	return (int)hi;
}

int mp_fd_move(struct mp_owned_fd *o, int fd)
{
	int saved = errno, hi = dup_high(fd), expected = fd;

	if (hi < 0) {
		errno = saved;
		return -1;
	}
	hidden_lower(hi);
	if (!__atomic_compare_exchange_n(&o->fd, &expected, hi, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		mp_sys_close(hi); /* another thread moved it first */
		errno = saved;
		return 0;
	}
	mp_sys_close(fd);
	errno = saved;
	return 0;
}

MP_REALIGN int mp_fd_take(struct mp_owned_fd *o, int fd)
{
	struct stat st;
	int hi;
	int saved = errno;

	if (fd < 0)
		return -1;
	hi = dup_high(fd);
	mp_sys_close(fd);
	if (hi < 0 || mp_sys_fstat(hi, &st)) {
		if (hi >= 0)
			mp_sys_close(hi);
		errno = saved;
		return -1;
	}
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	__atomic_store_n(&o->fd, hi, __ATOMIC_RELEASE);
	errno = saved;
	return 0;
}

int mp_fd_adopt(struct mp_owned_fd *o, int fd)
{
	if (mp_fd_take(o, fd))
		return -1;
	mp_fd_hide(o);
	return 0;
}

int mp_fd_ours(const struct mp_owned_fd *o)
{
	struct stat st;
	int fd = __atomic_load_n(&o->fd, __ATOMIC_ACQUIRE);
	int saved = errno, ok;

	if (fd < 0)
		return 0;
	ok = !mp_sys_fstat(fd, &st) && st.st_dev == o->dev && st.st_ino == o->ino;
	errno = saved;
	return ok;
}

void mp_fd_release(struct mp_owned_fd *o)
{
	if (mp_fd_ours(o))
		mp_sys_close(o->fd);
	o->fd = -1;
}

uintptr_t mp_own_stack_lo;
size_t mp_own_stack_len;
static int own_stack_busy;

#if defined(__x86_64__)
/* fn(arg) with the stack pointer at top (16-aligned), then back. */
static void __attribute__((noinline)) call_at(void *top, void (*fn)(void *), void *arg)
{
	__asm__ volatile("movq %%rsp, %%rbx\n\t"
			 "movq %0, %%rsp\n\t"
			 "movq %2, %%rdi\n\t"
			 "callq *%1\n\t"
			 "movq %%rbx, %%rsp"
			 :
			 : "r"(top), "r"(fn), "r"(arg)
			 : "rbx", "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
			   "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
			   "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory",
			   "cc");
}

int mp_call_on_own_stack(void (*fn)(void *), void *arg)
{
	mp_sigset all = ~(mp_sigset)0 & ~(MP_SIGBIT(SIGSEGV) | MP_SIGBIT(SIGBUS)), old = 0;
	size_t len = MP_OWN_STACK + 4096;
	void *m;

	if (__atomic_exchange_n(&own_stack_busy, 1, __ATOMIC_ACQ_REL))
		return -1; /* in use: a death in another thread at the same time */
	m = mp_sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (m == MAP_FAILED) {
		__atomic_store_n(&own_stack_busy, 0, __ATOMIC_RELEASE);
		return -1;
	}
	mp_rsys(SYS_mprotect, (long)m, 4096, PROT_NONE, 0, 0, 0); /* the guard */
	/* set, not added to: a fault's handler runs with SIGSEGV blocked,
	 * and a fault of the work must still reach its safety net */
	mp_rsys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, sizeof(old), 0, 0);
	mp_own_stack_lo = (uintptr_t)m;
	mp_own_stack_len = len;
	call_at((char *)m + len, fn, arg);
	mp_own_stack_len = 0;
	mp_own_stack_lo = 0;
	mp_rsys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, sizeof(old), 0, 0);
	mp_sys_munmap(m, len);
	__atomic_store_n(&own_stack_busy, 0, __ATOMIC_RELEASE);
	return 0;
}
#else
int mp_call_on_own_stack(void (*fn)(void *), void *arg)
{
	(void)fn;
	(void)arg;
	return -1;
}
#endif
