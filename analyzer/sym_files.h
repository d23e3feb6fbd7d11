/*
 * sym_files.h - the module files libdwfl has read, shared by every
 * symbolizer of one memprov process.
 *
 * Reading a module's DWARF is most of what symbolizing a small trace
 * costs: libc's separate debug file has compressed sections, and
 * inflating them took 205 M of the 252 M instructions `memprov check`
 * spent on one `tr` trace (30 of 45 ms). `check` and `leaks` of many
 * traces (a shell loop's hundreds of processes) read each file once, not
 * once a trace. A file is known by its path and its identity (device,
 * inode, size, modification time), so a file replaced between two
 * traces is read again; each trace reaches it through the difference
 * between its own load address and the one the file was first reported
 * at (sym_file.base).
 */
#ifndef MEMPROV_SYM_FILES_H
#define MEMPROV_SYM_FILES_H

#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "debuginfo.h"

struct sym_file {
	struct sym_file *next;
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint64_t base;             /* where the module was reported */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;                 /* sym_file_dwarf's answer */
	int dw_done;
	Dwarf_Addr bias;
	struct sym_dwarf *inlined; /* its index of inlined subroutines */
	struct sym_spans *spans;   /* its symbols' answers per span of addresses */
	int spans_built;
	struct debuginfo_state dbg;
	unsigned users;            /* symbolizers holding it */
};

/*
 * The file at path (an ELF executable or shared object, opened through
 * debuginfo.h), read as a module loaded at base if it was not read yet;
 * NULL when it cannot be. Release with sym_file_put.
 */
struct sym_file *sym_file_get(const char *path, uint64_t base);
void sym_file_put(struct sym_file *f);
/* f's usable DWARF (lines, inlined frames), read at the first call; NULL: none. */
Dwarf *sym_file_dwarf(struct sym_file *f);
/* f's symbol spans, built at the first call (NULL: none). */
struct sym_spans *sym_file_spans(struct sym_file *f);
/* Every file no symbolizer holds; at exit, for leak checkers. */
void sym_files_free(void);

#endif
