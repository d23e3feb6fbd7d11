/*
 * suppress.c - suppression rules for the CI gate: reading LeakSanitizer
 * style files, the built-in defaults, and matching a rule against the
 * frames of a stack or a site.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fn.h"
#include "sites.h"
#include "pattern.h"
#include "suppress.h"
#include "util.h"

#define INTERPRETER_PATTERN "<python-interpreter>"

/*
 * Memory kept on purpose until the process ends. An ANY rule matches any
 * frame, as a user's rule does: only for functions that never call back
 * into user code. An OWNER rule matches only the frame that asked for the
 * memory (the innermost one outside libc, the loader, memprov and the
 * allocation functions), so that a leak a user's callback makes under the
 * interpreter or the CUDA runtime still shows. A FIRST rule matches the
 * innermost frame outside memprov and the allocation functions, libc and
 * the loader included: for the loader's own blocks, which OWNER rules
 * would look past. HOST rules leave device memory alone.
 *
 * Python's own state (start-up, imports, the interpreter's objects,
 * pymalloc's arenas) is not here: category.c sets it apart in every report.
 */
enum { ANY = 0, OWNER = SUPP_OWNER, HOST = SUPP_HOST, SMALL = SUPP_SMALL, FIRST = SUPP_FIRST,
       KEPT = SUPP_KEPT, FEW = SUPP_FEW, NATIVE = SUPP_NATIVE, UNDER_LIB = SUPP_UNDER_LIB,
       SIGSTACK = SUPP_SIGSTACK };

#define SIGSTACK_PATTERN "<sigaltstack>"

static const struct { const char *pattern; unsigned flags; const char *why; } defaults[] = {
	/* numpy keeps up to 7 freed blocks of each size under 1 KiB (data,
	 * and shapes apart) for reuse: a line with more of one size than
	 * that keeps arrays (20,000 arrays of 100 doubles in a list hid
	 * 15.6 MiB here when any number of small blocks matched) */
	{ "_multiarray_umath", OWNER | HOST | SMALL | FEW,
	  "numpy's caches of small data and shape blocks (under 1 KiB, at most 7 of a size), kept for reuse" },
	/* glibc: freed only under valgrind (__libc_freeres) */
	{ "_IO_file_doallocate", ANY, "glibc stdio buffers (stdout, stderr, open FILEs)" },
	{ "setlocale", ANY, "glibc locale data (setlocale)" },
	{ "_nl_find_locale", ANY, "glibc locale data" },
	{ "_nl_find_domain", ANY, "glibc message catalogs (gettext)" },
	{ "^set_binding_values$", ANY, "glibc gettext domain bindings (bindtextdomain)" },
	{ "^__textdomain$", ANY, "glibc gettext current domain (textdomain)" },
	{ "^textdomain$", ANY, "glibc gettext current domain (textdomain)" },
	{ "read_alias_file", ANY, "glibc locale alias table" },
	{ "__gconv", ANY, "glibc character set converters" },
	{ "__wcsmbs_load_conv", ANY, "glibc character set converters" },
	{ "^__nss_", ANY, "glibc name service modules and databases" },
	{ "^nss_", ANY, "glibc name service modules and databases" },
	{ "tzset_internal", ANY, "glibc time zone data" },
	{ "__tzfile_read", ANY, "glibc time zone data" },
	{ "__cxa_thread_atexit_impl", ANY, "glibc per-thread destructor lists" },
	{ "__new_exitfn", ANY, "glibc atexit handler list" },
	{ "__libc_dlopen_mode", ANY, "glibc's own dlopen (NSS, gconv, libgcc_s)" },
	{ "_dlerror_run", ANY, "dlerror message buffers" },
	{ "__libc_alloc_buffer_allocate", ANY, "glibc resolver buffers" },
	{ "^__resolv_conf_get_current$", ANY, "glibc resolver configuration (resolv.conf), kept for reuse" },
	{ "^__resolv_conf_attach$", ANY, "glibc resolver configuration (resolv.conf), kept for reuse" },
	/* the environment: glibc never frees a string setenv copied */
	{ "^setenv$", ANY, "the process environment (setenv, putenv, os.environ): glibc never frees it" },
	{ "^putenv$", ANY, "the process environment (setenv, putenv, os.environ): glibc never frees it" },
	{ "^__add_to_environ$", ANY, "the process environment (setenv, putenv, os.environ): glibc never frees it" },
	/* OpenSSL (hashlib, ssl): state made once per process or thread and
	 * freed by OPENSSL_cleanup at exit, after a Python program's main
	 * module ended (ssl.create_default_context() left 50 KiB in 525
	 * blocks there, ssl.RAND_bytes 5.3 KiB). KEPT: what the scan at exit
	 * found lost is a leak (a program's own run-once function, a fetched
	 * algorithm never freed, a table of its own), as valgrind says */
	{ "^EVP_*_fetch$", KEPT, "OpenSSL's cache of fetched algorithms (hashlib, ssl)" },
	{ "^OSSL_*_fetch$", KEPT, "OpenSSL's cache of fetched algorithms (hashlib, ssl)" },
	{ "^OSSL_DECODER_do_all_provided$", KEPT, "OpenSSL's cache of key decoders (ssl)" },
	{ "^OBJ_NAME_add$", KEPT, "OpenSSL's table of object and algorithm names" },
	{ "^ERR_load_strings_const$", KEPT, "OpenSSL's error strings" },
	{ "^ERR_vset_error$", KEPT, "OpenSSL's per-thread error queue" },
	{ "^RAND_get0_*$", KEPT, "OpenSSL's random generators (the primary one, one per thread)" },
	{ "^CRYPTO_get_ex_new_index$", KEPT, "OpenSSL's table of extra-data indexes" },
	{ "^OPENSSL_atexit$", KEPT, "OpenSSL's list of exit handlers" },
	{ "^CRYPTO_THREAD_run_once$", KEPT, "OpenSSL's one-time initialisations" },
	/* the table itself; what a leaked object holds in one is the object's */
	{ "^OPENSSL_LH_new$", OWNER | KEPT, "OpenSSL's global tables, made on first use" },
	/* CPython: a WeakSet holds no object, its table only grows with the
	 * most members it had at once (asyncio's set of all tasks: 128 KiB
	 * after 3,000 tasks at once, 2 MiB after 20,000) */
	{ "^WeakSet.add$", ANY, "a WeakSet's table (asyncio's set of all tasks): weak references hold nothing" },
	/* CPython's zoneinfo: ZoneInfo(key) returns the zone its class keeps
	 * for that key (the 8 latest strongly), whose transition tables its
	 * C module asks the interpreter's allocator for (UTC: 2 B in 2
	 * blocks, Europe/Berlin 4.5 KiB in 4, under the line that asked) */
	{ "_zoneinfo.cpython", OWNER | HOST, "zoneinfo's time zones, kept by ZoneInfo's cache" },
	/* matplotlib: the fonts its font cache keeps (FreeType faces, each
	 * font's glyphs and kerning as text is drawn: 1.4 MiB in 10,889
	 * blocks after one PDF with text; its cache holds 64 fonts): a frame
	 * of its ft2font module under matplotlib's own code. Fonts the
	 * program makes and keeps itself (ft2font.FT2Font in a list) are
	 * its own, and so is a Python file of the program's named so */
	{ "ft2font", NATIVE | UNDER_LIB | HOST,
	  "matplotlib's fonts (FreeType faces and glyphs), kept by its font cache" },
	/* scipy: HiGHS (linprog, milp) makes its task executor and each
	 * thread's task queue on first use (512 KiB) and keeps them */
	{ "_highs_wrapper", OWNER | HOST, "scipy's HiGHS solver: its task executor and queues, made on first use" },
	/* scipy.fft keeps the plans of the last 16 lengths it transformed
	 * (8-32 KiB each: 446 KiB after 100 lengths); its results are numpy's */
	{ "pypocketfft", OWNER | HOST, "scipy.fft's plans of the last 16 lengths (pocketfft), kept for reuse" },
	/* Perl: perl_destruct frees none of the interpreter's memory at its
	 * default PERL_DESTRUCT_LEVEL (0), and perl_free then frees the
	 * interpreter's own struct (a threaded perl, as Debian's): all that
	 * perl made is lost at exit, valgrind agrees (`perl -e 1`: 8.1 KiB
	 * definitely and 43 KiB indirectly lost). OWNER: perl's own code
	 * asked for it; what an XS module asks for is the module's */
	{ "^perl$", OWNER | HOST, "perl's interpreter, which it does not free at exit (PERL_DESTRUCT_LEVEL=0)" },
	{ "^perl5.", OWNER | HOST, /* the same executable, run by its versioned name */
	  "perl's interpreter, which it does not free at exit (PERL_DESTRUCT_LEVEL=0)" },
	{ "^libperl.so", OWNER | HOST, "perl's interpreter, which it does not free at exit (PERL_DESTRUCT_LEVEL=0)" },
	/* bash: its exit builtin leaves the command it runs, parsed, with
	 * what hangs from it (a script's `if ...; then exit 0; fi`: 455 B in
	 * 26 blocks lost at exit, valgrind agrees), and a script run with
	 * --children failed the gate at every such exit. OWNER: what bash's
	 * own code asked for; a loadable builtin's blocks are its own */
	{ "^bash$", OWNER | HOST, "bash's parsed commands and state, which its exit builtin does not free" },
	/* dash (Debian's /bin/sh): a trap's command (`trap 'rm -f "$t"'
	 * EXIT`, 5 B for `trap "echo" EXIT`, valgrind agrees) is kept until
	 * the shell exits; make runs every recipe line under it */
	{ "^dash$", OWNER | HOST, "dash's own state (a trap's command), kept until the shell exits" },
	/* libstdc++ */
	{ "eh_alloc.cc", ANY, "libstdc++ emergency exception pool" },
	{ "__cxa_get_globals", ANY, "libstdc++ per-thread exception globals" },
	/* the dynamic loader's own tables: link maps, dlopen scopes, TLS, and
	 * the DTV of each thread, which glibc keeps with a finished thread's
	 * cached stack */
	{ "ld-linux", FIRST, "dynamic loader tables (link maps, dlopen, TLS, a thread's DTV)" },
	{ "libunwind", OWNER, "libunwind caches" },
	/* Go: a cgo program's runtime maps its garbage-collected heap, its
	 * page tables and its own tables through x_cgo_mmap (690 MiB
	 * reserved, most never touched, by a program that allocated little);
	 * none of it is malloc's, and Go's collector frees what it holds */
	{ "^x_cgo_mmap$", FIRST, "the Go runtime's heap and tables (mapped through cgo), managed by its garbage collector" },
	/* CUDA driver and runtime: host memory for contexts, modules, handles */
	{ "libcuda.so", OWNER | HOST, "CUDA driver state (contexts, modules)" },
	{ "libcudart", OWNER | HOST, "CUDA runtime state" },
	{ "cudart::", OWNER | HOST, "CUDA runtime state (static runtime)" },
	{ "libnvidia-", OWNER | HOST, "CUDA driver helper libraries" },
	{ "fake_cudart.c", OWNER | HOST, "the fake CUDA runtime's state (tests; static runtime)" },
	/* a block a thread set as its alternate signal stack, while it is
	 * (CPython's faulthandler.enable(): 16.5 KiB under the line that
	 * called it); no pattern: the trace says which block (MP_REC_SIGSTACK) */
	{ SIGSTACK_PATTERN, SIGSTACK | KEPT,
	  "a thread's alternate signal stack (sigaltstack: faulthandler.enable()), in use while set" },
};

void supp_init(struct suppressions *s)
{
	memset(s, 0, sizeof(*s));
}

void supp_release(struct suppressions *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->rules[i].pattern);
		free(s->rules[i].source);
	}
	free(s->rules);
	memset(s, 0, sizeof(*s));
}

static struct supp_rule *add(struct suppressions *s, const char *pattern, size_t len,
			     unsigned type, const char *source)
{
	struct supp_rule *r;

	ALLOC_GROW(s->rules, s->n, s->cap);
	r = &s->rules[s->n++];
	memset(r, 0, sizeof(*r));
	r->pattern = xstrndup(pattern, len);
	r->type = type;
	r->source = xstrdup(source);
	r->interpreter = !strcmp(r->pattern, INTERPRETER_PATTERN);
	if (r->interpreter)
		r->flags = SUPP_OWNER;
	return r;
}

struct supp_rule *supp_sigstack_rule(struct suppressions *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->rules[i].flags & SUPP_SIGSTACK)
			return &s->rules[i];
	return NULL;
}

void supp_add_defaults(struct suppressions *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(defaults); i++) {
		struct supp_rule *r = add(s, defaults[i].pattern, strlen(defaults[i].pattern),
					  SUPP_LEAK | SUPP_GROWTH, "default");

		r->why = defaults[i].why;
		r->flags = defaults[i].flags;
	}
}

static char *trim(char *p)
{
	char *e;

	while (*p == ' ' || *p == '\t')
		p++;
	e = p + strlen(p);
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return p;
}

int supp_load(struct suppressions *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, src[4200];
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = 0;

	if (!f)
		return error("cannot open suppression file '%s': %s", path, strerror(errno));
	while (getline(&line, &cap, f) >= 0) {
		char *p = trim(line), *colon;
		unsigned type;

		lineno++;
		if (!*p || *p == '#')
			continue;
		colon = strchr(p, ':');
		if (colon && colon - p == 4 && !strncmp(p, "leak", 4))
			type = SUPP_LEAK;
		else if (colon && colon - p == 6 && !strncmp(p, "growth", 6))
			type = SUPP_GROWTH;
		else if (colon && colon - p == 5 && !strncmp(p, "alloc", 5))
			type = 0;
		else {
			ret = error("%s:%u: not a suppression: '%s' (want leak:PATTERN, growth:PATTERN or alloc:NAME)",
				    path, lineno, p);
			break;
		}
		p = trim(colon + 1);
		if (!type) { /* an allocation function, not a rule */
			if (alloc_fn_add(p) < 0) {
				ret = error("%s:%u: alloc: wants a function name without parameters, not '%s'",
					    path, lineno, p);
				break;
			}
			continue;
		}
		if (!*p || !strcmp(p, "^") || !strcmp(p, "$") || !strcmp(p, "^$")) {
			ret = error("%s:%u: empty pattern", path, lineno);
			break;
		}
		snprintf(src, sizeof(src), "%s:%u", path, lineno);
		add(s, p, strlen(p), type, src);
	}
	if (ferror(f) && !ret)
		ret = error("cannot read suppression file '%s': %s", path, strerror(errno));
	free(line);
	fclose(f);
	return ret;
}

/* A module path's base name: "libcuda.so.1" for "^libcuda.so" patterns. */
static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

static int rule_matches_native(const struct supp_rule *rule, const struct sym_frame *f)
{
	return pattern_match(rule->pattern, f->function) ||
	       pattern_match(rule->pattern, f->file) ||
	       pattern_match(rule->pattern, f->module) ||
	       pattern_match(rule->pattern, base_name(f->module));
}

/* Frames of libc, libm and the loader are skipped to find who asked for memory. */
static int is_libc(const struct sym_frame *f)
{
	const char *b = base_name(f->module);

	return b && (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) ||
		     !strncmp(b, "libm.so", 7) || !strncmp(b, "ld-linux", 8) ||
		     !strncmp(b, "libpthread", 10));
}

/*
 * The frames OWNER and FIRST rules look at. owner: the frame that asked
 * for the memory, the innermost one outside memprov, libc, the loader and
 * the allocation functions (alloc_fn.h). first: the innermost one outside
 * memprov and the allocation functions. cut: there are Python frames but
 * no native frame outside the allocator, because native frames are
 * recorded only up to the interpreter: the interpreter itself asked.
 */
struct asker {
	const struct sym_frame *owner, *first;
	int cut;
};

static void asker_add(struct asker *a, const struct sym_frame *f)
{
	if (f->memprov || alloc_fn_match(f))
		return;
	if (!a->first)
		a->first = f;
	if (!a->owner && !is_libc(f))
		a->owner = f;
}

static int rule_matches_python(const struct supp_rule *rule, const char *function, const char *file)
{
	return pattern_match(rule->pattern, function) || pattern_match(rule->pattern, file);
}

static int is_host(unsigned kind)
{
	return kind == MP_KIND_HEAP || kind == MP_KIND_MMAP;
}

unsigned supp_shape(uint64_t blocks, uint64_t bytes, uint64_t one_size)
{
	return (bytes <= blocks * SUPP_SMALL_BLOCK ? SUPP_SMALL : 0) |
	       (one_size <= SUPP_FEW_OF_A_SIZE ? SUPP_FEW : 0);
}

/* Is rule of this type, and for memory of this kind and shape (supp_shape)? */
static int rule_applies(const struct supp_rule *rule, unsigned type, unsigned kind, unsigned shape)
{
	return (rule->type & type) && !(rule->flags & SUPP_SIGSTACK) &&
	       (!(rule->flags & SUPP_HOST) || is_host(kind)) &&
	       !(rule->flags & (SUPP_SMALL | SUPP_FEW | SUPP_UNDER_LIB) & ~shape) &&
	       !((rule->flags & SUPP_KEPT) && (type & SUPP_LOST));
}

/*
 * Does an OWNER or FIRST rule match? "<python-interpreter>": the owner
 * is in the interpreter, or the stack was cut at the interpreter.
 */
static int rule_matches_asker(const struct supp_rule *rule, const struct asker *a)
{
	if (rule->interpreter)
		return a->owner ? a->owner->interpreter : a->cut;
	if (rule->flags & SUPP_FIRST)
		return a->first && rule_matches_native(rule, a->first);
	return a->owner && rule_matches_native(rule, a->owner);
}

/* Does a rule that is not an OWNER rule match a native frame? */
static int rule_matches_frame(const struct supp_rule *rule, const struct sym_frame *f)
{
	return !f->memprov && rule_matches_native(rule, f);
}

/* The frames OWNER and FIRST rules look at, in stack st. */
static void asker_of_stack(struct asker *a, struct symbolizer *sym, const struct replay_stack *st)
{
	const struct sym_frame *f;
	size_t j, k, n;

	memset(a, 0, sizeof(*a));
	for (j = 0; j < st->n_native && !a->owner; j++)
		for (f = sym_lookup(sym, st->native[j], st->ts, &n), k = 0; k < n && !a->owner; k++)
			asker_add(a, &f[k]);
	a->cut = !a->first && st->n_python;
}

int supp_interpreter_asked(struct symbolizer *sym, const struct replay_stack *st)
{
	struct asker a;

	asker_of_stack(&a, sym, st);
	return a.owner ? a.owner->interpreter : a.cut;
}

const struct sym_frame *supp_asker(struct symbolizer *sym, const struct replay_stack *st, int *cut)
{
	struct asker a;

	asker_of_stack(&a, sym, st);
	*cut = a.cut;
	return a.owner;
}

struct supp_rule *supp_match_stack(struct suppressions *s, unsigned type, unsigned kind,
				   unsigned shape, const struct replay *r, struct symbolizer *sym,
				   const struct replay_stack *st)
{
	const struct sym_frame *f;
	struct asker a;
	size_t i, j, k, n;

	if (!st)
		return NULL;
	asker_of_stack(&a, sym, st);
	for (i = 0; i < s->n; i++) {
		struct supp_rule *rule = &s->rules[i];

		if (!rule_applies(rule, type, kind, shape))
			continue;
		if (rule->flags & (SUPP_OWNER | SUPP_FIRST)) {
			if (rule_matches_asker(rule, &a))
				return rule;
			continue;
		}
		for (j = 0; j < st->n_python && !(rule->flags & SUPP_NATIVE); j++) {
			const struct replay_pycode *pc = replay_find_pycode(r, st->python[j].code_id);

			if (pc && rule_matches_python(rule, pc->name, pc->file))
				return rule;
		}
		for (j = 0; j < st->n_native; j++)
			for (f = sym_lookup(sym, st->native[j], st->ts, &n), k = 0; k < n; k++)
				if (rule_matches_frame(rule, &f[k]))
					return rule;
	}
	return NULL;
}

struct supp_rule *supp_match_site(struct suppressions *s, unsigned type, const struct site *site)
{
	struct asker a = { NULL, NULL, 0 };
	/* a site keeps no sizes: as many of one size as it has blocks */
	unsigned shape = supp_shape(site->blocks, site->bytes, site->blocks);
	size_t i, j;

	for (j = 0; j < site->n_native && !a.owner; j++)
		asker_add(&a, site->native[j]);
	a.cut = !a.first && site->n_python;
	for (i = 0; i < s->n; i++) {
		struct supp_rule *rule = &s->rules[i];

		if (!rule_applies(rule, type, site->kind, shape))
			continue;
		if (rule->flags & (SUPP_OWNER | SUPP_FIRST)) {
			if (rule_matches_asker(rule, &a))
				return rule;
			continue;
		}
		for (j = 0; j < site->n_python && !(rule->flags & SUPP_NATIVE); j++)
			if (rule_matches_python(rule, site->python[j].function, site->python[j].file))
				return rule;
		for (j = 0; j < site->n_native; j++)
			if (!site->native[j]->memprov && rule_matches_native(rule, site->native[j]))
				return rule;
	}
	return NULL;
}
