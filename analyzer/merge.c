/*
 * merge.c - per-process summaries reduced to one report (merge.h). A
 * summary is read for what the merged report shows, nothing else: the
 * process (pid, parent, host, command, how it ended) and its own sites
 * (key, kind, API, frames as text, figures). Memory grows with the merged
 * sites and one line per process, not with the summaries' size.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "report.h"
#include "report_reach.h"
#include "util.h"

struct merge_site {
	UT_hash_handle hh;
	char *key, *kind, *api, *text;
	uint64_t blocks, bytes;
	uint64_t cls[MP_REACH_CLASS_COUNT][2];
	int64_t growth;
	struct merge_share *shares;
	size_t n_shares, alloc_shares;
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* Equal strings, NULL equal to NULL and to "" (a member an older writer left out) */
static int same_text(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static int missing(const char *where, const char *what)
{
	return error("'%s': not a memprov summary: %s", where, what);
}

/* The kind of summary doc is, from its "schema" member. */
static enum merge_kind summary_kind(const struct jval *doc)
{
	const char *schema = json_get_str(doc, "schema");

	if (!schema)
		return MERGE_NONE;
	if (!strcmp(schema, "memprov.leaks/1"))
		return MERGE_LEAKS;
	if (!strcmp(schema, "memprov.growth/1"))
		return MERGE_GROWTH;
	if (!strcmp(schema, "memprov.peak/1"))
		return MERGE_PEAK;
	return MERGE_NONE;
}

static const char *kind_word(enum merge_kind k)
{
	return k == MERGE_GROWTH ? "growth" : k == MERGE_PEAK ? "peak" : "leaks";
}

static int64_t get_i64(const struct jval *o, const char *key)
{
	const struct jval *v = json_get(o, key);

	return v && v->type == J_NUM && v->exact ? v->i : 0;
}

static double get_num(const struct jval *o, const char *key)
{
	const struct jval *v = json_get(o, key);

	return v && v->type == J_NUM ? v->num : 0;
}

/* Lost at exit (definitely and indirectly), as the gate counts it: bytes. */
static uint64_t lost_bytes(const uint64_t cls[MP_REACH_CLASS_COUNT][2])
{
	return cls[MP_REACH_DEFINITE][1] + cls[MP_REACH_INDIRECT][1];
}

/* Did a scan at exit classify any of these blocks (a native process's)? */
static int classified(const uint64_t cls[MP_REACH_CLASS_COUNT][2])
{
	for (unsigned c = 0; c < MP_REACH_CLASS_COUNT; c++)
		if (c != MP_REACH_UNKNOWN && cls[c][0])
			return 1;
	return 0;
}

/* One site of a summary: into the table, and its share for process proc. */
static int add_site(struct merge *m, const struct jval *s, size_t proc, const char *where)
{
	const char *key = json_get_str(s, "key"), *text = json_get_str(s, "text");
	const char *kind = json_get_str(s, "kind"), *api = json_get_str(s, "api");
	struct merge_share sh = { .proc = proc };
	struct merge_site *ms;

	if (!key || !text || !kind || !api)
		return error("'%s': a site without \"key\", \"text\", \"kind\" or \"api\" "
			     "(a summary of an older memprov? write it again with this one)", where);
	if (m->kind != MERGE_GROWTH) {
		if (json_get_u64(s, "blocks", &sh.blocks) || json_get_u64(s, "bytes", &sh.bytes))
			return missing(where, "a site without \"blocks\" and \"bytes\"");
	} else {
		if (json_get_u64(s, "end_blocks", &sh.blocks) || json_get_u64(s, "end_bytes", &sh.bytes) ||
		    !json_get(s, "growth_bytes"))
			return missing(where, "a site without \"growth_bytes\", \"end_blocks\" and \"end_bytes\"");
		sh.growth = get_i64(s, "growth_bytes");
		sh.slope = get_num(s, "slope_bytes");
		sh.confidence = get_num(s, "confidence");
	}
	if (m->kind == MERGE_LEAKS) /* the site's blocks by the scan's class, where it ran */
		for (unsigned c = 0; c < MP_REACH_CLASS_COUNT; c++) {
			const struct jval *o = json_get(json_get(s, "reach"), reach_class_name(c));

			if (json_get_u64(o, "blocks", &sh.cls[c][0]) || json_get_u64(o, "bytes", &sh.cls[c][1]))
				sh.cls[c][0] = sh.cls[c][1] = 0;
		}
	HASH_FIND_STR(m->sites, key, ms);
	if (!ms) {
		ms = xcalloc(1, sizeof(*ms));
		ms->key = xstrdup(key);
		ms->kind = xstrdup(kind);
		ms->api = xstrdup(api);
		ms->text = xstrdup(text);
		HASH_ADD_KEYPTR(hh, m->sites, ms->key, strlen(ms->key), ms);
	}
	ms->blocks += sh.blocks;
	ms->bytes += sh.bytes;
	ms->growth += sh.growth;
	for (unsigned c = 0; c < MP_REACH_CLASS_COUNT; c++)
		for (unsigned k = 0; k < 2; k++) {
			ms->cls[c][k] += sh.cls[c][k];
			m->procs[proc].cls[c][k] += sh.cls[c][k];
		}
	ALLOC_GROW(ms->shares, ms->n_shares, ms->alloc_shares);
	ms->shares[ms->n_shares++] = sh;
	m->procs[proc].blocks += sh.blocks;
	m->procs[proc].bytes += sh.bytes;
	m->procs[proc].growth += sh.growth;
	m->procs[proc].n_sites++;
	return 0;
}

/* Its own sites of process p, numbered as `leaks` and `growth` number them. */
static void per_process_site(FILE *f, const struct jval *s, size_t no, enum merge_kind kind)
{
	char b1[HUMAN_LEN], c[HUMAN_LEN];
	uint64_t blocks = 0, bytes = 0;

	if (kind != MERGE_GROWTH) {
		json_get_u64(s, "blocks", &blocks);
		json_get_u64(s, "bytes", &bytes);
		fprintf(f, "  #%zu %s %s: %s block%s, %s\n", no, json_get_str(s, "kind"),
			json_get_str(s, "api"), fmt_count(c, sizeof(c), blocks), blocks == 1 ? "" : "s",
			bytes_exact(b1, sizeof(b1), bytes));
	} else {
		fprintf(f, "  #%zu %s %s: %s over the window\n", no, json_get_str(s, "kind"),
			json_get_str(s, "api"), bytes_delta(b1, sizeof(b1), get_i64(s, "growth_bytes")));
	}
	fputs(json_get_str(s, "text"), f);
}

int merge_add(struct merge *m, const struct jval *doc, const char *where)
{
	enum merge_kind kind = summary_kind(doc);
	const struct jval *sites, *v;
	struct merge_proc *p;
	uint64_t u;
	size_t i, proc;

	if (doc->type != J_OBJ || kind == MERGE_NONE)
		return missing(where, "no \"schema\" of memprov.leaks/1, memprov.growth/1 or "
			       "memprov.peak/1 (write it with `memprov leaks --json TRACE`, or growth, or peak)");
	if (m->kind != MERGE_NONE && m->kind != kind)
		return error("'%s': a %s summary among %s summaries: merge one kind at a time", where,
			     kind_word(kind), kind_word(m->kind));
	m->kind = kind;
	sites = json_get(doc, kind == MERGE_GROWTH ? "suspects" : "sites");
	if (!sites || sites->type != J_ARR)
		return missing(where, kind == MERGE_GROWTH ? "no \"suspects\" array" : "no \"sites\" array");
	if (!(v = json_get(doc, "pid")) || v->type != J_NUM || !v->exact)
		return missing(where, "no \"pid\"");
	/* the same summary twice (merge a.json a.json, or a file of JSON
	 * Lines holding one beside it): counted once */
	for (i = 0; i < m->n_procs; i++)
		if (m->procs[i].pid == (int32_t)v->i &&
		    same_text(m->procs[i].trace, json_get_str(doc, "trace")) &&
		    same_text(m->procs[i].host, json_get_str(doc, "host"))) {
			warning("'%s': pid %d of %s again: counted once", where, (int)v->i,
				m->procs[i].trace ? m->procs[i].trace : "?");
			m->duplicates++;
			return 0;
		}
	ALLOC_GROW(m->procs, m->n_procs, m->alloc_procs);
	proc = m->n_procs++;
	p = &m->procs[proc];
	memset(p, 0, sizeof(*p));
	p->pid = (int32_t)v->i;
	p->ppid = (int32_t)get_i64(doc, "ppid");
	p->trace = dup_or_null(json_get_str(doc, "trace"));
	p->host = dup_or_null(json_get_str(doc, "host"));
	p->command = dup_or_null(json_get_str(doc, "command"));
	p->ending = dup_or_null(json_get_str(doc, "ending"));
	p->unit = dup_or_null(json_get_str(doc, "unit"));
	p->exec = json_get_str(doc, "state") && !strcmp(json_get_str(doc, "state"), "exec");
	if (!json_get_u64(json_get(json_get(doc, "inherited"), "held"), "bytes", &u))
		p->inherited = u;
	if (!json_get_u64(json_get(doc, "peak"), "bytes", &u))
		p->peak = u;
	if (p->exec)
		return 0; /* its memory went with the exec: the next image's trace goes on */
	for (i = 0; i < sites->n; i++) {
		const struct jval *s = &sites->items[i];
		const char *cat = json_get_str(s, "category");

		if (cat && strcmp(cat, "program"))
			continue; /* set apart: interpreter state, arenas, suppressed */
		if (add_site(m, s, proc, where) < 0)
			return -1;
	}
	if (m->per_process && p->n_sites) {
		size_t no = 0;

		fprintf(m->per_process, "\npid %d (%s), %s: %zu site%s of its own:\n", (int)p->pid,
			p->command ? p->command : "?", p->ending ? p->ending : "?", p->n_sites,
			p->n_sites == 1 ? "" : "s");
		for (i = 0; i < sites->n; i++) {
			const char *cat = json_get_str(&sites->items[i], "category");

			if (!cat || !strcmp(cat, "program"))
				per_process_site(m->per_process, &sites->items[i], ++no, m->kind);
		}
	}
	return 0;
}

/* ---- output ---- */

static const struct merge *sort_m; /* the merge being sorted (qsort has no argument) */

static int proc_cmp(const struct merge_proc *x, const struct merge_proc *y)
{
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if ((c = strcmp(x->host ? x->host : "", y->host ? y->host : "")))
		return c;
	return strcmp(x->trace ? x->trace : "", y->trace ? y->trace : "");
}

static int share_cmp(const void *a, const void *b)
{
	const struct merge_share *x = a, *y = b;

	if (sort_m->kind == MERGE_GROWTH && x->growth != y->growth)
		return x->growth > y->growth ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return proc_cmp(&sort_m->procs[x->proc], &sort_m->procs[y->proc]);
}

static int site_cmp(const void *a, const void *b)
{
	const struct merge_site *x = *(const struct merge_site *const *)a;
	const struct merge_site *y = *(const struct merge_site *const *)b;

	if (sort_m->kind == MERGE_GROWTH && x->growth != y->growth)
		return x->growth > y->growth ? -1 : 1;
	/* leaks: what is lost at exit first, as `leaks` of one trace and the gate put it */
	if (sort_m->kind == MERGE_LEAKS && lost_bytes(x->cls) != lost_bytes(y->cls))
		return lost_bytes(x->cls) > lost_bytes(y->cls) ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* The sites, worst first, each one's shares worst first: an array of them. */
static struct merge_site **sorted_sites(struct merge *m, size_t *n)
{
	struct merge_site **v, *ms, *tmp;
	size_t i = 0;

	*n = HASH_COUNT(m->sites);
	v = xcalloc(*n + 1, sizeof(*v));
	HASH_ITER(hh, m->sites, ms, tmp)
		v[i++] = ms;
	sort_m = m;
	sort_array(v, *n, sizeof(*v), site_cmp);
	for (i = 0; i < *n; i++)
		sort_array(v[i]->shares, v[i]->n_shares, sizeof(*v[i]->shares), share_cmp);
	sort_m = NULL;
	return v;
}

struct totals {
	size_t procs, holding, lost_procs;
	uint64_t blocks, bytes;
	uint64_t cls[MP_REACH_CLASS_COUNT][2];
	int64_t growth;
	int hosts;    /* more than one host named */
};

static void count(const struct merge *m, struct totals *t)
{
	const char *host = NULL;
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < m->n_procs; i++) {
		const struct merge_proc *p = &m->procs[i];

		if (p->host && host && strcmp(p->host, host))
			t->hosts = 1;
		if (p->host)
			host = p->host;
		if (p->exec)
			continue;
		t->procs++;
		t->holding += p->n_sites > 0;
		t->blocks += p->blocks;
		t->bytes += p->bytes;
		t->growth += p->growth;
		t->lost_procs += lost_bytes(p->cls) > 0;
		for (unsigned c = 0; c < MP_REACH_CLASS_COUNT; c++)
			for (unsigned k = 0; k < 2; k++)
				t->cls[c][k] += p->cls[c][k];
	}
}

static const char *s_es(size_t n)
{
	return n == 1 ? "" : "es";
}

void merge_print(struct merge *m, FILE *f, size_t n_traces)
{
	char b1[HUMAN_LEN], b2[HUMAN_LEN], c1[HUMAN_LEN];
	struct merge_site **v;
	struct totals t;
	size_t n, i, j;

	count(m, &t);
	v = sorted_sites(m, &n);
	/* a blank line after the reports of --per-process, none at the top */
	fprintf(f, "%s%zu trace%s, %zu process%s (images replaced by exec not counted)\n",
		m->per_process ? "\n" : "", n_traces, n_traces == 1 ? "" : "s", t.procs,
		s_es(t.procs));
	if (m->kind == MERGE_GROWTH) {
		fprintf(f, "growing sites, each process's window as `memprov growth` chooses it: "
			"%s over the windows, in %zu process%s of %zu\n",
			bytes_delta(b1, sizeof(b1), t.growth), t.holding, s_es(t.holding), t.procs);
		if (!n)
			fprintf(f, "no growing site\n");
		else
			fprintf(f, "%zu growing site%s, merged across processes, biggest growth first:\n",
				n, n == 1 ? "" : "s");
	} else if (m->kind == MERGE_PEAK) {
		fprintf(f, "live at each process's peak, the programs' own (a forked child's inherited blocks "
			"included): %s in %s block%s, in %zu process%s of %zu\n",
			bytes_exact(b1, sizeof(b1), t.bytes), fmt_count(c1, sizeof(c1), t.blocks),
			t.blocks == 1 ? "" : "s", t.holding, s_es(t.holding), t.procs);
		if (!n)
			fprintf(f, "no site of the programs' own at the peaks\n");
		else
			fprintf(f, "%zu site%s of the programs' own at the peaks, merged across processes:\n",
				n, n == 1 ? "" : "s");
	} else {
		fprintf(f, "live at the end of each process, its own (inherited blocks are counted in the parent): "
			"%s in %s block%s, in %zu process%s of %zu\n", bytes_exact(b1, sizeof(b1), t.bytes),
			fmt_count(c1, sizeof(c1), t.blocks), t.blocks == 1 ? "" : "s", t.holding,
			s_es(t.holding), t.procs);
		if (classified(t.cls)) {
			/* native processes: what their scan at exit found, as `check` gates it */
			fprintf(f, "lost at exit (definitely and indirectly, where a scan at exit classified "
				"blocks): %s in %s block%s, in %zu process%s; by class:",
				bytes_exact(b1, sizeof(b1), lost_bytes(t.cls)),
				fmt_count(c1, sizeof(c1), t.cls[MP_REACH_DEFINITE][0] + t.cls[MP_REACH_INDIRECT][0]),
				t.cls[MP_REACH_DEFINITE][0] + t.cls[MP_REACH_INDIRECT][0] == 1 ? "" : "s",
				t.lost_procs, s_es(t.lost_procs));
			for (unsigned i = 0, c; i < MP_REACH_CLASS_COUNT; i++)
				if ((c = reach_class_at(i)) != MP_REACH_UNKNOWN)
					fprintf(f, "%s %s %s", i ? "," : "", reach_class_text(c),
						bytes_exact(b2, sizeof(b2), t.cls[c][1]));
			fputc('\n', f);
		}
		if (!n)
			fprintf(f, "no site of the programs' own\n");
		else
			fprintf(f, "%zu site%s of the programs' own, merged across processes%s:\n", n,
				n == 1 ? "" : "s", classified(t.cls) ? ", lost at exit first" : "");
	}
	for (i = 0; i < n; i++) {
		const struct merge_site *ms = v[i];

		if (m->kind == MERGE_GROWTH)
			fprintf(f, "  #%zu %s %s: %zu process%s of %zu, %s over their windows, %s at their ends\n",
				i + 1, ms->kind, ms->api, ms->n_shares, s_es(ms->n_shares), t.procs,
				bytes_delta(b1, sizeof(b1), ms->growth), bytes_exact(b2, sizeof(b2), ms->bytes));
		else {
			fprintf(f, "  #%zu %s %s: %zu process%s of %zu, %s block%s, %s", i + 1, ms->kind,
				ms->api, ms->n_shares, s_es(ms->n_shares), t.procs,
				fmt_count(c1, sizeof(c1), ms->blocks), ms->blocks == 1 ? "" : "s",
				bytes_exact(b1, sizeof(b1), ms->bytes));
			if (m->kind == MERGE_LEAKS && classified(ms->cls)) {
				fputs(": ", f);
				reach_site_text(f, (const uint64_t (*)[2])ms->cls);
			}
			fputc('\n', f);
		}
		fputs(ms->text, f);
		for (j = 0; j < ms->n_shares; j++) {
			const struct merge_share *sh = &ms->shares[j];
			const struct merge_proc *p = &m->procs[sh->proc];

			fprintf(f, "      pid %d", (int)p->pid);
			if (t.hosts)
				fprintf(f, " on %s", p->host ? p->host : "?");
			if (m->kind == MERGE_GROWTH)
				fprintf(f, ": %s, %s per %s, confidence %.2f (",
					bytes_delta(b1, sizeof(b1), sh->growth),
					bytes_rate(b2, sizeof(b2), sh->slope), p->unit ? p->unit : "step",
					sh->confidence);
			else
				fprintf(f, ": %s block%s, %s (", fmt_count(c1, sizeof(c1), sh->blocks),
					sh->blocks == 1 ? "" : "s", bytes_exact(b1, sizeof(b1), sh->bytes));
			put_text(f, p->command ? p->command : "?", ESC_TEXT);
			fprintf(f, ")\n");
		}
	}
	free(v);
}

/* ,"reach":{"definitely_lost":{"blocks":B,"bytes":N},...}: by the scans' classes */
static void reach_member(FILE *f, const uint64_t cls[MP_REACH_CLASS_COUNT][2])
{
	fputs(",\"reach\":", f);
	reach_json_counts(f, (const uint64_t (*)[2])cls);
}

void merge_print_json(struct merge *m, FILE *f, size_t n_traces)
{
	struct merge_site **v;
	struct totals t;
	size_t n, i, j;

	count(m, &t);
	v = sorted_sites(m, &n);
	report_json_open(f, "merge");
	fprintf(f, "\"of\":\"%s\",\"traces\":%zu,\"processes\":%zu,\"holding\":%zu,"
		"\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64, kind_word(m->kind), n_traces, t.procs,
		t.holding, t.blocks, t.bytes);
	if (m->kind == MERGE_GROWTH)
		fprintf(f, ",\"growth_bytes\":%" PRId64, t.growth);
	if (m->kind == MERGE_LEAKS)
		reach_member(f, t.cls);
	fprintf(f, ",\"process_list\":[");
	for (i = 0; i < m->n_procs; i++) {
		const struct merge_proc *p = &m->procs[i];

		fprintf(f, "%s{\"trace\":", i ? "," : "");
		json_str(f, p->trace);
		fprintf(f, ",\"pid\":%d,\"ppid\":%d,\"host\":", (int)p->pid, (int)p->ppid);
		json_str(f, p->host);
		fprintf(f, ",\"command\":");
		json_str(f, p->command);
		fprintf(f, ",\"ending\":");
		json_str(f, p->ending);
		fprintf(f, ",\"exec\":%s,\"sites\":%zu,\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64,
			p->exec ? "true" : "false", p->n_sites, p->blocks, p->bytes);
		if (m->kind == MERGE_GROWTH)
			fprintf(f, ",\"growth_bytes\":%" PRId64, p->growth);
		else if (m->kind == MERGE_PEAK)
			fprintf(f, ",\"peak_bytes\":%" PRIu64, p->peak);
		else
			fprintf(f, ",\"inherited_bytes\":%" PRIu64, p->inherited);
		if (m->kind == MERGE_LEAKS)
			reach_member(f, p->cls);
		fputc('}', f);
	}
	fprintf(f, "],\"sites\":[");
	for (i = 0; i < n; i++) {
		const struct merge_site *ms = v[i];

		fprintf(f, "%s{\"key\":", i ? "," : "");
		json_str(f, ms->key);
		fprintf(f, ",\"kind\":");
		json_str(f, ms->kind);
		fprintf(f, ",\"api\":");
		json_str(f, ms->api);
		fprintf(f, ",\"text\":");
		json_str(f, ms->text);
		fprintf(f, ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64, ms->blocks, ms->bytes);
		if (m->kind == MERGE_GROWTH)
			fprintf(f, ",\"growth_bytes\":%" PRId64, ms->growth);
		if (m->kind == MERGE_LEAKS)
			reach_member(f, ms->cls);
		fprintf(f, ",\"processes\":[");
		for (j = 0; j < ms->n_shares; j++) {
			const struct merge_share *sh = &ms->shares[j];
			const struct merge_proc *p = &m->procs[sh->proc];

			fprintf(f, "%s{\"pid\":%d,\"host\":", j ? "," : "", (int)p->pid);
			json_str(f, p->host);
			fprintf(f, ",\"trace\":");
			json_str(f, p->trace);
			fprintf(f, ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64, sh->blocks, sh->bytes);
			if (m->kind == MERGE_GROWTH) {
				fprintf(f, ",\"growth_bytes\":%" PRId64 ",\"slope_bytes\":%.6g,\"unit\":",
					sh->growth, sh->slope);
				json_str(f, p->unit);
				fprintf(f, ",\"confidence\":%.4f", sh->confidence);
			}
			fputc('}', f);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
	free(v);
}

void merge_release(struct merge *m)
{
	struct merge_site *ms, *tmp;
	size_t i;

	HASH_ITER(hh, m->sites, ms, tmp) {
		HASH_DEL(m->sites, ms);
		free(ms->key);
		free(ms->kind);
		free(ms->api);
		free(ms->text);
		free(ms->shares);
		free(ms);
	}
	for (i = 0; i < m->n_procs; i++) {
		free(m->procs[i].trace);
		free(m->procs[i].host);
		free(m->procs[i].command);
		free(m->procs[i].ending);
		free(m->procs[i].unit);
	}
	free(m->procs);
	memset(m, 0, sizeof(*m));
}

/* ---- reading summaries ---- */

/* Add one line's (or the whole text's) summary; where: "FILE" or "FILE, line N". */
static int add_text(struct merge *m, const char *text, size_t len, size_t *count, const char *where)
{
	struct jval doc;
	char err[256];
	int ret;

	if (json_parse(text, len, &doc, err, sizeof(err)) < 0)
		return error("'%s': not JSON: %s", where, err);
	ret = merge_add(m, &doc, where);
	(*count)++;
	json_free(&doc);
	return ret;
}

int merge_read_file(struct merge *m, const char *path, size_t *count)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, where[PATH_MAX + 32];
	size_t cap = 0, lineno = 0, added = 0;
	ssize_t len;
	int ret = 0;

	if (!f)
		return error("cannot open '%s': %s", path, strerror(errno));
	/* one summary per line (JSON Lines), the form --json writes; else the whole file */
	while ((len = getline(&line, &cap, f)) >= 0) {
		size_t k = (size_t)len;

		lineno++;
		while (k && (line[k - 1] == '\n' || line[k - 1] == '\r' || line[k - 1] == ' '))
			k--;
		if (!k)
			continue;
		if (line[0] != '{' || line[k - 1] != '}')
			break; /* not one object per line: read the file whole */
		snprintf(where, sizeof(where), "%s, line %zu", path, lineno);
		if ((ret = add_text(m, line, k, count, where)) < 0)
			break;
		added++;
	}
	if (!ret && (len >= 0 || !added)) {
		char *all = NULL;
		size_t n = 0, cap2 = 0, r;

		if (added)
			ret = error("'%s', line %zu: not a summary on a line of its own", path, lineno);
		else {
			rewind(f);
			do {
				if (n + 65536 > cap2)
					all = xrealloc(all, cap2 = 2 * cap2 + 65536);
				r = fread(all + n, 1, cap2 - n, f);
				n += r;
			} while (r);
			if (ferror(f))
				ret = error("cannot read '%s': %s", path, strerror(errno));
			else if (!n)
				ret = error("'%s': empty: not a memprov summary", path);
			else
				ret = add_text(m, all, n, count, path);
			free(all);
		}
	}
	free(line);
	fclose(f);
	return ret;
}
