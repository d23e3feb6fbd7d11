/*
 * trace_file.c - the trace file: its name, creation and header, the
 * segments it is mapped in, the chunks handed to writers, and how tracing
 * ends (see memprov_trace.h).
 *
 * Layer: 2 storage and walk (docs/ARCHITECTURE.md): calls config and sys.
 *
 * The file is mapped MAP_SHARED in segments of at most 8 MiB, never as
 * one big mapping, so programs under an address-space limit still run.
 * Disk space is reserved before a chunk is used: with fallocate, a step
 * ahead, or, where the file system reserves blocks as it is written
 * (ext4, XFS), by the thread that took the chunk writing its zeros: a
 * full disk or a file-size limit stops tracing, it never raises SIGBUS
 * or SIGXFSZ. Chunks (1 to 16 blocks of 4 KiB, never
 * across a segment's end) are taken with a compare-and-swap on
 * header->next_chunk; the thread that first needs a segment maps it, with
 * no lock (a compare-and-swap publishes it).
 *
 * A chunk's pages are made present when it is handed out (one
 * madvise(MADV_POPULATE_WRITE) instead of a page fault per page) and
 * dropped from the address space once its thread is done with it
 * (madvise(MADV_DONTNEED), by trace_writer.c: the data stays in the
 * file's page cache, so nothing committed is lost, even to SIGKILL). The
 * trace's share of the process's resident memory is then the header page
 * and, per thread, its chunk and at most one finished one:
 * mp_trace_resident() says how much, for the RSS samples.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "config.h"
#include "trace_file.h"

/*
 * Segments (mappings, in blocks of MP_BLOCK_SIZE) grow so that a
 * short-lived process maps little: blocks 0-7 are segment 0, then
 * segments of 8, 16, 32, ... 1024 blocks, then 2048 blocks (8 MiB) each.
 */
#define BLOCK ((uint64_t)MP_BLOCK_SIZE)
#define SEG_FIRST 8u     /* blocks in segment 0 */
#define SEG_MAX 2048u    /* blocks in a segment from SEG_SMALL on */
#define SEG_SMALL 9u     /* segments 0..8 cover blocks 0..2047 */
#define MAX_SEGS 65536   /* about 512 GiB of trace */
/* fallocate steps: an eighth of the file, 32 KiB to 4 MiB */
#define SPACE_STEP_MIN (32u << 10)
#define SPACE_STEP_MAX (4u << 20)
/*
 * The first step: two blocks. A short process writes one chunk (ls, a
 * shell's child between fork and exec: 310 and 15 events), and where
 * space is reserved by writing (now chunk by chunk, chunk_space) each
 * block reserved cost a page written into the file (2 us here): eight
 * blocks first cost ls 13 us of the 0.57 ms that memprov adds to it. A
 * process that writes more grows by the usual steps.
 */
#define SPACE_STEP_FIRST (8u << 10)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6
#endif
#define EXT4_MAGIC 0xef53 /* ext2, ext3, ext4 */
#define XFS_MAGIC 0x58465342

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
/* the traces of the processes this one was forked from, oldest first */
static struct {
	struct mp_owned_fd fd;
	uint64_t until_ts, until_off;
	uint32_t thread, fork_serial;
	int32_t child_pid;
} ancestors[MP_MAX_ANCESTORS];
static int n_ancestors;
static int forks; /* forked children this process descends from since its exec */
static char trace_path[4096] MP_BIG_BSS;           /* absolute */
static int stopped;
static void *segs[MAX_SEGS] MP_BIG_BSS;            /* published with release (CAS) */
static uint64_t segs_end;               /* segs[i] is NULL from here on */
static uint16_t *seg_done;              /* see seg_add_done */
static uint64_t space_end;              /* bytes of the file fallocated */
static uint64_t resident;               /* trace bytes mapped and present */
static int populate_off;                /* MADV_POPULATE_WRITE is not known */
static int space_by_writing;            /* reserve space with zeros, not fallocate */
/*
 * In a forked child: the pid of the process that forked it (its trace's
 * pid), for the child's header. getppid() is wrong when the parent exited
 * before the child opened its trace (a daemon's double fork, `cmd &` in a
 * shell that exits at once): the child is already the reaper's, and its
 * trace said ppid 1, so no report found its parent's trace and `run
 * --check --children` left it out.
 */
static int32_t fork_parent_pid;
static pthread_mutex_t space_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* An allocation recorded without native frames: no room for the walk. */
void mp_count_no_room(void)
{
	struct mp_file_header *h = mp_header;

	if (h)
		__atomic_fetch_add(&h->no_room_stacks, 1, __ATOMIC_RELAXED);
}

void mp_trace_killed(int sig)
{
	struct mp_file_header *h = mp_header;

	/* a vfork child shares our memory, not our trace */
	if (!h || stopped || h->pid != (int32_t)mp_syscall(SYS_getpid) ||
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

/* Which segment holds block b, its first block and its length in blocks. */
static uint64_t seg_of(uint64_t b, uint64_t *first, uint64_t *n)
{
	uint64_t s;

	if (b < SEG_FIRST) {
		*first = 0;
		*n = SEG_FIRST;
		return 0;
	}
	if (b < SEG_MAX) {
		s = (uint64_t)(63 - __builtin_clzll(b)) - 2;
		*first = *n = 1ull << (s + 2);
		return s;
	}
	s = SEG_SMALL + (b - SEG_MAX) / SEG_MAX;
	*first = SEG_MAX * (s - SEG_SMALL + 1);
	*n = SEG_MAX;
	return s;
}

/*
 * Space for [off, off + len) reserved by writing zeros there, where the
 * file system reserves blocks at write time (ext4, XFS: delayed
 * allocation, ENOSPC from the write, never from a later page fault). On
 * those, fallocate leaves "unwritten" extents, and the first store into
 * each page of the shared mapping then costs a journal transaction
 * (ext4's page_mkwrite): measured on ext4, madvise(MADV_POPULATE_WRITE)
 * of a 64 KiB chunk took 1.6 ms after fallocate, 0.25 ms after writing
 * zeros. Raw pwrite: not a cancellation point. 0 or an errno.
 *
 * One write a chunk, of exactly the chunk, by the thread that took it
 * (chunk_space): the page cache keeps what one write fills in folios
 * that lie inside it, and a fault maps every page of the folio it lands
 * in (ext4 on Linux 6.18 here: populating 8 pages of a file written 256
 * KiB at a time mapped 64, and releasing them unmapped those 8 only;
 * written a page at a time, 8 and 0). A chunk written on its own is
 * mapped and released whole, and nothing of its neighbours with it.
 * Measured with a small C program (not kept) on 17 MiB in 64 KiB chunks:
 * zeros a page at a time cost 13.9 ms and populating 7.0; 64 KiB at a
 * time 4.6 and 1.5.
 */
#define ZEROS_MAX 65536 /* a chunk in one write */
_Static_assert(ZEROS_MAX >= MP_DEFAULT_CHUNK_SIZE, "the biggest chunk in one write");

static int write_zeros(off_t off, off_t len)
{
	/* never written: its pages are the kernel's page of zeros, no memory */
	static char zeros[ZEROS_MAX] MP_BIG_BSS __attribute__((aligned(4096)));

	while (len > 0) {
		size_t n = len < (off_t)sizeof(zeros) ? (size_t)len : sizeof(zeros);
		long w = mp_syscall(SYS_pwrite64, trace_fd.fd, zeros, n, (long)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : ENOSPC;
		off += w;
		len -= w;
	}
	return 0;
}

static int trace_fd_check(void);

static int reserve(off_t off, off_t len)
{
	return space_by_writing ? write_zeros(off, len) :
	       mp_syscall(SYS_fallocate, trace_fd.fd, 0, off, len) ? errno : 0;
}

/*
 * Grow the trace file to off + len (at least off + min_len, under a
 * file-size limit). Never raises a signal in the program:
 * a file-size limit (RLIMIT_FSIZE) is checked first and stops tracing,
 * and SIGXFSZ is held blocked around the call (a limit lowered meanwhile)
 * and taken back if the call raised it. The raw system call is not a
 * cancellation point. Returns the length reserved, or -1 when tracing
 * stopped.
 */
MP_REALIGN static off_t grow_file(off_t off, off_t len, off_t min_len)
{
	struct rlimit rl;
	struct mp_xfsz x;
	int err;

	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)off + (uint64_t)len > (uint64_t)rl.rlim_cur) {
		/* a step short of the limit still serves */
		if ((uint64_t)off + (uint64_t)min_len > (uint64_t)rl.rlim_cur) {
			mp_stop(MP_STOP_FSIZE, "the trace reached the file-size limit (ulimit -f)");
			return -1;
		}
		len = (off_t)((uint64_t)rl.rlim_cur - (uint64_t)off);
	}
	mp_xfsz_hold(&x);
	err = reserve(off, len);
	/* a dup2 onto the descriptor's number moved it (hooks_fd.c) between
	 * the load of its number and the call: once more, with the new one */
	if (err == EBADF && !trace_fd_check())
		err = reserve(off, len);
	if (err == EOPNOTSUPP) {
		/* glibc's emulation writes, a cancellation point */
		int cs;

		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
		err = posix_fallocate(trace_fd.fd, off, len);
		pthread_setcancelstate(cs, NULL);
	}
	mp_xfsz_release(&x, err == EFBIG);
	if (!err)
		return len;
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
	if (fd >= 0 && mp_fd_take(&mine, fd) == 0) {
		if (mine.dev == trace_fd.dev && mine.ino == trace_fd.ino) {
			if (__atomic_compare_exchange_n(&trace_fd.fd, &old, mine.fd, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				mp_fd_hide(&trace_fd);
				return 0;
			}
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

/* reserve_space, with space_lock held. */
static int grow_to(uint64_t end)
{
	uint64_t cur = space_end, step, want;
	off_t got;

	if (end <= cur)
		return 0;
	step = cur / 8;
	step = step < SPACE_STEP_MIN ? SPACE_STEP_MIN : step > SPACE_STEP_MAX ? SPACE_STEP_MAX : step;
	if (cur <= MP_HEADER_SIZE)
		step = SPACE_STEP_FIRST;
	want = (end > cur + step ? end : cur + step + BLOCK - 1) / BLOCK * BLOCK;
	if (trace_fd_check())
		return -1;
	got = grow_file((off_t)cur, (off_t)(want - cur), (off_t)(end - cur));
	if (got < 0)
		return -1;
	/* short of the step under a file-size limit */
	__atomic_store_n(&space_end, cur + (uint64_t)got, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Disk space for the file up to end bytes, a step ahead, when it is not
 * there yet, with fallocate (where space is reserved by writing, each
 * chunk's thread writes its own: chunk_space). One thread at a time. The lock is taken
 * every few MiB of trace, with every signal blocked and cancellation off,
 * so no handler or cancellation can leave it held; a forked child makes
 * it anew. 0, or -1 when tracing stopped.
 */
static int reserve_space(uint64_t end)
{
	mp_sigset old;
	int cs, ret, blocked;

	if (MP_LIKELY(end <= __atomic_load_n(&space_end, __ATOMIC_ACQUIRE)))
		return 0;
	blocked = mp_signals_block(&old);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	pthread_mutex_lock(&space_lock);
	ret = grow_to(end);
	pthread_mutex_unlock(&space_lock);
	pthread_setcancelstate(cs, NULL);
	mp_signals_restore(&old, blocked);
	return ret;
}

/*
 * Space for the chunk at file bytes [off, end), by writing its zeros
 * (space_by_writing), by the thread that took it: no other thread writes
 * there, so no lock. Chunks taken at once by several threads may be
 * written in any order: one below the end of the file is a hole until
 * its thread writes it, and a reader takes a hole's zeros for a block
 * never handed out. space_end is the end of the file (the view maps no
 * further). 0, or -1 when tracing stopped.
 */
static int chunk_space(uint64_t off, uint64_t end)
{
	mp_sigset old;
	uint64_t cur;
	int blocked, bad;

	/*
	 * No handler between the descriptor's check and the write: one that
	 * dup2s over the trace's number (hooks_fd.c moves the trace first)
	 * would leave the write to land in the program's file, and a
	 * SIGXFSZ of the program's own must not be taken for this write's.
	 */
	blocked = mp_signals_block(&old);
	bad = trace_fd_check() || grow_file((off_t)off, (off_t)(end - off), (off_t)(end - off)) < 0;
	mp_signals_restore(&old, blocked);
	if (bad)
		return -1;
	cur = __atomic_load_n(&space_end, __ATOMIC_RELAXED);
	while (cur < end && !__atomic_compare_exchange_n(&space_end, &cur, end, 1, __ATOMIC_RELEASE,
							  __ATOMIC_RELAXED))
		;
	return 0;
}

/* segs_end up to at least end (after segs[end - 1] was published). */
static void raise_segs_end(uint64_t end)
{
	uint64_t cur = mp_atomic_load_relaxed_u64(&segs_end);

	while (cur < end && !__atomic_compare_exchange_n(&segs_end, &cur, end, 0, __ATOMIC_RELEASE,
							  __ATOMIC_RELAXED))
		;
}

static void seg_done_map(void);

/*
 * The first segment that is unmapped once finished: segments 6 to 8
 * (1, 2 and 4 MiB) are small, but past the view's reach (the first
 * megabyte, mp_trace_view), which reads the chunks still in use through
 * their mapping; before, a trace of 9.7 MB kept 7.75 MiB of its small
 * segments mapped to the end, besides the one in use.
 */
#define SEG_RELEASABLE 6u

/*
 * Map segment si (first block, n blocks). No lock: threads that need the
 * same segment at once may each map it; the first published mapping is
 * kept. Mapping past the end of the file is allowed: no chunk there is
 * touched before reserve_space or chunk_space covered it. Nothing here is a cancellation
 * point.
 */
static char *segment(uint64_t si, uint64_t first, uint64_t n)
{
	off_t off = (off_t)(MP_HEADER_SIZE + first * BLOCK);
	void *p, *expected = NULL;

	p = mp_atomic_load_acquire_ptr(&segs[si]);
	if (MP_LIKELY(p != NULL))
		return p;
	if (trace_fd_check())
		return NULL;
	p = mp_sys_mmap(NULL, (size_t)(n * BLOCK), PROT_READ | PROT_WRITE, MAP_SHARED,
			trace_fd.fd, off);
	if (p == MAP_FAILED && errno == EBADF && !trace_fd_check()) /* moved meanwhile */
		p = mp_sys_mmap(NULL, (size_t)(n * BLOCK), PROT_READ | PROT_WRITE, MAP_SHARED,
				trace_fd.fd, off);
	if (p == MAP_FAILED) {
		mp_stop(MP_STOP_MAP, "cannot map the trace file (address space limit?)");
		return NULL;
	}
	if (!__atomic_compare_exchange_n(&segs[si], &expected, p, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		mp_sys_munmap(p, (size_t)(n * BLOCK));
		p = expected;
	}
	raise_segs_end(si + 1);
	if (si >= SEG_RELEASABLE && !__atomic_load_n(&seg_done, __ATOMIC_ACQUIRE))
		seg_done_map();
	return p;
}

/* Length in bytes of segment si. */
static size_t seg_len(uint64_t si)
{
	return (size_t)((si == 0 ? SEG_FIRST : si < SEG_SMALL ? 1ull << (si + 2) : SEG_MAX) * BLOCK);
}

/* Pages of [p, p + len) present and writable now, not one fault at a time. */
static void populate(void *p, size_t len)
{
	if (populate_off || !mp_syscall(SYS_madvise, p, len, MADV_POPULATE_WRITE))
		return;
	if (errno == EINVAL)
		populate_off = 1; /* a kernel before 5.14 */
}

/*
 * A chunk of want blocks or fewer (never fewer than min, never across a
 * segment's end), mapped, with disk space, never used before; its length
 * in *bytes. NULL when tracing stopped. The writer fills its head.
 */
static void seg_add_done(uint64_t si, uint64_t blocks);

struct mp_chunk_head *mp_chunk_reserve(unsigned want, unsigned min, uint32_t *bytes,
				       uint32_t *segp)
{
	uint64_t cur, start, n, si, first, segn;
	char *seg;

	if (!mp_trace_ok)
		return NULL;
	cur = mp_atomic_load_relaxed_u64(&mp_header->next_chunk);
	do {
		start = cur;
		si = seg_of(start, &first, &segn);
		if (first + segn - start < min) {
			/* too little left in this segment: leave it as a hole */
			start = first + segn;
			si = seg_of(start, &first, &segn);
		}
		n = first + segn - start < want ? first + segn - start : want;
	} while (!__atomic_compare_exchange_n(&mp_header->next_chunk, &cur, start + n, 1,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	if (start != cur) {
		uint64_t f, m;

		seg_add_done(seg_of(cur, &f, &m), start - cur); /* the hole: never used */
	}
	if (MP_UNLIKELY(si >= MAX_SEGS)) {
		mp_stop(MP_STOP_INTERNAL, "trace file reached its size limit (512 GiB)");
		return NULL;
	}
	if (space_by_writing ? chunk_space(MP_HEADER_SIZE + start * BLOCK, MP_HEADER_SIZE + (start + n) * BLOCK) :
	    reserve_space(MP_HEADER_SIZE + (start + n) * BLOCK))
		return NULL;
	seg = segment(si, first, segn);
	if (!seg)
		return NULL;
	seg += (start - first) * BLOCK;
	*bytes = (uint32_t)(n * BLOCK);
	*segp = (uint32_t)si;
	mp_chunk_present(seg, *bytes);
	return (struct mp_chunk_head *)seg;
}

#define VIEW_MAX (1u << 20) /* mp_trace_view's reach: a short process's trace */

/*
 * The blocks in the view's reach whose pages left the address space
 * (mp_chunk_release), a bit each: the view leaves them to the reader's
 * pread, which copies from the page cache without mapping the pages in
 * again. Read through the mapping, they counted in the program's
 * resident memory once more at the scan: sqlite3 inserting 200,000 rows
 * (a 56 MB trace) peaked 0.9-1.1 MB higher, the first megabyte of its
 * trace faulted back in. A short process's chunks, still in use, are
 * read in place as before.
 */
#define VIEW_BLOCKS ((VIEW_MAX - MP_HEADER_SIZE) / BLOCK)
_Static_assert((1u << (SEG_RELEASABLE + 2)) >= VIEW_BLOCKS,
	       "a segment that can be unmapped lies past the view's reach");
static uint64_t view_released[(VIEW_BLOCKS + 63) / 64];

/* The block of the file mapped at a, or VIEW_BLOCKS when it is past the view's reach. */
static uint64_t view_block(uintptr_t a)
{
	uint64_t si, first, n;

	for (si = 0; si < SEG_SMALL; si++) {
		const char *seg = mp_atomic_load_acquire_ptr(&segs[si]);

		first = si ? 1ull << (si + 2) : 0;
		n = si ? first : SEG_FIRST;
		if (first >= VIEW_BLOCKS)
			break;
		if (seg && a >= (uintptr_t)seg && a < (uintptr_t)seg + n * BLOCK)
			return first + (a - (uintptr_t)seg) / BLOCK;
	}
	return VIEW_BLOCKS;
}

/* Blocks of [c, c + bytes) in the view's reach: released or present. */
static void view_mark(void *c, uint32_t bytes, int released)
{
	uintptr_t a;

	for (a = (uintptr_t)c; a < (uintptr_t)c + bytes; a += BLOCK) {
		uint64_t b = view_block(a), bit;

		if (b >= VIEW_BLOCKS)
			continue;
		bit = 1ull << (b % 64);
		if (released)
			__atomic_fetch_or(&view_released[b / 64], bit, __ATOMIC_RELAXED);
		else
			__atomic_fetch_and(&view_released[b / 64], ~bit, __ATOMIC_RELAXED);
	}
}

/* Whether the blocks of file bytes [off, end) are mapped in (none released). */
static int view_present(uint64_t off, uint64_t end)
{
	uint64_t b;

	for (b = (off - MP_HEADER_SIZE) / BLOCK; b < VIEW_BLOCKS && b * BLOCK + MP_HEADER_SIZE < end; b++)
		if (__atomic_load_n(&view_released[b / 64], __ATOMIC_RELAXED) & 1ull << (b % 64))
			return 0;
	return 1;
}

const void *mp_trace_view(uint64_t off, size_t len)
{
	uint64_t end = off + len, b, first, n, si;
	char *seg;

	if (!mp_header || end < off || end > VIEW_MAX ||
	    end > __atomic_load_n(&space_end, __ATOMIC_ACQUIRE))
		return NULL;
	if (end <= MP_HEADER_SIZE)
		return (const char *)mp_header + off;
	if (off < MP_HEADER_SIZE)
		return NULL;
	b = (off - MP_HEADER_SIZE) / BLOCK;
	si = seg_of(b, &first, &n);
	if (si >= __atomic_load_n(&segs_end, __ATOMIC_ACQUIRE) ||
	    end > MP_HEADER_SIZE + (first + n) * BLOCK)
		return NULL;
	seg = mp_atomic_load_acquire_ptr(&segs[si]);
	if (!seg || !view_present(off, end))
		return NULL;
	return seg + (off - MP_HEADER_SIZE - first * BLOCK);
}

/* A chunk in use again after mp_chunk_release (its thread wrote more). */
void mp_chunk_present(void *c, uint32_t bytes)
{
	populate(c, bytes);
	__atomic_fetch_add(&resident, bytes, __ATOMIC_RELAXED);
	view_mark(c, bytes, 0);
}

/*
 * Its thread is done with chunk c: drop its pages from the address
 * space. The data stays in the file (the page cache of a shared mapping).
 */
void mp_chunk_release(void *c, uint32_t bytes)
{
	int saved = errno;

	if (!mp_syscall(SYS_madvise, c, (size_t)bytes, MADV_DONTNEED)) {
		__atomic_fetch_sub(&resident, bytes, __ATOMIC_RELAXED);
		view_mark(c, bytes, 1);
	}
	errno = saved; /* (mlocked pages stay: still counted as present) */
}

/*
 * seg_done[si]: the blocks of segment si (from SEG_RELEASABLE on) whose
 * chunks are finished for good and released, or that were left as a hole
 * at its end. Once they are all of it, nothing will use the segment again
 * (its chunks were handed out; the view reads only the first megabyte,
 * in the segments before), and it is unmapped: its pages
 * had left the process's memory, but the mapping kept its address space
 * (8 MiB a segment: a 1 GB trace held 1 GB of it, which a program under
 * an address-space limit, `ulimit -v`, could then not map), and a line of
 * /proc/self/maps each. A chunk released at thread exit is not counted:
 * its thread may write it again (mp_chunk_present), and it keeps its
 * segment mapped.
 */
static void seg_add_done(uint64_t si, uint64_t blocks)
{
	uint16_t *done = __atomic_load_n(&seg_done, __ATOMIC_ACQUIRE);
	uint64_t all = seg_len(si < MAX_SEGS ? si : 0) / BLOCK;
	void *seg;

	if (!done || si < SEG_RELEASABLE || si >= MAX_SEGS || !blocks || blocks > all)
		return;
	if (__atomic_add_fetch(&done[si], (uint16_t)blocks, __ATOMIC_ACQ_REL) != all)
		return;
	seg = __atomic_exchange_n(&segs[si], NULL, __ATOMIC_ACQ_REL);
	if (seg)
		mp_sys_munmap(seg, seg_len(si));
}

/*
 * The counts, mapped (128 KiB of address space, pages touched as used)
 * when segment SEG_RELEASABLE is: a short trace never needs them. Made
 * before any chunk of that segment or a later one is handed out, so a
 * count is never short of a block it should have; without them (no
 * memory), segments stay mapped as before.
 */
static void seg_done_map(void)
{
	void *p = mp_sys_mmap(NULL, MAX_SEGS * sizeof(uint16_t), PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint16_t *none = NULL;

	if (p == MAP_FAILED)
		return;
	if (!__atomic_compare_exchange_n(&seg_done, &none, p, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		mp_sys_munmap(p, MAX_SEGS * sizeof(uint16_t));
}

void mp_chunk_retire(void *c, uint32_t bytes, uint32_t seg)
{
	mp_chunk_release(c, bytes);
	seg_add_done(seg, bytes / BLOCK);
}

uint64_t mp_trace_resident(void)
{
	return mp_header ? MP_HEADER_SIZE + __atomic_load_n(&resident, __ATOMIC_RELAXED) : 0;
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
 * Where the trace goes: MEMPROV_OUTPUT with %p expanded; a directory (a
 * name ending in '/', or is_dir: create_file found one there) gets
 * memprov.<pid>.trace inside it. 0, or -1 after a warning.
 */
static int output_name(char *out, size_t size, int is_dir)
{
	size_t n;

	if (!expand_name(out, size, mp_config.output)) {
		mp_warn("MEMPROV_OUTPUT is too long after expanding %p", NULL);
		return -1;
	}
	n = strlen(out);
	if (n && (out[n - 1] == '/' || is_dir)) {
		char dir[MP_OUTPUT_MAX];

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
	char buf[MP_OUTPUT_MAX + 160];
	const char *why = strerrordesc_np(err);
	size_t n = mp_strlcpy(buf, name, sizeof(buf));

	if (n < sizeof(buf))
		n += mp_strlcpy(buf + n, ": ", sizeof(buf) - n);
	if (n < sizeof(buf))
		mp_strlcpy(buf + n, why ? why : "unknown error", sizeof(buf) - n);
	mp_warn(what, buf);
}

#define NAME_MAX_K 10000 /* NAME.1 ... NAME.9999 */

/* Does NAME.k exist (as anything, a dangling link included)? */
static int numbered_taken(char *name, size_t size, const char *base, unsigned k)
{
	struct stat st;

	if (!numbered_name(name, size, base, k))
		return 0;
	return !lstat(name, &st) || errno != ENOENT;
}

/*
 * Where to start trying numbered names: the first k whose NAME.k is
 * free, found by doubling then halving (NAME exists). Processes of one
 * run take the names in order, so NAME.1 ... NAME.(k-1) exist and
 * NAME.k does not: a shell loop's 400th process looks at 18 names, not
 * 400, each a path lookup (an `ls` spawned 300 times with one NAME:
 * about 0.6 ms a process less, median). A gap left by a deleted file
 * may be skipped; the exclusive create that follows decides, and walks
 * on past a name another process took meanwhile.
 */
static unsigned first_free(char *name, size_t size, const char *base)
{
	unsigned lo = 0, hi = 1;

	while (hi < NAME_MAX_K && numbered_taken(name, size, base, hi)) {
		lo = hi;
		hi = hi * 2 < NAME_MAX_K ? hi * 2 : NAME_MAX_K;
	}
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;

		if (numbered_taken(name, size, base, mid))
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/*
 * The create failed with ENOSYS: openat exists on every kernel memprov
 * runs on, so a seccomp filter refused it (man-db's children refuse every
 * new file so). A program run by a sandboxed process that memprov's own
 * calls could not harm (which keeps libmemprov.so in LD_PRELOAD,
 * hooks_sandbox.c) starts untraced without a word on the program's
 * stderr: the sandbox decided. No system call asks (a filter inherited
 * from a parent may kill on prctl); EPERM, which a filter may return as
 * well, still warns: a file system says it too.
 */
static int sandbox_refused(int err)
{
	return err == ENOSYS;
}

/*
 * A forked child of a process that has since changed its root or its
 * effective user (a daemon's privilege-separated child, a jail) cannot
 * always create its trace where its parent's went: it then runs untraced
 * without a word on the program's stderr (the parent's trace records the
 * fork). A program it runs with exec starts afresh, and warns.
 */
static uid_t start_euid = (uid_t)-1; /* the first process's, at its trace's creation */

/*
 * The trace's directory, kept open before the process changes its root
 * (hooks_sandbox.c): a child it forks in the new root creates its trace
 * there, relative to this, when MEMPROV_OUTPUT puts every process's
 * trace in one directory (no %p before its last '/'). Without it such a
 * child ran untraced, and a leak it made was never reported.
 */
static struct mp_owned_fd trace_dir = { .fd = -1 };

void mp_trace_keep_dir(void)
{
	char dir[sizeof(trace_path)], *slash;

	if (!trace_path[0] || (trace_dir.fd >= 0 && mp_fd_ours(&trace_dir)))
		return;
	mp_strlcpy(dir, trace_path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	slash[slash == dir] = 0;
	mp_fd_adopt(&trace_dir, mp_sys_open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
}

/* The directory to create name's leaf in, or -1: by its path. */
static int create_at(int forked, const char *name, const char **leaf)
{
	const char *out = mp_config.output, *slash = strrchr(out, '/'), *pct = strchr(out, '%');

	*leaf = name;
	if (!forked || !mp_root_changed() || trace_dir.fd < 0 || (pct && slash && pct < slash) ||
	    !mp_fd_ours(&trace_dir))
		return -1;
	slash = strrchr(name, '/');
	*leaf = slash ? slash + 1 : name;
	return trace_dir.fd;
}

static int confined_child(int forked, int err)
{
	return forked && (err == EACCES || err == EPERM || err == ENOENT || err == EROFS ||
			  err == ENOTDIR) &&
	       (mp_root_changed() || geteuid() != start_euid);
}

/*
 * Under memprov run (which made sure, as its user, that the trace's
 * directory takes files), a process refused that directory that runs as
 * another user than the directory's owner: a child the command started
 * under another identity (subprocess's user=, runuser, a daemon's
 * privilege-separated helper), exec'd, so it starts afresh. It runs
 * untraced without a word on its stderr, which its caller may read
 * (Python's test_subprocess compares it): as a forked one does above.
 */
static int other_user_under_run(const char *name, int err)
{
	char dir[MP_OUTPUT_MAX + 32];
	const char *slash = strrchr(name, '/');
	struct stat st;

	if ((err != EACCES && err != EPERM) || (!mp_config.run_signals[0] && !mp_config.run_index[0]))
		return 0;
	if (!slash)
		mp_strlcpy(dir, ".", sizeof(dir));
	else if ((size_t)(slash - name) + 2 > sizeof(dir))
		return 0;
	else
		mp_strlcpy(dir, slash == name ? "/" : name, slash == name ? 2 : (size_t)(slash - name) + 1);
	return !mp_syscall(SYS_newfstatat, AT_FDCWD, dir, &st, 0) && st.st_uid != geteuid();
}

/*
 * Create the trace file under a name not yet taken: NAME, then the
 * first free of NAME.1, NAME.2, ... A symbolic link is never followed;
 * a name that exists and is not a regular file or a link (a device such
 * as /dev/full, a FIFO, a socket) is refused rather than numbered around.
 */
static int create_file(char *name, size_t size, int forked)
{
	char base[MP_OUTPUT_MAX + 32];
	struct stat st;
	const char *leaf;
	unsigned k;
	int fd, in_dir = 0, at;

	if (output_name(base, sizeof(base), 0))
		return -1;
again:
	mp_strlcpy(name, base, size);
	for (k = 0; k < NAME_MAX_K; k++) {
		at = create_at(forked, name, &leaf);
		fd = at >= 0 ? (int)mp_syscall(SYS_openat, at, leaf,
					       O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)
			     : mp_sys_open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST) {
			/*
			 * Asked only when NAME exists: a fresh name costs the
			 * create's lookup alone, not a stat's before it. A
			 * directory, or a link to one, takes the trace inside
			 * it.
			 */
			if (!k && !in_dir && !stat(base, &st) && S_ISDIR(st.st_mode)) {
				in_dir = 1;
				if (output_name(base, sizeof(base), 1))
					return -1;
				goto again;
			}
			if (!k && !lstat(base, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
				mp_warn("MEMPROV_OUTPUT names something that is not a regular file: ",
					base);
				return -1;
			}
			k = k ? k : first_free(name, size, base) - 1;
			if (k + 1 >= NAME_MAX_K || !numbered_name(name, size, base, k + 1))
				break;
			continue;
		}
		if (fd < 0) {
			int e = errno;

			if (!sandbox_refused(e) && !confined_child(forked, e) &&
			    !other_user_under_run(name, e))
				warn_errno("cannot create the trace file ", name, e);
			errno = e;
		}
		return fd;
	}
	mp_warn("cannot create the trace file (every numbered name is taken): ", base);
	return -1;
}

/*
 * The program's arguments where the kernel laid them out: [args_lo,
 * args_hi), each string ending in a NUL, the next one right after it
 * (what /proc/self/cmdline reads). NULL: not known.
 */
static const char *args_lo, *args_hi;

/* The executable's path (the module scan's, or /proc/self/exe's); a
 * forked child has its parent's. */
static char self_exe[sizeof(((struct mp_file_header *)0)->exe)];
static uint32_t learned_flags; /* mp_trace_add_flags */

void mp_trace_set_args(int argc, char **argv)
{
	const char *end;
	int i;

	if (argc <= 0 || !argv || !argv[0])
		return;
	end = argv[0];
	for (i = 0; i < argc; i++) {
		if (!argv[i] || argv[i] != end)
			return; /* not laid out one after another: ask the kernel */
		end = argv[i] + strlen(argv[i]) + 1;
	}
	if ((size_t)(end - argv[0]) > (1u << 20))
		return;
	args_lo = argv[0];
	args_hi = end;
}

/*
 * The command line: the argument strings read in place (a start-up reads
 * no file for it, a forked child neither), as /proc/self/cmdline would
 * give them, even once the program rewrote them (its title); when the
 * last of them no longer ends in a NUL (a title longer than the strings
 * were), the kernel's answer.
 */
static void read_cmdline(char *dst, size_t size)
{
	ssize_t n = 0, i;
	int fd;

	dst[0] = 0;
	if (args_lo && args_hi[-1] == 0) {
		n = args_hi - args_lo;
		if (n > (ssize_t)size - 1)
			n = (ssize_t)size - 1;
		memcpy(dst, args_lo, (size_t)n);
	} else if ((fd = mp_proc_open_any("cmdline")) >= 0) {
		while (n < (ssize_t)size - 1) {
			ssize_t r = read(fd, dst + n, size - 1 - (size_t)n);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += r;
		}
		mp_sys_close(fd);
	}
	while (n > 0 && dst[n - 1] == 0)
		n--;
	for (i = 0; i < n; i++)
		if (!dst[i])
			dst[i] = ' ';
	dst[n] = 0;
}

/* s after the n bytes of buf (size bytes), cut to fit; the new length. */
static size_t append(char *buf, size_t n, size_t size, const char *s)
{
	if (n + 1 >= size)
		return n;
	mp_strlcpy(buf + n, s, size - n);
	return n + strlen(buf + n);
}

static int fs_in_ram(const struct statfs *fs)
{
	return fs->f_type == (__typeof__(fs->f_type))TMPFS_MAGIC ||
	       fs->f_type == (__typeof__(fs->f_type))RAMFS_MAGIC;
}

/* 1 when the file system of path keeps files in RAM. */
static int ram_backed(const char *path)
{
	struct statfs fs;

	return !statfs(path, &fs) && fs_in_ram(&fs);
}

/*
 * A trace on tmpfs or ramfs is RAM: every page written stays in memory
 * (and is charged to the program's cgroup) even once it left the
 * process's address space. Said once, with a directory on disk to use
 * instead when one is at hand (MEMPROV_RAMFS_OK=1: not said).
 */
static void warn_ram_backed(const char *name)
{
	char msg[480], cwd[256];
	const char *better = NULL;
	size_t n = 0;

	if (mp_config.ramfs_ok)
		return;
	if (!access("/var/tmp", W_OK) && !ram_backed("/var/tmp"))
		better = "/var/tmp/";
	else if (getcwd(cwd, sizeof(cwd) - 1) && !access(cwd, W_OK) && !ram_backed(cwd))
		better = cwd;
	n = append(msg, n, sizeof(msg), "the trace ");
	n = append(msg, n, 240, name);
	n = append(msg, n, sizeof(msg), " is on a RAM-backed file system (tmpfs): its pages "
		   "take the machine's memory; ");
	if (better) {
		n = append(msg, n, sizeof(msg), "write it to disk instead: MEMPROV_OUTPUT=");
		append(msg, n, sizeof(msg), better);
	} else {
		append(msg, n, sizeof(msg), "write it to a directory on disk (MEMPROV_OUTPUT)");
	}
	mp_warn(msg, NULL);
}

static void fill_header(struct mp_file_header *h, int ramfs, int forked)
{
	h->version = MP_VERSION;
	h->header_size = MP_HEADER_SIZE;
	h->chunk_size = MP_BLOCK_SIZE;
	h->flags = (mp_config.heap ? MP_HF_HEAP : 0) | (mp_config.mmap ? MP_HF_MMAP : 0) |
		   (mp_config.cuda ? MP_HF_CUDA : 0) | (mp_config.python ? MP_HF_PYTHON : 0) |
		   MP_HF_RSS_NET | (ramfs ? MP_HF_RAMFS : 0) | learned_flags;
	h->next_chunk = 0;
	h->pid = getpid();
	h->ppid = forked && fork_parent_pid > 0 ? fork_parent_pid : getppid();
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
	memcpy(h->exe, self_exe, sizeof(h->exe)); /* empty until the module scan: mp_trace_set_exe */
	read_cmdline(h->cmdline, sizeof(h->cmdline));
	if (gethostname(h->host, sizeof(h->host) - 1))
		h->host[0] = 0;
	memcpy(h->magic, MP_MAGIC, MP_MAGIC_LEN);
}

int mp_trace_open(int forked)
{
	char name[MP_OUTPUT_MAX + 64];
	struct statfs fs;
	int ramfs, have_fs;
	void *p;

	int fd = create_file(name, sizeof(name), forked);

	if (fd < 0)
		return -1;
	if (!forked)
		start_euid = geteuid();
	/* a trace that cannot be set up leaves no empty file behind (no reader could use it) */
	if (mp_fd_adopt(&trace_fd, fd)) {
		mp_warn("cannot keep a descriptor for the trace (the descriptor limit?): not tracing ",
			name);
		unlink(name);
		return -1;
	}
	remember_path(name);
	stopped = 0;
	space_end = 0;
	resident = 0;
	memset(view_released, 0, sizeof(view_released));
	mp_trace_ok = 1; /* for grow_file's stop */
	have_fs = !fstatfs(trace_fd.fd, &fs);
	space_by_writing = have_fs &&
			   (fs.f_type == (__typeof__(fs.f_type))EXT4_MAGIC ||
			    fs.f_type == (__typeof__(fs.f_type))XFS_MAGIC);
	p = grow_file(0, MP_HEADER_SIZE, MP_HEADER_SIZE) < 0 ? MAP_FAILED :
		mp_sys_mmap(NULL, MP_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			    trace_fd.fd, 0);
	if (p == MAP_FAILED) {
		mp_warn("cannot reserve or map the trace header of ", name);
		mp_fd_release(&trace_fd);
		unlink(name);
		mp_trace_ok = 0;
		return -1;
	}
	space_end = MP_HEADER_SIZE;
	ramfs = have_fs && fs_in_ram(&fs);
	if (ramfs)
		warn_ram_backed(name);
	mp_header = p;
	fill_header(mp_header, ramfs, forked);
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
/* The parent's trace becomes the newest ancestor (the oldest is let go when full). */
static void keep_as_ancestor(uint64_t fork_ts, uint64_t fork_extent, uint32_t thread,
			     uint32_t fork_serial, int was_ok)
{
	int i;

	if (!was_ok || !mp_fd_ours(&trace_fd)) {
		mp_fd_release(&trace_fd);
		return;
	}
	if (n_ancestors == MP_MAX_ANCESTORS) {
		mp_fd_release(&ancestors[0].fd);
		for (i = 1; i < n_ancestors; i++)
			ancestors[i - 1] = ancestors[i];
		n_ancestors--;
	}
	ancestors[n_ancestors].fd = trace_fd;
	mp_fd_hide(&ancestors[n_ancestors].fd);
	ancestors[n_ancestors].until_ts = fork_ts;
	ancestors[n_ancestors].until_off = fork_extent;
	ancestors[n_ancestors].thread = thread;
	ancestors[n_ancestors].fork_serial = fork_serial;
	ancestors[n_ancestors].child_pid = (int32_t)mp_syscall(SYS_getpid);
	n_ancestors++;
	trace_fd.fd = -1;
}

int mp_trace_ancestors(struct mp_ancestor *out, int max)
{
	int i, n = 0;

	for (i = 0; i < n_ancestors && n < max; i++)
		if (mp_fd_ours(&ancestors[i].fd))
			out[n++] = (struct mp_ancestor){ ancestors[i].fd.fd, ancestors[i].until_ts,
							 ancestors[i].until_off, ancestors[i].thread,
							 ancestors[i].fork_serial, ancestors[i].child_pid };
	return n;
}

int mp_trace_forks(void)
{
	return forks;
}

uint64_t mp_trace_extent(void)
{
	struct mp_file_header *h = mp_header;

	return h ? MP_HEADER_SIZE + mp_atomic_load_relaxed_u64(&h->next_chunk) * BLOCK : 0;
}

void mp_trace_set_exe(const char *path)
{
	struct mp_file_header *h = mp_header;

	if (self_exe[0] || !h)
		return;
	if (path && path[0])
		mp_strlcpy(self_exe, path, sizeof(self_exe));
	else
		mp_self_exe(self_exe, sizeof(self_exe));
	memcpy(h->exe, self_exe, sizeof(h->exe));
}

void mp_trace_add_flags(uint32_t flags)
{
	struct mp_file_header *h = mp_header;

	learned_flags |= flags;
	if (h)
		mp_atomic_or_relaxed_u32(&h->flags, flags);
}

void mp_trace_fork_child(uint64_t fork_ts, uint64_t fork_extent, uint32_t thread,
			 uint32_t fork_serial)
{
	int was_ok = mp_trace_ok;
	uint64_t i;

	forks++;
	mp_tracing = 0;
	mp_trace_ok = 0;
	pthread_mutex_init(&space_lock, NULL); /* another thread's, perhaps held */
	/* up to the last one mapped: the table is 512 KiB of bss, and reading
	 * it whole faulted in 128 pages in every forked child */
	for (i = 0; i < segs_end; i++) {
		if (!segs[i])
			continue;
		mp_sys_munmap(segs[i], seg_len(i));
		segs[i] = NULL;
	}
	segs_end = 0;
	if (seg_done)
		mp_sys_munmap(seg_done, MAX_SEGS * sizeof(uint16_t));
	seg_done = NULL;
	memset(view_released, 0, sizeof(view_released));
	fork_parent_pid = mp_header ? mp_header->pid : 0;
	if (mp_header)
		mp_sys_munmap(mp_header, MP_HEADER_SIZE);
	mp_header = NULL;
	keep_as_ancestor(fork_ts, fork_extent, thread, fork_serial, was_ok);
	stopped = 0;
}
