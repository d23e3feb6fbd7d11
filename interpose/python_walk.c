/*
 * python_walk.c - Python frames read from the calling thread's own
 * interpreter frame chain at allocation time, with no profile function
 * (MEMPROV_PYTHON_MODE=walk, the default where the layout checks pass).
 *
 * Inside an allocation hook the thread's frames cannot change: only the
 * thread itself pushes and pops them, and it is busy in malloc. So the
 * hook finds its own PyThreadState with PyGILState_GetThisThreadState (a
 * thread-specific-data lookup: no allocation, no lock, no GIL needed, so
 * a thread that released the GIL in numpy still reads its frames) and
 * follows the chain the way out-of-process samplers do:
 *
 *   3.10       tstate->frame, PyFrameObject.f_back, f_code, f_lasti
 *   3.11/3.12  tstate->cframe->current_frame, _PyInterpreterFrame.previous,
 *              f_code, prev_instr, owner
 *   3.13       tstate->current_frame, _PyInterpreterFrame.previous,
 *              f_executable, instr_ptr, owner
 *
 * skipping frames owned by the C stack and frames not yet started. Lines
 * come from PyCode_Addr2Line (a walk of the line table; it neither
 * allocates nor locks). Every offset below comes from that version's own
 * headers (offsetof in a program built with Py_BUILD_CORE against each
 * version's installed include/python3.X, its internal/ headers included).
 * They are checked once, at install time with the GIL held, against what
 * the C API says of the same frames (code objects, lines, tstate, file
 * names); any difference and python.c falls back to its profile function.
 * During a walk, every code object's type must be PyCode_Type, pointers
 * aligned, and the walk stops after PW_MAX_STEPS frames.
 *
 * Code objects get u32 ids without allocating: a process-wide lock-free
 * table keyed by a hash of (code pointer, co_firstlineno, co_filename
 * pointer, co_qualname or co_name pointer, the line table in brief:
 * pw_table_sig) gives the id; on a miss the
 * file and function names are read straight from the str objects' memory
 * (compact layouts; anything else reads "?"), hashed with the first line,
 * and looked up in a second table keyed by that content hash whose slot
 * number is the id. The thread that claims a content slot writes the
 * MP_REC_PYCODE from the hook itself. A forked child writes a new trace:
 * a generation number makes each id's record be written again there.
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls stack (the frames' hash),
 * trace_writer, config, elfsym and sys.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "config.h"
#include "elfsym.h"
#include "levels.h"
#include "python_api.h"
#include "stack.h"
#include "sys.h"

#define PW_MAX_STEPS 4096         /* frames followed, skipped ones included */
/*
 * The tables are in levels (levels.h); their last levels' sizes: the
 * code-pointer table 256 Ki slots, the content table (ids 1 .. about
 * 1 Mi) 1 Mi, 2^16 each under an address-space limit (ulimit -v), where
 * the 24 MiB they reserve (from the program's allocator, touched only as
 * used) were 24 MiB the program could not map (Python's MemoryError came
 * at 351 MiB of 400, not 384): 5.5 MiB then. A code that finds no slot
 * gets id 0, and reports name its frames "<unknown code>".
 */
static unsigned pw_ptr_bits = 18, pw_code_bits = 20;
#define PW_LINE_BITS 16           /* line cache: 64 Ki words */
#define PW_FILE_MAX 2047          /* bytes kept of a path: its end */
#define PW_NAME_MAX 1023

enum pw_kind { PW_FRAMEOBJ, PW_CFRAME, PW_CURRENT };

/* Where things are, per CPython minor version (x86-64, release build). */
struct pw_layout {
	int minor;
	enum pw_kind kind;
	uint16_t ts_frame;        /* tstate->frame / ->cframe / ->current_frame */
	uint16_t cf_current;      /* _PyCFrame.current_frame (3.11, 3.12) */
	uint16_t f_back;          /* f_back / previous */
	uint16_t f_code;          /* f_code / f_executable */
	uint16_t f_instr;         /* 3.10: int f_lasti; else prev_instr / instr_ptr */
	uint16_t f_owner;         /* char owner (3.11+) */
	int8_t owner_cstack;      /* owner value of C-stack shim frames, or -1 */
	uint16_t co_firstlineno;  /* int */
	uint16_t co_filename;
	uint16_t co_name;         /* co_qualname from 3.11 */
	uint16_t co_linetable;
	uint16_t co_code;         /* co_code_adaptive (3.11+) */
	uint16_t co_firsttraceable; /* int _co_firsttraceable (3.11+) */
	uint16_t s_ascii_size;    /* sizeof(PyASCIIObject): compact ASCII data */
	uint16_t s_compact_size;  /* sizeof(PyCompactUnicodeObject): other data */
	uint16_t ts_native_tid;   /* unsigned long tstate->native_thread_id (3.11+), or 0 */
};

#define PY_FRAME_OWNED_BY_GENERATOR 1

static const struct pw_layout pw_layouts[] = {
	{ .minor = 10, .kind = PW_FRAMEOBJ, .ts_frame = 24, .f_back = 24,
	  .f_code = 32, .f_instr = 96, .owner_cstack = -1,
	  .co_firstlineno = 40, .co_filename = 104, .co_name = 112, .co_linetable = 120,
	  .s_ascii_size = 48, .s_compact_size = 72 },
	{ .minor = 11, .kind = PW_CFRAME, .ts_frame = 56, .cf_current = 8,
	  .f_back = 48, .f_code = 32, .f_instr = 56, .f_owner = 69,
	  .owner_cstack = -1,
	  .co_firstlineno = 72, .co_filename = 112, .co_name = 128, .co_linetable = 136,
	  .co_code = 184, .co_firsttraceable = 168,
	  .s_ascii_size = 48, .s_compact_size = 72,
	  .ts_native_tid = 160 },
	{ .minor = 12, .kind = PW_CFRAME, .ts_frame = 56, .cf_current = 0,
	  .f_back = 8, .f_code = 0, .f_instr = 56, .f_owner = 70,
	  .owner_cstack = 3,
	  .co_firstlineno = 68, .co_filename = 112, .co_name = 128, .co_linetable = 136,
	  .co_code = 192, .co_firsttraceable = 176,
	  .s_ascii_size = 40, .s_compact_size = 56,
	  .ts_native_tid = 144 },
	{ .minor = 13, .kind = PW_CURRENT, .ts_frame = 72,
	  .f_back = 8, .f_code = 0, .f_instr = 56, .f_owner = 70,
	  .owner_cstack = 3,
	  .co_firstlineno = 68, .co_filename = 112, .co_name = 128, .co_linetable = 136,
	  .co_code = 200, .co_firsttraceable = 184,
	  .s_ascii_size = 40, .s_compact_size = 56,
	  .ts_native_tid = 160 },
};

/* PyASCIIObject: length at 16, state bits at 32 (same in 3.10 .. 3.13). */
#define S_LENGTH 16
#define S_STATE 32
#define S_KIND(st) (((st) >> 2) & 7)
#define S_COMPACT 0x20
#define S_ASCII 0x40
#define OB_TYPE 8

static const struct pw_layout *L;
static const struct py_api *pw_api;
static int pw_tid_ok;             /* ts_native_tid checked against the kernel's */
static void *pw_code_type, *pw_str_type;

struct pw_ptr_slot {
	uint64_t key;             /* hash of code pointer and its names; 0 empty */
	uint64_t val;             /* id | generation << 32; 0 until published */
};

struct pw_code_slot {
	uint64_t key;             /* hash of file, name, first line; 0 empty */
	uint32_t written;         /* generation whose trace has its PYCODE */
	uint32_t reserved;
};

static struct pw_ptr_slot *pw_ptrs;
static struct pw_code_slot *pw_codes;

/*
 * Line cache: PyCode_Addr2Line walks the line table from its start, and
 * the outer frames of a stack repeat from one allocation to the next. A
 * word holds a 44-bit tag of (code pointer, its names, line table
 * pointer, byte offset) and a 20-bit line; 0 is empty. One word: a reader
 * never sees half an entry.
 */
#define PW_LINE_MAX ((1u << 20) - 1)
static uint64_t *pw_lines;
static uint32_t pw_gen = 1;

/*
 * The memo: each thread state's frames as its last capture saw them,
 * outermost first, with their code ids and lines. The outer frames of a
 * stack repeat from one allocation to the next (a test runner's 60 of
 * them under every test's allocations), and a frame found there again
 * (same code object, same instruction, the same names, first line and
 * line table the two caches key on) takes its id and line from the memo
 * instead of two probes of the process-wide tables, whose runs grow with
 * the number of code objects (a few thousand in a pytest run).
 *
 * PM_SLOTS memos, a thread state's chosen by its address (of two
 * neighbours, the one that holds its frames, else a free one). A capture
 * holds its memo by a CAS on `busy` and gives it back at its end: one
 * that finds both busy (another thread on the same slots, a signal
 * handler's allocation inside a capture) uses the tables as before. A
 * memo taken from another thread state starts empty; one from an earlier
 * generation (a forked child) too, as its ids' PYCODE records are in the
 * parent's trace. Pointers are kept inverted: the memo holds no pointer
 * into the heap for a scan to follow. MEMPROV_UNWIND_MEMO=0: no memo.
 */
#define PM_SLOTS 64               /* 16 under an address-space limit */

struct pm_frame {
	uint64_t code, file, name;        /* inverted pointers; code 0: empty */
	uint64_t table;                   /* pw_table_sig */
	int32_t addr;                     /* pw_frame.addr */
	int32_t first;                    /* co_firstlineno, or -1: entering (line 0) */
	uint32_t code_id, line;
	uint64_t hash;                    /* mp_pyhash_step of this and the outer frames */
};

struct pm_memo {
	uint32_t busy;
	uint32_t gen;             /* pw_gen of its entries */
	uint64_t ts;              /* inverted thread state */
	uint32_t n;               /* entries that are valid */
	uint32_t pad;
	struct pm_frame f[MP_MAX_PYFRAMES];
};

static struct pm_memo *pm_memos;
static unsigned pm_slots = PM_SLOTS;

/* One frame as the walk sees it. */
struct pw_frame {
	const char *code;
	int addr;                 /* byte offset of the current instruction, or -1 */
	/*
	 * Entering its function: no instruction of its body run yet (3.10:
	 * no instruction; 3.11 on: at most up to the RESUME that starts
	 * it). What is allocated then is the interpreter's doing: a trace
	 * function's call event (3.11 makes the code's line table there,
	 * coverage's tracer reads the code), a frame's prologue. Recorded as
	 * line 0, which the analyzer shows as the function's first line.
	 */
	int entry;
};

static inline const char *rd_ptr(const char *base, unsigned off)
{
	const char *p;

	memcpy(&p, base + off, sizeof(p));
	return p;
}

static inline int rd_int(const char *base, unsigned off)
{
	int v;

	memcpy(&v, base + off, sizeof(v));
	return v;
}

static inline int pw_aligned(const void *p)
{
	return (uintptr_t)p >= 4096 && !((uintptr_t)p & 7);
}

/* The thread's innermost frame, or NULL. */
static const char *pw_top(const char *ts)
{
	const char *f = rd_ptr(ts, L->ts_frame);

	if (L->kind == PW_CFRAME && f)
		f = pw_aligned(f) ? rd_ptr(f, L->cf_current) : NULL;
	return f;
}

/*
 * Walk tstate's frames, innermost first, into out[] (at most max).
 * Returns how many, or -1 when something did not look like a frame.
 */
static int pw_walk(const char *ts, struct pw_frame *out, int max)
{
	/* the layout in locals: a store to out[] could be a store to L, for
	 * all the compiler knows, and every field would be loaded again */
	const struct pw_layout *l = L;
	const unsigned f_back = l->f_back, f_code = l->f_code, f_instr = l->f_instr;
	const unsigned f_owner = l->f_owner, co_code = l->co_code;
	const unsigned co_first = l->co_firsttraceable;
	const char cstack = (char)l->owner_cstack;
	const void *code_type = pw_code_type;
	const char *f = pw_top(ts), *code;
	int n = 0, steps;

	for (steps = 0; f && n < max; steps++, f = rd_ptr(f, f_back)) {
		if (!pw_aligned(f) || steps >= PW_MAX_STEPS)
			return -1;
		code = rd_ptr(f, f_code);
		if (l->kind != PW_FRAMEOBJ) {
			char owner = f[f_owner];

			if (owner == cstack)
				continue;
			if (!pw_aligned(code) || rd_ptr(code, OB_TYPE) != code_type)
				return -1;
			{
				const char *start = code + co_code;
				const char *instr = rd_ptr(f, f_instr);
				long first = 2 * (long)rd_int(code, co_first);
				long units;

				if (owner != PY_FRAME_OWNED_BY_GENERATOR && instr < start + first)
					continue; /* not started yet */
				units = (instr - start) / 2;
				out[n].addr = units < 0 || units > (1L << 28) ? -1 : (int)units * 2;
				out[n].entry = 2 * units <= first;
			}
		} else {
			if (!pw_aligned(code) || rd_ptr(code, OB_TYPE) != code_type)
				return -1;
			out[n].addr = rd_int(f, f_instr) * 2;
			out[n].entry = out[n].addr < 0; /* f_lasti -1: not started */
		}
		out[n++].code = code;
	}
	return n;
}

/* Append the UTF-8 of code point c to b (room checked by the caller). */
static size_t pw_utf8(char *b, uint32_t c)
{
	if (c < 0x80) {
		b[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | c >> 18);
	b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	b[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/*
 * A str object's text as UTF-8 into buf (cap bytes, NUL-terminated), read
 * from its memory: compact strings only; "?" for anything else. When the
 * text is longer than the room, its end is kept (paths end in the file).
 */
static size_t pw_str(const char *s, char *buf, size_t cap)
{
	uint32_t st;
	long len, i;
	size_t n = 0;
	int kind;
	const char *data;

	if (!pw_aligned(s) || rd_ptr(s, OB_TYPE) != pw_str_type)
		goto unknown;
	memcpy(&st, s + S_STATE, sizeof(st));
	memcpy(&len, s + S_LENGTH, sizeof(len));
	kind = S_KIND(st);
	if (!(st & S_COMPACT) || len < 0 || len > (1L << 24))
		goto unknown;
	if (st & S_ASCII) {
		i = len > (long)cap - 1 ? len - ((long)cap - 1) : 0;
		n = (size_t)(len - i);
		memcpy(buf, s + L->s_ascii_size + i, n);
		buf[n] = 0;
		return n;
	}
	if (kind != 1 && kind != 2 && kind != 4)
		goto unknown;
	data = s + L->s_compact_size;
	i = len > ((long)cap - 1) / 4 ? len - ((long)cap - 1) / 4 : 0;
	for (; i < len; i++) {
		uint32_t c;

		if (kind == 1)
			c = ((const uint8_t *)data)[i];
		else if (kind == 2)
			c = ((const uint16_t *)data)[i];
		else
			c = ((const uint32_t *)data)[i];
		if (c > 0x10ffff)
			goto unknown;
		n += pw_utf8(buf + n, c);
	}
	buf[n] = 0;
	return n;
unknown:
	buf[0] = '?';
	buf[1] = 0;
	return 1;
}

static inline uint64_t pw_mix(uint64_t h, uint64_t x)
{
	h ^= x;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

static uint64_t pw_hash_bytes(uint64_t h, const char *s, size_t n)
{
	while (n--) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

/*
 * A code object's line table in brief: its address, its length and its
 * first and last 8 bytes. Code made and dropped in a loop (exec of
 * generated source) comes back at the addresses the last code had, its
 * line table and names too, with other lines: the caches' keys and the
 * memo take in this, not the table's address alone. (A bytes object:
 * ob_size at 16, the bytes at 32, in 3.10 to 3.13.)
 */
static inline uint64_t pw_table_sig(const char *code)
{
	const char *t = rd_ptr(code, L->co_linetable);
	uint64_t size, a = 0, b = 0;

	if (!pw_aligned(t))
		return 0;
	memcpy(&size, t + 16, sizeof(size));
	if (size >= 8 && size < (1u << 28)) {
		memcpy(&a, t + 32, sizeof(a));
		memcpy(&b, t + 32 + size - 8, sizeof(b));
	} else if (size < 8) {
		memcpy(&a, t + 32, (size_t)size);
	}
	/* no multiply: the memo computes this for every frame it compares;
	 * inverted, as the memo keeps it: no pointer for a scan to follow */
	return ~((uintptr_t)t ^ size << 44 ^ a ^ (b << 29 | b >> 35));
}

/*
 * The content slot (id - 1) of a code object: by file, name and first
 * line; the first thread to see it writes its MP_REC_PYCODE, and so does
 * the first one in each later generation (a forked child). 0: table full.
 */
static uint32_t pw_code_slow(const char *code, uint32_t line)
{
	char file[PW_FILE_MAX + 1], name[PW_NAME_MAX + 1];
	size_t flen = pw_str(rd_ptr(code, L->co_filename), file, sizeof(file));
	size_t nlen = pw_str(rd_ptr(code, L->co_name), name, sizeof(name));
	uint64_t h = pw_hash_bytes(1469598103934665603ull ^ line, file, flen + 1);
	uint32_t i = 0, gen = __atomic_load_n(&pw_gen, __ATOMIC_RELAXED), w, p = 0;
	struct pw_code_slot *e = NULL;
	int l;

	h = pw_hash_bytes(h, name, nlen);
	h = h ? h : 1;
	for (l = 0; l < MP_LEVELS; l++) {
		for (p = 0; p < mp_level_probes(l); p++) {
			uint64_t k, zero = 0;

			i = mp_level_slot(l, pw_code_bits, h >> 7, p);
			e = &pw_codes[i];
			k = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
			if (k == h)
				goto found;
			if (!k && __atomic_compare_exchange_n(&e->key, &zero, h, 0,
							      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				goto found;
			if (zero == h)
				goto found;
		}
	}
	return 0;
found:
	w = __atomic_load_n(&e->written, __ATOMIC_RELAXED);
	if (w != gen && __atomic_compare_exchange_n(&e->written, &w, gen, 0,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		mp_write_pycode(i + 1, line, file, flen, name, nlen);
	return i + 1;
}

/* A code object's id (1 ..), or 0 when the tables are full. */
static uint32_t pw_code_id(const char *code)
{
	uint32_t line = (uint32_t)rd_int(code, L->co_firstlineno);
	uint32_t gen = __atomic_load_n(&pw_gen, __ATOMIC_RELAXED), id;
	uint64_t k = 0x9e3779b97f4a7c15ull, v;
	struct pw_ptr_slot *e;
	uint32_t p;
	int l;

	k = pw_mix(k, (uintptr_t)code);
	k = pw_mix(k, line);
	k = pw_mix(k, (uintptr_t)rd_ptr(code, L->co_filename));
	k = pw_mix(k, (uintptr_t)rd_ptr(code, L->co_name));
	k = pw_mix(k, pw_table_sig(code));
	k = k ? k : 1;
	for (l = 0; l < MP_LEVELS; l++) {
		for (p = 0; p < mp_level_probes(l); p++) {
			uint64_t cur, zero = 0;

			e = &pw_ptrs[mp_level_slot(l, pw_ptr_bits, k, p)];
			cur = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
			if (cur == k) {
				v = __atomic_load_n(&e->val, __ATOMIC_ACQUIRE);
				if (v && (uint32_t)(v >> 32) == gen)
					return (uint32_t)v;
				goto publish;
			}
			if (!cur && __atomic_compare_exchange_n(&e->key, &zero, k, 0,
								__ATOMIC_RELAXED,
								__ATOMIC_RELAXED))
				goto publish;
			if (zero == k)
				return pw_code_slow(code, line); /* being published */
		}
	}
	return pw_code_slow(code, line); /* the table is full */
publish:
	id = pw_code_slow(code, line);
	if (id)
		__atomic_store_n(&e->val, id | (uint64_t)gen << 32, __ATOMIC_RELEASE);
	return id;
}

/* The line a frame is at, through the line cache. */
static uint32_t pw_line(const struct pw_frame *f)
{
	uint64_t k = 0x2545f4914f6cdd1dull, v, tag;
	uint64_t *slot = NULL;
	uint32_t p;
	int line, l;

	k = pw_mix(k, (uintptr_t)f->code);
	k = pw_mix(k, pw_table_sig(f->code));
	k = pw_mix(k, (uintptr_t)rd_ptr(f->code, L->co_filename));
	k = pw_mix(k, (uintptr_t)rd_ptr(f->code, L->co_name));
	k = pw_mix(k, (uint64_t)(uint32_t)rd_int(f->code, L->co_firstlineno) << 32 |
		      (uint32_t)f->addr);
	tag = k & ~(uint64_t)PW_LINE_MAX;
	tag = tag ? tag : (uint64_t)1 << 20;
	/* the first empty slot of the key's runs takes it; when all are
	 * taken, the first of the last level's run (a cache: entries may
	 * be overwritten, a tag that matches is always right) */
	for (l = 0; l < MP_LEVELS; l++) {
		for (p = 0; p < mp_level_probes(l); p++) {
			slot = &pw_lines[mp_level_slot(l, PW_LINE_BITS, k >> 24, p)];
			v = __atomic_load_n(slot, __ATOMIC_RELAXED);
			if ((v & ~(uint64_t)PW_LINE_MAX) == tag)
				return (uint32_t)(v & PW_LINE_MAX);
			if (!v)
				goto miss;
		}
	}
	slot = &pw_lines[mp_level_slot(MP_LEVELS - 1, PW_LINE_BITS, k >> 24, 0)];
miss:
	line = pw_api->PyCode_Addr2Line((PyObject *)f->code, f->addr);
	if (line < 0)
		line = 0;
	if ((uint32_t)line < PW_LINE_MAX)
		__atomic_store_n(slot, tag | (uint32_t)line, __ATOMIC_RELAXED);
	return (uint32_t)line;
}

/* The memo of thread state ts, held; NULL when there is none free. */
static struct pm_memo *pm_take(const char *ts)
{
	uint64_t key = ~(uint64_t)(uintptr_t)ts;
	uint32_t h, gen = __atomic_load_n(&pw_gen, __ATOMIC_RELAXED), k;
	struct pm_memo *m[2];

	if (!pm_memos)
		return NULL;
	h = (uint32_t)(((uint64_t)(uintptr_t)ts * 0x9e3779b97f4a7c15ull) >> 40) & (pm_slots - 1);
	m[0] = &pm_memos[h];
	m[1] = &pm_memos[h ^ 1];
	if (m[1]->ts == key && m[0]->ts != key) {
		struct pm_memo *t = m[0];

		m[0] = m[1];
		m[1] = t;
	}
	for (k = 0; k < 2; k++) {
		uint32_t free_ = 0;

		if (!__atomic_compare_exchange_n(&m[k]->busy, &free_, 1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		if (m[k]->ts != key || m[k]->gen != gen) {
			m[k]->ts = key;
			m[k]->gen = gen;
			m[k]->n = 0;
		}
		return m[k];
	}
	return NULL;
}

static inline void pm_give(struct pm_memo *m)
{
	__atomic_store_n(&m->busy, 0, __ATOMIC_RELEASE);
}

/* The frames' ids and lines into out[], through memo m: fr[n - 1] is the
 * outermost, the memo's entry 0. Returns their mp_pyframes_hash. */
static uint64_t pm_lookup(struct pm_memo *m, const struct pw_frame *fr, int n,
			  struct mp_pyframe *out)
{
	uint64_t h = MP_PYHASH_SEED;
	int j, same = 1; /* the frames out of this one all as in the memo */

	for (j = 0; j < n; j++) {
		const struct pw_frame *f = &fr[n - 1 - j];
		struct mp_pyframe *o = &out[n - 1 - j];
		struct pm_frame *e = &m->f[j];
		uint64_t file = ~(uint64_t)(uintptr_t)rd_ptr(f->code, L->co_filename);
		uint64_t name = ~(uint64_t)(uintptr_t)rd_ptr(f->code, L->co_name);
		uint64_t table = pw_table_sig(f->code);
		int32_t first = f->entry ? -1 : rd_int(f->code, L->co_firstlineno);

		if ((uint32_t)j < m->n && e->code == ~(uint64_t)(uintptr_t)f->code &&
		    e->addr == f->addr && e->first == first && e->file == file &&
		    e->name == name && e->table == table) {
			o->code_id = e->code_id;
			o->line = e->line;
			if (same) {
				h = e->hash;
				continue;
			}
		} else {
			same = 0;
			o->code_id = pw_code_id(f->code);
			o->line = f->entry ? 0 : pw_line(f);
			e->code = ~(uint64_t)(uintptr_t)f->code;
			e->addr = f->addr;
			e->first = first;
			e->file = file;
			e->name = name;
			e->table = table;
			e->code_id = o->code_id;
			e->line = o->line;
		}
		h = mp_pyhash_step(h, o);
		e->hash = h;
	}
	m->n = (uint32_t)n;
	return h;
}

/* MP_REALIGN: the memo's compares keep vectors in its frame. */
MP_REALIGN int pywalk_capture(struct mp_pyframe *out, int max, uint64_t *hash)
{
	struct pw_frame fr[MP_MAX_PYFRAMES];
	struct pm_memo *m;
	const char *ts;
	int n, i;

	if (!pw_api->Py_IsInitialized())
		return 0; /* finalizing: other threads' states are going away */
	ts = (const char *)pw_api->PyGILState_GetThisThreadState();
	if (!ts)
		return 0;
	if (max > MP_MAX_PYFRAMES)
		max = MP_MAX_PYFRAMES;
	n = pw_walk(ts, fr, max);
	if (n > 0 && (m = pm_take(ts)) != NULL) {
		*hash = pm_lookup(m, fr, n, out);
		pm_give(m);
		return n;
	}
	for (i = 0; i < n; i++) {
		out[i].code_id = pw_code_id(fr[i].code);
		out[i].line = fr[i].entry ? 0 : pw_line(&fr[i]);
	}
	*hash = mp_pyframes_hash(out, n);
	return n > 0 ? n : 0;
}

int pywalk_capture_thread(const void *ts, struct mp_pyframe *out, int max, uint32_t *tid)
{
	struct pw_frame fr[MP_MAX_PYFRAMES];
	unsigned long v = 0;
	int n, i;

	if (!L || !ts)
		return 0;
	if (pw_tid_ok)
		memcpy(&v, (const char *)ts + L->ts_native_tid, sizeof(v));
	*tid = v <= UINT32_MAX ? (uint32_t)v : 0;
	if (max > MP_MAX_PYFRAMES)
		max = MP_MAX_PYFRAMES;
	n = pw_walk((const char *)ts, fr, max);
	for (i = 0; i < n; i++) {
		out[i].code_id = pw_code_id(fr[i].code);
		out[i].line = fr[i].entry ? 0 : pw_line(&fr[i]);
	}
	return n > 0 ? n : 0;
}

void pywalk_fork_child(void)
{
	unsigned i;

	__atomic_add_fetch(&pw_gen, 1, __ATOMIC_RELAXED);
	/* the child's one thread: memos other threads held at the fork are free */
	for (i = 0; pm_memos && i < pm_slots; i++)
		__atomic_store_n(&pm_memos[i].busy, 0, __ATOMIC_RELAXED);
}

int pywalk_setup(const struct py_api *api, int minor)
{
	size_t i;

	for (i = 0; i < sizeof(pw_layouts) / sizeof(pw_layouts[0]); i++)
		if (pw_layouts[i].minor == minor)
			L = &pw_layouts[i];
	pw_code_type = mp_elf_lookup("PyCode_Type");
	pw_str_type = mp_elf_lookup("PyUnicode_Type");
	pw_api = api;
	if (!L || !pw_code_type || !pw_str_type || !api->PyGILState_GetThisThreadState ||
	    !api->PyCode_Addr2Line || !api->PyThreadState_GetFrame) {
		L = NULL;
		return -1;
	}
	return 0;
}

/* Does attribute name of code say through the API what we read at off? */
static int pw_verify_attr(PyObject *code, const char *name, unsigned off, int is_str)
{
	char buf[PW_FILE_MAX + 1];
	PyObject *v = pw_api->PyObject_GetAttrString(code, name);
	const char *u;
	Py_ssize_t len;
	int ok;

	if (!v)
		return -1;
	if (!is_str) {
		ok = pw_api->PyLong_AsLong(v) == rd_int((const char *)code, off);
	} else {
		u = pw_api->PyUnicode_AsUTF8AndSize(v, &len);
		ok = u && rd_ptr((const char *)code, off) == (const char *)v &&
		     (size_t)len < sizeof(buf) &&
		     pw_str((const char *)v, buf, sizeof(buf)) == (size_t)len &&
		     !memcmp(buf, u, (size_t)len);
	}
	pw_api->Py_DecRef(v);
	return ok ? 0 : -1;
}

/*
 * Install time, GIL held, not in a hook: does the walk see exactly the
 * frames, code objects and lines the C API gives for this thread? Also
 * allocates the tables. 0: walk mode may be used.
 */
int pywalk_verify(void)
{
	struct pw_frame fr[64];
	PyThreadState *me;
	PyFrameObject *f, *back;
	PyObject *code;
	int n, i = 0, ok = 1;

	if (!L)
		return -1;
	me = pw_api->PyThreadState_Get();
	if ((PyThreadState *)pw_api->PyGILState_GetThisThreadState() != me)
		return -1;
	n = pw_walk((const char *)me, fr, 64);
	if (n <= 0)
		return -1;
	for (f = pw_api->PyThreadState_GetFrame(me); f; f = back) {
		code = pw_api->PyFrame_GetCode(f);
		if (ok && (i >= n || (const char *)code != fr[i].code ||
			   pw_api->PyFrame_GetLineNumber(f) !=
			   pw_api->PyCode_Addr2Line(code, fr[i].addr)))
			ok = 0;
		if (ok && i == 0)
			ok = !pw_verify_attr(code, "co_filename", L->co_filename, 1) &&
			     !pw_verify_attr(code, L->minor >= 11 ? "co_qualname" : "co_name",
					     L->co_name, 1) &&
			     !pw_verify_attr(code, "co_firstlineno", L->co_firstlineno, 0);
		pw_api->Py_DecRef(code);
		back = pw_api->PyFrame_GetBack(f);
		pw_api->Py_DecRef((PyObject *)f);
		i++;
	}
	pw_api->PyErr_Clear();
	if (!ok || i != n)
		return -1;
	if (L->ts_native_tid) {
		unsigned long v;

		memcpy(&v, (const char *)me + L->ts_native_tid, sizeof(v));
		pw_tid_ok = v == (unsigned long)mp_syscall(SYS_gettid);
	}
	if (mp_as_limited()) {
		pw_ptr_bits = pw_code_bits = 16;
		pm_slots = 16;
	}
	pw_ptrs = calloc(mp_levels_slots(pw_ptr_bits), sizeof(*pw_ptrs));
	pw_codes = calloc(mp_levels_slots(pw_code_bits), sizeof(*pw_codes));
	pw_lines = calloc(mp_levels_slots(PW_LINE_BITS), sizeof(*pw_lines));
	/* touched only as thread states use them; none: the tables alone */
	if (mp_config.unwind_memo)
		pm_memos = calloc(pm_slots, sizeof(*pm_memos));
	if (!pw_ptrs || !pw_codes || !pw_lines) {
		free(pw_ptrs);
		free(pw_codes);
		free(pw_lines);
		free(pm_memos);
		pm_memos = NULL;
		return -1;
	}
	return 0;
}
