/*
 * stack.c - capture the stack of an allocation (libunwind's unw_backtrace
 * for native frames, python.c for Python frames), hash it, and intern it:
 * an MP_REC_STACK is written the first time a hash is seen in this
 * process, and records refer to the stack by that hash.
 *
 * The intern set is a lock-free open-addressing table of 64-bit hashes
 * (CAS insert). When a probe sequence is full the stack record is simply
 * written again: readers deduplicate by id.
 */
#include <libunwind.h>
#include <string.h>
#include <sys/mman.h>

#include "atomic.h"
#include "config.h"
#include "internal.h"

#define INTERN_BITS 20
#define INTERN_SIZE (1u << INTERN_BITS)
#define INTERN_PROBES 32
#define OWN_FRAMES 16 /* room for memprov's own frames above the caller */

int (*volatile mp_python_capture)(struct mp_pyframe *out, int max);

static uint64_t *intern;
static uintptr_t self_lo, self_hi;

int mp_stack_init(void)
{
	if (!self_hi)
		mp_self_text(&self_lo, &self_hi);
	intern = mp_sys_mmap(NULL, INTERN_SIZE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (intern == MAP_FAILED) {
		intern = NULL;
		return -1;
	}
	return 0;
}

/* A forked child writes a new trace: every stack is new to it. */
void mp_stack_reset(void)
{
	if (intern)
		mp_sys_munmap(intern, INTERN_SIZE * sizeof(uint64_t));
	intern = NULL;
	mp_stack_init();
}

static inline uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

static uint64_t hash_frames(void *const *ip, int n, const struct mp_pyframe *py, int npy)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)n << 32 | (uint64_t)npy);
	int i;

	for (i = 0; i < n; i++)
		h = mix(h, (uintptr_t)ip[i]);
	for (i = 0; i < npy; i++)
		h = mix(h, (uint64_t)py[i].code_id << 32 | py[i].line);
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1;
}

/* 1 when h was not in the set (or the set is full): write its record. */
static int intern_insert(uint64_t h)
{
	uint32_t i = (uint32_t)h & (INTERN_SIZE - 1);
	int probe;

	if (!intern)
		return 1;
	for (probe = 0; probe < INTERN_PROBES; probe++) {
		uint64_t *slot = &intern[(i + (uint32_t)probe) & (INTERN_SIZE - 1)];
		uint64_t v = mp_atomic_load_relaxed_u64(slot);

		if (v == h)
			return 0;
		if (!v) {
			if (mp_atomic_cas_relaxed_u64(slot, 0, h))
				return 1;
			if (mp_atomic_load_relaxed_u64(slot) == h)
				return 0;
		}
	}
	return 1;
}

static void write_stack(uint64_t id, void *const *ip, int n,
			const struct mp_pyframe *py, int npy)
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

/*
 * Frames of libmemprov.so itself are dropped by address, not by count, so
 * that inlining cannot shift frame 0 off the hooked call's caller; skip is
 * kept for the interface and needs no value beyond 0.
 */
uint64_t mp_capture_stack(int skip)
{
	void *buf[MP_MAX_FRAMES + OWN_FRAMES];
	struct mp_pyframe py[MP_MAX_PYFRAMES];
	int n, first = 0, npy = 0;
	int (*pycap)(struct mp_pyframe *, int);
	uint64_t id;

	(void)skip;
	n = unw_backtrace(buf, mp_config.depth + OWN_FRAMES);
	while (first < n && (uintptr_t)buf[first] >= self_lo &&
	       (uintptr_t)buf[first] < self_hi)
		first++;
	n -= first;
	if (n > mp_config.depth)
		n = mp_config.depth;
	if (n < 0)
		n = 0;
	pycap = mp_python_capture;
	if (pycap && mp_config.python) {
		npy = pycap(py, MP_MAX_PYFRAMES);
		if (npy < 0 || npy > MP_MAX_PYFRAMES)
			npy = 0;
	}
	id = hash_frames(buf + first, n, py, npy);
	if (intern_insert(id))
		write_stack(id, buf + first, n, py, npy);
	return id;
}
