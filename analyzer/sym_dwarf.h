/*
 * sym_dwarf.h - what DWARF says about an address, for symbolize.c: its
 * source line, the functions inlined there (DW_TAG_inlined_subroutine,
 * with the line of each call, from an index of each compilation unit
 * built on first use), names demangled, source paths joined to their
 * compilation directory and normalized.
 */
#ifndef MEMPROV_SYM_DWARF_H
#define MEMPROV_SYM_DWARF_H

#include <elfutils/libdwfl.h>

#include "symbolize.h"

/* A place in the source; the strings are malloc'd, NULL when unknown. */
struct sym_where {
	char *function;     /* the DWARF name of the function */
	char *file;
	int line;           /* 0: unknown */
};

/* The unit and inlined-subroutine indexes of one module's DWARF (built as used). */
struct sym_dwarf;
struct sym_dwarf *sym_dwarf_new(void);
void sym_dwarf_free(struct sym_dwarf *d);

/* The line-table row of pc (module-relative addresses as libdwfl takes them) into w. */
void sym_dwarf_line(struct sym_dwarf *d, Dwfl_Module *mod, Dwarf_Addr pc, struct sym_where *w);

/*
 * The functions inlined at pc, innermost first, into out[0..max): each
 * gets its name and w's file:line (the place inside it), then w moves to
 * the line that called it. Only function, file and line of out[] are
 * set. Afterwards w is the place in the function that is not inlined,
 * w->function its DWARF name. Returns how many inlined frames.
 */
size_t sym_dwarf_inlined(struct sym_dwarf *d, Dwfl_Module *mod, Dwarf_Addr pc,
			 struct sym_where *w, struct sym_frame *out, size_t max);

/* A symbol's name for people: C++ demangled, no "@GLIBC_2.34"; malloc'd. */
char *sym_demangle(const char *name);

#endif /* MEMPROV_SYM_DWARF_H */
