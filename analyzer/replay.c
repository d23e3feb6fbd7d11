/*
 * replay.c - apply a trace's records to a model of live memory: blocks per
 * kind, realloc pairs, partial munmap, CUDA frees and context resets, and
 * the tables of stacks, code objects, modules, marks and threads.
 */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util.h"

void replay_init(struct replay *r, struct trace *t)
{
	memset(r, 0, sizeof(*r));
	r->trace = t;
}

static struct replay_block **table_of(struct replay *r, unsigned kind)
{
	return kind == MP_KIND_MMAP ? &r->mmaps : &r->blocks;
}

/*
 * The blocks' hash: one multiply (uthash's default hashes the key byte by
 * byte, the most of a replay's time on allocation churn). Only this file
 * finds or adds blocks, so the tables only ever see this hash.
 */
static unsigned block_hash(unsigned kind, uint64_t addr)
{
	return (unsigned)(((addr ^ (uint64_t)kind << 59) * 0x9e3779b97f4a7c15ull) >> 32);
}

static struct replay_block *block_find(struct replay *r, unsigned kind, uint64_t addr)
{
	struct replay_block_key key;
	struct replay_block *b;

	memset(&key, 0, sizeof(key));
	key.addr = addr;
	key.kind = (uint8_t)kind;
	HASH_FIND_BYHASHVALUE(hh, *table_of(r, kind), &key, sizeof(key), block_hash(kind, addr), b);
	return b;
}

static void kind_add(struct replay *r, const struct replay_block *b)
{
	struct replay_kind *k = &r->kinds[b->key.kind];

	k->live_bytes += block_bytes(b);
	k->live_blocks += b->weight;
	if (k->live_bytes > k->peak_bytes) {
		k->peak_bytes = k->live_bytes;
		k->peak_ts = r->now;
	}
	if (k->live_blocks > k->peak_blocks)
		k->peak_blocks = k->live_blocks;
}

/* Free b, taken out of the live set, unless an adopted array holds it. */
static void block_free(struct replay_block *b)
{
	if (b && !b->in_slab)
		free(b);
}

/* Take b out of the live set and its kind's live figures; b stays allocated. */
static void block_unlink(struct replay *r, struct replay_block *b)
{
	struct replay_kind *k = &r->kinds[b->key.kind];

	HASH_DEL(*table_of(r, b->key.kind), b);
	if (b->key.kind == MP_KIND_MMAP)
		range_index_remove(&r->mmap_index, b->key.addr);
	k->live_bytes -= block_bytes(b);
	k->live_blocks -= b->weight;
}

/* Put b in the live set, which has no block at its address. */
static void block_add(struct replay *r, struct replay_block *b)
{
	HASH_ADD_BYHASHVALUE(hh, *table_of(r, b->key.kind), key, sizeof(b->key),
			     block_hash(b->key.kind, b->key.addr), b);
	if (b->key.kind == MP_KIND_MMAP)
		range_index_set(&r->mmap_index, b->key.addr, b->key.addr + b->size, b);
	kind_add(r, b);
}

static void block_insert(struct replay *r, struct replay_block *b)
{
	struct replay_block *old;

	old = block_find(r, b->key.kind, b->key.addr);
	if (old) {
		/* its free was not seen (untraced path): the new block wins */
		block_unlink(r, old);
		block_free(old);
	}
	block_add(r, b);
}

static struct replay_block *block_new(unsigned kind, uint64_t addr, uint64_t size,
				      uint64_t stack, unsigned func, int device, uint64_t ts)
{
	struct replay_block *b = xcalloc(1, sizeof(*b));

	b->key.addr = addr;
	b->key.kind = (uint8_t)kind;
	b->size = size;
	b->stack = stack;
	b->func = (uint16_t)func;
	b->device = device;
	b->ts = ts;
	b->weight = 1;
	return b;
}

/* A free: take b out of the live set (it stays allocated for the caller). */
static void block_remove(struct replay *r, struct replay_block *b)
{
	block_unlink(r, b);
	r->kinds[b->key.kind].frees++;
}

static struct replay_thread *thread_get(struct replay *r, uint32_t serial)
{
	struct replay_thread *th;

	HASH_FIND(hh, r->threads, &serial, sizeof(serial), th);
	if (!th) {
		th = xcalloc(1, sizeof(*th));
		th->serial = serial;
		th->first_ts = r->now;
		HASH_ADD(hh, r->threads, serial, sizeof(serial), th);
	}
	return th;
}

static void drop_stash(struct replay_thread *th)
{
	block_free(th->stash);
	th->stash = NULL;
	th->realloc_pending = 0;
}

/* The thread's last GPU free is not to be undone any more. */
static void drop_gpu_stash(struct replay_thread *th)
{
	block_free(th->gpu_stash);
	th->gpu_stash = NULL;
	th->gpu_free_pending = 0;
}

static void note_failure(struct replay *r, unsigned func, unsigned kind, uint64_t size, int result)
{
	struct replay_failure_key key;
	struct replay_failure *f;

	memset(&key, 0, sizeof(key));
	key.func = (uint16_t)func;
	key.kind = (uint8_t)kind;
	key.size = size;
	key.result = result;
	HASH_FIND(hh, r->failures, &key, sizeof(key), f);
	if (!f) {
		f = xcalloc(1, sizeof(*f));
		f->key = key;
		HASH_ADD(hh, r->failures, key, sizeof(key), f);
	}
	f->count++;
}

static struct replay_func *func_of(struct replay *r, unsigned func)
{
	return &r->funcs[func < MP_FN_MAX ? func : 0];
}

/*
 * Sampling mode (MEMPROV_SAMPLE_BYTES = n): an allocation of size s < n
 * was recorded with probability 1 - exp(-s/n), so it stands for
 * 1 / (1 - exp(-s/n)) blocks like it, rounded.
 */
static uint32_t sample_weight(uint64_t size, uint64_t n)
{
	double w;

	if (!n || !size || size >= n)
		return 1;
	w = 1.0 / -expm1(-(double)size / (double)n);
	return w < 1.5 ? 1 : w > 4e9 ? 4000000000u : (uint32_t)(w + 0.5);
}

/*
 * pymalloc's own bookkeeping, charged to whichever line needed a new
 * arena: new_arena() grows its table of arena objects (48 bytes each, 16
 * at first, doubled each time: PyMem_RawRealloc, that is realloc) right
 * before it maps the arena, and marks the arena in its radix tree right
 * after, with PyMem_RawCalloc for a node the tree lacks (a bottom node of
 * 128 KiB for each 16 GiB of addresses, a middle one of 256 KiB for each
 * 512 TiB, on 64-bit CPython 3.10-3.13). These stay until the
 * interpreter ends: interpreter state, not the program's (a clean program
 * that once held more than 16 MiB of small objects failed the gate with
 * the table's 1.5 KiB at its line). Told apart by their place among the
 * thread's records, and, so that a block of the program's own made there
 * (a list of 96 items doubled, bytes(131039)) is never taken for them, by
 * what pymalloc holds: the table is the block realloc'd from the table
 * (the realloc from NULL of 768 B right before the trace's first arena),
 * doubled; a node is made only when the arena lies in a range of
 * addresses no arena of the trace lay in before, one per such range.
 */
#define PYA_TABLE 1
#define PYA_ARENA 2
#define PYA_FIRST 3 /* a realloc from NULL of 768 B: the table, if an arena follows */
#define PYA_TABLE_UNIT 768u /* 16 arena objects of 48 bytes */
#define PYA_BOT_SHIFT 34   /* a bottom node's range: 16 GiB */
#define PYA_MID_SHIFT 49   /* a middle node's: 512 TiB */

static int pya_table_size(uint64_t old, uint64_t size)
{
	uint64_t n = size / PYA_TABLE_UNIT;

	return size % PYA_TABLE_UNIT == 0 && n >= 2 && !(n & (n - 1)) && old * 2 == size;
}

/* Is range (tagged with its level) new to the trace's arenas? Then noted. */
static int pya_new_range(struct replay *r, uint64_t range)
{
	size_t i;

	for (i = 0; i < r->n_pya_ranges; i++)
		if (r->pya_ranges[i] == range)
			return 0;
	if (r->n_pya_ranges == r->alloc_pya_ranges) {
		r->alloc_pya_ranges = r->alloc_pya_ranges ? 2 * r->alloc_pya_ranges : 8;
		r->pya_ranges = xrealloc(r->pya_ranges, r->alloc_pya_ranges * sizeof(*r->pya_ranges));
	}
	r->pya_ranges[r->n_pya_ranges++] = range;
	return 1;
}

/* The radix tree's nodes an arena at [lo, hi) needs: th->pya_bot, pya_mid. */
static void pya_nodes(struct replay *r, struct replay_thread *th, uint64_t lo, uint64_t hi)
{
	uint64_t last = hi - 1;

	th->pya_bot = pya_new_range(r, (lo >> PYA_BOT_SHIFT) << 1);
	if ((last >> PYA_BOT_SHIFT) != (lo >> PYA_BOT_SHIFT))
		th->pya_bot += pya_new_range(r, (last >> PYA_BOT_SHIFT) << 1);
	th->pya_mid = pya_new_range(r, (lo >> PYA_MID_SHIFT) << 1 | 1);
	if ((last >> PYA_MID_SHIFT) != (lo >> PYA_MID_SHIFT))
		th->pya_mid += pya_new_range(r, (last >> PYA_MID_SHIFT) << 1 | 1);
}

static void pya_note(struct replay *r, struct replay_thread *th, const struct mp_rec_alloc *a,
		     struct replay_block *b, uint64_t old_addr, uint64_t old_size)
{
	int state = th->pya_state;

	th->pya_state = 0;
	if (a->h.func == MP_FN_PyObject_ArenaAlloc && b->key.kind == MP_KIND_MMAP) {
		if (state == PYA_FIRST && !r->pya_table) {
			r->pya_table = th->pya_addr;
		} else if (state == PYA_TABLE && th->pya_stack == a->stack) {
			struct replay_block *t = block_find(r, MP_KIND_HEAP, th->pya_addr);

			if (t && t->stack == a->stack && t->func == MP_FN_realloc) {
				t->interp |= REPLAY_INTERP;
				r->pya_table = th->pya_addr;
			}
		}
		r->pya_arenas = 1;
		pya_nodes(r, th, a->addr, a->addr + a->size);
		th->pya_state = PYA_ARENA;
		th->pya_stack = a->stack;
	} else if (state == PYA_ARENA && a->h.func == MP_FN_calloc && a->stack == th->pya_stack &&
		   ((a->size == 1u << 17 && th->pya_bot) || (a->size == 1u << 18 && th->pya_mid))) {
		b->interp |= REPLAY_INTERP;
		if (a->size == 1u << 17)
			th->pya_bot--;
		else
			th->pya_mid--;
		th->pya_state = PYA_ARENA; /* up to four nodes: the arena's start and its end */
	} else if (a->h.func == MP_FN_realloc && (a->h.flags & MP_RF_REALLOC) &&
		   pya_table_size(old_size, a->size) &&
		   (!r->pya_table || old_addr == r->pya_table)) {
		th->pya_state = PYA_TABLE;
		th->pya_addr = a->addr;
		th->pya_stack = a->stack;
	} else if (a->h.func == MP_FN_realloc && !(a->h.flags & MP_RF_REALLOC) &&
		   a->size == PYA_TABLE_UNIT && !r->pya_arenas) {
		th->pya_state = PYA_FIRST;
		th->pya_addr = a->addr;
	}
}

/* Block b, just made by th: it joins th's run, or starts one (replay.h). */
static void run_add(struct replay_thread *th, struct replay_block *b)
{
	int big = b->size > REPLAY_RUN_SMALL;
	unsigned i;

	if (th->run_n && th->run_stack == b->stack && th->run_n < REPLAY_RUN_MAX &&
	    !(big && th->run_big)) {
		for (i = 0; i < th->run_n && th->run_size[i] != b->size; i++)
			;
		if (i == th->run_n)
			b->interp |= REPLAY_JOINED;
	}
	if (!(b->interp & REPLAY_JOINED)) {
		th->run_n = th->run_big = 0;
		th->run_stack = b->stack;
	}
	th->run_big |= big;
	th->run_size[th->run_n++] = b->size;
}

static void do_alloc(struct replay *r, struct replay_thread *th, const struct mp_rec_alloc *a)
{
	unsigned kind = a->h.kind == MP_KIND_MMAP ? MP_KIND_MMAP : MP_KIND_HEAP;
	int is_realloc = a->h.flags & MP_RF_REALLOC;
	struct replay_func *fn = func_of(r, a->h.func);
	struct replay_block *b;
	uint64_t old_size, old_addr;

	if (!(is_realloc && th->realloc_pending))
		fn->calls++;
	if (a->h.flags & MP_RF_FAILED || !a->addr) {
		fn->failed++;
		note_failure(r, a->h.func, kind, a->size, 0);
		if (is_realloc && th->stash) {
			/* realloc failed: the old block is still there */
			r->kinds[th->stash->key.kind].frees--;
			block_insert(r, th->stash);
			th->stash = NULL;
		}
		drop_stash(th);
		th->pya_state = 0;
		return;
	}
	old_size = is_realloc && th->stash ? th->stash->size : 0;
	old_addr = is_realloc && th->stash ? th->stash->key.addr : 0;
	drop_stash(th);
	b = block_new(kind, a->addr, a->size, a->stack, a->h.func, -1, a->h.ts);
	b->interp = a->h.flags & MP_RF_INTERP ? REPLAY_INTERP : 0;
	b->thread = (uint16_t)th->serial;
	run_add(th, b);
	pya_note(r, th, a, b, old_addr, old_size);
	if (a->h.flags & MP_RF_SAMPLED)
		b->weight = sample_weight(a->size, r->trace->hdr.sample_bytes);
	fn->bytes += block_bytes(b);
	r->kinds[kind].allocs += b->weight;
	r->kinds[kind].alloc_bytes += block_bytes(b);
	block_insert(r, b);
}

/*
 * munmap of [addr, addr+len): trims, splits or removes the mmap blocks it
 * meets, found through the range index in O(log n) (a walk over every
 * live mapping made replay quadratic in live mappings).
 */
static void do_unmap(struct replay *r, uint64_t addr, uint64_t len)
{
	uint64_t page = r->trace->hdr.page_size ? r->trace->hdr.page_size : 4096;
	uint64_t end = addr + ((len + page - 1) / page) * page;
	size_t n, i;

	n = range_index_find(&r->mmap_index, addr, end, (void ***)&r->unmap_hits,
			     &r->alloc_unmap_hits);
	for (i = 0; i < n; i++) {
		struct replay_block *b = r->unmap_hits[i];
		uint64_t bs = b->key.addr, be = b->key.addr + b->size;

		block_unlink(r, b);
		if (addr <= bs && end >= be) {
			block_free(b);
			continue;
		}
		if (bs < addr && be > end) {
			/* a hole in the middle: the tail becomes its own block */
			struct replay_block *t2 = block_new(MP_KIND_MMAP, end, be - end, b->stack,
							    b->func, b->device, b->ts);

			t2->weight = b->weight;
			t2->inherited = b->inherited;
			t2->thread = b->thread;
			block_insert(r, t2);
		}
		if (bs < addr) {
			b->size = addr - bs;
		} else {
			b->key.addr = end;
			b->size = be - end;
		}
		block_insert(r, b);
	}
	/* an untracked range (file mapping, glibc's own) is not a leak's free */
	if (n)
		r->kinds[MP_KIND_MMAP].frees++;
	else
		r->unmatched_unmaps++;
}

static void note_inherited_free(struct replay *r, const struct replay_block *b)
{
	if (!b->inherited)
		return;
	r->inherit.freed_blocks += b->weight;
	r->inherit.freed_bytes += block_bytes(b);
}

static void do_free(struct replay *r, struct replay_thread *th, const struct mp_rec_free *f)
{
	unsigned kind = f->h.kind == MP_KIND_MMAP ? MP_KIND_MMAP : MP_KIND_HEAP;
	struct replay_block *b;

	drop_stash(th);
	th->pya_state = 0;
	if (f->h.func == MP_FN_munmap) {
		func_of(r, f->h.func)->calls++;
		do_unmap(r, f->addr, ((const struct mp_rec_unmap *)f)->len);
		return;
	}
	func_of(r, f->h.func)->calls++;
	if (f->h.flags & MP_RF_REALLOC)
		th->realloc_pending = 1;
	if (!f->addr)
		return;
	b = block_find(r, kind, f->addr);
	if (!b) {
		r->unmatched_frees++;
		return;
	}
	block_remove(r, b);
	note_inherited_free(r, b);
	if (f->h.flags & MP_RF_REALLOC)
		th->stash = b;
	else
		block_free(b);
}

static void do_gpu_alloc(struct replay *r, struct replay_thread *th, const struct mp_rec_gpu_alloc *a)
{
	unsigned kind = a->h.kind < MP_KIND_COUNT ? a->h.kind : MP_KIND_NONE;
	struct replay_func *fn = func_of(r, a->h.func);
	struct replay_block *b;

	drop_stash(th);
	drop_gpu_stash(th);
	fn->calls++;
	if (a->h.flags & MP_RF_FAILED || a->result || !a->addr) {
		fn->failed++;
		note_failure(r, a->h.func, kind, a->size, a->result);
		return;
	}
	fn->bytes += a->size;
	r->kinds[kind].allocs++;
	r->kinds[kind].alloc_bytes += a->size;
	b = block_new(kind, a->addr, a->size, a->stack, a->h.func, a->device, a->h.ts);
	b->thread = (uint16_t)th->serial;
	block_insert(r, b);
}

/*
 * A GPU free. One that failed is recorded twice: before the call, as any
 * free, and after it with its result. The second, right after the first
 * on its thread, is the same call: it puts back the block the first took
 * away (a cudaFree that failed had hidden a block still live), and is not
 * counted as a call or an unmatched free again.
 */
static void do_gpu_free(struct replay *r, struct replay_thread *th, const struct mp_rec_gpu_free *f)
{
	struct replay_func *fn = func_of(r, f->h.func);
	struct replay_block *b;
	int again = th->gpu_free_pending && th->gpu_free_addr == f->addr &&
		    th->gpu_free_kind == f->h.kind;

	if (f->result && again) {
		struct replay_block *b0 = th->gpu_stash;

		if (b0) {
			r->kinds[b0->key.kind].frees--;
			block_insert(r, b0);
			if (b0->inherited) {
				r->inherit.freed_blocks -= b0->weight;
				r->inherit.freed_bytes -= block_bytes(b0);
			}
			th->gpu_stash = NULL;
		} else if (th->gpu_free_unmatched) {
			r->unmatched_frees--;
		}
		fn->calls--; /* counted once, below */
	}
	drop_stash(th);
	drop_gpu_stash(th);
	fn->calls++;
	if (f->result) {
		fn->failed++;
		note_failure(r, f->h.func, f->h.kind, 0, f->result);
		return;
	}
	if (!f->addr)
		return;
	th->gpu_free_pending = 1;
	th->gpu_free_addr = f->addr;
	th->gpu_free_kind = (uint8_t)f->h.kind;
	b = block_find(r, f->h.kind, f->addr);
	if (!b && f->h.kind == MP_KIND_DEVICE)
		b = block_find(r, MP_KIND_MANAGED, f->addr);
	th->gpu_free_unmatched = !b;
	if (!b) {
		r->unmatched_frees++;
		return;
	}
	block_remove(r, b);
	note_inherited_free(r, b);
	th->gpu_stash = b; /* until the thread's next CUDA record: freed then */
}

static void do_ctx_reset(struct replay *r, struct replay_thread *th, const struct mp_rec_ctx_reset *c)
{
	struct replay_block *b, *tmp;

	drop_stash(th);
	drop_gpu_stash(th);
	func_of(r, c->h.func)->calls++;
	HASH_ITER(hh, r->blocks, b, tmp) {
		unsigned k = b->key.kind;

		if (k != MP_KIND_DEVICE && k != MP_KIND_MANAGED && k != MP_KIND_PINNED)
			continue;
		if (c->device != -1 && b->device != c->device)
			continue;
		block_remove(r, b);
		block_free(b);
		r->ctx_reset_frees++;
	}
}

static void do_stack(struct replay *r, const struct mp_rec_stack *s)
{
	struct replay_stack *st;

	HASH_FIND(hh, r->stacks, &s->id, sizeof(s->id), st);
	if (st)
		return; /* written twice (two threads raced): same frames */
	st = xcalloc(1, sizeof(*st));
	st->id = s->id;
	st->ts = s->h.ts;
	st->n_native = s->n_native;
	st->n_python = s->n_python;
	st->native = xmalloc(8u * s->n_native);
	memcpy(st->native, s->native, 8u * s->n_native);
	st->python = xmalloc(sizeof(struct mp_pyframe) * s->n_python);
	memcpy(st->python, s->native + s->n_native, sizeof(struct mp_pyframe) * s->n_python);
	HASH_ADD(hh, r->stacks, id, sizeof(st->id), st);
}

static void do_pycode(struct replay *r, const struct mp_rec_pycode *p)
{
	struct replay_pycode *pc;

	HASH_FIND(hh, r->pycodes, &p->code_id, sizeof(p->code_id), pc);
	if (pc)
		return;
	pc = xcalloc(1, sizeof(*pc));
	pc->id = p->code_id;
	pc->first_line = p->first_line;
	pc->file = xstrdup(p->names);
	pc->name = xstrdup(p->names + p->file_len);
	HASH_ADD(hh, r->pycodes, id, sizeof(pc->id), pc);
}

static void do_module(struct replay *r, const struct mp_rec_module *m)
{
	struct replay_module *mod;

	ALLOC_GROW(r->modules, r->n_modules, r->alloc_modules);
	mod = &r->modules[r->n_modules++];
	memset(mod, 0, sizeof(*mod));
	mod->path = xstrdup(m->path);
	mod->base = m->base;
	mod->lo = m->lo;
	mod->hi = m->hi;
	mod->build_id_len = m->build_id_len;
	memcpy(mod->build_id, m->build_id, m->build_id_len);
	mod->load_ts = m->h.ts;
}

static void do_unload(struct replay *r, const struct mp_rec_unload *u)
{
	size_t i;

	for (i = r->n_modules; i-- > 0;) {
		if (r->modules[i].base == u->base && !r->modules[i].unload_ts) {
			r->modules[i].unload_ts = u->h.ts;
			return;
		}
	}
}

static int do_mark(struct replay *r, const struct mp_rec_mark *m)
{
	struct replay_mark *mk;
	int stop;

	ALLOC_GROW(r->marks, r->n_marks, r->alloc_marks);
	mk = &r->marks[r->n_marks++];
	mk->label = xstrdup(m->label_len ? m->label : "");
	mk->serial = m->serial;
	mk->flags = m->h.flags;
	mk->ts = m->h.ts;
	stop = r->on_mark ? r->on_mark(r, mk, r->arg) : 0;
	if (m->h.flags & MP_RF_MAIN_END)
		r->n_running = 0; /* they were this mark's */
	return stop;
}

/*
 * A thread still running Python code at the next mark: which one, its
 * frames. Only a thread told by its tid (CPython 3.11 and later), whose
 * serial mod 2^16 (what a block keeps) no other thread of the trace has.
 */
static void do_pythread(struct replay *r, const struct mp_rec_pythread *p)
{
	const struct replay_thread *t, *tt, *found = NULL;
	struct replay_running *e;

	r->n_pythreads++;
	if (!p->tid)
		return; /* 3.10: which thread is not known */
	HASH_ITER(hh, r->threads, t, tt) /* a tid reused: the latest thread */
		if (t->tid == p->tid && (!found || t->serial > found->serial))
			found = t;
	if (!found)
		return; /* it wrote nothing: it holds nothing */
	HASH_ITER(hh, r->threads, t, tt)
		if (t != found && (uint16_t)t->serial == (uint16_t)found->serial)
			return;
	ALLOC_GROW(r->running, r->n_running, r->alloc_running);
	e = &r->running[r->n_running++];
	e->stack = p->stack;
	e->thread = (uint16_t)found->serial;
	e->since = found->first_ts;
}

/*
 * Is code a list, dict or set comprehension? CPython before 3.12 runs
 * one as a function of its own, called and returned within its line
 * (3.12 inlines them): the value the line makes is made in that frame.
 */
static int comprehension(const struct replay *r, uint32_t code)
{
	static const char *const names[] = { "<listcomp>", "<dictcomp>", "<setcomp>" };
	const struct replay_pycode *pc = replay_find_pycode(r, code);
	size_t len, i;

	if (!pc || !pc->name)
		return 0;
	len = strlen(pc->name);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t nl = strlen(names[i]);

		if (len >= nl && !strcmp(pc->name + len - nl, names[i]))
			return 1;
	}
	return 0;
}

/*
 * Was b allocated in a frame still running at the main module's end, by
 * a thread still running then (replay.h, replay_snapshot_main_end)? The
 * running thread's entry + 1, or 0. A comprehension the block was made
 * in counts as its line's (`x = [f(i) for i in ...]` in a daemon
 * thread's loop, on 3.11: the list failed the gate at that line).
 */
static size_t block_running(const struct replay *r, const struct replay_block *b)
{
	const struct replay_stack *bs = b->stack ? replay_find_stack(r, b->stack) : NULL;
	unsigned skip = 0;
	size_t i;

	if (!r->n_running || !bs || !bs->n_python)
		return 0;
	while (skip + 1 < bs->n_python && comprehension(r, bs->python[skip].code_id))
		skip++;
	for (i = 0; i < r->n_running; i++) {
		const struct replay_running *e = &r->running[i];
		const struct replay_stack *ts;
		unsigned n = bs->n_python - skip, m, k;

		if (e->thread != b->thread || b->ts < e->since)
			continue;
		ts = replay_find_stack(r, e->stack);
		m = ts ? ts->n_python : 0;
		if (n > m)
			continue;
		/* python[] is innermost first: compare from the outermost */
		for (k = 0; k < n; k++) {
			const struct mp_pyframe *x = &bs->python[bs->n_python - 1 - k],
						*y = &ts->python[m - 1 - k];

			if (x->code_id != y->code_id || (k + 1 < n && x->line != y->line))
				break;
		}
		if (k == n)
			return i + 1;
	}
	return 0;
}

/* Per (running thread, stack): its newest live blocks, newest first. */
#define HELD_MAX (2 * REPLAY_RUN_MAX)
struct held_key {
	UT_hash_handle hh;
	struct held_id {
		uint64_t stack;
		uint64_t entry;
	} id;
	unsigned n;
	const struct replay_block *b[HELD_MAX];
};

/*
 * The blocks a running frame holds as its locals: of those that match
 * (block_running), the two newest values of each stack and thread only.
 * A local holds the last value its line made, and the value the line is
 * making now until it is stored (a thread that let the interpreter lock
 * go between the two: `buf = bytearray(n)` in a loop with no sleep had
 * both live at the mark; a daemon thread's `with open(path) as f` in a
 * loop, inside open() at the mark, the last file's lock and the new
 * file's lock and buffer), or two things made at once (`a, b = ...`);
 * older blocks of the same line that are still live were kept elsewhere
 * (cache.append(...) on each pass of the loop, or by an earlier call of
 * the same function). A value is a run of the thread's (replay.h): the
 * blocks it made one after another from that stack, of sizes all
 * different, one of them bigger than 64 bytes at most (a file's lock
 * and buffer; what a loop makes on each pass has the size it had on
 * the last, or something else was allocated or freed in between, or
 * it is a block that is not small: three blocks of 5,000 to 7,000 B
 * that three calls made and kept, nothing in between, are three values
 * and the oldest fails). Newest by time, and among equal times (a thread
 * that owns the coarse clock: trace_writer.c, stamp()) by the order the
 * replay added them, which is the thread's own order: a table's
 * iteration follows it (an earlier call's block, stamped in the same
 * tick as the two newest, was set apart with them).
 */
static struct held_key *held_newest(const struct replay *r)
{
	struct replay_block *const tables[2] = { r->blocks, r->mmaps };
	struct held_key *keys = NULL, *k;
	size_t i;

	for (i = 0; i < 2; i++) {
		const struct replay_block *b, *tmp;

		HASH_ITER(hh, tables[i], b, tmp) {
			struct held_id id;
			unsigned at;

			memset(&id, 0, sizeof(id));
			id.entry = block_running(r, b);
			if (!id.entry)
				continue;
			id.stack = b->stack;
			HASH_FIND(hh, keys, &id, sizeof(id), k);
			if (!k) {
				k = xcalloc(1, sizeof(*k));
				k->id = id;
				HASH_ADD(hh, keys, id, sizeof(k->id), k);
			}
			for (at = 0; at < k->n && b->ts < k->b[at]->ts; at++)
				;
			if (at == HELD_MAX)
				continue;
			if (k->n < HELD_MAX)
				k->n++;
			memmove(&k->b[at + 1], &k->b[at], (k->n - 1 - at) * sizeof(k->b[0]));
			k->b[at] = b;
		}
	}
	return keys;
}

static int block_held(const struct replay *r, const struct replay_block *b, struct held_key *keys)
{
	struct held_id id;
	struct held_key *k;
	unsigned i, values = 1;

	if (!keys)
		return 0;
	memset(&id, 0, sizeof(id));
	id.entry = block_running(r, b);
	if (!id.entry)
		return 0;
	id.stack = b->stack;
	HASH_FIND(hh, keys, &id, sizeof(id), k);
	for (i = 0; k && i < k->n; i++) {
		if (k->b[i] == b)
			return 1;
		/* the next older block is of this value if this one joined it */
		if (!(k->b[i]->interp & REPLAY_JOINED) && ++values > 2)
			return 0;
	}
	return 0;
}

static void do_thread(struct replay_thread *th, const struct mp_rec_thread *t)
{
	th->tid = t->tid;
	th->parent_serial = t->parent_serial;
	memcpy(th->name, t->name, sizeof(t->name));
	th->name[16] = 0;
}

/*
 * Classes of the scan at exit: only blocks that were live at the scan.
 * An inherited block is listed only by a scan that saw it (a child's scan
 * that read its parent's trace: MP_REACH_N_INHERITED).
 */
static void do_reach_blocks(struct replay *r, const struct mp_rec_reach_blocks *rb)
{
	uint32_t i;

	for (i = 0; i < rb->count; i++) {
		struct replay_block *b = block_find(r, rb->h.kind, rb->addr[i]);

		if (b && b->ts <= rb->scan_ts)
			b->reach = rb->cls;
	}
}

/* The scan's summary: every block it saw and did not list is reachable. */
static void do_reach(struct replay *r, const struct mp_rec_reach *rr)
{
	struct replay_block *const tables[2] = { r->blocks, r->mmaps };
	struct replay_block *b, *tmp;
	size_t i;

	r->have_reach = 1;
	r->reach = *rr;
	if (rr->status != MP_REACH_DONE)
		return;
	for (i = 0; i < 2; i++)
		HASH_ITER(hh, tables[i], b, tmp)
			if (!b->reach && b->ts <= rr->scan_ts &&
			    (!b->inherited || (rr->notes & MP_REACH_N_INHERITED)))
				b->reach = MP_REACH_REACHABLE;
}

/*
 * A thread's alternate signal stack set or disabled: the block that
 * starts at its address (a heap block, else a mapping) is the stack
 * while the thread keeps it; the one it had before is no longer.
 */
static void do_sigstack(struct replay *r, struct replay_thread *th, const struct mp_rec_sigstack *s)
{
	static const uint8_t kinds[] = { MP_KIND_HEAP, MP_KIND_MMAP };
	struct replay_block *b;
	size_t i;

	if (th->sigstack_addr) {
		b = block_find(r, th->sigstack_kind, th->sigstack_addr);
		if (b)
			b->interp &= (uint8_t)~REPLAY_SIGSTACK;
		th->sigstack_addr = 0;
	}
	if (!s->addr)
		return;
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		b = block_find(r, kinds[i], s->addr);
		if (!b || s->size > b->size)
			continue;
		b->interp |= REPLAY_SIGSTACK;
		th->sigstack_addr = s->addr;
		th->sigstack_kind = kinds[i];
		return;
	}
}

/* Apply one record. Returns nonzero when a callback asks to stop. */
static int apply(struct replay *r, const struct mp_rec_head *h)
{
	uint32_t serial = trace_last_serial(r->trace);
	struct replay_thread *th = r->last_thread;
	int stop = 0;

	if (!th || th->serial != serial)
		th = r->last_thread = thread_get(r, serial);

	r->now = h->ts;
	r->events++;
	if (h->type == MP_REC_FREE || h->type == MP_REC_GPU_ALLOC || h->type == MP_REC_GPU_FREE ||
	    h->type == MP_REC_CTX_RESET || (h->type == MP_REC_ALLOC && (h->flags & MP_RF_FAILED)))
		th->run_n = 0; /* the thread's run ends */
	switch (h->type) {
	case MP_REC_ALLOC: do_alloc(r, th, (const void *)h); break;
	case MP_REC_FREE: do_free(r, th, (const void *)h); break;
	case MP_REC_GPU_ALLOC: th->pya_state = 0; do_gpu_alloc(r, th, (const void *)h); break;
	case MP_REC_GPU_FREE: th->pya_state = 0; do_gpu_free(r, th, (const void *)h); break;
	case MP_REC_CTX_RESET: th->pya_state = 0; do_ctx_reset(r, th, (const void *)h); break;
	case MP_REC_STACK: do_stack(r, (const void *)h); break;
	case MP_REC_PYCODE: do_pycode(r, (const void *)h); break;
	case MP_REC_MODULE: do_module(r, (const void *)h); break;
	case MP_REC_UNLOAD: do_unload(r, (const void *)h); break;
	case MP_REC_THREAD: do_thread(th, (const void *)h); break;
	case MP_REC_REACH_BLOCKS: do_reach_blocks(r, (const void *)h); break;
	case MP_REC_REACH: do_reach(r, (const void *)h); break;
	case MP_REC_PYTHREAD: do_pythread(r, (const void *)h); break;
	case MP_REC_SIGSTACK: do_sigstack(r, th, (const void *)h); break;
	case MP_REC_MARK:
		drop_stash(th);
		stop = do_mark(r, (const void *)h);
		break;
	case MP_REC_EXIT: {
		const struct mp_rec_exit *e = (const void *)h;

		drop_stash(th);
		r->have_exit = 1;
		r->exit_status = e->status;
		r->exit_ts = h->ts;
		break;
	}
	default:
		break;
	}
	if (!stop && r->on_record)
		stop = r->on_record(r, h, r->arg);
	return stop;
}

int replay_run(struct replay *r)
{
	const struct mp_rec_head *h;

	while ((h = trace_next(r->trace)))
		if (apply(r, h))
			break;
	return 0;
}

static struct replay_live *snapshot(const struct replay *r, unsigned cls, int held, int sizes);

struct replay_live *replay_snapshot(const struct replay *r)
{
	return snapshot(r, MP_REACH_CLASS_COUNT, 0, 1);
}

struct replay_live *replay_snapshot_counts(const struct replay *r)
{
	return snapshot(r, MP_REACH_CLASS_COUNT, 0, 0);
}

struct replay_live *replay_snapshot_reach(const struct replay *r, unsigned cls)
{
	return snapshot(r, cls, 0, 1);
}

struct replay_live *replay_snapshot_main_end(const struct replay *r)
{
	return snapshot(r, MP_REACH_CLASS_COUNT, r->n_running > 0, 1);
}

/* Blocks of one size in one set of a snapshot. */
struct size_count {
	UT_hash_handle hh;
	struct size_id {
		struct replay_live *live;
		uint64_t size;
	} id;
	uint64_t blocks;
};

static void count_size(struct size_count **counts, struct replay_live *l, const struct replay_block *b)
{
	struct size_count *c;
	struct size_id id;

	memset(&id, 0, sizeof(id));
	id.live = l;
	id.size = b->size;
	HASH_FIND(hh, *counts, &id, sizeof(id), c);
	if (!c) {
		c = xcalloc(1, sizeof(*c));
		c->id = id;
		HASH_ADD(hh, *counts, id, sizeof(c->id), c);
	}
	c->blocks += b->weight;
	if (c->blocks > l->one_size)
		l->one_size = c->blocks;
}

/* cls MP_REACH_CLASS_COUNT: every block; held: tell key.held; sizes: count one_size. */
static struct replay_live *snapshot(const struct replay *r, unsigned cls, int held, int sizes)
{
	struct replay_block *const tables[2] = { r->blocks, r->mmaps };
	struct held_key *keys = held ? held_newest(r) : NULL, *k, *ktmp;
	struct replay_live *live = NULL;
	struct size_count *counts = NULL, *c, *ctmp;
	size_t i;

	for (i = 0; i < 2; i++) {
		const struct replay_block *b, *tmp;

		HASH_ITER(hh, tables[i], b, tmp) {
			struct replay_live_key key;
			struct replay_live *l;

			if (cls < MP_REACH_CLASS_COUNT && b->reach != cls)
				continue;
			memset(&key, 0, sizeof(key));
			key.stack = b->stack;
			key.func = b->func;
			key.kind = b->key.kind;
			key.inherited = b->inherited;
			key.interp = b->interp & REPLAY_INTERP;
			/* a lost one is not in use: no pointer to it is left */
			key.sigstack = (b->interp & REPLAY_SIGSTACK) && b->reach <= MP_REACH_REACHABLE;
			key.held = (uint8_t)block_held(r, b, keys);
			HASH_FIND(hh, live, &key, sizeof(key), l);
			if (!l) {
				l = xcalloc(1, sizeof(*l));
				l->key = key;
				HASH_ADD(hh, live, key, sizeof(key), l);
			}
			l->blocks += b->weight;
			l->bytes += block_bytes(b);
			if (sizes)
				count_size(&counts, l, b);
			else
				l->one_size = l->blocks;
		}
	}
	HASH_ITER(hh, counts, c, ctmp) {
		HASH_DEL(counts, c);
		free(c);
	}
	HASH_ITER(hh, keys, k, ktmp) {
		HASH_DEL(keys, k);
		free(k);
	}
	return live;
}

void replay_live_free(struct replay_live **live)
{
	struct replay_live *l, *tmp;

	HASH_ITER(hh, *live, l, tmp) {
		HASH_DEL(*live, l);
		free(l);
	}
}

struct replay_stack *replay_find_stack(const struct replay *r, uint64_t id)
{
	struct replay_stack *st;

	HASH_FIND(hh, r->stacks, &id, sizeof(id), st);
	return st;
}

struct replay_pycode *replay_find_pycode(const struct replay *r, uint32_t id)
{
	struct replay_pycode *pc;

	HASH_FIND(hh, r->pycodes, &id, sizeof(id), pc);
	return pc;
}

const struct replay_module *replay_find_module(const struct replay *r, uint64_t addr, uint64_t ts)
{
	const struct replay_module *best = NULL;
	size_t i;

	/* the latest load covering addr that was not unloaded before ts */
	for (i = 0; i < r->n_modules; i++) {
		const struct replay_module *m = &r->modules[i];

		if (addr < m->lo || addr >= m->hi)
			continue;
		if (m->unload_ts && m->unload_ts < ts)
			continue;
		if (!best || m->load_ts <= ts)
			best = m;
	}
	return best;
}

uint64_t replay_end_ts(const struct replay *r)
{
	const struct trace *t = r->trace;

	if (r->have_exit)
		return r->exit_ts;
	return t->hdr.end_mono_ns > t->last_ts ? t->hdr.end_mono_ns : t->last_ts;
}

const char *replay_stop_why(const struct mp_file_header *h)
{
	return h->stop_message[0] ? h->stop_message :
	       h->stop_reason == MP_STOP_NOSPACE ? "no space left for the trace" :
	       h->stop_reason == MP_STOP_MAP ? "cannot map the trace" :
	       h->stop_reason == MP_STOP_FSIZE ? "the file-size limit was reached" :
	       h->stop_reason == MP_STOP_FILE ? "the trace's descriptor was lost" :
	       h->stop_reason == MP_STOP_SECCOMP ? "the program installed a seccomp filter" :
	       "internal limit";
}

const char *replay_ending(const struct replay *r, char *buf, size_t len)
{
	const struct mp_file_header *h = &r->trace->hdr;

	switch (h->state) {
	case MP_STATE_EXITED:
		if (h->exit_status == MP_EXIT_UNKNOWN)
			snprintf(buf, len, "exited (main returned; status not recorded)");
		else if (h->flags & MP_HF_EXIT_BY_RUN)
			snprintf(buf, len, "exited with status %d, past every hook (seen by memprov run)",
				 h->exit_status);
		else
			snprintf(buf, len, "exited with status %d", h->exit_status);
		break;
	case MP_STATE_EXEC:
		snprintf(buf, len, "replaced by exec (a new trace continues)");
		break;
	case MP_STATE_KILLED: {
		const char *abbrev = sigabbrev_np(h->term_signal);

		snprintf(buf, len, "killed by SIG%s (signal %d): live at point of death",
			 abbrev ? abbrev : "?", h->term_signal);
		break;
	}
	case MP_STATE_STOPPED:
		snprintf(buf, len, "tracing stopped: %s", replay_stop_why(h));
		break;
	default:
		if (h->flags & MP_HF_GO)
			snprintf(buf, len, "a Go program's end, seen by no hook (its runtime exits by a "
				 "raw system call), or killed, or still running");
		else
			snprintf(buf, len, "killed or still running: live at point of death");
		break;
	}
	return buf;
}

void replay_release(struct replay *r)
{
	struct replay_block *b, *bt;
	struct replay_failure *f, *ft;
	struct replay_stack *s, *st;
	struct replay_pycode *p, *pt;
	struct replay_thread *t, *tt;
	size_t i;

	/* the tables at once, then each block (a delete a block is what a
	 * forked family's check spent on letting each child's go) */
	for (i = 0; i < 2; i++) {
		struct replay_block **table = i ? &r->mmaps : &r->blocks;

		b = *table;
		HASH_CLEAR(hh, *table);
		for (; b; b = bt) {
			bt = b->hh.next;
			block_free(b);
		}
	}
	for (i = 0; i < r->n_slabs; i++)
		free(r->slabs[i]);
	free(r->slabs);
	range_index_release(&r->mmap_index);
	free(r->unmap_hits);
	free(r->running);
	free(r->pya_ranges);
	HASH_ITER(hh, r->failures, f, ft) {
		HASH_DEL(r->failures, f);
		free(f);
	}
	HASH_ITER(hh, r->stacks, s, st) {
		HASH_DEL(r->stacks, s);
		free(s->native);
		free(s->python);
		free(s);
	}
	HASH_ITER(hh, r->pycodes, p, pt) {
		HASH_DEL(r->pycodes, p);
		free(p->file);
		free(p->name);
		free(p);
	}
	HASH_ITER(hh, r->threads, t, tt) {
		HASH_DEL(r->threads, t);
		free(t->stash);
		free(t->gpu_stash);
		free(t);
	}
	for (i = 0; i < r->n_modules; i++)
		free(r->modules[i].path);
	free(r->modules);
	for (i = 0; i < r->n_marks; i++)
		free(r->marks[i].label);
	free(r->marks);
	free(r->inherit.parent_path);
}

/*
 * The id the child's replay gives stack id of the parent's: stack ids
 * name a stack within one trace only (format v2 numbers them 1, 2, ... in
 * each process, and a forked child starts again at 1), so the parent's
 * are moved out of the child's way by flipping bit 62 (v2's small ids
 * never have it; its hashed ids and v1's hashes are 64-bit hashes).
 */
#define INHERITED_STACK (1ull << 62)

static uint64_t adopted_id(uint64_t id)
{
	return id ? id ^ INHERITED_STACK : 0;
}

/* A copy of the stack id of from, as adopted_id(id), unless r has it. */
static void adopt_stack(struct replay *r, const struct replay *from, uint64_t id)
{
	const struct replay_stack *s;
	struct replay_stack *st;

	if (!id || replay_find_stack(r, adopted_id(id)) || !(s = replay_find_stack(from, id)))
		return;
	st = xcalloc(1, sizeof(*st));
	*st = *s;
	st->id = adopted_id(id);
	memset(&st->hh, 0, sizeof(st->hh));
	st->native = xmalloc(8u * s->n_native + 1);
	memcpy(st->native, s->native, 8u * s->n_native);
	st->python = xmalloc(sizeof(struct mp_pyframe) * s->n_python + 1);
	memcpy(st->python, s->python, sizeof(struct mp_pyframe) * s->n_python);
	HASH_ADD(hh, r->stacks, id, sizeof(st->id), st);
}

/*
 * Each child of a parent seeds its replay with the parent's live blocks:
 * a shell that ran 300 $(...) with 200,000 blocks live had its children
 * checked in 22 s, most of it here. Into an empty table the blocks go
 * without a look for one at the same address (the parent's have none),
 * and a stack seen in the last few is not looked up again.
 */
#define ADOPT_SEEN 256

void replay_adopt(struct replay *r, const struct replay *from)
{
	struct replay_block *const tables[2] = { from->blocks, from->mmaps };
	const int empty[2] = { !r->blocks, !r->mmaps };
	uint64_t seen[ADOPT_SEEN] = { 0 };
	const struct replay_pycode *p, *pt;
	const struct replay_block *b, *tmp;
	size_t n = HASH_COUNT(from->blocks) + HASH_COUNT(from->mmaps), k = 0, i;
	/* one array for them all: a malloc and a free a block were a fifth of it */
	struct replay_block *slab = n ? xcalloc(n, sizeof(*slab)) : NULL;

	if (slab) {
		r->slabs = xrealloc(r->slabs, (r->n_slabs + 1) * sizeof(*r->slabs));
		r->slabs[r->n_slabs++] = slab;
	}
	for (i = 0; i < 2; i++)
		HASH_ITER(hh, tables[i], b, tmp) {
			struct replay_block *nb = &slab[k++];
			uint64_t *s = &seen[(b->stack * 0x9e3779b97f4a7c15ull) >> 56];

			nb->key.addr = b->key.addr;
			nb->key.kind = b->key.kind;
			nb->size = b->size;
			nb->stack = adopted_id(b->stack);
			nb->func = b->func;
			nb->device = b->device;
			nb->ts = b->ts;
			nb->in_slab = 1;
			nb->weight = b->weight;
			nb->inherited = 1;
			nb->interp = b->interp;
			if (empty[i])
				block_add(r, nb);
			else
				block_insert(r, nb);
			if (*s != b->stack || !b->stack) {
				adopt_stack(r, from, b->stack);
				*s = b->stack;
			}
			r->inherit.blocks += b->weight;
			r->inherit.bytes += block_bytes(b);
		}
	/* pymalloc's table and radix tree are the parent's, with its arenas */
	r->pya_table = from->pya_table;
	r->pya_arenas = from->pya_arenas;
	for (i = 0; i < from->n_pya_ranges; i++)
		pya_new_range(r, from->pya_ranges[i]);
	/* the child names its code objects again by the same ids, but only later */
	HASH_ITER(hh, from->pycodes, p, pt) {
		struct replay_pycode *pc;

		if (replay_find_pycode(r, p->id))
			continue;
		pc = xcalloc(1, sizeof(*pc));
		pc->id = p->id;
		pc->first_line = p->first_line;
		pc->file = xstrdup(p->file);
		pc->name = xstrdup(p->name);
		HASH_ADD(hh, r->pycodes, id, sizeof(pc->id), pc);
	}
}
