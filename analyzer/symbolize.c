/*
 * symbolize.c - libdwfl offline symbolization of recorded return
 * addresses, one Dwfl per recorded module (a module unloaded and another
 * loaded at the same place must not collide), with a cache per address.
 */
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize.h"
#include "util.h"

struct sym_module {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	int state;         /* 0 not tried, 1 usable, -1 not usable */
	int interpreter;   /* -1 not known yet */
};

struct sym_entry {
	UT_hash_handle hh;
	struct sym_key {
		uint64_t ip;
		int64_t module;
	} key;
	struct sym_frame f;
};

struct symbolizer {
	const struct replay *r;
	int enabled;
	struct sym_module *mods;
	struct sym_entry *cache;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
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

/*
 * Open a module's file for reading, if it is a regular file that can hold
 * an ELF header. The path comes from the trace: a device, FIFO or
 * directory is never opened (opening some devices has effects), and
 * what was opened is checked again (it may have been swapped meanwhile).
 */
static int open_module(const char *path)
{
	struct stat st;
	int fd;

	if (path[0] != '/')
		return -1; /* [vdso], linux-vdso.so.1 ... */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 64)
		return -1;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 64) {
		close(fd);
		return -1;
	}
	return fd;
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
	int fd;

	sm->state = -1;
	if (!s->enabled)
		return;
	fd = open_module(path);
	if (fd < 0)
		return;
	sm->dwfl = dwfl_begin(&offline_callbacks);
	if (!sm->dwfl) {
		close(fd);
		return;
	}
	dwfl_report_begin(sm->dwfl);
	sm->mod = dwfl_report_elf(sm->dwfl, base_name(path), path, fd, m->base, false);
	dwfl_report_end(sm->dwfl, NULL, NULL);
	if (!sm->mod) {
		close(fd);
		return;
	}
	if (!build_id_matches(sm->mod, m)) {
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
		sm->interpreter = defines_symbol(sm->mod, "PyEval_EvalCode", "_PyEval_EvalFrameDefault");
	else
		sm->interpreter = 1; /* python* we cannot read: trust the name */
	return sm->interpreter;
}

/* A DWARF file name, joined to its compilation directory when relative. */
static char *source_path(const char *file, const char *comp_dir)
{
	char *out;

	if (file[0] == '/' || !comp_dir || !comp_dir[0])
		return xstrdup(file);
	out = xmalloc(strlen(comp_dir) + strlen(file) + 2);
	sprintf(out, "%s/%s", comp_dir, file);
	return out;
}

/*
 * C++ names through libstdc++'s __cxa_demangle when that library is on
 * this system (loaded into the analyzer, never from the trace's paths);
 * otherwise, and for C names, the raw name without its symbol version.
 */
static char *demangle(const char *name)
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

static void fill_frame(struct symbolizer *s, struct sym_frame *f, size_t i)
{
	struct sym_module *sm = &s->mods[i];
	Dwarf_Addr pc = f->ip - 1; /* a return address: the call is before it */
	GElf_Off off;
	GElf_Sym sym;
	Dwfl_Line *line;
	const char *name;

	if (!sm->state)
		module_load(s, i);
	f->interpreter = module_is_interpreter(s, i);
	f->memprov = !strncmp(base_name(f->module), "libmemprov", 10);
	if (sm->state != 1)
		return;
	name = dwfl_module_addrinfo(sm->mod, pc, &off, &sym, NULL, NULL, NULL);
	if (name) /* "__libc_start_main@@GLIBC_2.34": the version is noise */
		f->function = demangle(name);
	line = dwfl_module_getsrc(sm->mod, pc);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (file && lineno > 0) {
			f->file = source_path(file, dwfl_line_comp_dir(line));
			f->line = lineno;
		}
	}
}

const struct sym_frame *sym_lookup(struct symbolizer *s, uint64_t ip, uint64_t ts)
{
	const struct replay_module *m = replay_find_module(s->r, ip - 1, ts);
	struct sym_key key;
	struct sym_entry *e;

	memset(&key, 0, sizeof(key));
	key.ip = ip;
	key.module = m ? m - s->r->modules : -1;
	HASH_FIND(hh, s->cache, &key, sizeof(key), e);
	if (e)
		return &e->f;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->f.ip = ip;
	if (m) {
		e->f.module = module_path(s, m);
		e->f.offset = ip - m->base;
		fill_frame(s, &e->f, (size_t)key.module);
	}
	HASH_ADD(hh, s->cache, key, sizeof(key), e);
	return &e->f;
}

const char *sym_fallback(const struct sym_frame *f, char *buf, size_t len)
{
	if (f->module)
		snprintf(buf, len, "%s+0x%llx", base_name(f->module), (unsigned long long)f->offset);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)f->ip);
	return buf;
}

void sym_free(struct symbolizer *s)
{
	struct sym_entry *e, *tmp;
	size_t i;

	if (!s)
		return;
	HASH_ITER(hh, s->cache, e, tmp) {
		HASH_DEL(s->cache, e);
		free((char *)e->f.function);
		free((char *)e->f.file);
		free(e);
	}
	for (i = 0; i < s->r->n_modules; i++)
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
	free(s->mods);
	free(s);
}
