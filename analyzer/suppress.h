/*
 * suppress.h - suppression files for the CI gate (`memprov check`), in
 * LeakSanitizer's style, and the built-in defaults that every report
 * applies: memory that glibc, the dynamic loader, the environment,
 * libstdc++ and the CUDA stack keep on purpose until the process ends.
 *
 *   # comment
 *   leak:PATTERN      hide matching sites from the live-at-exit budget
 *   growth:PATTERN    hide matching sites from the growth budget
 *   alloc:NAME        NAME is an allocation function (alloc_fn.h): sites
 *                     are the first frame outside it, named by it
 *
 * A pattern matches a frame's function name, source file, module path,
 * Python function or Python file: as a substring, '*' matching any run of
 * characters, '^' anchoring at the start and '$' at the end. The pattern
 * "<python-interpreter>" matches memory that the interpreter asked for
 * itself: the innermost frame outside libc is in libpython or the python
 * executable, or the native frames were cut at the interpreter (the
 * default under Python code) before any frame outside the allocator.
 */
#ifndef MEMPROV_SUPPRESS_H
#define MEMPROV_SUPPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"
#include "symbolize.h"

enum supp_type {
	SUPP_LEAK = 1 << 0,
	SUPP_GROWTH = 1 << 1,
	SUPP_LOST = 1 << 2,     /* with SUPP_LEAK: blocks the scan at exit found lost */
};

enum supp_flags {
	SUPP_OWNER = 1 << 0,    /* match only the frame that asked for the memory */
	SUPP_HOST = 1 << 1,     /* heap and mmap only */
	SUPP_SMALL = 1 << 2,    /* blocks of at most SUPP_SMALL_BLOCK bytes (on average) */
	SUPP_FIRST = 1 << 3,    /* match only the innermost frame outside the allocator,
				   libc and the loader included */
	SUPP_KEPT = 1 << 4,     /* state a library keeps reachable until exit: not a
				   block the scan found lost (SUPP_LOST), which is a leak */
	SUPP_FEW = 1 << 5,      /* at most SUPP_FEW_OF_A_SIZE blocks of any one size: a
				   cache that keeps a few freed blocks of each size */
	SUPP_NATIVE = 1 << 6,   /* match native frames only, never a Python file or function */
	SUPP_UNDER_LIB = 1 << 7,/* only where the innermost Python frame is library code
				   (the standard library's, an installed package's) */
	SUPP_SIGSTACK = 1 << 8, /* no pattern: a block that is a thread's alternate
				   signal stack while the thread keeps it (sigaltstack,
				   replay: key.sigstack); category.c applies it */
};

#define SUPP_SMALL_BLOCK 1024
/* numpy's cache of freed data and shape blocks: 7 of each size (NCACHE) */
#define SUPP_FEW_OF_A_SIZE 7

/* The shape of a set of blocks, as SUPP_SMALL and SUPP_FEW rules ask (a mask
 * of both); the caller adds SUPP_UNDER_LIB where it holds (category.c). */
unsigned supp_shape(uint64_t blocks, uint64_t bytes, uint64_t one_size);

struct supp_rule {
	char *pattern;
	unsigned type;          /* enum supp_type */
	unsigned flags;         /* enum supp_flags (defaults) */
	char *source;           /* "FILE:LINE", or "default" */
	const char *why;        /* defaults: what keeps the memory */
	int interpreter;        /* pattern "<python-interpreter>": the allocation was
				   made by the Python interpreter itself (its innermost
				   frame outside libc is in libpython / python, or the
				   stack was cut there) */
	/* what it hid, filled by the gate */
	uint64_t bytes, blocks, sites;
};

struct suppressions {
	struct supp_rule *rules;
	size_t n, cap;
};

void supp_init(struct suppressions *s);
void supp_release(struct suppressions *s);
/* Add the built-in default rules (leak: and growth: both). */
void supp_add_defaults(struct suppressions *s);
/* The default rule for signal stacks (SUPP_SIGSTACK), or NULL: no defaults. */
struct supp_rule *supp_sigstack_rule(struct suppressions *s);
/* Read a suppression file; returns 0, or -1 after an error naming FILE:LINE. */
int supp_load(struct suppressions *s, const char *path);


/*
 * The first rule of the given type matching any frame of the stack (every
 * native frame, interpreter ones included, and every Python frame), or NULL;
 * shape: supp_shape() of the blocks.
 */
struct supp_rule *supp_match_stack(struct suppressions *s, unsigned type, unsigned kind,
				   unsigned shape, const struct replay *r, struct symbolizer *sym,
				   const struct replay_stack *st);

/*
 * Did the interpreter itself ask for the memory of stack st: is the frame
 * that asked (the innermost one outside libc, the loader, memprov and the
 * allocation functions) in the interpreter, or is there none because the
 * native frames were cut at the interpreter under Python frames?
 */
int supp_interpreter_asked(struct symbolizer *sym, const struct replay_stack *st);
/* The frame that asked (as above), or NULL; *cut: none because the stack was cut there. */
const struct sym_frame *supp_asker(struct symbolizer *sym, const struct replay_stack *st, int *cut);

/* The same against a frame list: Python frames, then native frames. */
struct site;
struct supp_rule *supp_match_site(struct suppressions *s, unsigned type, const struct site *site);

#endif /* MEMPROV_SUPPRESS_H */
