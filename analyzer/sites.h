/*
 * sites.h - group live memory by allocation site: the symbolized frames
 * of a stack, Python frames first, then the native frames between the
 * allocation and the interpreter. Stacks that differ only where a report
 * does not look (interpreter internals, or native frames with
 * --python-only) become one site.
 */
#ifndef MEMPROV_SITES_H
#define MEMPROV_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"
#include "symbolize.h"

enum site_mode {
	SITE_DEFAULT = 0,     /* Python frames, then native up to the interpreter */
	SITE_NATIVE = 1,      /* Python frames, then every native frame */
	SITE_PYTHON_ONLY = 2, /* Python frames only */
};

struct site_pyframe {
	const char *function;
	const char *file;
	uint32_t line;
};

struct site {
	UT_hash_handle hh;
	char *key;
	unsigned kind, func;
	uint64_t blocks, bytes;
	size_t n_python, n_native;
	struct site_pyframe *python;
	const struct sym_frame **native;
};

/*
 * Sites of the live memory in live, biggest first (bytes, then blocks).
 * Returns an array of *n sites; release with sites_free.
 */
struct site *sites_build(const struct replay *r, struct symbolizer *s,
			 const struct replay_live *live, enum site_mode mode, size_t *n);
void sites_free(struct site *sites, size_t n);

#endif /* MEMPROV_SITES_H */
