/*
 * trace_writer.c - the trace file: open, map in segments, hand chunks to
 * threads, and append records lock-free (see memprov_trace.h).
 *
 * The file is mapped MAP_SHARED in segments of at most 8 MiB, never as
 * one big mapping, so programs under an address-space limit still run. A segment's
 * disk space is reserved with fallocate before any chunk in it is handed
 * out: a full disk stops tracing, it never raises SIGBUS. Threads take
 * chunks with one atomic add on header->next_chunk; only the thread that
 * first needs a new segment takes seg_lock (once per segment). Within its
 * chunk a thread appends with plain stores and publishes each record with
 * a release store of head->used.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "config.h"
#include "internal.h"

/*
 * Segments grow so that a short-lived process costs little disk: chunks
 * 0-3 are segment 0, then segments of 4, 8, 16, 32, 64 chunks, then
 * 128 chunks (8 MiB) each.
 */
#define SEG_MAX_CHUNKS 128u
#define SEG_SMALL 6u   /* segments 0..5 cover chunks 0..127 */
#define MAX_SEGS 65536 /* about 512 GiB of trace */

__thread struct mp_thread mp_self __attribute__((tls_model("initial-exec")));
volatile int mp_tracing;
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
static int trace_ok;                    /* open and not stopped */
static int stopped;
static void *segs[MAX_SEGS];            /* published with release (CAS) */
static uint32_t thread_serials;         /* last serial handed out */
static uint32_t mark_serials;

/*
 * Resident-memory sampling: no thread, no signal. Every record already
 * reads the clock; when its timestamp passes next_rss_ns, the one thread
 * that wins a CAS on it reads /proc/self/statm (an fd opened with the
 * trace) and writes an MP_REC_RSS. Marks, exit and the opening of the
 * trace sample too. An idle program that records nothing gets no samples.
 * next_rss_ns sits on its own cache line: read by every record, written a
 * few times a second.
 */
static struct {
	uint64_t next_ns __attribute__((aligned(64)));  /* UINT64_MAX: off */
	uint64_t interval_ns;
	char pad[48];
} rss = { UINT64_MAX, 0, { 0 } };
static struct mp_owned_fd statm_fd = { -1, 0, 0 };

void mp_stop(enum mp_stop why, const char *msg)
{
	if (mp_atomic_xchg_acq_rel_int(&stopped, 1))
		return;
	trace_ok = 0;
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
static int grow_file(off_t off, off_t len)
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
static int trace_fd_check(void)
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
	return trace_ok && !trace_fd_check() ? trace_fd.fd : -1;
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

/* Hand this thread a fresh chunk; NULL when tracing stopped. */
static struct mp_chunk_head *take_chunk(uint64_t ts)
{
	uint64_t idx, si, first, n;
	char *seg;
	struct mp_chunk_head *c;

	if (!trace_ok)
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
	c = (struct mp_chunk_head *)(seg + (idx - first) * MP_DEFAULT_CHUNK_SIZE);
	c->used = 0;
	c->tid = mp_self.tid;
	c->thread_serial = mp_self.w.serial;
	c->seq = mp_self.w.seq++;
	c->reserved = 0;
	c->first_ts = ts;
	mp_atomic_store_release_u32(&c->magic, MP_CHUNK_MAGIC);
	mp_self.w.chunk = c;
	mp_self.w.pos = (char *)(c + 1);
	mp_self.w.end = (char *)c + MP_DEFAULT_CHUNK_SIZE;
	return c;
}

static void thread_start(void)
{
	struct mp_rec_thread *r;

	mp_self.tid = (uint32_t)syscall(SYS_gettid);
	mp_self.w.serial = mp_atomic_add_relaxed_u32(&thread_serials, 1) + 1;
	r = mp_record_begin(MP_REC_THREAD, sizeof(*r));
	if (!r)
		return;
	r->tid = mp_self.tid;
	r->serial = mp_self.w.serial;
	r->parent_serial = mp_self.w.parent_serial;
	r->reserved = 0;
	memset(r->name, 0, sizeof(r->name));
	prctl(PR_GET_NAME, r->name, 0, 0, 0);
	r->name[15] = 0;
	mp_record_commit(r);
}

/* Reserve len bytes (a multiple of 8) stamped ts in this thread's chunk. */
static void *reserve(enum mp_rec_type type, size_t len, uint64_t ts)
{
	struct mp_rec_head *h;

	if (MP_UNLIKELY(!mp_self.w.chunk || mp_self.w.pos + len > mp_self.w.end)) {
		if (!take_chunk(ts))
			return NULL;
	}
	h = (struct mp_rec_head *)mp_self.w.pos;
	h->type = (uint8_t)type;
	h->flags = 0;
	h->size = (uint16_t)len;
	h->func = 0;
	h->kind = 0;
	h->reserved = 0;
	h->ts = ts;
	return h;
}

/* Parse "size resident ..." (pages) from /proc/self/statm. */
static int read_statm(uint64_t *vm, uint64_t *res)
{
	char buf[128];
	uint64_t v[2] = { 0, 0 };
	ssize_t n, i;
	int k = 0, digits = 0;

	/* the program may have closed our fd and reused its number */
	if (!mp_fd_ours(&statm_fd))
		return -1;
	n = syscall(SYS_pread64, statm_fd.fd, buf, sizeof(buf) - 1, 0); /* not a cancellation point */
	if (n <= 0)
		return -1;
	for (i = 0; i < n && k < 2; i++) {
		if (buf[i] >= '0' && buf[i] <= '9') {
			v[k] = v[k] * 10 + (uint64_t)(buf[i] - '0');
			digits = 1;
		} else if (digits) {
			k++;
			digits = 0;
		}
	}
	if (k < 2)
		return -1;
	*vm = v[0] * mp_header->page_size;
	*res = v[1] * mp_header->page_size;
	return 0;
}

/* Write one MP_REC_RSS stamped ts; stops sampling if statm is unreadable. */
static void rss_write(uint64_t ts)
{
	struct mp_rec_rss *r;
	uint64_t vm, res;
	int saved = errno;

	if (read_statm(&vm, &res)) {
		__atomic_store_n(&rss.next_ns, UINT64_MAX, __ATOMIC_RELAXED);
		statm_fd.fd = -1; /* not ours any more, or never was: never close it */
		errno = saved;
		return;
	}
	errno = saved;
	r = reserve(MP_REC_RSS, sizeof(*r), ts);
	if (!r)
		return;
	r->rss_bytes = res;
	r->vm_bytes = vm;
	mp_record_commit(r);
}

/* A record stamped ts passed the next sample time: one thread samples. */
static __attribute__((noinline)) void rss_due(uint64_t ts)
{
	uint64_t due = __atomic_load_n(&rss.next_ns, __ATOMIC_RELAXED);

	if (ts < due || !__atomic_compare_exchange_n(&rss.next_ns, &due,
						      ts + rss.interval_ns, 0,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	rss_write(ts);
}

/* A sample now, whatever the interval (marks, exit, trace open). */
void mp_record_rss(void)
{
	if (!trace_ok || !rss.interval_ns || statm_fd.fd < 0)
		return;
	if (MP_UNLIKELY(!mp_self.w.serial))
		thread_start();
	rss_write(mp_now());
}

static void rss_open(void)
{
	rss.interval_ns = (uint64_t)mp_config.rss_interval_ms * 1000000u;
	rss.next_ns = UINT64_MAX;
	if (!rss.interval_ns ||
	    mp_fd_adopt(&statm_fd, mp_sys_open("/proc/self/statm", O_RDONLY | O_CLOEXEC, 0)))
		return;
	rss.next_ns = mp_now() + rss.interval_ns;
}

/*
 * What every record starts with: tracing on, the thread known, the
 * timestamp, and an RSS sample when one is due. 0: tracing is off.
 */
static inline __attribute__((always_inline)) int record_start(enum mp_rec_type type,
							      uint64_t *ts)
{
	if (MP_UNLIKELY(!trace_ok))
		return 0;
	if (MP_UNLIKELY(!mp_self.w.serial))
		thread_start();
	*ts = mp_now();
	/* the THREAD record stays a thread's first */
	if (MP_UNLIKELY(*ts >= __atomic_load_n(&rss.next_ns, __ATOMIC_RELAXED)) &&
	    type != MP_REC_THREAD)
		rss_due(*ts);
	return 1;
}

void *mp_record_begin(enum mp_rec_type type, size_t len)
{
	uint64_t ts;

	len = MP_REC_ALIGN(len);
	if (MP_UNLIKELY(len > MP_MAX_RECORD) || !record_start(type, &ts))
		return NULL;
	return reserve(type, len, ts);
}

/* mp_record_begin with the head's flags, func and kind filled in. */
static void *begin_head(enum mp_rec_type type, size_t len, unsigned flags,
			enum mp_func fn, enum mp_kind kind)
{
	struct mp_rec_head *h = mp_record_begin(type, len);

	if (h) {
		h->flags = (uint8_t)flags;
		h->func = (uint16_t)fn;
		h->kind = (uint8_t)kind;
	}
	return h;
}

void mp_record_commit(void *rec)
{
	struct mp_rec_head *h = rec;
	struct mp_chunk_head *c = mp_self.w.chunk;

	mp_self.w.pos = (char *)rec + h->size;
	mp_atomic_store_release_u32(&c->used, (uint32_t)(mp_self.w.pos - (char *)(c + 1)));
}

/*
 * The hot path of the small fixed-size records (ALLOC, FREE): what
 * mp_record_begin, the field stores and mp_record_commit do, with the
 * head written as one word. head: type | flags << 8 | func << 32 |
 * kind << 48 (the size is added here); w: the n words after ts.
 */
static inline __attribute__((always_inline)) void
emit(uint64_t head, const uint64_t *w, unsigned n)
{
	const size_t len = 16 + 8 * (size_t)n;
	struct mp_chunk_head *c;
	uint64_t ts, *r;
	unsigned i;

	if (!record_start((enum mp_rec_type)(head & 0xff), &ts))
		return;
	if (MP_UNLIKELY(!mp_self.w.chunk || mp_self.w.pos + len > mp_self.w.end)) {
		if (!take_chunk(ts))
			return;
	}
	c = mp_self.w.chunk;
	r = (uint64_t *)mp_self.w.pos;
	r[0] = head | (uint64_t)len << 16;
	r[1] = ts;
	for (i = 0; i < n; i++)
		r[2 + i] = w[i];
	mp_self.w.pos = (char *)r + len;
	mp_atomic_store_release_u32(&c->used, (uint32_t)(mp_self.w.pos - (char *)(c + 1)));
}

static inline uint64_t head_word(enum mp_rec_type type, unsigned flags, enum mp_func fn,
				 enum mp_kind kind)
{
	return (uint64_t)(uint8_t)type | (uint64_t)(uint8_t)flags << 8 |
	       (uint64_t)(uint16_t)fn << 32 | (uint64_t)(uint8_t)kind << 48;
}

/*
 * Sampling mode (MEMPROV_SAMPLE_BYTES=N): the bytes a thread allocates are
 * cut at points N bytes apart on average, at exponentially distributed
 * intervals (a Poisson process over bytes, as tcmalloc does); an
 * allocation that contains a point is recorded with MP_RF_SAMPLED and its
 * real size, the others are not recorded at all (no stack, no record).
 * A block of size s < N is thus recorded with probability 1 - exp(-s/N);
 * blocks of N bytes or more are always recorded, unflagged. Frees are all
 * recorded.
 */
static __thread uint64_t rng __attribute__((tls_model("initial-exec")));

static uint64_t rng_next(void)
{
	uint64_t x = rng;

	if (MP_UNLIKELY(!x))
		x = mp_now() ^ ((uint64_t)mp_self.tid << 32) ^ 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng = x;
	return x;
}

/* -ln(u) for u uniform in (0, 1], without libm (error < 1e-5). */
static double neg_log_uniform(void)
{
	union { double d; uint64_t u; } v;
	double m, t, t2;
	int e;

	v.d = (double)((rng_next() >> 11) + 1) * (1.0 / 9007199254740992.0);
	e = (int)((v.u >> 52) & 0x7ff) - 1023;
	v.u = (v.u & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* [1, 2) */
	m = v.d;
	t = (m - 1) / (m + 1);
	t2 = t * t;
	return -(e * 0.6931471805599453 +
		 2 * t * (1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 / 9)))));
}

static uint64_t next_gap(void)
{
	double g = neg_log_uniform() * (double)mp_config.sample_bytes;

	return g < 1 ? 1 : g > 1e18 ? (uint64_t)1e18 : (uint64_t)g;
}

/* 0: skip this allocation, 1: record it, MP_RF_SAMPLED: record it flagged. */
static inline unsigned sample_flag(size_t size)
{
	uint64_t n = mp_config.sample_bytes;

	if (size >= n)
		return 1;
	if (MP_UNLIKELY(!mp_self.sample_left))
		mp_self.sample_left = next_gap();
	if (mp_self.sample_left > size) {
		mp_self.sample_left -= size;
		return 0;
	}
	mp_self.sample_left = next_gap();
	return MP_RF_SAMPLED;
}

void mp_record_alloc(enum mp_func fn, enum mp_kind kind, const void *addr,
		     size_t size, unsigned flags)
{
	uint64_t stack;

	if (MP_UNLIKELY(mp_config.sample_bytes) && !(flags & MP_RF_FAILED)) {
		unsigned sf = sample_flag(size);

		if (!sf)
			return;
		flags |= sf & MP_RF_SAMPLED;
	}
	stack = mp_capture_stack(1);
	{
		uint64_t w[3] = { (uintptr_t)addr, size, stack };

		emit(head_word(MP_REC_ALLOC, flags, fn, kind), w, 3);
	}
}

void mp_record_free(enum mp_func fn, enum mp_kind kind, const void *addr,
		    unsigned flags)
{
	uint64_t w[1] = { (uintptr_t)addr };

	emit(head_word(MP_REC_FREE, flags, fn, kind), w, 1);
}

void mp_record_unmap(const void *addr, size_t len)
{
	struct mp_rec_unmap *r = begin_head(MP_REC_FREE, sizeof(*r), 0, MP_FN_munmap,
					    MP_KIND_MMAP);

	if (!r)
		return;
	r->addr = (uintptr_t)addr;
	r->len = len;
	mp_record_commit(r);
}

void mp_record_gpu_alloc(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			 uint64_t size, uint64_t stream, int device, int result,
			 uint64_t extra, unsigned flags)
{
	uint64_t stack = mp_capture_stack(1);
	struct mp_rec_gpu_alloc *r = begin_head(MP_REC_GPU_ALLOC, sizeof(*r), flags, fn, kind);

	if (!r)
		return;
	r->addr = addr;
	r->size = size;
	r->stack = stack;
	r->stream = stream;
	r->device = device;
	r->result = result;
	r->extra = extra;
	mp_record_commit(r);
}

void mp_record_gpu_free(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			uint64_t stream, int device, int result, unsigned flags)
{
	struct mp_rec_gpu_free *r = begin_head(MP_REC_GPU_FREE, sizeof(*r), flags, fn, kind);

	if (!r)
		return;
	r->addr = addr;
	r->stream = stream;
	r->device = device;
	r->result = result;
	mp_record_commit(r);
}

void mp_record_ctx_reset(enum mp_func fn, int device)
{
	struct mp_rec_ctx_reset *r = mp_record_begin(MP_REC_CTX_RESET, sizeof(*r));

	if (!r)
		return;
	r->h.func = (uint16_t)fn;
	r->device = device;
	r->reserved = 0;
	mp_record_commit(r);
}

void mp_record_mark(const char *label, unsigned flags)
{
	size_t n = label ? strnlen(label, 255) : 0;
	struct mp_rec_mark *r = mp_record_begin(MP_REC_MARK, sizeof(*r) + n + 1);

	if (!r)
		return;
	r->h.flags = (uint8_t)flags;
	r->label_len = (uint32_t)n + 1;
	r->serial = mp_atomic_add_relaxed_u32(&mark_serials, 1) + 1;
	memset(r->label, 0, r->h.size - sizeof(*r));
	if (n)
		memcpy(r->label, label, n);
	mp_record_commit(r);
	mp_record_rss();
}

void mp_record_exit(int status, unsigned how)
{
	struct mp_rec_exit *r;

	mp_record_rss();
	r = mp_record_begin(MP_REC_EXIT, sizeof(*r));
	if (!r)
		return;
	r->status = status;
	r->how = how;
	mp_record_commit(r);
}

void mp_record_fork(pid_t child)
{
	struct mp_rec_fork *r = mp_record_begin(MP_REC_FORK, sizeof(*r));

	if (!r)
		return;
	r->child_pid = child;
	r->reserved = 0;
	mp_record_commit(r);
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
			mp_warn("cannot create the trace file ", name);
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
	trace_ok = 1; /* for grow_file's stop */
	p = grow_file(0, MP_HEADER_SIZE) ? MAP_FAILED :
		mp_sys_mmap(NULL, MP_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			    trace_fd.fd, 0);
	if (p == MAP_FAILED) {
		mp_warn("cannot reserve or map the trace header of ", name);
		mp_fd_release(&trace_fd);
		trace_ok = 0;
		return -1;
	}
	mp_header = p;
	fill_header(mp_header);
	stopped = 0;
	rss_open();
	trace_ok = 1;
	return 0;
}

/*
 * In the child of fork(): forget the parent's file (never write to it
 * again) and start over as a fresh process; init.c then opens the
 * child's own trace. Descriptors are closed only when they are still
 * memprov's: the program may have reused their numbers.
 */
void mp_trace_fork_child(void)
{
	uint64_t i;

	mp_tracing = 0;
	trace_ok = 0;
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
	/* /proc/self was resolved at open: this fd shows the parent */
	mp_fd_release(&statm_fd);
	rss.next_ns = UINT64_MAX;
	stopped = 0;
	thread_serials = 0;
	mark_serials = 0;
	memset(&mp_self.w, 0, sizeof(mp_self.w));
}
