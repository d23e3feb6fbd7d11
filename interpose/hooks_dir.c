/*
 * hooks_dir.c - a listing of the process's own descriptors (/proc/self/fd,
 * /dev/fd) leaves memprov's out, as hooks_fd.c makes them act as not open.
 *
 * `ls /proc/self/fd`, Python's os.listdir and a test suite that checks
 * which descriptors a program left open saw memprov's three or four at
 * high numbers. A directory stream opened (opendir) on such a path, or
 * made (fdopendir) from a descriptor of procfs whose link names one, is
 * marked; readdir and readdir64 on a marked stream skip the entries that
 * name memprov's descriptors; closedir unmarks it. Every other stream
 * costs readdir one load, and fdopendir an fstat of the descriptor (a
 * link is read only for a directory of procfs). fdopendir on one of
 * memprov's descriptors fails with EBADF, as on a number not open. Not
 * covered: readdir_r, glibc's own listings (scandir, nftw read the
 * directory inside libc), getdents64 as a system call, and a path
 * relative to the working directory or through a link of the program's. In a sandboxed process and a vfork child nothing is
 * hidden (hooks_fd.c).
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls hooks_fd, libc_real and sys.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hooks_fd.h"
#include "libc_real.h"
#include "sys.h"

#define MARKED_MAX 16 /* streams on descriptor directories open at once */

/*
 * A marked stream, and the directory its descriptor was on: a stream
 * closed where closedir's hook never saw it (libc's closedir found with
 * dlsym on a handle) leaves its mark, and a stream malloc hands the same
 * address is told apart by its directory (fstat of its descriptor, for
 * marked addresses only), not hidden from.
 */
static struct {
	DIR *d;
	dev_t dev;
	ino_t ino;
} marked[MARKED_MAX];
static int n_marked; /* marks made and not yet removed: 0 is the fast path */

static void mark(DIR *d)
{
	struct stat st;
	int i;

	if (mp_syscall(SYS_fstat, dirfd(d), &st))
		return;
	for (i = 0; i < MARKED_MAX; i++) {
		DIR *none = NULL;

		if (__atomic_compare_exchange_n(&marked[i].d, &none, d, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			marked[i].dev = st.st_dev;
			__atomic_store_n(&marked[i].ino, st.st_ino, __ATOMIC_RELEASE);
			__atomic_add_fetch(&n_marked, 1, __ATOMIC_RELEASE);
			return;
		}
	}
	/* full: this listing shows memprov's descriptors */
}

static void unmark(DIR *d)
{
	int i;

	if (!d)
		return; /* closedir(NULL): an empty slot is no mark of it */
	for (i = 0; i < MARKED_MAX; i++) {
		DIR *was = d;

		if (__atomic_compare_exchange_n(&marked[i].d, &was, NULL, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			__atomic_sub_fetch(&n_marked, 1, __ATOMIC_RELEASE);
	}
}

/* d is a marked stream still on the directory it was marked on. */
static int is_marked(DIR *d)
{
	struct stat st;
	int i;

	for (i = 0; i < MARKED_MAX; i++) {
		if (__atomic_load_n(&marked[i].d, __ATOMIC_ACQUIRE) != d)
			continue;
		if (MP_UNLIKELY(mp_sandboxed) || mp_syscall(SYS_fstat, dirfd(d), &st))
			return 0;
		if (st.st_dev == marked[i].dev &&
		    st.st_ino == __atomic_load_n(&marked[i].ino, __ATOMIC_ACQUIRE))
			return 1;
		unmark(d); /* a stream of the program's own at a stale mark's address */
		return 0;
	}
	return 0;
}

/* An entry's name that is the number of one of memprov's descriptors. */
static int hidden_name(const char *name)
{
	long n = 0;
	int k;

	for (k = 0; name[k] >= '0' && name[k] <= '9' && k < 10; k++)
		n = n * 10 + (name[k] - '0');
	return k && !name[k] && n <= 0x7fffffff && mp_fd_hidden((int)n);
}

MP_EXPORT DIR *opendir(const char *path)
{
	DIR *d;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_opendir)) {
		errno = ENOSYS;
		return NULL;
	}
	d = mp_real_opendir(path);
	/* opened: the kernel read the path, so its first bytes can be read
	 * here; only /p..., /d... and //... are read again with care */
	if (d && !mp_sandboxed && path[0] == '/' &&
	    (path[1] == 'p' || path[1] == 'd' || path[1] == '/' || path[1] == '.') &&
	    MP_UNLIKELY(mp_fd_dir_named(path))) {
		int saved = errno;

		mark(d);
		errno = saved;
	}
	return d;
}

/*
 * A descriptor directory of procfs (a directory with procfs's device)
 * whose link names one: the link is read only for such a directory, not
 * for each of the directories find and fts walk with fdopendir.
 */
static int fd_dir_at(int fd)
{
	static dev_t proc_dev;
	struct stat st;
	char link[40], path[64];
	long n;

	/* sandboxed: no call of memprov's own (hooks_sandbox.c); only calls
	 * that hooks_sandbox.c's list has, which a filter was checked against */
	if (MP_UNLIKELY(mp_sandboxed) || mp_syscall(SYS_fstat, fd, &st) || !S_ISDIR(st.st_mode))
		return 0;
	if (!proc_dev) {
		struct stat ps;

		if (mp_syscall(SYS_newfstatat, AT_FDCWD, "/proc/self", &ps, 0))
			return 0;
		proc_dev = ps.st_dev;
	}
	if (st.st_dev != proc_dev)
		return 0;
	mp_strlcpy(link, "/proc/self/fd/", sizeof(link));
	mp_utoa(link + strlen(link), (uint64_t)fd);
	n = mp_syscall(SYS_readlink, link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = 0;
	return mp_fd_dir_named(path);
}

MP_EXPORT DIR *fdopendir(int fd)
{
	DIR *d;

	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_fdopendir)) {
		errno = ENOSYS;
		return NULL;
	}
	if (MP_UNLIKELY(mp_fd_hidden(fd))) {
		errno = EBADF; /* not open, to the program */
		return NULL;
	}
	d = mp_real_fdopendir(fd);
	if (d) {
		int saved = errno;

		if (MP_UNLIKELY(fd_dir_at(fd)))
			mark(d);
		errno = saved;
	}
	return d;
}

/* readdir and readdir64: the same, on their own entry types. */
#define MP_READDIR_HOOK(name, entry)                                             \
	MP_EXPORT entry *name(DIR *d)                                           \
	{                                                                       \
		entry *e;                                                       \
                                                                                \
		mp_hooks_need();                                                \
		if (MP_UNLIKELY(!mp_real_##name)) {                             \
			errno = ENOSYS;                                         \
			return NULL;                                            \
		}                                                               \
		if (MP_LIKELY(!__atomic_load_n(&n_marked, __ATOMIC_ACQUIRE)) || \
		    !is_marked(d))                                              \
			return mp_real_##name(d);                               \
		while ((e = mp_real_##name(d)) && hidden_name(e->d_name))      \
			;                                                       \
		return e;                                                       \
	}

MP_READDIR_HOOK(readdir, struct dirent)
MP_READDIR_HOOK(readdir64, struct dirent64)

MP_EXPORT int closedir(DIR *d)
{
	mp_hooks_need();
	if (MP_UNLIKELY(!mp_real_closedir)) {
		errno = ENOSYS;
		return -1;
	}
	if (MP_UNLIKELY(__atomic_load_n(&n_marked, __ATOMIC_ACQUIRE)))
		unmark(d);
	return mp_real_closedir(d);
}
