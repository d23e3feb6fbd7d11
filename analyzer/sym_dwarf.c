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

void sym_dwarf_line(Dwfl_Module *mod, Dwarf_Addr pc, struct sym_where *w)
{
	Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
	const char *file;
	int lineno = 0;

	if (!line)
		return;
	file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (file && lineno > 0) {
		w->file = source_path(file, dwfl_line_comp_dir(line));
		w->line = lineno;
	}
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

size_t sym_dwarf_inlined(Dwfl_Module *mod, Dwarf_Addr pc, struct sym_where *w,
			 struct sym_frame *out, size_t max)
{
	Dwarf_Addr bias;
	Dwarf_Die *cudie = dwfl_module_addrdie(mod, pc, &bias), *scopes = NULL, inner;
	Dwarf_Files *files = NULL;
	Dwarf_Attribute a;
	const char *comp_dir;
	size_t n = 0;
	int ns, k;

	if (!cudie)
		return 0;
	ns = dwarf_getscopes(cudie, pc - bias, &scopes);
	if (ns <= 0) {
		free(scopes);
		return 0;
	}
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	ns = dwarf_getscopes_die(&inner, &scopes);
	if (dwarf_getsrcfiles(cudie, &files, NULL) != 0)
		files = NULL;
	comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	for (k = 0; k < ns; k++) {
		Dwarf_Die *d = &scopes[k];
		int tag = dwarf_tag(d);

		if (tag == DW_TAG_subprogram) {
			w->function = die_name(d);
			break;
		}
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		if (n < max) {
			out[n].function = die_name(d);
			out[n].file = w->file;
			out[n].line = w->line;
			n++;
		} else {
			free(w->file);
		}
		call_site(d, files, comp_dir, w);
	}
	free(scopes);
	return n;
}
