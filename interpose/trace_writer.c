/*
 * trace_writer.c - records into the trace, lock-free: each thread appends
 * to a chunk of its own (trace_file.c hands them out) with plain stores
 * and publishes each record with a release store of the chunk's used
 * length (see memprov_trace.h); resident-memory samples; one serializer
 * per record type, each given everything it writes (a stack is named by
 * the id stack.c gave it).
 *
 * Layer: 3 writer (docs/ARCHITECTURE.md): calls trace_file, config and sys.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomic.h"
#include "config.h"
#include "trace_file.h"
#include "writer.h"

__thread struct mp_thread mp_self __attribute__((tls_model("initial-exec")));

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


/* Hand this thread's writer context a fresh chunk; NULL when tracing
 * stopped. */
static struct mp_chunk_head *take_chunk(uint64_t ts)
{
	struct mp_chunk_head *c = mp_chunk_reserve();

	if (!c)
		return NULL;
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
MP_REALIGN static void rss_write(uint64_t ts)
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
	if (!mp_trace_ok || !rss.interval_ns || statm_fd.fd < 0)
		return;
	if (MP_UNLIKELY(!mp_self.w.serial))
		thread_start();
	rss_write(mp_now());
}

/* Start resident-memory sampling (MEMPROV_RSS_INTERVAL_MS) once the trace is open. */
void mp_rss_open(void)
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
	if (MP_UNLIKELY(!mp_trace_ok))
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

void mp_write_alloc(enum mp_func fn, enum mp_kind kind, const void *addr, size_t size,
		    unsigned flags, uint64_t stack)
{
	uint64_t w[3] = { (uintptr_t)addr, size, stack };

	emit(head_word(MP_REC_ALLOC, flags, fn, kind), w, 3);
}

void mp_write_free(enum mp_func fn, enum mp_kind kind, const void *addr,
		    unsigned flags)
{
	uint64_t w[1] = { (uintptr_t)addr };

	emit(head_word(MP_REC_FREE, flags, fn, kind), w, 1);
}

void mp_write_unmap(const void *addr, size_t len)
{
	struct mp_rec_unmap *r = begin_head(MP_REC_FREE, sizeof(*r), 0, MP_FN_munmap,
					    MP_KIND_MMAP);

	if (!r)
		return;
	r->addr = (uintptr_t)addr;
	r->len = len;
	mp_record_commit(r);
}

void mp_write_gpu_alloc(enum mp_func fn, enum mp_kind kind, uint64_t addr,
			uint64_t size, uint64_t stream, int device, int result,
			uint64_t extra, unsigned flags, uint64_t stack)
{
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

void mp_write_gpu_free(enum mp_func fn, enum mp_kind kind, uint64_t addr,
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

void mp_write_ctx_reset(enum mp_func fn, int device)
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

/* MP_REC_STACK: n native return addresses, then npy Python frames. */
void mp_write_stack(uint64_t id, void *const *ip, int n, const struct mp_pyframe *py, int npy)
{
	size_t len = sizeof(struct mp_rec_stack) + 8 * (size_t)n + 8 * (size_t)npy;
	struct mp_rec_stack *r = mp_record_begin(MP_REC_STACK, len);

	if (!r)
		return;
	r->id = id;
	r->n_native = (uint16_t)n;
	r->n_python = (uint16_t)npy;
	r->reserved = 0;
	memcpy(r->native, ip, 8 * (size_t)n);
	memcpy(&r->native[n], py, 8 * (size_t)npy);
	mp_record_commit(r);
}

/* MP_REC_PYCODE: a Python code object's file and (qualified) name. */
void mp_write_pycode(uint32_t id, uint32_t line, const char *file, size_t flen,
		     const char *name, size_t nlen)
{
	struct mp_rec_pycode *r;

	if (flen > 2047)
		file += flen - 2047, flen = 2047; /* keep the end of a long path */
	if (nlen > 1023)
		nlen = 1023;
	r = mp_record_begin(MP_REC_PYCODE, sizeof(*r) + flen + 1 + nlen + 1);
	if (!r)
		return;
	r->code_id = id;
	r->first_line = line;
	r->file_len = (uint16_t)(flen + 1);
	r->name_len = (uint16_t)(nlen + 1);
	r->reserved = 0;
	memset(r->names, 0, r->h.size - sizeof(*r));
	memcpy(r->names, file, flen);
	memcpy(r->names + flen + 1, name, nlen);
	mp_record_commit(r);
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
	thread_serials = 0;
	mark_serials = 0;
	memset(&mp_self.w, 0, sizeof(mp_self.w));
}
