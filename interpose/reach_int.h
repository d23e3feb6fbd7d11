/*
 * reach_int.h - what the files of the reachability scan share: reach.c
 * (the order of the steps, the records), reach_mem.c (bounded memory,
 * sorting), reach_trace.c (reading the trace back), reach_live.c (the
 * live blocks), reach_maps.c (the memory map, fault-safe reads),
 * reach_roots.c (the roots), reach_mark.c (marking and classes) and
 * stop_world.c (stopping the other threads). Nothing here is used
 * outside those files.
 *
 * While the other threads are stopped, none of this may take a lock a
 * stopped thread could hold: no malloc, no stdio, no libunwind, no
 * record written to the trace (memprov's segment lock). Memory comes from
 * reach_mem.c only.
 */
#ifndef MEMPROV_REACH_INT_H
#define MEMPROV_REACH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "../include/memprov_trace.h"
#include "sys.h"
#include "trace_iter.h"

/* Results of the steps: 0, or one of these. */
enum {
	RX_OK = 0,
	RX_TIMEOUT = -2, /* the time bound passed */
	RX_NOMEM = -3,   /* the memory bound, or mmap failed */
	RX_NOTRACE = -4, /* the trace could not be read back */
	RX_NOMAPS = -5,  /* /proc's map of the process could not be read */
};

/* Bounded memory from raw anonymous mappings (reach_mem.c). */
void rmem_init(uint64_t limit) MP_HIDDEN;
/* After rmem_init: once the scan's memory would pass at, bound() is called
 * (once) and the limit lowered to what it returns (a short scan never asks). */
void rmem_bound_later(uint64_t at, uint64_t (*bound)(void)) MP_HIDDEN;
void *rmem_alloc(size_t len) MP_HIDDEN;              /* zeroed; NULL over the bound */
void *rmem_buffer(size_t len) MP_HIDDEN;             /* the same, its pages faulted as used */
void *rmem_table(size_t len) MP_HIDDEN;              /* the same, every page touched now */
/* Make *p hold at least need elements of size elem (*cap counts them). */
int rmem_grow(void **p, size_t *cap, size_t elem, size_t need) MP_HIDDEN;
void rmem_free(void *p) MP_HIDDEN;
void rmem_forget(void *p) MP_HIDDEN;                 /* never unmap it */
void rmem_release(void) MP_HIDDEN;                   /* unmap everything */
uint64_t rmem_peak(void) MP_HIDDEN;
int rmem_failed(void) MP_HIDDEN;                     /* some allocation was refused */
/* In-place sort of n elements of size elem (no malloc, unlike qsort). */
void rsort(void *base, size_t n, size_t elem,
	   int (*less)(const void *a, const void *b)) MP_HIDDEN;
int rmem_is_own(uint64_t addr) MP_HIDDEN;            /* inside the scan's own memory */
void rmem_own(uintptr_t addr, size_t len) MP_HIDDEN;  /* another mapping of memprov's */
/* The scan's own mappings and those given to rmem_own. */
size_t rmem_own_ranges(uint64_t (*out)[2], size_t max) MP_HIDDEN;

/* Reading the trace back (reach_trace.c): fn sees every record stamped
 * before until (UINT64_MAX: all), thread by thread in each thread's
 * order; a nonzero return stops the walk. */
typedef int (*rt_fn)(void *arg, uint32_t serial, const struct mp_rec_head *h);
struct mp_iter_horizon;
/* hz (NULL: none): trace_iter.h's horizons, for a trace nobody writes
 * meanwhile; heap (NULL: none): the compact heap records in batches,
 * as trace_iter.h gives them, the others through fn */
int rt_walk(int fd, mp_iter_view view, uint64_t until, uint64_t until_off, uint64_t deadline,
	    struct mp_iter_horizon *hz, rt_fn fn, mp_iter_heap_fn heap, void *arg) MP_HIDDEN;
/*
 * Where to read an ancestor's trace (on fd) up to: the FORK record its
 * forking thread (serial thread) wrote for child_pid's fork fork_serial
 * once fork returned, as the analyzer replays it: 0, its timestamp in
 * *ts; -1 when it is not there. after, after_off: the instant before the
 * fork and the file's extent then.
 */
int rt_fork_ts(int fd, uint32_t thread, uint64_t after, uint64_t after_off, int32_t child_pid,
	       uint32_t fork_serial, uint64_t *ts) MP_HIDDEN;

/* A live block. Groups are address spaces searched apart. */
enum { RG_HOST, RG_MMAP, RG_REG, RG_COUNT };

struct rblock {
	uint64_t addr;
	uint64_t size;
	uint8_t kind;   /* enum mp_kind */
	uint8_t state;  /* reach_mark.c's state, then enum mp_reach_class */
	uint8_t unsure : 1; /* allocated while an ancestor's fork copied its memory (rl_source) */
	uint8_t placed : 1; /* a mapping at an address the program gave, replacing none (a root) */
	uint8_t chunk : 1;  /* made by the malloc family (reach_mark.c's next_chunk) */
	/*
	 * The next piece of the same mapping (a ring; the block's own index
	 * when alone): a partial munmap, or a MAP_FIXED mmap placed over part
	 * of it, leaves pieces the program still reaches through the first
	 * one (a reservation and what is committed in it). reach_mark.c gives
	 * every piece of a ring the class of the best reached one.
	 */
	uint32_t sib;
};

/* rsort for live blocks, by address (reach_mem.c): the scan's biggest sort. */
void rsort_blocks(struct rblock *b, size_t n) MP_HIDDEN;

/* The blocks live at the scan, sorted by (group, addr). */
struct rlive {
	struct rblock *b;
	size_t n;
	size_t first[RG_COUNT + 1]; /* group g is b[first[g] .. first[g+1]) */
};

/* A trace to read: the process's own (until UINT64_MAX), or the trace of a
 * process it was forked from, up to the fork (the memory it inherited). */
struct rl_source {
	int fd;
	mp_iter_view view; /* the process's own: its bytes in the writer's mappings */
	uint64_t until, until_off;
	int settled; /* no thread writes it while it is read (all are stopped) */
	/*
	 * An ancestor's allocations stamped after this (0: none), up to
	 * until: made while fork copied its address space, page by page,
	 * with its other threads running. The child's copy may hold the
	 * pointer stored next, or the one before: such a block is never
	 * called lost (reach_mark.c takes it as a root).
	 */
	uint64_t unsure_after;
};

/*
 * The live set from the traces (reach_live.c): src[0 .. n), oldest
 * ancestor first, the process's own last; RX_OK, RX_TIMEOUT, ... An
 * ancestor that cannot be read is left out: *ancestors_read says how many
 * were read (its inherited blocks are in the set).
 */
int rl_build(struct rlive *out, const struct rl_source *src, int n, uint64_t deadline,
	     int *ancestors_read) MP_HIDDEN;

/* The process's memory map (reach_maps.c). */
enum rv_type {
	RV_ANON,   /* anonymous (or /dev/zero, SysV shm): read in place */
	RV_FILE,   /* a file: read with the fault-safe reader (truncation: SIGBUS) */
	RV_HEAP,   /* [heap]: the brk arena, never a root */
	RV_STACK,  /* [stack]: the main thread's stack */
	RV_SKIP,   /* devices, vdso, vvar, anon_inode: never read */
};
enum { RP_R = 1, RP_W = 2, RP_X = 4, RP_SHARED = 8 };

struct rvma {
	uint64_t start, end;
	uint64_t inode;
	uint8_t prot;   /* RP_* */
	uint8_t type;   /* enum rv_type */
	uint8_t pad[6];
};

struct rmaps {
	struct rvma *v;
	size_t n;
	int pagemap_fd;    /* /proc/self/pagemap, or -1 */
	int mem_fd;        /* /proc/self/mem when process_vm_readv is refused, or -1 */
	int vm_readv_ok;   /* process_vm_readv works */
	int32_t tid;       /* the scanning thread: process_vm_readv's target (alive,
			      where the main thread may have left) */
	int all_safe;      /* some thread runs: read everything fault-safe */
	/*
	 * A forked child whose inherited blocks are not in the live set
	 * (rroots.heap_roots): only the pages it wrote since the fork (no
	 * longer shared with its parent: exclusively mapped, as the page map
	 * says) can hold a pointer to a block of its own; the others are not
	 * read.
	 */
	int own_pages_only;
};

/* Does the page map tell pages mapped by this process only (Linux 4.2)? */
int rmaps_exclusive_works(const struct rmaps *m) MP_HIDDEN;
/* vm_readv 0: never use process_vm_readv (a seccomp filter may forbid it). */
int rmaps_read(struct rmaps *m, int vm_readv) MP_HIDDEN;
void rmaps_close(struct rmaps *m) MP_HIDDEN;
const struct rvma *rmaps_find(const struct rmaps *m, uint64_t addr) MP_HIDDEN;
/*
 * Call fn on the words of each readable piece of [a, b) (8-byte aligned
 * words wholly inside): in place, or copied through the fault-safe reader
 * for files (and everything when m->all_safe). Pages never touched are
 * skipped. Returns RX_OK or RX_TIMEOUT; counts pieces that could not be
 * read in *unreadable.
 */
typedef void (*rwords_fn)(void *arg, const uint64_t *w, size_t n);
int rmaps_words(const struct rmaps *m, uint64_t a, uint64_t b, rwords_fn fn, void *arg,
		uint32_t *unreadable, uint64_t deadline) MP_HIDDEN;
/*
 * Where every read is a copy (m->all_safe: some thread runs), small
 * blocks are better read a few pages at a time: each copy is a system
 * call, and under a tracer (strace -f) two ptrace stops; a scan of
 * 200,000 blocks made 200,000 of them. rmaps_batchable: whether [a, b)
 * (8-aligned) is one rmaps_words would read whole through one copy, so
 * may be read from the page cache instead (the cache's buffer is taken
 * at the first such block: a scan that reads in place never takes it). rmaps_cached: the copy of the
 * page at address page, or NULL. rmaps_fetch: empties the cache, then
 * copies pages[0..n) (distinct, n <= RMAPS_CACHE_PAGES; sorted in place)
 * and, in the slots left, the pages after the last in its mapping, with
 * one call; a page it could not read is not cached (read it with
 * rmaps_words, which skips what cannot be read).
 */
#define RMAPS_CACHE_PAGES 16
#define RMAPS_PAGE 4096ull
int rmaps_batchable(const struct rmaps *m, uint64_t a, uint64_t b) MP_HIDDEN;
const uint64_t *rmaps_cached(uint64_t page) MP_HIDDEN;
void rmaps_fetch(const struct rmaps *m, uint64_t *pages, size_t n) MP_HIDDEN;

/* What the scan found out about a thread (stop_world.c, reach_roots.c). */
enum { RT_UNKNOWN, RT_STACK_ONLY, RT_STOPPED };

struct rthread {
	int32_t tid;
	int32_t how;            /* RT_* */
	int self;               /* the exiting thread: sp is where the program called memprov */
	uint64_t sp;
	uint64_t fs;            /* thread pointer (TCB), 0 if not known */
	uint64_t regs[16];      /* general-purpose registers when RT_STOPPED */
	int nregs;
	const uint64_t *vec;    /* RT_STOPPED: its vector registers' words (xmm0-15,
				   then the upper halves of ymm0-15), in the
				   stopped world (valid until sw_resume) */
	int nvec;
};

/* A root range and what it may keep alive. */
enum {
	RR_PROGRAM = 1, /* the program's own memory: CUDA blocks count from here */
	RR_NO_MMAP = 2, /* the loader's data: keeps no anonymous mapping alive */
};

struct rroot {
	uint64_t start, end;
	uint32_t flags;
	uint32_t pad;
};

struct rroots {
	struct rroot *r;
	size_t n, cap;
	uint64_t *regs;         /* register values of every covered thread */
	size_t nregs, regs_cap;
	uint32_t notes;         /* enum mp_reach_notes */
	uint64_t tls_static;    /* in: glibc's static TLS size (0: not known) */
	const uint64_t (*prog_brk)[2]; /* in: memory the program took from the break */
	size_t n_prog_brk;
	const uint64_t (*alloc_maps)[2]; /* in: a malloc replacement's own mappings */
	size_t n_alloc_maps;
	int replacement;        /* in: a malloc replacement is in use */
	/*
	 * in: a forked child's inherited blocks are not in the live set:
	 * the allocator's memory (the break's heap, glibc's other arenas, a
	 * replacement's mappings) is scanned as roots, not left out, so that
	 * a block of its own reached only through an inherited one is not
	 * called lost (what that memory holds unreferenced is missed).
	 */
	int heap_roots;
};

/*
 * The memory the process may still take (reach_room.c): the room under
 * its memory cgroup's limits (reclaimable file pages counted as room) and
 * the system's MemAvailable, the smaller; UINT64_MAX when neither is known.
 */
uint64_t rroom_bytes(void) MP_HIDDEN;

/* Build the roots (reach_roots.c). */
int rroots_build(struct rroots *rr, const struct rlive *l, const struct rmaps *m,
		 const struct rthread *th, size_t nth, uint64_t trace_inode) MP_HIDDEN;

/* Counters of the scan, for the MP_REC_REACH record. */
struct rstats {
	uint32_t notes;
	uint32_t threads, stopped, stack_only, unreadable;
	uint64_t root_bytes, block_bytes;
};

/* Mark from the roots and classify every block (reach_mark.c). */
int rmark_run(struct rlive *l, const struct rroots *rr, const struct rmaps *m,
	      struct rstats *st, uint64_t deadline) MP_HIDDEN;

/* Stopping the other threads (stop_world.c). */
#define SW_MAX_THREADS 4096
#define SW_VEC_WORDS 64  /* xmm0-15 and the upper halves of ymm0-15, 8-byte words */

struct sw_world;
/*
 * Stop every thread but the caller with a ptrace helper (helper 0: none)
 * and fill th[] (at most max) with what is known of each; *n is how many.
 * Returns the world to hand to sw_resume (NULL: none stopped, th[] still
 * filled where the kernel says where a thread's stack is).
 */
struct sw_world *sw_stop(struct rthread *th, size_t max, size_t *n, uint64_t deadline,
			 int helper) MP_HIDDEN;
void sw_resume(struct sw_world *w) MP_HIDDEN;

#endif /* MEMPROV_REACH_INT_H */
