/*
 * sym_call.h - which function a call instruction called, read from the
 * module's code: the call that ends at a return address, through the
 * PLT or the GOT to the symbol its relocation names, or straight to a
 * function of the module. It names the API a program called when the
 * allocator's own frames cannot (libstdc++'s operator new[] jumps to
 * operator new: only operator new is on the stack).
 */
#ifndef MEMPROV_SYM_CALL_H
#define MEMPROV_SYM_CALL_H

#include <elfutils/libdwfl.h>

#include "sym_spans.h"

/*
 * The name (raw, not demangled) of the function called by the x86-64
 * call instruction that ends at ip (an address in mod, as libdwfl takes
 * them), or NULL when that is not a call whose target can be read. sp:
 * mod's spans (sym_spans.h), or NULL.
 */
const char *sym_call_target(Dwfl_Module *mod, struct sym_spans *sp, Dwarf_Addr ip);

#endif /* MEMPROV_SYM_CALL_H */
