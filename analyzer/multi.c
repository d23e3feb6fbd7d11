/*
 * multi.c - reports over many processes. The map step: worker processes
 * (--jobs, one per CPU by default) each read one trace at a time and
 * write its summary, as `leaks --json TRACE` (or `growth --json`) would,
 * to a temporary file; the reduce step (merge.c) reads them back in the
 * order of the traces. Memory: each worker's grows with one process's
 * live set; the reduce's with the merged sites, not with the number of
 * traces. Each process is judged as the one-trace report judges it; its
 * inherited blocks (a forked child's) are its parent's and counted there;
 * images replaced by exec are not counted: their memory went with the
 * exec. Workers are processes, not threads: the symbolizer's caches and
 * libdw's handles are not shared between threads here, and a trace that
 * crashes the analyzer loses its worker's summaries, not the report.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* A regular file of 0 bytes: a trace created by a process that ended
 * before memprov wrote its header. */
static int file_empty(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !st.st_size;
}

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
		errno = 0;
		if (trace_peek(p, &h)) {
			size_t len = strlen(de->d_name);

			/* other files (the index, summaries) are not traces; one named so is said */
			if (len > 6 && !strcmp(de->d_name + len - 6, ".trace"))
				warning("'%s' is not a readable memprov trace (%s): left out", p,
					errno ? strerror(errno) :
					file_empty(p) ? "empty: the process ended before memprov "
							      "wrote its header" :
					"no memprov trace header");
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
	int k, failed = 0;

	for (k = 0; k < n; k++) {
		struct mp_file_header h;
		struct stat st;

		if (!stat(operands[k], &st) && S_ISDIR(st.st_mode)) {
			if (add_dir(operands[k], &v, &nv, &alloc) < 0)
				failed++;
			continue;
		}
		if (trace_peek(operands[k], &h)) {
			error("cannot read '%s' as a memprov trace: %s", operands[k],
			      errno ? strerror(errno) : "not a trace");
			failed++;
			continue;
		}
		ALLOC_GROW(v, nv, alloc);
		v[nv++] = (struct tpath){ .path = xstrdup(operands[k]), .pid = h.pid,
					  .start = h.start_mono_ns };
	}
	if (!nv) {
		free(v);
		return -1;
	}
	sort_array(v, nv, sizeof(*v), tpath_cmp);
	*paths = xcalloc(nv + 1, sizeof(**paths));
	for (i = 0; i < nv; i++)
		(*paths)[i] = v[i].path;
	*np = nv;
	free(v);
	return failed;
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
		pr->at_main_end = replay_snapshot_main_end(r);
	}
	return 0;
}

struct merged {
	struct proc *procs;
	size_t n_procs;
};

/* Replay one trace for the tree: its peak, its ending, what it held of its own. */
static void proc_read(struct proc *p)
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
	cat_init(&cat, &r, sym, NULL, CAT_END_VERDICT);
	cat_split(&cat, &live, NULL);
	if (t.hdr.state != MP_STATE_EXEC) {
		sites = sites_build(&r, sym, live, SITE_DEFAULT, &n);
		for (i = 0; i < n; i++) {
			p->own_blocks += sites[i].blocks;
			p->own_bytes += sites[i].bytes;
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

/* Processes: traces of images not replaced by exec, readable. */
static size_t count_processes(const struct merged *m)
{
	size_t i, n = 0;

	for (i = 0; i < m->n_procs; i++)
		n += !m->procs[i].bad && m->procs[i].hdr.state != MP_STATE_EXEC;
	return n;
}

/* ---- the map step: one summary per trace, from worker processes ---- */

/*
 * A worker writes, for each trace it reads, the summary (one JSON line,
 * or nothing when the trace could not be read) and then "@ STATUS".
 * Read trace i's record from f into *json (NULL: none); its status.
 */
static int read_record(FILE *f, char **line, size_t *cap, char **json, int *status)
{
	ssize_t len;

	free(*json);
	*json = NULL;
	while ((len = getline(line, cap, f)) >= 0) {
		if ((*line)[0] == '@') {
			*status = atoi(*line + 1);
			return 0;
		}
		free(*json);
		*json = xstrdup(*line);
	}
	return -1;
}

/* Worker k of jobs: the summaries of traces k, k + jobs, ... on out. */
static void worker(const struct report_args *a, char **paths, size_t n, size_t k, size_t jobs,
		   multi_one_fn one, FILE *out)
{
	struct report_args summary = *a;
	size_t i;

	/* each trace's report as its JSON summary, without a progress line */
	summary.flags |= REPORT_JSON;
	summary.o.flags &= ~(unsigned)GROWTH_PROGRESS;
	if (dup2(fileno(out), STDOUT_FILENO) < 0)
		_exit(EXIT_FAIL);
	for (i = k; i < n; i += jobs) {
		int st = one(&summary, paths[i]);

		fflush(stdout);
		printf("@ %d\n", st);
		fflush(stdout);
	}
	_exit(ferror(stdout) ? EXIT_FAIL : EXIT_OK);
}

static size_t jobs_for(const struct report_args *a, size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t jobs = a->jobs ? (size_t)a->jobs : cpus > 0 ? (size_t)cpus : 1;

	return jobs < n ? jobs : n;
}

int multi_map(const struct report_args *a, multi_one_fn one, struct merge *m, size_t *n_traces)
{
	char **paths, *line = NULL, *json = NULL;
	size_t n, jobs, k, i, cap = 0, bad = 0;
	FILE **out;
	pid_t *pids;
	int ret = EXIT_OK, failed = multi_expand(a->traces, a->cl.n_operands, &paths, &n);

	if (failed < 0)
		return -1;
	if (failed)
		ret = EXIT_FAIL;
	*n_traces = n;
	jobs = jobs_for(a, n);
	out = xcalloc(jobs, sizeof(*out));
	pids = xcalloc(jobs, sizeof(*pids));
	fflush(NULL);
	for (k = 0; k < jobs; k++) {
		if (!(out[k] = tmpfile()))
			die(error_exit_status(), "cannot make a temporary file for a worker: %s", strerror(errno));
		pids[k] = fork();
		if (pids[k] < 0)
			die(error_exit_status(), "cannot start a worker: %s", strerror(errno));
		if (!pids[k])
			worker(a, paths, n, k, jobs, one, out[k]);
	}
	for (k = 0; k < jobs; k++) {
		int st;

		while (waitpid(pids[k], &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			error("a worker reading traces %s, ... ended %s %d: its traces from there on are missing",
			      paths[k], WIFSIGNALED(st) ? "by signal" : "with status",
			      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		rewind(out[k]);
	}
	/* reduce in the order of the traces, so that the report does not depend on jobs */
	for (i = 0; i < n; i++) {
		int st = EXIT_FAIL;

		if (read_record(out[i % jobs], &line, &cap, &json, &st) < 0) {
			error("'%s': no summary (its worker died)", paths[i]);
			bad++;
			ret = EXIT_FAIL;
			continue;
		}
		if (st != EXIT_OK)
			ret = st;
		if (!json) {
			bad++;
			continue;
		}
		{
			struct jval doc;
			char err[256];

			if (json_parse(json, strlen(json), &doc, err, sizeof(err)) < 0) {
				error("'%s': its summary is not JSON: %s", paths[i], err);
				ret = EXIT_FAIL;
				continue;
			}
			if (merge_add(m, &doc, paths[i]) < 0)
				ret = EXIT_FAIL;
			json_free(&doc);
		}
	}
	free(line);
	free(json);
	for (k = 0; k < jobs; k++)
		fclose(out[k]);
	free(out);
	free(pids);
	paths_free(paths, n);
	/* every trace failed: 2 when each was a usage error (an empty window), as for one */
	return bad == n && ret != EXIT_USAGE ? EXIT_FAIL : ret;
}

int multi_report(const struct report_args *a, multi_one_fn one)
{
	struct merge m = { .per_process = (a->flags & (REPORT_PER_PROCESS | REPORT_JSON)) ==
					  REPORT_PER_PROCESS ? stdout : NULL };
	size_t n = 0;
	int ret;

	if (a->flags & REPORT_FOLDED)
		return usage_error(a->cmd, "--folded takes one trace");
	ret = multi_map(a, one, &m, &n);
	if (ret < 0)
		return EXIT_FAIL; /* no trace to report on: the error said why */
	if (a->flags & REPORT_JSON)
		merge_print_json(&m, stdout, n);
	else
		merge_print(&m, stdout, n);
	merge_release(&m);
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
	struct merged m = { NULL, 0 };
	char **paths, *done;
	size_t n, i, j;
	int ret, failed = multi_expand(a->traces, a->cl.n_operands, &paths, &n);

	if (failed < 0)
		return EXIT_FAIL;
	m.procs = xcalloc(n + 1, sizeof(*m.procs));
	m.n_procs = n;
	ret = EXIT_FAIL;
	for (i = 0; i < n; i++) {
		m.procs[i].path = paths[i];
		proc_read(&m.procs[i]);
		if (!m.procs[i].bad)
			ret = EXIT_OK;
	}
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
	free(m.procs);
	paths_free(paths, n);
	return failed ? EXIT_FAIL : ret;
}
