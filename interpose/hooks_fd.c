/*
 * hooks_fd.c - memprov's own descriptors are not the program's: to the
 * program their numbers are not open.
 *
 * memprov keeps a few descriptors (the trace, its ancestors' traces after
 * a fork, /proc/self/statm, the run index, big modules' files) at high
 * numbers, 7/8 of the descriptor limit (sys.c). A program may still name
 * one: bash's `exec 896>out.txt` asks fcntl(896, F_GETFD) whether the
 * number is taken, and finding it open, saved and restored it around the
 * redirection, so that `echo hello >&896` wrote into the trace and
 * out.txt stayed empty. So here:
 *
 *  - fcntl, dup and the old number of dup2/dup3 on one of memprov's
 *    descriptors fail with EBADF, as on a number not open; F_DUPFD
 *    takes the lowest number the program sees free, memprov's moved;
 *  - dup2/dup3 onto one first moves memprov's descriptor to another high
 *    number (sys.c's mp_fd_move), then do what the program asked;
 *  - close fails with EBADF and leaves it open; close_range and closefrom
 *    close the ranges around memprov's descriptors.
 *
 *  - fstat, fstatat and statx on one (or relative to one) fail with
 *    EBADF;
 *  - open, openat, creat, fopen, freopen and truncate (and their 64-bit
 *    and _FORTIFY_SOURCE forms) of /dev/fd/N or
 *    /proc/{self,thread-self,ID}/[task/TID/]fd/N, where ID is this
 *    process or one of its threads, fail with ENOENT (names_hidden),
 *    openat relative to one with EBADF.
 *
 * A number that is no longer memprov's file (closed behind its back with
 * a raw system call, then reused) is the program's (mp_fd_owner checks
 * device and inode). syscall() with these calls' numbers (libuv closes
 * and stats with it: Node.js) gets the same, through hooks_sandbox.c's
 * stub (mp_fd_syscall). The listing of /proc/self/fd leaves them out
 * (hooks_dir.c); "//" and "/./" in a path are read as the kernel reads
 * them. Not hidden: read, write and lseek, these calls made through dlsym
 * on a handle or as system call instructions (memprov then reopens its
 * trace by path, trace_file.c), glibc's own calls (fdopen checks the
 * number with an internal fcntl), opens by syscall(), and spellings of
 * the paths through ".." or a link. In a sandboxed process
 * (mp_sandboxed) and in a vfork child, which shares memprov's memory but
 * not its descriptor table, every call goes straight to libc. A call
 * made before libc's functions are found (while they are being looked
 * up) is made as the system call itself.
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls trace_file, libc_real and sys.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hooks_fd.h"
#include "libc_real.h"
#include "sys.h"
#include "trace_file.h"

/* Whether the calls here hide anything now (see the top). */
static int hiding(void)
{
	return !mp_sandboxed &&
	       !(mp_header && mp_header->pid != (int32_t)mp_syscall(SYS_getpid));
}

/*
 * The lowest of memprov's descriptors in [first, last], or -1; nothing
 * in a sandboxed process, where the check's fstat may be a system call
 * the program's filter kills on (mp_fd_owner and mp_fd_owned_next make
 * one for a number that may be memprov's).
 */
static int owned_next(unsigned first, unsigned last)
{
	return MP_UNLIKELY(mp_sandboxed) ? -1 : mp_fd_owned_next(first, last);
}

/* memprov's descriptor fd, when the program must not see it. */
static struct mp_owned_fd *hidden_owner(int fd)
{
	struct mp_owned_fd *o;

	if (MP_UNLIKELY(mp_sandboxed) || MP_LIKELY(!(o = mp_fd_owner(fd))))
		return NULL;
	return hiding() ? o : NULL;
}

static int not_open(void)
{
	errno = EBADF;
	return -1;
}

/*
 * F_DUPFD and F_DUPFD_CLOEXEC give the lowest number from arg up that is
 * not open: to the program, memprov's are not. While the one the kernel
 * gave lies above one of memprov's, that one moves away and the call is
 * made again.
 */
static int dupfd(int (*real)(int, int, ...), int fd, int cmd, long from)
{
	int r = real(fd, cmd, from), h, tries = 0;

	while (r > from && (h = owned_next((unsigned)from, (unsigned)r - 1)) >= 0 &&
	       hiding() && tries++ < 64) {
		struct mp_owned_fd *o = mp_fd_owner(h);
		int again;

		if (!o || mp_fd_move(o, h))
			break;
		again = real(fd, cmd, from);
		if (again < 0)
			break;
		mp_sys_close(r);
		r = again;
	}
	return r;
}

static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, va_list ap)
{
	void *arg = va_arg(ap, void *); /* every command's argument fits a pointer */

	if (MP_UNLIKELY(hidden_owner(fd)))
		return not_open();
	if (MP_UNLIKELY(!real))
		return (int)mp_syscall(SYS_fcntl, fd, cmd, arg); /* not resolved yet */
	if (MP_UNLIKELY(cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && (long)arg >= 0 &&
	    (long)arg <= INT_MAX)
		return dupfd(real, fd, cmd, (long)arg);
	return real(fd, cmd, arg);
}

MP_EXPORT MP_REALIGN int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	int r;

	mp_hooks_need();
	va_start(ap, cmd);
	r = fcntl_common(mp_real_fcntl, fd, cmd, ap);
	va_end(ap);
	return r;
}

MP_EXPORT MP_REALIGN int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	int r;

	mp_hooks_need();
	va_start(ap, cmd);
	r = fcntl_common(mp_real_fcntl64 ? mp_real_fcntl64 : mp_real_fcntl, fd, cmd, ap);
	va_end(ap);
	return r;
}

MP_EXPORT int dup(int fd)
{
	mp_hooks_need();
	if (MP_UNLIKELY(hidden_owner(fd)))
		return not_open();
	return mp_real_dup ? mp_real_dup(fd) : (int)mp_syscall(SYS_dup, fd);
}

/* Before newfd becomes the program's: memprov's descriptor there moves. */
static void make_room(int oldfd, int newfd)
{
	struct mp_owned_fd *o;

	if (MP_LIKELY(oldfd == newfd || !(o = hidden_owner(newfd))))
		return;
	/* the old number must be open, or dup2 fails and closes nothing */
	if (mp_syscall(SYS_fcntl, oldfd, F_GETFD) < 0)
		return;
	mp_fd_move(o, newfd);
}

MP_EXPORT int dup2(int oldfd, int newfd)
{
	mp_hooks_need();
	if (MP_UNLIKELY(hidden_owner(oldfd)))
		return not_open();
	make_room(oldfd, newfd);
	return mp_real_dup2 ? mp_real_dup2(oldfd, newfd) : (int)mp_syscall(SYS_dup2, oldfd, newfd);
}

MP_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	mp_hooks_need();
	if (MP_UNLIKELY(hidden_owner(oldfd)))
		return not_open();
	make_room(oldfd, newfd);
	return mp_real_dup3 ? mp_real_dup3(oldfd, newfd, flags) :
	       (int)mp_syscall(SYS_dup3, oldfd, newfd, flags);
}

/*
 * The path's first bytes, copied without faulting: a program may pass a
 * pointer the kernel would refuse (EFAULT, bare), or a string that runs
 * into an unreadable page; reading it in place killed such a program
 * with SIGSEGV. One process_vm_readv on this process (0.4 us here, an
 * open and close 1 us), raw: errno stays the program's. The number of
 * bytes copied into out (short where the string ends next to an
 * unreadable page), 0 for none.
 */
#define PATH_PREFIX 64 /* "/proc/PID/task/TID/fd/N", each number up to 10 digits */

static int path_prefix(const char *path, char *out)
{
	struct iovec l = { out, PATH_PREFIX }, r = { (void *)path, PATH_PREFIX };
	/* the header's pid, no getpid per open: where it is stale (a vfork
	 * child), hiding() refuses anything the bytes could say */
	long pid = mp_header ? mp_header->pid : mp_rsys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	long got = mp_rsys(SYS_process_vm_readv, pid, (long)&l, 1, (long)&r, 1, 0);

	return got > 0 ? (int)got : 0;
}

/*
 * fstat on one of memprov's numbers fails as on a number not open, and
 * so do fstatat and statx relative to one (an empty path with
 * AT_EMPTY_PATH, which is how glibc's own fstat asks, or a relative
 * path): a program that probes numbers with fstat (CPython's test of
 * pass_fds lists the open ones so) finds none of memprov's.
 */
static int stat_hidden(int dirfd, const char *path)
{
	char buf[PATH_PREFIX];

	if (dirfd < 0 || MP_LIKELY(!hidden_owner(dirfd)))
		return 0;
	/* the path read only now, and without faulting: unreadable, the call fails anyway */
	return !path || !path_prefix(path, buf) || buf[0] != '/';
}

MP_EXPORT int fstat(int fd, struct stat *st)
{
	mp_hooks_need();
	if (stat_hidden(fd, NULL))
		return not_open();
	return mp_real_fstat ? mp_real_fstat(fd, st) : mp_sys_fstat(fd, st);
}

MP_EXPORT int fstat64(int fd, struct stat64 *st)
{
	mp_hooks_need();
	if (stat_hidden(fd, NULL))
		return not_open();
	return mp_real_fstat64 ? mp_real_fstat64(fd, st) : mp_sys_fstat(fd, (struct stat *)st);
}

MP_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	mp_hooks_need();
	if (stat_hidden(dirfd, path))
		return not_open();
	return mp_real_fstatat ? mp_real_fstatat(dirfd, path, st, flags) :
	       (int)mp_syscall(SYS_newfstatat, dirfd, path, st, flags);
}

MP_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	mp_hooks_need();
	if (stat_hidden(dirfd, path))
		return not_open();
	return mp_real_fstatat64 ? mp_real_fstatat64(dirfd, path, st, flags) :
	       (int)mp_syscall(SYS_newfstatat, dirfd, path, st, flags);
}

MP_EXPORT int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *st)
{
	mp_hooks_need();
	if (stat_hidden(dirfd, path))
		return not_open();
	if (MP_UNLIKELY(!mp_real_statx)) {
		errno = ENOSYS;
		return -1;
	}
	return mp_real_statx(dirfd, path, flags, mask, st);
}

/*
 * Paths that name a descriptor: /dev/fd/N, /proc/self/fd/N,
 * /proc/thread-self/fd/N and /proc/PID/fd/N with this process's PID.
 * Opened, one of memprov's was its file: `echo hi > /dev/fd/896` in bash
 * truncated the mapped trace, and memprov's next record killed the
 * program with SIGBUS (bare: "No such file or directory"). Such a path
 * fails with ENOENT, as for a number not open. Other spellings
 * (/dev/./fd/N, a relative path from /proc/self/fd) are not checked.
 */
static const char *after(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return NULL;
	return s;
}

/* The decimal number that is the whole of p (at most 10 digits), or -1. */
static long number_at(const char *p)
{
	long n = 0;
	int digits = 0;

	while (*p >= '0' && *p <= '9' && digits < 10) {
		n = n * 10 + (*p++ - '0');
		digits++;
	}
	return digits && !*p ? n : -1;
}

/* The decimal number at *pp (at most 10 digits), *pp moved past it; -1 if none. */
static long number_from(const char **pp)
{
	const char *p = *pp;
	long n = 0;

	while (*p >= '0' && *p <= '9' && p - *pp < 10)
		n = n * 10 + (*p++ - '0');
	if (p == *pp)
		return -1;
	*pp = p;
	return n;
}

/* Is id this process or one of its threads (they share its descriptors)? */
static int one_of_ours(long id)
{
	char task[48];
	char *q = task + mp_strlcpy(task, "/proc/self/task/", sizeof(task));

	if (id == mp_rsys(SYS_getpid, 0, 0, 0, 0, 0, 0))
		return 1;
	mp_utoa(q, (uint64_t)id);
	return mp_rsys(SYS_faccessat, AT_FDCWD, (long)task, F_OK, 0, 0, 0) == 0;
}

/*
 * /dev/fd/N; /proc/self/, /proc/thread-self/ or /proc/ID/, then task/TID/
 * or not, then fd/N: N (*id the ID, -1 for none), or -1.
 */
static long fd_named(const char *buf, long *id)
{
	const char *p, *q;

	*id = -1;
	if ((p = after(buf, "/dev/fd/")))
		return number_at(p);
	if (!(p = after(buf, "/proc/")))
		return -1;
	*id = -1;
	if ((q = after(p, "self/")) || (q = after(p, "thread-self/"))) {
		p = q;
	} else if ((*id = number_from(&p)) < 0 || *p++ != '/') {
		return -1;
	}
	if ((q = after(p, "task/"))) {
		p = q;
		if (number_from(&p) < 0 || *p++ != '/')
			return -1;
	}
	return (p = after(p, "fd/")) ? number_at(p) : -1;
}

/*
 * The path as the kernel walks it where that changes nothing else: "//"
 * as "/" and "/./" as "/" ("//dev/fd/N", "/proc/self/./fd/N"), in place.
 */
static void squeeze(char *s)
{
	const char *p = s;
	char *o = s;

	while (*p) {
		if (p[0] == '/' && p[1] == '/') {
			p++;
		} else if (p[0] == '/' && p[1] == '.' && p[2] == '/') {
			p += 2;
		} else {
			*o++ = *p++;
		}
	}
	*o = 0;
}

/* path's first bytes into buf, read safely: 1 when they hold an absolute path whole. */
static int absolute_prefix(const char *path, char *buf)
{
	int got;

	return path && !mp_sandboxed && (got = path_prefix(path, buf)) &&
	       memchr(buf, 0, (size_t)got) && buf[0] == '/';
}

static int names_hidden(const char *path)
{
	char buf[PATH_PREFIX];
	long n, id;

	/* hiding() (a getpid) only for a path that names one: hidden_owner asks it */
	if (MP_LIKELY(!absolute_prefix(path, buf)))
		return 0;
	squeeze(buf);
	if (buf[1] != 'd' && buf[1] != 'p')
		return 0;
	n = fd_named(buf, &id);
	/* another process's descriptors are not ours to hide (a thread's are) */
	return n >= 0 && n <= INT_MAX && hidden_owner((int)n) != NULL && (id < 0 || one_of_ours(id));
}

static int no_entry(void)
{
	errno = ENOENT;
	return -1;
}

/* open's mode argument: there only with O_CREAT or O_TMPFILE. */
#define MODE_OF(flags, last)                                                   \
	mode_t mode = 0;                                                       \
	if (((flags)&O_CREAT) || ((flags)&O_TMPFILE) == O_TMPFILE) {           \
		va_list ap;                                                    \
		va_start(ap, last);                                            \
		mode = (mode_t)va_arg(ap, int);                                \
		va_end(ap);                                                    \
	}

/*
 * What every open hook asks first: -1 with errno set where path names
 * one of memprov's descriptors (ENOENT, as a number not open) or is
 * relative to one (EBADF), else 0 and the call goes ahead. Before libc's
 * functions are found, the call is made as the system call (sys_open).
 */
static int open_refused(int dirfd, const char *path)
{
	mp_hooks_need();
	if (MP_UNLIKELY(names_hidden(path)))
		return no_entry();
	if (MP_UNLIKELY(stat_hidden(dirfd, path)))
		return not_open();
	return 0;
}

static int sys_open(int dirfd, const char *path, int flags, mode_t mode)
{
	return (int)mp_syscall(SYS_openat, dirfd, path, flags, mode);
}

MP_EXPORT MP_REALIGN int open(const char *path, int flags, ...)
{
	MODE_OF(flags, flags);
	if (open_refused(AT_FDCWD, path))
		return -1;
	return mp_real_open ? mp_real_open(path, flags, mode) : sys_open(AT_FDCWD, path, flags, mode);
}

MP_EXPORT MP_REALIGN int open64(const char *path, int flags, ...)
{
	MODE_OF(flags, flags);
	if (open_refused(AT_FDCWD, path))
		return -1;
	return mp_real_open64 ? mp_real_open64(path, flags, mode) :
	       sys_open(AT_FDCWD, path, flags | O_LARGEFILE, mode);
}

MP_EXPORT MP_REALIGN int openat(int dirfd, const char *path, int flags, ...)
{
	MODE_OF(flags, flags);
	if (open_refused(dirfd, path))
		return -1;
	return mp_real_openat ? mp_real_openat(dirfd, path, flags, mode) :
	       sys_open(dirfd, path, flags, mode);
}

MP_EXPORT MP_REALIGN int openat64(int dirfd, const char *path, int flags, ...)
{
	MODE_OF(flags, flags);
	if (open_refused(dirfd, path))
		return -1;
	return mp_real_openat64 ? mp_real_openat64(dirfd, path, flags, mode) :
	       sys_open(dirfd, path, flags | O_LARGEFILE, mode);
}

/* The _FORTIFY_SOURCE entry points, without a mode. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

MP_EXPORT int __open_2(const char *path, int flags)
{
	if (open_refused(AT_FDCWD, path))
		return -1;
	return mp_real___open_2 ? mp_real___open_2(path, flags) : sys_open(AT_FDCWD, path, flags, 0);
}

MP_EXPORT int __open64_2(const char *path, int flags)
{
	if (open_refused(AT_FDCWD, path))
		return -1;
	return mp_real___open64_2 ? mp_real___open64_2(path, flags) :
	       sys_open(AT_FDCWD, path, flags | O_LARGEFILE, 0);
}

MP_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	if (open_refused(dirfd, path))
		return -1;
	return mp_real___openat_2 ? mp_real___openat_2(dirfd, path, flags) :
	       sys_open(dirfd, path, flags, 0);
}

MP_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	if (open_refused(dirfd, path))
		return -1;
	return mp_real___openat64_2 ? mp_real___openat64_2(dirfd, path, flags) :
	       sys_open(dirfd, path, flags | O_LARGEFILE, 0);
}

#define CREAT_FLAGS (O_CREAT | O_WRONLY | O_TRUNC)

MP_EXPORT int creat(const char *path, mode_t mode)
{
	if (open_refused(AT_FDCWD, path))
		return -1;
	return mp_real_creat ? mp_real_creat(path, mode) : sys_open(AT_FDCWD, path, CREAT_FLAGS, mode);
}

MP_EXPORT int creat64(const char *path, mode_t mode)
{
	if (open_refused(AT_FDCWD, path))
		return -1;
	return mp_real_creat64 ? mp_real_creat64(path, mode) :
	       sys_open(AT_FDCWD, path, CREAT_FLAGS | O_LARGEFILE, mode);
}

/*
 * fopen opens with libc's internal open, which the hooks above never see.
 * The callers resolve libc's functions before they read the pointer they
 * pass: a constructor that runs before memprov's (libselinux's, in every
 * coreutils program) would otherwise pass NULL and its fopen fail.
 */
static FILE *fopen_as_bare(FILE *(*real)(const char *, const char *), const char *path,
			   const char *how)
{
	if (open_refused(AT_FDCWD, path))
		return NULL;
	if (MP_UNLIKELY(!real)) {
		errno = ENOSYS; /* libc's not found yet */
		return NULL;
	}
	return real(path, how);
}

MP_EXPORT FILE *fopen(const char *path, const char *how)
{
	mp_hooks_need();
	return fopen_as_bare(mp_real_fopen, path, how);
}

MP_EXPORT FILE *fopen64(const char *path, const char *how)
{
	mp_hooks_need();
	return fopen_as_bare(mp_real_fopen64, path, how);
}

/*
 * freopen closes the stream, then opens path; a failed open leaves it
 * closed. For a path that names one of memprov's descriptors, libc's
 * freopen is handed "", which fails as such a path fails bare: ENOENT,
 * the stream closed. A NULL path (a new mode, same file) goes as it is.
 */
static FILE *freopen_as_bare(FILE *(*real)(const char *, const char *, FILE *), const char *path,
			     const char *how, FILE *stream)
{
	if (MP_UNLIKELY(!real)) {
		errno = ENOSYS;
		return NULL;
	}
	return real(MP_UNLIKELY(names_hidden(path)) ? "" : path, how, stream);
}

MP_EXPORT FILE *freopen(const char *path, const char *how, FILE *stream)
{
	mp_hooks_need();
	return freopen_as_bare(mp_real_freopen, path, how, stream);
}

MP_EXPORT FILE *freopen64(const char *path, const char *how, FILE *stream)
{
	mp_hooks_need();
	return freopen_as_bare(mp_real_freopen64, path, how, stream);
}

/* truncate by path: one of memprov's descriptors, through /dev/fd, is not there */
MP_EXPORT int truncate(const char *path, off_t len)
{
	if (open_refused(AT_FDCWD, path))
		return -1;
	return mp_real_truncate ? mp_real_truncate(path, len) :
	       (int)mp_syscall(SYS_truncate, path, len);
}

MP_EXPORT int truncate64(const char *path, off64_t len)
{
	if (open_refused(AT_FDCWD, path))
		return -1;
	return mp_real_truncate64 ? mp_real_truncate64(path, len) :
	       (int)mp_syscall(SYS_truncate, path, len);
}

/*
 * ftruncate and fallocate on one of memprov's numbers fail as on a number
 * not open: cut short, the mapped trace killed the program with SIGBUS at
 * memprov's next record (Python's os.ftruncate(4032, 0); bare: EBADF).
 * read, write and lseek still reach it (README).
 */
#define MP_ARGS(...) __VA_ARGS__
#define REFUSED_ON_HIDDEN(name, nr, params, args)                                \
	MP_EXPORT int name params                                                \
	{                                                                        \
		mp_hooks_need();                                                 \
		if (MP_UNLIKELY(hidden_owner(fd)))                               \
			return not_open();                                       \
		return mp_real_##name ? mp_real_##name args :                    \
		       (int)mp_syscall(nr, MP_ARGS args);                        \
	}

REFUSED_ON_HIDDEN(ftruncate, SYS_ftruncate, (int fd, off_t len), (fd, len))
REFUSED_ON_HIDDEN(ftruncate64, SYS_ftruncate, (int fd, off64_t len), (fd, len))
REFUSED_ON_HIDDEN(fallocate, SYS_fallocate, (int fd, int mode, off_t off, off_t len),
		  (fd, mode, off, len))
REFUSED_ON_HIDDEN(fallocate64, SYS_fallocate, (int fd, int mode, off64_t off, off64_t len),
		  (fd, mode, off, len))

MP_EXPORT int close(int fd)
{
	mp_hooks_need();
	if (MP_UNLIKELY(hidden_owner(fd)))
		return not_open();
	return mp_real_close ? mp_real_close(fd) : mp_sys_close(fd);
}

/* Close [first, last] but memprov's descriptors, one range at a time. */
static int close_around(unsigned first, unsigned last, int flags)
{
	while (first <= last) {
		int h = owned_next(first, last), r;

		if (h < 0)
			return mp_real_close_range(first, last, flags);
		if ((unsigned)h > first && (r = mp_real_close_range(first, (unsigned)h - 1, flags)))
			return r;
		if ((unsigned)h == last)
			return 0;
		first = (unsigned)h + 1;
	}
	return 0;
}

MP_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_close_range)) {
		errno = ENOSYS;
		return -1;
	}
	/* flags the kernel refuses: refused as a whole, nothing closed */
	if (MP_LIKELY(owned_next(first, last) < 0) || !hiding() ||
	    (flags & ~(CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE)))
		return mp_real_close_range(first, last, flags);
	return close_around(first, last, flags);
}

MP_EXPORT void closefrom(int lowfd)
{
	int saved = errno;

	mp_hooks_need();
	if (lowfd < 0)
		lowfd = 0;
	if (mp_real_close_range && owned_next((unsigned)lowfd, ~0u) >= 0 && hiding() &&
	    !close_around((unsigned)lowfd, ~0u, 0)) {
		errno = saved;
		return;
	}
	errno = saved;
	if (mp_real_closefrom)
		mp_real_closefrom(lowfd); /* memprov's descriptors go too: reopened by path */
}

/* fcntl as the system call, for dupfd when syscall() was asked. */
static int raw_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return (int)mp_syscall(SYS_fcntl, fd, cmd, arg);
}

/* A libc-style result (-1 and errno) as the system call's (-errno). */
static long raw_result(long r)
{
	return r < 0 ? -(long)errno : r;
}

int mp_fd_syscall_wants(long nr)
{
	return nr == SYS_close || nr == SYS_fstat || nr == SYS_newfstatat || nr == SYS_statx ||
	       nr == SYS_fcntl || nr == SYS_dup || nr == SYS_dup2 || nr == SYS_dup3 ||
	       nr == SYS_close_range || nr == SYS_ftruncate || nr == SYS_fallocate;
}

long mp_fd_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	int saved = errno;
	long r;

	switch (nr) {
	case SYS_close:
	case SYS_fstat:
	case SYS_dup:
	case SYS_ftruncate:
	case SYS_fallocate:
		if (hidden_owner((int)a1))
			return -EBADF;
		break;
	case SYS_fcntl:
		if (hidden_owner((int)a1))
			return -EBADF;
		if ((a2 == F_DUPFD || a2 == F_DUPFD_CLOEXEC) && a3 >= 0 && a3 <= INT_MAX) {
			r = raw_result(dupfd(raw_fcntl, (int)a1, (int)a2, a3));
			errno = saved;
			return r;
		}
		break;
	case SYS_newfstatat:
	case SYS_statx:
		if (stat_hidden((int)a1, (const char *)a2))
			return -EBADF;
		break;
	case SYS_dup2:
	case SYS_dup3:
		if (hidden_owner((int)a1))
			return -EBADF;
		make_room((int)a1, (int)a2);
		break;
	case SYS_close_range:
		if (mp_real_close_range && owned_next((unsigned)a1, (unsigned)a2) >= 0 &&
		    hiding() && !(a3 & ~(long)(CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE))) {
			r = raw_result(close_around((unsigned)a1, (unsigned)a2, (int)a3));
			errno = saved;
			return r;
		}
		break;
	}
	return mp_rsys(nr, a1, a2, a3, a4, a5, a6);
}

/* For hooks_dir.c: fd is one of memprov's, to be hidden from the program. */
int mp_fd_hidden(int fd)
{
	return hidden_owner(fd) != NULL;
}

/*
 * For hooks_dir.c: path names this process's own descriptor directory
 * (/dev/fd, /proc/self/fd, /proc/ID/[task/TID/]fd, trailing '/' or not),
 * read as the open hooks read a path: "…/fd/0" is one of its entries.
 */
int mp_fd_dir_named(const char *path)
{
	char buf[PATH_PREFIX + 2];
	long id;
	size_t n;

	if (!absolute_prefix(path, buf))
		return 0;
	n = strlen(buf);
	memcpy(buf + n, "/0", 3);
	squeeze(buf);
	return fd_named(buf, &id) == 0 && (id < 0 || one_of_ours(id));
}

