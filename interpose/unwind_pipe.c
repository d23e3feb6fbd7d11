/*
 * unwind_pipe.c - libunwind checks that an address is readable by
 * writing a byte from it into a pipe of its own, which it makes on first
 * use and keeps. That pipe takes the lowest free descriptor numbers: in
 * a program started with stdout or stderr closed it became fd 1 or 2
 * (the program's writes, which should fail with EBADF, went into it), and
 * a program that closes every descriptor and opens its own file could
 * later receive a byte of libunwind's into that file.
 *
 * So libunwind gets no pipe: its GOT entries for pipe2, read, write and
 * syscall (Debian's libunwind writes with syscall(SYS_write, ...)) point
 * here. pipe2 hands out two numbers no descriptor can have; a read
 * of the first says "empty"; a write to the second checks the bytes are
 * readable with process_vm_readv on this process (which fails with
 * EFAULT where the write would have) and writes nothing. Every other
 * descriptor goes to the system as before.
 *
 * Layer: 2 walk (docs/ARCHITECTURE.md): calls got and sys (and the
 * loader's dl_iterate_phdr).
 */
#include <errno.h>
#include <stdarg.h>
#include <link.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <libunwind.h>

#include "got.h"
#include "unwind_pipe.h"

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

void mp_unwind_pipe_init(void)
{
	static int done;

	if (!done) {
		done = 1;
		dl_iterate_phdr(redirect_in, (void *)(uintptr_t)unw_backtrace);
	}
}
