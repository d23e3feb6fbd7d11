/*
 * gate.c - `memprov check`: the CI leak gate. For each trace of a native
 * program, the memory nothing points to any more when it exited
 * (definitely and indirectly lost, by the scan at exit: LeakSanitizer's
 * and valgrind's verdict), or with --reachable, or without a finished
 * scan, all memory still live then; for a Python program, memory live
 * when its main module ended (before finalization frees module globals;
 * reachability says nothing under reference counting). That memory is
 * held to --max-leak after what is not the program's is set apart
 * (category.h: interpreter and module state, Python arenas,
 * suppressions); with test marks, each test on what it kept (pertest.h). With --max-growth, the
 * slope of every growing site across marks (tests, or seconds) too. Exit
 * 0 within budget, 1 over it, 2 when a trace or suppression file cannot
 * be read or the growth window is empty. What it writes (text, JSON,
 * annotations, JUnit) is in gate_report.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "alloc_fn.h"
#include "gate.h"
#include "gate_report.h"
#include "growth.h"
#include "inherit.h"
#include "memprov_exe_match.h"
#include "multi.h"
#include "pertest.h"
#include "report.h"
#include "report_reach.h"
#include "sites.h"
#include "trace_chain.h"
#include "util.h"

/* ---- options ---- */

void gate_opts_init(struct gate_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->gate_status = GATE_RUN_STATUS;
	o->oom_kills = -1;
}

void gate_opts_release(struct gate_opts *o)
{
	free(o->supp_files);
	free(o->skip_exe);
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
	case GATE_OPT_ALL:
		o->flags |= GATE_ALL;
		return 0;
	case GATE_OPT_REACHABLE:
		o->flags |= GATE_REACHABLE;
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

/* Move site s into a new offender (the offender owns it from now on). */
static struct offender *add_offender(struct result *res, struct site *s, const char *test)
{
	struct offender *off;

	if (res->n_off % 16 == 0)
		res->off = xrealloc(res->off, (res->n_off + 16) * sizeof(*res->off));
	off = &res->off[res->n_off++];
	memset(off, 0, sizeof(*off));
	off->s = *s;
	off->test = test;
	memset(s, 0, sizeof(*s));
	if (res->rv && res->rv->shown && !test) {
		off->have_cls = 1;
		reach_site_counts(res->rv, &off->s, off->cls);
	}
	return off;
}

/* Leave out of live what is not gated: kinds left out by --kind. */
static void drop_ungated(const struct gate_opts *o, struct replay_live **live)
{
	struct replay_live *l, *tmp;

	HASH_ITER(hh, *live, l, tmp)
		if (!gate_kind_gated(o, l->key.kind)) {
			HASH_DEL(*live, l);
			free(l);
		}
}

/*
 * The classes the lost rule gates: definitely and indirectly lost.
 * Possibly lost (reached only through a pointer into a block's interior)
 * counts as reachable, as in LeakSanitizer, which takes any pointer into
 * a block as a reference; valgrind lists it as an error by default, but
 * its heuristics (std::string, new[], multiple inheritance) call most of
 * it reachable, and memprov has none.
 */
#define GATE_LOST_CLASSES ((1u << MP_REACH_DEFINITE) | (1u << MP_REACH_INDIRECT))

/* Live at the end, the blocks of the classes in mask only. */
static struct replay_live *snapshot_classes(const struct replay *r, unsigned mask)
{
	struct replay_live *live = NULL, *part, *l, *tmp, *have;
	unsigned c;

	for (c = 0; c < MP_REACH_CLASS_COUNT; c++) {
		if (!(mask & (1u << c)))
			continue;
		part = replay_snapshot_reach(r, c);
		HASH_ITER(hh, part, l, tmp) {
			HASH_DEL(part, l);
			HASH_FIND(hh, live, &l->key, sizeof(l->key), have);
			if (have) {
				have->blocks += l->blocks;
				have->bytes += l->bytes;
				have->one_size += l->one_size;
				free(l);
			} else {
				HASH_ADD(hh, live, key, sizeof(l->key), l);
			}
		}
	}
	return live;
}

/* The executable is CPython's own (python, python3, python3.11d, ...). */
static int python_exe(const struct replay *r)
{
	const char *b = strrchr(r->trace->hdr.exe, '/');

	b = b ? b + 1 : r->trace->hdr.exe;
	return !strncmp(b, "python", 6);
}

/*
 * Choose what the verdict counts (see enum gate_rule). A Python program:
 * the trace marks the end of its main module (memprov marks it in
 * CPython's own executable only; an older one marked it wherever a
 * __main__ module ran), or the executable is CPython's and it loaded its
 * library, whether or not its main module ended (killed, or os._exit).
 * An application that embeds CPython (gdb) is a native program.
 */
static void choose_rule(const struct gate_opts *o, struct result *res, const struct growth *g,
			const struct classifier *cat)
{
	res->rule = GATE_RULE_LIVE;
	if (g->main_end_ts || (cat->py_minor >= 0 && python_exe(&g->r))) {
		res->rule_why = GATE_WHY_PYTHON;
	} else if (o->flags & GATE_REACHABLE) {
		res->rule_why = GATE_WHY_REACHABLE;
	} else if ((res->no_scan = reach_why_not(&g->r))) {
		res->rule_why = GATE_WHY_NO_SCAN;
		warning("'%s': %s: the gate counts all memory live at the end, as with --reachable",
			res->path, res->no_scan);
	} else {
		res->rule = GATE_RULE_LOST;
		res->rule_why = GATE_WHY_NATIVE;
	}
}

/*
 * Live at the end (of the Python main module, else of the process): set
 * apart what is not the program's (counted in cat), and hold the rest to
 * the budget, all gated kinds summed or each --kind on its own.
 */
static void check_leaks(const struct gate_opts *o, struct classifier *cat, struct result *res,
			struct replay_live **live)
{
	struct replay_live *l, *tmp;
	struct site *sites;
	size_t i, n;
	uint64_t sum = 0;
	unsigned k;

	drop_ungated(o, live);
	cat_split(cat, live, NULL);
	HASH_ITER(hh, *live, l, tmp) {
		res->live[l->key.kind][0] += l->blocks;
		res->live[l->key.kind][1] += l->bytes;
	}
	res->hidden[0] = cat->total[CAT_SUPPRESSED].blocks;
	res->hidden[1] = cat->total[CAT_SUPPRESSED].bytes;
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
	if (!res->leak_fail)
		return;
	sites = sites_build(res->r, cat->sym, *live, SITE_DEFAULT, &n);
	for (i = 0; i < n; i++)
		if (res->leak_fail == 1 || (res->leak_fail & (1u << sites[i].kind)))
			add_offender(res, &sites[i], NULL);
	sites_free(sites, n);
}

/*
 * A run with test marks: each test on its own, what it kept (its end
 * minus its start, after what is set apart) held to --max-leak. The
 * process as a whole is not judged: what is kept outside the tests is the
 * runner's and the modules' (collection, fixtures of wider scope).
 */
static void check_tests(const struct gate_opts *o, struct classifier *cat, struct result *res,
			struct pertest *p)
{
	size_t i, j, n;

	res->tests = xcalloc(p->n + 1, sizeof(*res->tests));
	for (i = 0; i < p->n; i++) {
		struct test_result *tr = &res->tests[res->n_tests++];
		struct ptest *t = &p->tests[i];
		struct site *sites;

		tr->t = t;
		tr->off0 = res->n_off;
		if (!t->end_ts)
			continue; /* it never ended: the run stopped in it */
		drop_ungated(o, &t->grown);
		cat_split(cat, &t->grown, NULL);
		sites = sites_build(res->r, cat->sym, t->grown, SITE_DEFAULT, &n);
		for (j = 0; j < n; j++) {
			tr->blocks += sites[j].blocks;
			tr->bytes += sites[j].bytes;
		}
		tr->fail = tr->bytes > o->max_leak;
		if (tr->fail) {
			res->tests_failed++;
			for (j = 0; j < n; j++)
				add_offender(res, &sites[j], t->nodeid);
		}
		tr->n_off = res->n_off - tr->off0;
		sites_free(sites, n);
	}
	res->leak_fail = res->tests_failed ? 1 : 0;
	res->hidden[0] = cat->total[CAT_SUPPRESSED].blocks;
	res->hidden[1] = cat->total[CAT_SUPPRESSED].bytes;
}

/* The test named by the label of point i of the growth window, or NULL. */
static const char *test_at(const struct growth *g, size_t i)
{
	const char *label = g->set == &g->marks ? g->set->label[i] : NULL;

	if (!label || strncmp(label, PERTEST_END, strlen(PERTEST_END)))
		return NULL;
	return label + strlen(PERTEST_END);
}

/* The program's growing sites over budget, after --kind. */
static void check_growth(const struct gate_opts *o, struct result *res, struct growth *g)
{
	size_t i;

	res->growth_checked = 1;
	res->unit = growth_unit(g);
	res->window = g->n_window;
	growth_window_why(g, res->growth_why, sizeof(res->growth_why));
	res->marks = g->n_marks;
	for (i = 0; i < g->n_sites; i++) {
		struct gsite *gs = &g->sites[i];
		struct offender *off;

		if (!gs->st.suspect || !gate_kind_gated(o, gs->s.kind))
			continue;
		if (gs->st.slope_bytes <= (double)o->max_growth)
			continue;
		off = add_offender(res, &gs->s, test_at(g, gs->st.start));
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

/*
 * Say on stderr that growth without marks (or with one: a step needs two)
 * is judged over time, and how to add marks.
 */
static void note_no_marks(const struct result *res)
{
	warning("'%s' has %s: growth is judged per second (%s); to judge it per "
		"iteration, put a mark in the loop: memprov_mark(\"LABEL\") (include/memprov.h, "
		"or from Python through ctypes) or `memprov run --mark-on MODULE:FUNCTION`",
		res->path,
		res->marks == 1 ? "one mark (a function --mark-on names that ran once?), and a step needs two" :
			     "no marks",
		res->growth_why);
}

static void free_result(struct result *res)
{
	size_t i;

	for (i = 0; i < res->n_off; i++)
		site_release(&res->off[i].s);
	free(res->off);
	free(res->tests);
}

/*
 * The name of the build tool cmdline runs (its first word's last part),
 * or NULL: the compiler driver, assembler and linker keep their memory
 * until exit on purpose (valgrind calls it lost too), and a test suite's
 * build run under `--check --children` failed on them.
 */
static const char *build_tool(const char *cmdline, char *name, size_t size)
{
	static const char *const exact[] = { "cc", "c++", "gcc", "g++", "cpp", "as", "ld", "collect2",
					     "lto-wrapper", "ar", "ranlib", "gold" };
	static const char *const suffix[] = { "-gcc", "-g++", "-as", "-ld" };
	static const char *const prefix[] = { "gcc-", "g++-", "ld." };
	static const char *const infix[] = { "-gcc-", "-g++-", "-ld." };
	size_t n = strcspn(cmdline, " "), i, m;
	const char *b = cmdline;

	for (i = 0; i < n; i++)
		if (cmdline[i] == '/')
			b = cmdline + i + 1;
	n -= (size_t)(b - cmdline);
	if (!n || n >= size)
		return NULL;
	memcpy(name, b, n);
	name[n] = 0;
	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return name;
	for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++)
		if (n > (m = strlen(suffix[i])) && !strcmp(name + n - m, suffix[i]))
			return name;
	for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(name, prefix[i], strlen(prefix[i])))
			return name;
	for (i = 0; i < sizeof(infix) / sizeof(infix[0]); i++)
		if (strstr(name, infix[i]))
			return name;
	return NULL;
}

/* A failing trace of a build tool: counted, its name kept once. */
static void note_tool(struct gate_totals *tot, const char *cmdline)
{
	char name[64];
	const char *t = build_tool(cmdline, name, sizeof(name));
	size_t len = strlen(tot->tools), n;
	const char *p;

	if (!t)
		return;
	tot->tool_failures++;
	n = strlen(t);
	for (p = tot->tools; (p = strstr(p, t)); p += n)
		if ((p == tot->tools || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return;
	if (len + n + 2 <= sizeof(tot->tools))
		sprintf(tot->tools + len, "%s%s", len ? "," : "", t);
}

/* Collect and check the open trace t, then write its report. */
static void gate_trace(const struct gate_opts *o, struct suppressions *supp, struct trace *t,
		       struct result *res, struct gate_totals *tot)
{
	struct growth_opts go = { .flags = GROWTH_END_LIVE | GROWTH_END_ALL | GROWTH_TESTS |
					   GROWTH_NO_PEAK,
				  .points = 20, .skip = o->skip, .after = o->after, .min_bytes = 1,
				  .mode = SITE_DEFAULT, .supp = supp,
				  .cat_flags = (o->flags & GATE_ALL) ? CAT_ALL : 0 };
	struct symbolizer *sym;
	struct classifier cat;
	struct reach_view rv;
	struct pertest pt;
	struct growth g;

	pertest_init(&pt);
	go.on_mark = pertest_on_mark;
	go.mark_arg = &pt;
	if (o->flags & GATE_GROWTH)
		go.flags |= GROWTH_SERIES;
	growth_collect(&g, t, &go);
	res->r = &g.r;
	res->at = g.main_end_ts ? "main-end" :
		  t->hdr.state == MP_STATE_EXITED || g.r.have_exit ? "exit" : "end-of-trace";
	res->at_ns = trace_rel(t, g.end_live_ts);
	res->duration = (double)(g.end_ts - g.start_ts) / 1e9;
	if (o->flags & GATE_GROWTH) {
		growth_analyze(&g);
		sym = g.sym;
		if (growth_window_check(&g) < 0) {
			res->status = 2;
			res->error = "the growth window is empty (see the error above)";
			tot->errors++;
			gate_write(o, supp, res, tot);
			goto out;
		}
		check_growth(o, res, &g);
		if (g.set == &g.times)
			note_no_marks(res);
	} else {
		sym = sym_new(&g.r, 1);
	}
	cat_init(&cat, &g.r, sym, supp, CAT_END_VERDICT | ((o->flags & GATE_ALL) ? CAT_ALL : 0));
	res->cat = &cat;
	/* a forked child is held to what it allocated itself */
	inherit_split(&g.r, &g.end_live, NULL);
	choose_rule(o, res, &g, &cat);
	reach_view_build(&rv, &g.r, sym, SITE_DEFAULT, res->rule_why != GATE_WHY_PYTHON);
	res->rv = &rv;
	if (pt.n) {
		check_tests(o, &cat, res, &pt);
	} else if (res->rule == GATE_RULE_LOST) {
		struct replay_live *lost = snapshot_classes(&g.r, GATE_LOST_CLASSES);

		/* a forked child is held to what it allocated itself here too:
		 * its parent's blocks that only the parent's other threads held
		 * are lost in it, whoever could free them; and its scan classifies
		 * them only when it could read its parent's trace up to the fork */
		inherit_drop(&g.r, &lost);
		cat.flags |= CAT_LOST; /* nothing classified yet: no answer cached without it */
		check_leaks(o, &cat, res, &lost);
		replay_live_free(&lost);
	} else {
		check_leaks(o, &cat, res, &g.end_live);
	}
	res->status = res->leak_fail || res->growth_fail ? 1 : 0;
	tot->failures += res->status;
	if (res->status)
		note_tool(tot, t->hdr.cmdline);
	tot->time += res->duration;
	gate_write(o, supp, res, tot);
	reach_view_free(&rv);
	res->rv = NULL;
	cat_release(&cat);
	res->cat = NULL;
	if (!(o->flags & GATE_GROWTH))
		sym_free(sym);
out:
	free_result(res);
	pertest_release(&pt);
	growth_release(&g);
}

/*
 * Its descriptors hidden (/proc/PID/fd: EACCES, a process that made
 * itself not dumpable, ssh-agent's prctl(PR_SET_DUMPABLE, 0), or changed
 * its credentials): is pid alive and not started after the trace
 * (start_mono_ns, CLOCK_MONOTONIC), so not a later process given the
 * pid? /proc/PID/stat says so: its state and start time (clock ticks
 * since boot, CLOCK_BOOTTIME), which stay readable.
 */
static int alive_since(pid_t pid, uint64_t start_mono_ns)
{
	char path[64], buf[1024], *c, state;
	unsigned long long ticks = 0;
	struct timespec boot, mono;
	uint64_t offset, tick_ns;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return 0;
	buf[n] = 0;
	c = strrchr(buf, ')'); /* the command's name may hold anything */
	if (!c || sscanf(c + 1, " %c", &state) != 1 || state == 'Z' || state == 'X' ||
	    state == 'x')
		return 0;
	/* field 22, starttime; c + 1 starts field 3 */
	for (field = 2; field < 22 && c; field++)
		c = strchr(c + 1, ' ');
	if (!c || sscanf(c + 1, "%llu", &ticks) != 1)
		return 0;
	if (clock_gettime(CLOCK_BOOTTIME, &boot) < 0 || clock_gettime(CLOCK_MONOTONIC, &mono) < 0)
		return 0;
	offset = ((uint64_t)boot.tv_sec - (uint64_t)mono.tv_sec) * 1000000000ull +
		 (uint64_t)boot.tv_nsec - (uint64_t)mono.tv_nsec;
	tick_ns = 1000000000ull / (uint64_t)hz;
	/* the start is rounded down to a tick: one tick of slack */
	return ticks * tick_ns <= start_mono_ns + offset + tick_ns;
}

/* Does pid map the file want is (memprov keeps its trace mapped)? */
static int maps_file(pid_t pid, const struct stat *want)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	unsigned int maj, min;
	unsigned long long ino;
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!found && getline(&line, &cap, f) > 0)
		found = sscanf(line, "%*x-%*x %*s %*x %x:%x %llu", &maj, &min, &ino) == 3 &&
			ino == (unsigned long long)want->st_ino && makedev(maj, min) == want->st_dev;
	free(line);
	fclose(f);
	return found;
}

/*
 * Is the process of this running trace still alive, writing it (a
 * daemon, `cmd &`)? Gating it now would count all it holds as if it had
 * died there. The trace must be this host's; the pid alive and not
 * started after the trace (the pid may have been given again, even to a
 * descendant that holds the trace open as its ancestor's); and it must
 * hold the trace open or mapped (a program may close memprov's
 * descriptor: the mapping stays), where its descriptors can be read.
 */
static int still_running(const struct trace *t, const char *path)
{
	char dir[64], link[96], host[sizeof(t->hdr.host)] = "";
	struct stat want, st;
	struct dirent *de;
	DIR *d;
	int found = 0;

	if (t->hdr.state != MP_STATE_RUNNING || t->hdr.pid <= 0 || stat(path, &want) < 0)
		return 0;
	if (t->hdr.host[0] &&
	    (gethostname(host, sizeof(host) - 1) < 0 || strcmp(host, t->hdr.host)))
		return 0;
	if (!alive_since((pid_t)t->hdr.pid, t->hdr.start_mono_ns))
		return 0;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)t->hdr.pid);
	d = opendir(dir);
	if (!d)
		return errno == EACCES || errno == EPERM;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%.16s", dir, de->d_name);
		found = !stat(link, &st) && st.st_dev == want.st_dev && st.st_ino == want.st_ino;
	}
	closedir(d);
	return found || maps_file((pid_t)t->hdr.pid, &want);
}

int skip_exe_add(char **list, const struct command *cmd, const char *arg)
{
	size_t len = *list ? strlen(*list) : 0, n = strlen(arg);

	if (!n || arg[0] == ',' || arg[n - 1] == ',' || strstr(arg, ",,"))
		return usage_error(cmd, "--skip-exe wants PATTERN[,PATTERN...], not '%s'", arg);
	if (len + n + 1 > SKIP_EXE_MAX)
		return usage_error(cmd, "--skip-exe: the patterns are longer than %d bytes in all",
				   SKIP_EXE_MAX);
	*list = xrealloc(*list, len + n + 2);
	sprintf(*list + len, "%s%s", len ? "," : "", arg);
	return 0;
}

/*
 * Whether --skip-exe names the program of trace t: by the path it was run
 * by (its command's first word) or the file that was (the header's exe),
 * as libmemprov.so matches MEMPROV_SKIP_EXE.
 */
static int skip_named(const char *patterns, const struct trace *t)
{
	char argv0[sizeof(t->hdr.cmdline)], exe[sizeof(t->hdr.exe) + 1];
	size_t n = strnlen(t->hdr.cmdline, sizeof(t->hdr.cmdline) - 1);

	memcpy(argv0, t->hdr.cmdline, n);
	argv0[n] = 0;
	argv0[strcspn(argv0, " ")] = 0;
	memcpy(exe, t->hdr.exe, sizeof(t->hdr.exe));
	exe[sizeof(t->hdr.exe)] = 0;
	return mp_exe_names(patterns, argv0, exe);
}

/* Gate one trace; print its report; add it to the JUnit cases. */
static int gate_one(const struct gate_opts *o, struct suppressions *supp, const char *path,
		    struct gate_totals *tot)
{
	static char stop_why[512]; /* res.skip_why's text, until gate_write has printed it */
	struct result res;
	struct trace t;

	memset(&res, 0, sizeof(res));
	res.path = path;
	reset_counts(supp);
	tot->tests++;
	if (trace_open(&t, path, 0) < 0) {
		res.status = 2;
		res.error = "cannot read the trace";
		tot->errors++;
		gate_write(o, supp, &res, tot);
		return res.status;
	}
	res.t = &t;
	if (t.cut && t.hdr.state != MP_STATE_STOPPED) {
		/* frees and the scan at exit after the cut are missing: a
		 * verdict would count what was freed later as live (where
		 * tracing stopped, a file-size limit or a full disk, the file
		 * ends short of it on purpose: no verdict, said below) */
		snprintf(stop_why, sizeof(stop_why),
			 "the trace is cut at offset %" PRIu64 " (the file is shorter than what "
			 "was written to it: truncated, or copied while it was written): no verdict",
			 t.cut_at);
		res.status = 2;
		res.error = stop_why;
		tot->errors++;
		gate_write(o, supp, &res, tot);
		trace_close(&t);
		return res.status;
	}
	/*
	 * A process killed by SIGPIPE was writing to a pipe whose reader had
	 * gone (`git log | head`): the usual end of a pipeline's writer, with
	 * no scan at exit. Gating all it held (as for other deaths) would
	 * fail such a pipeline every time; there is no verdict to give.
	 */
	if (o->skip_exe && skip_named(o->skip_exe, &t)) {
		res.skipped = 1;
		res.skip_why = "--skip-exe names its program: no verdict";
	} else if (t.hdr.state == MP_STATE_KILLED && t.hdr.term_signal == SIGPIPE) {
		res.skipped = 1;
		res.skip_why = "killed by SIGPIPE (the reader of its pipe went away): no scan, no verdict";
	} else if (!(o->flags & GATE_REACHABLE) && (t.hdr.flags & MP_HF_EXIT_BY_RUN) &&
		   t.hdr.state == MP_STATE_EXITED) {
		/*
		 * It exited past every hook (Go's runtime ends every Go program
		 * with a raw exit_group): memprov run saw the status, but there
		 * was no scan to tell what was lost from what was still in use.
		 * Gating all it held failed every Go program on its runtime's
		 * own heap; --reachable gates it so.
		 */
		res.skipped = 1;
		res.skip_why = t.hdr.flags & MP_HF_GO ?
			"a Go program: its runtime exits by a raw system call no hook sees, so there was no scan: no verdict (--reachable gates all it held)" :
			"it exited past every hook (a raw exit system call), so there was no scan: no verdict (--reachable gates all it held)";
	} else if (!(o->flags & GATE_REACHABLE) && (t.hdr.flags & MP_HF_HEAP_AHEAD)) {
		/*
		 * Another object's malloc served the program (an allocator
		 * preloaded before memprov): no heap in the trace, no scan.
		 * Passing it would say nothing leaked where nothing was seen.
		 */
		res.skipped = 1;
		res.skip_why = "the heap was not traced: the program's malloc is that of a library preloaded before libmemprov.so (put libmemprov.so first in LD_PRELOAD), or its own: no verdict";
	} else if (!(o->flags & GATE_REACHABLE) && t.hdr.state == MP_STATE_STOPPED) {
		/*
		 * Tracing stopped before the process ended (a file-size limit
		 * it set, a full disk, a seccomp filter): what it freed later
		 * is not in the trace, and there was no scan. Gating all it
		 * held then failed every program that lowers its own
		 * RLIMIT_FSIZE (bash's `ulimit -f`) on memory it freed.
		 */
		snprintf(stop_why, sizeof(stop_why),
			 "tracing stopped before the process ended (%s): what it freed later is "
			 "not in the trace and there was no scan: no verdict (--reachable gates all "
			 "it held when it stopped)", replay_stop_why(&t.hdr));
		res.skipped = 1;
		res.skip_why = stop_why;
	} else if (t.hdr.state == MP_STATE_EXEC) {
		res.skipped = 1;
		res.skip_why = "replaced by exec (its memory went with it)";
	} else if (still_running(&t, path)) {
		/* check DIR while a daemon of the run still writes its trace
		 * failed it on all it held (the native sweep: redis-server
		 * --daemonize, 816.7 KiB) */
		res.skipped = 1;
		res.skip_why = o->flags & GATE_RUN ?
			"still running when the command ended (a child that outlives it): no exit yet, no verdict" :
			"still running (the process writes its trace now): no exit yet, no verdict; check it once it has ended";
	} else if (!(o->flags & GATE_REACHABLE) && (o->flags & GATE_RUN) && !o->oom_kills &&
		   !(t.hdr.flags & MP_HF_GO) &&
		   ((t.hdr.state == MP_STATE_KILLED && t.hdr.term_signal == SIGKILL) ||
		    t.hdr.state == MP_STATE_RUNNING)) {
		/*
		 * A death no handler sees, and not the OOM killer's (none ran
		 * while the command did): a parent's timeout (Python's
		 * subprocess kills with SIGKILL), `kill -9`. What it held
		 * was in use; there was no scan. Gating all of it failed
		 * every test suite that times a child out; where an OOM kill
		 * did run (or memprov cannot tell), it is still gated.
		 */
		res.skipped = 1;
		res.skip_why = t.hdr.state == MP_STATE_KILLED ?
			"killed by SIGKILL, not by the OOM killer (it ended no process while the command ran): no scan, no verdict (--reachable gates all it held)" :
			"its end was seen by no hook (killed by SIGKILL, as a parent's timeout does, or a raw exit system call), and the OOM killer ended no process while the command ran: no scan, no verdict (--reachable gates all it held)";
	} else if (!(o->flags & GATE_REACHABLE) && (t.hdr.flags & MP_HF_GO) &&
		   t.hdr.state == MP_STATE_RUNNING) {
		/* the same without memprov run: exited, or killed (which
		 * memprov run would have seen and noted) */
		res.skipped = 1;
		res.skip_why = "a Go program whose end no hook saw (its runtime exits by a raw system call; or it was killed): no scan, no verdict (memprov run notes how it ended; --reachable gates all it held)";
	}
	if (res.skipped) {
		tot->skipped++;
		gate_write(o, supp, &res, tot);
	} else {
		gate_trace(o, supp, &t, &res, tot);
	}
	trace_close(&t);
	return res.status;
}

/* The gate over n traces; *skipped: how many got no verdict. */
static int gate_traces(const struct gate_opts *o, char **paths, size_t n, size_t *skipped)
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
	if (!(o->flags & GATE_JSON) && tot.tool_failures == 1)
		printf("memprov check: 1 trace over budget is of a tool a build runs (%s), which keeps "
		       "its memory until exit: --skip-exe '%s' leaves it out (run: untraced)\n",
		       tot.tools, tot.tools);
	else if (!(o->flags & GATE_JSON) && tot.tool_failures)
		printf("memprov check: %zu traces over budget are of tools a build runs (%s), which "
		       "keep their memory until exit: --skip-exe '%s' leaves them out (run: untraced)\n",
		       tot.tool_failures, tot.tools, tot.tools);
	if (tot.junit) {
		fclose(tot.junit);
		if (gate_write_junit(o, &tot, cases) < 0)
			ret = EXIT_USAGE;
		free(cases);
	}
	supp_release(&supp);
	stdout_flush();
	*skipped = tot.skipped;
	return ret;
}

int gate_check(const struct gate_opts *o, char **paths, size_t n)
{
	size_t skipped;

	return gate_traces(o, paths, n, &skipped);
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

int gate_opts_check(const struct gate_opts *o, const struct command *cmd)
{
	/* they choose the growth window only: alone, a wrong label passed */
	if ((o->after || o->skip) && !(o->flags & GATE_GROWTH))
		return usage_error(cmd, "%s chooses the growth window: it needs --max-growth SIZE",
				   o->after ? "--after" : "--skip");
	return 0;
}

int gate_preflight(const struct gate_opts *o)
{
	struct suppressions supp;
	size_t i;
	int ret = 0, fd;

	supp_init(&supp);
	for (i = 0; i < o->n_supp_files && !ret; i++)
		ret = supp_load(&supp, o->supp_files[i]);
	supp_release(&supp);
	if (ret)
		return -1;
	if (!o->junit)
		return 0;
	/* created now, written after the run (an existing file kept until then) */
	fd = open(o->junit, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return error("cannot write the JUnit file '%s': %s", o->junit, strerror(errno));
	close(fd);
	return 0;
}

int gate_check_process(const struct gate_opts *o, char **paths, size_t n, pid_t pid)
{
	struct mp_file_header *h = xcalloc(n + 1, sizeof(*h));
	char **pick = xcalloc(n + 1, sizeof(*pick));
	int *ok = xcalloc(n + 1, sizeof(*ok)), *ours = xcalloc(n + 1, sizeof(*ours));
	size_t i, np = 0, skipped;
	int grew = 1, ret;

	for (i = 0; i < n; i++) {
		ok[i] = !read_header(paths[i], &h[i]);
		/*
		 * memprov run -d: DIR holds the traces of this run only, and
		 * every process of the run descends from the command, also
		 * one whose header names the reaper as its parent (an image
		 * a posix_spawn or vfork child exec'd after its parent had
		 * exited: getppid() then, and no trace of the child before it)
		 */
		ours[i] = ok[i] && (h[i].pid == pid ||
				    ((o->flags & GATE_CHILDREN) && (o->flags & GATE_RUN_DIR)));
		/* a child of the command, which may have left no trace itself
		 * (--skip-exe named it, or it is static): the traces given are
		 * this run's, made after it started */
		ours[i] |= ok[i] && (o->flags & GATE_CHILDREN) && h[i].ppid == pid;
	}
	/*
	 * descendants: a trace whose parent wrote one of ours, and the image
	 * a child of ours exec'd (same pid, started as that trace ended): its
	 * ppid is its parent's at the exec, the reaper's when the parent had
	 * already exited (`cmd &` in a shell that exits at once)
	 */
	while ((o->flags & GATE_CHILDREN) && grew) {
		size_t j;

		grew = 0;
		for (i = 0; i < n; i++)
			for (j = 0; j < n && ok[i] && !ours[i]; j++)
				if (ours[j] && (h[i].ppid == h[j].pid ||
						(h[j].state == MP_STATE_EXEC && h[i].pid == h[j].pid &&
						 h[i].start_mono_ns >= h[j].start_mono_ns)))
					ours[i] = grew = 1;
	}
	for (i = 0; i < n; i++)
		if (ours[i] && h[i].state != MP_STATE_EXEC)
			pick[np++] = paths[i];
	if (!np && (o->flags & GATE_RUN_UNTRACED)) {
		fprintf(stderr, "memprov check: nothing was checked: the command left no trace "
			"(why: above)%s\n", o->flags & GATE_CHILDREN ? ", nor did any child" : "");
		ret = EXIT_USAGE;
	} else if (!np) {
		error("no finished trace of process %d to check: did it start under libmemprov.so?",
		      (int)pid);
		ret = EXIT_USAGE;
	} else {
		struct gate_opts run_o = *o;

		if (o->flags & GATE_RUN_UNTRACED)
			fprintf(stderr, "memprov check: the command left no trace (why: above): "
				"its children alone are gated\n");
		run_o.flags |= GATE_RUN;
		ret = gate_traces(&run_o, pick, np, &skipped);
		/* the command untraced, and no child given a verdict either */
		if ((o->flags & GATE_RUN_UNTRACED) && ret == EXIT_OK && skipped == np) {
			fprintf(stderr, "memprov check: nothing was checked: the command left no "
				"trace and no child got a verdict\n");
			ret = EXIT_USAGE;
		}
	}
	free(h);
	free(pick);
	free(ok);
	free(ours);
	return ret;
}

/* ---- memprov check ---- */

/* Is path among the first n of paths? */
static int listed(char **paths, size_t n, const char *path)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(paths[i], path))
			return 1;
	return 0;
}

/*
 * The traces that continue the one at path, when its process called
 * exec (`memprov run -o t.trace -- sh -c 'exec prog'`, a pyenv shim:
 * t.trace is the shell's, the program's is t.1.trace), appended to
 * *paths: a trace named alone stands for the programs its process
 * became, or the gate would pass their leaks. Those already listed (a
 * run directory lists them all) are not added again.
 */
static void add_exec_successors(const char *path, char ***paths, size_t *np)
{
	struct mp_file_header h;
	char *cur = NULL, *next;
	int steps;

	for (steps = 0; steps < 256; steps++) {
		if (trace_peek(cur ? cur : path, &h) || h.state != MP_STATE_EXEC ||
		    !(next = trace_exec_successor(cur ? cur : path, &h)))
			break;
		if (listed(*paths, *np, next)) {
			free(next);
			break;
		}
		*paths = xrealloc(*paths, (*np + 1) * sizeof(**paths));
		(*paths)[(*np)++] = next;
		cur = next;
	}
}

/*
 * The traces named, a run directory (memprov run -d) standing for its
 * traces and a trace whose process called exec for the traces that
 * continue it; other operands are gated (or reported unreadable) as they
 * are.
 */
static int check_traces(const struct gate_opts *o, char **operands, int n)
{
	char **paths = NULL, **dir;
	size_t np = 0, nd, i;
	int k, ret = EXIT_USAGE;

	for (k = 0; k < n; k++) {
		if (!multi_wanted(&operands[k], 1)) {
			if (listed(paths, np, operands[k]))
				continue; /* named twice, or a successor already added */
			paths = xrealloc(paths, (np + 1) * sizeof(*paths));
			paths[np++] = operands[k];
			add_exec_successors(operands[k], &paths, &np);
			continue;
		}
		if (multi_expand(&operands[k], 1, &dir, &nd) < 0)
			goto out;
		paths = xrealloc(paths, (np + nd + 1) * sizeof(*paths));
		for (i = 0; i < nd; i++) {
			if (listed(paths, np, dir[i]))
				free(dir[i]);
			else
				paths[np++] = dir[i];
		}
		free(dir);
	}
	ret = gate_check(o, paths, np);
out:
	/* the expanded names are ours: free those, not the operands */
	for (i = 0; i < np; i++) {
		for (k = 0; k < n && paths[i] != operands[k]; k++)
			;
		if (k == n)
			free(paths[i]);
	}
	free(paths);
	return ret;
}

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		GATE_LONG_OPTIONS,
		{ "parent", required_argument, NULL, 'R' },
		{ "skip-exe", required_argument, NULL, 'X' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmdline cl = { .cmd = &command_check, .argc = argc, .argv = argv, .longopts = opts };
	struct gate_opts o;
	const char *arg;
	int c, ret;

	gate_opts_init(&o);
	error_exit_status_set(2); /* 1 says "over budget" */
	/* options may follow the traces */
	while ((c = cmdline_next(&cl, &arg)) > 0) {
		if (c == 'R') { /* a forked child's parent trace, as for the reports */
			inherit_set_parent(arg);
			continue;
		}
		if (c == 'X')
			ret = skip_exe_add(&o.skip_exe, &command_check, arg);
		else
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
	if ((ret = gate_opts_check(&o, &command_check))) {
		gate_opts_release(&o);
		return ret;
	}
	if (!cl.n_operands) {
		gate_opts_release(&o);
		return usage_error(&command_check, "no trace given");
	}
	ret = check_traces(&o, cl.operands, cl.n_operands);
	gate_opts_release(&o);
	return ret;
}

const struct command command_check = {
	.name = "check",
	.run = cmd_check,
	.usage = "memprov check [--max-leak SIZE] [--max-growth SIZE] [--kind KIND[,KIND]] [--reachable] [--suppressions FILE]... [--no-default-suppressions] [--all] [--skip N] [--after LABEL] [--junit FILE] [--annotations|--json] [--alloc-fn NAME]... [--skip-exe PATTERN]... [--parent TRACE] TRACE|DIR...",
	.help = "The CI gate: memory nothing points to when each native process exited\n"
		"(definitely and indirectly lost, by the scan at exit: LeakSanitizer's and\n"
		"valgrind's verdict), or for Python, memory live when its main module ended\n"
		"(before finalization), after what is set apart, is held to --max-leak, and with\n"
		"--max-growth, every site's growth per mark (or per second without marks). With\n"
		"test marks (memprov's pytest plugin), each test is judged on what it kept.\n"
		"Prints the offending sites and their classes. Exit 0 within budget, 1 over\n"
		"budget, 2 bad command line, unreadable trace or suppression file, or an empty\n"
		"window.\n"
		"  --max-leak SIZE          bytes allowed at the end (default 0), all kinds\n"
		"                           summed, or each --kind on its own; per test with tests\n"
		"  --max-growth SIZE        growth allowed per mark (per test, or per second) of one\n"
		"                           site; growth is not gated without it\n"
		"  --kind KIND[,KIND]       gate only these kinds (heap, mmap, pinned, device,\n"
		"                           managed, registered), each against the budget\n"
		"  --reachable              native programs: all memory live at exit, still\n"
		"                           reachable too (so is a trace without a finished scan,\n"
		"                           with a warning)\n"
		"  --suppressions FILE      leak:PATTERN / growth:PATTERN lines (LeakSanitizer style),\n"
		"                           alloc:NAME lines (as --alloc-fn)\n"
		"  --no-default-suppressions  also count what glibc, the loader, the environment and\n"
		"                           CUDA keep until exit on purpose\n"
		"  --all                    also count interpreter and module state (start-up,\n"
		"                           imports, top-level code, library code alone) and Python\n"
		"                           arenas\n"
		"  --skip N, --after LABEL  growth window starts after warm-up (an empty window: exit 2)\n"
		"  --junit FILE             a JUnit XML file, one test case per trace and per test\n"
		"  --annotations            one ::error file=F,line=L:: line per offending site\n"
		"  --json                   one JSON object on stdout\n"
		"  --alloc-fn NAME          NAME allocates too, as for leaks\n"
		"  --skip-exe PATTERN[,...] no verdict on the traces of programs it names (as\n"
		"                           memprov run --skip-exe: `*`, `?`; a `/`: the whole path)\n"
		"  --parent TRACE           a forked child's parent trace, when it is not beside it\n",
};
