/*
 * gate.c - `memprov check`: the CI leak gate. For each trace, memory
 * still live when the process ended (after suppressions) is held to
 * --max-leak, and with --max-growth, the slope of every growing site
 * across marks (or seconds) to that budget. Exit 0 within budget, 1 over
 * it, 2 when a trace or suppression file cannot be read. What it writes
 * (text, JSON, annotations, JUnit) is in gate_report.c. See README "CI
 * gate" for why the instant is process exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_fn.h"
#include "gate.h"
#include "gate_report.h"
#include "growth.h"
#include "report.h"
#include "sites.h"
#include "util.h"

/* ---- options ---- */

void gate_opts_init(struct gate_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->gate_status = GATE_RUN_STATUS;
}

void gate_opts_release(struct gate_opts *o)
{
	free(o->supp_files);
	memset(o, 0, sizeof(*o));
}

static int parse_kinds(struct gate_opts *o, const struct command *cmd, const char *arg)
{
	char *copy = xstrdup(arg), *tok, *save = NULL;
	unsigned k;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 1; k < MP_KIND_COUNT; k++)
			if (!strcmp(tok, kind_name(k)))
				break;
		if (k == MP_KIND_COUNT) {
			free(copy);
			return usage_error(cmd, "--kind wants heap, mmap, pinned, device, managed or registered, not '%s'",
					   arg);
		}
		o->kinds |= 1u << k;
	}
	free(copy);
	if (!o->kinds)
		return usage_error(cmd, "--kind wants a kind");
	return 0;
}

int gate_opts_set(struct gate_opts *o, const struct command *cmd, int opt, const char *arg)
{
	char *end;

	o->set = 1;
	switch (opt) {
	case GATE_OPT_MAX_LEAK:
		return report_parse_size(cmd, "--max-leak", arg, &o->max_leak);
	case GATE_OPT_MAX_GROWTH:
		o->flags |= GATE_GROWTH;
		return report_parse_size(cmd, "--max-growth", arg, &o->max_growth);
	case GATE_OPT_KIND:
		return parse_kinds(o, cmd, arg);
	case GATE_OPT_SUPPRESSIONS:
		o->supp_files = xrealloc(o->supp_files, (o->n_supp_files + 1) * sizeof(*o->supp_files));
		o->supp_files[o->n_supp_files++] = (char *)arg;
		return 0;
	case GATE_OPT_NO_DEFAULTS:
		o->flags |= GATE_NO_DEFAULTS;
		return 0;
	case GATE_OPT_SKIP:
		errno = 0;
		o->skip = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-')
			return usage_error(cmd, "--skip wants a number of marks, not '%s'", arg);
		return 0;
	case GATE_OPT_AFTER:
		o->after = arg;
		return 0;
	case GATE_OPT_JUNIT:
		o->junit = arg;
		return 0;
	case GATE_OPT_ANNOTATIONS:
		o->flags |= GATE_ANNOTATIONS;
		return 0;
	case GATE_OPT_JSON:
		o->flags |= GATE_JSON;
		return 0;
	case GATE_OPT_GATE_STATUS: {
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > 255)
			return usage_error(cmd, "--gate-status wants a status from 1 to 255, not '%s'", arg);
		o->gate_status = (int)v;
		return 0;
	}
	case GATE_OPT_CHILDREN:
		o->flags |= GATE_CHILDREN;
		return 0;
	case GATE_OPT_ALLOC_FN:
		if (alloc_fn_add(arg) < 0)
			return usage_error(cmd, "--alloc-fn wants a function name without parameters (1024 at most), not '%s'",
					   arg);
		return 0;
	}
	return usage_error(cmd, "unknown gate option");
}

/* ---- one trace ---- */

/* Which stacks a leak: rule hides, cached by stack id. */
struct stack_match {
	UT_hash_handle hh;
	uint64_t id;
	struct supp_rule *rule;
};

static struct supp_rule *match_cached(struct stack_match **cache, struct suppressions *supp,
				      const struct replay *r, struct symbolizer *sym, uint64_t stack,
				      unsigned kind, int small)
{
	struct stack_match *m;
	/* HOST and SMALL rules make kind and block size part of the answer */
	uint64_t id = (stack * 8 + kind) * 2 + !!small;

	HASH_FIND(hh, *cache, &id, sizeof(id), m);
	if (!m) {
		m = xcalloc(1, sizeof(*m));
		m->id = id;
		m->rule = supp_match_stack(supp, SUPP_LEAK, kind, small, r, sym, replay_find_stack(r, stack));
		HASH_ADD(hh, *cache, id, sizeof(m->id), m);
	}
	return m->rule;
}

static void add_offender(struct result *res, const struct site *s)
{
	if (res->n_off % 16 == 0)
		res->off = xrealloc(res->off, (res->n_off + 16) * sizeof(*res->off));
	memset(&res->off[res->n_off], 0, sizeof(res->off[0]));
	res->off[res->n_off++].s = *s;
}

/*
 * Live at the end: drop kinds not gated, move what a leak: rule hides
 * out (counting it on the rule), and hold the rest to the budget.
 */
static void check_leaks(const struct gate_opts *o, struct suppressions *supp, struct result *res,
			const struct replay *r, struct symbolizer *sym, struct site **sites, size_t *n_sites)
{
	struct replay_live *live = replay_snapshot(r), *kept = NULL, *l, *tmp;
	struct stack_match *cache = NULL, *m, *mtmp;
	uint64_t sum = 0;
	unsigned k;
	size_t i;

	HASH_ITER(hh, live, l, tmp) {
		struct supp_rule *rule;

		HASH_DEL(live, l);
		rule = gate_kind_gated(o, l->key.kind) ?
			       match_cached(&cache, supp, r, sym, l->key.stack, l->key.kind,
					    l->bytes <= l->blocks * SUPP_SMALL_BLOCK) : NULL;
		if (!gate_kind_gated(o, l->key.kind) || rule) {
			if (rule) {
				rule->bytes += l->bytes;
				rule->blocks += l->blocks;
				res->hidden[0] += l->blocks;
				res->hidden[1] += l->bytes;
			}
			free(l);
			continue;
		}
		res->live[l->key.kind][0] += l->blocks;
		res->live[l->key.kind][1] += l->bytes;
		HASH_ADD(hh, kept, key, sizeof(l->key), l);
	}
	HASH_ITER(hh, cache, m, mtmp) {
		HASH_DEL(cache, m);
		free(m);
	}
	for (k = 1; k < MP_KIND_COUNT; k++) {
		sum += res->live[k][1];
		if (o->kinds && (o->kinds & (1u << k)) && res->live[k][1] > o->max_leak) {
			res->leak_fail |= 1u << k;
			if (res->live[k][1] > res->leak_total)
				res->leak_total = res->live[k][1];
		}
	}
	if (!o->kinds) {
		res->leak_total = sum;
		if (sum > o->max_leak)
			res->leak_fail = 1;
	}
	*sites = sites_build(r, sym, kept, SITE_DEFAULT, n_sites);
	replay_live_free(&kept);
	if (!res->leak_fail)
		return;
	for (i = 0; i < *n_sites; i++)
		if (res->leak_fail == 1 || (res->leak_fail & (1u << (*sites)[i].kind)))
			add_offender(res, &(*sites)[i]);
}

/* Growing sites over budget, after --kind and growth: rules. */
static void check_growth(const struct gate_opts *o, struct suppressions *supp, struct result *res,
			 struct growth *g)
{
	size_t i;

	res->growth_checked = 1;
	res->unit = growth_unit(g);
	res->window = g->n_window;
	for (i = 0; i < g->n_sites; i++) {
		struct gsite *gs = &g->sites[i];
		struct supp_rule *rule;
		struct offender *off;

		if (!gs->st.suspect || !gate_kind_gated(o, gs->s.kind))
			continue;
		rule = supp_match_site(supp, SUPP_GROWTH, &gs->s);
		if (rule) {
			rule->sites++;
			continue;
		}
		if (gs->st.slope_bytes <= (double)o->max_growth)
			continue;
		add_offender(res, &gs->s);
		off = &res->off[res->n_off - 1];
		off->growth = 1;
		off->slope = gs->st.slope_bytes;
		off->growth_bytes = gs->st.growth_bytes;
		off->s.bytes = gs->st.end_bytes;
		off->s.blocks = gs->st.end_blocks;
		res->growth_fail++;
	}
}

static void reset_counts(struct suppressions *supp)
{
	size_t i;

	for (i = 0; i < supp->n; i++)
		supp->rules[i].bytes = supp->rules[i].blocks = supp->rules[i].sites = 0;
}

/* Collect and check the open trace t, then write its report. */
static void gate_trace(const struct gate_opts *o, struct suppressions *supp, struct trace *t,
		       struct result *res, struct gate_totals *tot)
{
	struct growth_opts go = { .flags = (o->flags & GATE_GROWTH) ? GROWTH_SERIES : 0,
				  .points = 20, .skip = o->skip, .after = o->after, .min_bytes = 1,
				  .mode = SITE_DEFAULT };
	struct symbolizer *sym;
	struct site *sites = NULL;
	struct growth g;
	size_t n_sites = 0;

	growth_collect(&g, t, &go);
	res->r = &g.r;
	res->at = t->hdr.state == MP_STATE_EXITED || g.r.have_exit ? "exit" : "end-of-trace";
	res->at_ns = trace_rel(t, replay_end_ts(&g.r));
	res->duration = (double)(g.end_ts - g.start_ts) / 1e9;
	if (o->flags & GATE_GROWTH) {
		growth_analyze(&g);
		sym = g.sym;
		check_growth(o, supp, res, &g);
	} else {
		sym = sym_new(&g.r, 1);
	}
	check_leaks(o, supp, res, &g.r, sym, &sites, &n_sites);
	res->status = res->leak_fail || res->growth_fail ? 1 : 0;
	tot->failures += res->status;
	tot->time += res->duration;
	gate_write(o, supp, res, tot);
	free(res->off);
	sites_free(sites, n_sites);
	if (!(o->flags & GATE_GROWTH))
		sym_free(sym);
	growth_release(&g);
}

/* Gate one trace; print its report; add it to the JUnit cases. */
static int gate_one(const struct gate_opts *o, struct suppressions *supp, const char *path,
		    struct gate_totals *tot)
{
	struct result res;
	struct trace t;

	memset(&res, 0, sizeof(res));
	res.path = path;
	reset_counts(supp);
	tot->tests++;
	if (trace_open(&t, path, 0) < 0) {
		res.status = 2;
		tot->errors++;
		gate_write(o, supp, &res, tot);
		return res.status;
	}
	res.t = &t;
	if (t.hdr.state == MP_STATE_EXEC) {
		res.skipped = 1;
		tot->skipped++;
		gate_write(o, supp, &res, tot);
	} else {
		gate_trace(o, supp, &t, &res, tot);
	}
	trace_close(&t);
	return res.status;
}

int gate_check(const struct gate_opts *o, char **paths, size_t n)
{
	struct suppressions supp;
	struct gate_totals tot;
	char *cases = NULL;
	size_t len = 0, i;
	int ret = EXIT_OK, st;

	supp_init(&supp);
	if (!(o->flags & GATE_NO_DEFAULTS))
		supp_add_defaults(&supp);
	for (i = 0; i < o->n_supp_files; i++)
		if (supp_load(&supp, o->supp_files[i]) < 0) {
			supp_release(&supp);
			return EXIT_USAGE;
		}
	memset(&tot, 0, sizeof(tot));
	if (o->junit) {
		tot.junit = xopen_memstream(&cases, &len);
	}
	if (o->flags & GATE_JSON) {
		report_json_open(stdout, "check");
		printf("\"traces\":[");
	}
	for (i = 0; i < n; i++) {
		if ((o->flags & GATE_JSON) && i)
			putchar(',');
		st = gate_one(o, &supp, paths[i], &tot);
		if (st == 2 || (st == 1 && ret == EXIT_OK))
			ret = st;
	}
	if (o->flags & GATE_JSON)
		printf("],\"status\":\"%s\"}\n", ret == 0 ? "ok" : ret == 1 ? "fail" : "error");
	else if (n > 1)
		printf("memprov check: %zu trace%s, %zu over budget, %zu unreadable\n", n, n == 1 ? "" : "s",
		       tot.failures, tot.errors);
	if (tot.junit) {
		fclose(tot.junit);
		if (gate_write_junit(o, &tot, cases) < 0)
			ret = EXIT_USAGE;
		free(cases);
	}
	supp_release(&supp);
	fflush(stdout);
	return ret;
}

/* ---- memprov run --check ---- */

static int read_header(const char *path, struct mp_file_header *h)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, h, sizeof(*h), 0);
	close(fd);
	return n == (ssize_t)sizeof(*h) && !memcmp(h->magic, MP_MAGIC, MP_MAGIC_LEN) ? 0 : -1;
}

int gate_check_process(const struct gate_opts *o, char **paths, size_t n, pid_t pid)
{
	struct mp_file_header *h = xcalloc(n + 1, sizeof(*h));
	char **pick = xcalloc(n + 1, sizeof(*pick));
	int *ok = xcalloc(n + 1, sizeof(*ok)), *ours = xcalloc(n + 1, sizeof(*ours));
	size_t i, np = 0;
	int grew = 1, ret;

	for (i = 0; i < n; i++) {
		ok[i] = !read_header(paths[i], &h[i]);
		ours[i] = ok[i] && h[i].pid == pid;
	}
	/* descendants: a trace whose parent wrote one of ours */
	while ((o->flags & GATE_CHILDREN) && grew) {
		size_t j;

		grew = 0;
		for (i = 0; i < n; i++)
			for (j = 0; j < n && ok[i] && !ours[i]; j++)
				if (ours[j] && h[i].ppid == h[j].pid)
					ours[i] = grew = 1;
	}
	for (i = 0; i < n; i++)
		if (ours[i] && h[i].state != MP_STATE_EXEC)
			pick[np++] = paths[i];
	if (!np) {
		error("no finished trace of process %d to check: did it start under libmemprov.so?",
		      (int)pid);
		ret = EXIT_USAGE;
	} else {
		ret = gate_check(o, pick, np);
	}
	free(h);
	free(pick);
	free(ok);
	free(ours);
	return ret;
}

/* ---- memprov check ---- */

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		GATE_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct cmdline cl = { .cmd = &command_check, .argc = argc, .argv = argv, .longopts = opts };
	struct gate_opts o;
	const char *arg;
	int c, ret;

	gate_opts_init(&o);
	/* options may follow the traces */
	while ((c = cmdline_next(&cl, &arg)) > 0) {
		ret = gate_opts_set(&o, &command_check, c, arg);
		if (ret) {
			gate_opts_release(&o);
			return ret;
		}
	}
	if (c == CMDLINE_STOP) {
		gate_opts_release(&o);
		return cl.status;
	}
	if ((o.flags & GATE_JSON) && (o.flags & GATE_ANNOTATIONS)) {
		gate_opts_release(&o);
		return usage_error(&command_check, "--json and --annotations both write stdout: choose one");
	}
	if (!cl.n_operands) {
		gate_opts_release(&o);
		return usage_error(&command_check, "no trace given");
	}
	ret = gate_check(&o, cl.operands, (size_t)cl.n_operands);
	gate_opts_release(&o);
	return ret;
}

const struct command command_check = {
	.name = "check",
	.run = cmd_check,
	.usage = "memprov check [--max-leak SIZE] [--max-growth SIZE] [--kind KIND] [--suppressions FILE]... [--no-default-suppressions] [--skip N] [--after LABEL] [--junit FILE] [--annotations|--json] [--alloc-fn NAME]... TRACE...",
	.help = "The CI gate: memory still live when each process ended (after suppressions) is\n"
		"held to --max-leak, and with --max-growth, every site's growth per mark (or per\n"
		"second without marks). Prints the offending sites. Exit 0 within budget, 1 over\n"
		"budget, 2 bad command line or unreadable trace or suppression file.\n"
		"  --max-leak SIZE          live bytes allowed at exit (default 0), all kinds summed,\n"
		"                           or each --kind on its own\n"
		"  --max-growth SIZE        growth allowed per mark (or second) of one site; growth\n"
		"                           is not gated without it\n"
		"  --kind KIND[,KIND]       gate only these kinds (heap, mmap, pinned, device,\n"
		"                           managed, registered), each against the budget\n"
		"  --suppressions FILE      leak:PATTERN / growth:PATTERN lines (LeakSanitizer style),\n"
		"                           alloc:NAME lines (as --alloc-fn)\n"
		"  --no-default-suppressions  also count what glibc, the loader, Python and CUDA\n"
		"                           keep until exit on purpose\n"
		"  --skip N, --after LABEL  growth window starts after warm-up\n"
		"  --junit FILE             a JUnit XML file, one test case per trace\n"
		"  --annotations            one ::error file=F,line=L:: line per offending site\n"
		"  --json                   one JSON object on stdout\n"
		"  --alloc-fn NAME          NAME allocates too, as for leaks\n",
};
