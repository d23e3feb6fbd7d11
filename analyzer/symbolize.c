/*
 * symbolize.c - libdwfl offline symbolization of recorded return
 * addresses, one Dwfl per module file (sym_files.c: shared by the traces
 * one memprov reads; a module unloaded and another loaded at the same
 * place do not collide), with a cache per address. An address expands
 * into its inlined frames (sym_dwarf.c).
 */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_call.h"
#include "sym_dwarf.h"
#include "sym_files.h"
#include "sym_spans.h"
#include "symbolize.h"
#include "util.h"

struct sym_module {
	struct sym_file *f; /* its file, or NULL */
	uint64_t delta;    /* this trace's load address less the file's (f->base) */
	int state;         /* 0 not tried, 1 usable, -1 not usable, -2 build-id differs */
	int interpreter;   /* -1 not known yet */
};

struct sym_entry {
	UT_hash_handle hh;
	struct sym_key {
		uint64_t ip;
		int64_t module;
	} key;
	size_t n;
	struct sym_frame *f;
	char *callee;      /* sym_callee: the function the call at ip called */
	int callee_done;
};

struct symbolizer {
	const struct replay *r;
	int enabled;
	struct sym_module *mods;
	struct sym_entry *cache;
};

struct symbolizer *sym_new(const struct replay *r, int enabled)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));
	size_t i;

	s->r = r;
	s->enabled = enabled;
	s->mods = xcalloc(r->n_modules + 1, sizeof(*s->mods));
	for (i = 0; i < r->n_modules; i++)
		s->mods[i].interpreter = -1;
	/* debuginfod would reach out to the network: never from here */
	unsetenv("DEBUGINFOD_URLS");
	return s;
}

static const char *base_name(const char *path)
{
	const char *p = strrchr(path, '/');

	return p ? p + 1 : path;
}

static const char *module_path(const struct symbolizer *s, const struct replay_module *m)
{
	return m->path[0] ? m->path : s->r->trace->hdr.exe;
}

static int build_id_matches(Dwfl_Module *mod, const struct replay_module *m)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n;

	if (!m->build_id_len)
		return 1;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	return n == m->build_id_len && !memcmp(bits, m->build_id, (size_t)n);
}

static void module_load(struct symbolizer *s, size_t i)
{
	const struct replay_module *m = &s->r->modules[i];
	struct sym_module *sm = &s->mods[i];
	const char *path = module_path(s, m);

	sm->state = -1;
	if (!s->enabled)
		return;
	sm->f = sym_file_get(path, m->base);
	if (!sm->f)
		return;
	sm->delta = m->base - sm->f->base;
	if (!build_id_matches(sm->f->mod, m)) {
		size_t j;

		/* warn once per path, however many times it was loaded */
		for (j = 0; j < i; j++)
			if (s->mods[j].state == -2 && !strcmp(module_path(s, &s->r->modules[j]), path))
				break;
		if (j == i)
			warning("'%s' changed since the trace was written: build-id differs; its frames are not symbolized",
				path);
		sm->state = -2;
		return;
	}
	sym_file_dwarf(sm->f);
	sm->state = 1;
}

static int defines_symbol(Dwfl_Module *mod, const char *a, const char *b)
{
	int n = dwfl_module_getsymtab(mod), i;

	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (name && sym.st_shndx != SHN_UNDEF && (!strcmp(name, a) || !strcmp(name, b)))
			return 1;
	}
	return 0;
}

/*
 * Is module i the Python interpreter? libpython*.so*, or an executable
 * named python* (or any module) that defines the eval loop.
 */
static int module_is_interpreter(struct symbolizer *s, size_t i)
{
	struct sym_module *sm = &s->mods[i];
	const char *name = base_name(module_path(s, &s->r->modules[i]));

	if (sm->interpreter >= 0)
		return sm->interpreter;
	if (!strncmp(name, "libpython", 9) && strstr(name, ".so"))
		sm->interpreter = 1;
	else if (strncmp(name, "python", 6))
		sm->interpreter = 0;
	else if (sm->state == 1)
		sm->interpreter = defines_symbol(sm->f->mod, "PyEval_EvalCode", "_PyEval_EvalFrameDefault");
	else
		sm->interpreter = 1; /* python* we cannot read: trust the name */
	return sm->interpreter;
}

/*
 * The frames of ip in module i into out[0..max): the inlined ones (from
 * DWARF), then the function they are in, named by its symbol (else by
 * DWARF) with the symbol's offset. Returns how many (at least 1).
 */
static size_t fill_frames(struct symbolizer *s, size_t i, struct sym_frame *out, size_t max)
{
	struct sym_module *sm = &s->mods[i];
	struct sym_frame base = out[0];
	struct sym_where w;
	Dwarf_Addr pc; /* in the file's module: the call is before the return address */
	struct sym_file *f;
	GElf_Off off = 0;
	const char *name;
	size_t n = 0, k;

	if (!sm->state)
		module_load(s, i);
	base.interpreter = module_is_interpreter(s, i);
	base.memprov = !strncmp(base_name(base.module), "libmemprov", 10);
	out[0] = base;
	if (sm->state != 1)
		return 1;
	f = sm->f;
	pc = base.ip - 1 - sm->delta;
	memset(&w, 0, sizeof(w));
	if (f->dw) {
		if (!f->inlined)
			f->inlined = sym_dwarf_new();
		sym_dwarf_line(f->inlined, f->mod, pc, &w);
		n = sym_dwarf_inlined(f->inlined, f->mod, pc, &w, out, max - 1);
	}
	for (k = 0; k <= n; k++) { /* inlined frames share the address's figures */
		out[k].ip = base.ip;
		out[k].module = base.module;
		out[k].offset = base.offset;
		out[k].interpreter = base.interpreter;
		out[k].memprov = base.memprov;
		out[k].inlined = k < n;
	}
	name = sym_spans_addrinfo(sym_file_spans(f), f->mod, pc, &off);
	if (name && !strncmp(name, "__GI_", 5)) {
		/*
		 * glibc's internal alias of the function at the same address
		 * (__GI___nptl_deallocate_tsd): the DWARF name, as valgrind
		 * and the source give it, else the name it aliases.
		 */
		out[n].function = w.function ? w.function : xstrdup(name + 5);
		out[n].fn_offset = off + 1;
	} else if (name) { /* the symbol: what nm, perf and valgrind call it too */
		out[n].function = sym_demangle(name);
		out[n].fn_offset = off + 1;
		free(w.function);
	} else {
		out[n].function = w.function;
		out[n].fn_offset = 0;
	}
	out[n].file = w.file;
	out[n].line = w.line;
	return n + 1;
}

#define MAX_INLINED 32

static struct sym_entry *lookup(struct symbolizer *s, uint64_t ip, uint64_t ts)
{
	const struct replay_module *m = replay_find_module(s->r, ip - 1, ts);
	struct sym_frame frames[MAX_INLINED + 1];
	struct sym_key key;
	struct sym_entry *e;

	memset(&key, 0, sizeof(key));
	key.ip = ip;
	key.module = m ? m - s->r->modules : -1;
	HASH_FIND(hh, s->cache, &key, sizeof(key), e);
	if (e)
		return e;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	memset(frames, 0, sizeof(frames));
	frames[0].ip = ip;
	e->n = 1;
	if (m) {
		frames[0].module = module_path(s, m);
		frames[0].offset = ip - m->base;
		e->n = fill_frames(s, (size_t)key.module, frames, ARRAY_SIZE(frames));
	}
	e->f = xmalloc(e->n * sizeof(*e->f));
	memcpy(e->f, frames, e->n * sizeof(*e->f));
	HASH_ADD(hh, s->cache, key, sizeof(key), e);
	return e;
}

const struct sym_frame *sym_lookup(struct symbolizer *s, uint64_t ip, uint64_t ts, size_t *n)
{
	struct sym_entry *e = lookup(s, ip, ts);

	*n = e->n;
	return e->f;
}

const char *sym_callee(struct symbolizer *s, uint64_t ip, uint64_t ts)
{
	struct sym_entry *e = lookup(s, ip, ts);
	struct sym_module *sm = e->key.module >= 0 ? &s->mods[e->key.module] : NULL;
	const char *name;

	if (!e->callee_done) {
		e->callee_done = 1;
		if (sm && sm->state == 1) {
			name = sym_call_target(sm->f->mod, sym_file_spans(sm->f), ip - sm->delta);
			e->callee = name ? sym_demangle(name) : NULL;
		}
	}
	return e->callee;
}

const char *sym_fallback(const struct sym_frame *f, char *buf, size_t len)
{
	if (f->module)
		snprintf(buf, len, "%s+0x%llx", base_name(f->module), (unsigned long long)f->offset);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)f->ip);
	return buf;
}

const char *sym_text(const struct sym_frame *f, char *buf, size_t len)
{
	if (!f->function)
		return sym_fallback(f, buf, len);
	if (f->file)
		snprintf(buf, len, "%s %s:%d", f->function, f->file, f->line);
	else if (f->fn_offset && f->module)
		snprintf(buf, len, "%s+0x%llx (%s)", f->function, (unsigned long long)f->fn_offset,
			 base_name(f->module));
	else if (f->module)
		snprintf(buf, len, "%s (%s)", f->function, base_name(f->module));
	else
		snprintf(buf, len, "%s", f->function);
	return buf;
}

void sym_free(struct symbolizer *s)
{
	struct sym_entry *e, *tmp;
	size_t i, j;

	if (!s)
		return;
	HASH_ITER(hh, s->cache, e, tmp) {
		HASH_DEL(s->cache, e);
		for (j = 0; j < e->n; j++) {
			free((char *)e->f[j].function);
			free((char *)e->f[j].file);
		}
		free(e->f);
		free(e->callee);
		free(e);
	}
	for (i = 0; i < s->r->n_modules; i++)
		sym_file_put(s->mods[i].f);
	free(s->mods);
	free(s);
}
