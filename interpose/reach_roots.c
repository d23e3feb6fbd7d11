/*
 * reach_roots.c - the roots of the reachability scan: memory that is not
 * a tracked block but may hold pointers to blocks.
 *
 *  - the writable segments (data, bss, relro) of every loaded object;
 *  - each thread's stack from its stack pointer (less the 128-byte red
 *    zone) up, and its registers; the block a thread pointer (TCB and
 *    static TLS) lives in; the DTV and dynamic TLS blocks are heap blocks
 *    the TCB points to;
 *  - every other readable, writable mapping (the loader's own memory,
 *    where the main thread's TCB lives, shared memory, private file
 *    mappings, memory the program mapped with raw system calls), as
 *    valgrind does, less device mappings.
 *
 *  - the parts of the break the program took itself (sbrk, brk: reach.c
 *    keeps them), though they lie in [heap].
 *
 * Never roots: the malloc arenas (the rest of the [heap] of brk, glibc's other arenas,
 * which glibc maps with calls memprov does not see, and glibc's main_arena
 * with its free lists, found in libc's data by its top chunk; a malloc
 * replacement's own mappings, rroots.alloc_maps), the stacks
 * of threads that have exited (glibc keeps them for reuse), the tracked
 * blocks themselves (they are scanned only when reached), and memprov's
 * own mappings (the trace, its tables, the scan's memory). Pointers found
 * in the CUDA libraries' own data, or in mappings nobody tracked, do not
 * keep CUDA blocks alive: the driver keeps every allocation in its tables.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls reach_maps, reach_mem and sys
 * (and the loader's dl_iterate_phdr).
 */
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "reach_int.h"

#define RED_ZONE 128
#define HEAP_MAX (64ull << 20)    /* glibc's HEAP_MAX_SIZE on 64-bit */
#define MA_TOP 96                 /* offsetof(struct malloc_state, top), glibc >= 2.27 */
#define MA_BINS 112               /* offsetof(struct malloc_state, bins) */
#define MA_NEXT 2160              /* offsetof(struct malloc_state, next) */
#define MA_SIZE 2200              /* sizeof(struct malloc_state) */
#define TCB_SEARCH (16 << 10)     /* a thread's TCB sits this near its stack's top */

struct range {
	uint64_t start, end;
	uint32_t flags;
	uint32_t pad;
};

/* A growable, then sorted and merged, list of ranges. */
struct rlist {
	struct range *v;
	size_t n, cap;
};

struct ctx {
	struct rroots *rr;
	const struct rlive *l;
	const struct rmaps *m;
	struct rlist mods, stacks, ex, ex_vma;
	uint64_t heap_lo, heap_hi, brk;
	uint64_t libc_lo[8], libc_hi[8];
	int n_libc;
	int err;
};

static void add(struct ctx *c, struct rlist *l, uint64_t start, uint64_t end, uint32_t flags)
{
	if (end <= start || c->err)
		return;
	if (rmem_grow((void **)&l->v, &l->cap, sizeof(*l->v), l->n + 1)) {
		c->err = RX_NOMEM;
		return;
	}
	l->v[l->n].start = start;
	l->v[l->n].end = end;
	l->v[l->n].flags = flags;
	l->n++;
}

static int range_less(const void *x, const void *y)
{
	return ((const struct range *)x)->start < ((const struct range *)y)->start;
}

/* Sort and merge overlapping ranges. */
static void normalize(struct rlist *l)
{
	size_t i, k = 0;

	rsort(l->v, l->n, sizeof(*l->v), range_less);
	for (i = 0; i < l->n; i++) {
		if (k && l->v[i].start <= l->v[k - 1].end) {
			if (l->v[i].end > l->v[k - 1].end)
				l->v[k - 1].end = l->v[i].end;
			continue;
		}
		l->v[k++] = l->v[i];
	}
	l->n = k;
}

static void add_root(struct ctx *c, uint64_t start, uint64_t end, uint32_t flags)
{
	struct rroots *rr = c->rr;

	if (end <= start || c->err)
		return;
	if (rmem_grow((void **)&rr->r, &rr->cap, sizeof(*rr->r), rr->n + 1)) {
		c->err = RX_NOMEM;
		return;
	}
	rr->r[rr->n].start = start;
	rr->r[rr->n].end = end;
	rr->r[rr->n].flags = flags;
	rr->n++;
}

/* [a, b) less the merged ranges of ex, each piece handed to emit. */
static void subtract(struct ctx *c, uint64_t a, uint64_t b, uint32_t flags, const struct rlist *ex,
		     void (*emit)(struct ctx *, uint64_t, uint64_t, uint32_t))
{
	size_t lo = 0, hi = ex->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ex->v[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < ex->n && ex->v[lo].start < b && a < b; lo++) {
		if (ex->v[lo].start > a)
			emit(c, a, ex->v[lo].start, flags);
		if (ex->v[lo].end > a)
			a = ex->v[lo].end;
	}
	if (a < b)
		emit(c, a, b, flags);
}

static void emit_root(struct ctx *c, uint64_t a, uint64_t b, uint32_t flags)
{
	add_root(c, a, b, flags);
}

static void emit_less_ex(struct ctx *c, uint64_t a, uint64_t b, uint32_t flags)
{
	subtract(c, a, b, flags, &c->ex, emit_root);
}

/* Is this object part of CUDA (its data keeps every CUDA block listed)? */
static int is_cuda(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libcuda.so", 10) || !strncmp(base, "libcudart.so", 12) ||
	       !strncmp(base, "libnvidia-", 10) || !strncmp(base, "libcudadebugger", 15);
}

static int is_libc(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so", 7);
}

/*
 * The dynamic loader (ld-linux*.so, ld.so): glibc's loader keeps the
 * address of /etc/ld.so.cache's mapping after it unmapped it (dl-cache.c's
 * cache_new), and the kernel gives that range to the program's next
 * anonymous mmap, which such a stale word would keep "reachable". The
 * loader never holds a mapping the program made, so its data keeps none
 * alive (heap blocks it points to, link maps and TLS, still count).
 */
static int is_loader(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld.so", 5);
}

/* Whether info is libmemprov.so itself (its code holds this function). */
static int is_self(const struct dl_phdr_info *info)
{
	uintptr_t me = (uintptr_t)is_self;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && me >= a && me - a < ph->p_memsz)
			return 1;
	}
	return 0;
}

/*
 * The writable segments of each loaded object are roots, but memprov's
 * own: its state (tables, the bootstrap arena, a megabyte of bss) holds
 * no reference of the program's, and a stale word there would keep a
 * program's block alive.
 */
static int on_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ctx *c = arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	uint32_t flags = (is_cuda(name) ? 0 : RR_PROGRAM) | (is_loader(name) ? RR_NO_MMAP : 0);
	int i, self = is_self(info);

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		if (self) {
			add(c, &c->ex_vma, a, a + ph->p_memsz, 0);
			continue;
		}
		add(c, &c->mods, a, a + ph->p_memsz, flags);
		if (is_libc(name) && c->n_libc < 8) {
			c->libc_lo[c->n_libc] = a;
			c->libc_hi[c->n_libc++] = a + ph->p_memsz;
		}
	}
	return 0;
}

static int readable(const struct ctx *c, uint64_t a, uint64_t len)
{
	const struct rvma *v = rmaps_find(c->m, a);

	return v && (v->prot & RP_R) && v->type != RV_SKIP &&
	       !(v->type == RV_FILE && (v->prot & RP_SHARED)) && a + len <= v->end;
}

static uint64_t word(uint64_t a)
{
	return *(const volatile uint64_t *)a;
}

/* Does m look like a malloc_state: most of its bins empty (self-linked)? */
static int arena_like(const struct ctx *c, uint64_t m)
{
	int j, empty = 0;

	if (!readable(c, m, MA_SIZE))
		return 0;
	for (j = 0; j < 127; j++) {
		uint64_t self = m + MA_TOP + 16u * (unsigned)j;

		if (word(m + MA_BINS + 16u * j) == self && word(m + MA_BINS + 8 + 16u * j) == self)
			empty++;
	}
	return empty >= 32;
}

/* glibc's main_arena, by its top chunk: top + size of top == the break. */
static int top_end_ok(const struct ctx *c, uint64_t top, uint64_t end)
{
	size_t i;

	if (end == c->brk)
		return 1;
	for (i = 0; i < c->rr->n_prog_brk; i++)
		if (end == c->rr->prog_brk[i][0] && end > top)
			return 1;
	return 0;
}

/*
 * Is a one of glibc's other arenas? Its top chunk lies in a heap: an
 * anonymous mapping at a HEAP_MAX-aligned address whose heap_info
 * (ar_ptr first) names a. Not a count of empty bins: a busy arena may
 * have few, and missing its heaps would make them roots.
 */
static int heap_arena(const struct ctx *c, uint64_t a)
{
	const struct rvma *v;
	uint64_t h;

	if (!a || (a & 7) || !readable(c, a, MA_SIZE))
		return 0;
	h = word(a + MA_TOP) & ~(HEAP_MAX - 1);
	v = h ? rmaps_find(c->m, h) : NULL;
	return v && v->type == RV_ANON && readable(c, h, 32) && word(h) == a;
}

/*
 * Does ma's list of arenas (malloc_state.next) come back to it, through
 * heap arenas? main_arena's does (with one arena it links to itself).
 * The scan once took a word 512 bytes before main_arena in libc's data
 * for main_arena's top: that shift lines its bins 32 up against the
 * real ones, so it looked like an arena too, and its "next" was a real
 * bin's address (gpg-connect-agent, in one layout of memory out of a
 * few; the heap excluded from there hid libc's data, and 29 blocks the
 * program still reached were called lost).
 */
static int arena_cycle(const struct ctx *c, uint64_t ma)
{
	uint64_t a = word(ma + MA_NEXT);
	int n;

	for (n = 0; n < 1024; n++) {
		if (a == ma)
			return 1;
		if (!heap_arena(c, a))
			return 0;
		a = word(a + MA_NEXT);
	}
	return 0;
}

static uint64_t find_main_arena(const struct ctx *c)
{
	int k;

	for (k = 0; k < c->n_libc; k++) {
		uint64_t a = (c->libc_lo[k] + 7) & ~7ull, end = 0;

		/* a mapping looked up once, not once a word (libc: 7,000 words) */
		for (; a + 8 <= c->libc_hi[k]; a += 8) {
			uint64_t t;

			if (a + 8 > end) {
				const struct rvma *v = rmaps_find(c->m, a);

				if (!v) {
					end = 0;
					continue;
				}
				end = readable(c, a, 8) ? v->end : 0;
				if (!end) {
					a = (v->end - 8) & ~7ull; /* the next mapping */
					continue;
				}
			}
			t = word(a);
			if (t < c->heap_lo || t + 16 > c->heap_hi || (t & 7))
				continue;
			/* the top chunk ends at the break, or where the program's own part of it starts */
			if (!top_end_ok(c, t, t + (word(t + 8) & ~7ull)) || a < MA_TOP)
				continue;
			if (arena_like(c, a - MA_TOP) && arena_cycle(c, a - MA_TOP))
				return a - MA_TOP;
		}
	}
	return 0;
}

/*
 * Leave out the heap at h: its HEAP_MAX reservation is anonymous memory
 * (read and write up to its size, the rest inaccessible), so no more
 * than the anonymous mappings that run on from h, without a gap. A heap
 * wrongly found cannot take a library's data or anything else with it.
 */
static void exclude_heap(struct ctx *c, uint64_t h)
{
	const struct rvma *v = rmaps_find(c->m, h);
	uint64_t end = h;
	size_t i;

	for (i = v ? (size_t)(v - c->m->v) : c->m->n; i < c->m->n && end < h + HEAP_MAX; i++) {
		v = &c->m->v[i];
		if (v->type != RV_ANON || v->start > end)
			break;
		end = v->end < h + HEAP_MAX ? v->end : h + HEAP_MAX;
	}
	add(c, &c->ex, h, end, 0);
}

/* The heaps of glibc's other arenas: from main_arena's list, then by shape. */
static void exclude_arenas(struct ctx *c, uint64_t ma)
{
	uint64_t a = ma ? word(ma + MA_NEXT) : 0;
	size_t i;
	int n;

	for (n = 0; ma && a != ma && n < 1024 && heap_arena(c, a); n++) {
		uint64_t h = word(a + MA_TOP) & ~(HEAP_MAX - 1);
		int k;

		for (k = 0; h && k < 1024 && readable(c, h, 32); k++) {
			exclude_heap(c, h);
			h = word(h + 8); /* heap_info.prev */
		}
		a = word(a + MA_NEXT);
	}
	/* a heap_info at a HEAP_MAX-aligned start whose arena is in its first page */
	for (i = 0; i < c->m->n; i++) {
		const struct rvma *v = &c->m->v[i];
		uint64_t ar, sz;

		if (v->type != RV_ANON || (v->start & (HEAP_MAX - 1)) || !(v->prot & RP_R) ||
		    v->end - v->start < 4096)
			continue;
		ar = word(v->start);
		sz = word(v->start + 16);
		if (!sz || sz > HEAP_MAX || (sz & 4095) || ar < v->start || ar >= v->start + 4096 ||
		    !heap_arena(c, ar))
			continue;
		exclude_heap(c, v->start);
	}
}

static const struct rvma *vma_of(const struct ctx *c, uint64_t a)
{
	return a ? rmaps_find(c->m, a) : NULL;
}

/* Is mapping i right above an inaccessible one (a thread stack's guard)? */
static int guarded(const struct rmaps *m, size_t i)
{
	return i > 0 && m->v[i - 1].end == m->v[i].start && m->v[i - 1].type == RV_ANON &&
	       !(m->v[i - 1].prot & (RP_R | RP_W));
}

/* A TCB (tcb == self == its own address) near the top of v, or 0. */
static uint64_t tcb_in(const struct rvma *v)
{
	uint64_t t = v->end > v->start + TCB_SEARCH ? v->end - TCB_SEARCH : v->start;

	if (!(v->prot & RP_R) || v->type != RV_ANON)
		return 0;
	for (t = (t + 63) & ~63ull; t + 24 <= v->end; t += 64)
		if (word(t) == t && word(t + 16) == t)
			return t;
	return 0;
}

/* The heap or mmap block that holds addr, or NULL. */
static const struct rblock *block_at(const struct rlive *l, uint64_t addr)
{
	int g;

	for (g = RG_HOST; g <= RG_MMAP; g++) {
		size_t lo = l->first[g], hi = l->first[g + 1];

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (l->b[mid].addr <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > l->first[g] && addr < l->b[lo - 1].addr + l->b[lo - 1].size &&
		    (l->b[lo - 1].kind == MP_KIND_HEAP || l->b[lo - 1].kind == MP_KIND_MMAP))
			return &l->b[lo - 1];
	}
	return NULL;
}

/* Is the main thread (tid == pid) among the threads? */
static int main_alive(const struct rthread *th, size_t nth)
{
	int32_t pid = getpid();
	size_t t;

	for (t = 0; t < nth; t++)
		if (th[t].tid == pid)
			return 1;
	return 0;
}

/* Stacks, TLS blocks and registers of the threads; dead stacks excluded. */
static void thread_roots(struct ctx *c, const struct rthread *th, size_t nth)
{
	struct rroots *rr = c->rr;
	size_t i, t, unknown = 0;

	for (t = 0; t < nth; t++) {
		const struct rvma *sv = vma_of(c, th[t].sp), *fv = vma_of(c, th[t].fs);
		int k;

		if (th[t].how == RT_UNKNOWN) {
			unknown++;
			continue;
		}
		if (th[t].how != RT_STOPPED)
			rr->notes |= MP_REACH_N_THREADS;
		if (sv) {
			uint64_t lo = th[t].sp - (th[t].self ? 0 : RED_ZONE);
			const struct rblock *b = block_at(c->l, th[t].sp);

			if (b) {
				/* a stack in a block (a signal stack, a coroutine) */
				lo = lo > b->addr ? lo : b->addr;
				add_root(c, lo, b->addr + b->size, RR_PROGRAM);
			} else {
				add(c, &c->stacks, lo > sv->start ? lo : sv->start, sv->end,
				    RR_PROGRAM);
				add(c, &c->ex_vma, sv->start, sv->end, 0);
			}
		}
		if (fv && fv != sv) {
			/* the TLS block of a thread on another stack, or the loader's */
			add(c, &c->stacks, fv->start, fv->end, RR_PROGRAM);
			add(c, &c->ex_vma, fv->start, fv->end, 0);
		}
		for (k = 0; k < th[t].nregs; k++) {
			if (rmem_grow((void **)&rr->regs, &rr->regs_cap, 8, rr->nregs + 1)) {
				c->err = RX_NOMEM;
				return;
			}
			rr->regs[rr->nregs++] = th[t].regs[k];
		}
		for (k = 0; k < th[t].nvec; k++) {
			if (rmem_grow((void **)&rr->regs, &rr->regs_cap, 8, rr->nregs + 1)) {
				c->err = RX_NOMEM;
				return;
			}
			rr->regs[rr->nregs++] = th[t].vec[k];
		}
	}
	if (unknown)
		rr->notes |= MP_REACH_N_THREADS;
	/*
	 * Stacks no known thread uses are dead (glibc keeps them for reuse)
	 * when every thread is known: like valgrind, which no longer sees
	 * below a dead thread's last stack pointer, only the thread's TCB and
	 * static TLS at the top are roots (they hold its DTV).
	 */
	for (i = 0; i < c->m->n && !unknown; i++) {
		const struct rvma *v = &c->m->v[i];
		uint64_t tcb = 0, lo;
		int live = 0;

		if (v->type != RV_STACK && (!(v->prot & RP_W) || !guarded(c->m, i) ||
					    !(tcb = tcb_in(v))))
			continue;
		for (t = 0; t < nth && !live; t++)
			live = vma_of(c, th[t].sp) == v || vma_of(c, th[t].fs) == v;
		if (live)
			continue;
		if (v->type == RV_STACK && main_alive(th, nth)) {
			/* the main thread runs on another stack (a signal handler's) */
			add(c, &c->stacks, v->start, v->end, RR_PROGRAM);
			add(c, &c->ex_vma, v->start, v->end, 0);
			continue;
		}
		add(c, &c->ex_vma, v->start, v->end, 0);
		/* glibc's static TLS size counts the TCB, which ends at the top */
		lo = c->rr->tls_static && c->rr->tls_static < v->end - v->start ?
			     v->end - c->rr->tls_static : tcb;
		if (tcb)
			add(c, &c->stacks, lo < tcb ? lo : tcb, v->end, 0);
	}
}

/* Everything that is never a root (but the loaded objects and live stacks). */
static void exclusions(struct ctx *c, uint64_t trace_inode)
{
	uint64_t own[64][2];
	size_t i, n = rmem_own_ranges(own, 64);

	for (i = 0; i < n; i++)
		add(c, &c->ex, own[i][0], own[i][1], 0);
	for (i = 0; i < c->m->n; i++) {
		const struct rvma *v = &c->m->v[i];

		if ((v->type == RV_HEAP && !c->rr->heap_roots) || v->type == RV_SKIP ||
		    (trace_inode && v->type == RV_FILE && v->inode == trace_inode))
			add(c, &c->ex, v->start, v->end, 0);
	}
}

/*
 * ex, sorted and merged, with the live blocks of the groups before
 * RG_REG merged in: each group is sorted by address already, so a merge
 * of sorted runs, in one pass. Appended to ex and sorted with it, 3
 * million blocks took rsort's heapsort fallback: a fifth of the scan.
 */
static void merge_blocks(struct ctx *c, struct rlist *ex)
{
	const struct rlive *l = c->l;
	size_t at[RG_REG], i = 0, g, n = l->first[RG_REG];
	struct rlist out;

	if (c->err || !n)
		return;
	memset(&out, 0, sizeof(out));
	if (rmem_grow((void **)&out.v, &out.cap, sizeof(*out.v), ex->n + n)) {
		c->err = RX_NOMEM;
		return;
	}
	for (g = 0; g < RG_REG; g++)
		at[g] = l->first[g];
	for (;;) {
		uint64_t s = UINT64_MAX, e = 0;
		int from = -1;

		if (i < ex->n) {
			s = ex->v[i].start;
			e = ex->v[i].end;
		}
		for (g = 0; g < RG_REG; g++)
			if (at[g] < l->first[g + 1] && l->b[at[g]].addr < s) {
				s = l->b[at[g]].addr;
				e = s + l->b[at[g]].size;
				from = (int)g;
			}
		if (from < 0 && i >= ex->n)
			break;
		if (from < 0)
			i++;
		else
			at[from]++;
		if (e <= s)
			continue;
		if (out.n && s <= out.v[out.n - 1].end) {
			if (e > out.v[out.n - 1].end)
				out.v[out.n - 1].end = e;
			continue;
		}
		out.v[out.n].start = s;
		out.v[out.n].end = e;
		out.v[out.n].flags = 0;
		out.n++;
	}
	rmem_free(ex->v);
	*ex = out;
}

MP_REALIGN int rroots_build(struct rroots *rr, const struct rlive *l, const struct rmaps *m,
			    const struct rthread *th, size_t nth, uint64_t trace_inode)
{
	struct ctx c;
	uint64_t ma = 0;
	size_t i;

	memset(&c, 0, sizeof(c));
	c.rr = rr;
	c.l = l;
	c.m = m;
	dl_iterate_phdr(on_module, &c);
	c.brk = (uint64_t)mp_syscall(SYS_brk, 0);
	for (i = 0; i < m->n; i++)
		if (m->v[i].type == RV_HEAP) {
			c.heap_lo = m->v[i].start;
			c.heap_hi = m->v[i].end;
		}
	if (c.heap_hi) {
		ma = find_main_arena(&c);
		if (ma)
			add(&c, &c.ex, ma, ma + MA_SIZE, 0);
		else if (!rr->replacement) /* with a malloc replacement, glibc's may never be used */
			rr->notes |= MP_REACH_N_NO_ARENA;
	}
	if (!rr->heap_roots) {
		exclude_arenas(&c, ma);
		for (i = 0; i < rr->n_alloc_maps; i++) /* a malloc replacement's arenas */
			add(&c, &c.ex, rr->alloc_maps[i][0], rr->alloc_maps[i][1], 0);
	}
	exclusions(&c, trace_inode);
	thread_roots(&c, th, nth);
	for (i = 0; i < c.mods.n; i++)
		add(&c, &c.ex_vma, c.mods.v[i].start, c.mods.v[i].end, 0);
	if (c.err)
		return c.err;
	normalize(&c.ex);
	merge_blocks(&c, &c.ex);
	if (c.err)
		return c.err;
	normalize(&c.ex_vma);
	for (i = 0; i < c.mods.n; i++)
		subtract(&c, c.mods.v[i].start, c.mods.v[i].end, c.mods.v[i].flags, &c.ex, emit_root);
	for (i = 0; i < c.stacks.n; i++)
		subtract(&c, c.stacks.v[i].start, c.stacks.v[i].end, c.stacks.v[i].flags, &c.ex,
			 emit_root);
	for (i = 0; i < m->n; i++) {
		const struct rvma *v = &m->v[i];

		if ((v->prot & (RP_R | RP_W)) != (RP_R | RP_W) ||
		    (v->type == RV_HEAP && !rr->heap_roots) || v->type == RV_SKIP)
			continue;
		if (v->type == RV_FILE && !m->vm_readv_ok && m->mem_fd < 0) {
			rr->notes |= MP_REACH_N_FILES;
			continue;
		}
		subtract(&c, v->start, v->end, 0, &c.ex_vma, emit_less_ex);
	}
	/* what the program took from the break itself: roots inside [heap] */
	for (i = 0; !rr->heap_roots && i < rr->n_prog_brk; i++) {
		uint64_t lo = rr->prog_brk[i][0], hi = rr->prog_brk[i][1];

		if (hi > c.brk)
			hi = c.brk;
		if (lo < c.heap_lo)
			lo = c.heap_lo;
		if (lo < hi && readable(&c, lo, hi - lo))
			emit_root(&c, lo, hi, 0);
	}
	return c.err;
}
