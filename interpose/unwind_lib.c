/*
 * unwind_lib.c - libunwind, for the stacks unwind.c's walk cannot take
 * (rules that are not simple, MEMPROV_FAST_UNWIND=0, the unwind check)
 * and for the program's registers at an exit no entry stub saw.
 *
 * It is opened the first time one of those needs it, not linked: linked,
 * libunwind, liblzma and libgcc_s (listed first so that libunwind's
 * _Unwind_* exception functions did not shadow libgcc_s's in the
 * program) were loaded into every process, and loading them was a sixth
 * of what memprov cost a short one (`ls`: 160 of 900 microseconds),
 * while common programs never need them (ls, git, sqlite3, python3: no
 * stack the walk could not take). Opened with RTLD_LOCAL, its symbols
 * never join the program's scope; the loader's allocations for it are
 * in the program's heap, untraced, in a process that needs it only.
 *
 * Opening it waits for the loader's lock, which an allocation bare never
 * does. With a second thread, that can deadlock: thread B holds the
 * program's mutex M and allocates, thread A is inside dlopen (the lock
 * held) running a library constructor that takes M. So it is opened
 * lazily only while the process has one thread (glibc's
 * __libc_single_threaded), and not while the loader is in the middle of
 * mapping an object (this very thread may be inside dlopen); and
 * init.c's pthread_create opens it just before the first thread starts,
 * when no other thread can hold that lock. A process that got threads
 * some other way (glibc's own helper threads) goes without it: a stack
 * memprov's walk cannot take then has no native frames. Two threads
 * never open it at once.
 *
 * libunwind checks that an address is readable by writing a byte from it
 * into a pipe of its own, which it makes on first use and keeps. That
 * pipe takes the lowest free descriptor numbers: in a program started
 * with stdout or stderr closed it became fd 1 or 2 (the program's writes,
 * which should fail with EBADF, went into it), and a program that closes
 * every descriptor and opens its own file could later receive a byte of
 * libunwind's into that file.
 *
 * So libunwind gets no pipe: its GOT entries for pipe2, read, write and
 * syscall (Debian's libunwind writes with syscall(SYS_write, ...)) point
 * here, from the moment it is opened, before its first use. pipe2 hands
 * out two numbers no descriptor can have; a read of the first says
 * "empty"; a write to the second checks the bytes are readable with
 * process_vm_readv on this process (which fails with EFAULT where the
 * write would have) and writes nothing. Every other descriptor goes to
 * the system as before.
 *
 * Layer: 2 walk (docs/ARCHITECTURE.md): calls libc_real, elfsym, got and
 * sys (and the loader's dl_iterate_phdr).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <link.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "elfsym.h"
#include "got.h"
#include "libc_real.h"
#include "unwind_lib.h"

/* Above any descriptor the kernel hands out (its limit is below 2^30). */
#define FAKE_READ 0x7ffffff0
#define FAKE_WRITE 0x7ffffff1

static int fake_pipe2(int fds[2], int flags)
{
	(void)flags;
	fds[0] = FAKE_READ;
	fds[1] = FAKE_WRITE;
	return 0;
}

/* A read of the pipe that never is: empty. */
static ssize_t empty(void)
{
	errno = EAGAIN;
	return -1;
}

/* A write of n bytes at buf to the pipe that never is: n when they can
 * be read, else -1 with errno EFAULT (as the write would have failed). */
static ssize_t readable(const void *buf, size_t n)
{
	char copy[64];
	struct iovec local, remote;
	ssize_t got;

	if (n > sizeof(copy))
		n = sizeof(copy);
	local.iov_base = copy;
	local.iov_len = n;
	remote.iov_base = (void *)buf;
	remote.iov_len = n;
	got = mp_syscall(SYS_process_vm_readv, (pid_t)mp_syscall(SYS_gettid), &local, 1UL, &remote,
		      1UL, 0UL);
	if (got == (ssize_t)n)
		return got;
	if (got < 0 && errno != EFAULT)
		return (ssize_t)n; /* not allowed here (seccomp): trust libunwind's mincore */
	errno = EFAULT;
	return -1;
}

static ssize_t fake_read(int fd, void *buf, size_t n)
{
	return fd == FAKE_READ ? empty() : mp_syscall(SYS_read, fd, buf, n);
}

static ssize_t fake_write(int fd, const void *buf, size_t n)
{
	return fd == FAKE_WRITE ? readable(buf, n) : mp_syscall(SYS_write, fd, buf, n);
}

static long fake_syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_read && a[0] == FAKE_READ)
		return empty();
	if (nr == SYS_write && a[0] == FAKE_WRITE)
		return readable((const void *)a[1], (size_t)a[2]);
	return mp_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static int redirect_in(struct dl_phdr_info *info, size_t size, void *arg)
{
	static const struct mp_got_fn fns[] = {
		{ "pipe2", (void *)fake_pipe2 },
		{ "read", (void *)fake_read },
		{ "write", (void *)fake_write },
		{ "syscall", (void *)fake_syscall },
	};
	uintptr_t at = (uintptr_t)arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && at >= lo && at - lo < ph->p_memsz) {
			mp_got_redirect(info, fns, (int)(sizeof(fns) / sizeof(fns[0])));
			return 1;
		}
	}
	return 0;
}

#define LIBUNWIND "libunwind.so.8"
#define STR(x) #x
#define NAME(x) STR(x) /* the symbol behind libunwind.h's macro */

enum { UNW_NOT_TRIED, UNW_OPENING, UNW_OPEN, UNW_FAILED };
static int unw_state;
static struct mp_unw unw;

/*
 * unw_backtrace reads a thread-local variable of libunwind's, a dynamic
 * one: the first call on each thread has glibc allocate libunwind's
 * thread-local block, with the malloc that comes first in the program's
 * scope. Where that is libmemprov's, the hook serves it from memprov's
 * arena (writer.h, in_unw). Where it is the program's own (an allocator
 * built into the executable, as rustc's jemalloc, or preloaded ahead of
 * memprov), memprov may be inside that allocator with its lock held (its
 * mmap hook, as jemalloc makes an arena) and the allocator, called
 * again, waits for good. There, stacks are walked with unw_step, which
 * touches no such variable (its rule cache is global by default).
 */
MP_REALIGN static int step_backtrace(void **buf, int size)
{
	unw_context_t uc;
	unw_cursor_t cur;
	unw_word_t ip;
	int n = 0;

	if (unw.getcontext(&uc) < 0 || unw.init_local(&cur, &uc) < 0)
		return 0;
	while (n < size && unw.step(&cur) > 0) {
		if (unw.get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		buf[n++] = (void *)(uintptr_t)ip;
	}
	return n;
}

/* Whether the program's malloc (the loader's too) is another than memprov's. */
static int malloc_not_ours(void)
{
	void *m = mp_real_dlsym(RTLD_DEFAULT, "malloc");
	Dl_info theirs, ours;

	return m && dladdr(m, &theirs) && dladdr((void *)step_backtrace, &ours) &&
	       theirs.dli_fbase != ours.dli_fbase;
}

static int open_unw(void)
{
	void *h = mp_real_dlopen ? mp_real_dlopen(LIBUNWIND, RTLD_NOW | RTLD_LOCAL) : NULL;

	if (!h)
		return -1;
	unw.backtrace = (int (*)(void **, int))mp_real_dlsym(h, "unw_backtrace");
	unw.getcontext = (int (*)(unw_context_t *))mp_real_dlsym(h, NAME(unw_tdep_getcontext));
	unw.init_local =
		(int (*)(unw_cursor_t *, unw_context_t *))mp_real_dlsym(h, NAME(unw_init_local));
	unw.get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))mp_real_dlsym(
		h, NAME(unw_get_reg));
	unw.step = (int (*)(unw_cursor_t *))mp_real_dlsym(h, NAME(unw_step));
	if (!unw.backtrace || !unw.getcontext || !unw.init_local || !unw.get_reg || !unw.step) {
		if (mp_real_dlclose)
			mp_real_dlclose(h); /* another libunwind: not ours to keep */
		return -1;
	}
	/* before libunwind's first call: it makes its pipe then */
	dl_iterate_phdr(redirect_in, (void *)(uintptr_t)unw.backtrace);
	if (malloc_not_ours())
		unw.backtrace = step_backtrace;
	return 0;
}

int mp_unw_is_open(void)
{
	return __atomic_load_n(&unw_state, __ATOMIC_ACQUIRE) == UNW_OPEN;
}

/* Said once, when a stack needed libunwind and it could not be opened. */
static void warn_failed(void)
{
	static int warned;

	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		mp_warn("cannot open " LIBUNWIND, ": a stack memprov's own walk cannot take "
			"is recorded without native frames");
}

/* quiet: opened ahead of need (mp_unw_prepare), nothing said on failure */
static const struct mp_unw *unw_get(int quiet)
{
	int st = __atomic_load_n(&unw_state, __ATOMIC_ACQUIRE);

	if (st == UNW_OPEN)
		return &unw;
	if (st == UNW_FAILED && !quiet)
		warn_failed();
	if (st != UNW_NOT_TRIED || !__libc_single_threaded || _r_debug.r_state != RT_CONSISTENT ||
	    !__atomic_compare_exchange_n(&unw_state, &st, UNW_OPENING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return NULL;
	if (open_unw()) {
		__atomic_store_n(&unw_state, UNW_FAILED, __ATOMIC_RELEASE);
		if (!quiet)
			warn_failed();
		return NULL;
	}
	__atomic_store_n(&unw_state, UNW_OPEN, __ATOMIC_RELEASE);
	return &unw;
}

const struct mp_unw *mp_unw_get(void)
{
	return unw_get(0);
}

void mp_unw_prepare(void)
{
	(void)unw_get(1);
}
