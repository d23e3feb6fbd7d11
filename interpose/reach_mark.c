/*
 * reach_mark.c - mark the live blocks from the roots and give each its
 * class, by valgrind memcheck's rules:
 *
 *  - every 8-byte-aligned word of the roots, the registers and the
 *    reached blocks is a candidate pointer; one that falls inside a block
 *    ([start, start + size), or the start of a 0-byte block) points to it;
 *  - a block reached by a chain of start pointers from a root is still
 *    reachable; one reached only through a chain with an interior pointer
 *    somewhere is possibly lost (what it points to is possibly lost too);
 *  - the blocks nothing reaches are lost: taken in address order, each
 *    one still unclassified leads a clique, and every unclassified block
 *    it reaches (an earlier leader included) is indirectly lost; the
 *    leaders left are definitely lost.
 *
 * The pieces of one mapping (rblock.sib: what a partial munmap or a
 * MAP_FIXED mmap over part of it left) are one block to these rules: a
 * piece reached gives the others its class (a JVM reserves its heap and
 * commits parts of it with MAP_FIXED, and keeps a pointer to the
 * reservation only). A piece is still scanned only from its own range.
 *
 * Heap, mmap and pinned blocks are scanned when reached; device, managed
 * and registered blocks are targets only (device memory is not host
 * memory; registered memory is scanned as part of the block it lies in).
 * CUDA blocks are kept alive only by the program's own memory (see
 * reach_roots.c).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls reach_maps, reach_mem and sys.
 */
#include <string.h>

#include "reach_int.h"

enum { RS_UNREACHED, RS_POSSIBLE, RS_REACHABLE, RS_INDIRECT };

struct mk {
	struct rlive *l;
	const struct rmaps *m;
	struct rstats *st;
	uint32_t *stack;
	size_t sp, cap;
	uint64_t lo[RG_COUNT], hi[RG_COUNT];
	uint64_t all_lo, all_hi;
	int chunks;    /* glibc's malloc made the chunk blocks (no replacement in use) */
	int program;   /* the memory scanned keeps CUDA blocks alive */
	int no_mmap;   /* ... and keeps no anonymous mapping alive (the loader's) */
	int definite;  /* it is a root, or a block reached by start pointers */
	int64_t clique; /* -1: marking from the roots; else the leader */
	uint64_t read;  /* bytes words() was given */
	uint64_t deadline;
	int err;
	/* blocks waiting for their pages to be read into the page cache */
	uint32_t *q;
	size_t nq;
	uint64_t want[RMAPS_CACHE_PAGES];
	size_t nwant;
};

static int cuda_kind(unsigned kind)
{
	return kind == MP_KIND_PINNED || kind == MP_KIND_DEVICE || kind == MP_KIND_MANAGED ||
	       kind == MP_KIND_REGISTERED;
}

static int scanned_kind(unsigned kind)
{
	return kind == MP_KIND_HEAP || kind == MP_KIND_MMAP || kind == MP_KIND_PINNED;
}

/* The block of group g that v points into, or -1. */
static int64_t find(const struct mk *k, int g, uint64_t v)
{
	size_t lo = k->l->first[g], hi = k->l->first[g + 1];
	const struct rblock *b;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->l->b[mid].addr <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == k->l->first[g])
		return -1;
	b = &k->l->b[lo - 1];
	if (v < b->addr + b->size || v == b->addr)
		return (int64_t)(lo - 1);
	return -1;
}

static void push(struct mk *k, size_t i)
{
	if (k->sp >= k->cap) {
		k->err = RX_NOMEM; /* cannot happen: the stack is sized for every push */
		return;
	}
	k->stack[k->sp++] = (uint32_t)i;
}

/* In this phase, whether state st is an advance for block j. */
static int advance(const struct mk *k, size_t j, unsigned st)
{
	unsigned s = k->l->b[j].state;

	if (k->clique >= 0)
		return s == RS_UNREACHED && (int64_t)j != k->clique;
	return s < st;
}

/* The other pieces of block i's mapping that st advances take it. */
static void siblings(struct mk *k, size_t i, unsigned st)
{
	struct rblock *b = k->l->b;
	size_t j;

	for (j = b[i].sib; j != i; j = b[j].sib)
		if (advance(k, j, st)) {
			b[j].state = (uint8_t)st;
			push(k, j);
		}
}

/* Block i takes state st, to be scanned, and so do its mapping's other pieces. */
static void mark(struct mk *k, size_t i, unsigned st)
{
	k->l->b[i].state = (uint8_t)st;
	push(k, i);
	siblings(k, i, st);
}

/*
 * Whether v, inside block b, is where the malloc chunk after b begins.
 * glibc's free lists hold the addresses of chunk headers, not of blocks:
 * a free chunk's fd and bk, left in memory that malloc hands out again
 * without clearing it (a block's first 16 bytes, its largest bins' next
 * two words). A chunk header is 16-byte aligned, and the next chunk's
 * lies inside b only in b's last 8 bytes (its first word, prev_size, is
 * b's when b is in use: a chunk of size cs holds cs - 8 bytes, at least
 * n, below cs + 16): such a word is no pointer of the program's into b
 * (valgrind, whose allocator keeps no lists in its blocks, never sees
 * one). Read as one, a stale list pointer in a block the program kept
 * made a leaked block "possibly lost", and the leak passed the gate.
 * A chunk header's address elsewhere in a block (a chunk that was there
 * before the memory was cut up again) cannot be told from the program's
 * pointer to that member, and still counts; so does the program's own
 * pointer to b's last 8 bytes, where b is its only one, lost.
 */
static inline int next_chunk(const struct rblock *b, uint64_t v)
{
	return !(v & 15) && v - b->addr + 8 >= b->size && v != b->addr;
}

static void pointer(struct mk *k, uint64_t v)
{
	int g;

	for (g = 0; g < RG_COUNT; g++) {
		struct rblock *b;
		int64_t i;

		if (v < k->lo[g] || v >= k->hi[g])
			continue;
		i = find(k, g, v);
		if (i < 0)
			continue;
		b = &k->l->b[i];
		if (!k->program && cuda_kind(b->kind))
			continue;
		if (b->chunk && k->chunks && next_chunk(b, v))
			continue;
		if (k->no_mmap && b->kind == MP_KIND_MMAP)
			continue;
		if (k->clique >= 0) {
			if (b->state == RS_UNREACHED && i != k->clique)
				mark(k, (size_t)i, RS_INDIRECT);
			continue;
		}
		if (b->state == RS_REACHABLE)
			continue;
		if (v == b->addr && k->definite)
			mark(k, (size_t)i, RS_REACHABLE);
		else if (b->state == RS_UNREACHED)
			mark(k, (size_t)i, RS_POSSIBLE);
	}
}

static void words(void *arg, const uint64_t *w, size_t n)
{
	struct mk *k = arg;
	uint64_t lo = k->all_lo, hi = k->all_hi;
	size_t i;

	k->read += 8 * (uint64_t)n;
	for (i = 0; i < n; i++) {
		uint64_t v = w[i];

		if (v >= lo && v < hi)
			pointer(k, v);
	}
}

/* Scan block b's words, from wherever they are. */
static void scan_words(struct mk *k, const struct rblock *b, const uint64_t *w, size_t n)
{
	k->program = 1;
	k->no_mmap = 0;
	k->definite = b->state == RS_REACHABLE;
	k->st->block_bytes += b->size;
	if (w)
		words(k, w, n);
}

#define QUEUE_MAX 4096 /* blocks waiting for their pages */

/* Scan block i from the page cache; 0: a page of it is not there. */
static int scan_cached(struct mk *k, size_t i)
{
	const struct rblock *b = &k->l->b[i];
	uint64_t a = (b->addr + 7) & ~7ull, e = (b->addr + b->size) & ~7ull, p;

	for (p = a & ~(RMAPS_PAGE - 1); p < e; p += RMAPS_PAGE)
		if (!rmaps_cached(p))
			return 0;
	scan_words(k, b, NULL, 0);
	for (p = a; p < e;) {
		uint64_t pe = (p & ~(RMAPS_PAGE - 1)) + RMAPS_PAGE, t = pe < e ? pe : e;

		words(k, rmaps_cached(p & ~(RMAPS_PAGE - 1)) + (p & (RMAPS_PAGE - 1)) / 8,
		      (size_t)(t - p) / 8);
		p = t;
	}
	return 1;
}

/* Read the pages the waiting blocks need, and scan them. */
static int flush(struct mk *k)
{
	size_t i;
	int r = RX_OK;

	if (!k->nq)
		return RX_OK;
	rmaps_fetch(k->m, k->want, k->nwant);
	for (i = 0; i < k->nq && !r; i++) {
		const struct rblock *b = &k->l->b[k->q[i]];

		if (scan_cached(k, k->q[i]))
			continue;
		/* a page the copy could not read: on its own, skipping what fails */
		scan_words(k, b, NULL, 0);
		r = rmaps_words(k->m, b->addr, b->addr + b->size, words, k, &k->st->unreadable,
				k->deadline);
	}
	k->nq = k->nwant = 0;
	return r;
}

/* The pages of [a, e) not yet in the want list; -1 if more than fit. */
static int add_pages(struct mk *k, uint64_t a, uint64_t e, int commit)
{
	uint64_t p;
	size_t j, n = k->nwant;

	for (p = a & ~(RMAPS_PAGE - 1); p < e; p += RMAPS_PAGE) {
		for (j = 0; j < n && k->want[j] != p; j++)
			;
		if (j < n)
			continue;
		if (n == RMAPS_CACHE_PAGES)
			return -1;
		if (commit)
			k->want[n] = p;
		n++;
	}
	if (commit)
		k->nwant = n;
	return 0;
}

/* Block i is scanned from the page cache now, or waits for its pages; 0: neither. */
static int queue(struct mk *k, size_t i)
{
	const struct rblock *b = &k->l->b[i];
	uint64_t a = (b->addr + 7) & ~7ull, e = (b->addr + b->size) & ~7ull;

	if (!k->q || !rmaps_batchable(k->m, a, e))
		return 0;
	if (scan_cached(k, i))
		return 1;
	if (k->nq == QUEUE_MAX || add_pages(k, a, e, 0) < 0) {
		k->err = flush(k);
		if (scan_cached(k, i)) /* read ahead */
			return 1;
	}
	add_pages(k, a, e, 1);
	k->q[k->nq++] = (uint32_t)i;
	return 1;
}

/* Scan what the stack holds until it is empty. */
static int drain(struct mk *k)
{
	uint32_t count = 0;

	while ((k->sp || k->nq) && !k->err) {
		const struct rblock *b;
		size_t i;
		int r;

		if (!k->sp) {
			/* what the batch holds may push more */
			k->err = flush(k);
			continue;
		}
		i = k->stack[--k->sp];
		b = &k->l->b[i];
		if (!scanned_kind(b->kind))
			continue;
		if (!queue(k, i)) {
			scan_words(k, b, NULL, 0);
			r = rmaps_words(k->m, b->addr, b->addr + b->size, words, k,
					&k->st->unreadable, k->deadline);
			if (r)
				return r;
		}
		if (!(++count & 1023) && mp_now() > k->deadline)
			return RX_TIMEOUT;
	}
	return k->err;
}

static void bounds(struct mk *k)
{
	int g;

	k->all_lo = UINT64_MAX;
	k->all_hi = 0;
	for (g = 0; g < RG_COUNT; g++) {
		size_t a = k->l->first[g], e = k->l->first[g + 1], i;

		k->lo[g] = UINT64_MAX;
		k->hi[g] = 0;
		if (a == e)
			continue;
		k->lo[g] = k->l->b[a].addr;
		for (i = a; i < e; i++) {
			uint64_t end = k->l->b[i].addr + (k->l->b[i].size ? k->l->b[i].size : 1);

			if (end > k->hi[g])
				k->hi[g] = end;
		}
		if (k->lo[g] < k->all_lo)
			k->all_lo = k->lo[g];
		if (k->hi[g] > k->all_hi)
			k->all_hi = k->hi[g];
	}
}

MP_REALIGN int rmark_run(struct rlive *l, const struct rroots *rr, const struct rmaps *m,
	      struct rstats *st, uint64_t deadline)
{
	static const uint8_t cls[] = {
		[RS_UNREACHED] = MP_REACH_DEFINITE, [RS_POSSIBLE] = MP_REACH_POSSIBLE,
		[RS_REACHABLE] = MP_REACH_REACHABLE, [RS_INDIRECT] = MP_REACH_INDIRECT,
	};
	struct mk k;
	size_t i;
	int r;

	memset(&k, 0, sizeof(k));
	k.l = l;
	k.m = m;
	k.st = st;
	k.deadline = deadline;
	k.chunks = !rr->replacement;
	k.clique = -1;
	k.cap = 2 * l->n + 16;
	if (l->n > UINT32_MAX / 2)
		return RX_NOMEM;
	k.stack = rmem_alloc(k.cap * sizeof(*k.stack));
	if (!k.stack)
		return RX_NOMEM;
	if (m->all_safe) {
		/* without them, each block is read on its own */
		k.q = rmem_alloc(QUEUE_MAX * sizeof(*k.q));
	}
	bounds(&k);
	for (i = 0; i < l->n; i++)
		l->b[i].state = RS_UNREACHED;
	k.definite = 1;
	k.program = 1;
	/* mappings the program placed at an address it gave: named by a constant, roots */
	for (i = 0; i < l->n; i++)
		if (l->b[i].placed && l->b[i].state != RS_REACHABLE)
			mark(&k, i, RS_REACHABLE);
	for (i = 0; i < rr->nregs; i++)
		if (rr->regs[i] >= k.all_lo && rr->regs[i] < k.all_hi)
			pointer(&k, rr->regs[i]);
	for (i = 0; i < rr->n; i++) {
		uint64_t before = st->unreadable;

		k.program = (rr->r[i].flags & RR_PROGRAM) != 0;
		k.no_mmap = (rr->r[i].flags & RR_NO_MMAP) != 0;
		k.definite = 1;
		k.read = 0;
		r = rmaps_words(m, rr->r[i].start, rr->r[i].end, words, &k, &st->unreadable, deadline);
		st->root_bytes += k.read; /* the pages read, not the range */
		if (st->unreadable != before)
			st->notes |= MP_REACH_N_UNREADABLE;
		if (!r)
			r = drain(&k);
		if (r)
			goto out;
	}
	/*
	 * Blocks an ancestor allocated while its fork copied the address
	 * space (rl_source): whether the child's copy holds the pointer to
	 * one depends on which page fork copied first. Not reached: still
	 * reachable, and a root for what they point to.
	 */
	k.program = 1;
	k.no_mmap = 0;
	for (i = 0; i < l->n; i++)
		if (l->b[i].unsure && l->b[i].state == RS_UNREACHED)
			mark(&k, i, RS_REACHABLE);
	r = drain(&k);
	if (r)
		goto out;
	for (i = 0; i < l->n; i++) {
		if (l->b[i].state != RS_UNREACHED)
			continue;
		k.clique = (int64_t)i;
		push(&k, i);
		siblings(&k, i, RS_INDIRECT);
		r = drain(&k);
		if (r)
			goto out;
	}
	for (i = 0; i < l->n; i++)
		l->b[i].state = cls[l->b[i].state];
	r = RX_OK;
out:
	rmem_free(k.q);
	rmem_free(k.stack);
	return r;
}
