/*
 * reach_live.c - the blocks live at the scan, from the process's own
 * trace (reach_trace.c), as the analyzer's replay would see them at that
 * instant.
 *
 * No merge by time is needed for heap, pinned, GPU and registered blocks:
 * for each address the event with the greatest timestamp decides
 * (allocations are stamped after the real call returned, frees before the
 * real free started, so a later owner of an address always has a later
 * stamp). An address whose latest event is a free stamped at or before
 * the horizon (trace_iter.h: no record still to be read is older) is
 * forgotten at once, so the table holds the live blocks and the recent
 * frees, not every address the process ever used (churn: 10,000 live
 * against 190,000 used, a table of 1 MiB instead of 16 in the cache),
 * once it holds FORGET_FROM addresses. At the horizon too: a record read
 * later with the free's stamp is of the same writer context (an event
 * another context made after the free is stamped after it:
 * trace_writer.c, stamp()), hence after the free, and it decides anyway;
 * coarse stamps are often equal to the next chunk's start (t2215
 * latefree: the scan's memory 6.3 MB in 3 of 10 runs with the bound
 * strict, 4.0 MB in 10 of 10 with it not). A free stamped after the
 * horizon (another thread's chunk read later started before it) waits in its
 * thread's queue until the horizon passes it. Horizons are only known
 * for the process's own trace when every thread is stopped. A free that
 * is the first half of a realloc/mremap waits for its thread's next
 * event: a failed resize leaves the old block valid.
 * Anonymous mappings can be trimmed or split by a partial munmap, so
 * their events (few next to malloc's) are sorted by time and replayed
 * through an ordered set of ranges (a treap). Each range remembers the
 * mapping it is a piece of (its group): the pieces a partial munmap
 * leaves, and a MAP_FIXED mmap over part of a mapping (the munmap flagged
 * MP_RF_FIXED, then the thread's next mapping), are one group, linked in
 * a ring (rblock.sib) for reach_mark.c.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls reach_trace, reach_mem and sys.
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reach_int.h"
#include "trace_iter.h"

/* One address of the heap, pinned, GPU or registered space. */
/*
 * 24 bytes an address (32 before, with the size, kind and device apart):
 * the table is most of a big scan's memory (3 million live blocks: 403
 * MB of its own, 134 B a block, the table at half load and its old copy
 * while it doubles).
 */
struct lentry {
	uint64_t key;     /* addr | tag << 58; 0: empty slot */
	uint64_t ts;      /* the latest event's timestamp */
	uint64_t meta;    /* size, kind, live, unsure, device + 1: the M_ fields */
};

#define M_SIZE ((1ull << 44) - 1) /* 16 TiB: bigger blocks are scanned up to that */
#define M_KIND_SHIFT 44           /* 4 bits: enum mp_kind */
#define M_LIVE (1ull << 48)       /* the latest event is an allocation */
#define M_UNSURE (1ull << 49)     /* that allocation is in an ancestor's fork (rl_source) */
#define M_DEV_SHIFT 50            /* 10 bits: the device + 1 (0: none, -1) */
#define M_DEV_MAX 1022
#define M_CHUNK (1ull << 60)      /* made by the malloc family: a malloc chunk */

_Static_assert(MP_KIND_COUNT <= 16, "a kind fits 4 bits");

static inline uint64_t m_size(const struct lentry *e)
{
	return e->meta & M_SIZE;
}

static inline unsigned m_kind(const struct lentry *e)
{
	return (unsigned)(e->meta >> M_KIND_SHIFT) & 15;
}

static inline int32_t m_device(const struct lentry *e)
{
	return (int32_t)((e->meta >> M_DEV_SHIFT) & 1023) - 1;
}

static inline uint64_t m_pack(uint64_t size, unsigned kind, int unsure, int32_t device,
			      int chunk)
{
	uint64_t dev = device < 0 ? 0 : device > M_DEV_MAX ? M_DEV_MAX + 1 : (uint64_t)device + 1;

	return (size > M_SIZE ? M_SIZE : size) | (uint64_t)kind << M_KIND_SHIFT | M_LIVE |
	       (unsure ? M_UNSURE : 0) | dev << M_DEV_SHIFT | (chunk ? M_CHUNK : 0);
}

/* A block of this function is a malloc chunk, laid out as glibc lays them. */
static inline int chunk_func(unsigned func)
{
	return func >= MP_FN_malloc && func <= MP_FN_pvalloc; /* not PyMem's, pymalloc's */
}

enum { TAG_HEAP = 1, TAG_PINNED = 2, TAG_GPU = 3, TAG_REG = 4 };
#define TAG_SHIFT 58
#define ADDR_MASK ((1ull << TAG_SHIFT) - 1)

/* An event on anonymous mappings, replayed in time order. */
enum { MEV_MAP, MEV_UNMAP, MEV_FREE };
#define MEV_PLACED 0x100 /* with MEV_MAP: MP_RF_PLACED */

struct mev {
	uint64_t ts, seq;
	uint64_t addr, len;
	uint32_t type;
	/* MEV_MAP: seq + 1 of the MAP_FIXED unmap it follows (0: none);
	   MEV_UNMAP: 1 when it is such an unmap */
	uint32_t link;
};

/* A thread's slot: the first half of a resize; its frees waiting for the horizon. */
struct stash {
	uint32_t serial;  /* 0: empty slot */
	uint32_t valid;
	uint64_t addr, ts;
	uint8_t kind;
	uint8_t pad[3];
	uint32_t head, tail; /* its queue of waiting frees (index + 1; 0: empty) */
	uint32_t fixed;      /* seq + 1 of its MAP_FIXED unmap not yet followed by the map */
	uint32_t pad2;
};

struct reset {
	uint64_t ts;
	int32_t device;
	uint32_t pad;
};

/* A range in the ordered set of live mappings. */
struct tnode {
	uint64_t start, end;
	uint32_t prio;
	int32_t l, r;
	uint32_t group; /* the mapping it is a piece of (1, 2, ...) */
};

/* A free waiting for the horizon to pass it, in its thread's queue. */
struct later {
	uint64_t key, ts;
	uint32_t next; /* the next in the queue or the free list (index + 1; 0: none) */
	uint32_t pad;
};

/*
 * Addresses are forgotten only once the table holds this many: below,
 * it is small enough for the cache, and a program that reuses a few
 * addresses (sqlite: 8.8 million events on a thousand addresses) would
 * pay a removal and an insertion for each free and allocation.
 */
#define FORGET_FROM 8192

struct lb {
	struct lentry *tab;
	size_t cap, used;        /* cap: power of two */
	const uint64_t *horizon; /* the walk's horizon (0: none), or NULL */
	const uint64_t *from;    /* the same, before this chunk's records too (the queues') */
	uint64_t seen;           /* the horizon the queues were last emptied up to */
	/*
	 * The waiting frees: a queue per thread (in its stash slot), oldest
	 * first as its records are read, so that a chunk read early with a
	 * thread's last frees (a main thread's, at exit) holds back its own
	 * queue only. About one chunk of frees per running thread (8 threads
	 * handing blocks over: 28,000); 24 bytes each, where an address kept
	 * for good costs a table slot and its share of the empty ones (80).
	 */
	struct later *later;
	size_t later_cap, later_top, later_n; /* later_top: entries ever handed out */
	uint32_t later_free;     /* free list (index + 1) */
	uint32_t serial;         /* the thread of the record being read */
	uint64_t unsure_after;   /* the source's (rl_source); 0: none */
	struct mev *ev;
	size_t n_ev, ev_cap;
	struct stash *st;
	size_t st_cap, st_used, st_valid; /* st_valid: resizes waiting */
	struct reset *rs;
	size_t n_rs, rs_cap;
	struct tnode *t;
	size_t n_t, t_cap;
	uint32_t *cut;           /* per unmap event (by seq): the group it cut into, 0: none */
	uint32_t groups;         /* groups given out */
	uint8_t *placed;         /* per group: a mapping the program placed, replacing none */
	size_t placed_cap;
	size_t fixed_waiting;    /* stash slots whose fixed is set */
	size_t n_fixed;          /* MAP_FIXED unmaps among the events */
	int32_t root, free_list;
	uint32_t rng;
	uint64_t page;
	int err;
};

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

/*
 * The table takes one more key? A small one fills to three quarters
 * (probes stay short at that size): a short process's 270 addresses fit
 * 512 slots, not 1,024. In between, fuller tables are slower: the
 * frees that churn forgets probe and shift longer runs of linear probing
 * (churn 2: its scan 0.11 s at half, 0.15 s at three quarters). Up to
 * TAB_SPARSE slots (3 MiB) a quarter full is full: reading churn's trace
 * back took 41 ms, not 51 at half (churn 2: 102 ms, not 115; sqlite3's
 * table of a few thousand, 72 ms either way), for at most 1.5 MiB more of
 * the scan's memory. Then half, and past a million slots (24 MiB), where
 * memory counts first, three quarters again: 2.5 million live blocks
 * took 303 MB of the scan's own at half, 182 MB (and 0.79 s, not 0.90) at
 * three quarters.
 */
#define TAB_SPARSE (1u << 17)
#define TAB_BIG (1u << 20)

static int full(const struct lb *lb)
{
	if (lb->cap <= 4096 || lb->cap >= TAB_BIG)
		return (lb->used + 1) * 4 > lb->cap * 3;
	if (lb->cap <= TAB_SPARSE)
		return (lb->used + 1) * 4 > lb->cap;
	return (lb->used + 1) * 2 > lb->cap;
}

static int tab_rehash(struct lb *lb)
{
	size_t ncap = lb->cap ? lb->cap * 2 : 512, i;
	struct lentry *old = lb->tab, *nt = rmem_table(ncap * sizeof(*nt));

	if (!nt)
		return -1;
	for (i = 0; i < lb->cap; i++) {
		size_t j;

		if (!old[i].key)
			continue;
		for (j = hash64(old[i].key) & (ncap - 1); nt[j].key; j = (j + 1) & (ncap - 1))
			;
		nt[j] = old[i];
	}
	if (old)
		rmem_free(old);
	lb->tab = nt;
	lb->cap = ncap;
	return 0;
}

/* Remove entry e, moving back the entries of its probe run. */
static void tab_del(struct lb *lb, struct lentry *e)
{
	size_t mask = lb->cap - 1, i = (size_t)(e - lb->tab), j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!lb->tab[j].key)
			break;
		home = hash64(lb->tab[j].key) & mask;
		/* entry j stays where it is when its home is in (i, j] */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		lb->tab[i] = lb->tab[j];
		i = j;
	}
	memset(&lb->tab[i], 0, sizeof(lb->tab[i]));
	lb->used--;
}

/* The entry for key, or NULL. */
static struct lentry *tab_find(const struct lb *lb, uint64_t key)
{
	size_t j;

	for (j = hash64(key) & (lb->cap - 1); lb->tab[j].key; j = (j + 1) & (lb->cap - 1))
		if (lb->tab[j].key == key)
			return &lb->tab[j];
	return NULL;
}

/* The entry for key, created (not live, ts 0) if absent; NULL: no memory. */
static struct lentry *tab_get(struct lb *lb, uint64_t key)
{
	size_t j;

	if (full(lb) && tab_rehash(lb))
		return NULL;
	for (j = hash64(key) & (lb->cap - 1); lb->tab[j].key; j = (j + 1) & (lb->cap - 1))
		if (lb->tab[j].key == key)
			return &lb->tab[j];
	lb->tab[j].key = key;
	lb->used++;
	return &lb->tab[j];
}

static int tag_of(unsigned kind)
{
	switch (kind) {
	case MP_KIND_PINNED: return TAG_PINNED;
	case MP_KIND_DEVICE:
	case MP_KIND_MANAGED: return TAG_GPU;
	case MP_KIND_REGISTERED: return TAG_REG;
	default: return TAG_HEAP;
	}
}

/* The address of key, freed at ts: forgotten if that is still its latest event. */
static void forget(struct lb *lb, uint64_t key, uint64_t ts)
{
	struct lentry *e = tab_find(lb, key);

	if (e && e->ts <= ts && !(e->meta & M_LIVE))
		tab_del(lb, e);
}

static struct stash *stash_get(struct lb *lb, uint32_t serial);

/* The horizon moved: forget the waiting frees it passed, queue by queue. */
static void later_drain(struct lb *lb)
{
	uint64_t h = *lb->from; /* frees of other threads: this chunk is not read yet */
	size_t i;

	lb->seen = h;
	for (i = 0; lb->later_n && i < lb->st_cap; i++) {
		struct stash *q = &lb->st[i];

		while (q->head && lb->later[q->head - 1].ts <= h) {
			struct later *x = &lb->later[q->head - 1];
			uint32_t at = q->head;

			forget(lb, x->key, x->ts);
			q->head = x->next;
			if (!q->head)
				q->tail = 0;
			x->next = lb->later_free;
			lb->later_free = at;
			lb->later_n--;
		}
	}
}

/* A free of the thread being read, to wait; if there is no memory, it is kept for good. */
static void later_add(struct lb *lb, uint64_t key, uint64_t ts)
{
	int err = lb->err;
	struct stash *q = lb->serial ? stash_get(lb, lb->serial) : NULL;
	uint32_t at;

	if (!q) {
		lb->err = err; /* costs memory only */
		return;
	}
	if (lb->later_free) {
		at = lb->later_free;
		lb->later_free = lb->later[at - 1].next;
	} else {
		if (lb->later_top >= UINT32_MAX - 1 ||
		    rmem_grow((void **)&lb->later, &lb->later_cap, sizeof(*lb->later),
			      lb->later_top + 1))
			return;
		at = (uint32_t)++lb->later_top;
	}
	lb->later[at - 1] = (struct later){ key, ts, 0, 0 };
	if (q->tail)
		lb->later[q->tail - 1].next = at;
	else
		q->head = at;
	q->tail = at;
	lb->later_n++;
}

/* Inlined: on_heap, with the heap's kind and device constant, is what a scan mostly runs. */
static inline __attribute__((always_inline)) void event(struct lb *lb, unsigned kind,
							uint64_t addr, uint64_t ts, int alloc,
							uint64_t size, int32_t device, int chunk)
{
	uint64_t key = (addr & ADDR_MASK) | (uint64_t)tag_of(kind) << TAG_SHIFT;
	struct lentry *e;

	if (lb->horizon && *lb->from != lb->seen)
		later_drain(lb);
	if (!alloc && lb->horizon && ts <= *lb->horizon && lb->used >= FORGET_FROM) {
		/*
		 * Every record still to come is newer than this free: if it
		 * is the address's latest event, the address is as good as
		 * never seen.
		 */
		e = tab_find(lb, key);
		if (e && e->ts <= ts)
			tab_del(lb, e);
		return;
	}
	e = tab_get(lb, key);
	if (!e) {
		lb->err = RX_NOMEM;
		return;
	}
	if (ts < e->ts)
		return; /* an older event read after a newer one */
	e->ts = ts;
	if (alloc) {
		e->meta = m_pack(size, kind, lb->unsure_after && ts > lb->unsure_after, device,
				 chunk);
	} else {
		e->meta &= ~M_LIVE;
		if (lb->horizon && *lb->horizon && lb->used >= FORGET_FROM)
			later_add(lb, key, ts);
	}
}

static void add_mev(struct lb *lb, unsigned type, uint64_t ts, uint64_t addr, uint64_t len,
		    uint32_t link)
{
	struct mev *m;

	if (rmem_grow((void **)&lb->ev, &lb->ev_cap, sizeof(*m), lb->n_ev + 1)) {
		lb->err = RX_NOMEM;
		return;
	}
	m = &lb->ev[lb->n_ev];
	m->ts = ts;
	m->seq = lb->n_ev++;
	m->addr = addr;
	m->len = len;
	m->type = type;
	m->link = link;
}

static struct stash *stash_find(struct lb *lb, uint32_t serial)
{
	size_t j;

	if (!lb->st_cap)
		return NULL;
	for (j = hash64(serial) & (lb->st_cap - 1); lb->st[j].serial;
	     j = (j + 1) & (lb->st_cap - 1))
		if (lb->st[j].serial == serial)
			return &lb->st[j];
	return NULL;
}

/* The thread's slot, created if absent; NULL: no memory. */
static struct stash *stash_get(struct lb *lb, uint32_t serial)
{
	struct stash *s = stash_find(lb, serial);
	size_t j;

	if (s)
		return s;
	if ((lb->st_used + 1) * 2 > lb->st_cap) {
		struct stash *old = lb->st, *nt;
		size_t ocap = lb->st_cap, ncap = ocap ? ocap * 2 : 16, i;

		nt = rmem_alloc(ncap * sizeof(*nt));
		if (!nt) {
			lb->err = RX_NOMEM;
			return NULL;
		}
		for (i = 0; i < ocap; i++) {
			if (!old[i].serial)
				continue;
			for (j = hash64(old[i].serial) & (ncap - 1); nt[j].serial; j = (j + 1) & (ncap - 1))
				;
			nt[j] = old[i];
		}
		if (old)
			rmem_free(old);
		lb->st = nt;
		lb->st_cap = ncap;
	}
	for (j = hash64(serial) & (lb->st_cap - 1); lb->st[j].serial; j = (j + 1) & (lb->st_cap - 1))
		;
	lb->st[j].serial = serial;
	lb->st_used++;
	return &lb->st[j];
}

static void free_now(struct lb *lb, unsigned kind, uint64_t addr, uint64_t ts)
{
	if (kind == MP_KIND_MMAP)
		add_mev(lb, MEV_FREE, ts, addr, 0, 0);
	else
		event(lb, kind, addr, ts, 0, 0, -1, 0);
}

/* The thread's pending resize: apply its free, or (restore) forget it. */
static void stash_done(struct lb *lb, uint32_t serial, int restore)
{
	struct stash *s;

	if (!lb->st_valid)
		return; /* the common case: no resize waits */
	s = stash_find(lb, serial);
	if (!s || !s->valid)
		return;
	s->valid = 0;
	lb->st_valid--;
	if (!restore)
		free_now(lb, s->kind, s->addr, s->ts);
}

/* The seq + 1 of the thread's MAP_FIXED unmap its mapping now follows (0: none). */
static uint32_t fixed_take(struct lb *lb, uint32_t serial)
{
	struct stash *s = lb->fixed_waiting ? stash_find(lb, serial) : NULL;
	uint32_t f;

	if (!s || !s->fixed)
		return 0;
	f = s->fixed;
	s->fixed = 0;
	lb->fixed_waiting--;
	return f;
}

static void on_alloc(struct lb *lb, uint32_t serial, const struct mp_rec_alloc *a)
{
	uint32_t fixed = a->h.kind == MP_KIND_MMAP ? fixed_take(lb, serial) : 0;

	if (a->h.flags & MP_RF_FAILED || !a->addr) {
		stash_done(lb, serial, (a->h.flags & MP_RF_REALLOC) != 0);
		return;
	}
	stash_done(lb, serial, 0);
	if (a->h.kind == MP_KIND_MMAP)
		add_mev(lb, MEV_MAP | (a->h.flags & MP_RF_PLACED ? MEV_PLACED : 0), a->h.ts,
			a->addr, a->size, fixed);
	else
		event(lb, MP_KIND_HEAP, a->addr, a->h.ts, 1, a->size, -1, chunk_func(a->h.func));
}

static void on_free(struct lb *lb, uint32_t serial, const struct mp_rec_free *f)
{
	unsigned kind = f->h.kind == MP_KIND_MMAP ? MP_KIND_MMAP : MP_KIND_HEAP;
	struct stash *s;

	stash_done(lb, serial, 0);
	if (f->h.func == MP_FN_munmap) {
		int fixed = (f->h.flags & MP_RF_FIXED) != 0;

		fixed_take(lb, serial);
		if (f->h.size < sizeof(struct mp_rec_unmap))
			return;
		add_mev(lb, MEV_UNMAP, f->h.ts, f->addr, ((const struct mp_rec_unmap *)f)->len,
			(uint32_t)fixed);
		lb->n_fixed += (size_t)fixed;
		if (fixed && !lb->err && lb->n_ev < UINT32_MAX && (s = stash_get(lb, serial))) {
			s->fixed = (uint32_t)lb->n_ev; /* its seq + 1 */
			lb->fixed_waiting++;
		}
		return;
	}
	if (!f->addr)
		return;
	if (!(f->h.flags & MP_RF_REALLOC)) {
		free_now(lb, kind, f->addr, f->h.ts);
		return;
	}
	s = stash_get(lb, serial);
	if (!s)
		return;
	lb->st_valid += !s->valid;
	s->valid = 1;
	s->addr = f->addr;
	s->ts = f->h.ts;
	s->kind = (uint8_t)kind;
}

static void on_gpu_alloc(struct lb *lb, const struct mp_rec_gpu_alloc *a)
{
	if (a->h.flags & MP_RF_FAILED || a->result || !a->addr || a->h.kind >= MP_KIND_COUNT)
		return;
	event(lb, a->h.kind, a->addr, a->h.ts, 1, a->size, a->device, 0);
}

static void on_gpu_free(struct lb *lb, const struct mp_rec_gpu_free *f)
{
	if (f->result || !f->addr)
		return;
	event(lb, f->h.kind, f->addr, f->h.ts, 0, 0, -1, 0);
}

static void on_reset(struct lb *lb, const struct mp_rec_ctx_reset *c)
{
	if (rmem_grow((void **)&lb->rs, &lb->rs_cap, sizeof(*lb->rs), lb->n_rs + 1)) {
		lb->err = RX_NOMEM;
		return;
	}
	lb->rs[lb->n_rs].ts = c->h.ts;
	lb->rs[lb->n_rs].device = c->device;
	lb->n_rs++;
}

static int on_record(void *arg, uint32_t serial, const struct mp_rec_head *h)
{
	struct lb *lb = arg;

	lb->serial = serial;
	switch (h->type) {
	case MP_REC_ALLOC:
		if (h->size >= sizeof(struct mp_rec_alloc))
			on_alloc(lb, serial, (const void *)h);
		break;
	case MP_REC_FREE:
		if (h->size >= sizeof(struct mp_rec_free))
			on_free(lb, serial, (const void *)h);
		break;
	case MP_REC_GPU_ALLOC:
		stash_done(lb, serial, 0);
		if (h->size >= sizeof(struct mp_rec_gpu_alloc))
			on_gpu_alloc(lb, (const void *)h);
		break;
	case MP_REC_GPU_FREE:
		stash_done(lb, serial, 0);
		if (h->size >= sizeof(struct mp_rec_gpu_free))
			on_gpu_free(lb, (const void *)h);
		break;
	case MP_REC_CTX_RESET:
		stash_done(lb, serial, 0);
		if (h->size >= sizeof(struct mp_rec_ctx_reset))
			on_reset(lb, (const void *)h);
		break;
	case MP_REC_MARK:
	case MP_REC_EXIT:
		stash_done(lb, serial, 0);
		break;
	default:
		break;
	}
	return lb->err;
}

/*
 * A batch of compact heap records (malloc and free, nothing else to
 * resolve): what on_alloc and on_free do with them. When the table is
 * bigger than a core's cache (churn2: 2 MiB), the batch's slots are
 * fetched first, so that their misses overlap (churn2's scan: 236 ms
 * against 256-302 without; sqlite's table of a few thousand slots is
 * cached, and there the prefetches cost 5%).
 */
#define PREFETCH_FROM (16384 * sizeof(struct lentry)) /* 512 KiB */

static int on_heap(void *arg, uint32_t serial, const struct mp_iter_heap *ev, size_t n)
{
	struct lb *lb = arg;
	size_t i, mask = lb->cap - 1;

	lb->serial = serial;
	for (i = 0; lb->cap * sizeof(*lb->tab) >= PREFETCH_FROM && i < n; i++)
		__builtin_prefetch(&lb->tab[hash64((ev[i].addr & ADDR_MASK) |
						   (uint64_t)TAG_HEAP << TAG_SHIFT) & mask]);
	for (i = 0; i < n && !lb->err; i++) {
		if (MP_UNLIKELY(lb->st_valid))
			stash_done(lb, serial, 0);
		if (ev[i].addr)
			event(lb, MP_KIND_HEAP, ev[i].addr, ev[i].ts, (int)ev[i].alloc, ev[i].size, -1,
			      1 /* compact records are malloc's */);
	}
	return lb->err;
}

/* The ordered set of live mappings: a treap keyed by start address. */
static int32_t tnode_new(struct lb *lb, uint64_t start, uint64_t end, uint32_t group)
{
	int32_t i;

	if (lb->free_list >= 0) {
		i = lb->free_list;
		lb->free_list = lb->t[i].l;
	} else {
		if (lb->n_t >= INT32_MAX ||
		    rmem_grow((void **)&lb->t, &lb->t_cap, sizeof(*lb->t), lb->n_t + 1)) {
			lb->err = RX_NOMEM;
			return -1;
		}
		i = (int32_t)lb->n_t++;
	}
	lb->rng ^= lb->rng << 13;
	lb->rng ^= lb->rng >> 17;
	lb->rng ^= lb->rng << 5;
	lb->t[i].start = start;
	lb->t[i].end = end;
	lb->t[i].prio = lb->rng;
	lb->t[i].group = group;
	lb->t[i].l = lb->t[i].r = -1;
	return i;
}

static void tnode_free(struct lb *lb, int32_t i)
{
	lb->t[i].l = lb->free_list;
	lb->free_list = i;
}

/* Split t into keys < key (*a) and keys >= key (*b). */
static void tsplit(struct lb *lb, int32_t t, uint64_t key, int32_t *a, int32_t *b)
{
	if (t < 0) {
		*a = *b = -1;
	} else if (lb->t[t].start < key) {
		tsplit(lb, lb->t[t].r, key, &lb->t[t].r, b);
		*a = t;
	} else {
		tsplit(lb, lb->t[t].l, key, a, &lb->t[t].l);
		*b = t;
	}
}

/* Join a and b, every key of a below every key of b. */
static int32_t tmerge(struct lb *lb, int32_t a, int32_t b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	if (lb->t[a].prio > lb->t[b].prio) {
		lb->t[a].r = tmerge(lb, lb->t[a].r, b);
		return a;
	}
	lb->t[b].l = tmerge(lb, a, lb->t[b].l);
	return b;
}

static void tfree_all(struct lb *lb, int32_t t)
{
	if (t < 0)
		return;
	tfree_all(lb, lb->t[t].l);
	tfree_all(lb, lb->t[t].r);
	tnode_free(lb, t);
}

/* Remove the range starting exactly at key; returns its node or -1. */
static int32_t tremove_at(struct lb *lb, uint64_t key)
{
	int32_t l, m, x, r;

	tsplit(lb, lb->root, key, &l, &m);
	tsplit(lb, m, key + 1, &x, &r);
	lb->root = tmerge(lb, l, r);
	return x;
}

static void tinsert(struct lb *lb, uint64_t start, uint64_t end, uint32_t group)
{
	int32_t l, r, n, old;

	if (end <= start)
		return;
	old = tremove_at(lb, start); /* its unmap was not seen: the new one wins */
	if (old >= 0)
		tfree_all(lb, old);
	n = tnode_new(lb, start, end, group);
	if (n < 0)
		return;
	tsplit(lb, lb->root, start, &l, &r);
	lb->root = tmerge(lb, tmerge(lb, l, n), r);
}

/* What is left past an unmapped range: [e, end) of a piece of group. */
struct tail {
	uint64_t end;
	uint32_t group;
};

/* Tails past e of the ranges in t, in tails[]; *cut: the first one's group. */
static void tails_of(struct lb *lb, int32_t t, uint64_t e, struct tail *tails, int *n,
		     uint32_t *cut)
{
	if (t < 0)
		return;
	tails_of(lb, lb->t[t].l, e, tails, n, cut);
	if (!*cut)
		*cut = lb->t[t].group;
	if (lb->t[t].end > e && *n < 2) {
		tails[*n].end = lb->t[t].end;
		tails[(*n)++].group = lb->t[t].group;
	}
	tails_of(lb, lb->t[t].r, e, tails, n, cut);
}

/*
 * munmap of [a, e): trims, splits or removes ranges (as the analyzer
 * does). Returns the group of the first range it cut into (0: none).
 */
static uint32_t tunmap(struct lb *lb, uint64_t a, uint64_t e)
{
	int32_t l, m, r, p;
	struct tail tails[2];
	uint32_t cut = 0;
	int nt = 0, i;

	tsplit(lb, lb->root, a, &l, &m);
	tsplit(lb, m, e, &m, &r);
	/* the range starting below a that reaches into [a, e) */
	for (p = l; p >= 0 && lb->t[p].r >= 0; p = lb->t[p].r)
		;
	if (p >= 0 && lb->t[p].end > a) {
		cut = lb->t[p].group;
		if (lb->t[p].end > e) {
			tails[nt].end = lb->t[p].end;
			tails[nt++].group = cut;
		}
		lb->t[p].end = a;
	}
	/* ranges start in [a, e) and do not overlap: only the last can reach past e */
	tails_of(lb, m, e, tails, &nt, &cut);
	tfree_all(lb, m);
	lb->root = tmerge(lb, l, r);
	for (i = 0; i < nt; i++)
		tinsert(lb, e, tails[i].end, tails[i].group);
	return cut;
}

static int mev_less(const void *x, const void *y)
{
	const struct mev *a = x, *b = y;

	return a->ts != b->ts ? a->ts < b->ts : a->seq < b->seq;
}

/*
 * Group g began with a mapping the program placed at an address it gave
 * and that replaced none of the mappings known (MAP_FIXED_NOREPLACE, or
 * MAP_FIXED over nothing memprov saw): the program may reach it by that
 * address alone, a constant in its code, so the mark takes it for a root.
 * Without the memory to note it, the group is judged as any other.
 */
static void placed(struct lb *lb, uint32_t g)
{
	int err = lb->err;

	if (rmem_grow((void **)&lb->placed, &lb->placed_cap, 1, (size_t)g + 1)) {
		lb->err = err; /* costs the exemption only */
		return;
	}
	lb->placed[g] = 1;
}

/*
 * The events in time order. A mapping is a group of its own, or, after a
 * MAP_FIXED unmap of its thread, one of the group that unmap cut into
 * (lb->cut, by the unmap's seq; without the memory for it, a group of
 * its own).
 */
static void mmap_replay(struct lb *lb)
{
	size_t i;

	rsort(lb->ev, lb->n_ev, sizeof(*lb->ev), mev_less);
	if (lb->n_fixed)
		lb->cut = rmem_alloc(lb->n_ev * sizeof(*lb->cut));
	for (i = 0; i < lb->n_ev && !lb->err; i++) {
		const struct mev *m = &lb->ev[i];
		uint32_t g;
		int32_t x;

		switch (m->type & ~MEV_PLACED) {
		case MEV_MAP:
			g = lb->cut && m->link && m->link <= lb->n_ev ? lb->cut[m->link - 1] : 0;
			if (!g && (m->type & MEV_PLACED))
				placed(lb, lb->groups + 1);
			tinsert(lb, m->addr, m->addr + m->len, g ? g : ++lb->groups);
			break;
		case MEV_UNMAP:
			g = tunmap(lb, m->addr,
				   m->addr + (m->len + lb->page - 1) / lb->page * lb->page);
			if (lb->cut && m->link)
				lb->cut[m->seq] = g;
			break;
		case MEV_FREE:
			x = tremove_at(lb, m->addr);
			if (x >= 0)
				tfree_all(lb, x);
			break;
		}
	}
}

/* The ranges in address order; sib holds the group until rings() links them. */
static void tcollect(struct lb *lb, int32_t t, struct rblock *out, size_t *n)
{
	if (t < 0)
		return;
	tcollect(lb, lb->t[t].l, out, n);
	if (out) {
		out[*n].addr = lb->t[t].start;
		out[*n].size = lb->t[t].end - lb->t[t].start;
		out[*n].kind = MP_KIND_MMAP;
		out[*n].unsure = 0;
		out[*n].chunk = 0;
		out[*n].placed = lb->t[t].group < lb->placed_cap && lb->placed[lb->t[t].group];
		out[*n].sib = lb->t[t].group;
	}
	(*n)++;
	tcollect(lb, lb->t[t].r, out, n);
}

/* A GPU or pinned block freed by a context reset after it was allocated. */
static int reset_after(const struct lb *lb, const struct lentry *e)
{
	size_t i;

	if (m_kind(e) != MP_KIND_DEVICE && m_kind(e) != MP_KIND_MANAGED &&
	    m_kind(e) != MP_KIND_PINNED)
		return 0;
	for (i = 0; i < lb->n_rs; i++)
		if (lb->rs[i].ts > e->ts && (lb->rs[i].device == -1 || lb->rs[i].device == m_device(e)))
			return 1;
	return 0;
}

struct member {
	uint32_t group, index;
};

static int member_less(const void *x, const void *y)
{
	const struct member *a = x, *b = y;

	return a->group != b->group ? a->group < b->group : a->index < b->index;
}

/* Link the mappings b[a .. e) of one group in rings (sib: the group before). */
static int rings(struct rblock *b, size_t a, size_t e)
{
	struct member *m;
	size_t i, j, n = e - a;

	if (n < 2) {
		for (i = a; i < e; i++)
			b[i].sib = (uint32_t)i;
		return RX_OK;
	}
	m = rmem_alloc(n * sizeof(*m));
	if (!m)
		return RX_NOMEM;
	for (i = 0; i < n; i++) {
		m[i].group = b[a + i].sib;
		m[i].index = (uint32_t)(a + i);
	}
	rsort(m, n, sizeof(*m), member_less);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && m[j].group == m[i].group; j++)
			b[m[j - 1].index].sib = m[j].index;
		b[m[j - 1].index].sib = m[i].index;
	}
	rmem_free(m);
	return RX_OK;
}

/* Fill out with the live blocks, group by group, each sorted by address. */
static int collect(struct lb *lb, struct rlive *out)
{
	size_t i, n_map = 0, n = 0, g;
	int group_of_tag[5] = { RG_HOST, RG_HOST, RG_HOST, RG_HOST, RG_REG };

	tcollect(lb, lb->root, NULL, &n_map);
	for (i = 0; i < lb->cap; i++) {
		struct lentry *e = &lb->tab[i];

		if (e->key && (e->meta & M_LIVE) && reset_after(lb, e))
			e->meta &= ~M_LIVE;
		if (e->key && (e->meta & M_LIVE))
			n++;
	}
	out->b = rmem_alloc((n + n_map + 1) * sizeof(*out->b));
	if (!out->b)
		return RX_NOMEM;
	out->n = 0;
	for (g = 0; g < RG_COUNT; g++) {
		out->first[g] = out->n;
		if (g == RG_MMAP) {
			tcollect(lb, lb->root, out->b, &out->n);
			if (rings(out->b, out->first[g], out->n))
				return RX_NOMEM;
			continue;
		}
		for (i = 0; i < lb->cap; i++) {
			const struct lentry *e = &lb->tab[i];
			struct rblock *b;

			if (!e->key || !(e->meta & M_LIVE) ||
			    group_of_tag[e->key >> TAG_SHIFT] != (int)g)
				continue;
			b = &out->b[out->n++];
			b->addr = e->key & ADDR_MASK;
			b->size = m_size(e);
			b->kind = (uint8_t)m_kind(e);
			b->unsure = !!(e->meta & M_UNSURE);
			b->chunk = !!(e->meta & M_CHUNK);
			b->placed = 0;
		}
		rsort_blocks(out->b + out->first[g], out->n - out->first[g]);
		for (i = out->first[g]; i < out->n; i++)
			out->b[i].sib = (uint32_t)i;
	}
	out->first[RG_COUNT] = out->n;
	return RX_OK;
}

/* Resolve the resizes still waiting (a trace's end), and forget its threads. */
static void stash_end(struct lb *lb)
{
	size_t i;

	for (i = 0; i < lb->st_cap; i++)
		if (lb->st[i].serial)
			stash_done(lb, lb->st[i].serial, 0);
	if (lb->st)
		memset(lb->st, 0, lb->st_cap * sizeof(*lb->st));
	lb->st_used = lb->st_valid = 0;
	lb->fixed_waiting = 0;
}

/*
 * Memory for the horizons of a trace nobody writes while it is read: one
 * slot per block of the file (a chunk is at least one), at most 16 MiB.
 * NULL: none (the trace is written meanwhile, or no memory).
 */
#define HORIZON_MAX (16u << 20)

static struct mp_iter_horizon *horizons_for(const struct rl_source *s, struct mp_iter_horizon *hz)
{
	struct stat st;
	uint64_t blocks;

	if (!s->settled || s->fd < 0 || mp_sys_fstat(s->fd, &st) || st.st_size <= 0)
		return NULL;
	blocks = (uint64_t)st.st_size / 4096 + 1;
	if (blocks * 2 * sizeof(uint64_t) > HORIZON_MAX)
		return NULL;
	memset(hz, 0, sizeof(*hz));
	hz->ts = rmem_alloc(blocks * 2 * sizeof(uint64_t));
	if (!hz->ts)
		return NULL;
	hz->off = hz->ts + blocks;
	hz->cap = blocks;
	return hz;
}

MP_REALIGN int rl_build(struct rlive *out, const struct rl_source *src, int n, uint64_t deadline,
			int *ancestors_read)
{
	struct lb lb;
	int r = RX_OK, k;

	memset(&lb, 0, sizeof(lb));
	memset(out, 0, sizeof(*out));
	lb.root = lb.free_list = -1;
	lb.rng = 0x9e3779b9u;
	lb.page = (uint64_t)getpagesize();
	if (tab_rehash(&lb))
		return RX_NOMEM;
	*ancestors_read = 0;
	/*
	 * Oldest first: an ancestor's events before its fork, then the next
	 * one's, then the process's own. Timestamps are of one clock, so the
	 * latest event of an address still decides. An ancestor's trace that
	 * cannot be read is left out (its blocks are then not in the set).
	 */
	for (k = 0; k < n && r == RX_OK; k++) {
		struct mp_iter_horizon hz, *hp = horizons_for(&src[k], &hz);
		int rk;

		lb.horizon = hp ? &hz.now : NULL;
		lb.from = hp ? &hz.from : NULL;
		lb.unsure_after = src[k].unsure_after;
		rk = rt_walk(src[k].fd, src[k].view, src[k].until, src[k].until_off, deadline, hp,
			     on_record, on_heap, &lb);
		lb.horizon = NULL;
		lb.later_n = lb.later_top = 0; /* the queues go with stash_end's slots */
		lb.later_free = 0;
		if (hp)
			rmem_free(hz.ts);

		if (rk == RX_NOTRACE && k < n - 1) {
			stash_end(&lb);
			continue;
		}
		r = rk;
		if (r == RX_OK)
			stash_end(&lb);
		if (r == RX_OK && k < n - 1)
			(*ancestors_read)++;
	}
	if (r == RX_OK)
		r = lb.err;
	if (r == RX_OK)
		mmap_replay(&lb);
	if (r == RX_OK)
		r = lb.err;
	if (r == RX_OK)
		r = collect(&lb, out);
	rmem_free(lb.tab);
	rmem_free(lb.later);
	rmem_free(lb.ev);
	rmem_free(lb.cut);
	rmem_free(lb.st);
	rmem_free(lb.rs);
	rmem_free(lb.t);
	return r;
}
