/*
 * inherit.c - a forked child's inheritance: the parent's trace found
 * beside the child's (or given with --parent), replayed up to the fork
 * record that names the child, its live set handed to the child's
 * replay. A parent that was itself a forked child is seeded the same way
 * first, so a grandchild inherits what its parent inherited.
 *
 * Which fork: a parent may have forked children of the same pid at
 * different times (pids are reused). The child's header names the fork's
 * serial, and the parent's FORK record carries it: that one. Traces of
 * older writers have no serial: an earlier child of that pid ended before
 * ours began, so its fork is earlier than ours; a later one began after
 * ours ended; so ours is taken as the last fork of the pid at or before
 * the child's last record (wrong only when the parent, descheduled,
 * recorded the fork after the child's end).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inherit.h"
#include "trace_chain.h"
#include "util.h"

#define INHERIT_DEPTH 64 /* parents of parents followed at most */

static const char *parent_given;

void inherit_set_parent(const char *path)
{
	parent_given = path;
}

/*
 * The FORK record of pid with serial in the trace at path (serial 0: the
 * latest at or before end): its timestamp in *ts. Returns 1 when there is
 * one, 0 when not, -1 when the trace cannot be read.
 */
static int last_fork_of(const char *path, int32_t pid, uint32_t serial, uint64_t end, uint64_t *ts)
{
	const struct mp_rec_head *h;
	struct trace t;
	int found = 0;

	if (trace_open(&t, path, TRACE_QUIET) < 0)
		return -1;
	while ((h = trace_next(&t))) {
		const struct mp_rec_fork *f = (const void *)h;

		if (h->type != MP_REC_FORK || f->child_pid != pid ||
		    (serial ? f->serial != serial : h->ts > end))
			continue;
		if (!found || h->ts >= *ts)
			*ts = h->ts;
		found = 1;
	}
	trace_close(&t);
	return found;
}

/* The directory part of path ("." when it has none), newly allocated. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

/* Is path the file st describes? */
static int same_file(const char *path, const struct stat *st)
{
	struct stat s2;

	return !stat(path, &s2) && s2.st_dev == st->st_dev && s2.st_ino == st->st_ino;
}

/*
 * The trace, among those beside the child's, that forked it: pid ppid,
 * and the latest fork of the child's pid. Newly allocated, or NULL.
 */
static char *find_parent(const struct trace *child, uint64_t end, uint64_t *fork_ts)
{
	char *dir = dir_of(child->path), *best = NULL;
	struct stat self;
	struct dirent *de;
	DIR *d;

	if (stat(child->path, &self) || !(d = opendir(dir))) {
		free(dir);
		return NULL;
	}
	while ((de = readdir(d))) {
		struct mp_file_header h;
		uint64_t ts;
		char *p;

		if (de->d_name[0] == '.')
			continue;
		p = xmalloc(strlen(dir) + strlen(de->d_name) + 2);
		sprintf(p, "%s/%s", dir, de->d_name);
		if (trace_peek(p, &h) || h.pid != child->hdr.ppid || same_file(p, &self) ||
		    last_fork_of(p, child->hdr.pid, child->hdr.fork_serial, end, &ts) != 1 || (best && ts < *fork_ts)) {
			free(p);
			continue;
		}
		free(best);
		best = p;
		*fork_ts = ts;
	}
	closedir(d);
	free(dir);
	return best;
}

struct fork_stop {
	int32_t pid;
	uint64_t ts;
};

static int stop_at_fork(struct replay *r, const struct mp_rec_head *h, void *arg)
{
	const struct fork_stop *fs = arg;

	(void)r;
	return h->type == MP_REC_FORK && h->ts == fs->ts &&
	       ((const struct mp_rec_fork *)h)->child_pid == fs->pid;
}

static void seed(struct replay *r, int depth);

/*
 * Replay the parent's trace (seeded from its own parent first) up to the
 * fork at ts and give its live set to r. Takes parent.
 */
static void adopt_parent(struct replay *r, char *parent, uint64_t ts, int depth)
{
	struct fork_stop fs = { .pid = r->trace->hdr.pid, .ts = ts };
	struct replay_inherit *in = &r->inherit;
	struct replay pr;
	struct trace pt;

	if (trace_open(&pt, parent, TRACE_QUIET) < 0) {
		free(parent);
		return;
	}
	replay_init(&pr, &pt);
	seed(&pr, depth + 1);
	pr.on_record = stop_at_fork;
	pr.arg = &fs;
	replay_run(&pr);
	replay_adopt(r, &pr);
	in->state = INHERIT_FOUND;
	in->parent_path = parent;
	in->parent_pid = pt.hdr.pid;
	in->fork_ts = ts;
	replay_release(&pr);
	trace_close(&pt);
}

static void seed(struct replay *r, int depth)
{
	const struct trace *t = r->trace;
	struct replay_inherit *in = &r->inherit;
	uint64_t end = trace_end_ts(r->trace), ts = 0;
	char *parent = NULL;
	int found;

	if (!(t->hdr.flags & MP_HF_FORKED) && !(parent_given && !depth))
		return;
	in->state = INHERIT_UNKNOWN;
	in->parent_pid = t->hdr.ppid;
	if (depth >= INHERIT_DEPTH)
		return;
	if (!end)
		end = UINT64_MAX;
	if (parent_given && !depth) {
		found = last_fork_of(parent_given, t->hdr.pid, t->hdr.fork_serial, end, &ts);
		if (found < 0)
			warning("cannot read the parent's trace '%s': inherited blocks unknown",
				parent_given);
		else if (!found)
			warning("'%s' did not fork pid %d: inherited blocks unknown", parent_given,
				(int)t->hdr.pid);
		if (found == 1)
			parent = xstrdup(parent_given);
	} else {
		parent = find_parent(t, end, &ts);
	}
	if (parent)
		adopt_parent(r, parent, ts, depth);
}

void inherit_seed(struct replay *r)
{
	seed(r, 0);
}

void inherit_split(struct replay *r, struct replay_live **live, struct replay_live **out)
{
	struct replay_live *l, *tmp;

	r->inherit.held_blocks = r->inherit.held_bytes = 0;
	HASH_ITER(hh, *live, l, tmp) {
		if (!l->key.inherited)
			continue;
		HASH_DEL(*live, l);
		r->inherit.held_blocks += l->blocks;
		r->inherit.held_bytes += l->bytes;
		if (out)
			HASH_ADD(hh, *out, key, sizeof(l->key), l);
		else
			free(l);
	}
}

void inherit_held(struct replay *r)
{
	struct replay_block *const tables[2] = { r->blocks, r->mmaps };
	const struct replay_block *b, *tmp;
	size_t i;

	r->inherit.held_blocks = r->inherit.held_bytes = 0;
	for (i = 0; i < 2; i++)
		HASH_ITER(hh, tables[i], b, tmp)
			if (b->inherited) {
				r->inherit.held_blocks += b->weight;
				r->inherit.held_bytes += block_bytes(b);
			}
}

void inherit_text(FILE *f, const struct replay *r, const char *indent)
{
	const struct replay_inherit *in = &r->inherit;
	char b1[HUMAN_LEN], c1[HUMAN_LEN];

	if (in->state == INHERIT_UNKNOWN) {
		fprintf(f, "%sforked from pid %d, whose trace is not beside this one: inherited blocks "
			"unknown (--parent TRACE names it)\n", indent, (int)in->parent_pid);
		return;
	}
	if (in->state != INHERIT_FOUND)
		return;
	fprintf(f, "%sinherited from pid %d at the fork: %s in %" PRIu64 " block%s; still held: ",
		indent, (int)in->parent_pid, bytes_exact(b1, sizeof(b1), in->bytes), in->blocks,
		in->blocks == 1 ? "" : "s");
	fprintf(f, "%s in %s block%s (the rest is the process's own)\n",
		bytes_exact(b1, sizeof(b1), in->held_bytes),
		fmt_count(c1, sizeof(c1), in->held_blocks), in->held_blocks == 1 ? "" : "s");
	fprintf(f, "%sparent's trace: ", indent);
	put_text(f, in->parent_path, ESC_TEXT);
	fputc('\n', f);
	if (r->have_reach && r->reach.status == MP_REACH_DONE && in->held_blocks &&
	    !(r->reach.notes & MP_REACH_N_INHERITED))
		fprintf(f, "%snote: the scan at exit did not see the inherited blocks: a block reached "
			"only through one of them is counted lost\n", indent);
}

void inherit_json(FILE *f, const struct replay *r)
{
	const struct replay_inherit *in = &r->inherit;

	fprintf(f, ",\"inherited\":");
	if (in->state == INHERIT_NONE) {
		fprintf(f, "null");
		return;
	}
	fprintf(f, "{\"parent_pid\":%d,\"parent_trace\":", (int)in->parent_pid);
	if (in->state == INHERIT_FOUND)
		json_str(f, in->parent_path);
	else
		fprintf(f, "null");
	fprintf(f, ",\"known\":%s,\"at_fork\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}"
		",\"freed\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}"
		",\"held\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}}",
		in->state == INHERIT_FOUND ? "true" : "false", in->blocks, in->bytes,
		in->freed_blocks, in->freed_bytes, in->held_blocks, in->held_bytes);
}
