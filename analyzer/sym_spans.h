/*
 * sym_spans.h - libdwfl's symbol of an address, answered once per span
 * of addresses.
 *
 * dwfl_module_addrinfo reads the whole symbol table on every call: on
 * node's 100,000-odd symbols, `memprov leaks` spent 12 s on one 5 MB
 * trace. Its answer for an address depends only on how the address
 * compares with each symbol's start and end and each section's bounds
 * (at or above a start, below an end, equal to a start): the same for
 * every address strictly between two consecutive such bounds, and for
 * each bound itself. So the bounds are sorted once per module, and each
 * span asks libdwfl once: the same names and offsets, found by a binary
 * search.
 */
#ifndef MEMPROV_SYM_SPANS_H
#define MEMPROV_SYM_SPANS_H

#include <elfutils/libdwfl.h>

struct sym_spans;

/* The spans of mod's symbols and sections (NULL: none, ask libdwfl each time). */
struct sym_spans *sym_spans_new(Dwfl_Module *mod);
void sym_spans_free(struct sym_spans *sp);

/*
 * As dwfl_module_addrinfo(mod, a, off, ...): the name of the symbol a is
 * in, and *off its offset there; NULL when none. sp may be NULL.
 */
const char *sym_spans_addrinfo(struct sym_spans *sp, Dwfl_Module *mod, GElf_Addr a,
			       GElf_Off *off);

#endif /* MEMPROV_SYM_SPANS_H */
