/*
 * multi.c - reports over many processes. The traces are read one at a
 * time (memory grows with one process's live set plus the merged sites,
 * never with the number of traces). Each process is judged as `leaks`
 * judges one: live at the end of its Python main module, else at its
 * end; its inherited blocks (a forked child's) are its parent's and are
 * counted there; interpreter and module state, arenas and suppressions
 * are set apart. Sites merge across processes by their symbolized
 * frames (site.key: no addresses), each with the processes that hold it,
 * worst first. Images replaced by exec are not counted: their memory
 * went with the exec.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "category.h"
#include "inherit.h"
#include "multi.h"
#include "sites.h"
#include "trace_chain.h"
#include "util.h"

int multi_wanted(char **operands, int n)
{
	struct stat st;

	return n > 1 || (n == 1 && !stat(operands[0], &st) && S_ISDIR(st.st_mode));
}

struct tpath {
	char *path;
	int32_t pid;
	uint64_t start;
};

static int tpath_cmp(const void *a, const void *b)
{
	const struct tpath *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Append the traces of directory dir to *v. Returns how many, or -1. */
static int add_dir(const char *dir, struct tpath **v, size_t *n, size_t *alloc)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int found = 0;

	if (!d)
		return error("cannot open '%s': %s", dir, strerror(errno));
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
		ALLOC_GROW(*v, *n, *alloc);
		(*v)[*n] = (struct tpath){ .path = p, .pid = h.pid, .start = h.start_mono_ns };
		(*n)++;
		found++;
	}
	closedir(d);
	if (!found)
		return error("no memprov trace in '%s'", dir);
	return found;
}

int multi_expand(char **operands, int n, char ***paths, size_t *np)
{
	struct tpath *v = NULL;
	size_t nv = 0, alloc = 0, i;
	int k;

	for (k = 0; k < n; k++) {
		struct mp_file_header h;
		struct stat st;

		if (!stat(operands[k], &st) && S_ISDIR(st.st_mode)) {
			if (add_dir(operands[k], &v, &nv, &alloc) < 0)
				goto fail;
			continue;
		}
		if (trace_peek(operands[k], &h)) {
			error("cannot read '%s' as a memprov trace: %s", operands[k],
			      errno ? strerror(errno) : "not a trace");
			goto fail;
		}
		ALLOC_GROW(v, nv, alloc);
		v[nv++] = (struct tpath){ .path = xstrdup(operands[k]), .pid = h.pid,
					  .start = h.start_mono_ns };
	}
	sort_array(v, nv, sizeof(*v), tpath_cmp);
	*paths = xcalloc(nv + 1, sizeof(**paths));
	for (i = 0; i < nv; i++)
		(*paths)[i] = v[i].path;
	*np = nv;
	free(v);
	return 0;
fail:
	for (i = 0; i < nv; i++)
		free(v[i].path);
	free(v);
	return -1;
}

static void paths_free(char **paths, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* ---- one process ---- */

struct proc {
	char *path;
	struct mp_file_header hdr;
	char ending[256];
	uint64_t peak;               /* live bytes of every kind at most */
	uint64_t own_blocks, own_bytes; /* live at its end, the program's own */
	uint64_t inh_bytes;          /* inherited and still held */
	int inherit_state;
	int bad;                     /* unreadable */
};

struct proc_run {
	struct proc *p;
	struct replay_live *at_main_end;
};

static int proc_on_record(struct replay *r, const struct mp_rec_head *h, void *arg)
{
	struct proc_run *pr = arg;
	uint64_t sum = 0;
	unsigned k;

	(void)h;
	for (k = 1; k < MP_KIND_COUNT; k++)
		sum += r->kinds[k].live_bytes;
	if (sum > pr->p->peak)
		pr->p->peak = sum;
	return 0;
}

static int proc_on_mark(struct replay *r, const struct replay_mark *m, void *arg)
{
	struct proc_run *pr = arg;

	if (m->flags & MP_RF_MAIN_END) {
		replay_live_free(&pr->at_main_end);
		pr->at_main_end = replay_snapshot(r);
	}
	return 0;
}

/* A merged site: its frames as text and JSON, and each process's share. */
struct share {
	size_t proc;
	uint64_t blocks, bytes;
};

struct msite {
	UT_hash_handle hh;
	char *key;
	char *head;     /* "heap malloc" */
	char *frames;   /* text lines */
	uint64_t blocks, bytes;
	struct share *shares;
	size_t n_shares, alloc_shares;
};

struct merged {
	struct msite *sites;
	struct proc *procs;
	size_t n_procs, alloc_procs;
	enum site_mode mode;
	unsigned cat_flags;
	int per_process;
};

static void merge_site(struct merged *m, const struct site *s, size_t proc)
{
	struct msite *ms;
	size_t len;

	HASH_FIND_STR(m->sites, s->key, ms);
	if (!ms) {
		FILE *f;

		ms = xcalloc(1, sizeof(*ms));
		ms->key = xstrdup(s->key);
		ms->head = xmalloc(strlen(kind_name(s->kind)) + strlen(site_api(s)) + 2);
		sprintf(ms->head, "%s %s", kind_name(s->kind), site_api(s));
		f = xopen_memstream(&ms->frames, &len);
		site_text(f, s, m->mode, SITE_ALL_FRAMES);
		fclose(f);
		HASH_ADD_KEYPTR(hh, m->sites, ms->key, strlen(ms->key), ms);
	}
	ms->blocks += s->blocks;
	ms->bytes += s->bytes;
	ALLOC_GROW(ms->shares, ms->n_shares, ms->alloc_shares);
	ms->shares[ms->n_shares++] = (struct share){ proc, s->blocks, s->bytes };
}

/* Replay one trace; merge its own live sites (when m->sites is wanted). */
static void proc_read(struct merged *m, struct proc *p, int want_sites)
{
	struct proc_run pr = { .p = p };
	struct replay_live *live;
	struct symbolizer *sym;
	struct classifier cat;
	struct site *sites;
	struct replay r;
	struct trace t;
	size_t n, i;

	if (trace_open(&t, p->path, 0) < 0) {
		p->bad = 1;
		return;
	}
	p->hdr = t.hdr;
	replay_init(&r, &t);
	inherit_seed(&r);
	r.on_record = proc_on_record;
	r.on_mark = proc_on_mark;
	r.arg = &pr;
	replay_run(&r);
	replay_ending(&r, p->ending, sizeof(p->ending));
	p->inherit_state = r.inherit.state;
	live = pr.at_main_end ? pr.at_main_end : replay_snapshot(&r);
	inherit_split(&r, &live, NULL);
	p->inh_bytes = r.inherit.held_bytes;
	sym = sym_new(&r, 1);
	cat_init(&cat, &r, sym, NULL, CAT_END_VERDICT | m->cat_flags);
	cat_split(&cat, &live, NULL);
	if (want_sites && t.hdr.state != MP_STATE_EXEC) {
		sites = sites_build(&r, sym, live, m->mode, &n);
		for (i = 0; i < n; i++) {
			p->own_blocks += sites[i].blocks;
			p->own_bytes += sites[i].bytes;
			merge_site(m, &sites[i], (size_t)(p - m->procs));
		}
		if (m->per_process && n) {
			printf("\npid %d (", (int)t.hdr.pid);
			put_text(stdout, report_command(&t), ESC_TEXT);
			printf("), %s: %zu site%s of its own:\n", p->ending, n, n == 1 ? "" : "s");
			sites_text(stdout, sites, n, m->mode);
		}
		sites_free(sites, n);
	}
	cat_release(&cat);
	sym_free(sym);
	replay_live_free(&live);
	report_status(&t);
	replay_release(&r);
	trace_close(&t);
}

static int share_cmp(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

static int msite_cmp(const void *a, const void *b)
{
	const struct msite *x = *(const struct msite *const *)a, *y = *(const struct msite *const *)b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Processes: traces of images not replaced by exec, readable. */
static size_t count_processes(const struct merged *m)
{
	size_t i, n = 0;

	for (i = 0; i < m->n_procs; i++)
		n += !m->procs[i].bad && m->procs[i].hdr.state != MP_STATE_EXEC;
	return n;
}

static void print_merged(struct merged *m, size_t n_paths)
{
	size_t n = HASH_COUNT(m->sites), i, j, nproc = count_processes(m), holding = 0;
	struct msite **v = xcalloc(n + 1, sizeof(*v)), *ms, *tmp;
	char b1[HUMAN_LEN], c1[HUMAN_LEN];
	uint64_t blocks = 0, bytes = 0;

	i = 0;
	HASH_ITER(hh, m->sites, ms, tmp) {
		v[i++] = ms;
		blocks += ms->blocks;
		bytes += ms->bytes;
	}
	for (i = 0; i < m->n_procs; i++)
		holding += m->procs[i].own_blocks > 0;
	sort_array(v, n, sizeof(*v), msite_cmp);
	printf("\n%zu trace%s, %zu process%s (images replaced by exec not counted)\n", n_paths,
	       n_paths == 1 ? "" : "s", nproc, nproc == 1 ? "" : "es");
	printf("live at the end of each process, its own (inherited blocks are counted in the parent): "
	       "%s in %s block%s, in %zu process%s of %zu\n", bytes_exact(b1, sizeof(b1), bytes),
	       fmt_count(c1, sizeof(c1), blocks), blocks == 1 ? "" : "s", holding,
	       holding == 1 ? "" : "es", nproc);
	if (!n)
		printf("no site of the programs' own\n");
	else
		printf("%zu site%s of the programs' own, merged across processes:\n", n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		ms = v[i];
		sort_array(ms->shares, ms->n_shares, sizeof(*ms->shares), share_cmp);
		printf("  #%zu %s: %zu process%s of %zu, %s block%s, %s\n", i + 1, ms->head,
		       ms->n_shares, ms->n_shares == 1 ? "" : "es", nproc,
		       fmt_count(c1, sizeof(c1), ms->blocks), ms->blocks == 1 ? "" : "s",
		       bytes_exact(b1, sizeof(b1), ms->bytes));
		fputs(ms->frames, stdout);
		for (j = 0; j < ms->n_shares; j++) {
			const struct proc *p = &m->procs[ms->shares[j].proc];

			printf("      pid %d: %s block%s, %s (", (int)p->hdr.pid,
			       fmt_count(c1, sizeof(c1), ms->shares[j].blocks),
			       ms->shares[j].blocks == 1 ? "" : "s",
			       bytes_exact(b1, sizeof(b1), ms->shares[j].bytes));
			put_text(stdout, p->hdr.cmdline[0] ? p->hdr.cmdline : p->hdr.exe, ESC_TEXT);
			printf(")\n");
		}
	}
	free(v);
}

static void merged_release(struct merged *m)
{
	struct msite *ms, *tmp;

	HASH_ITER(hh, m->sites, ms, tmp) {
		HASH_DEL(m->sites, ms);
		free(ms->key);
		free(ms->head);
		free(ms->frames);
		free(ms->shares);
		free(ms);
	}
	free(m->procs);
}

/* Read every trace of paths into m; the exit status (1: none readable). */
static int read_all(struct merged *m, char **paths, size_t n, int want_sites)
{
	size_t i, bad = 0;

	m->procs = xcalloc(n + 1, sizeof(*m->procs));
	m->n_procs = n;
	for (i = 0; i < n; i++) {
		m->procs[i].path = paths[i];
		proc_read(m, &m->procs[i], want_sites);
		bad += m->procs[i].bad;
	}
	return bad == n ? EXIT_FAIL : EXIT_OK;
}

int multi_leaks(const struct report_args *a, int per_process)
{
	struct merged m = { .mode = a->o.mode, .cat_flags = a->o.cat_flags,
			    .per_process = per_process };
	char **paths;
	size_t n;
	int ret;

	if (multi_expand(a->traces, a->cl.n_operands, &paths, &n) < 0)
		return EXIT_FAIL;
	ret = read_all(&m, paths, n, 1);
	print_merged(&m, n);
	merged_release(&m);
	paths_free(paths, n);
	return ret;
}

/* ---- the process tree ---- */

/* Print p (and, below it, its children and later exec images) at depth. */
static void tree_print(const struct merged *m, size_t i, int depth, char *done)
{
	const struct proc *p = &m->procs[i];
	char b1[HUMAN_LEN], b2[HUMAN_LEN];
	size_t j;

	done[i] = 1;
	printf("%*s%d ", 2 * depth + 2, "", (int)p->hdr.pid);
	put_text(stdout, p->hdr.cmdline[0] ? p->hdr.cmdline : p->hdr.exe, ESC_TEXT);
	if (p->bad) {
		printf(": unreadable\n");
		return;
	}
	printf(": %s, peak %s", p->ending, human_bytes(b1, sizeof(b1), p->peak));
	if (p->hdr.state != MP_STATE_EXEC)
		printf(", live at the end %s of its own", human_bytes(b2, sizeof(b2), p->own_bytes));
	if (p->inherit_state == INHERIT_FOUND)
		printf(" (+%s inherited)", human_bytes(b1, sizeof(b1), p->inh_bytes));
	else if (p->inherit_state == INHERIT_UNKNOWN)
		printf(" (inherited blocks unknown)");
	printf("\n");
	/* the image that continues it after exec: same pid, started later */
	for (j = 0; j < m->n_procs; j++)
		if (!done[j] && p->hdr.state == MP_STATE_EXEC && m->procs[j].hdr.pid == p->hdr.pid &&
		    m->procs[j].hdr.start_mono_ns >= p->hdr.start_mono_ns) {
			printf("%*s-> exec\n", 2 * depth + 2, "");
			tree_print(m, j, depth, done);
			break;
		}
	for (j = 0; j < m->n_procs; j++)
		if (!done[j] && m->procs[j].hdr.ppid == p->hdr.pid && m->procs[j].hdr.pid != p->hdr.pid &&
		    m->procs[j].hdr.start_mono_ns >= p->hdr.start_mono_ns)
			tree_print(m, j, depth + 1, done);
}

int multi_stats(const struct report_args *a)
{
	struct merged m = { .mode = SITE_DEFAULT };
	char **paths, *done;
	size_t n, i, j;
	int ret;

	if (multi_expand(a->traces, a->cl.n_operands, &paths, &n) < 0)
		return EXIT_FAIL;
	ret = read_all(&m, paths, n, 1);
	done = xcalloc(n + 1, 1);
	printf("process tree: %zu trace%s, %zu process%s\n", n, n == 1 ? "" : "s",
	       count_processes(&m), count_processes(&m) == 1 ? "" : "es");
	/* roots: no parent among the traces, and not an exec image of an earlier one */
	for (i = 0; i < n; i++) {
		int root = 1;

		for (j = 0; j < n && root; j++)
			if (j != i && (m.procs[j].hdr.pid == m.procs[i].hdr.ppid ||
				       (m.procs[j].hdr.pid == m.procs[i].hdr.pid &&
					m.procs[j].hdr.start_mono_ns < m.procs[i].hdr.start_mono_ns)))
				root = 0;
		if (root && !done[i])
			tree_print(&m, i, 0, done);
	}
	for (i = 0; i < n; i++)
		if (!done[i])
			tree_print(&m, i, 0, done);
	free(done);
	merged_release(&m);
	paths_free(paths, n);
	return ret;
}
