/*
 * category.h - what live memory is, beside where it was allocated. The
 * reports name the program's own memory by line and fold the rest into
 * one summary line each, so that a clean program has nothing to show:
 *
 *   state       interpreter and module state: allocated while the
 *               interpreter starts or stops (native code of the
 *               interpreter with no Python frame), while a module is
 *               imported (a Python frame of the import machinery), and,
 *               for a verdict on what is live at the end, by a module's
 *               top-level code (the main module's included), by library
 *               code with no frame of the program's own, or in one block
 *               of at most 256 KiB (or a few small ones) by library code
 *               for itself (the innermost Python frame is
 *               the standard library's or an installed package's, and the
 *               interpreter or library native code asked: an extension
 *               under lib-dynload, site-packages or dist-packages, or a
 *               system library; a cache, a registry, a thread's state made
 *               on first use; judged on all the stack holds, a test's part
 *               too: replay_live.whole_blocks)
 *               On CPython 3.10 and older, also a few small blocks that the
 *               interpreter keeps on its free lists under the line that
 *               needed them (a frame per function, deque blocks). And,
 *               at the end of the main module, what a thread still
 *               running then (a daemon thread) allocated in a frame still
 *               running then: its locals, not left behind (replay.h)
 *   arena       a pymalloc arena (1 MiB, 256 KiB before 3.10) that the
 *               interpreter mapped itself: small objects of every line,
 *               never charged to the one that needed a new arena
 *   suppressed  kept on purpose until exit (a suppression rule: glibc,
 *               the loader, the environment, CUDA ...; suppress.h)
 *
 * Answers are cached per stack, kind and block size.
 */
#ifndef MEMPROV_CATEGORY_H
#define MEMPROV_CATEGORY_H

#include <stdint.h>
#include <stdio.h>

#include "replay.h"
#include "suppress.h"
#include "symbolize.h"

enum category {
	CAT_PROGRAM = 0,
	CAT_STATE,
	CAT_ARENA,
	CAT_SUPPRESSED,
	CAT_COUNT
};

/* Why memory is interpreter and module state. */
enum state_why {
	WHY_IMPORT = 0,           /* under the import machinery */
	WHY_INTERPRETER,          /* the interpreter's own, no Python frame */
	WHY_TOP_LEVEL,            /* a module's top-level code (CAT_TOP_LEVEL) */
	WHY_LIBRARY,              /* library code only (CAT_LIBRARY) */
	WHY_RUNNING,              /* held by a frame still running in another thread (CAT_RUNNING) */
	WHY_COUNT
};

enum cat_flags {
	CAT_ALL = 1 << 0,         /* --all: no state and no arena: all is the program's */
	CAT_NO_DEFAULTS = 1 << 1, /* --no-default-suppressions: no built-in rule */
	CAT_TOP_LEVEL = 1 << 2,   /* what a module's top-level code allocated is state */
	CAT_LIBRARY = 1 << 3,     /* what library code alone allocated is state */
	CAT_GROWTH = 1 << 4,      /* match growth: rules (else leak: rules) */
	CAT_LIB_STATE = 1 << 5,   /* a block or a few that library code made for itself is state */
	CAT_FREELIST = 1 << 6,    /* CPython <= 3.10: a few small blocks of its free lists */
	CAT_RUNNING = 1 << 7,     /* what a daemon thread's running frames held (key.held) is state */
	CAT_LOST = 1 << 8,        /* the memory is what the scan at exit found lost: rules for
				     state kept until exit (SUPP_KEPT) do not hide it */
};

/* What live memory at the end is judged by: leaks and the gate. */
#define CAT_END_VERDICT (CAT_TOP_LEVEL | CAT_LIBRARY | CAT_LIB_STATE | CAT_FREELIST | CAT_RUNNING)

struct cat_total {
	uint64_t blocks, bytes;
};

struct cat_stack;
struct cat_key;

struct classifier {
	const struct replay *r;
	struct symbolizer *sym;
	struct suppressions *supp;   /* the rules: own, or the caller's */
	struct suppressions own;
	unsigned flags;              /* enum cat_flags */
	int py_minor;                /* CPython 3.N that ran (its module's name), or -1 */
	struct cat_stack *stacks;    /* what each stack's frames say */
	struct cat_key *keys;        /* answers per (stack, kind, small) */
	struct cat_total total[CAT_COUNT];
	struct cat_total why[WHY_COUNT];
};

/*
 * 1 when a Python frame's file is a name a library made up for code it
 * generated at run time ("<__array_function__ internals>": numpy 1.x's
 * wrapper of each array function): the frame is its caller's, never the
 * program's own nor a place to name. "<string>" (-c, exec), "<stdin>",
 * "<console>", "<ipython-input-...>" are the program's; "<frozen ...>" is
 * the standard library's.
 */
int cat_generated_file(const char *file);
/* A file of the standard library or an installed package (lib/pythonX.Y,
 * site-packages, dist-packages, a frozen module): not the program's own. */
int cat_library_file(const char *file);

/*
 * supp: the rules to apply (the caller keeps them), or NULL for the
 * built-in ones (none with CAT_NO_DEFAULTS).
 */
void cat_init(struct classifier *c, const struct replay *r, struct symbolizer *sym,
	      struct suppressions *supp, unsigned flags);
void cat_release(struct classifier *c);

/*
 * The category of live memory l (its stack, kind, blocks and bytes).
 * *rule (may be NULL): the rule that hides it; *why (may be NULL): why it
 * is state. Counts nothing.
 */
enum category cat_of(struct classifier *c, const struct replay_live *l, struct supp_rule **rule,
		     enum state_why *why);

/*
 * Leave the program's own memory in *live and move the rest out, counted
 * in c's totals (and on the rule that hid it): into out[category] when
 * out is given, else freed.
 */
void cat_split(struct classifier *c, struct replay_live **live, struct replay_live **out);

/* Count l (as cat_split does) without moving it. */
void cat_count(struct classifier *c, enum category cat, enum state_why why,
	       struct supp_rule *rule, uint64_t blocks, uint64_t bytes);

/* Set the counts back to zero (the rules' too). */
void cat_reset(struct classifier *c);

/* "state", "arena", ...: the JSON name of a category. */
const char *cat_name(enum category cat);

/*
 * The summary lines of what was set apart, as text (indent: spaces
 * before each), one line per category with something in it; verb says
 * what --all / --no-default-suppressions do ("shows them", "gates them").
 */
void cat_text(FILE *f, const struct classifier *c, const char *indent, const char *verb);

/* The line of what the default suppressions hid (nothing when none). */
void cat_text_suppressed(FILE *f, const struct classifier *c, const char *indent);

/*
 * ,"set_apart":{"state":{...},"arenas":{...},"suppressed":{...}}: the
 * same as a JSON member (after a comma), each {"blocks":N,"bytes":N,...};
 * state also by why (import, interpreter, top_level, library), suppressed
 * with its rules.
 */
void cat_json(FILE *f, const struct classifier *c);
/* The same without "suppressed" (the gate writes its own). */
void cat_json_state(FILE *f, const struct classifier *c);

#endif /* MEMPROV_CATEGORY_H */
