/*
 * sys.h - the bottom of libmemprov.so: the clock, raw system calls that
 * never pass through memprov's own hooks, warnings on stderr, string
 * helpers, and descriptors that memprov owns. Nothing here allocates,
 * uses stdio, takes a lock or calls another file of memprov.
 */
#ifndef MEMPROV_SYS_H
#define MEMPROV_SYS_H

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>

#define MP_HIDDEN __attribute__((visibility("hidden")))
#define MP_EXPORT __attribute__((visibility("default")))
/*
 * A function whose code the compiler gave aligned vector stores to its
 * stack frame: it aligns the stack itself. The program may call a hook
 * with the stack off the ABI's 16-byte alignment (hand-written assembly,
 * a JIT): glibc's functions tolerate it, so memprov must too. The hooks
 * themselves stay as they are (memprov's unwinder reads their frames as
 * plain [saved rbp, return address] frames); `make check-realign` lists
 * any function that needs this and lacks it.
 */
#define MP_REALIGN __attribute__((force_align_arg_pointer))
/*
 * A big zero-initialised table (a few KiB and up) goes after all the
 * small variables, in .lbss: a short process touches a page or two of
 * each table, and interleaved with them the 8 KiB of small variables
 * were spread over 14 pages, each a fault (1.2 us here) the first time
 * a process wrote to it.
 */
#define MP_BIG_BSS __attribute__((section(".lbss")))
#define MP_LIKELY(x) __builtin_expect(!!(x), 1)
#define MP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* CLOCK_MONOTONIC / CLOCK_REALTIME in nanoseconds (vDSO: no syscall);
 * mp_now_coarse: CLOCK_MONOTONIC_COARSE, the monotonic clock at the last
 * tick (never ahead of mp_now; 7 ns a read here against 24). */
uint64_t mp_now(void) MP_HIDDEN;
uint64_t mp_now_coarse(void) MP_HIDDEN;
uint64_t mp_now_real(void) MP_HIDDEN;

/*
 * A system call, raw: the result or -errno, errno untouched (a thread
 * with no thread-local storage of its own, such as stop_world's helper,
 * can make it).
 */
#if defined(__x86_64__)
static inline long mp_rsys(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
long mp_rsys(long n, long a, long b, long c, long d, long e, long f) MP_HIDDEN;
#endif

/*
 * memprov's own syscall() and prctl(): libc's semantics (-1 and errno on
 * failure), but never through the program's view of those functions,
 * which libmemprov.so hooks (hooks_sandbox.c), and never a cancellation
 * point. Every system call memprov makes by number goes through these.
 */
long mp_syscall(long nr, ...) MP_HIDDEN;
int mp_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4,
	     unsigned long a5) MP_HIDDEN;

/*
 * Set (never cleared, inherited by forked children) once the program has
 * asked for a seccomp filter (hooks_sandbox.c): from then on memprov
 * makes no system call the program would not have made, since the
 * filter may kill the process on any other.
 */
extern int mp_sandboxed MP_HIDDEN;

/*
 * fn(arg) on a stack of memprov's own (MP_OWN_STACK bytes, mapped for the
 * call, a guard page below it, touched only as deep as fn goes), every
 * signal but SIGSEGV and SIGBUS held off meanwhile (one taken on the
 * alternate stack would start at its top, over the caller's frame) and
 * those two let through (a fault of fn's reaches its handler): for
 * work in a signal handler, which may run on a small alternate stack.
 * -1 when fn was not called (no stack could be mapped; not x86-64).
 * mp_own_stack_lo and mp_own_stack_len say where the stack is while fn
 * runs (0 otherwise).
 */
#define MP_OWN_STACK (1u << 20)
int mp_call_on_own_stack(void (*fn)(void *), void *arg) MP_HIDDEN;
extern uintptr_t mp_own_stack_lo MP_HIDDEN;
extern size_t mp_own_stack_len MP_HIDDEN;

/* Raw system calls: never through memprov's own mmap/munmap hooks, and
 * never a cancellation point. */
void *mp_sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off) MP_HIDDEN;
int mp_sys_munmap(void *addr, size_t len) MP_HIDDEN;
int mp_sys_open(const char *path, int flags, int mode) MP_HIDDEN;
/* Up to n bytes at file offset off (retried on EINTR): how many, 0 on an
 * error. Inline, as mp_rsys: the unit tests link cfi.o alone. */
static inline size_t mp_sys_pread(int fd, uint64_t off, void *buf, size_t n)
{
	long got;
	int tries = 0;

	do /* the raw call: libc's pread is a cancellation point */
		got = mp_rsys(SYS_pread64, fd, (long)buf, (long)n, (long)off, 0, 0);
	while (got == -EINTR && ++tries < 8);
	return got > 0 ? (size_t)got : 0;
}
struct stat;
int mp_sys_fstat(int fd, struct stat *st) MP_HIDDEN;
int mp_sys_close(int fd) MP_HIDDEN;

/*
 * A signal mask as the kernel takes it: 8 bytes, where glibc's sigset_t
 * is 128. memprov blocks signals on paths that run on whatever stack the
 * program has left (a thread of 16 KiB that recursed to within 1 KiB of
 * its end and allocates: taking a new chunk of trace there grew the file
 * with three sigset_t and glibc's pthread_sigmask below it, and overflowed
 * the stack). Set and read with raw system calls (mp_rsys): errno is left
 * alone.
 */
typedef uint64_t mp_sigset;
#define MP_SIGBIT(sig) ((mp_sigset)1 << ((sig)-1))

/*
 * Hold every signal off around a call that takes a lock of the loader
 * (dl_iterate_phdr) or of memprov: a handler that interrupted it and left
 * by longjmp would leave the lock held. *old gets the mask to restore.
 * Only once the program has installed a handler of its own
 * (mp_handlers_seen, set by hooks_signal.c): before that no handler of
 * the program can run, memprov's own never leave by longjmp, and the two
 * system calls were most of what an unwind-cache miss cost (65 misses,
 * 142 us, in `ls -d /`). Returns whether it blocked; restore takes it.
 */
extern int mp_handlers_seen MP_HIDDEN;
int mp_signals_block(mp_sigset *old) MP_HIDDEN;
void mp_signals_restore(const mp_sigset *old, int blocked) MP_HIDDEN;

/*
 * The process's own /proc files. /proc/self is the main thread's
 * directory: once the main thread has left (pthread_exit from main while
 * other threads run on) its maps read empty, its statm all zeros, its
 * exe and pagemap do not open; /proc/thread-self (Linux 3.17) shows the
 * calling thread's view of the same memory. mp_proc_open opens
 * /proc/self/LEAF read-only, or /proc/thread-self/LEAF when thread is
 * set; mp_proc_open_any tries both in that order. mp_self_exe stores the
 * executable's path, NUL-terminated, and returns its length (0: unknown).
 * /proc/self comes first: before Linux 4.5 a thread's own maps call its
 * stack "[stack]", which the scan takes for the main thread's.
 */
int mp_proc_open(const char *leaf, int thread) MP_HIDDEN;
int mp_proc_open_any(const char *leaf) MP_HIDDEN;
size_t mp_self_exe(char *buf, size_t size) MP_HIDDEN;
/*
 * /proc kept open (an owned descriptor) before the program changes its
 * root: a chroot into a directory with no /proc inside (sshd's
 * privilege-separated child, a jail) left the scan at exit without the
 * memory map, and a gate then counted every live block as lost. From
 * then on the /proc files are opened relative to it; "self" is looked
 * up at each open, so a forked child opens its own. mp_proc_sysopen
 * opens PATH ("/proc/..."), raw (errno untouched): relative to the kept
 * /proc when there is one.
 */
void mp_proc_keep(void) MP_HIDDEN;
long mp_proc_sysopen(const char *path, int flags) MP_HIDDEN;
/* 1 once the process (or the parent it was forked from) changed its root. */
int mp_root_changed(void) MP_HIDDEN;

/*
 * Each line of /proc/self/maps (/proc/thread-self/maps when that of
 * /proc/self reads empty), in order, as its address range and the
 * rest of the line (permissions, offset, device, inode, path), until fn
 * returns nonzero; that value is returned (0: every line seen, or the
 * file could not be read). Raw system calls and a stack buffer: no malloc,
 * no stdio, no cancellation point. Lines longer than 4 KiB are cut.
 */
int mp_maps_each(int (*fn)(uintptr_t lo, uintptr_t hi, const char *rest, void *arg),
		 void *arg) MP_HIDDEN;

/* Whether the process runs under an address-space limit (RLIMIT_AS,
 * ulimit -v): tables then reserve less, each megabyte being one the
 * program cannot map. */
int mp_as_limited(void) MP_HIDDEN;

/*
 * Whether the descriptor limit (RLIMIT_NOFILE's soft limit) is under
 * MP_FDS_SCARCE: memprov then keeps open no descriptor but its trace's
 * (the RSS samples and the run index open theirs each time). A shell
 * moves a descriptor it saves to 10 or above: under `ulimit -n 12` with
 * `memprov run -d` dash's `exec 3>file` failed (Too many open files),
 * memprov's trace, statm and index taking 8 to 10 and its own save 11.
 */
#define MP_FDS_SCARCE 64
int mp_fds_scarce(void) MP_HIDDEN;

/*
 * A write of memprov's own past the program's file-size limit
 * (RLIMIT_FSIZE: sshd's pre-authentication child sets it to 0, and its
 * stderr may be a file) fails with EFBIG and raises SIGXFSZ, whose
 * default action kills the process. mp_xfsz_hold blocks SIGXFSZ in
 * this thread around such a write; mp_xfsz_release takes back the one
 * the write raised (efbig: it failed with EFBIG) unless it was pending
 * before, and restores the mask.
 */
struct mp_xfsz {
	mp_sigset old;
	int was_pending;
};
void mp_xfsz_hold(struct mp_xfsz *x) MP_HIDDEN;
void mp_xfsz_release(struct mp_xfsz *x, int efbig) MP_HIDDEN;

/*
 * One warning line "memprov: msg1msg2" on stderr, at most 10 per process,
 * and only while descriptor 2 is the file it was when mp_warn_init ran
 * (memprov's start-up): a program started with stderr closed may open a
 * file of its own as number 2, and a warning would land in it.
 */
void mp_warn_init(void) MP_HIDDEN;
void mp_warn(const char *msg1, const char *msg2) MP_HIDDEN;

/* Small string helpers that neither allocate nor use stdio. */
size_t mp_strlcpy(char *dst, const char *src, size_t size) MP_HIDDEN;
char *mp_utoa(char *buf, uint64_t v) MP_HIDDEN;  /* returns end, NUL-terminated */
/*
 * Comparisons that never call libc: they run where a libc string
 * function may be another object's not yet working (a sanitizer's
 * interceptor, before its runtime has set itself up: elfsym.c).
 */
int mp_streq(const char *a, const char *b) MP_HIDDEN;
int mp_starts(const char *s, const char *prefix) MP_HIDDEN; /* s begins with prefix */
const char *mp_basename(const char *path) MP_HIDDEN;        /* after the last '/' */

/*
 * A descriptor memprov opened for itself, moved above the numbers a
 * program uses (never 0-2) and remembered by device and inode, so that
 * memprov can tell whether the number still names its file: a program may
 * close it and be given the number again for a file of its own.
 */
struct mp_owned_fd {
	int fd;            /* -1: none */
	dev_t dev;
	ino_t ino;
};

/* Take fd (just opened by memprov) as o's, moved to a high number and
 * close-on-exec. 0, or -1 with fd closed. */
int mp_fd_adopt(struct mp_owned_fd *o, int fd) MP_HIDDEN;
/* The same without hiding it (o on the stack: see mp_fd_hide). */
int mp_fd_take(struct mp_owned_fd *o, int fd) MP_HIDDEN;
/* 1 when o->fd still names the file memprov opened. */
int mp_fd_ours(const struct mp_owned_fd *o) MP_HIDDEN;
/* Close o->fd only if it is still memprov's; forget it either way. */
void mp_fd_release(struct mp_owned_fd *o) MP_HIDDEN;

/*
 * Owned descriptors are hidden from the program (hooks_fd.c): to it their
 * numbers are not open, and a dup2 onto one moves memprov's descriptor
 * out of the way first. mp_fd_adopt registers o; mp_fd_hide registers an
 * owned descriptor taken over another way (o in static storage, at most
 * 32 of them). mp_fd_owner: the struct whose descriptor fd is, or NULL.
 * mp_fd_move: give o's descriptor fd (its current number) a new high
 * number and close fd; 0, or -1 (no descriptor left).
 */
void mp_fd_hide(struct mp_owned_fd *o) MP_HIDDEN;
struct mp_owned_fd *mp_fd_owner(int fd) MP_HIDDEN;
int mp_fd_move(struct mp_owned_fd *o, int fd) MP_HIDDEN;
/* The lowest of memprov's descriptors in [first, last], or -1. */
int mp_fd_owned_next(unsigned first, unsigned last) MP_HIDDEN;

#endif /* MEMPROV_SYS_H */
