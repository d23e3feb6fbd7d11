/*
 * sym_files.c - the module files libdwfl has read, shared by every
 * symbolizer of one memprov process (sym_files.h): one Dwfl per file,
 * opened only when regular and ELF, kept while a symbolizer holds it and,
 * for the next trace, up to KEEP files more, the least recently used
 * closed first.
 */
#include <elf.h>
#include <elfutils/libdwelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym_dwarf.h"
#include "sym_files.h"
#include "sym_spans.h"
#include "util.h"

#define KEEP 64 /* files no trace holds, kept open (a descriptor each) */

static struct sym_file *files; /* the most recently used first */

/* No search of libdwfl's own: it opens FIFOs and devices (debuginfo.h). */
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = debuginfo_find_elf,
	.find_debuginfo = debuginfo_find,
	.section_address = dwfl_offline_section_address,
};

/*
 * Open a module's file for reading, if it is a regular file holding an
 * executable or shared object (a loaded module is never a relocatable
 * object, whose relocation would make libdwfl search for files itself).
 * The path comes from the trace: debuginfo_open opens nothing else.
 */
static int open_module(const char *path)
{
	Elf64_Ehdr eh;
	int fd;

	if (path[0] != '/')
		return -1; /* [vdso], linux-vdso.so.1 ... */
	fd = debuginfo_open(path, (off_t)sizeof(eh));
	if (fd < 0)
		return -1;
	/* e_type is at the same offset in 32- and 64-bit headers */
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The module's DWARF, with its separate debug file if it has one. DWARF
 * that refers to a dwz file no search of ours found is not used: libdw
 * would look for that file itself, opening whatever it finds.
 */
Dwarf *sym_file_dwarf(struct sym_file *f)
{
	const char *altname;
	const void *id;

	if (f->dw_done)
		return f->dw;
	f->dw_done = 1;
	f->dw = dwfl_module_getdwarf(f->mod, &f->bias);
	if (f->dw && dwelf_dwarf_gnu_debugaltlink(f->dw, &altname, &id) > 0 && !f->dbg.alt_found)
		f->dw = NULL;
	return f->dw;
}

static const char *base_name(const char *path)
{
	const char *p = strrchr(path, '/');

	return p ? p + 1 : path;
}

static void file_free(struct sym_file *f)
{
	sym_dwarf_free(f->inlined);
	sym_spans_free(f->spans);
	if (f->dwfl)
		dwfl_end(f->dwfl); /* closes the file */
	free(f->path);
	free(f);
}

/* The file read anew from fd (owned from here); NULL: not readable. */
static struct sym_file *file_read(const char *path, int fd, const struct stat *st, uint64_t base)
{
	struct sym_file *f = xcalloc(1, sizeof(*f));
	void **userdata;

	f->path = xstrdup(path);
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime = st->st_mtim;
	f->base = base;
	f->dwfl = dwfl_begin(&offline_callbacks);
	if (!f->dwfl) {
		close(fd);
		file_free(f);
		return NULL;
	}
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, base_name(path), path, fd, base, false);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		close(fd);
		file_free(f);
		return NULL;
	}
	dwfl_module_info(f->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = &f->dbg;
	return f;
}

/* Close the least recently used files no symbolizer holds, past KEEP of them. */
static void trim(size_t keep)
{
	struct sym_file **pp, **last;
	size_t idle = 0;

	for (pp = &files; *pp; pp = &(*pp)->next)
		idle += !(*pp)->users;
	while (idle > keep) {
		last = NULL;
		for (pp = &files; *pp; pp = &(*pp)->next)
			if (!(*pp)->users)
				last = pp;
		if (!last)
			return;
		{
			struct sym_file *f = *last;

			*last = f->next;
			file_free(f);
		}
		idle--;
	}
}

struct sym_file *sym_file_get(const char *path, uint64_t base)
{
	struct sym_file **pp, *f;
	struct stat st;
	int fd = open_module(path);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	for (pp = &files; (f = *pp); pp = &f->next)
		if (f->dev == st.st_dev && f->ino == st.st_ino && f->size == st.st_size &&
		    f->mtime.tv_sec == st.st_mtim.tv_sec && f->mtime.tv_nsec == st.st_mtim.tv_nsec &&
		    !strcmp(f->path, path))
			break;
	if (f) {
		close(fd);
		*pp = f->next; /* to the front */
	} else {
		f = file_read(path, fd, &st, base);
		if (!f)
			return NULL;
	}
	f->next = files;
	files = f;
	f->users++;
	return f;
}

void sym_file_put(struct sym_file *f)
{
	if (!f)
		return;
	f->users--;
	if (!f->users)
		trim(KEEP);
}

struct sym_spans *sym_file_spans(struct sym_file *f)
{
	if (!f->spans_built) {
		f->spans = sym_spans_new(f->mod);
		f->spans_built = 1;
	}
	return f->spans;
}

void sym_files_free(void)
{
	trim(0);
}
