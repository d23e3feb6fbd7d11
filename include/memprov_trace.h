/*
 * memprov_trace.h - the memprov trace file format, version 2 (and the
 * version 1 that older memprov wrote, which readers still accept).
 *
 * The one definition of the trace: libmemprov.so (interpose/) writes it,
 * memprov (analyzer/) and the test helpers read it. Both include this
 * header; include/memprov_codec.h holds the one encoder and decoder of
 * the records, written from what this header says.
 *
 * Adding a record type: take the next free number in enum mp_rec_type
 * (numbers never change meaning, 0 stays reserved), add its struct with a
 * layout comment and a _Static_assert on its size (that struct is the
 * record as readers see it, decoded), write it with mp_enc_framed() (its
 * struct's bytes after the head, framed by a length: see "Records,
 * version 2" below), teach analyzer/trace_reader.c to check it, and say
 * so in the README's "Trace format" section. Readers skip framed record
 * types they do not know, so adding a type needs no version bump;
 * changing a layout, or a new compact (unframed) type, does.
 *
 * File layout (all integers little-endian, x86-64 native):
 *
 *   offset 0                  struct mp_file_header   (MP_HEADER_SIZE bytes)
 *   MP_HEADER_SIZE + b*BS     block b, BS = header.chunk_size (the block size)
 *
 *   chunk:  struct mp_chunk_head | record | record | ... | unused
 *                                  <------ head.used ---->
 *
 * Version 2: a chunk is 1 to MP_CHUNK_MAX_BLOCKS whole blocks, its length
 * in head.size; header.next_chunk counts the blocks handed out. A thread's
 * first chunk is one block (4 KiB), its second MP_CHUNK_SECOND_BLOCKS,
 * later ones 8 blocks (32 KiB; a reader takes up to MP_CHUNK_MAX_BLOCKS,
 * which memprov wrote before), so a short-lived thread or process costs
 * one block. A block whose chunk magic is 0 is a hole (a range reserved
 * but never written: a process killed right after reserving it): readers
 * step over it one block at a time; a valid chunk head is always found at
 * a block boundary.
 * Version 1: every chunk is header.chunk_size bytes (64 KiB), next_chunk
 * counts chunks, head.size is 0.
 *
 * Chunks are handed to threads by an atomic operation on
 * header.next_chunk; a chunk belongs to one thread (head.thread_serial)
 * and holds that thread's records in time order; a thread's chunks are
 * numbered by head.seq. The writer stores head.used with release order
 * after each record is complete, so a reader that trusts head.used sees
 * only whole records, even in a trace cut by SIGKILL. A chunk whose magic
 * is 0 was reserved but never written.
 *
 * Normal in a trace, not damage: header.next_chunk may count blocks (v1:
 * chunks) past the end of the file, or still all zero (a process killed,
 * or tracing stopped, right after reserving them); the same STACK id may
 * be written more than once, and another thread may name it first; an
 * anonymous or file MAP_FIXED mmap is preceded by an unmap of its range
 * (flagged MP_RF_FIXED; an older memprov wrote no flag there).
 *
 * Every record has a CLOCK_MONOTONIC timestamp in nanoseconds:
 * allocations are stamped after the real call returns, frees before it
 * starts, so merging all threads by timestamp never shows an address
 * handed out twice. A thread's timestamps never decrease, within a chunk
 * and from one of its chunks to the next. Most stamps are
 * CLOCK_MONOTONIC_COARSE's (never ahead of CLOCK_MONOTONIC, a tick's
 * steps), taken by one writer context at a time: many records of a
 * chunk share a stamp, and their order is the chunk's. Records of two
 * contexts share a stamp only when neither depends on the other: the
 * free of an address and its next allocation by another context are
 * never stamped alike, so ties across threads may be merged in any order.
 *
 * Records, version 1: each is the struct below as is, starting with
 * struct mp_rec_head, whose size field gives the whole record's length (a
 * multiple of 8, at least 16).
 *
 * Records, version 2 (compact; decoded by mp_dec_next() into the structs
 * below, which readers then use as in version 1):
 *
 *   record := tag [flags func kind] ts_delta body
 *
 *   tag       1 byte: bits 0-5 the type (enum mp_rec_type, 1..63); bit 6
 *             MP_TAG_EXT: flags (1 byte), func (uvarint), kind (1 byte)
 *             follow; without it flags is 0 and func/kind are the type's
 *             defaults (ALLOC: malloc/heap, FREE: free/heap, others 0);
 *             bit 7 reserved, 0
 *   ts_delta  uvarint: this record's ts minus the previous record's in the
 *             same chunk (the first: minus head.first_ts)
 *   body      ALLOC  addr (svarint: minus the chunk's previous address),
 *                    size (uvarint), stack (uvarint)
 *             FREE   addr (svarint, as ALLOC); munmap (func) adds
 *                    len (uvarint)
 *             STACK  id, n_native, n_python (uvarints), then each native
 *                    frame (svarint: minus the previous frame, the first
 *                    minus 0), then each Python frame: code_id, line
 *                    (uvarints)
 *             any other type (framed): len (uvarint, at most
 *                    MP_MAX_RECORD - 16), then len bytes: the type's
 *                    struct after its 16-byte head, same layout; the
 *                    decoded record is 16 + len bytes rounded up to 8,
 *                    the padding zero
 *
 *   uvarint: 7 bits a byte, least significant first, high bit set on all
 *   but the last byte, at most 10 bytes. svarint: the uvarint of the
 *   zigzag form ((v << 1) ^ (v >> 63)). The "previous address" is that of
 *   the chunk's last ALLOC or FREE (0 at the chunk's start); every chunk
 *   decodes alone.
 *
 * Stack ids (version 2): small numbers, 1, 2, ... in the order stacks are
 * first seen in the process, so that ALLOC records name them in one or two
 * bytes; an id with bit 63 set is a stack's hash, written with its STACK
 * record each time (the writer's table of ids was full). Version 1: a
 * hash of the frames. Either way an id means one stack within one trace.
 */
#ifndef MEMPROV_TRACE_H
#define MEMPROV_TRACE_H

#include <stdint.h>

#define MP_MAGIC "MEMPROV\x1a"   /* 8 bytes, no terminator used */
#define MP_MAGIC_LEN 8
#define MP_VERSION 2              /* what memprov writes */
#define MP_VERSION_OLDEST 1       /* the oldest it reads */
#define MP_HEADER_SIZE 4096
#define MP_CHUNK_MAGIC 0x4b43504du /* "MPCK" */
#define MP_DEFAULT_CHUNK_SIZE (64 * 1024) /* version 1 */
#define MP_BLOCK_SIZE 4096       /* version 2: header.chunk_size */
#define MP_CHUNK_MAX_BLOCKS 16   /* version 2: the largest chunk, 64 KiB */
#define MP_CHUNK_SECOND_BLOCKS 4 /* version 2: a thread's second chunk */
#define MP_MAX_FRAMES 256        /* native frames in one stack record */
#define MP_MAX_PYFRAMES 128      /* Python frames in one stack record */
#define MP_MAX_RECORD 8192       /* no record is longer than this */

/*
 * How the traced process ended, as far as the trace knows.
 * X(id, name, NAME): ids never change meaning; name is what reports print.
 */
#define MP_STATES(X)                                                          \
	X(0, running, RUNNING) /* still running, or killed (SIGKILL, OOM, crash) */ \
	X(1, exited, EXITED)   /* exit()/_exit()/return from main: exit_status set */ \
	X(2, exec, EXEC)       /* replaced by execve(); a new trace continues */ \
	X(3, stopped, STOPPED) /* tracing stopped early: stop_reason says why */ \
	X(4, killed, KILLED)   /* killed by a signal it did not handle: term_signal */

enum mp_state {
#define MP_STATE_ENUM(id, name, NAME) MP_STATE_##NAME = id,
	MP_STATES(MP_STATE_ENUM)
#undef MP_STATE_ENUM
	MP_STATE_COUNT
};

#define MP_EXIT_UNKNOWN INT32_MIN

/* Why tracing stopped before the process ended (state MP_STATE_STOPPED). */
enum mp_stop {
	MP_STOP_NONE = 0,
	MP_STOP_NOSPACE = 1,   /* fallocate failed: disk or quota full */
	MP_STOP_MAP = 2,       /* mmap of a trace segment failed */
	MP_STOP_INTERNAL = 3,  /* an internal limit; stop_message says which */
	MP_STOP_FSIZE = 4,     /* the file-size limit (RLIMIT_FSIZE) was reached */
	MP_STOP_FILE = 5,      /* the program closed the trace's descriptor and the
				* file could not be reopened (moved, replaced) */
	MP_STOP_SECCOMP = 6,   /* the program installed a seccomp filter: memprov's
				* own system calls from then on could kill it */
};

/*
 * File header, one page at offset 0.
 *
 *   0   magic[8]        MP_MAGIC
 *   8   version         MP_VERSION
 *   12  header_size     MP_HEADER_SIZE: first chunk starts here
 *   16  chunk_size      v2: the block size (MP_BLOCK_SIZE); v1: bytes per
 *                       chunk, head included
 *   20  flags           enum mp_header_flags: what was traced
 *   24  next_chunk      atomic: v2 blocks, v1 chunks handed out so far
 *   32  pid, ppid
 *   40  state           enum mp_state, updated at exit/exec/stop
 *   44  exit_status     when state == MP_STATE_EXITED: the status passed to
 *                       exit()/_exit() or returned by main, or
 *                       MP_EXIT_UNKNOWN (the process left in a way no hook
 *                       saw, e.g. a static program's main returning)
 *   48  start_mono_ns   CLOCK_MONOTONIC when the trace was opened
 *   56  start_real_ns   CLOCK_REALTIME at the same moment
 *   64  end_mono_ns     when state left MP_STATE_RUNNING
 *   72  stop_reason     enum mp_stop
 *   76  stack_depth     native frames asked for (MEMPROV_DEPTH)
 *   80  page_size
 *   84  sample_bytes    0: every allocation; else mean bytes between samples
 *   88  rss_interval_ns 0: no RSS sampling
 *   96  exe[512]        the executable, NUL-terminated: the file mapped as the
 *                        program (/proc/self/exe when that is not known);
 *                        empty until the module scan right after creation
 *   608 cmdline[1024]   argv joined by spaces, NUL-terminated, truncated
 *   1632 stop_message[256]
 *   1888 skipped_total   events memprov saw but could not record (a hook
 *                        reached while memprov itself was running, e.g. from
 *                        a signal handler installed behind memprov's back)
 *   1896 skipped[128]    the same, per enum mp_func (index = func id)
 *   2408 term_signal     when state == MP_STATE_KILLED: the signal's number
 *   2412 host[64]        the host name (gethostname), NUL-terminated,
 *                        truncated; "" from older writers
 *   2476 fork_serial     a forked child: the serial its parent gave the fork
 *                        (the parent's MP_REC_FORK carries it too); 0: not
 *                        known (older writers, or not a child of fork)
 *   2480 no_room_stacks  allocations recorded without native frames: the
 *                        thread had too little stack left for the walk (a
 *                        small thread stack, a deep recursion, a handler on
 *                        an alternate stack); 0 from older writers
 *   2488 reserved, zero
 *
 * Fields from skipped_total on were added without a version change: older
 * writers left them zero.
 */
enum mp_header_flags {
	MP_HF_HEAP = 1 << 0,
	MP_HF_MMAP = 1 << 1,
	MP_HF_CUDA = 1 << 2,
	MP_HF_PYTHON = 1 << 3,
	MP_HF_RSS_NET = 1 << 4, /* RSS samples leave out the trace's own pages
				 * (v2: see struct mp_rec_rss) */
	MP_HF_RAMFS = 1 << 5,   /* the trace was written to a RAM-backed file
				 * system (tmpfs, ramfs): its pages took memory */
	MP_HF_FORKED = 1 << 6,  /* a forked child: the trace starts at the fork, and
				 * the parent's trace has an MP_REC_FORK naming it
				 * (added without a version change: older writers
				 * never set it) */
	MP_HF_GO = 1 << 7,      /* the program is a Go program (its Go build ID
				 * note): Go's runtime ends the process with a raw
				 * exit_group system call that no hook sees, so its
				 * trace has no exit record and no scan */
	MP_HF_EXIT_BY_RUN = 1 << 8, /* state EXITED and exit_status were written
				 * by memprov run, which saw the command's status:
				 * the process's own hooks did not see its exit (a
				 * raw exit_group, as Go's runtime makes), so there
				 * was no scan */
	MP_HF_HEAP_AHEAD = 1 << 9, /* the heap was not traced: an object ahead of
				      libmemprov.so in the lookup scope defines malloc
				      (an allocator preloaded before it, or the
				      program's own): the program's calls reached
				      memprov's hooks only where that object left
				      them to it (or through it) */
};

struct mp_file_header {
	char magic[MP_MAGIC_LEN];
	uint32_t version;
	uint32_t header_size;
	uint32_t chunk_size;
	uint32_t flags;
	uint64_t next_chunk;
	int32_t pid;
	int32_t ppid;
	uint32_t state;
	int32_t exit_status;
	uint64_t start_mono_ns;
	uint64_t start_real_ns;
	uint64_t end_mono_ns;
	uint32_t stop_reason;
	uint32_t stack_depth;
	uint32_t page_size;
	uint32_t sample_bytes;
	uint64_t rss_interval_ns;
	char exe[512];
	char cmdline[1024];
	char stop_message[256];
	uint64_t skipped_total;
	uint32_t skipped[128];
	int32_t term_signal;
	char host[64];
	uint32_t fork_serial;
	uint64_t no_room_stacks;
	uint8_t reserved[MP_HEADER_SIZE - 2488];
};
_Static_assert(sizeof(struct mp_file_header) == MP_HEADER_SIZE, "file header is one page");

/*
 * Chunk head, 32 bytes, at the start of every chunk. The writer fills
 * it, then stores magic with release order, then writes records.
 *
 *   0  magic          MP_CHUNK_MAGIC once the chunk is in use, else 0
 *   4  used           bytes of complete records after this head (release)
 *   8  tid            kernel thread id of the writer
 *   12 thread_serial  1, 2, ...: unique per thread in this process
 *   16 seq            0, 1, ...: this thread's chunk number
 *   20 size           v2: the chunk's length in bytes, head included, a
 *                     multiple of the block size; v1: 0
 *   24 first_ts       v2: the base of the first record's ts_delta, at
 *                     most its ts; v1: the first record's timestamp
 */
struct mp_chunk_head {
	uint32_t magic;
	uint32_t used;
	uint32_t tid;
	uint32_t thread_serial;
	uint32_t seq;
	uint32_t size;
	uint64_t first_ts;
};
_Static_assert(sizeof(struct mp_chunk_head) == 32, "chunk head layout");

/* Record types. The numbers are part of the format: never reuse one. */
enum mp_rec_type {
	MP_REC_INVALID = 0,     /* reserved: a zero byte is never a record */
	MP_REC_ALLOC = 1,       /* host allocation (heap or mmap), or a failure */
	MP_REC_FREE = 2,        /* host free / munmap */
	MP_REC_STACK = 3,       /* an interned stack: native + Python frames */
	MP_REC_MODULE = 4,      /* a loaded object: path, bias, range, build-id */
	MP_REC_UNLOAD = 5,      /* an object was unloaded (dlclose) */
	MP_REC_THREAD = 6,      /* a thread's first record: tid, serial, name */
	MP_REC_MARK = 7,        /* a named instant (memprov_mark, --mark-on) */
	MP_REC_PYCODE = 8,      /* an interned Python code object */
	MP_REC_RSS = 9,         /* a resident-memory sample */
	MP_REC_EXIT = 10,       /* exit()/_exit() called, with its status */
	MP_REC_GPU_ALLOC = 11,  /* CUDA allocation (device/pinned/managed/...) */
	MP_REC_GPU_FREE = 12,   /* CUDA free */
	MP_REC_CTX_RESET = 13,  /* a CUDA context went away: its memory is freed */
	MP_REC_FORK = 14,       /* this process forked: child pid */
	MP_REC_REACH = 15,      /* the reachability scan at exit: status, totals */
	MP_REC_REACH_BLOCKS = 16, /* lost blocks of one kind and class, by address */
	MP_REC_PYTHREAD = 17,   /* a Python thread still running at the next mark */
	MP_REC_SIGSTACK = 18,   /* a thread's alternate signal stack (sigaltstack) */
	MP_REC_TYPE_COUNT
};

/*
 * Memory kinds: each kind is its own address space in the analyzer.
 * X(id, name, NAME): ids never change meaning; name is what reports print.
 */
#define MP_KINDS(X)                                                        \
	X(0, none, NONE)                                                   \
	X(1, heap, HEAP)             /* malloc family */                   \
	X(2, mmap, MMAP)             /* anonymous mmap */                  \
	X(3, pinned, PINNED)         /* page-locked host memory from CUDA */ \
	X(4, device, DEVICE)         /* GPU memory */                      \
	X(5, managed, MANAGED)       /* CUDA managed (unified) memory */   \
	X(6, registered, REGISTERED) /* host memory registered with cudaHostRegister */

enum mp_kind {
#define MP_KIND_ENUM(id, name, NAME) MP_KIND_##NAME = id,
	MP_KINDS(MP_KIND_ENUM)
#undef MP_KIND_ENUM
	MP_KIND_COUNT
};

/*
 * Functions whose calls are recorded; the number is stored in
 * mp_rec_head.func. X(id, name): ids never change meaning. 96-103: blocks
 * of CPython's "mem" and "object" allocator domains (kind HEAP, recorded
 * with MEMPROV_PYTHON_OBJECTS=1); 104/105: pymalloc's arenas (kind MMAP),
 * which hold the small blocks of those domains.
 */
#define MP_FUNCS(X)                                                        \
	X(1, malloc) X(2, calloc) X(3, realloc) X(4, reallocarray)           \
	X(5, posix_memalign) X(6, aligned_alloc) X(7, memalign) X(8, valloc) \
	X(9, pvalloc) X(10, free) X(11, free_sized)                          \
	X(12, free_aligned_sized) X(13, mmap) X(14, mmap64) X(15, munmap)    \
	X(16, mremap)                                                        \
	X(32, cudaMalloc) X(33, cudaFree) X(34, cudaMallocHost)              \
	X(35, cudaHostAlloc) X(36, cudaFreeHost) X(37, cudaMallocManaged)    \
	X(38, cudaMallocPitch) X(39, cudaMalloc3D) X(40, cudaMallocAsync)    \
	X(41, cudaMallocFromPoolAsync) X(42, cudaFreeAsync)                  \
	X(43, cudaHostRegister) X(44, cudaHostUnregister)                    \
	X(45, cudaDeviceReset)                                               \
	X(64, cuMemAlloc) X(65, cuMemAllocPitch) X(66, cuMemAllocManaged)    \
	X(67, cuMemAllocAsync) X(68, cuMemAllocFromPoolAsync)                \
	X(69, cuMemFree) X(70, cuMemFreeAsync) X(71, cuMemHostAlloc)         \
	X(72, cuMemAllocHost) X(73, cuMemFreeHost) X(74, cuMemHostRegister)  \
	X(75, cuMemHostUnregister) X(76, cuMemCreate) X(77, cuMemRelease)    \
	X(78, cuMemMap) X(79, cuMemUnmap) X(80, cuCtxDestroy)                \
	X(81, cuDevicePrimaryCtxReset) X(82, cuDevicePrimaryCtxRelease)     \
	X(96, PyMem_Malloc) X(97, PyMem_Calloc) X(98, PyMem_Realloc)         \
	X(99, PyMem_Free) X(100, PyObject_Malloc) X(101, PyObject_Calloc)    \
	X(102, PyObject_Realloc) X(103, PyObject_Free)                       \
	X(104, PyObject_ArenaAlloc) X(105, PyObject_ArenaFree)

enum mp_func {
	MP_FN_NONE = 0,
#define MP_FUNC_ENUM(id, name) MP_FN_##name = id,
	MP_FUNCS(MP_FUNC_ENUM)
#undef MP_FUNC_ENUM
	MP_FN_MAX = 128
};
_Static_assert(sizeof(((struct mp_file_header *)0)->skipped) == 4 * MP_FN_MAX,
	       "one skipped counter per function id");

/* mp_rec_head.flags */
enum mp_rec_flags {
	MP_RF_FAILED = 1 << 0,  /* ALLOC/GPU_ALLOC: the call failed; addr is 0 */
	MP_RF_REALLOC = 1 << 1, /* FREE: first half of realloc/mremap; ALLOC: its result */
	MP_RF_STREAM = 1 << 2,  /* GPU_ALLOC/GPU_FREE: stream-ordered */
	MP_RF_SAMPLED = 1 << 3, /* ALLOC: chosen by sampling; size is the block's */
	MP_RF_MAIN_END = 1 << 4,/* MARK: the Python main module finished */
	MP_RF_FIXED = 1 << 5,   /* FREE (munmap): the range a MAP_FIXED mmap replaces;
				   the thread's next MMAP ALLOC is that mapping */
	MP_RF_PLACED = 1 << 6,  /* ALLOC (MMAP): at the address the program gave with
				   MAP_FIXED or MAP_FIXED_NOREPLACE: it names the
				   mapping by that address (an older memprov wrote
				   no such flag) */
	MP_RF_INTERP = 1 << 7,  /* ALLOC: made by CPython for itself in a forked
				   child, before it ran Python code there (its
				   locks and thread states, remade after fork),
				   or for memprov's profile function (3.11: a
				   code object's line table) */
};

/*
 * Common head of every record, 16 bytes.
 *
 *   0  type   enum mp_rec_type
 *   1  flags  enum mp_rec_flags
 *   2  size   whole record in bytes, multiple of 8, >= 16
 *   4  func   enum mp_func (0 where it does not apply)
 *   6  kind   enum mp_kind (0 where it does not apply)
 *   7  reserved, 0
 *   8  ts     CLOCK_MONOTONIC nanoseconds
 */
struct mp_rec_head {
	uint8_t type;
	uint8_t flags;
	uint16_t size;
	uint16_t func;
	uint8_t kind;
	uint8_t reserved;
	uint64_t ts;
};
_Static_assert(sizeof(struct mp_rec_head) == 16, "record head layout");

/*
 * MP_REC_ALLOC, 40 bytes. A host allocation that succeeded (addr != 0), or
 * one that failed (MP_RF_FAILED, addr 0, size = bytes asked for).
 * realloc/mremap write a FREE with MP_RF_REALLOC for the old block before
 * the call, then an ALLOC with MP_RF_REALLOC after it; if the call failed
 * and the old block is still valid, that ALLOC has MP_RF_FAILED too and
 * the reader restores the old block. realloc(p, 0) that frees p writes the
 * FREE alone.
 *
 *   16 addr   24 size (bytes asked for)   32 stack (0: none)
 */
struct mp_rec_alloc {
	struct mp_rec_head h;
	uint64_t addr;
	uint64_t size;
	uint64_t stack;
};
_Static_assert(sizeof(struct mp_rec_alloc) == 40, "alloc record layout");

/* MP_REC_FREE, 24 bytes: h.kind is HEAP or MMAP; for munmap, len = bytes. */
struct mp_rec_free {
	struct mp_rec_head h;
	uint64_t addr;
};
_Static_assert(sizeof(struct mp_rec_free) == 24, "free record layout");

/* MP_REC_FREE with h.func == MP_FN_munmap is this, 32 bytes (may be partial). */
struct mp_rec_unmap {
	struct mp_rec_head h;
	uint64_t addr;
	uint64_t len;
};
_Static_assert(sizeof(struct mp_rec_unmap) == 32, "unmap record layout");

/*
 * MP_REC_STACK, 32 + 8*n_native + 8*n_python bytes. Written once per
 * distinct stack, before (in its thread) the first record that names it;
 * another thread may name it first, so readers resolve ids at the end.
 *
 *   16 id        never 0: v2 a small number or a hash with bit 63 set,
 *                v1 a hash of all frames (see "Stack ids" above)
 *   24 n_native  26 n_python (uint16 each), 28 reserved
 *   32 native[n_native]  return addresses, innermost first (frame 0 is the
 *                        hooked function's caller); readers use ip-1
 *   .. python[n_python]  {code_id, line} pairs, innermost first
 */
struct mp_pyframe {
	uint32_t code_id;   /* an MP_REC_PYCODE id */
	uint32_t line;      /* 0: entering the function, before its body ran (reports
			       show its first line), or not known */
};

struct mp_rec_stack {
	struct mp_rec_head h;
	uint64_t id;
	uint16_t n_native;
	uint16_t n_python;
	uint32_t reserved;
	uint64_t native[];  /* then struct mp_pyframe python[] */
};
_Static_assert(sizeof(struct mp_rec_stack) == 32, "stack record layout");

/*
 * MP_REC_MODULE, 80 + path bytes (padded to 8). One per loaded object at
 * start and after each dlopen.
 *
 *   16 base      load bias (dlpi_addr): symbol address = ip - base
 *   24 lo, hi    absolute address range covered by PT_LOAD segments
 *   40 build_id[32], build_id_len at 72, path_len (with NUL) at 74
 *   80 path      NUL-terminated
 */
struct mp_rec_module {
	struct mp_rec_head h;
	uint64_t base;
	uint64_t lo;
	uint64_t hi;
	uint8_t build_id[32];
	uint8_t build_id_len;
	uint8_t reserved1;
	uint16_t path_len;
	uint32_t reserved2;
	char path[];
};
_Static_assert(sizeof(struct mp_rec_module) == 80, "module record layout");

/* MP_REC_UNLOAD, 24 bytes: the module loaded at base is gone. */
struct mp_rec_unload {
	struct mp_rec_head h;
	uint64_t base;
};
_Static_assert(sizeof(struct mp_rec_unload) == 24, "unload record layout");

/* MP_REC_THREAD, 48 bytes: first record of every thread. */
struct mp_rec_thread {
	struct mp_rec_head h;
	uint32_t tid;
	uint32_t serial;
	uint32_t parent_serial; /* 0: unknown or the first thread */
	uint32_t reserved;
	char name[16];
};
_Static_assert(sizeof(struct mp_rec_thread) == 48, "thread record layout");

/*
 * MP_REC_MARK, 24 + label bytes (padded to 8). h.flags MP_RF_MAIN_END
 * marks the end of a Python program's main module.
 *
 *   16 label_len (with NUL)   20 serial (1, 2, ... in this process)
 *   24 label
 */
struct mp_rec_mark {
	struct mp_rec_head h;
	uint32_t label_len;
	uint32_t serial;
	char label[];
};
_Static_assert(sizeof(struct mp_rec_mark) == 24, "mark record layout");

/*
 * MP_REC_PYTHREAD, 32 bytes: a thread that was still running Python code
 * when the main module ended (a daemon thread: the others have been
 * joined by then), written by the main thread just before the MARK with
 * MP_RF_MAIN_END, one per such thread. Its frames then, as an MP_REC_STACK
 * with Python frames only: what its running frames allocated and still
 * hold is not left behind by the program. An older reader skips it.
 *
 *   16 tid    the thread's kernel thread id; 0: not known (CPython 3.10:
 *             readers set nothing apart for it)
 *   20 reserved, 0
 *   24 stack  its Python stack then (an MP_REC_STACK id, no native frames)
 */
struct mp_rec_pythread {
	struct mp_rec_head h;
	uint32_t tid;
	uint32_t reserved;
	uint64_t stack;
};
_Static_assert(sizeof(struct mp_rec_pythread) == 32, "pythread record layout");

/*
 * MP_REC_SIGSTACK, 32 bytes: the writing thread's alternate signal stack,
 * as sigaltstack() set it: the stack at [addr, addr + size), in use by the
 * kernel for that thread's handlers until the thread exits or sets
 * another; addr 0 and size 0: it was disabled (SS_DISABLE). The memory is
 * the program's own (a heap block or a mapping it made for the purpose,
 * CPython's faulthandler.enable()): the reports set such a block apart as
 * state while it is the thread's stack. Written only for a call that
 * succeeded. An older reader skips it.
 *
 *   16 addr   24 size
 */
struct mp_rec_sigstack {
	struct mp_rec_head h;
	uint64_t addr;
	uint64_t size;
};
_Static_assert(sizeof(struct mp_rec_sigstack) == 32, "sigstack record layout");

/*
 * MP_REC_PYCODE, 32 + names (padded to 8): a Python code object, by id.
 *
 *   16 code_id  20 first_line  24 file_len (with NUL)  26 name_len (with NUL)
 *   28 reserved  32 file, then name
 */
struct mp_rec_pycode {
	struct mp_rec_head h;
	uint32_t code_id;
	uint32_t first_line;
	uint16_t file_len;
	uint16_t name_len;
	uint32_t reserved;
	char names[];
};
_Static_assert(sizeof(struct mp_rec_pycode) == 32, "pycode record layout");

/*
 * MP_REC_RSS, 48 bytes (40 from writers before anon_bytes, 32 in version
 * 1): resident and virtual size of the process.
 *
 *   16 rss_bytes    resident bytes; with MP_HF_RSS_NET in the header, less
 *                   trace_bytes: the program's memory, not memprov's trace
 *   24 vm_bytes     virtual size
 *   32 trace_bytes  the trace's pages mapped in the process at the sample
 *                   (the header page, each thread's chunk and its last
 *                   few finished ones; the others have left the address
 *                   space): not in rss_bytes. Absent from 32-byte (version 1) records,
 *                   whose rss_bytes include every trace page written.
 *   40 anon_bytes   resident anonymous memory: the resident size less the
 *                   pages of files and shared memory (statm's third field),
 *                   so neither the trace nor the libraries' code; what an
 *                   allocator's memory can be. Absent from shorter records
 *                   (added without a version change: readers check h.size).
 */
struct mp_rec_rss {
	struct mp_rec_head h;
	uint64_t rss_bytes;
	uint64_t vm_bytes;
	uint64_t trace_bytes;
	uint64_t anon_bytes;
};
_Static_assert(sizeof(struct mp_rec_rss) == 48, "rss record layout");
#define MP_REC_RSS_ANON_SIZE 48 /* records this long carry anon_bytes */
#define MP_REC_RSS_V1_SIZE 32

/* MP_REC_EXIT, 24 bytes: h.func unused; how the process is leaving. */
enum mp_exit_how {
	MP_EXIT_HOW_EXIT = 0,   /* exit() */
	MP_EXIT_HOW__EXIT = 1,  /* _exit() or _Exit() */
	MP_EXIT_HOW_RETURN = 2, /* main returned (libc then calls exit) */
};


struct mp_rec_exit {
	struct mp_rec_head h;
	int32_t status;
	uint32_t how;
};
_Static_assert(sizeof(struct mp_rec_exit) == 24, "exit record layout");

/*
 * MP_REC_GPU_ALLOC, 64 bytes. h.kind DEVICE, PINNED, MANAGED or
 * REGISTERED; h.func the API the program called (the runtime's name when
 * the runtime called the driver). result is the cudaError_t/CUresult,
 * 0 on success; on failure MP_RF_FAILED is set and addr is 0.
 *
 *   16 addr  24 size  32 stack  40 stream (0: none)  48 device  52 result
 *   56 extra (pitch for pitched allocations, flags for host allocations)
 */
struct mp_rec_gpu_alloc {
	struct mp_rec_head h;
	uint64_t addr;
	uint64_t size;
	uint64_t stack;
	uint64_t stream;
	int32_t device;
	int32_t result;
	uint64_t extra;
};
_Static_assert(sizeof(struct mp_rec_gpu_alloc) == 64, "gpu alloc record layout");

/*
 * MP_REC_GPU_FREE, 40 bytes. h.kind says which address space: a DEVICE
 * free also matches a MANAGED block at that address. MP_RF_STREAM: freed
 * on stream (cudaFreeAsync/cuMemFreeAsync).
 *
 *   16 addr  24 stream  32 device  36 result
 */
struct mp_rec_gpu_free {
	struct mp_rec_head h;
	uint64_t addr;
	uint64_t stream;
	int32_t device;
	int32_t result;
};
_Static_assert(sizeof(struct mp_rec_gpu_free) == 40, "gpu free record layout");

/*
 * MP_REC_CTX_RESET, 24 bytes: a CUDA context of this device was destroyed
 * or reset; every DEVICE, MANAGED and PINNED block recorded with that
 * device ordinal is freed. device -1: every device.
 */
struct mp_rec_ctx_reset {
	struct mp_rec_head h;
	int32_t device;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mp_rec_ctx_reset) == 24, "ctx reset record layout");

/*
 * MP_REC_FORK, 24 bytes: written by the parent after fork() succeeded,
 * so it may come after records of the child (even after its exit). serial
 * names this fork among the process's forks (1, 2, ...; 0 from older
 * writers): the child's header has the same fork_serial.
 */
struct mp_rec_fork {
	struct mp_rec_head h;
	int32_t child_pid;
	uint32_t serial;
};
_Static_assert(sizeof(struct mp_rec_fork) == 24, "fork record layout");

/* v2 tag bits (see "Records, version 2" above). */
#define MP_TAG_TYPE 0x3fu
#define MP_TAG_EXT 0x40u
#define MP_TAG_RESERVED 0x80u
#define MP_STACK_HASHED (1ull << 63) /* v2 stack id that is a hash */

/*
 * Reachability classes, as valgrind's memcheck defines them (the scan at
 * exit, interpose/reach.c). X(id, name, NAME): ids never change meaning;
 * reports print name with '_' as a space.
 *
 * A root is memory that is not a tracked block: the writable segments of
 * loaded objects, thread stacks above their stack pointer, registers,
 * thread-local storage and other mappings. A pointer to the first byte of
 * a block is a start pointer; to any other byte of it, an interior one.
 */
#define MP_REACH_CLASSES(X)                                                     \
	X(0, unknown, UNKNOWN)         /* not classified: no scan, or allocated after it */ \
	X(1, still_reachable, REACHABLE) /* a chain of start pointers from a root */ \
	X(2, possibly_lost, POSSIBLE)  /* reached only through an interior pointer */ \
	X(3, indirectly_lost, INDIRECT) /* pointed to only from lost blocks */  \
	X(4, definitely_lost, DEFINITE) /* no pointer to it anywhere */

enum mp_reach_class {
#define MP_REACH_CLASS_ENUM(id, name, NAME) MP_REACH_##NAME = id,
	MP_REACH_CLASSES(MP_REACH_CLASS_ENUM)
#undef MP_REACH_CLASS_ENUM
	MP_REACH_CLASS_COUNT
};

/* MP_REC_REACH.status: how the scan ended. Only DONE gives classes. */
enum mp_reach_status {
	MP_REACH_DONE = 0,        /* every live block classified */
	MP_REACH_OFF = 1,         /* MEMPROV_REACH=0 */
	MP_REACH_TIMEOUT = 2,     /* the time bound was reached */
	MP_REACH_NOMEM = 3,       /* the memory bound was reached, or mmap failed */
	MP_REACH_NOTRACE = 4,     /* the trace could not be read back */
	MP_REACH_UNSUPPORTED = 5, /* not here: not x86-64, or under valgrind */
	MP_REACH_FAULT = 6,       /* the scan itself faulted and gave up */
	MP_REACH_PARTIAL = 7,     /* not every allocation is recorded (sampling,
				     MEMPROV_HEAP=0): no scan */
	MP_REACH_NOMAPS = 8,      /* the memory map (/proc) could not be read */
	MP_REACH_STATUS_COUNT     /* readers: a status from here on is not known */
};

/* MP_REC_REACH.notes: what a finished scan could not cover (flags). */
enum mp_reach_notes {
	MP_REACH_N_THREADS = 1 << 0,    /* some threads not stopped (ptrace refused) */
	MP_REACH_N_UNREADABLE = 1 << 1, /* some root memory could not be read */
	MP_REACH_N_OWN_FRAMES = 1 << 2, /* exiting thread: memprov's frames scanned too */
	MP_REACH_N_NO_ARENA = 1 << 3,   /* glibc's main arena not found: its lists were roots */
	MP_REACH_N_FILES = 1 << 4,      /* file mappings skipped: no fault-safe reader */
	MP_REACH_N_SECCOMP = 1 << 5,    /* a seccomp filter: no ptrace, no process_vm_readv */
	MP_REACH_N_INHERITED = 1 << 6,  /* a forked child: the blocks it inherited (its
					   parent's trace read up to the fork) were in the
					   live set, and are classified like its own */
	MP_REACH_N_PYTHON = 1 << 7,     /* with status OFF: CPython's own executable, judged
					   on what is live at the end of its main module:
					   no scan at exit (its threads would run on, on the
					   interpreter's freed state, while it ran) */
	MP_REACH_N_ALLOC_LOST = 1 << 8, /* a malloc replacement's own mappings could not
					   all be kept track of: they were roots */
	MP_REACH_N_AS_LIMIT = 1 << 9,   /* the process's address-space limit (RLIMIT_AS)
					   was in force for the scan: it could not be
					   lifted (to the hard limit at most) */
	MP_REACH_N_HEAP_ROOTS = 1 << 10, /* a forked child whose inherited blocks were not
					    in the live set (its ancestors' traces up to
					    the fork too big to read at every exit, or
					    closed): the allocator's memory, with those
					    blocks in it, was scanned as roots */
	MP_REACH_N_MEM_ROOM = 1 << 11,  /* with status MEMORY: the scan's bound was half
					   the memory the process had left (its
					   cgroup's limit, or the system's available
					   memory), under MEMPROV_REACH_MEMORY_MB */
};

/*
 * MP_REC_REACH, 160 bytes: written once, at exit()/_exit()/return from
 * main, after the MP_REC_REACH_BLOCKS records of the scan. With status
 * DONE, every block live at scan_ts that no MP_REC_REACH_BLOCKS record
 * names is still reachable; blocks allocated after scan_ts (atexit
 * handlers, other threads after they were let go) have no class.
 *
 *   16 status  20 notes
 *   24 scan_ts      the instant the live set describes (threads stopped)
 *   32 scan_ns      how long the scan took, trace read-back included
 *   40 mem_bytes    memory the scan mapped for itself, at most
 *   48 threads      threads in the process, the exiting one included
 *   52 threads_stopped     registers and stack scanned
 *   56 threads_stack_only  stack scanned from its pointer, no registers
 *   60 unreadable   root ranges that could not be read
 *   64 root_bytes   bytes of roots read (pages never written are skipped)
 *   72 block_bytes  bytes of blocks scanned
 *   80 classes[c]   blocks and bytes per enum mp_reach_class (0 unused)
 */
struct mp_reach_count {
	uint64_t blocks;
	uint64_t bytes;
};

struct mp_rec_reach {
	struct mp_rec_head h;
	uint32_t status;
	uint32_t notes;
	uint64_t scan_ts;
	uint64_t scan_ns;
	uint64_t mem_bytes;
	uint32_t threads;
	uint32_t threads_stopped;
	uint32_t threads_stack_only;
	uint32_t unreadable;
	uint64_t root_bytes;
	uint64_t block_bytes;
	struct mp_reach_count classes[MP_REACH_CLASS_COUNT];
};
_Static_assert(sizeof(struct mp_rec_reach) == 160, "reach record layout");

/*
 * MP_REC_REACH_BLOCKS, 32 + 8*count bytes: live blocks of kind h.kind
 * that the scan put in class cls (POSSIBLE, INDIRECT or DEFINITE; a
 * block the scan saw and no such record names is still reachable), by
 * start address. Match only blocks allocated at or before scan_ts.
 *
 *   16 scan_ts  24 count  28 cls  29 reserved[3]  32 addr[count]
 */
#define MP_REACH_BLOCKS_MAX ((MP_MAX_RECORD - 32) / 8)

struct mp_rec_reach_blocks {
	struct mp_rec_head h;
	uint64_t scan_ts;
	uint32_t count;
	uint8_t cls;
	uint8_t reserved[3];
	uint64_t addr[];
};
_Static_assert(sizeof(struct mp_rec_reach_blocks) == 32, "reach blocks record layout");

/* Round a record length up to the 8-byte record alignment. */
#define MP_REC_ALIGN(n) (((n) + 7u) & ~7u)

#endif /* MEMPROV_TRACE_H */
