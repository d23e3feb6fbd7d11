/*
 * trace_file.c - the trace file: its name, creation and header, the
 * segments it is mapped in, the chunks handed to writers, and how tracing
 * ends (see memprov_trace.h).
 *
 * Layer: 2 storage and walk (docs/ARCHITECTURE.md): calls config and sys.
 *
 * The file is mapped MAP_SHARED in segments of at most 8 MiB, never as
 * one big mapping, so programs under an address-space limit still run. A
 * segment's disk space is reserved with fallocate before any chunk in it
 * is handed out: a full disk or a file-size limit stops tracing, it never
 * raises SIGBUS or SIGXFSZ. Chunks are taken with one atomic add on
 * header->next_chunk; the thread that first needs a segment maps it, with
 * no lock (a compare-and-swap publishes it).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "config.h"
#include "trace_file.h"

/*
 * Segments grow so that a short-lived process costs little disk: chunks
 * 0-3 are segment 0, then segments of 4, 8, 16, 32, 64 chunks, then
 * 128 chunks (8 MiB) each.
 */
#define SEG_MAX_CHUNKS 128u
#define SEG_SMALL 6u   /* segments 0..5 cover chunks 0..127 */
#define MAX_SEGS 65536 /* about 512 GiB of trace */

volatile int mp_tracing;
int mp_trace_ok;                        /* open and not stopped */
struct mp_file_header *mp_header;

/*
 * The trace's descriptor lives above the numbers programs use (never 0-2)
 * and is checked against the file's device and inode before each use: a
 * program may close it (a close loop, closefrom, dup2 over it) and get its
 * number back for a file of its own. Then the trace is reopened by its
 * absolute path, if that still names the same file, or tracing stops.
 */
static struct mp_owned_fd trace_fd = { -1, 0, 0 };
static char trace_path[4096];           /* absolute */
static int stopped;
static void *segs[MAX_SEGS];            /* published with release (CAS) */

void mp_stop(enum mp_stop why, const char *msg)
{
	if (mp_atomic_xchg_acq_rel_int(&stopped, 1))
		return;
	mp_trace_ok = 0;
	mp_tracing = 0;
	if (mp_header) {
		mp_header->stop_reason = why;
		mp_strlcpy(mp_header->stop_message, msg, sizeof(mp_header->stop_message));
		mp_header->end_mono_ns = mp_now();
		__atomic_store_n(&mp_header->state, MP_STATE_STOPPED, __ATOMIC_RELEASE);
	}
	mp_warn(msg, ": tracing stopped; the program goes on");
}

/*
 * A hook reached while this thread was recording (guard REC): a signal
 * handler memprov could not wrap. Counted in the header, never dropped
 * silently; atomic adds on the mapped header are signal-safe.
 */
void mp_count_skipped(enum mp_func fn)
{
	struct mp_file_header *h = mp_header;

	if (!h)
		return;
	__atomic_fetch_add(&h->skipped_total, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->skipped[(unsigned)fn < MP_FN_MAX ? fn : 0], 1,
			   __ATOMIC_RELAXED);
}

void mp_trace_killed(int sig)
{
	struct mp_file_header *h = mp_header;

	/* a vfork child shares our memory, not our trace */
	if (!h || stopped || h->pid != (int32_t)syscall(SYS_getpid) ||
	    h->state != MP_STATE_RUNNING)
		return;
	h->term_signal = sig;
	h->end_mono_ns = mp_now();
	__atomic_store_n(&h->state, MP_STATE_KILLED, __ATOMIC_RELEASE);
}

void mp_trace_set_state(enum mp_state st, int32_t status)
{
	if (!mp_header || stopped)
		return;
	if (st == MP_STATE_EXITED)
		mp_header->exit_status = status;
	mp_header->end_mono_ns = st == MP_STATE_RUNNING ? 0 : mp_now();
	__atomic_store_n(&mp_header->state, st, __ATOMIC_RELEASE);
}

/* Which segment holds chunk idx, its first chunk and its length in chunks. */
static uint64_t seg_of(uint64_t idx, uint64_t *first, uint64_t *n)
{
	uint64_t s;

	if (idx < 4) {
		*first = 0;
		*n = 4;
		return 0;
	}
	if (idx < SEG_MAX_CHUNKS) {
		s = (uint64_t)(63 - __builtin_clzll(idx)) - 1;
		*first = *n = 1ull << (s + 1);
		return s;
	}
	s = SEG_SMALL + (idx - SEG_MAX_CHUNKS) / SEG_MAX_CHUNKS;
	*first = SEG_MAX_CHUNKS * (s - SEG_SMALL + 1);
	*n = SEG_MAX_CHUNKS;
	return s;
}

/*
 * Grow the trace file to off + len. Never raises a signal in the program:
 * a file-size limit (RLIMIT_FSIZE) is checked first and stops tracing,
 * and SIGXFSZ is held blocked around the call (a limit lowered meanwhile)
 * and taken back if the call raised it. The raw system call is not a
 * cancellation point. 0, or -1 when tracing stopped.
 */
MP_REALIGN static int grow_file(off_t off, off_t len)
{
	struct rlimit rl;
	sigset_t xfsz, old, pend;
	int err, was_pending;

	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)off + (uint64_t)len > (uint64_t)rl.rlim_cur) {
		mp_stop(MP_STOP_FSIZE, "the trace reached the file-size limit (ulimit -f)");
		return -1;
	}
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &xfsz, &old);
	was_pending = !sigpending(&pend) && sigismember(&pend, SIGXFSZ);
	err = syscall(SYS_fallocate, trace_fd.fd, 0, off, len) ? errno : 0;
	if (err == EOPNOTSUPP) {
		/* glibc's emulation writes, a cancellation point */
		int cs;

		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
		err = posix_fallocate(trace_fd.fd, off, len);
		pthread_setcancelstate(cs, NULL);
	}
	if (err == EFBIG && !was_pending && !sigpending(&pend) &&
	    sigismember(&pend, SIGXFSZ)) {
		struct timespec zero = { 0, 0 };

		syscall(SYS_rt_sigtimedwait, &xfsz, NULL, &zero, _NSIG / 8);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		return 0;
	mp_stop(err == EFBIG ? MP_STOP_FSIZE : MP_STOP_NOSPACE,
		err == EFBIG ? "the trace reached the file-size limit (ulimit -f)" :
		err == ENOSPC || err == EDQUOT ? "cannot reserve trace space (disk or quota full)" :
		"cannot reserve trace space (fallocate failed)");
	return -1;
}

/*
 * The trace's descriptor, checked before use: when the program has closed
 * it (and perhaps reused the number), reopen the trace by its absolute
 * path, if that still names the same file, or stop tracing. 0 when
 * trace_fd.fd may be used.
 */
MP_REALIGN static int trace_fd_check(void)
{
	struct mp_owned_fd mine = trace_fd;
	int old = trace_fd.fd, fd;

	if (mp_fd_ours(&trace_fd))
		return 0;
	fd = mp_sys_open(trace_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd >= 0 && mp_fd_adopt(&mine, fd) == 0) {
		if (mine.dev == trace_fd.dev && mine.ino == trace_fd.ino) {
			if (__atomic_compare_exchange_n(&trace_fd.fd, &old, mine.fd, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return 0;
			mp_sys_close(mine.fd); /* another thread reopened it first */
			return mp_fd_ours(&trace_fd) ? 0 : -1;
		}
		mp_sys_close(mine.fd);
	}
	mp_stop(MP_STOP_FILE, "the program closed the trace file's descriptor and "
		"the file cannot be reopened");
	return -1;
}

/* The trace file, checked, for reading it back (reach.c); -1 when not open. */
int mp_trace_fd(void)
{
	return mp_trace_ok && !trace_fd_check() ? trace_fd.fd : -1;
}

/*
 * Reserve and map a segment. No lock: threads that need the same segment
 * at once may each map it; take_chunk keeps one mapping. Nothing here is
 * a cancellation point.
 */
static void *map_segment(uint64_t first, uint64_t nchunks)
{
	off_t off = (off_t)(MP_HEADER_SIZE + first * MP_DEFAULT_CHUNK_SIZE);
	size_t len = (size_t)(nchunks * MP_DEFAULT_CHUNK_SIZE);
	void *p;

	if (trace_fd_check() || grow_file(off, (off_t)len))
		return NULL;
	p = mp_sys_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, trace_fd.fd, off);
	if (p == MAP_FAILED) {
		mp_stop(MP_STOP_MAP, "cannot map the trace file (address space limit?)");
		return NULL;
	}
	return p;
}

/* Length in bytes of segment si. */
static size_t seg_len(uint64_t si)
{
	return (size_t)((si == 0 ? 4 : si < SEG_SMALL ? 1ull << (si + 1) : SEG_MAX_CHUNKS) *
			MP_DEFAULT_CHUNK_SIZE);
}

/* A chunk for a writer, mapped and never used before; NULL when tracing
 * stopped. The writer fills its head. */
struct mp_chunk_head *mp_chunk_reserve(void)
{
	uint64_t idx, si, first, n;
	char *seg;

	if (!mp_trace_ok)
		return NULL;
	idx = mp_atomic_add_relaxed_u64(&mp_header->next_chunk, 1);
	si = seg_of(idx, &first, &n);
	if (MP_UNLIKELY(si >= MAX_SEGS)) {
		mp_stop(MP_STOP_INTERNAL, "trace file reached its size limit (512 GiB)");
		return NULL;
	}
	seg = mp_atomic_load_acquire_ptr(&segs[si]);
	if (MP_UNLIKELY(!seg)) {
		void *expected = NULL;

		seg = map_segment(first, n);
		if (!seg)
			return NULL;
		if (!__atomic_compare_exchange_n(&segs[si], &expected, seg, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			mp_sys_munmap(seg, seg_len(si));
			seg = expected;
		}
	}
	return (struct mp_chunk_head *)(seg + (idx - first) * MP_DEFAULT_CHUNK_SIZE);
}

/* Expand %p (pid) and %% in the MEMPROV_OUTPUT pattern; 0 if too long. */
static int expand_name(char *out, size_t size, const char *pat)
{
	char num[24];
	size_t n = 0;

	for (; *pat; pat++) {
		const char *add = NULL;
		char one[2] = { *pat, 0 };

		if (pat[0] == '%' && pat[1] == 'p') {
			mp_utoa(num, (uint64_t)getpid());
			add = num;
			pat++;
		} else if (pat[0] == '%' && pat[1] == '%') {
			add = "%";
			pat++;
		} else {
			add = one;
		}
		if (n + strlen(add) >= size)
			return 0;
		n += mp_strlcpy(out + n, add, size - n);
	}
	return 1;
}

/* NAME.trace -> NAME.<k>.trace; other names get .<k> appended. */
static int numbered_name(char *out, size_t size, const char *base, unsigned k)
{
	size_t len = strlen(base), stem = len;
	char num[24];

	if (len >= 6 && !strcmp(base + len - 6, ".trace"))
		stem = len - 6;
	mp_utoa(num, k);
	if (len + strlen(num) + 2 >= size)
		return 0;
	memcpy(out, base, stem);
	out[stem] = '.';
	mp_strlcpy(out + stem + 1, num, size - stem - 1);
	mp_strlcpy(out + strlen(out), base + stem, size - strlen(out));
	return 1;
}

/*
 * Where the trace goes: MEMPROV_OUTPUT with %p expanded; a directory
 * (an existing one, or a name ending in '/') gets memprov.<pid>.trace
 * inside it. 0, or -1 after a warning.
 */
static int output_name(char *out, size_t size)
{
	struct stat st;
	size_t n;

	if (!expand_name(out, size, mp_config.output)) {
		mp_warn("MEMPROV_OUTPUT is too long after expanding %p", NULL);
		return -1;
	}
	n = strlen(out);
	if (n && (out[n - 1] == '/' || (!stat(out, &st) && S_ISDIR(st.st_mode)))) {
		char dir[sizeof(mp_config.output)];

		mp_strlcpy(dir, out, sizeof(dir));
		if (n + 32 >= size || n + 32 >= sizeof(dir)) {
			mp_warn("MEMPROV_OUTPUT is too long after expanding %p", NULL);
			return -1;
		}
		if (out[n - 1] != '/')
			dir[n++] = '/';
		dir[n] = 0;
		mp_strlcpy(dir + n, "memprov.%p.trace", sizeof(dir) - n);
		if (!expand_name(out, size, dir))
			return -1;
	}
	return 0;
}

/* The absolute form of name in trace_path (the program may chdir). */
static void remember_path(const char *name)
{
	size_t n = 0;

	trace_path[0] = 0;
	if (name[0] != '/') {
		if (!getcwd(trace_path, sizeof(trace_path) - 2))
			trace_path[0] = 0;
		n = strlen(trace_path);
		if (n && trace_path[n - 1] != '/')
			trace_path[n++] = '/';
	}
	if (n + strlen(name) >= sizeof(trace_path)) {
		trace_path[0] = 0; /* cannot be reopened: tracing stops instead */
		return;
	}
	mp_strlcpy(trace_path + n, name, sizeof(trace_path) - n);
}

/*
 * "memprov: WHAT NAME: REASON": the system's reason from glibc's table
 * (strerrordesc_np: no translation, no allocation).
 */
static void warn_errno(const char *what, const char *name, int err)
{
	char buf[sizeof(mp_config.output) + 160];
	const char *why = strerrordesc_np(err);
	size_t n = mp_strlcpy(buf, name, sizeof(buf));

	if (n < sizeof(buf))
		n += mp_strlcpy(buf + n, ": ", sizeof(buf) - n);
	if (n < sizeof(buf))
		mp_strlcpy(buf + n, why ? why : "unknown error", sizeof(buf) - n);
	mp_warn(what, buf);
}

/*
 * Create the trace file under a name not yet taken: NAME, then NAME.1,
 * NAME.2, ... A symbolic link is never followed; a name that exists and
 * is not a regular file or a link (a device such as /dev/full, a FIFO, a
 * socket) is refused rather than numbered around.
 */
static int create_file(char *name, size_t size)
{
	char base[sizeof(mp_config.output) + 32];
	struct stat st;
	unsigned k;
	int fd;

	if (output_name(base, sizeof(base)))
		return -1;
	if (!lstat(base, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		mp_warn("MEMPROV_OUTPUT names something that is not a regular file: ", base);
		return -1;
	}
	mp_strlcpy(name, base, size);
	for (k = 1; k < 10000; k++) {
		fd = mp_sys_open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST) {
			if (!numbered_name(name, size, base, k))
				break;
			continue;
		}
		if (fd < 0)
			warn_errno("cannot create the trace file ", name, errno);
		return fd;
	}
	mp_warn("cannot create the trace file (every numbered name is taken): ", base);
	return -1;
}

static void read_cmdline(char *dst, size_t size)
{
	int fd = mp_sys_open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC, 0);
	ssize_t n = 0, i;

	dst[0] = 0;
	if (fd < 0)
		return;
	while (n < (ssize_t)size - 1) {
		ssize_t r = read(fd, dst + n, size - 1 - (size_t)n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
	}
	mp_sys_close(fd);
	while (n > 0 && dst[n - 1] == 0)
		n--;
	for (i = 0; i < n; i++)
		if (!dst[i])
			dst[i] = ' ';
	dst[n] = 0;
}

static void fill_header(struct mp_file_header *h)
{
	ssize_t n;

	h->version = MP_VERSION;
	h->header_size = MP_HEADER_SIZE;
	h->chunk_size = MP_DEFAULT_CHUNK_SIZE;
	h->flags = (mp_config.heap ? MP_HF_HEAP : 0) | (mp_config.mmap ? MP_HF_MMAP : 0) |
		   (mp_config.cuda ? MP_HF_CUDA : 0) | (mp_config.python ? MP_HF_PYTHON : 0);
	h->next_chunk = 0;
	h->pid = getpid();
	h->ppid = getppid();
	h->state = MP_STATE_RUNNING;
	h->exit_status = 0;
	h->start_mono_ns = mp_now();
	h->start_real_ns = mp_now_real();
	h->end_mono_ns = 0;
	h->stop_reason = MP_STOP_NONE;
	h->stack_depth = (uint32_t)mp_config.depth;
	h->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	h->sample_bytes = (uint32_t)mp_config.sample_bytes;
	h->rss_interval_ns = (uint64_t)mp_config.rss_interval_ms * 1000000u;
	n = readlink("/proc/self/exe", h->exe, sizeof(h->exe) - 1);
	h->exe[n > 0 ? n : 0] = 0;
	read_cmdline(h->cmdline, sizeof(h->cmdline));
	memcpy(h->magic, MP_MAGIC, MP_MAGIC_LEN);
}

int mp_trace_open(void)
{
	char name[sizeof(mp_config.output) + 64];
	void *p;

	if (mp_fd_adopt(&trace_fd, create_file(name, sizeof(name))))
		return -1;
	remember_path(name);
	stopped = 0;
	mp_trace_ok = 1; /* for grow_file's stop */
	p = grow_file(0, MP_HEADER_SIZE) ? MAP_FAILED :
		mp_sys_mmap(NULL, MP_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			    trace_fd.fd, 0);
	if (p == MAP_FAILED) {
		mp_warn("cannot reserve or map the trace header of ", name);
		mp_fd_release(&trace_fd);
		mp_trace_ok = 0;
		return -1;
	}
	mp_header = p;
	fill_header(mp_header);
	stopped = 0;
	mp_trace_ok = 1;
	return 0;
}

/*
 * In the child of fork(): forget the parent's file (never write to it
 * again); init.c then opens the child's own trace. The descriptor is
 * closed only when it is still memprov's: the program may have reused
 * its number.
 */
void mp_trace_fork_child(void)
{
	uint64_t i;

	mp_tracing = 0;
	mp_trace_ok = 0;
	for (i = 0; i < MAX_SEGS; i++) {
		if (!segs[i])
			continue;
		mp_sys_munmap(segs[i], seg_len(i));
		segs[i] = NULL;
	}
	if (mp_header)
		mp_sys_munmap(mp_header, MP_HEADER_SIZE);
	mp_header = NULL;
	mp_fd_release(&trace_fd);
	stopped = 0;
}
