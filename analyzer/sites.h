/*
 * sites.h - group live memory by allocation site: the symbolized frames
 * of a stack, Python frames first, then the native frames between the
 * allocation and the interpreter, inlined frames included. The
 * allocator's own frames (memprov's hooks, libc's allocation functions,
 * operator new, wrappers like strdup: alloc_fn.h) are folded into the
 * API they stand for; memprov's frames never appear. Stacks that differ
 * only where a report does not look (interpreter internals, or native
 * frames with --python-only) become one site.
 */
#ifndef MEMPROV_SITES_H
#define MEMPROV_SITES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
	const char *api;          /* the API the program called, or NULL: func */
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

/* The site of one (stack, kind, func) on its own; free with site_release. */
void site_of(struct site *out, const struct replay *r, struct symbolizer *s,
	     const struct replay_live_key *key, enum site_mode mode);
/* The API a site's memory came from: "operator new", "strdup", else its hooked function. */
const char *site_api(const struct site *site);
/* Free a site's key and frames (not the site itself). */
void site_release(struct site *site);

/* Output (site_print.c). */
#define SITE_ALL_FRAMES SIZE_MAX

/* "kind":"heap","func":"malloc","api":"strdup": the members a site's JSON object starts with. */
void site_json_kind(FILE *f, const struct site *s);
/* "python":[{function,file,line}...],"frames":[{function,file,line,module,address,inlined}...] */
void site_json_frames(FILE *f, const struct site *s);
/* Both, comma between: kind, func, python, frames. */
void site_json(FILE *f, const struct site *s);
/*
 * "key":"...","text":"...": the site's key (what sites merge by across
 * processes: kind, API and symbolized frames, no addresses) and its
 * frames as site_text writes them (merge.h reads both back).
 */
void site_json_key_text(FILE *f, const struct site *s, enum site_mode mode);
/*
 * The frames as text lines indented by six spaces, Python first, at most
 * max of them (then "... N more frames"), or a line saying there are none.
 */
void site_text(FILE *f, const struct site *s, enum site_mode mode, size_t max);
/* "  #N kind api: B blocks, X (B B)" and the frames, for sites[0..shown). */
void sites_text(FILE *f, const struct site *sites, size_t shown, enum site_mode mode);

#endif /* MEMPROV_SITES_H */
