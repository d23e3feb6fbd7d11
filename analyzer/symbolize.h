/*
 * symbolize.h - turn recorded return addresses into function, file:line
 * and module, offline, with elfutils' libdwfl and the modules the trace
 * recorded (path, load bias, build-id). One address gives one frame per
 * function inlined at it (DWARF's inlined subroutines), innermost first,
 * then the function they were inlined into. Function names come from
 * DWARF, else from .symtab or .dynsym; files are opened only to be read,
 * only when regular (debuginfo.h); a missing, changed or hostile file
 * leaves its frames as module+0xOFF.
 */
#ifndef MEMPROV_SYMBOLIZE_H
#define MEMPROV_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"

struct sym_frame {
	uint64_t ip;             /* the recorded return address */
	const char *function;    /* function name, or NULL */
	const char *file;        /* DWARF source file (normalized), or NULL */
	int line;                /* 0: unknown */
	const char *module;      /* module path, or NULL */
	uint64_t offset;         /* ip - module base */
	uint64_t fn_offset;      /* ip - the function's symbol (no file:line only) */
	int inlined;             /* inlined into the next frame (same ip) */
	int interpreter;         /* frame inside the Python interpreter */
	int memprov;             /* frame inside libmemprov itself */
};

struct symbolizer;

/* enabled 0: only modules and offsets, no file is opened. */
struct symbolizer *sym_new(const struct replay *r, int enabled);
/*
 * Symbolize ip (a return address) of a stack written at ts: *n frames
 * (at least 1), the innermost inlined function first, all with this ip.
 * Cached; valid until sym_free.
 */
const struct sym_frame *sym_lookup(struct symbolizer *s, uint64_t ip, uint64_t ts, size_t *n);
/*
 * The function (demangled) that the call instruction before return
 * address ip called, read from the module's code and relocations, or
 * NULL: what a frame called even when the callee's frame is gone (a tail
 * call). Cached.
 */
const char *sym_callee(struct symbolizer *s, uint64_t ip, uint64_t ts);
/* "name+0xOFF" or "0xADDR" for a frame with no function name, into buf. */
const char *sym_fallback(const struct sym_frame *f, char *buf, size_t len);
/*
 * A frame as reports print it, into buf: "function file:line",
 * "function+0xOFF (module)" without a line, "module+0xOFF" without a name.
 */
const char *sym_text(const struct sym_frame *f, char *buf, size_t len);
void sym_free(struct symbolizer *s);

/* A source path with "." and "dir/.." taken out ("string/strdup.c"); malloc'd. */
char *sym_normalize_path(const char *path);

#endif /* MEMPROV_SYMBOLIZE_H */
