/*
 * run_index.h - lines appended to a run directory's index by every
 * traced process (run_index.c says the format).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#ifndef MEMPROV_RUN_INDEX_H
#define MEMPROV_RUN_INDEX_H

#include <stdint.h>

#include "sys.h"

/* Open the index at path (MEMPROV_RUN_INDEX) once per image; "" : none. */
void mp_index_open(const char *path) MP_HIDDEN;

/* Append one line: EVENT PID PPID MONO_NS VALUE COMMAND (nothing without an index). */
void mp_index_event(const char *event, int32_t pid, int32_t ppid, uint64_t mono_ns,
		    const char *value, const char *cmd) MP_HIDDEN;

struct mp_file_header;
/* The same for the process h describes (its pid, ppid and command), now. */
void mp_index_header_event(const struct mp_file_header *h, const char *event,
			   const char *value) MP_HIDDEN;

/* v as text in buf (24 bytes), for VALUE. */
const char *mp_index_num(char *buf, int64_t v) MP_HIDDEN;

#endif /* MEMPROV_RUN_INDEX_H */
