/*
 * symbolize.h - turn recorded return addresses into function, file:line
 * and module, offline, with elfutils' libdwfl and the modules the trace
 * recorded (path, load bias, build-id). Files are only opened to be read;
 * a missing, changed or hostile file leaves its frames as module+0xOFF.
 */
#ifndef MEMPROV_SYMBOLIZE_H
#define MEMPROV_SYMBOLIZE_H

#include <stdint.h>

#include "replay.h"

struct sym_frame {
	uint64_t ip;             /* the recorded return address */
	const char *function;    /* symbol name, or NULL */
	const char *file;        /* DWARF source file, or NULL */
	int line;                /* 0: unknown */
	const char *module;      /* module path, or NULL */
	uint64_t offset;         /* ip - module base */
	int interpreter;         /* frame inside the Python interpreter */
	int memprov;             /* frame inside libmemprov itself */
};

struct symbolizer;

/* enabled 0: only modules and offsets, no file is opened. */
struct symbolizer *sym_new(const struct replay *r, int enabled);
/* Symbolize ip (a return address) of a stack written at ts; cached. */
const struct sym_frame *sym_lookup(struct symbolizer *s, uint64_t ip, uint64_t ts);
/* "name+0xOFF" or "0xADDR" for a frame with no function name, into buf. */
const char *sym_fallback(const struct sym_frame *f, char *buf, size_t len);
void sym_free(struct symbolizer *s);

#endif /* MEMPROV_SYMBOLIZE_H */
