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
 *
 * A parent that forked many children (a test runner, a shell, make) is
 * read once for all of them, not once per child: its FORK records are
 * indexed the first time it is looked at, the traces of a directory are
 * listed once by pid, and the replay of the parent is kept where it
 * stopped, so the next child's fork, later in the trace, continues it.
 * Each is checked against the file (device, inode, size, mtime) before
 * it is used again. Without them a parent of 30 children with a 52 MB
 * trace took 12.8 s to check (each child read the parent's trace twice).
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

/* What tells a file changed: a cache entry is used again only while equal. */
struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

static int file_id_of(const char *path, struct file_id *id)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	memset(id, 0, sizeof(*id));
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime = st.st_mtim;
	return 0;
}

static int file_id_eq(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* The FORK records of one trace, in the order read. */
struct fork_index {
	struct fork_index *next;
	char *path;
	struct file_id id;
	int readable;
	size_t n;
	struct fork_at {
		int32_t pid;
		uint32_t serial;
		uint64_t ts;
	} *forks;
};

static struct fork_index *fork_indexes;

static const struct fork_index *forks_of(const char *path)
{
	struct fork_index *fi;
	const struct mp_rec_head *h;
	struct file_id id;
	struct trace t;
	size_t cap = 0;

	if (file_id_of(path, &id))
		return NULL;
	for (fi = fork_indexes; fi; fi = fi->next)
		if (!strcmp(fi->path, path))
			break;
	if (fi && file_id_eq(&fi->id, &id))
		return fi;
	if (!fi) {
		fi = xcalloc(1, sizeof(*fi));
		fi->path = xstrdup(path);
		fi->next = fork_indexes;
		fork_indexes = fi;
	}
	fi->id = id;
	fi->n = 0;
	fi->readable = trace_open(&t, path, TRACE_QUIET) == 0;
	if (!fi->readable)
		return fi;
	while ((h = trace_next(&t))) {
		const struct mp_rec_fork *f = (const void *)h;

		if (h->type != MP_REC_FORK)
			continue;
		if (fi->n == cap) {
			cap = cap ? 2 * cap : 16;
			fi->forks = xrealloc(fi->forks, cap * sizeof(*fi->forks));
		}
		fi->forks[fi->n++] = (struct fork_at){ f->child_pid, f->serial, h->ts };
	}
	trace_close(&t);
	return fi;
}

/*
 * The FORK record of pid with serial in the trace at path (serial 0: the
 * latest at or before end): its timestamp in *ts. Returns 1 when there is
 * one, 0 when not, -1 when the trace cannot be read.
 */
static int last_fork_of(const char *path, int32_t pid, uint32_t serial, uint64_t end, uint64_t *ts)
{
	const struct fork_index *fi = forks_of(path);
	int found = 0;
	size_t i;

	if (!fi || !fi->readable)
		return -1;
	for (i = 0; i < fi->n; i++) {
		const struct fork_at *f = &fi->forks[i];

		if (f->pid != pid || (serial ? f->serial != serial : f->ts > end))
			continue;
		if (!found || f->ts >= *ts)
			*ts = f->ts;
		found = 1;
	}
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

/* The traces of a directory by the pid their headers name, listed once. */
struct dir_list {
	struct dir_list *next;
	char *dir;
	struct file_id id;
	size_t n;
	struct dir_trace {
		char *path;
		int32_t pid;
	} *traces;
};

static struct dir_list *dir_lists;

static void dir_list_clear(struct dir_list *dl)
{
	for (size_t i = 0; i < dl->n; i++)
		free(dl->traces[i].path);
	free(dl->traces);
	dl->traces = NULL;
	dl->n = 0;
}

static const struct dir_list *traces_in(const char *dir)
{
	struct dir_list *dl;
	struct file_id id;
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	if (file_id_of(dir, &id))
		return NULL;
	for (dl = dir_lists; dl; dl = dl->next)
		if (!strcmp(dl->dir, dir))
			break;
	if (dl && file_id_eq(&dl->id, &id))
		return dl;
	if (!(d = opendir(dir)))
		return NULL;
	if (!dl) {
		dl = xcalloc(1, sizeof(*dl));
		dl->dir = xstrdup(dir);
		dl->next = dir_lists;
		dir_lists = dl;
	}
	dir_list_clear(dl);
	dl->id = id;
	while ((de = readdir(d))) {
		struct mp_file_header h;
		char *p;

		if (de->d_name[0] == '.')
			continue;
		p = xmalloc(strlen(dir) + strlen(de->d_name) + 2);
		sprintf(p, "%s/%s", dir, de->d_name);
		if (trace_peek(p, &h)) {
			free(p);
			continue;
		}
		if (dl->n == cap) {
			cap = cap ? 2 * cap : 32;
			dl->traces = xrealloc(dl->traces, cap * sizeof(*dl->traces));
		}
		dl->traces[dl->n++] = (struct dir_trace){ p, h.pid };
	}
	closedir(d);
	return dl;
}

/*
 * The trace, among those beside the child's, that forked it: pid ppid,
 * and the latest fork of the child's pid. Newly allocated, or NULL.
 */
static char *find_parent(const struct trace *child, uint64_t end, uint64_t *fork_ts)
{
	char *dir = dir_of(child->path), *best = NULL;
	const struct dir_list *dl = traces_in(dir);
	struct stat self;
	size_t i;

	free(dir);
	if (!dl || stat(child->path, &self))
		return NULL;
	for (i = 0; i < dl->n; i++) {
		const char *p = dl->traces[i].path;
		uint64_t ts;

		if (dl->traces[i].pid != child->hdr.ppid || same_file(p, &self) ||
		    last_fork_of(p, child->hdr.pid, child->hdr.fork_serial, end, &ts) != 1 ||
		    (best && ts < *fork_ts))
			continue;
		free(best);
		best = xstrdup(p);
		*fork_ts = ts;
	}
	return best;
}

struct fork_stop {
	int32_t pid;
	uint64_t ts;
	int hit; /* the replay stopped there (else it reached the end) */
};

static int stop_at_fork(struct replay *r, const struct mp_rec_head *h, void *arg)
{
	struct fork_stop *fs = arg;

	(void)r;
	fs->hit = h->type == MP_REC_FORK && h->ts == fs->ts &&
		  ((const struct mp_rec_fork *)h)->child_pid == fs->pid;
	return fs->hit;
}

static void seed(struct replay *r, int depth);

/*
 * The replay of a parent's trace, kept where it stopped (at the fork of
 * at_pid at at_ts) for its next child: forks are in time order in the
 * trace, and children mostly checked in the order they were forked.
 */
struct kept_replay {
	char *path;
	struct file_id id;
	struct trace t;
	struct replay r;
	struct fork_stop fs;
};

static struct kept_replay *kept;

static void kept_free(struct kept_replay *k)
{
	if (!k)
		return;
	replay_release(&k->r);
	trace_close(&k->t);
	free(k->path);
	free(k);
}

/*
 * The parent's replay stopped at the fork of pid at ts: the kept one
 * carried on when it stopped before that fork, else a new one (seeded
 * from its own parent first). NULL when the trace cannot be read.
 */
static struct kept_replay *replay_to_fork(const char *parent, int32_t pid, uint64_t ts, int depth)
{
	struct kept_replay *k;
	struct file_id id;

	if (file_id_of(parent, &id))
		return NULL;
	if (kept && kept->fs.hit && !strcmp(kept->path, parent) && file_id_eq(&kept->id, &id) &&
	    (kept->fs.ts < ts || (kept->fs.ts == ts && kept->fs.pid == pid))) {
		if (kept->fs.ts != ts) {
			kept->fs = (struct fork_stop){ .pid = pid, .ts = ts };
			replay_run(&kept->r);
		}
		return kept;
	}
	k = xcalloc(1, sizeof(*k));
	if (trace_open(&k->t, parent, TRACE_QUIET) < 0) {
		free(k);
		return NULL;
	}
	k->path = xstrdup(parent);
	k->id = id;
	replay_init(&k->r, &k->t);
	seed(&k->r, depth + 1); /* may replace kept: this one is not kept yet */
	k->fs = (struct fork_stop){ .pid = pid, .ts = ts };
	k->r.on_record = stop_at_fork;
	k->r.arg = &k->fs;
	replay_run(&k->r);
	kept_free(kept);
	kept = k;
	return k;
}

/*
 * Replay the parent's trace (seeded from its own parent first) up to the
 * fork at ts and give its live set to r. Takes parent.
 */
static void adopt_parent(struct replay *r, char *parent, uint64_t ts, int depth)
{
	struct replay_inherit *in = &r->inherit;
	struct kept_replay *k = replay_to_fork(parent, r->trace->hdr.pid, ts, depth);

	if (!k) {
		free(parent);
		return;
	}
	replay_adopt(r, &k->r);
	in->state = INHERIT_FOUND;
	in->parent_path = parent;
	in->parent_pid = k->t.hdr.pid;
	in->fork_ts = ts;
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

void inherit_drop(struct replay *r, struct replay_live **lost)
{
	struct replay_live *l, *tmp;

	r->inherit.lost_known = 1;
	r->inherit.lost_blocks = r->inherit.lost_bytes = 0;
	HASH_ITER(hh, *lost, l, tmp)
		if (l->key.inherited) {
			HASH_DEL(*lost, l);
			r->inherit.lost_blocks += l->blocks;
			r->inherit.lost_bytes += l->bytes;
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
	if (in->lost_known && in->lost_blocks)
		fprintf(f, "%sof them lost in this process, not gated (the parent allocated them; "
			"a block that only another of its threads held is lost in every forked "
			"child): %s in %s block%s\n", indent,
			bytes_exact(b1, sizeof(b1), in->lost_bytes),
			fmt_count(c1, sizeof(c1), in->lost_blocks), in->lost_blocks == 1 ? "" : "s");
	fprintf(f, "%sparent's trace: ", indent);
	put_text(f, in->parent_path, ESC_TEXT);
	fputc('\n', f);
	if (r->have_reach && r->reach.status == MP_REACH_DONE && in->held_blocks &&
	    (r->reach.notes & MP_REACH_N_HEAP_ROOTS))
		fprintf(f, "%snote: the scan at exit did not classify the inherited blocks (the "
			"parent's trace too big to read back at every exit, MEMPROV_REACH_INHERIT_MB, "
			"more than 8 forks deep, or a trace that stopped): a block reached only "
			"through one of them is reachable, and a lost one is missed where memory the "
			"child wrote still points to it\n", indent);
	else if (r->have_reach && r->reach.status == MP_REACH_DONE && in->held_blocks &&
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
		",\"held\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
		in->state == INHERIT_FOUND ? "true" : "false", in->blocks, in->bytes,
		in->freed_blocks, in->freed_bytes, in->held_blocks, in->held_bytes);
	if (in->lost_known)
		fprintf(f, ",\"lost\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
			in->lost_blocks, in->lost_bytes);
	fputc('}', f);
}
