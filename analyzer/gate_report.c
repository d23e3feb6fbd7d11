/*
 * gate_report.c - what `memprov check` writes for each trace: a short
 * text report or a JSON object on stdout, GitHub Actions annotations
 * (::error file=F,line=L::) and a JUnit test case per trace, and one per
 * test when the trace has test marks.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "category.h"
#include "gate_report.h"
#include "inherit.h"
#include "report.h"
#include "util.h"

#define GATE_TOP 10         /* offending sites shown per trace in text */
#define GATE_FRAMES 8       /* frames shown per site in text */
#define GATE_MAX_ANNOT 50   /* annotations per trace */

/* The file name of a frame's module, without its directory (NULL: none). */
static const char *module_name(const struct sym_frame *f)
{
	const char *b = f->module ? strrchr(f->module, '/') : NULL;

	return b ? b + 1 : f->module;
}

/* Frames of the CUDA runtime or driver: the program's call is the place to name. */
static int in_cuda_lib(const struct sym_frame *f)
{
	const char *b = module_name(f);

	return b && (!strncmp(b, "libcudart", 9) || !strncmp(b, "libcuda.", 8));
}

/*
 * The Python frame to name: the innermost of the program's own code, the
 * line it can change and the file a CI annotation can point at (a kept
 * base64 string made in base64.py is named at the program's line that
 * called b64encode; the frames still show the library's); with no frame
 * of its own, the innermost not of generated code.
 */
/* Frame j is "<string>" code that library code ran (a dataclass's or a
 * namedtuple's generated __init__): its nearest caller with a file of
 * its own is the library's. */
static int string_of_library(const struct site *s, size_t j)
{
	if (!s->python[j].file || strcmp(s->python[j].file, "<string>"))
		return 0;
	for (j++; j < s->n_python; j++) {
		const char *f = s->python[j].file;

		if (f && !cat_generated_file(f) && strcmp(f, "<string>"))
			return cat_library_file(f);
	}
	return 0;
}

static size_t site_py_frame(const struct site *s)
{
	size_t j;

	for (j = 0; j < s->n_python; j++)
		if (s->python[j].file && !cat_generated_file(s->python[j].file) &&
		    !cat_library_file(s->python[j].file) && !string_of_library(s, j))
			return j;
	for (j = 0; j < s->n_python; j++)
		if (s->python[j].file && !cat_generated_file(s->python[j].file))
			return j;
	return 0;
}

/* The C library's own frames (start_thread, __libc_start_call_main,
 * fopen): their lines say where a thread or the program started, not
 * which call allocated. */
static int in_libc(const struct sym_frame *f)
{
	const char *b = module_name(f);

	return b && !strncmp(b, "libc.so", 7);
}

/*
 * The C++ standard library: its headers' templates, inlined into the
 * program (std::vector's push_back allocates in new_allocator.h), and
 * its shared object. A site named there says which container, not which
 * of the program's lines (`in std::__new_allocator<int>::allocate at
 * /usr/include/c++/12/bits/new_allocator.h:137`).
 */
static int in_cxx_std(const struct sym_frame *f)
{
	const char *b = module_name(f);

	return (f->file && strstr(f->file, "/include/c++/")) ||
	       (b && (!strncmp(b, "libstdc++.so", 12) || !strncmp(b, "libc++.so", 9)));
}

/*
 * The native frame to name: the innermost with a source line, outside
 * the C++ standard library and with a readable file preferred, in that
 * order; memprov's, the CUDA libraries' and libc's own frames left out;
 * -1: none (the site is named by its innermost frame, without a line: a
 * frame of a library without line tables is a better name than the line
 * where its thread started).
 */
static ssize_t site_native_frame(const struct site *s)
{
	size_t j;
	int pass;

	for (pass = 0; pass < 4; pass++)
		for (j = 0; j < s->n_native; j++) {
			const struct sym_frame *f = s->native[j];

			if (f->file && f->line > 0 && !f->memprov && !in_cuda_lib(f) &&
			    !in_libc(f) && (pass >= 2 || !in_cxx_std(f)) &&
			    ((pass & 1) || !access(f->file, R_OK)))
				return (ssize_t)j;
		}
	return -1;
}

/* Where the site allocated: Python first (site_py_frame: generated code
 * has no file to open), else site_native_frame's line. */
static int site_location(const struct site *s, const char **file, int *line)
{
	size_t j = site_py_frame(s);
	ssize_t n;

	if (s->n_python && s->python[j].file) {
		*file = s->python[j].file;
		*line = (int)s->python[j].line;
		return 1;
	}
	n = site_native_frame(s);
	if (n < 0)
		return 0;
	*file = s->native[n]->file;
	*line = s->native[n]->line;
	return 1;
}

/* "function" of the frame site_location names, for one-line messages. */
static const char *site_function(const struct site *s, char *buf, size_t len)
{
	ssize_t n;

	if (s->n_python)
		return s->python[site_py_frame(s)].function;
	if (!s->n_native)
		return "(no stack recorded)";
	n = site_native_frame(s);
	if (n < 0)
		n = 0;
	return s->native[n]->function ? s->native[n]->function : sym_fallback(s->native[n], buf, len);
}

/* The instant leaks are judged at, as words. */
static const char *at_text(const struct result *res)
{
	return !strcmp(res->at, "main-end") ? "the end of the main module" : res->at;
}

/*
 * What the verdict counts, as words: "lost at exit", "live at exit"; in
 * full: "lost at exit (definitely and indirectly)".
 */
static void gated_text(FILE *f, const struct result *res, int full)
{
	if (res->rule == GATE_RULE_LOST)
		fprintf(f, "lost at %s%s", at_text(res), full ? " (definitely and indirectly)" : "");
	else
		fprintf(f, "live at %s", at_text(res));
}

/* How many classes an offender's blocks fall in; *first: the first in report order. */
static unsigned offender_classes(const struct offender *off, unsigned *first)
{
	unsigned i, n = 0;

	*first = MP_REACH_UNKNOWN;
	for (i = 0; off->have_cls && i < MP_REACH_CLASS_COUNT; i++) {
		unsigned c = reach_class_at(i);

		if (!off->cls[c][0])
			continue;
		if (!n++)
			*first = c;
	}
	return n;
}

/*
 * "definitely lost at exit", "lost at exit (1 definitely, 99 indirectly)",
 * "live at exit (still reachable)", "live at exit": an offender's blocks,
 * by the scan's classes where known.
 */
static void offender_at(FILE *f, const struct result *res, const struct offender *off)
{
	char c[HUMAN_LEN];
	unsigned first, n = offender_classes(off, &first), i, k = 0;

	if (res->rule == GATE_RULE_LOST && n == 1) {
		fprintf(f, "%s at %s", reach_class_text(first), at_text(res));
		return;
	}
	gated_text(f, res, 0);
	if (!n)
		return;
	if (n == 1) {
		fprintf(f, " (%s)", reach_class_text(first));
		return;
	}
	fprintf(f, " (");
	/*
	 * Under the lost rule the gated classes first ("1 definitely, 99
	 * indirectly"), then the site's blocks the rule leaves out, said
	 * apart: they are not in the count before the parenthesis.
	 */
	for (int gated = 1; gated >= 0; gated--) {
		int any = 0;

		for (i = 0; i < MP_REACH_CLASS_COUNT; i++) {
			unsigned cls = reach_class_at(i);
			const char *name = reach_class_text(cls);
			int lost = !!strstr(name, " lost") && cls != MP_REACH_POSSIBLE;

			if (!off->cls[cls][0] ||
			    (res->rule == GATE_RULE_LOST && lost != gated) ||
			    (res->rule != GATE_RULE_LOST && !gated))
				continue;
			if (!gated && !any++)
				fprintf(f, "%snot gated: ", k ? "; " : "");
			else if (k)
				fprintf(f, ", ");
			k++;
			fprintf(f, "%s ", fmt_count(c, sizeof(c), off->cls[cls][0]));
			if (res->rule == GATE_RULE_LOST && gated)
				fprintf(f, "%.*s", (int)(strstr(name, " lost") - name), name);
			else
				fputs(name, f);
		}
	}
	fputc(')', f);
}

static void offender_line(FILE *f, const struct result *res, const struct offender *off)
{
	char b1[HUMAN_LEN], b2[HUMAN_LEN], c[HUMAN_LEN], fn[512];
	const char *file;
	int line;

	if (off->growth)
		fprintf(f, "%s %s grows %s per %s (%s over the window, %s live at its end)",
			kind_name(off->s.kind), site_api(&off->s),
			human_bytes(b1, sizeof(b1), off->slope > 0 ? (uint64_t)off->slope : 0), res->unit,
			human_bytes(b2, sizeof(b2), off->growth_bytes > 0 ? (uint64_t)off->growth_bytes : 0),
			human_bytes(fn, sizeof(fn), off->s.bytes));
	else
		fprintf(f, "%s %s: %s in %s block%s ", kind_name(off->s.kind),
			site_api(&off->s), human_bytes(b1, sizeof(b1), off->s.bytes),
			fmt_count(c, sizeof(c), off->s.blocks), off->s.blocks == 1 ? "" : "s");
	if (off->test && off->growth)
		fprintf(f, " since test");
	if (off->test) {
		fprintf(f, "%s", off->growth ? " " : "kept by test ");
		put_text(f, off->test, ESC_TEXT);
	} else if (!off->growth) {
		offender_at(f, res, off);
	}
	fprintf(f, " in ");
	put_text(f, site_function(&off->s, fn, sizeof(fn)), ESC_TEXT);
	if (site_location(&off->s, &file, &line)) {
		fprintf(f, " at ");
		put_text(f, file, ESC_TEXT);
		fprintf(f, ":%d", line);
	}
}

/* Offenders [from, from + n), each with its frames. */
static void offenders_text(FILE *f, const struct result *res, size_t from, size_t n,
			   const char *indent)
{
	size_t i;

	for (i = 0; i < n; i++) {
		fprintf(f, "%s#%zu ", indent, i + 1);
		offender_line(f, res, &res->off[from + i]);
		fprintf(f, "\n");
		site_text(f, &res->off[from + i].s, SITE_DEFAULT, GATE_FRAMES);
	}
}

/* With test marks: the tests over budget, each with what it kept. */
static void tests_text(FILE *f, const struct gate_opts *o, const struct result *res, size_t max)
{
	char b1[32], b2[32];
	size_t i, unfinished = 0;

	for (i = 0; i < res->n_tests; i++)
		unfinished += !res->tests[i].t->end_ts;
	fprintf(f, "  per test: %zu test%s, %zu over budget (what each kept from its start to its end, "
		"budget %s, %s)%s\n", res->n_tests, res->n_tests == 1 ? "" : "s", res->tests_failed,
		human_bytes(b1, sizeof(b1), o->max_leak), o->kinds ? "the kinds given" : "all kinds",
		res->tests_failed ? ": over budget" : "");
	if (unfinished)
		fprintf(f, "  %zu test%s did not end (the run stopped in it): not judged\n", unfinished,
			unfinished == 1 ? "" : "s");
	for (i = 0; i < res->n_tests; i++) {
		const struct test_result *tr = &res->tests[i];

		if (!tr->fail)
			continue;
		fprintf(f, "  FAIL ");
		put_text(f, tr->t->nodeid, ESC_TEXT);
		fprintf(f, ": kept %s in %" PRIu64 " block%s\n", human_bytes(b2, sizeof(b2), tr->bytes),
			tr->blocks, tr->blocks == 1 ? "" : "s");
		offenders_text(f, res, tr->off0, tr->n_off < max ? tr->n_off : max, "    ");
	}
	fprintf(f, "  the process as a whole is not judged for leaks: what it keeps outside the "
		"tests is the test runner's and the modules'\n");
}

/*
 * The scan's classes (all kinds, before suppressions), and under the lost
 * rule, what it leaves out.
 */
static void classes_text(FILE *f, const struct result *res)
{
	const struct reach_view *v = res->rv;

	if (!v || !v->shown)
		return;
	fprintf(f, "  reachability at %s (all kinds, before suppressions): ", reach_when(res->r));
	reach_text_line(f, v);
	fputc('\n', f);
	if (res->rule == GATE_RULE_LOST)
		fprintf(f, "  still reachable and possibly lost memory is not gated (`--reachable` gates all "
			"live memory)\n");
}

static void budget_text(FILE *f, const struct gate_opts *o, const struct result *res)
{
	char b1[HUMAN_LEN], b2[HUMAN_LEN], b3[HUMAN_LEN], c[HUMAN_LEN];
	unsigned k;

	if (res->n_tests) {
		/* judged per test (tests_text) */
	} else if (o->kinds) {
		for (k = 1; k < MP_KIND_COUNT; k++)
			if (o->kinds & (1u << k)) {
				fprintf(f, "  %s ", kind_name(k));
				gated_text(f, res, 1);
				fprintf(f, ": %s in %s block%s (budget %s)%s\n",
					bytes_exact(b1, sizeof(b1), res->live[k][1]),
					fmt_count(c, sizeof(c), res->live[k][0]), res->live[k][0] == 1 ? "" : "s",
					human_bytes(b2, sizeof(b2), o->max_leak),
					res->leak_fail & (1u << k) ? ": over budget" : "");
			}
	} else {
		uint64_t blocks = 0;

		for (k = 1; k < MP_KIND_COUNT; k++)
			blocks += res->live[k][0];
		fprintf(f, "  ");
		gated_text(f, res, 1);
		fprintf(f, ": %s in %s block%s (budget %s, all kinds)%s\n",
			bytes_exact(b1, sizeof(b1), res->leak_total), fmt_count(c, sizeof(c), blocks),
			blocks == 1 ? "" : "s",
			human_bytes(b2, sizeof(b2), o->max_leak), res->leak_fail ? ": over budget" : "");
	}
	if (!res->n_tests)
		classes_text(f, res);
	if (res->growth_checked) {
		if (res->window < 3)
			fprintf(f, "  growth: not judged: %zu point%s in the window (at least 3)\n",
				res->window, res->window == 1 ? "" : "s");
		else
			fprintf(f, "  growth over %zu %ss: %zu site%s over %s per %s (%s%s)\n", res->window,
				!strcmp(res->unit, "s") ? "instant" : res->unit, res->growth_fail,
				res->growth_fail == 1 ? "" : "s", human_bytes(b3, sizeof(b3), o->max_growth),
				res->unit,
				strcmp(res->unit, "s") ? "" : res->marks == 1 ? "one mark: " : "no marks: ",
				res->growth_why);
	}
	if (res->cat)
		cat_text(f, res->cat, "  ", "gates them");
}

static void suppressed_text(FILE *f, const struct suppressions *supp, const struct result *res)
{
	char b1[HUMAN_LEN], c[HUMAN_LEN];
	size_t i;

	if (!res->hidden[0] && !res->hidden[1]) {
		int any = 0;

		for (i = 0; i < supp->n; i++)
			any |= supp->rules[i].sites != 0;
		if (!any)
			return;
	}
	fprintf(f, "  suppressed: %s in %s block%s\n", bytes_exact(b1, sizeof(b1), res->hidden[1]),
		fmt_count(c, sizeof(c), res->hidden[0]), res->hidden[0] == 1 ? "" : "s");
	for (i = 0; i < supp->n; i++) {
		const struct supp_rule *rule = &supp->rules[i];

		if (rule->blocks)
			fprintf(f, "    %s in %s block%s: leak:%s (%s%s%s)\n",
				bytes_exact(b1, sizeof(b1), rule->bytes), fmt_count(c, sizeof(c), rule->blocks),
				rule->blocks == 1 ? "" : "s", rule->pattern, rule->source,
				rule->why ? ": " : "", rule->why ? rule->why : "");
		if (rule->sites)
			fprintf(f, "    %" PRIu64 " growing site%s by growth:%s (%s)\n", rule->sites,
				rule->sites == 1 ? "" : "s", rule->pattern, rule->source);
	}
}

/* What a death the scan saw was (interpose/hooks_signal.c scans these). */
static const char *death_kind(int sig)
{
	if (sig == SIGABRT)
		return "an abort";
	if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)
		return "a fault";
	return "a request to end";
}

static void print_text(const struct gate_opts *o, const struct suppressions *supp,
		       const struct result *res)
{
	size_t shown, n;

	if (res->status == 2) {
		printf("memprov check: %s: %s\n", res->path, res->error);
		return;
	}
	printf("memprov check: %s (pid %d: ", res->path, res->t->hdr.pid);
	put_text(stdout, report_command(res->t), ESC_TEXT);
	printf("): ");
	if (res->skipped) {
		printf("not gated: %s\n", res->skip_why);
		return;
	}
	printf("%s%s%s\n", color(stdout, res->status ? COLOR_FAIL : COLOR_OK), res->status ? "FAIL" : "ok",
	       color(stdout, COLOR_RESET));
	if (!strcmp(res->at, "end-of-trace") && res->t->hdr.state == MP_STATE_STOPPED) {
		char why[256];

		printf("  %s before the process ended: live when it stopped\n",
		       replay_ending(res->r, why, sizeof(why)));
	} else if (!strcmp(res->at, "end-of-trace") && res->t->hdr.state == MP_STATE_KILLED) {
		const char *abbrev = sigabbrev_np(res->t->hdr.term_signal);

		if (res->rule == GATE_RULE_LOST)
			printf("  the process was killed by SIG%s (signal %d), %s: scanned as it came\n",
			       abbrev ? abbrev : "?", res->t->hdr.term_signal,
			       death_kind(res->t->hdr.term_signal));
		else
			printf("  the process was killed by SIG%s (signal %d): live at the point of death\n",
			       abbrev ? abbrev : "?", res->t->hdr.term_signal);
	} else if (!strcmp(res->at, "end-of-trace")) {
		printf("  the process did not exit (killed, or still running): live at the end of the trace\n");
	}
	else if (!strcmp(res->at, "main-end"))
		printf("  a Python program: live at the end of its main module, before finalization\n");
	if (res->rule_why == GATE_WHY_NO_SCAN)
		printf("  %s: all memory live at the end is gated, as with --reachable\n", res->no_scan);
	if (res->t->hdr.no_room_stacks)
		printf("  note: %" PRIu64 " allocation%s ha%s no native frames: too little stack was "
		       "left to walk\n", res->t->hdr.no_room_stacks,
		       res->t->hdr.no_room_stacks == 1 ? "" : "s",
		       res->t->hdr.no_room_stacks == 1 ? "s" : "ve");
	if (res->n_tests)
		tests_text(stdout, o, res, GATE_TOP);
	budget_text(stdout, o, res);
	inherit_text(stdout, res->r, "  ");
	/* with tests, theirs are listed above: growth's (first in off[]) here */
	for (n = 0; res->n_tests && n < res->n_off && res->off[n].growth; )
		n++;
	if (!res->n_tests)
		n = res->n_off;
	shown = n < GATE_TOP ? n : GATE_TOP;
	if (n)
		printf("  %zu offending site%s%s:\n", n, n == 1 ? "" : "s",
		       shown < n ? ", biggest first (first 10 shown)" : ", biggest first");
	offenders_text(stdout, res, 0, shown, "    ");
	suppressed_text(stdout, supp, res);
}

static void json_offender(FILE *f, const struct result *res, const struct offender *off)
{
	const char *file;
	int line;

	fprintf(f, "{\"type\":\"%s\",", off->growth ? "growth" : "leak");
	site_json(f, &off->s);
	fprintf(f, ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64, off->s.blocks, off->s.bytes);
	if (off->growth)
		fprintf(f, ",\"slope\":%.2f,\"unit\":\"%s\",\"growth_bytes\":%" PRId64, off->slope,
			res->unit, off->growth_bytes);
	fprintf(f, ",\"test\":");
	json_str(f, off->test);
	if (off->have_cls) {
		unsigned first;

		offender_classes(off, &first);
		fprintf(f, ",\"class\":\"%s\",\"reach\":", reach_class_name(first));
		reach_json_counts(f, (const uint64_t (*)[2])off->cls);
	} else {
		fprintf(f, ",\"class\":null,\"reach\":null");
	}
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

/* "tests":[...]: with test marks, each test's verdict. */
static void json_tests(FILE *f, const struct result *res)
{
	size_t i, j;

	fprintf(f, ",\"tests\":");
	if (!res->n_tests) {
		fprintf(f, "null");
		return;
	}
	fputc('[', f);
	for (i = 0; i < res->n_tests; i++) {
		const struct test_result *tr = &res->tests[i];

		fprintf(f, "%s{\"nodeid\":", i ? "," : "");
		json_str(f, tr->t->nodeid);
		fprintf(f, ",\"status\":\"%s\",\"duration_ns\":%" PRIu64 ",\"kept_bytes\":%" PRIu64
			",\"kept_blocks\":%" PRIu64 ",\"offenders\":[",
			!tr->t->end_ts ? "unfinished" : tr->fail ? "fail" : "ok",
			tr->t->end_ts ? tr->t->end_ts - tr->t->start_ts : 0, tr->bytes, tr->blocks);
		for (j = 0; j < tr->n_off; j++) {
			if (j)
				fputc(',', f);
			json_offender(f, res, &res->off[tr->off0 + j]);
		}
		fprintf(f, "]}");
	}
	fputc(']', f);
}

/* "rule_reason" in JSON, by enum gate_rule_why. */
static const char *const rule_reason[] = {
	[GATE_WHY_NATIVE] = "native", [GATE_WHY_PYTHON] = "python",
	[GATE_WHY_REACHABLE] = "reachable-option", [GATE_WHY_NO_SCAN] = "no-scan",
};

static void print_json(FILE *f, const struct gate_opts *o, const struct suppressions *supp,
		       const struct result *res)
{
	size_t i;
	unsigned k;
	int first = 1;

	fprintf(f, "{\"trace\":");
	json_str(f, res->path);
	if (res->status == 2) {
		fprintf(f, ",\"status\":\"error\",\"error\":");
		json_str(f, res->error);
		fprintf(f, "}");
		return;
	}
	fprintf(f, ",\"pid\":%d,\"command\":", res->t->hdr.pid);
	json_str(f, report_command(res->t));
	fprintf(f, ",\"status\":\"%s\"", res->skipped ? "skipped" : res->status ? "fail" : "ok");
	if (res->skipped) {
		fprintf(f, ",\"reason\":");
		json_str(f, res->skip_why);
		fprintf(f, "}");
		return;
	}
	fprintf(f, ",\"skipped_events\":%" PRIu64 ",\"no_room_stacks\":%" PRIu64,
		res->t->hdr.skipped_total, res->t->hdr.no_room_stacks);
	fprintf(f, ",\"at\":\"%s\",\"at_ns\":%" PRIu64 ",\"rule\":\"%s\",\"rule_reason\":\"%s\",\"warning\":",
		res->at, res->at_ns, res->rule == GATE_RULE_LOST ? "lost" : "live", rule_reason[res->rule_why]);
	json_str(f, res->no_scan);
	fprintf(f, ",\"max_leak\":%" PRIu64 ",\"leak_bytes\":%" PRIu64 ",\"leak_over\":%s,\"live\":{",
		o->max_leak, res->leak_total, res->leak_fail ? "true" : "false");
	for (k = 1; k < MP_KIND_COUNT; k++)
		if (gate_kind_gated(o, k))
			fprintf(f, "%s\"%s\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
				first ? (first = 0, "") : ",", kind_name(k), res->live[k][0], res->live[k][1]);
	fprintf(f, "},");
	reach_json(f, res->rv, res->r);
	inherit_json(f, res->r);
	json_tests(f, res);
	fprintf(f, ",\"growth\":");
	if (res->growth_checked) {
		fprintf(f, "{\"max_growth\":%" PRIu64 ",\"unit\":\"%s\",\"points\":%zu,\"over\":%zu,\"why\":",
			o->max_growth, res->unit, res->window, res->growth_fail);
		json_str(f, res->growth_why);
		fputc('}', f);
	} else {
		fprintf(f, "null");
	}
	if (res->cat)
		cat_json_state(f, res->cat);
	fprintf(f, ",\"suppressed\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"rules\":[",
		res->hidden[0], res->hidden[1]);
	for (i = 0, first = 1; i < supp->n; i++) {
		const struct supp_rule *rule = &supp->rules[i];

		if (!rule->blocks && !rule->sites)
			continue;
		fprintf(f, "%s{\"type\":\"%s\",\"pattern\":", first ? "" : ",",
			rule->type == SUPP_GROWTH ? "growth" : "leak");
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

/* "memprov: definitely lost memory over budget": what the annotation is about. */
static const char *annotation_title(const struct offender *off, char *buf, size_t len)
{
	unsigned first;

	if (off->growth)
		return "memprov: growth over budget";
	if (off->test)
		return "memprov: leak in a test over budget";
	if (!offender_classes(off, &first))
		return "memprov: leak over budget";
	snprintf(buf, len, "memprov: %s memory over budget", reach_class_text(first));
	return buf;
}

static void print_annotations(const struct result *res)
{
	char title[128];
	size_t i;

	for (i = 0; i < res->n_off && i < GATE_MAX_ANNOT; i++) {
		const struct offender *off = &res->off[i];
		char *msg = NULL;
		size_t len = 0;
		FILE *m = xopen_memstream(&msg, &len);
		const char *file;
		int line;

		fprintf(m, "memprov: %s: ", off->growth ? "memory grows" :
			   off->test ? "a test kept memory" :
			   res->rule == GATE_RULE_LOST ? "memory lost" : "memory leaked");
		offender_line(m, res, off);
		fprintf(m, " (trace %s)", res->path);
		fclose(m);
		printf("::error ");
		if (site_location(&off->s, &file, &line)) {
			printf("file=");
			put_text(stdout, file, ESC_ANNOT_PROPERTY);
			printf(",line=%d,", line);
		}
		printf("title=");
		put_text(stdout, annotation_title(off, title, sizeof(title)), ESC_ANNOT_PROPERTY);
		if (off->test) {
			put_text(stdout, " (", ESC_ANNOT_PROPERTY);
			put_text(stdout, off->test, ESC_ANNOT_PROPERTY);
			put_text(stdout, ")", ESC_ANNOT_PROPERTY);
		}
		printf("::");
		put_text(stdout, msg, ESC_ANNOT_DATA);
		printf("\n");
		free(msg);
	}
	if (res->n_off > GATE_MAX_ANNOT) {
		printf("::error::memprov: %zu more offending sites in ", res->n_off - GATE_MAX_ANNOT);
		put_text(stdout, res->path, ESC_ANNOT_DATA);
		printf(" (see the report)\n");
	}
}

/* A JUnit failure element: message, type, and the body. */
static void junit_failure(FILE *f, const char *msg, const char *type, const char *body)
{
	fprintf(f, "      <failure message=\"");
	put_text(f, msg, ESC_XML);
	fprintf(f, "\" type=\"%s\">", type);
	put_text(f, body, ESC_XML);
	fprintf(f, "</failure>\n");
}

/*
 * One test case per test of a run with test marks: classname the node
 * id's file (before "::"), name the rest.
 */
static void junit_tests(FILE *f, const struct result *res, struct gate_totals *tot)
{
	char b1[32], *body = NULL;
	size_t i, blen = 0;

	for (i = 0; i < res->n_tests; i++) {
		const struct test_result *tr = &res->tests[i];
		const char *id = tr->t->nodeid, *sep = strstr(id, "::");
		FILE *b;

		tot->cases++;
		fprintf(f, "    <testcase classname=\"");
		if (sep) {
			char *file = xstrndup(id, (size_t)(sep - id));

			put_text(f, file, ESC_XML);
			free(file);
		} else {
			fprintf(f, "memprov.test");
		}
		fprintf(f, "\" name=\"");
		put_text(f, sep ? sep + 2 : id, ESC_XML);
		fprintf(f, "\" time=\"%.3f\">\n",
			tr->t->end_ts ? (double)(tr->t->end_ts - tr->t->start_ts) / 1e9 : 0.0);
		if (!tr->t->end_ts) {
			tot->skipped++;
			fprintf(f, "      <skipped message=\"the run stopped in this test\"/>\n");
		} else if (tr->fail) {
			tot->case_failures++;
			b = xopen_memstream(&body, &blen);
			fprintf(b, "test ");
			put_text(b, id, ESC_TEXT);
			fprintf(b, " kept %s in %" PRIu64 " block%s (trace %s)\n",
				human_bytes(b1, sizeof(b1), tr->bytes), tr->blocks,
				tr->blocks == 1 ? "" : "s", res->path);
			offenders_text(b, res, tr->off0, tr->n_off, "    ");
			fclose(b);
			junit_failure(f, "memory kept by the test over budget", "leak", body);
			free(body);
			body = NULL;
		}
		fprintf(f, "    </testcase>\n");
	}
}

static void junit_case(FILE *f, const struct gate_opts *o, const struct suppressions *supp,
		       const struct result *res, struct gate_totals *tot)
{
	char *body = NULL, *msg = NULL, b1[HUMAN_LEN];
	size_t blen = 0, mlen = 0, n_growth = 0;
	int fail = res->status == 1;
	FILE *b, *m;

	if (res->n_tests)
		junit_tests(f, res, tot);
	while (n_growth < res->n_off && res->off[n_growth].growth)
		n_growth++;
	if (res->n_tests) /* the tests carry their leaks: the trace carries growth */
		fail = res->growth_fail > 0;
	tot->cases++;
	tot->case_failures += fail;
	fprintf(f, "    <testcase classname=\"memprov.check\" name=\"");
	if (res->status != 2) {
		put_text(f, report_command(res->t), ESC_XML);
		fprintf(f, " (");
	}
	put_text(f, res->path, ESC_XML);
	fprintf(f, "%s\" time=\"%.3f\">\n", res->status != 2 ? ")" : "", res->duration);
	if (res->status == 2) {
		fprintf(f, "      <error message=\"");
		put_text(f, res->error, ESC_XML);
		fprintf(f, "\" type=\"%s\"/>\n", res->t ? "empty-window" : "unreadable");
		goto out;
	}
	if (res->skipped) {
		fprintf(f, "      <skipped message=\"");
		put_text(f, res->skip_why, ESC_XML);
		fprintf(f, "\"/>\n");
		goto out;
	}
	b = xopen_memstream(&body, &blen);
	m = xopen_memstream(&msg, &mlen);
	budget_text(b, o, res);
	offenders_text(b, res, 0, res->n_tests ? n_growth : res->n_off, "    ");
	suppressed_text(b, supp, res);
	if (fail)
		fprintf(m, "%zu site%s over budget", res->n_tests ? n_growth : res->n_off,
			(res->n_tests ? n_growth : res->n_off) == 1 ? "" : "s");
	if (fail && res->leak_fail && !res->n_tests) {
		fprintf(m, ": %s ", bytes_exact(b1, sizeof(b1), res->leak_total));
		gated_text(m, res, 1);
	}
	fclose(b);
	fclose(m);
	if (fail) {
		junit_failure(f, msg, res->leak_fail && res->growth_fail && !res->n_tests ? "leak,growth" :
				      res->growth_fail ? "growth" : "leak", body);
	} else {
		fprintf(f, "      <system-out>");
		put_text(f, body, ESC_XML);
		fprintf(f, "</system-out>\n");
	}
	free(body);
	free(msg);
out:
	fprintf(f, "    </testcase>\n");
}

void gate_write(const struct gate_opts *o, const struct suppressions *supp,
		const struct result *res, struct gate_totals *tot)
{
	if (!(o->flags & GATE_JSON))
		print_text(o, supp, res);
	else
		print_json(stdout, o, supp, res);
	if (o->flags & GATE_ANNOTATIONS)
		print_annotations(res);
	if (tot->junit)
		junit_case(tot->junit, o, supp, res, tot);
}

int gate_write_junit(const struct gate_opts *o, const struct gate_totals *tot, const char *cases)
{
	FILE *f = fopen(o->junit, "w");

	if (!f)
		return error("cannot write JUnit file '%s': %s", o->junit, strerror(errno));
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"memprov\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n",
		tot->cases, tot->case_failures, tot->errors, tot->time);
	fprintf(f, "  <testsuite name=\"memprov check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
		   "skipped=\"%zu\" time=\"%.3f\">\n",
		tot->cases, tot->case_failures, tot->errors, tot->skipped, tot->time);
	fputs(cases ? cases : "", f);
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	if (fclose(f))
		return error("cannot write JUnit file '%s': %s", o->junit, strerror(errno));
	note_written("JUnit file", o->junit);
	return 0;
}
