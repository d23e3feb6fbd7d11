/*
 * reach_mem.c - memory for the reachability scan: anonymous mappings that
 * memprov makes itself with raw system calls (never the program's heap,
 * never a lock a stopped thread could hold), counted against the bound of
 * MEMPROV_REACH_MEMORY_MB and all unmapped when the scan is over. Also a
 * sort (glibc's qsort may call malloc) and the list of memprov's own
 * mappings, which are never roots.
 *
 * Small allocations (at most POOL_PIECE) are cut from pool mappings: a
 * scan makes dozens of them, and a mapping and unmapping each cost a
 * short process more than the scan itself (the TLB flush of every munmap,
 * on a VM above all). The first pool is POOL_FIRST, each next one twice
 * the last, up to POOL_CHUNK: faulting in half a megabyte cost `true`
 * more than its whole scan. Pools are not faulted in ahead: the pieces
 * cut are, as they are used, and the scan's peak is what it used (`ls`:
 * 128 KiB of a pool resident for a few KiB of pieces, when it was). A freed piece goes
 * back only when it was the last one cut; at most POOL_CHUNKS pools are
 * made, then small allocations are mappings of their own.
 *
 * The first ARENA_LEN bytes of mappings (pools and plain ones) are cut
 * from one reservation, made at the first allocation: `ls` made seven
 * mappings and unmapped two, and those system calls were a seventh of
 * its scan. A freed piece of the arena is reused when it is the last
 * one cut; one over ZERO_MAX gives its pages back (unmap_fresh). The whole arena is memprov's own memory (never a root), whatever
 * is in use in it. Past it, or where the reservation fails (an address
 * space limit), allocations are mappings of their own, as before.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "reach_int.h"

#define MAX_MAPS 256
#define MAX_OWN 32
#define POPULATE_MAX (256u << 10)
#define POOL_CHUNK (512u << 10)
#define POOL_FIRST (64u << 10)
#define POOL_PIECE (32u << 10)
#define POOL_CHUNKS 8
#define POOL_ALIGN 64
#define ARENA_LEN ((2u << 20) - 4096) /* under 2 MiB: never a huge page to zero (THP "always") */
#define ZERO_MAX (64u << 10) /* an arena piece up to this is zeroed and reused when freed last */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static struct {
	void *p;
	size_t len;
	size_t cut;   /* a pool: bytes cut so far (0 for a plain mapping) */
	size_t last;  /* a pool: offset of the last piece cut */
	int pool;
	int kept;     /* rmem_forget'ed: never unmapped */
	int arena;    /* cut from the arena: never unmapped by itself */
} maps[MAX_MAPS] MP_BIG_BSS;
static uint64_t used, peak, limit;
static uint64_t check_at;            /* past this, ask recheck for the bound, once */
static uint64_t (*recheck)(void);
static int failed, pool_at = -1, pools, n_slots; /* slots below n_slots were ever used */
static char *arena;        /* NULL: not made (yet), or refused */
static size_t arena_cut;   /* bytes cut from its start */
static int arena_tried, arena_kept;

/* memprov's other mappings (the stack-id set, the unwind cache). */
static struct {
	uint64_t start, end;
} own[MAX_OWN];
static uint32_t n_own;

void rmem_own(uintptr_t addr, size_t len)
{
	if (!len || n_own >= MAX_OWN)
		return;
	own[n_own].start = addr;
	own[n_own].end = addr + len;
	n_own++;
}

void rmem_bound_later(uint64_t at, uint64_t (*bound)(void))
{
	check_at = at;
	recheck = bound;
}

/* Would the scan's memory reach total past its bound? */
static int over(uint64_t total)
{
	if (total > check_at && recheck) {
		uint64_t (*fn)(void) = recheck, b;

		recheck = NULL;
		b = fn();
		if (b < limit)
			limit = b;
	}
	return total > limit;
}

void rmem_init(uint64_t lim)
{
	/* only the slots used (a forked child's copy): the table is 10 KiB of bss */
	memset(maps, 0, (size_t)n_slots * sizeof(maps[0]));
	n_slots = 0;
	used = peak = 0;
	limit = lim;
	failed = 0;
	recheck = NULL;
	pool_at = -1;
	pools = 0;
	n_own = 0;
	arena = NULL;
	arena_cut = 0;
	arena_tried = arena_kept = 0;
}

static size_t page_round(size_t len)
{
	return (len + 4095) & ~(size_t)4095;
}

/*
 * len bytes (a multiple of the page) of fresh memory, zeroed: from the
 * arena where it has room (*in_arena set), else a mapping of its own.
 * populate: the caller touches every page at once (POP_ALL: a hash
 * table, whose keys land on every page at random: populated from two
 * pages on, where a read fault then a write fault came per page; else
 * over ZERO_MAX only: a growing array may not reach its last pages).
 */
#define POP_ALL 2

static void *map_fresh(size_t len, int populate, int *in_arena)
{
	void *p;

	if (!arena_tried) {
		arena_tried = 1;
		p = mp_sys_mmap(NULL, ARENA_LEN, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		arena = p == MAP_FAILED ? NULL : p;
	}
	if (arena && len <= ARENA_LEN - arena_cut) {
		p = arena + arena_cut;
		arena_cut += len;
		*in_arena = 1;
		/* one call instead of a fault a page; older kernels fault them */
		if (populate && len > (populate == POP_ALL ? 4096 : ZERO_MAX))
			(void)mp_syscall(SYS_madvise, p, len, MADV_POPULATE_WRITE);
		return p;
	}
	*in_arena = 0;
	return mp_sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
}

/*
 * Give back what map_fresh gave. In the arena, a piece over ZERO_MAX
 * gives its pages back to the system (they read as zeros again): a table
 * the scan grew out of, or a trace walk's buffer, must not stay resident
 * (a 200,000-event trace's scan kept 1.4 MiB of them, twice what it
 * needs); a smaller one is zeroed when it is the last cut, else it stays
 * until the end. The last piece cut is then cut again first.
 */
static void unmap_fresh(void *p, size_t len, int in_arena)
{
	int last = in_arena && (char *)p + len == arena + arena_cut;

	if (!in_arena) {
		mp_sys_munmap(p, len);
		return;
	}
	if (len > ZERO_MAX) {
		if (mp_syscall(SYS_madvise, p, len, MADV_DONTNEED))
			return;
	} else if (last) {
		memset(p, 0, len);
	}
	if (last)
		arena_cut -= len;
}

/* The plain mapping that starts at p, or -1. */
static int slot_of(const void *p)
{
	int i;

	for (i = 0; i < n_slots; i++)
		if (maps[i].p == p && p && !maps[i].pool)
			return i;
	return -1;
}

/* The pool that holds p, or -1. */
static int pool_of(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	int i;

	for (i = 0; i < n_slots; i++)
		if (maps[i].pool && a >= (uintptr_t)maps[i].p && a < (uintptr_t)maps[i].p + maps[i].len)
			return i;
	return -1;
}

/* populate: fault every page in with one call (the caller touches them all). */
static void *alloc(size_t len, int populate)
{
	void *p;
	int i, in_arena;

	len = page_round(len ? len : 1);
	for (i = 0; i < MAX_MAPS && maps[i].p; i++)
		;
	if (i == MAX_MAPS || len > limit || over(used + len)) {
		failed = 1;
		return NULL;
	}
	p = map_fresh(len, populate, &in_arena);
	if (p == MAP_FAILED) {
		failed = 1;
		return NULL;
	}
	memset(&maps[i], 0, sizeof(maps[i]));
	maps[i].p = p;
	maps[i].arena = in_arena;
	if (i >= n_slots)
		n_slots = i + 1;
	maps[i].len = len;
	used += len;
	if (used > peak)
		peak = used;
	return p;
}

/* A piece of len bytes from the current pool (a new one when it is full). */
static void *pool_cut(size_t len)
{
	void *p;

	len = (len + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
	if (over(used + len))
		return NULL;
	if (pool_at < 0 || maps[pool_at].cut + len > maps[pool_at].len) {
		size_t plen = pool_at < 0 ? POOL_FIRST : maps[pool_at].len * 2;
		int i, in_arena;

		if (plen > POOL_CHUNK)
			plen = POOL_CHUNK;
		if (pools == POOL_CHUNKS)
			return NULL;
		for (i = 0; i < MAX_MAPS && maps[i].p; i++)
			;
		if (i == MAX_MAPS)
			return NULL;
		p = map_fresh(plen, 0, &in_arena);
		if (p == MAP_FAILED)
			return NULL;
		memset(&maps[i], 0, sizeof(maps[i]));
		maps[i].p = p;
		maps[i].arena = in_arena;
		if (i >= n_slots)
			n_slots = i + 1;
		maps[i].len = plen;
		maps[i].pool = 1;
		pool_at = i;
		pools++;
	}
	p = (char *)maps[pool_at].p + maps[pool_at].cut;
	maps[pool_at].last = maps[pool_at].cut;
	maps[pool_at].cut += len;
	used += len;
	if (used > peak)
		peak = used;
	return p;
}

/* Small allocations are touched whole: fault them in with one call. */
void *rmem_alloc(size_t len)
{
	void *p = len && len <= POOL_PIECE ? pool_cut(len) : NULL;

	return p ? p : alloc(len, len <= POPULATE_MAX);
}

void *rmem_table(size_t len)
{
	return alloc(len, POP_ALL);
}

void *rmem_buffer(size_t len)
{
	return alloc(len, 0);
}

int rmem_grow(void **pp, size_t *cap, size_t elem, size_t need)
{
	size_t ncap, len, old;
	void *q;
	int i;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 64; /* a short-lived process has few of anything */
	while (ncap < need)
		ncap *= 2;
	if (ncap > (SIZE_MAX >> 1) / elem) {
		failed = 1;
		return -1;
	}
	len = ncap * elem;
	/* a pool piece is cut to its size: six small arrays share a page, not six */
	len = len <= POOL_PIECE && (!*pp || pool_of(*pp) >= 0)
		      ? (len + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1)
		      : page_round(len);
	if (!*pp) {
		q = rmem_alloc(len);
		if (!q)
			return -1;
		*pp = q;
		*cap = len / elem;
		return 0;
	}
	if (pool_of(*pp) >= 0) {
		/* a piece of a pool: copied to a new allocation */
		q = rmem_alloc(len);
		if (!q)
			return -1;
		memcpy(q, *pp, *cap * elem);
		rmem_free(*pp);
		*pp = q;
		*cap = len / elem;
		return 0;
	}
	i = slot_of(*pp);
	if (i < 0)
		return -1;
	if (maps[i].arena) {
		/* no mremap inside the arena: copied to a new allocation */
		q = alloc(len, 0);
		if (!q)
			return -1;
		memcpy(q, *pp, *cap * elem);
		rmem_free(*pp);
		*pp = q;
		*cap = len / elem;
		return 0;
	}
	old = maps[i].len;
	if (over(used - old + len)) {
		failed = 1;
		return -1;
	}
	q = (void *)mp_syscall(SYS_mremap, *pp, old, len, MREMAP_MAYMOVE);
	if (q == MAP_FAILED) {
		failed = 1;
		return -1;
	}
	maps[i].p = q;
	maps[i].len = len;
	used = used - old + len;
	if (used > peak)
		peak = used;
	*pp = q;
	*cap = len / elem;
	return 0;
}

void rmem_free(void *p)
{
	int i = slot_of(p), k;

	if (i < 0) {
		/* a pool's last piece goes back (zeroed: pieces start zeroed) */
		k = pool_of(p);
		if (k >= 0 && (char *)p == (char *)maps[k].p + maps[k].last && maps[k].cut > maps[k].last) {
			size_t len = maps[k].cut - maps[k].last;

			memset(p, 0, len);
			used -= len;
			maps[k].cut = maps[k].last;
		}
		return;
	}
	unmap_fresh(maps[i].p, maps[i].len, maps[i].arena);
	used -= maps[i].len;
	maps[i].p = NULL;
	maps[i].len = 0;
}

void rmem_forget(void *p)
{
	int i = slot_of(p);

	if (i < 0) {
		/* a piece still in use by someone else: its pool is never unmapped */
		i = pool_of(p);
		if (i >= 0) {
			maps[i].kept = 1;
			arena_kept |= maps[i].arena;
		}
		return;
	}
	arena_kept |= maps[i].arena;
	used -= maps[i].len;
	maps[i].p = NULL;
	maps[i].len = 0;
}

void rmem_release(void)
{
	int i;

	for (i = 0; i < n_slots; i++) {
		if (maps[i].pool && !maps[i].kept && !maps[i].arena)
			mp_sys_munmap(maps[i].p, maps[i].len);
		else if (maps[i].p && !maps[i].pool && !maps[i].arena)
			rmem_free(maps[i].p);
		if (maps[i].pool || maps[i].arena)
			memset(&maps[i], 0, sizeof(maps[i]));
	}
	if (arena && !arena_kept)
		mp_sys_munmap(arena, ARENA_LEN);
	if (!arena_kept) {
		arena = NULL;
		arena_cut = 0;
		arena_tried = 0;
	}
	pool_at = -1;
	pools = 0;
}

uint64_t rmem_peak(void)
{
	return peak;
}

int rmem_failed(void)
{
	return failed;
}

int rmem_is_own(uint64_t addr)
{
	int i;

	if (arena && addr >= (uintptr_t)arena && addr < (uintptr_t)arena + ARENA_LEN)
		return 1;
	for (i = 0; i < n_slots; i++)
		if (maps[i].p && addr >= (uintptr_t)maps[i].p &&
		    addr < (uintptr_t)maps[i].p + maps[i].len)
			return 1;
	return 0;
}

size_t rmem_own_ranges(uint64_t (*out)[2], size_t max)
{
	uint32_t k = n_own;
	size_t n = 0;
	int i;

	if (arena && n < max) {
		out[n][0] = (uintptr_t)arena;
		out[n][1] = (uintptr_t)arena + ARENA_LEN;
		n++;
	}
	for (i = 0; i < n_slots && n < max; i++) {
		if (!maps[i].p || maps[i].arena)
			continue;
		out[n][0] = (uintptr_t)maps[i].p;
		out[n][1] = (uintptr_t)maps[i].p + maps[i].len;
		n++;
	}
	for (i = 0; i < (int)(k < MAX_OWN ? k : MAX_OWN) && n < max; i++) {
		if (!own[i].end)
			continue;
		out[n][0] = own[i].start;
		out[n][1] = own[i].end;
		n++;
	}
	return n;
}

static void swap_bytes(char *a, char *b, size_t n)
{
	while (n >= 8) {
		uint64_t t;

		memcpy(&t, a, 8);
		memcpy(a, b, 8);
		memcpy(b, &t, 8);
		a += 8;
		b += 8;
		n -= 8;
	}
	while (n--) {
		char t = *a;

		*a++ = *b;
		*b++ = t;
	}
}

static void sift_down(char *base, size_t i, size_t n, size_t elem,
		      int (*less)(const void *, const void *))
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && less(base + m * elem, base + l * elem))
			m = l;
		if (r < n && less(base + m * elem, base + r * elem))
			m = r;
		if (m == i)
			return;
		swap_bytes(base + i * elem, base + m * elem, elem);
		i = m;
	}
}

static void heapsort_range(char *b, size_t n, size_t elem,
			   int (*less)(const void *, const void *))
{
	size_t i;

	if (n < 2)
		return;
	for (i = n / 2; i-- > 0;)
		sift_down(b, i, n, elem, less);
	for (i = n - 1; i > 0; i--) {
		swap_bytes(b, b + i * elem, elem);
		sift_down(b, 0, i, elem, less);
	}
}

/* Introsort: quicksort (median of three), insertion sort for short runs,
 * heapsort when the recursion goes too deep. */
static void intro(char *b, size_t n, size_t elem, int (*less)(const void *, const void *),
		  int depth)
{
	while (n > 16) {
		char *lo = b, *mid = b + (n / 2) * elem, *hi = b + (n - 1) * elem;
		size_t i = 0, j = n - 1;

		if (!depth--) {
			heapsort_range(b, n, elem, less);
			return;
		}
		/* median of three to b[0], then partition around it */
		if (less(mid, lo))
			swap_bytes(mid, lo, elem);
		if (less(hi, mid)) {
			swap_bytes(hi, mid, elem);
			if (less(mid, lo))
				swap_bytes(mid, lo, elem);
		}
		swap_bytes(lo, mid, elem);
		for (;;) {
			do
				i++;
			while (i < n && less(b + i * elem, b));
			while (less(b, b + j * elem))
				j--;
			if (i >= j)
				break;
			swap_bytes(b + i * elem, b + j * elem, elem);
		}
		swap_bytes(b, b + j * elem, elem);
		/* recurse into the smaller side, loop on the larger */
		if (j < n - j - 1) {
			intro(b, j, elem, less, depth);
			b += (j + 1) * elem;
			n -= j + 1;
		} else {
			intro(b + (j + 1) * elem, n - j - 1, elem, less, depth);
			n = j;
		}
	}
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && less(b + k * elem, b + (k - 1) * elem); k--)
			swap_bytes(b + k * elem, b + (k - 1) * elem, elem);
}

void rsort(void *base, size_t n, size_t elem, int (*less)(const void *, const void *))
{
	int depth = 0;
	size_t m;

	for (m = n; m; m >>= 1)
		depth += 2;
	intro(base, n, elem, less, depth);
}

/*
 * The live blocks by address: the same introsort, its compares and moves
 * inline (rsort's go through a function and a byte copier: 7.5 us of the
 * 230 us scan at exit of ls, for 143 blocks).
 */
static int addr_less(const void *x, const void *y)
{
	return ((const struct rblock *)x)->addr < ((const struct rblock *)y)->addr;
}

static inline void block_swap(struct rblock *a, struct rblock *b)
{
	struct rblock t = *a;

	*a = *b;
	*b = t;
}

static MP_REALIGN void blocks_intro(struct rblock *b, size_t n, int depth)
{
	while (n > 16) {
		size_t mid = n / 2, i = (size_t)-1, j = n;
		uint64_t p;

		if (!depth--) {
			heapsort_range((char *)b, n, sizeof(*b), addr_less);
			return;
		}
		/* the median of three to b[0], then Hoare's partition around it:
		 * 0 <= j < n - 1, b[0 .. j] <= p <= b[j + 1 .. n) */
		if (b[mid].addr < b[0].addr)
			block_swap(&b[mid], &b[0]);
		if (b[n - 1].addr < b[mid].addr) {
			block_swap(&b[n - 1], &b[mid]);
			if (b[mid].addr < b[0].addr)
				block_swap(&b[mid], &b[0]);
		}
		block_swap(&b[0], &b[mid]);
		p = b[0].addr;
		for (;;) {
			do
				i++;
			while (b[i].addr < p);
			do
				j--;
			while (b[j].addr > p);
			if (i >= j)
				break;
			block_swap(&b[i], &b[j]);
		}
		/* recurse into the smaller side, loop on the larger */
		if (j + 1 < n - j - 1) {
			blocks_intro(b, j + 1, depth);
			b += j + 1;
			n -= j + 1;
		} else {
			blocks_intro(b + j + 1, n - j - 1, depth);
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++) {
		struct rblock x = b[i];
		size_t k = i;

		for (; k > 0 && x.addr < b[k - 1].addr; k--)
			b[k] = b[k - 1];
		b[k] = x;
	}
}

void rsort_blocks(struct rblock *b, size_t n)
{
	int depth = 0;
	size_t m;

	for (m = n; m; m >>= 1)
		depth += 2;
	blocks_intro(b, n, depth);
}
