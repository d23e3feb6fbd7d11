/*
 * sym_dwarf.c - source lines and inlined frames of an address from
 * libdw: the line table gives the innermost place; the DIE scopes around
 * the address (dwarf_getscopes, then dwarf_getscopes_die for the DIE's
 * own nesting, not its abstract origin's) give each inlined subroutine
 * and, through DW_AT_call_file/DW_AT_call_line, the place it was called.
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_dwarf.h"
#include "util.h"

char *sym_normalize_path(const char *path)
{
	size_t len = strlen(path), n = 0, o, *starts;
	char *out = xmalloc(len + 2);
	const char *p = path;
	int abs = path[0] == '/';

	/* starts[i]: where component i begins in out; a component is at most one per byte */
	starts = xmalloc((len + 1) * sizeof(*starts));
	o = 0;
	if (abs)
		out[o++] = '/';
	while (*p) {
		const char *q = strchrnul(p, '/');
		size_t cl = (size_t)(q - p);

		if (!cl || (cl == 1 && p[0] == '.')) {
			/* "//" and "./": nothing */
		} else if (cl == 2 && p[0] == '.' && p[1] == '.' && n &&
			   strncmp(out + starts[n - 1], "..", 3) && strcmp(out + starts[n - 1], "..")) {
			o = starts[--n]; /* "dir/..": neither */
			if (o > (size_t)abs)
				o--;
		} else if (!(cl == 2 && p[0] == '.' && p[1] == '.' && abs && !n)) {
			if (o > (size_t)abs)
				out[o++] = '/';
			starts[n++] = o;
			memcpy(out + o, p, cl);
			o += cl;
		}
		out[o] = 0;
		p = *q ? q + 1 : q;
	}
	if (!o)
		out[o++] = '.';
	out[o] = 0;
	free(starts);
	return out;
}

/*
 * A DWARF file name, joined to its compilation directory when relative,
 * then normalized. libdw has already put the directory entry in front of
 * the name; for a relative compilation directory ("./string", as glibc's
 * prefix-mapped builds have it) that entry is the compilation directory
 * itself, which must not be joined twice.
 */
static char *source_path(const char *file, const char *comp_dir)
{
	size_t cl = comp_dir ? strlen(comp_dir) : 0;
	char *joined, *out;

	while (cl > 1 && comp_dir[cl - 1] == '/')
		cl--;
	if (file[0] == '/' || !cl ||
	    (comp_dir[0] != '/' && !strncmp(file, comp_dir, cl) && file[cl] == '/'))
		return sym_normalize_path(file);
	joined = xmalloc(cl + strlen(file) + 2);
	sprintf(joined, "%.*s/%s", (int)cl, comp_dir, file);
	out = sym_normalize_path(joined);
	free(joined);
	return out;
}

/*
 * C++ names through libstdc++'s __cxa_demangle when that library is on
 * this system (loaded into the analyzer, never from the trace's paths);
 * otherwise, and for C names, the raw name without its symbol version.
 */
char *sym_demangle(const char *name)
{
	typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
	static demangle_fn fn;
	static int tried;
	char *raw = xstrndup(name, strcspn(name, "@")), *out;
	int status = -1;

	if (strncmp(raw, "_Z", 2))
		return raw;
	if (!tried) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

		tried = 1;
		if (h)
			*(void **)&fn = dlsym(h, "__cxa_demangle");
	}
	if (!fn)
		return raw;
	out = fn(raw, NULL, NULL, &status);
	if (!out || status) {
		free(out);
		return raw;
	}
	free(raw);
	return out;
}

/*
 * A subprogram's or inlined subroutine's name: a C++ linkage name
 * demangled (with its parameters, as the symbol table gives it), else
 * its name (a C linkage name is an asm alias: glibc's __GI_*).
 */
static char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (s && !strncmp(s, "_Z", 2))
		return sym_demangle(s);
	s = dwarf_diename(die);
	return s ? xstrdup(s) : NULL;
}

/* Where the inlined subroutine die was called from, into w. */
static void call_site(Dwarf_Die *die, Dwarf_Files *files, const char *comp_dir, struct sym_where *w)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	const char *file;

	w->file = NULL;
	w->line = 0;
	if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &v) == 0 &&
	    (file = dwarf_filesrc(files, v, NULL, NULL)))
		w->file = source_path(file, comp_dir);
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &v) == 0 && v <= 0x7fffffff)
		w->line = (int)v;
	if (!w->line) { /* a file without a line says nothing */
		free(w->file);
		w->file = NULL;
	}
}

/*
 * Per compilation unit, built on first use by one walk of its DIEs (libdw's
 * dwarf_getscopes walks the whole unit on every call: seconds on a big
 * interpreter): the address ranges of each function, and within each, the
 * ranges of the subroutines inlined into it with their depth in the tree.
 * The subroutines whose ranges hold an address, deepest first, are the
 * inlined frames there.
 */
struct inl_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
	int depth;
};

struct fn_index {
	Dwarf_Die die;
	struct inl_range *inl;
	size_t n_inl, cap_inl;
};

/* An address range and what holds it (a function's index, a unit's DIE offset). */
struct addr_range {
	Dwarf_Addr lo, hi;
	uint64_t what;
};

struct cu_index {
	UT_hash_handle hh;
	Dwarf_Off off;
	struct fn_index *fns;
	size_t n_fns, cap_fns;
	struct addr_range *ranges;  /* sorted by lo; what: the index in fns */
	size_t n_ranges, cap_ranges;
};

struct sym_dwarf {
	struct cu_index *cus;
	struct addr_range *cu_ranges; /* sorted by lo, what: the unit's DIE offset;
				       * built on first need (cu_at) */
	size_t n_cu_ranges, cap_cu_ranges;
	int cu_ranges_built;
	Dwarf_Die cu_buf;           /* the unit cu_at found in them */
};

#define MAX_DIE_DEPTH 256

struct sym_dwarf *sym_dwarf_new(void)
{
	return xcalloc(1, sizeof(struct sym_dwarf));
}

void sym_dwarf_free(struct sym_dwarf *d)
{
	struct cu_index *ci, *tmp;
	size_t i;

	if (!d)
		return;
	HASH_ITER(hh, d->cus, ci, tmp) {
		HASH_DEL(d->cus, ci);
		for (i = 0; i < ci->n_fns; i++)
			free(ci->fns[i].inl);
		free(ci->fns);
		free(ci->ranges);
		free(ci);
	}
	free(d->cu_ranges);
	free(d);
}

/* Add die's address ranges: as a new function (fn < 0) or inlined into fn. */
static void index_die(struct cu_index *ci, Dwarf_Die *die, long fn, int depth, long *added)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	*added = -1;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (fn < 0) {
			if (*added < 0) {
				ALLOC_GROW(ci->fns, ci->n_fns, ci->cap_fns);
				memset(&ci->fns[ci->n_fns], 0, sizeof(ci->fns[0]));
				ci->fns[ci->n_fns].die = *die;
				*added = (long)ci->n_fns++;
			}
			ALLOC_GROW(ci->ranges, ci->n_ranges, ci->cap_ranges);
			ci->ranges[ci->n_ranges++] = (struct addr_range){ lo, hi, (uint64_t)*added };
		} else {
			struct fn_index *f = &ci->fns[fn];

			ALLOC_GROW(f->inl, f->n_inl, f->cap_inl);
			f->inl[f->n_inl++] = (struct inl_range){ lo, hi, *die, depth };
		}
	}
}

static int range_cmp(const void *a, const void *b)
{
	const struct addr_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* One walk of the unit's DIE tree. */
static void index_cu(struct cu_index *ci, Dwarf_Die *cudie)
{
	Dwarf_Die stack[MAX_DIE_DEPTH], die, next;
	long owner[MAX_DIE_DEPTH], own, added;
	int depth = 0;

	if (dwarf_child(cudie, &die) != 0)
		return;
	for (;;) {
		int tag = dwarf_tag(&die);

		own = depth ? owner[depth - 1] : -1;
		if (tag == DW_TAG_subprogram) {
			index_die(ci, &die, -1, depth, &added);
			if (added >= 0)
				own = added;
		} else if (tag == DW_TAG_inlined_subroutine && own >= 0) {
			index_die(ci, &die, own, depth, &added);
		}
		if (depth + 1 < MAX_DIE_DEPTH && dwarf_haschildren(&die) && dwarf_child(&die, &next) == 0) {
			stack[depth] = die;
			owner[depth] = own;
			depth++;
			die = next;
			continue;
		}
		while (dwarf_siblingof(&die, &next) != 0) {
			if (!depth--)
				goto out;
			die = stack[depth];
		}
		die = next;
	}
out:
	sort_array(ci->ranges, ci->n_ranges, sizeof(*ci->ranges), range_cmp);
}

static struct cu_index *cu_index_of(struct sym_dwarf *d, Dwarf_Die *cudie)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	struct cu_index *ci;

	HASH_FIND(hh, d->cus, &off, sizeof(off), ci);
	if (ci)
		return ci;
	ci = xcalloc(1, sizeof(*ci));
	ci->off = off;
	index_cu(ci, cudie);
	HASH_ADD(hh, d->cus, off, sizeof(ci->off), ci);
	return ci;
}

/* The range of r[0..n) (sorted by lo) that holds a: its index, or -1. */
static long range_find(const struct addr_range *r, size_t n, Dwarf_Addr a)
{
	size_t lo = 0, hi = n, i, back;

	while (lo < hi) { /* the first range starting after a */
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges seldom overlap (nested functions): look a few back */
	for (i = lo, back = 0; i > 0 && back < 16; i--, back++)
		if (a < r[i - 1].hi)
			return (long)(i - 1);
	return -1;
}

/* The function whose ranges hold a, or NULL. */
static struct fn_index *fn_at(struct cu_index *ci, Dwarf_Addr a)
{
	long i = range_find(ci->ranges, ci->n_ranges, a);

	return i < 0 ? NULL : &ci->fns[ci->ranges[i].what];
}

static int inl_depth_cmp(const void *a, const void *b)
{
	const struct inl_range *x = *(struct inl_range *const *)a, *y = *(struct inl_range *const *)b;

	return y->depth - x->depth; /* deepest first */
}

static int off_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The address ranges, sorted, of the units of the module that
 * .debug_aranges leaves out (those it names libdwfl finds): reading a
 * unit's ranges loads its abbreviations, and libc's 4,126 units read so
 * for one address outside every function cost the memory that the
 * analyzer's own limits were measured without.
 */
static void cu_ranges_build(struct sym_dwarf *d, Dwfl_Module *mod)
{
	Dwarf_Addr bias, base, lo, hi;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_Off off = 0, next, at;
	Dwarf_Aranges *ar;
	uint64_t *known = NULL;
	size_t hsize, n_ar = 0, n_known = 0, i;
	ptrdiff_t r;

	d->cu_ranges_built = 1;
	if (!dw)
		return;
	if (dwarf_getaranges(dw, &ar, &n_ar) == 0 && n_ar) {
		known = xmalloc(n_ar * sizeof(*known));
		for (i = 0; i < n_ar; i++) {
			Dwarf_Arange *a = dwarf_onearange(ar, i);

			if (a && dwarf_getarangeinfo(a, NULL, NULL, &at) == 0)
				known[n_known++] = at;
		}
		sort_array(known, n_known, sizeof(*known), off_cmp);
	}
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		at = off + hsize;
		if ((!known || (!bsearch(&at, known, n_known, sizeof(*known), off_cmp) &&
				!bsearch(&off, known, n_known, sizeof(*known), off_cmp))) &&
		    dwarf_offdie(dw, at, &cu)) {
			r = 0;
			while ((r = dwarf_ranges(&cu, r, &base, &lo, &hi)) > 0) {
				if (lo >= hi)
					continue;
				ALLOC_GROW(d->cu_ranges, d->n_cu_ranges, d->cap_cu_ranges);
				d->cu_ranges[d->n_cu_ranges++] =
					(struct addr_range){ lo, hi, dwarf_dieoffset(&cu) };
			}
		}
		off = next;
	}
	free(known);
	sort_array(d->cu_ranges, d->n_cu_ranges, sizeof(*d->cu_ranges), range_cmp);
}

/* Whether the unit names address ranges at all (1 holds a, 0 not, -1 no ranges). */
static int cu_holds(Dwarf_Die *cu, Dwarf_Addr a)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t r = 0;
	int any = 0;

	while ((r = dwarf_ranges(cu, r, &base, &lo, &hi)) > 0) {
		any = 1;
		if (lo <= a && a < hi)
			return 1;
	}
	return any ? 0 : -1;
}

/*
 * Whether a lies past the last address .debug_aranges names (or it names
 * none): where libdwfl finds no unit at all, short of an error (out of
 * memory: looking further would only fail inside libdw).
 */
static int past_aranges(Dwarf *dw, Dwarf_Addr a)
{
	Dwarf_Aranges *ar;
	Dwarf_Addr lo;
	Dwarf_Word len;
	size_t n;

	if (dwarf_getaranges(dw, &ar, &n) != 0)
		return 0;
	return !n || (dwarf_getarangeinfo(dwarf_onearange(ar, n - 1), &lo, &len, NULL) == 0 &&
		      a >= lo + len);
}

/*
 * The compilation unit that holds pc (*bias: the module's). libdwfl
 * finds it by .debug_aranges, and takes the last unit starting below pc
 * without looking at where that unit ends: a cgo program's aranges name
 * only its C units (Go writes none), and every Go function was given the
 * line table of the last C unit before Go's code (runtime/cgo's
 * gcc_mmap.c:37 for all of them); a unit linked without aranges after
 * the last one named got no line at all. A unit whose own ranges leave pc
 * out, or none found past the last arange, is looked up again in the
 * ranges of the units the aranges leave out; none holds it: NULL.
 */
static Dwarf_Die *cu_at(struct sym_dwarf *d, Dwfl_Module *mod, Dwarf_Addr pc, Dwarf_Addr *bias)
{
	Dwarf_Die *cudie = dwfl_module_addrdie(mod, pc, bias);
	Dwarf *dw = dwfl_module_getdwarf(mod, bias);
	Dwarf_Addr a = pc - *bias;
	long i;

	if (!dw || (cudie && cu_holds(cudie, a)) || (!cudie && !past_aranges(dw, a)))
		return cudie;
	if (!d->cu_ranges_built)
		cu_ranges_build(d, mod);
	i = range_find(d->cu_ranges, d->n_cu_ranges, a);
	return i < 0 ? NULL : dwarf_offdie(dw, d->cu_ranges[i].what, &d->cu_buf);
}

void sym_dwarf_line(struct sym_dwarf *d, Dwfl_Module *mod, Dwarf_Addr pc, struct sym_where *w)
{
	Dwarf_Addr bias;
	Dwarf_Die *cudie = cu_at(d, mod, pc, &bias);
	Dwarf_Line *line = cudie ? dwarf_getsrc_die(cudie, pc - bias) : NULL;
	const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	Dwarf_Attribute attr;
	int lineno = 0;

	if (file && dwarf_lineno(line, &lineno) == 0 && lineno > 0) {
		w->file = source_path(file,
				      dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr)));
		w->line = lineno;
	}
}

size_t sym_dwarf_inlined(struct sym_dwarf *d, Dwfl_Module *mod, Dwarf_Addr pc,
			 struct sym_where *w, struct sym_frame *out, size_t max)
{
	Dwarf_Addr bias;
	Dwarf_Die *cudie = cu_at(d, mod, pc, &bias);
	struct inl_range *hit[MAX_DIE_DEPTH];
	Dwarf_Files *files = NULL;
	struct fn_index *fn;
	Dwarf_Attribute a;
	const char *comp_dir;
	size_t n = 0, n_hit = 0, k;

	if (!cudie)
		return 0;
	fn = fn_at(cu_index_of(d, cudie), pc - bias);
	if (!fn)
		return 0;
	for (k = 0; k < fn->n_inl && n_hit < MAX_DIE_DEPTH; k++)
		if (fn->inl[k].lo <= pc - bias && pc - bias < fn->inl[k].hi)
			hit[n_hit++] = &fn->inl[k];
	sort_array(hit, n_hit, sizeof(*hit), inl_depth_cmp);
	if (dwarf_getsrcfiles(cudie, &files, NULL) != 0)
		files = NULL;
	comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	for (k = 0; k < n_hit; k++) {
		if (k && hit[k]->depth == hit[k - 1]->depth)
			continue; /* one DIE, two of its ranges */
		if (n < max) {
			out[n].function = die_name(&hit[k]->die);
			out[n].file = w->file;
			out[n].line = w->line;
			n++;
		} else {
			free(w->file);
		}
		call_site(&hit[k]->die, files, comp_dir, w);
	}
	w->function = die_name(&fn->die);
	return n;
}
