/*
 * trace_writer.c - records into the trace, lock-free: each thread appends
 * to a chunk of its own (trace_file.c hands them out) with plain stores
 * and publishes each record with a release store of the chunk's used
 * length (see memprov_trace.h); resident-memory samples; one serializer
 * per record type, each given everything it writes (a stack is named by
 * the id stack.c gave it).
 *
 * Layer: 3 writer (docs/ARCHITECTURE.md): calls trace_file, config, sys and
 * unwind (a thread's memo of walks goes back at its exit).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../include/memprov_codec.h"
#include "atomic.h"
#include "config.h"
#include "trace_file.h"
#include "unwind.h"
#include "writer.h"

__thread struct mp_thread mp_self __attribute__((tls_model("initial-exec")));

static uint32_t thread_serials;         /* last serial handed out */
static uint32_t mark_serials;
static pthread_key_t exit_key;          /* its destructor: thread_exit */
static int exit_key_made;

#define WRITE_BLOCKS 8 /* the chunks this writer takes after a thread's second: 32 KiB */
#define RETIRE_BATCH (WRITE_BLOCKS * MP_BLOCK_SIZE)

static void write_framed(struct mp_rec_head *h, uint64_t ts);
static void thread_exit(void *arg);

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
static int statm_each_time; /* descriptors scarce: statm opened at each sample */

/*
 * Timestamps. What a stamp must get right is the order of events across
 * writer contexts: a free is stamped before the real free starts, an
 * allocation after the real call returned, so that the reader never sees
 * an address handed out twice. The coarse clock (the monotonic clock at
 * the last tick, 4 ms steps here) costs 3 ns a read against 21 for the
 * precise one, two reads a malloc/free pair, and its stamps, mostly equal,
 * take a byte less each in the trace: churn 1 ran 1.80x bare with precise
 * stamps, 1.57x with coarse ones (9 interleaved runs, CPU time). But two
 * contexts' coarse stamps can be equal, and then nothing says which of a
 * free and the allocation that reused its address came first.
 *
 * So only one context at a time, the owner, stamps with the coarse clock.
 * Every stamp is at most the real time of a clock read made for it, and
 * a context's stamps never go back (ts_delta, take_chunk). A context that
 * finds another one owning takes over (stamp_handover): it swaps itself
 * into `owner` (a full barrier), reads the precise clock, then checks
 * that it still owns; its stamps from then on are at least that precise
 * one. The owner takes a coarse stamp, then checks that it still owns:
 * if so, its clock read came before any later owner's swap was visible,
 * hence before that owner's precise read, and every stamp the later
 * owner takes is after it. An event that depends on another context's
 * (an allocation reusing the address another context freed: the
 * allocator's own synchronization orders them) either finds itself the
 * owner, which it could only have become after that event's stamp, or
 * takes over with a precise read made after it. A process whose contexts
 * take turns all the time (more than SWITCH_MAX takeovers in a second:
 * each moves owner's cache line between cores) sets owner to OWNER_MULTI:
 * precise stamps for everyone from then on, each read after whatever
 * it depends on.
 *
 * The floor keeps coarse stamps after the instants memprov takes with
 * the precise clock and compares with records: the trace's start, a fork
 * (the child's scan replays the parent's trace up to its FORK record) and
 * the scan at exit (blocks allocated after it are not classified). A
 * forked child of a process in which more than one context recorded
 * stamps precisely (mp_writer_fork_child).
 */
#define OWNER_MULTI UINT32_MAX
#define SWITCH_MAX 2000 /* takeovers in a second before precise stamps for good */

static struct {
	uint32_t owner __attribute__((aligned(64))); /* serial, 0 or OWNER_MULTI */
	uint32_t switches;                           /* takeovers in switch_sec */
	uint64_t switch_sec;
	uint64_t floor_ns;                           /* no coarse stamp before it */
	char pad[40];
} clk;

/* The clock read above is done before the loads that follow it. */
static inline void clock_read_done(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_lfence(); /* rdtsc is not ordered with later loads */
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* This context does not own the coarse clock: take it over (see above). */
static __attribute__((noinline)) uint64_t stamp_handover(uint32_t me)
{
	for (;;) {
		uint32_t cur = __atomic_load_n(&clk.owner, __ATOMIC_RELAXED);
		uint64_t t, sec;

		if (cur == OWNER_MULTI)
			return mp_now();
		if (cur != me && !__atomic_compare_exchange_n(&clk.owner, &cur, me, 0,
							      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			continue;
		t = mp_now();
		clock_read_done();
		if (__atomic_load_n(&clk.owner, __ATOMIC_RELAXED) != me)
			continue; /* another context took over meanwhile */
		sec = t / 1000000000u;
		if (__atomic_load_n(&clk.switch_sec, __ATOMIC_RELAXED) != sec) {
			__atomic_store_n(&clk.switch_sec, sec, __ATOMIC_RELAXED);
			__atomic_store_n(&clk.switches, 0, __ATOMIC_RELAXED);
		} else if (__atomic_add_fetch(&clk.switches, 1, __ATOMIC_RELAXED) > SWITCH_MAX) {
			__atomic_store_n(&clk.owner, OWNER_MULTI, __ATOMIC_SEQ_CST);
		}
		return t;
	}
}

static inline uint64_t stamp(void)
{
	uint32_t me = mp_self.w.serial;
	uint64_t t, f;

	if (MP_UNLIKELY(__atomic_load_n(&clk.owner, __ATOMIC_RELAXED) != me))
		return stamp_handover(me);
	t = mp_now_coarse();
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the clock's loads before the check */
	if (MP_UNLIKELY(__atomic_load_n(&clk.owner, __ATOMIC_RELAXED) != me))
		return stamp_handover(me);
	f = __atomic_load_n(&clk.floor_ns, __ATOMIC_RELAXED);
	return t > f ? t : f;
}

/*
 * A record of context serial was abandoned: a signal handler that
 * interrupted it left by longjmp (hooks_signal.c). Its takeover's precise
 * stamp may never have become its last stamp (commit), and a coarse
 * stamp after it could then come before another context's event it
 * depends on: if it owns the clock it gives it back, and its next record
 * takes it over again. The reviewer's program (a thread that takes the
 * clock over in one probe mmap interrupted by a siglongjmp, then maps an
 * address another thread just unmapped, 1,000 times): 940 to 972 of
 * 1,000 live mappings reported before, 1,000 after.
 */
void mp_stamp_abandon(uint32_t serial)
{
	uint32_t cur = serial;

	if (serial)
		__atomic_compare_exchange_n(&clk.owner, &cur, 0, 0, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED);
}

void mp_stamp_after(uint64_t t)
{
	if (__atomic_load_n(&clk.floor_ns, __ATOMIC_RELAXED) <= t)
		__atomic_store_n(&clk.floor_ns, t + 1, __ATOMIC_RELAXED);
}


/* Blocks a context's chunk number seq asks for: small first, so that a
 * short-lived thread costs one block. */
static unsigned chunk_blocks(uint32_t seq)
{
	return seq == 0 ? 1 : seq == 1 ? MP_CHUNK_SECOND_BLOCKS : WRITE_BLOCKS;
}

/* The finished chunks of w that are still mapped leave the address space. */
static void retire_flush(struct mp_writer *w)
{
	if (w->retired_len)
		mp_chunk_retire(w->retired, w->retired_len, w->retired_seg);
	w->retired_len = 0;
}

/*
 * Chunk c (bytes long) of w is finished. Its pages leave the address
 * space with those of the chunks finished before it, once they are
 * RETIRE_BATCH bytes together (one full-size chunk, or a thread's first
 * ones together) or not next to each other. Each madvise(MADV_DONTNEED)
 * costs a TLB shootdown; at 9 bytes an event a 32 KiB chunk holds about
 * 3,500 events, and one madvise per chunk costs nothing measurable
 * (churn1 and churn2, 6 runs each side by side, CPU time within the noise
 * of one per four chunks) while a call-heavy Python script's peak RSS is
 * 130 KiB lower than with four chunks at a time, and 70 to 140 KiB lower
 * again with chunks of 32 KiB than of 64 (bench/pycalls.py 800, two
 * batches of interleaved runs, means: 9,626 KB against 9,768 with bare at
 * 8,807; 9,672 against 9,744 with bare at 8,760).
 */
static void retire(struct mp_writer *w, void *c, uint32_t bytes, uint32_t seg)
{
	/* one segment a batch: mappings of two may lie side by side */
	if (w->retired_len &&
	    ((uint8_t *)w->retired + w->retired_len != (uint8_t *)c || w->retired_seg != seg))
		retire_flush(w);
	if (!w->retired_len) {
		w->retired = c;
		w->retired_seg = seg;
	}
	w->retired_len += bytes;
	if (w->retired_len >= RETIRE_BATCH)
		retire_flush(w);
}

/* Arm the thread-exit hook of this thread (again). */
static void exit_hook_arm(void)
{
	int g;

	if (!exit_key_made)
		return;
	g = mp_pass_begin(); /* a key past the first 32 allocates */
	pthread_setspecific(exit_key, (void *)1);
	mp_pass_end(g);
}

/*
 * Give this thread's writer context room for len bytes: its chunk again
 * if it was released at thread exit and has the room, else a fresh chunk
 * (the full one leaves the address space, soon: retire). 0, or -1 when
 * tracing stopped.
 */
static __attribute__((noinline)) int take_chunk(uint64_t ts, size_t len)
{
	struct mp_writer *w = &mp_self.w;
	unsigned min = (unsigned)((sizeof(struct mp_chunk_head) + len + MP_BLOCK_SIZE - 1) /
				  MP_BLOCK_SIZE);
	unsigned want = chunk_blocks(w->seq);
	struct mp_chunk_head *c;
	uint32_t bytes, seg;

	if (w->released && (size_t)((uint8_t *)w->chunk + w->size - w->pos) >= len) {
		mp_chunk_present(w->chunk, w->size);
		w->released = 0;
		w->end = (uint8_t *)w->chunk + w->size;
		exit_hook_arm();
		return 0;
	}
	if (ts < w->ts)
		ts = w->ts; /* a context's stamps never go back, from chunk to chunk too */
	c = mp_chunk_reserve(want > min ? want : min, min, &bytes, &seg);
	if (!c)
		return -1;
	if (w->chunk && !w->released)
		retire(w, w->chunk, w->size, w->seg);
	else if (w->chunk)
		exit_hook_arm(); /* written after its exit hook ran: run it again */
	c->used = 0;
	c->tid = mp_self.tid;
	c->thread_serial = w->serial;
	c->seq = w->seq++;
	c->size = bytes;
	c->first_ts = ts;
	mp_atomic_store_release_u32(&c->magic, MP_CHUNK_MAGIC);
	w->chunk = c;
	w->seg = seg;
	w->size = bytes;
	w->pos = (uint8_t *)(c + 1);
	w->end = (uint8_t *)c + bytes;
	w->ts = ts;
	w->addr = ~0ull; /* base address 0 (stored inverted: see writer.h) */
	w->released = 0;
	return 0;
}

/*
 * At thread exit (a pthread key's destructor): the thread's chunk leaves
 * the address space. A later record of this thread (another destructor
 * that frees) takes it back through take_chunk and arms this again.
 */
static void thread_exit(void *arg)
{
	struct mp_writer *w = &mp_self.w;

	(void)arg;
	mp_unwind_thread_exit(); /* its memo of walks goes back */
	if (!w->chunk || w->released || !mp_enter())
		return;
	retire_flush(w);
	mp_chunk_release(w->chunk, w->size);
	w->released = 1;
	w->end = w->pos;
	mp_leave();
}

/* Where a record of at most len bytes stamped ts goes; NULL when tracing
 * stopped. */
static inline __attribute__((always_inline)) uint8_t *room(uint64_t ts, size_t len)
{
	if (MP_UNLIKELY((uintptr_t)mp_self.w.end - (uintptr_t)mp_self.w.pos < len) &&
	    take_chunk(ts, len))
		return NULL;
	return mp_self.w.pos;
}

/* ts less the last record's in this chunk (clamped: never backwards). */
static inline uint64_t ts_delta(uint64_t *ts)
{
	uint64_t base = mp_self.w.ts;

	if (MP_UNLIKELY(*ts < base))
		*ts = base;
	return *ts - base;
}

/* The record that ends at end (stamped ts) is complete: publish it. */
static inline void commit(uint8_t *end, uint64_t ts)
{
	struct mp_chunk_head *c = mp_self.w.chunk;

	mp_self.w.pos = end;
	mp_self.w.ts = ts;
	mp_atomic_store_release_u32(&c->used, (uint32_t)(end - (uint8_t *)(c + 1)));
}

MP_REALIGN static void thread_start(void)
{
	struct mp_rec_thread r;

	mp_self.tid = (uint32_t)mp_syscall(SYS_gettid);
	mp_self.w.serial = mp_atomic_add_relaxed_u32(&thread_serials, 1) + 1;
	exit_hook_arm();
	memset(&r, 0, sizeof(r));
	r.h.type = MP_REC_THREAD;
	r.h.size = sizeof(r);
	r.tid = mp_self.tid;
	r.serial = mp_self.w.serial;
	r.parent_serial = mp_self.w.parent_serial;
	mp_prctl(PR_GET_NAME, (unsigned long)r.name, 0, 0, 0);
	r.name[15] = 0;
	mp_write_record(&r.h);
}

/*
 * "size resident shared ..." (pages) read from a statm file: the number of
 * fields read (2 or 3; a statm without the third, which Linux always has,
 * still gives the RSS), or -1: unreadable.
 */
static int parse_statm(int fd, uint64_t v[3])
{
	char buf[128];
	ssize_t n, i;
	int k = 0, digits = 0;

	v[0] = v[1] = v[2] = 0;
	n = mp_syscall(SYS_pread64, fd, buf, sizeof(buf) - 1, 0); /* not a cancellation point */
	if (n <= 0)
		return -1;
	/* size, resident, shared (resident pages of files and shared memory) */
	for (i = 0; i < n && k < 3; i++) {
		if (buf[i] >= '0' && buf[i] <= '9') {
			v[k] = v[k] * 10 + (uint64_t)(buf[i] - '0');
			digits = 1;
		} else if (digits) {
			k++;
			digits = 0;
		}
	}
	if (k < 3 && digits)
		k++; /* the last field ended the read */
	return k < 2 ? -1 : k;
}

/* statm opened for one read (/proc/thread-self's when thread is set). */
static int parse_statm_once(int thread, uint64_t v[3])
{
	int fd = mp_proc_open("statm", thread);
	int k = fd < 0 ? -1 : parse_statm(fd, v);

	if (fd >= 0)
		mp_sys_close(fd);
	return k;
}

/* The process's size, resident memory and resident anonymous memory
 * (UINT64_MAX: not known), in bytes, from /proc/self/statm. */
static int read_statm(uint64_t *vm, uint64_t *res, uint64_t *anon)
{
	uint64_t v[3];
	int k = -1;

	/* k stays -1 when the fd is not ours any more (the program closed it, reused its number) */
	if (statm_each_time)
		k = parse_statm_once(0, v);
	else if (mp_fd_ours(&statm_fd))
		k = parse_statm(statm_fd.fd, v);
	/* all zeros: the main thread has left; this thread's view */
	if (k > 0 && !v[0])
		k = parse_statm_once(1, v);
	if (k < 0)
		return -1;
	*vm = v[0] * mp_header->page_size;
	*res = v[1] * mp_header->page_size;
	*anon = k < 3 ? UINT64_MAX : v[1] > v[2] ? (v[1] - v[2]) * mp_header->page_size : 0;
	return 0;
}

/* Write one MP_REC_RSS stamped ts; stops sampling if statm is unreadable. */
MP_REALIGN static void rss_write(uint64_t ts)
{
	struct mp_rec_rss r;
	uint64_t vm, res, anon, trace;
	int saved = errno;

	if (read_statm(&vm, &res, &anon)) {
		__atomic_store_n(&rss.next_ns, UINT64_MAX, __ATOMIC_RELAXED);
		statm_fd.fd = -1; /* not ours any more, or never was: never close it */
		statm_each_time = 0;
		errno = saved;
		return;
	}
	errno = saved;
	trace = mp_trace_resident();
	memset(&r, 0, sizeof(r));
	r.h.type = MP_REC_RSS;
	/* without anon_bytes when statm had no third field (readers check the size) */
	r.h.size = anon == UINT64_MAX ? offsetof(struct mp_rec_rss, anon_bytes) : sizeof(r);
	r.rss_bytes = res > trace ? res - trace : 0;
	r.vm_bytes = vm;
	r.trace_bytes = trace;
	r.anon_bytes = anon; /* the trace is a file: never in it */
	write_framed(&r.h, ts);
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
	if (!mp_trace_ok || !rss.interval_ns || (statm_fd.fd < 0 && !statm_each_time))
		return;
	if (MP_UNLIKELY(!mp_self.w.serial))
		thread_start();
	rss_write(mp_now());
}

/*
 * Once the trace is open: the thread-exit hook that releases a finished
 * thread's chunk (made once per process), and resident-memory sampling
 * (MEMPROV_RSS_INTERVAL_MS).
 */
void mp_rss_open(void)
{
	if (!exit_key_made && !pthread_key_create(&exit_key, thread_exit))
		exit_key_made = 1;
	mp_stamp_after(mp_now()); /* after the header's start */
	rss.interval_ns = (uint64_t)mp_config.rss_interval_ms * 1000000u;
	rss.next_ns = UINT64_MAX;
	if (!rss.interval_ns)
		return;
	statm_each_time = mp_fds_scarce();
	if (statm_each_time) {
		int fd = mp_proc_open("statm", 0);

		if (fd < 0)
			return;
		mp_sys_close(fd);
	} else if (mp_fd_adopt(&statm_fd, mp_proc_open("statm", 0))) {
		return;
	}
	rss.next_ns = mp_now() + rss.interval_ns;
}

/*
 * What every record starts with: tracing on, the thread known, the
 * timestamp, and an RSS sample when one is due. 0: tracing is off.
 */
static inline __attribute__((always_inline)) int record_start(enum mp_rec_type type,
							      uint64_t *ts)
{
	if (MP_UNLIKELY(!mp_trace_ok))
		return 0;
	if (MP_UNLIKELY(!mp_self.w.serial))
		thread_start();
	*ts = stamp();
	/* the THREAD record stays a thread's first */
	if (MP_UNLIKELY(*ts >= __atomic_load_n(&rss.next_ns, __ATOMIC_RELAXED)) &&
	    type != MP_REC_THREAD)
		rss_due(*ts);
	return 1;
}

/* A framed record, stamped ts (record_start done): h in its struct's layout. */
static void write_framed(struct mp_rec_head *h, uint64_t ts)
{
	uint8_t *p = room(ts, (size_t)h->size + 24);

	if (!p)
		return;
	p = mp_enc_framed(p, h, ts_delta(&ts));
	commit(p, ts);
}

void mp_write_record(struct mp_rec_head *h)
{
	uint64_t ts;

	if (MP_UNLIKELY(h->size > MP_MAX_RECORD) || !record_start((enum mp_rec_type)h->type, &ts))
		return;
	write_framed(h, ts);
}

/* A record in its struct's layout, zeroed, with its head filled in. */
#define REC_INIT(r, type_, flags_, fn_, kind_)                                \
	do {                                                                   \
		memset(&(r), 0, sizeof(r));                                    \
		(r).h.type = (type_);                                          \
		(r).h.flags = (uint8_t)(flags_);                               \
		(r).h.func = (uint16_t)(fn_);                                  \
		(r).h.kind = (uint8_t)(kind_);                                 \
		(r).h.size = sizeof(r);                                        \
	} while (0)

/*
 * The hot path: ALLOC and FREE, compact (memprov_codec.h). The encoder's
 * base (last ts and address) is read into locals first: stores through
 * the byte pointer could otherwise alias mp_self and force reloads.
 */
static inline __attribute__((always_inline)) void
write_compact(enum mp_rec_type type, unsigned flags, enum mp_func fn, enum mp_kind kind,
	      uint64_t addr, uint64_t size, uint64_t third, int n)
{
	uint64_t ts, base_addr;
	uint8_t *p;

	if (!record_start(type, &ts) || !(p = room(ts, MP_ENC_COMPACT_MAX)))
		return;
	base_addr = ~mp_self.w.addr;
	p = mp_enc_head(p, type, flags, fn, kind, ts_delta(&ts));
	p = mp_put_svarint(p, (int64_t)(addr - base_addr));
	if (n > 1)
		p = mp_put_uvarint(p, size);
	if (n > 2)
		p = mp_put_uvarint(p, third);
	mp_self.w.addr = ~addr;
	commit(p, ts);
}

void mp_write_alloc(enum mp_func fn, enum mp_kind kind, const void *addr, size_t size,
		    unsigned flags, uint64_t stack)
{
	write_compact(MP_REC_ALLOC, flags, fn, kind, (uintptr_t)addr, size, stack, 3);
}

void mp_write_free(enum mp_func fn, enum mp_kind kind, const void *addr,
		    unsigned flags)
{
	write_compact(MP_REC_FREE, flags, fn, kind, (uintptr_t)addr, 0, 0, 1);
}

void mp_write_unmap(const void *addr, size_t len, unsigned flags)
{
	write_compact(MP_REC_FREE, flags, MP_FN_munmap, MP_KIND_MMAP, (uintptr_t)addr, len, 0, 2);
}

void mp_write_gpu_alloc(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			uint64_t size, uint64_t stream, int device, int result,
			uint64_t extra, unsigned flags, uint64_t stack)
{
	struct mp_rec_gpu_alloc r;

	REC_INIT(r, MP_REC_GPU_ALLOC, flags, fn, kind);
	r.addr = addr;
	r.size = size;
	r.stack = stack;
	r.stream = stream;
	r.device = device;
	r.result = result;
	r.extra = extra;
	mp_write_record(&r.h);
}

void mp_write_gpu_free(enum mp_func fn, enum mp_kind kind, uint64_t addr,
		       uint64_t stream, int device, int result, unsigned flags)
{
	struct mp_rec_gpu_free r;

	REC_INIT(r, MP_REC_GPU_FREE, flags, fn, kind);
	r.addr = addr;
	r.stream = stream;
	r.device = device;
	r.result = result;
	mp_write_record(&r.h);
}

MP_REALIGN void mp_write_ctx_reset(enum mp_func fn, int device)
{
	struct mp_rec_ctx_reset r;

	REC_INIT(r, MP_REC_CTX_RESET, 0, fn, 0);
	r.device = device;
	mp_write_record(&r.h);
}

MP_REALIGN void mp_write_pythread(uint32_t tid, uint64_t stack)
{
	struct mp_rec_pythread r;

	REC_INIT(r, MP_REC_PYTHREAD, 0, 0, 0);
	r.tid = tid;
	r.stack = stack;
	mp_write_record(&r.h);
}

MP_REALIGN void mp_write_sigstack(uint64_t addr, uint64_t size)
{
	struct mp_rec_sigstack r;

	REC_INIT(r, MP_REC_SIGSTACK, 0, 0, 0);
	r.addr = addr;
	r.size = size;
	mp_write_record(&r.h);
}

void mp_record_mark(const char *label, unsigned flags)
{
	size_t n = label ? strnlen(label, 255) : 0;
	union {
		struct mp_rec_mark m;
		char buf[sizeof(struct mp_rec_mark) + 256 + 8];
	} r;

	memset(&r, 0, sizeof(r));
	r.m.h.type = MP_REC_MARK;
	r.m.h.flags = (uint8_t)flags;
	r.m.h.size = (uint16_t)MP_REC_ALIGN(sizeof(r.m) + n + 1);
	r.m.label_len = (uint32_t)n + 1;
	r.m.serial = mp_atomic_add_relaxed_u32(&mark_serials, 1) + 1;
	if (n)
		memcpy(r.m.label, label, n);
	mp_write_record(&r.m.h);
	mp_record_rss();
}

MP_REALIGN void mp_record_exit(int status, unsigned how)
{
	struct mp_rec_exit r;

	mp_record_rss();
	REC_INIT(r, MP_REC_EXIT, 0, 0, 0);
	r.status = status;
	r.how = how;
	mp_write_record(&r.h);
}

MP_REALIGN void mp_record_fork(pid_t child, uint32_t serial)
{
	struct mp_rec_fork r;

	REC_INIT(r, MP_REC_FORK, 0, 0, 0);
	r.child_pid = child;
	r.serial = serial;
	mp_write_record(&r.h);
}

/* MP_REC_STACK: n native return addresses, then npy Python frames. */
void mp_write_stack(uint64_t id, void *const *ip, int n, const struct mp_pyframe *py, int npy)
{
	uint64_t ts;
	uint8_t *p;

	if (n < 0 || n > MP_MAX_FRAMES || npy < 0 || npy > MP_MAX_PYFRAMES ||
	    !record_start(MP_REC_STACK, &ts) ||
	    !(p = room(ts, 48 + 10 * (size_t)n + 20 * (size_t)npy)))
		return;
	p = mp_enc_head(p, MP_REC_STACK, 0, 0, 0, ts_delta(&ts));
	p = mp_enc_stack_body(p, id, (const uint64_t *)(const void *)ip, (unsigned)n, py,
			      (unsigned)npy);
	commit(p, ts);
}

/* MP_REC_PYCODE: a Python code object's file and (qualified) name. */
MP_REALIGN void mp_write_pycode(uint32_t id, uint32_t line, const char *file, size_t flen,
		     const char *name, size_t nlen)
{
	union {
		struct mp_rec_pycode c;
		char buf[sizeof(struct mp_rec_pycode) + 2048 + 1024 + 8];
	} r;

	if (flen > 2047)
		file += flen - 2047, flen = 2047; /* keep the end of a long path */
	if (nlen > 1023)
		nlen = 1023;
	memset(&r.c, 0, sizeof(r.c));
	r.c.h.type = MP_REC_PYCODE;
	r.c.h.size = (uint16_t)MP_REC_ALIGN(sizeof(r.c) + flen + 1 + nlen + 1);
	r.c.code_id = id;
	r.c.first_line = line;
	r.c.file_len = (uint16_t)(flen + 1);
	r.c.name_len = (uint16_t)(nlen + 1);
	memset(r.c.names, 0, r.c.h.size - sizeof(r.c));
	memcpy(r.c.names, file, flen);
	memcpy(r.c.names + flen + 1, name, nlen);
	mp_write_record(&r.c.h);
}

/*
 * In the child of fork(), after trace_file.c dropped the parent's file:
 * a fresh process with no thread known and no chunk.
 */
void mp_writer_fork_child(void)
{
	/* /proc/self was resolved at open: this fd shows the parent */
	mp_fd_release(&statm_fd);
	rss.next_ns = UINT64_MAX;
	/*
	 * A child of a process in which more than one context recorded
	 * keeps precise stamps: its scan takes the other threads' events
	 * between the fork and the parent's FORK record as its own past and
	 * orders them against its own events by time; coarse stamps (up to
	 * a tick behind) would put the child's first events before them
	 * (t2215, children of a busy multithreaded parent).
	 */
	clk.owner = thread_serials > 1 ? OWNER_MULTI : 0;
	clk.switches = 0;
	thread_serials = 0;
	mark_serials = 0;
	memset(&mp_self.w, 0, sizeof(mp_self.w));
}
