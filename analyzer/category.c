/*
 * category.c - set apart what is not the program's own memory: the
 * interpreter's and the modules' state, pymalloc's arenas, and what a
 * suppression rule hides (category.h). Decided from the stack: its
 * Python frames (the import machinery, the program's files against the
 * standard library and installed packages, a module's top level) and its
 * native frames (the interpreter's, and who asked for the memory).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "category.h"
#include "util.h"

/* pymalloc's arena: 1 MiB since CPython 3.10, 256 KiB before. */
#define ARENA_SIZE (1u << 20)
#define ARENA_SIZE_OLD (1u << 18)

/*
 * CPython 3.10 and older keep freed frames (one per code object) and
 * deque blocks (528 B) on free lists, allocated under the line that first
 * needed them: at most this many blocks of at most FREELIST_BLOCK bytes
 * under one stack are taken for them.
 */
#define FREELIST_MINOR 10
#define FREELIST_BLOCKS 16
#define FREELIST_BLOCK 2048

/*
 * What library code makes for itself on first use (a cache, a registry,
 * a class made for the program's object, a thread's state) is one block
 * of moderate size (fnmatch's cache of 5,000 patterns: 144 KiB), or a
 * few small ones: what a program keeps of what libraries made for it
 * (parsed documents, arrays, a 673 KiB string json.dumps returned or a
 * 1.3 MB one base64 made, which were taken for library state and passed
 * the gate) grows past that. A trade: a bigger cache fails the gate, a
 * smaller string kept passes. Each thread still running Python code at
 * the end (a daemon thread) adds one block to "a few": its Thread object
 * keeps what threading made for it (a Condition's deque and lock, an
 * Event's lock), charged to the program's line that started it; six
 * daemon threads started in a function failed the gate with 3.5 KiB.
 */
#define LIB_STATE_BLOCKS 4
#define LIB_STATE_BLOCK 4096
#define LIB_STATE_ONE_MAX (256u << 10)

/* What one stack's frames say. */
struct cat_stack {
	UT_hash_handle hh;
	uint64_t id;
	uint8_t python;           /* has Python frames */
	uint8_t import;           /* a Python frame of the import machinery */
	uint8_t interp;           /* a native frame of the interpreter */
	uint8_t asked;            /* the interpreter itself asked for the memory */
	uint8_t top_level;        /* the program's innermost frame is a module's top level */
	uint8_t library;          /* no Python frame of the program's own */
	uint8_t lib_inner;        /* the innermost Python frame is library code */
	uint8_t lib_asked;        /* the interpreter or library native code asked */
	uint8_t fork_reinit;      /* threading's after-fork hook remaking its locks */
	uint8_t entry;            /* the innermost Python frame is entering its function */
	uint8_t lib_regex;        /* re's compiler, for library code (regex_for_library) */
};

/* One answer: the stack, the kind, the blocks' shape (supp_shape), arena-sized blocks. */
struct cat_key {
	UT_hash_handle hh;
	struct cat_key_id {
		uint64_t stack;
		uint8_t kind, shape, arena;
		uint8_t one;          /* one block up to LIB_STATE_ONE_MAX, or LIB_STATE_BLOCKS
					 small ones at most */
		uint8_t freelist, pad[3];
	} id;
	enum category cat;
	enum state_why why;
	struct supp_rule *rule;
};

/* The minor version of the CPython 3 the trace loaded (libpython3.N or python3.N), or -1. */
static int python_minor(const struct replay *r)
{
	size_t i;

	for (i = 0; i < r->n_modules; i++) {
		const char *b = r->modules[i].path ? strrchr(r->modules[i].path, '/') : NULL;
		int minor;

		b = b ? b + 1 : r->modules[i].path;
		if (b && (sscanf(b, "libpython3.%d", &minor) == 1 || sscanf(b, "python3.%d", &minor) == 1))
			return minor;
	}
	return -1;
}

void cat_init(struct classifier *c, const struct replay *r, struct symbolizer *sym,
	      struct suppressions *supp, unsigned flags)
{
	memset(c, 0, sizeof(*c));
	c->py_minor = python_minor(r);
	c->r = r;
	c->sym = sym;
	c->flags = flags;
	supp_init(&c->own);
	if (!supp && !(flags & CAT_NO_DEFAULTS))
		supp_add_defaults(&c->own);
	c->supp = supp ? supp : &c->own;
}

void cat_release(struct classifier *c)
{
	struct cat_stack *s, *stmp;
	struct cat_key *k, *ktmp;

	HASH_ITER(hh, c->stacks, s, stmp) {
		HASH_DEL(c->stacks, s);
		free(s);
	}
	HASH_ITER(hh, c->keys, k, ktmp) {
		HASH_DEL(c->keys, k);
		free(k);
	}
	supp_release(&c->own);
	memset(c, 0, sizeof(*c));
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* A file of the import machinery (frozen, or read from source). */
static int is_import_file(const char *file)
{
	return file && (!strncmp(file, "<frozen importlib.", 18) ||
			!strcmp(file, "<frozen zipimport>") ||
			ends_with(file, "/importlib/_bootstrap.py") ||
			ends_with(file, "/importlib/_bootstrap_external.py"));
}

/*
 * A file of the standard library or of an installed package, not of the
 * program: frozen modules, and paths under lib/pythonX.Y, site-packages
 * or dist-packages, or inside a wheel or an egg imported as it is (.whl/,
 * .egg/: python -m venv runs pip from its wheel, through ensurepip; pip's
 * caches kept till exit failed the gate). "<string>" (-c) and "<stdin>"
 * are the program's, as is a zip application (.pyz, .zip).
 */
static int is_library_file(const char *file)
{
	if (!file)
		return 0;
	if (file[0] == '<')
		return !strncmp(file, "<frozen ", 8);
	return strstr(file, "/lib/python2") || strstr(file, "/lib/python3") ||
	       strstr(file, "/lib64/python") || strstr(file, "/lib/pypy") ||
	       strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
	       strstr(file, ".whl/") || strstr(file, ".egg/");
}

int cat_library_file(const char *file)
{
	return is_library_file(file) != 0;
}

/*
 * A shared object that is no program's own: a standard or installed
 * extension module (lib-dynload, site-packages, dist-packages) or a system
 * library (libfreetype under matplotlib's font cache, libgomp's thread
 * pool under scikit-learn, libffi's closure pages under ctypes). A
 * program's own extension, built in its tree, is none of these.
 */
static int is_library_module(const char *path)
{
	return strstr(path, "/lib-dynload/") || strstr(path, "/site-packages/") ||
	       strstr(path, "/dist-packages/") || !strncmp(path, "/usr/lib/", 9) ||
	       !strncmp(path, "/usr/lib64/", 11) || !strncmp(path, "/lib/", 5) ||
	       !strncmp(path, "/lib64/", 7);
}

int cat_generated_file(const char *file)
{
	return file && file[0] == '<' && strncmp(file, "<frozen ", 8) && strcmp(file, "<string>") &&
	       strcmp(file, "<stdin>") && strcmp(file, "<console>") &&
	       strncmp(file, "<ipython-input-", 15);
}

/* A comprehension's frame belongs to the scope around it (3.12 inlines them). */
static int is_comprehension(const char *name)
{
	return ends_with(name, "<listcomp>") || ends_with(name, "<dictcomp>") ||
	       ends_with(name, "<setcomp>") || ends_with(name, "<genexpr>");
}

static const char *frame_file(const struct replay *r, const struct replay_stack *st, size_t i)
{
	const struct replay_pycode *pc = replay_find_pycode(r, st->python[i].code_id);

	return pc ? pc->file : NULL;
}

/*
 * Code compiled from a string ("<string>": exec, eval) that library code
 * ran in the middle of a call of the program's: the library's.
 * namedtuple's __new__ and dataclasses' methods are such code, and a tuple
 * a library made through them was charged to a "<lambda> <string>:1" of
 * the program's. What the program itself runs so stays the program's:
 * python -c, its own exec, and a function it made so that library code
 * alone calls (a thread's target: threading's frames out to the thread's
 * start, with no frame of the program's beyond them).
 */
static int string_code_of_library(const struct replay *r, const struct replay_stack *st, size_t i)
{
	int library_caller = 0;

	for (i++; i < st->n_python; i++) {
		const char *f = frame_file(r, st, i);

		if (cat_generated_file(f))
			continue;
		if (!library_caller) {
			if (f && !strcmp(f, "<string>"))
				continue; /* string code that string code called: its caller decides */
			if (!is_library_file(f))
				return 0; /* the program called it */
			library_caller = 1;
		} else if (!is_library_file(f)) {
			return 1; /* the library was at work for the program further out */
		}
	}
	return 0;
}

/* A file of the re module (a package from 3.11; sre_* before). */
static int is_re_file(const char *file)
{
	return file && (ends_with(file, "/re/__init__.py") || ends_with(file, "/re/_compiler.py") ||
			ends_with(file, "/re/_parser.py") || ends_with(file, "/re.py") ||
			ends_with(file, "/sre_compile.py") || ends_with(file, "/sre_parse.py"));
}

/*
 * Is the innermost Python frame i re's compiler, and the first frame
 * outside re that called it library code? A pattern compiled so is kept
 * by the library (a lexer's tables: pygments' PythonLexer compiles its
 * patterns on the first instance, 8 blocks of 5 KiB under one stack
 * for the program's line that made it) or by re's own cache (512
 * patterns): library state, whatever their count. Patterns the program
 * compiles itself stay its own.
 */
static int regex_for_library(const struct replay *r, const struct replay_stack *st, size_t i)
{
	const char *f = frame_file(r, st, i);

	if (!f || !(ends_with(f, "/re/_compiler.py") || ends_with(f, "/sre_compile.py")))
		return 0;
	for (i++; i < st->n_python; i++) {
		f = frame_file(r, st, i);
		if (!is_re_file(f))
			return is_library_file(f) != 0;
	}
	return 0;
}

/*
 * What the Python frames say: an import under way, library code innermost,
 * and the innermost frame of the program's own code (none: library code
 * alone; a <module> frame: a module's top level). Generated code's frames
 * are left out: they count as their caller's; so do those of code a
 * library compiled from a string.
 */
static void python_part(const struct replay *r, const struct replay_stack *st, struct cat_stack *cs)
{
	size_t i;
	int found = 0, inner = 1;

	cs->python = st->n_python > 0;
	for (i = 0; i < st->n_python; i++) {
		const struct replay_pycode *pc = replay_find_pycode(r, st->python[i].code_id);
		const char *file = pc ? pc->file : NULL, *name = pc ? pc->name : "";

		if (!i)
			cs->entry = pc && !st->python[0].line; /* python_walk.c's entry mark */
		if (is_import_file(file))
			cs->import = 1;
		/* in a forked child, threading remakes a lock for each Thread object
		 * (after memprov's own hook, MP_RF_INTERP, has run) */
		if (file && ends_with(file, "/threading.py") && !strcmp(name, "_after_fork"))
			cs->fork_reinit = 1;
		if (cat_generated_file(file) ||
		    (file && !strcmp(file, "<string>") && string_code_of_library(r, st, i)))
			continue; /* its caller's */
		if (inner) {
			cs->lib_inner = is_library_file(file);
			cs->lib_regex = regex_for_library(r, st, i);
		}
		inner = 0;
		if (found || is_library_file(file) || is_comprehension(name))
			continue;
		found = 1;
		cs->top_level = !strcmp(name, "<module>");
	}
	cs->library = cs->python && !found;
}

/* What stack id's frames say, worked out once (cached in c->stacks). */
static const struct cat_stack *stack_info(struct classifier *c, uint64_t id)
{
	const struct replay_stack *st;
	const struct sym_frame *f, *asker;
	struct cat_stack *cs;
	size_t i, k, n;
	int cut;

	HASH_FIND(hh, c->stacks, &id, sizeof(id), cs);
	if (cs)
		return cs;
	cs = xcalloc(1, sizeof(*cs));
	cs->id = id;
	HASH_ADD(hh, c->stacks, id, sizeof(cs->id), cs);
	st = replay_find_stack(c->r, id);
	if (!st)
		return cs;
	python_part(c->r, st, cs);
	for (i = 0; i < st->n_native && !cs->interp; i++)
		for (f = sym_lookup(c->sym, st->native[i], st->ts, &n), k = 0; k < n; k++)
			cs->interp |= f[k].interpreter;
	asker = supp_asker(c->sym, st, &cut);
	cs->asked = asker ? asker->interpreter : cut;
	cs->lib_asked = cs->asked || (asker && asker->module && is_library_module(asker->module));
	return cs;
}

/* The category from the frames alone (no rule): CAT_PROGRAM when none. */
static enum category frames_category(const struct classifier *c, const struct cat_stack *cs,
				     const struct cat_key_id *id, enum state_why *why)
{
	if (c->flags & CAT_ALL)
		return CAT_PROGRAM;
	if (cs->import) {
		*why = WHY_IMPORT;
		return CAT_STATE;
	}
	if ((!cs->python && cs->interp) || cs->fork_reinit) {
		*why = WHY_INTERPRETER;
		return CAT_STATE;
	}
	/*
	 * The interpreter (or an extension through it) asked while a function
	 * was being entered, before any instruction of its body ran: a trace
	 * function's call event keeps what it makes for the code object
	 * (under `coverage run -m pytest` on 3.11: the line table CPython
	 * makes for tracing, 532 B, and the bytes coverage's tracer reads
	 * from the code, 565 B, for each test function: a gate failure). The
	 * body's own allocations are at its lines, a one-line function's
	 * too; its default arguments are the defining scope's.
	 */
	if (cs->entry && cs->asked && !id->arena) {
		*why = WHY_INTERPRETER;
		return CAT_STATE;
	}
	if (id->arena && cs->asked)
		return CAT_ARENA;
	if ((c->flags & CAT_FREELIST) && id->freelist && cs->python && cs->asked &&
	    c->py_minor >= 0 && c->py_minor <= FREELIST_MINOR) {
		*why = WHY_INTERPRETER;
		return CAT_STATE;
	}
	if (((c->flags & CAT_LIBRARY) && cs->library) ||
	    ((c->flags & CAT_LIB_STATE) && (id->one || cs->lib_regex) && cs->lib_inner &&
	     cs->lib_asked)) {
		*why = WHY_LIBRARY;
		return CAT_STATE;
	}
	if ((c->flags & CAT_TOP_LEVEL) && cs->top_level) {
		*why = WHY_TOP_LEVEL;
		return CAT_STATE;
	}
	return CAT_PROGRAM;
}

enum category cat_of(struct classifier *c, const struct replay_live *l, struct supp_rule **rule,
		     enum state_why *why)
{
	struct cat_key_id id;
	struct cat_key *k;

	if (l->key.interp && !(c->flags & CAT_ALL)) {
		/* CPython's locks and thread states remade in a forked child (MP_RF_INTERP) */
		if (rule)
			*rule = NULL;
		if (why)
			*why = WHY_INTERPRETER;
		return CAT_STATE;
	}
	if (l->key.sigstack && !(c->flags & CAT_ALL) && supp_sigstack_rule(c->supp)) {
		/* a thread's alternate signal stack: in use, kept on purpose */
		if (rule)
			*rule = supp_sigstack_rule(c->supp);
		if (why)
			*why = WHY_INTERPRETER;
		return CAT_SUPPRESSED;
	}
	if (l->key.held && (c->flags & CAT_RUNNING) && !(c->flags & CAT_ALL)) {
		if (rule)
			*rule = NULL;
		if (why)
			*why = WHY_RUNNING;
		return CAT_STATE;
	}
	memset(&id, 0, sizeof(id));
	id.stack = l->key.stack;
	id.kind = l->key.kind;
	id.shape = supp_shape(l->blocks, l->bytes, l->one_size);
	id.arena = l->key.kind == MP_KIND_MMAP && l->blocks &&
		   (l->bytes == l->blocks * ARENA_SIZE || l->bytes == l->blocks * ARENA_SIZE_OLD);
	{
		uint64_t wb = l->whole_blocks ? l->whole_blocks : l->blocks;
		uint64_t wy = l->whole_blocks ? l->whole_bytes : l->bytes;

		uint64_t few = LIB_STATE_BLOCKS + (c->r ? c->r->n_pythreads : 0);

		id.one = (wb == 1 && wy <= LIB_STATE_ONE_MAX) ||
			 (wb <= few && wy <= wb * LIB_STATE_BLOCK);
	}
	id.freelist = l->key.kind == MP_KIND_HEAP && l->blocks <= FREELIST_BLOCKS &&
		      l->bytes <= l->blocks * FREELIST_BLOCK;
	HASH_FIND(hh, c->keys, &id, sizeof(id), k);
	if (!k) {
		const struct cat_stack *cs = stack_info(c, id.stack);

		k = xcalloc(1, sizeof(*k));
		k->id = id;
		k->cat = frames_category(c, cs, &id, &k->why);
		if (k->cat == CAT_PROGRAM) {
			k->rule = supp_match_stack(c->supp, (c->flags & CAT_GROWTH ? SUPP_GROWTH : SUPP_LEAK) |
							    (c->flags & CAT_LOST ? SUPP_LOST : 0),
						   id.kind, id.shape | (cs->lib_inner ? SUPP_UNDER_LIB : 0),
						   c->r, c->sym,
						   replay_find_stack(c->r, id.stack));
			if (k->rule)
				k->cat = CAT_SUPPRESSED;
		}
		HASH_ADD(hh, c->keys, id, sizeof(k->id), k);
	}
	if (rule)
		*rule = k->rule;
	if (why)
		*why = k->why;
	return k->cat;
}

void cat_count(struct classifier *c, enum category cat, enum state_why why,
	       struct supp_rule *rule, uint64_t blocks, uint64_t bytes)
{
	c->total[cat].blocks += blocks;
	c->total[cat].bytes += bytes;
	if (cat == CAT_STATE) {
		c->why[why].blocks += blocks;
		c->why[why].bytes += bytes;
	}
	if (rule) {
		rule->blocks += blocks;
		rule->bytes += bytes;
	}
}

void cat_split(struct classifier *c, struct replay_live **live, struct replay_live **out)
{
	struct replay_live *l, *tmp;

	HASH_ITER(hh, *live, l, tmp) {
		struct supp_rule *rule;
		enum state_why why;
		enum category cat = cat_of(c, l, &rule, &why);

		if (cat == CAT_PROGRAM)
			continue;
		cat_count(c, cat, why, rule, l->blocks, l->bytes);
		HASH_DEL(*live, l);
		if (out)
			HASH_ADD(hh, out[cat], key, sizeof(l->key), l);
		else
			free(l);
	}
}

void cat_reset(struct classifier *c)
{
	size_t i;

	memset(c->total, 0, sizeof(c->total));
	memset(c->why, 0, sizeof(c->why));
	for (i = 0; i < c->supp->n; i++)
		c->supp->rules[i].bytes = c->supp->rules[i].blocks = c->supp->rules[i].sites = 0;
}

const char *cat_name(enum category cat)
{
	static const char *const names[CAT_COUNT] = { "program", "state", "arena", "suppressed" };

	return cat < CAT_COUNT ? names[cat] : "?";
}

void cat_text(FILE *f, const struct classifier *c, const char *indent, const char *verb)
{
	const struct cat_total *t = &c->why[WHY_RUNNING];
	struct cat_total st = c->total[CAT_STATE];
	char b[HUMAN_LEN], n[HUMAN_LEN];


	st.blocks -= t->blocks;
	st.bytes -= t->bytes;
	if (st.blocks)
		fprintf(f, "%sinterpreter and module state: %s block%s, %s \u2014 `--all` %s\n",
			indent, fmt_count(n, sizeof(n), st.blocks), st.blocks == 1 ? "" : "s",
			human_bytes(b, sizeof(b), st.bytes), verb);
	if (t->blocks)
		fprintf(f, "%sheld by frames still running in other threads (daemon threads): %s"
			" block%s, %s \u2014 `--all` %s\n", indent, fmt_count(n, sizeof(n), t->blocks),
			t->blocks == 1 ? "" : "s", human_bytes(b, sizeof(b), t->bytes), verb);
	t = &c->total[CAT_ARENA];
	if (t->blocks)
		fprintf(f, "%sPython arenas (pymalloc's small objects, of every line): %s"
			" arena%s, %s \u2014 `--all` %s\n", indent, fmt_count(n, sizeof(n), t->blocks),
			t->blocks == 1 ? "" : "s", human_bytes(b, sizeof(b), t->bytes), verb);
}

void cat_text_suppressed(FILE *f, const struct classifier *c, const char *indent)
{
	const struct cat_total *t = &c->total[CAT_SUPPRESSED];
	char b[HUMAN_LEN], n[HUMAN_LEN];

	if (t->blocks)
		fprintf(f, "%skept until exit on purpose (default suppressions): %s"
			" block%s, %s \u2014 `--no-default-suppressions` shows them\n", indent,
			fmt_count(n, sizeof(n), t->blocks), t->blocks == 1 ? "" : "s",
			human_bytes(b, sizeof(b), t->bytes));
}

static void json_total(FILE *f, const char *name, const struct cat_total *t)
{
	fprintf(f, "\"%s\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64, name, t->blocks, t->bytes);
}

/* "state":{...},"arenas":{...}: the members of "set_apart" but suppressed. */
static void json_state(FILE *f, const struct classifier *c)
{
	static const char *const whys[WHY_COUNT] = { "import", "interpreter", "top_level", "library",
						     "running" };
	size_t i;

	json_total(f, "state", &c->total[CAT_STATE]);
	for (i = 0; i < WHY_COUNT; i++) {
		fputc(',', f);
		json_total(f, whys[i], &c->why[i]);
		fputc('}', f);
	}
	fputs("},", f);
	json_total(f, "arenas", &c->total[CAT_ARENA]);
	fputs("}", f);
}

void cat_json_state(FILE *f, const struct classifier *c)
{
	fputs(",\"set_apart\":{", f);
	json_state(f, c);
	fputs("}", f);
}

void cat_json(FILE *f, const struct classifier *c)
{
	size_t i;
	int first = 1;

	fputs(",\"set_apart\":{", f);
	json_state(f, c);
	fputc(',', f);
	json_total(f, "suppressed", &c->total[CAT_SUPPRESSED]);
	fputs(",\"rules\":[", f);
	for (i = 0; i < c->supp->n; i++) {
		const struct supp_rule *rule = &c->supp->rules[i];

		if (!rule->blocks)
			continue;
		fprintf(f, "%s{\"pattern\":", first ? "" : ",");
		first = 0;
		json_str(f, rule->pattern);
		fprintf(f, ",\"source\":");
		json_str(f, rule->source);
		fprintf(f, ",\"why\":");
		json_str(f, rule->why);
		fprintf(f, ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", rule->blocks, rule->bytes);
	}
	fputs("]}}", f);
}
