/*
 * replay.h - the replay engine every report is built on.
 *
 * replay_run() feeds a trace's records, in time order, through a model of
 * the process's memory: live blocks per kind (heap, mmap, pinned, device,
 * managed, registered), per-kind and per-function counters, interned
 * stacks, Python code objects, modules, marks and threads. Reports hook
 * in with callbacks (after each record, at each mark) and take snapshots
 * of live memory per stack with replay_snapshot(). Memory grows with live
 * blocks and distinct stacks, never with the number of events.
 */
#ifndef MEMPROV_REPLAY_H
#define MEMPROV_REPLAY_H

#include <stdint.h>
#include <uthash.h>

#include "memprov_trace.h"
#include "range_index.h"
#include "trace_reader.h"

struct replay_block {
	UT_hash_handle hh;
	struct replay_block_key {
		uint64_t addr;
		uint8_t kind;
		uint8_t pad[7];
	} key;
	uint64_t size;
	uint64_t stack;
	uint64_t ts;
	int32_t device;
	uint16_t func;
	uint8_t reach;     /* enum mp_reach_class from the scan at exit; 0: none */
	uint8_t inherited; /* a forked child's: its parent held it at the fork */
	uint8_t interp;    /* REPLAY_INTERP: CPython's own: MP_RF_INTERP (remade
			      after a fork), or pymalloc's arena table and radix
			      tree (replay.c); REPLAY_SIGSTACK: a thread's
			      alternate signal stack now (MP_REC_SIGSTACK);
			      REPLAY_JOINED: see struct replay_thread's run */
	uint8_t in_slab;   /* one of replay_adopt's arrays: freed with it, not alone */
	uint16_t thread;   /* the serial of the thread that allocated it, mod 2^16 */
	uint32_t weight;   /* blocks it stands for: 1, more when sampled */
};
#define REPLAY_INTERP 1
#define REPLAY_SIGSTACK 2
#define REPLAY_JOINED 4 /* made right after the thread's last block, of its run (replay.c) */
#define REPLAY_RUN_MAX 4     /* blocks in a run at most (struct replay_thread) */
#define REPLAY_RUN_SMALL 64  /* a run's blocks but one are this small at most */
_Static_assert(sizeof(struct replay_block) <= 112, "a live block's size: the replay's memory");

/* Bytes and blocks a live block counts for (sampled blocks are weighted). */
static inline uint64_t block_bytes(const struct replay_block *b)
{
	return b->size * b->weight;
}

struct replay_kind {
	uint64_t live_bytes, live_blocks;
	uint64_t peak_bytes, peak_blocks, peak_ts;
	uint64_t allocs, frees, alloc_bytes;
};

struct replay_func {
	uint64_t calls, bytes, failed;
};

struct replay_failure {
	UT_hash_handle hh;
	struct replay_failure_key {
		uint64_t size;
		int32_t result;
		uint16_t func;
		uint8_t kind;
		uint8_t pad;
	} key;
	uint64_t count;
};

struct replay_stack {
	UT_hash_handle hh;
	uint64_t id;
	uint64_t ts;             /* when it was written: picks the modules */
	uint16_t n_native, n_python;
	uint64_t *native;
	struct mp_pyframe *python;
};

struct replay_pycode {
	UT_hash_handle hh;
	uint32_t id;
	uint32_t first_line;
	char *file, *name;
};

struct replay_module {
	char *path;
	uint64_t base, lo, hi;
	uint8_t build_id[32];
	uint8_t build_id_len;
	uint64_t load_ts, unload_ts; /* unload_ts 0: never unloaded */
};

struct replay_mark {
	char *label;
	uint32_t serial;
	uint32_t flags;
	uint64_t ts;
};

struct replay_thread {
	UT_hash_handle hh;
	uint32_t serial;
	uint32_t tid, parent_serial;
	char name[17];
	uint64_t first_ts;
	int realloc_pending;          /* a realloc FREE waits for its ALLOC */
	struct replay_block *stash;   /* the block that realloc gave up */
	/*
	 * A GPU free is recorded before the call, and again, failed, after
	 * it when the call failed: the block it took away, its address and
	 * whether it matched no block, until the thread's next CUDA record
	 * (the runtime's own heap calls may come in between).
	 */
	struct replay_block *gpu_stash;
	uint64_t gpu_free_addr;
	uint8_t gpu_free_kind, gpu_free_pending, gpu_free_unmatched;
	/*
	 * pymalloc's own bookkeeping, made on the thread's next records
	 * around a new arena (replay.c, pyarena_*): PYA_TABLE, a realloc
	 * that may be the arena table growing (its address, for the arena
	 * that must follow); PYA_ARENA, an arena just mapped (the radix
	 * tree's nodes may follow: pya_bot and pya_mid of each size);
	 * PYA_FIRST, a realloc from NULL that may be the table's start.
	 * pya_stack: that record's stack.
	 */
	uint8_t pya_state;
	uint8_t pya_bot, pya_mid; /* radix tree nodes the last arena may bring */
	uint64_t pya_addr, pya_stack;
	/* the thread's alternate signal stack (MP_REC_SIGSTACK): the block it
	 * lies at the start of, by address and kind; addr 0: none */
	uint64_t sigstack_addr;
	uint8_t sigstack_kind;
	/*
	 * The thread's run: the blocks it made one after another from one
	 * stack, nothing allocated or freed in between, no two of one size,
	 * at most one bigger than REPLAY_RUN_SMALL, at most REPLAY_RUN_MAX;
	 * a block that joins the run is marked REPLAY_JOINED. One value a
	 * line makes is one run: an open file's lock (32 B) and buffer, made
	 * by the interpreter, whose frames the stack leaves out.
	 */
	uint64_t run_stack;
	unsigned run_n, run_big;
	uint64_t run_size[REPLAY_RUN_MAX];
};

/*
 * What a forked child inherited (inherit.c fills it before the replay):
 * its parent's live set at the fork, from the parent's trace.
 */
enum replay_inherit_state {
	INHERIT_NONE = 0,    /* not a forked child (or an old trace that does not say) */
	INHERIT_FOUND,       /* the parent's trace was replayed up to the fork */
	INHERIT_UNKNOWN,     /* a forked child whose parent's trace was not found */
};

struct replay_inherit {
	int state;                /* enum replay_inherit_state */
	char *parent_path;        /* INHERIT_FOUND: the parent's trace */
	int32_t parent_pid;
	uint64_t fork_ts;         /* the parent's FORK record */
	uint64_t blocks, bytes;   /* inherited at the fork */
	uint64_t freed_blocks, freed_bytes; /* inherited blocks the child freed */
	uint64_t held_blocks, held_bytes;   /* still held at the instant reported
					       (set by inherit_split) */
	int lost_known;                     /* the gate's lost rule set lost_*: */
	uint64_t lost_blocks, lost_bytes;   /* of those held, lost in the child
					       (inherit_drop) */
};

struct replay;
typedef int (*replay_record_fn)(struct replay *r, const struct mp_rec_head *h, void *arg);
typedef int (*replay_mark_fn)(struct replay *r, const struct replay_mark *m, void *arg);

struct replay {
	struct trace *trace;
	struct replay_block *blocks;      /* every kind but mmap */
	struct replay_block **slabs;      /* replay_adopt's arrays of inherited blocks */
	size_t n_slabs;
	struct replay_block *mmaps;       /* mmap blocks, by address */
	struct range_index mmap_index;    /* the same, ordered: searched by range */
	struct replay_block **unmap_hits; /* do_unmap's scratch: blocks a munmap meets */
	size_t alloc_unmap_hits;
	struct replay_kind kinds[MP_KIND_COUNT];
	struct replay_func funcs[MP_FN_MAX];
	struct replay_failure *failures;
	struct replay_stack *stacks;
	struct replay_pycode *pycodes;
	struct replay_thread *threads;
	struct replay_thread *last_thread; /* the last record's: looked up once per run of records */
	struct replay_module *modules;
	size_t n_modules, alloc_modules;
	struct replay_mark *marks;
	size_t n_marks, alloc_marks;
	uint64_t events;                  /* records replayed */
	uint64_t unmatched_frees;         /* frees of blocks allocated before tracing */
	uint64_t unmatched_unmaps;        /* munmaps of ranges no traced mmap made */
	uint64_t ctx_reset_frees;
	/*
	 * pymalloc's bookkeeping (replay.c, pya_*): its arena table's
	 * address (0: not known), whether an arena was seen, and the ranges
	 * of addresses its radix tree has nodes for (bottom: 16 GiB << 1,
	 * middle: 512 TiB << 1 | 1), every arena's so far.
	 */
	uint64_t pya_table;
	int pya_arenas;
	uint64_t *pya_ranges;
	size_t n_pya_ranges, alloc_pya_ranges;
	/*
	 * The threads still running Python code when the main module ended
	 * (MP_REC_PYTHREAD, written before its mark): the thread (its
	 * serial mod 2^16, and when it started) and its Python stack, until
	 * the callbacks of that mark have run; n_pythreads counts them all,
	 * those whose thread is not known (3.10) too.
	 */
	struct replay_running {
		uint64_t stack;
		uint64_t since;
		uint16_t thread;
	} *running;
	size_t n_running, alloc_running, n_pythreads;
	int have_reach;                   /* an MP_REC_REACH was seen: reach holds it */
	struct mp_rec_reach reach;        /* the scan at exit (blocks carry its classes) */
	int have_exit;                    /* an MP_REC_EXIT was seen */
	int32_t exit_status;
	uint64_t exit_ts;
	uint64_t now;                     /* timestamp of the last record */
	struct replay_inherit inherit;    /* a forked child's inheritance */
	/* optional callbacks; a nonzero return stops the replay */
	replay_record_fn on_record;       /* after each record is applied */
	replay_mark_fn on_mark;           /* after each mark is applied */
	void *arg;
};

/* Live memory of one (stack, kind, func) at an instant. */
struct replay_live {
	UT_hash_handle hh;
	struct replay_live_key {
		uint64_t stack;
		uint16_t func;
		uint8_t kind;
		uint8_t inherited; /* blocks a forked child inherited (kept apart) */
		uint8_t interp;    /* MP_RF_INTERP blocks (kept apart: interpreter state) */
		uint8_t held;      /* at the end of the main module: held by a frame
				      still running in another thread
				      (replay_snapshot_main_end) */
		uint8_t sigstack;  /* a thread's alternate signal stack, not found
				      lost by the scan at exit (kept apart: in use) */
		uint8_t pad[1];
	} key;
	uint64_t blocks, bytes;
	/* the most of them that have one size: numpy's cache keeps at most
	 * 7 freed blocks of each size (SUPP_FEW); where a report adds up or
	 * subtracts sets, a bound above it (blocks, or a sum) */
	uint64_t one_size;
	/* a part of a stack's blocks (what a test added): the whole then,
	 * for "one block of library state" (category.c); 0: blocks, bytes */
	uint64_t whole_blocks, whole_bytes;
};

void replay_init(struct replay *r, struct trace *t);
/* Replay every record (or until a callback returns nonzero). Returns 0. */
int replay_run(struct replay *r);
void replay_release(struct replay *r);

/*
 * A forked child's replay r (before replay_run) takes the blocks live in
 * from (its parent's replay, stopped at the fork), marked inherited, and
 * the stacks and Python code objects they name. Counts them in r->inherit.
 */
void replay_adopt(struct replay *r, const struct replay *from);

/* Live bytes and blocks per (stack, kind, func) now; free with replay_live_free. */
struct replay_live *replay_snapshot(const struct replay *r);
/* The same without one_size (set to blocks): a series of points (growth,
 * a test's start) that never asks for sizes, at a third of the cost. */
struct replay_live *replay_snapshot_counts(const struct replay *r);
/*
 * The same, for a verdict on what is live at the end of the main module
 * (in the callback of its mark): it keeps apart (key.held) what a frame
 * still running then in another thread holds as its locals: a block
 * that thread allocated (a thread told by its tid: CPython 3.11 and
 * later) whose Python frames, from the outermost to the one that
 * allocated it, are the thread's outermost frames at the mark (at the
 * same lines but in the allocating frame, which has moved on), the two
 * newest such blocks of its stack.
 */
struct replay_live *replay_snapshot_main_end(const struct replay *r);
/* The same for the blocks of one enum mp_reach_class only. */
struct replay_live *replay_snapshot_reach(const struct replay *r, unsigned cls);
void replay_live_free(struct replay_live **live);

struct replay_stack *replay_find_stack(const struct replay *r, uint64_t id);
struct replay_pycode *replay_find_pycode(const struct replay *r, uint32_t id);
/* The module that covered addr when the stack was written (ts), or NULL. */
const struct replay_module *replay_find_module(const struct replay *r, uint64_t addr, uint64_t ts);

/*
 * The end of the trace, once replayed: the exit record, else the later of
 * the header's end time and the last record (the point of death of a
 * killed process, or now for one still running). Absolute ns.
 */
uint64_t replay_end_ts(const struct replay *r);

/* "exited with status 3", "killed or still running: ...": how it ended. */
const char *replay_ending(const struct replay *r, char *buf, size_t len);
/* Why tracing stopped early (state MP_STATE_STOPPED), in words. */
const char *replay_stop_why(const struct mp_file_header *h);

#endif /* MEMPROV_REPLAY_H */
