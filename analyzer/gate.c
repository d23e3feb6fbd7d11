/*
 * gate.c - `memprov check`: the CI leak gate. For each trace, memory
 * still live when the process ended (after suppressions) is held to
 * --max-leak, and with --max-growth, the slope of every growing site
 * across marks (or seconds) to that budget. Exit 0 within budget, 1 over
 * it, 2 when a trace or suppression file cannot be read. Writes a short
 * text report, or JSON, and optionally a JUnit file and GitHub Actions
 * annotations. See README "CI gate" for why the instant is process exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "growth.h"
#include "report.h"
#include "sites.h"
#include "util.h"

#define GATE_TOP 10         /* offending sites shown per trace in text */
#define GATE_FRAMES 8       /* frames shown per site in text */
#define GATE_MAX_ANNOT 50   /* annotations per trace */

static const char *const check_cmd = "check";

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

static int parse_kinds(struct gate_opts *o, const char *cmd, const char *arg)
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

int gate_opts_set(struct gate_opts *o, const char *cmd, int opt, const char *arg)
{
	char *end;

	o->set = 1;
	switch (opt) {
	case GATE_OPT_MAX_LEAK:
		return growth_parse_size(cmd, "--max-leak", arg, &o->max_leak);
	case GATE_OPT_MAX_GROWTH:
		o->flags |= GATE_GROWTH;
		return growth_parse_size(cmd, "--max-growth", arg, &o->max_growth);
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
	}
	return usage_error(cmd, "unknown gate option");
}

/* ---- one trace ---- */

struct offender {
	struct site s;            /* frames, kind, func; s.bytes/blocks live at the end */
	int growth;               /* a growth offender (else live at exit) */
	double slope;             /* bytes per unit */
	int64_t growth_bytes;     /* over the window */
};

struct result {
	const char *path;
	int status;               /* 0 ok, 1 over budget, 2 unreadable */
	int skipped;              /* replaced by exec: not gated */
	const struct trace *t;
	const struct replay *r;
	const char *at;           /* "exit", "end-of-trace" */
	uint64_t at_ns;
	uint64_t live[MP_KIND_COUNT][2];  /* gated, after suppressions: blocks, bytes */
	uint64_t hidden[2];       /* suppressed: blocks, bytes */
	uint64_t leak_total;      /* the figure held to --max-leak (sum, or worst kind) */
	unsigned leak_fail;       /* kinds over budget (bit 0: the sum) */
	int growth_checked;
	const char *unit;         /* "mark" or "s" */
	size_t window;            /* points in the growth window */
	size_t growth_fail;
	struct offender *off;
	size_t n_off;
	double duration;          /* seconds the trace covers */
};

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

static int kind_gated(const struct gate_opts *o, unsigned kind)
{
	return !o->kinds || (o->kinds & (1u << kind));
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
		rule = kind_gated(o, l->key.kind) ?
			       match_cached(&cache, supp, r, sym, l->key.stack, l->key.kind,
					    l->bytes <= l->blocks * SUPP_SMALL_BLOCK) : NULL;
		if (!kind_gated(o, l->key.kind) || rule) {
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
	res->window = g->set->n && g->w0 <= g->w1 ? g->w1 - g->w0 + 1 : 0;
	for (i = 0; i < g->n_sites; i++) {
		struct gsite *gs = &g->sites[i];
		struct supp_rule *rule;
		struct offender *off;

		if (!gs->st.suspect || !kind_gated(o, gs->s.kind))
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

/* ---- output ---- */

/* Frames of the CUDA runtime or driver: the program's call is the place to name. */
static int in_cuda_lib(const struct sym_frame *f)
{
	const char *b = f->module ? strrchr(f->module, '/') : NULL;

	b = b ? b + 1 : f->module;
	return b && (!strncmp(b, "libcudart", 9) || !strncmp(b, "libcuda.", 8));
}

/*
 * The innermost frame with a source line: Python first, else native,
 * a readable file preferred, memprov's and the CUDA libraries' own
 * frames left out.
 */
static int site_location(const struct site *s, const char **file, int *line)
{
	size_t j;

	if (s->n_python && s->python[0].file) {
		*file = s->python[0].file;
		*line = (int)s->python[0].line;
		return 1;
	}
	for (j = 0; j < s->n_native; j++)
		if (s->native[j]->file && s->native[j]->line > 0 && !s->native[j]->memprov &&
		    !in_cuda_lib(s->native[j]) && !access(s->native[j]->file, R_OK)) {
			*file = s->native[j]->file;
			*line = s->native[j]->line;
			return 1;
		}
	for (j = 0; j < s->n_native; j++)
		if (s->native[j]->file && s->native[j]->line > 0 && !s->native[j]->memprov) {
			*file = s->native[j]->file;
			*line = s->native[j]->line;
			return 1;
		}
	return 0;
}

/* "function" of the innermost frame, for one-line messages. */
static const char *site_function(const struct site *s, char *buf, size_t len)
{
	if (s->n_python)
		return s->python[0].function;
	if (s->n_native)
		return s->native[0]->function ? s->native[0]->function :
						sym_fallback(s->native[0], buf, len);
	return "(no stack recorded)";
}

static void offender_line(FILE *f, const struct result *res, const struct offender *off)
{
	char b1[32], b2[32], fn[512];
	const char *file;
	int line;

	if (off->growth)
		fprintf(f, "%s %s grows %s per %s (%s over the window, %s live at the end)",
			kind_name(off->s.kind), func_name(off->s.func),
			human_bytes(b1, sizeof(b1), off->slope > 0 ? (uint64_t)off->slope : 0), res->unit,
			human_bytes(b2, sizeof(b2), off->growth_bytes > 0 ? (uint64_t)off->growth_bytes : 0),
			human_bytes(fn, sizeof(fn), off->s.bytes));
	else
		fprintf(f, "%s %s: %s in %" PRIu64 " block%s live at %s", kind_name(off->s.kind),
			func_name(off->s.func), human_bytes(b1, sizeof(b1), off->s.bytes), off->s.blocks,
			off->s.blocks == 1 ? "" : "s", res->at);
	fprintf(f, " in %s", site_function(&off->s, fn, sizeof(fn)));
	if (site_location(&off->s, &file, &line))
		fprintf(f, " at %s:%d", file, line);
}

static void text_frames(FILE *f, const struct site *s)
{
	char buf[512];
	size_t j, shown = 0;

	for (j = 0; j < s->n_python && shown < GATE_FRAMES; j++, shown++)
		fprintf(f, "      %s %s:%u\n", s->python[j].function,
			s->python[j].file ? s->python[j].file : "?", s->python[j].line);
	for (j = 0; j < s->n_native && shown < GATE_FRAMES; j++, shown++) {
		const struct sym_frame *fr = s->native[j];

		if (!fr->function)
			fprintf(f, "      %s\n", sym_fallback(fr, buf, sizeof(buf)));
		else if (fr->file)
			fprintf(f, "      %s %s:%d\n", fr->function, fr->file, fr->line);
		else
			fprintf(f, "      %s (%s)\n", fr->function, sym_fallback(fr, buf, sizeof(buf)));
	}
	if (s->n_python + s->n_native > shown)
		fprintf(f, "      ... %zu more frames\n", s->n_python + s->n_native - shown);
	if (!s->n_python && !s->n_native)
		fprintf(f, "      (no stack recorded)\n");
}

static void budget_text(FILE *f, const struct gate_opts *o, const struct result *res)
{
	char b1[32], b2[32], b3[32];
	unsigned k;

	if (o->kinds) {
		for (k = 1; k < MP_KIND_COUNT; k++)
			if (o->kinds & (1u << k))
				fprintf(f, "  %s live at %s: %s in %" PRIu64 " block%s (budget %s)%s\n",
					kind_name(k), res->at, human_bytes(b1, sizeof(b1), res->live[k][1]),
					res->live[k][0], res->live[k][0] == 1 ? "" : "s",
					human_bytes(b2, sizeof(b2), o->max_leak),
					res->leak_fail & (1u << k) ? ": over budget" : "");
	} else {
		uint64_t blocks = 0;

		for (k = 1; k < MP_KIND_COUNT; k++)
			blocks += res->live[k][0];
		fprintf(f, "  live at %s: %s in %" PRIu64 " block%s (budget %s, all kinds)%s\n", res->at,
			human_bytes(b1, sizeof(b1), res->leak_total), blocks, blocks == 1 ? "" : "s",
			human_bytes(b2, sizeof(b2), o->max_leak), res->leak_fail ? ": over budget" : "");
	}
	if (res->growth_checked) {
		if (res->window < 3)
			fprintf(f, "  growth: not judged: %zu point%s in the window (at least 3)\n",
				res->window, res->window == 1 ? "" : "s");
		else
			fprintf(f, "  growth over %zu %ss: %zu site%s over %s per %s\n", res->window,
				!strcmp(res->unit, "mark") ? "mark" : "instant", res->growth_fail,
				res->growth_fail == 1 ? "" : "s", human_bytes(b3, sizeof(b3), o->max_growth),
				res->unit);
	}
}

static void suppressed_text(FILE *f, const struct suppressions *supp, const struct result *res)
{
	char b1[32];
	size_t i;

	if (!res->hidden[0] && !res->hidden[1]) {
		int any = 0;

		for (i = 0; i < supp->n; i++)
			any |= supp->rules[i].sites != 0;
		if (!any)
			return;
	}
	fprintf(f, "  suppressed: %s in %" PRIu64 " block%s\n", human_bytes(b1, sizeof(b1), res->hidden[1]),
		res->hidden[0], res->hidden[0] == 1 ? "" : "s");
	for (i = 0; i < supp->n; i++) {
		const struct supp_rule *rule = &supp->rules[i];

		if (rule->blocks)
			fprintf(f, "    %s (%" PRIu64 " B) in %" PRIu64 " block%s: leak:%s (%s%s%s)\n",
				human_bytes(b1, sizeof(b1), rule->bytes), rule->bytes, rule->blocks,
				rule->blocks == 1 ? "" : "s", rule->pattern, rule->source,
				rule->why ? ": " : "", rule->why ? rule->why : "");
		if (rule->sites)
			fprintf(f, "    %" PRIu64 " growing site%s by growth:%s (%s)\n", rule->sites,
				rule->sites == 1 ? "" : "s", rule->pattern, rule->source);
	}
}

static void print_text(const struct gate_opts *o, const struct suppressions *supp,
		       const struct result *res)
{
	size_t i, shown;
	char b1[32];

	if (res->status == 2) {
		printf("memprov check: %s: cannot read the trace\n", res->path);
		return;
	}
	printf("memprov check: %s (pid %d: %s): ", res->path, res->t->hdr.pid, report_command(res->t));
	if (res->skipped) {
		printf("not gated: replaced by exec (its memory went with it)\n");
		return;
	}
	printf("%s\n", res->status ? "FAIL" : "ok");
	if (strcmp(res->at, "exit"))
		printf("  the process did not exit (killed, or still running): live at the end of the trace\n");
	budget_text(stdout, o, res);
	shown = res->n_off < GATE_TOP ? res->n_off : GATE_TOP;
	if (res->n_off)
		printf("  %zu offending site%s%s:\n", res->n_off, res->n_off == 1 ? "" : "s",
		       shown < res->n_off ? ", biggest first (first 10 shown)" : ", biggest first");
	for (i = 0; i < shown; i++) {
		printf("    #%zu ", i + 1);
		offender_line(stdout, res, &res->off[i]);
		printf("\n");
		text_frames(stdout, &res->off[i].s);
	}
	suppressed_text(stdout, supp, res);
	(void)b1;
}

static void json_offender(FILE *f, const struct result *res, const struct offender *off)
{
	const char *file;
	int line;

	fprintf(f, "{\"type\":\"%s\",", off->growth ? "growth" : "leak");
	growth_json_site(f, &off->s);
	fprintf(f, ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64, off->s.blocks, off->s.bytes);
	if (off->growth)
		fprintf(f, ",\"slope\":%.2f,\"unit\":\"%s\",\"growth_bytes\":%" PRId64, off->slope,
			res->unit, off->growth_bytes);
	fprintf(f, ",\"location\":");
	if (site_location(&off->s, &file, &line)) {
		fprintf(f, "{\"file\":");
		json_str(f, file);
		fprintf(f, ",\"line\":%d}", line);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, "}");
}

static void print_json(FILE *f, const struct gate_opts *o, const struct suppressions *supp,
		       const struct result *res)
{
	size_t i;
	unsigned k;
	int first = 1;

	fprintf(f, "{\"trace\":");
	json_str(f, res->path);
	if (res->status == 2) {
		fprintf(f, ",\"status\":\"error\"}");
		return;
	}
	fprintf(f, ",\"pid\":%d,\"command\":", res->t->hdr.pid);
	json_str(f, report_command(res->t));
	fprintf(f, ",\"status\":\"%s\"", res->skipped ? "skipped" : res->status ? "fail" : "ok");
	if (res->skipped) {
		fprintf(f, "}");
		return;
	}
	fprintf(f, ",\"at\":\"%s\",\"at_ns\":%" PRIu64 ",\"max_leak\":%" PRIu64 ",\"leak_bytes\":%" PRIu64
		   ",\"leak_over\":%s,\"live\":{",
		res->at, res->at_ns, o->max_leak, res->leak_total, res->leak_fail ? "true" : "false");
	for (k = 1; k < MP_KIND_COUNT; k++)
		if (kind_gated(o, k))
			fprintf(f, "%s\"%s\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
				k > 1 && !(first = 0) ? "," : "", kind_name(k), res->live[k][0], res->live[k][1]);
	fprintf(f, "},\"growth\":");
	if (res->growth_checked)
		fprintf(f, "{\"max_growth\":%" PRIu64 ",\"unit\":\"%s\",\"points\":%zu,\"over\":%zu}",
			o->max_growth, res->unit, res->window, res->growth_fail);
	else
		fprintf(f, "null");
	fprintf(f, ",\"suppressed\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"rules\":[",
		res->hidden[0], res->hidden[1]);
	for (i = 0, first = 1; i < supp->n; i++) {
		const struct supp_rule *rule = &supp->rules[i];

		if (!rule->blocks && !rule->sites)
			continue;
		fprintf(f, "%s{\"type\":\"%s\",\"pattern\":", first ? "" : ",",
			rule->type == SUPP_LEAK ? "leak" : "growth");
		first = 0;
		json_str(f, rule->pattern);
		fprintf(f, ",\"source\":");
		json_str(f, rule->source);
		fprintf(f, ",\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"sites\":%" PRIu64 "}",
			rule->bytes, rule->blocks, rule->sites);
	}
	fprintf(f, "]},\"offenders\":[");
	for (i = 0; i < res->n_off; i++) {
		if (i)
			fputc(',', f);
		json_offender(f, res, &res->off[i]);
	}
	fprintf(f, "]}");
}

/* GitHub Actions workflow commands: data and property escaping. */
static void annot_escape(FILE *f, const char *s, int property)
{
	for (; *s; s++) {
		if (*s == '%')
			fputs("%25", f);
		else if (*s == '\r')
			fputs("%0D", f);
		else if (*s == '\n')
			fputs("%0A", f);
		else if (property && *s == ':')
			fputs("%3A", f);
		else if (property && *s == ',')
			fputs("%2C", f);
		else
			fputc(*s, f);
	}
}

static void print_annotations(const struct result *res)
{
	size_t i;

	for (i = 0; i < res->n_off && i < GATE_MAX_ANNOT; i++) {
		char *msg = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&msg, &len);
		const char *file;
		int line;

		if (!m)
			die(1, "out of memory");
		fprintf(m, "memprov: %s: ", res->off[i].growth ? "memory grows" : "memory leaked");
		offender_line(m, res, &res->off[i]);
		fprintf(m, " (trace %s)", res->path);
		fclose(m);
		printf("::error ");
		if (site_location(&res->off[i].s, &file, &line)) {
			printf("file=");
			annot_escape(stdout, file, 1);
			printf(",line=%d", line);
		}
		printf(",title=");
		annot_escape(stdout, res->off[i].growth ? "memprov: growth over budget" : "memprov: leak over budget", 1);
		printf("::");
		annot_escape(stdout, msg, 0);
		printf("\n");
		free(msg);
	}
	if (res->n_off > GATE_MAX_ANNOT)
		printf("::error::memprov: %zu more offending sites in %s (see the report)\n",
		       res->n_off - GATE_MAX_ANNOT, res->path);
}

static void xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c < 0x20 && c != '\n' && c != '\t')
			fputc('?', f);  /* not allowed in XML 1.0 */
		else
			fputc(c, f);
	}
}

static void junit_case(FILE *f, const struct gate_opts *o, const struct suppressions *supp,
		       const struct result *res)
{
	char *body = NULL, *msg = NULL;
	size_t blen = 0, mlen = 0, i;
	FILE *b, *m;

	fprintf(f, "    <testcase classname=\"memprov.check\" name=\"");
	if (res->status != 2) {
		xml_escape(f, report_command(res->t));
		fprintf(f, " (");
	}
	xml_escape(f, res->path);
	fprintf(f, "%s\" time=\"%.3f\">\n", res->status != 2 ? ")" : "", res->duration);
	if (res->status == 2) {
		fprintf(f, "      <error message=\"cannot read the trace\" type=\"unreadable\"/>\n");
		goto out;
	}
	if (res->skipped) {
		fprintf(f, "      <skipped message=\"replaced by exec\"/>\n");
		goto out;
	}
	b = open_memstream(&body, &blen);
	m = open_memstream(&msg, &mlen);
	if (!b || !m)
		die(1, "out of memory");
	budget_text(b, o, res);
	for (i = 0; i < res->n_off; i++) {
		fprintf(b, "    #%zu ", i + 1);
		offender_line(b, res, &res->off[i]);
		fprintf(b, "\n");
		text_frames(b, &res->off[i].s);
	}
	suppressed_text(b, supp, res);
	if (res->status)
		fprintf(m, "%zu site%s over budget", res->n_off, res->n_off == 1 ? "" : "s");
	fclose(b);
	fclose(m);
	if (res->status) {
		fprintf(f, "      <failure message=\"");
		xml_escape(f, msg);
		fprintf(f, "\" type=\"%s\">", res->leak_fail && res->growth_fail ? "leak,growth" :
					  res->growth_fail ? "growth" : "leak");
		xml_escape(f, body);
		fprintf(f, "</failure>\n");
	} else {
		fprintf(f, "      <system-out>");
		xml_escape(f, body);
		fprintf(f, "</system-out>\n");
	}
	free(body);
	free(msg);
out:
	fprintf(f, "    </testcase>\n");
}

static void reset_counts(struct suppressions *supp)
{
	size_t i;

	for (i = 0; i < supp->n; i++)
		supp->rules[i].bytes = supp->rules[i].blocks = supp->rules[i].sites = 0;
}

struct totals {
	size_t tests, failures, errors, skipped;
	double time;
	FILE *junit;              /* testcases, in memory */
	int json_first;
};

/* Gate one trace; print its report; add it to the JUnit cases. */
static int gate_one(const struct gate_opts *o, struct suppressions *supp, const char *path,
		    struct totals *tot)
{
	struct growth_opts go;
	struct result res;
	struct growth g;
	struct trace t;
	struct symbolizer *sym = NULL;
	struct site *sites = NULL;
	size_t n_sites = 0;

	memset(&res, 0, sizeof(res));
	res.path = path;
	reset_counts(supp);
	tot->tests++;
	if (trace_open(&t, path, 0) < 0) {
		res.status = 2;
		tot->errors++;
		goto report;
	}
	res.t = &t;
	if (t.hdr.state == MP_STATE_EXEC) {
		res.skipped = 1;
		tot->skipped++;
		trace_close(&t);
		goto report_closed;
	}
	memset(&go, 0, sizeof(go));
	go.flags = (o->flags & GATE_GROWTH) ? GROWTH_SERIES : 0;
	go.points = 20;
	go.skip = o->skip;
	go.after = o->after;
	go.min_bytes = 1;
	go.mode = SITE_DEFAULT;
	growth_collect(&g, &t, &go);
	res.r = &g.r;
	res.at = t.hdr.state == MP_STATE_EXITED || g.r.have_exit ? "exit" : "end-of-trace";
	res.at_ns = report_rel(&t, g.r.have_exit ? g.r.exit_ts : t.last_ts);
	res.duration = (double)(g.end_ts - g.start_ts) / 1e9;
	if (o->flags & GATE_GROWTH) {
		growth_analyze(&g);
		sym = g.sym;
		check_growth(o, supp, &res, &g);
	} else {
		sym = sym_new(&g.r, 1);
	}
	check_leaks(o, supp, &res, &g.r, sym, &sites, &n_sites);
	res.status = res.leak_fail || res.growth_fail ? 1 : 0;
	tot->failures += res.status;
	tot->time += res.duration;
	if (!(o->flags & GATE_JSON))
		print_text(o, supp, &res);
	else
		print_json(stdout, o, supp, &res), tot->json_first = 0;
	if (o->flags & GATE_ANNOTATIONS)
		print_annotations(&res);
	if (tot->junit)
		junit_case(tot->junit, o, supp, &res);
	free(res.off);
	sites_free(sites, n_sites);
	if (!(o->flags & GATE_GROWTH))
		sym_free(sym);
	growth_release(&g);
	trace_close(&t);
	return res.status;
report:
report_closed:
	if (!(o->flags & GATE_JSON))
		print_text(o, supp, &res);
	else
		print_json(stdout, o, supp, &res), tot->json_first = 0;
	if (tot->junit)
		junit_case(tot->junit, o, supp, &res);
	return res.status;
}

static int write_junit(const struct gate_opts *o, const struct totals *tot, const char *cases)
{
	FILE *f = fopen(o->junit, "w");

	if (!f)
		return error("cannot write JUnit file '%s': %s", o->junit, strerror(errno));
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"memprov\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n",
		tot->tests, tot->failures, tot->errors, tot->time);
	fprintf(f, "  <testsuite name=\"memprov check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
		   "skipped=\"%zu\" time=\"%.3f\">\n",
		tot->tests, tot->failures, tot->errors, tot->skipped, tot->time);
	fputs(cases ? cases : "", f);
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	if (fclose(f))
		return error("cannot write JUnit file '%s': %s", o->junit, strerror(errno));
	return 0;
}

int gate_check(const struct gate_opts *o, char **paths, size_t n)
{
	struct suppressions supp;
	struct totals tot;
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
	tot.json_first = 1;
	if (o->junit) {
		tot.junit = open_memstream(&cases, &len);
		if (!tot.junit)
			die(1, "out of memory");
	}
	if (o->flags & GATE_JSON)
		printf("{\"traces\":[");
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
		if (write_junit(o, &tot, cases) < 0)
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

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		GATE_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gate_opts o;
	int c, ret;

	gate_opts_init(&o);
	opterr = 0;
	optind = 1;
	/* options may follow the traces */
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			gate_opts_release(&o);
			show_usage(stdout, check_cmd);
			return EXIT_OK;
		}
		if (c == '?' || c == ':') {
			gate_opts_release(&o);
			if (optopt >= GATE_OPT_MAX_LEAK)
				return usage_error(check_cmd, "option '%s' needs a value", argv[optind - 1]);
			return usage_error(check_cmd, "unknown option '%s'", argv[optind - 1]);
		}
		ret = gate_opts_set(&o, check_cmd, c, optarg);
		if (ret) {
			gate_opts_release(&o);
			return ret;
		}
	}
	if ((o.flags & GATE_JSON) && (o.flags & GATE_ANNOTATIONS)) {
		gate_opts_release(&o);
		return usage_error(check_cmd, "--json and --annotations both write stdout: choose one");
	}
	if (optind >= argc) {
		gate_opts_release(&o);
		return usage_error(check_cmd, "no trace given");
	}
	ret = gate_check(&o, argv + optind, (size_t)(argc - optind));
	gate_opts_release(&o);
	return ret;
}
