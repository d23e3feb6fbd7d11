/*
 * report.c - what every report shares: the header lines naming the trace
 * and how the process ended, warnings about damage, the exit status, the
 * first JSON members, opening and replaying the trace, and the options
 * the report subcommands have in common.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fn.h"
#include "inherit.h"
#include "report.h"
#include "trace_chain.h"
#include "util.h"

const char *report_command(const struct trace *t)
{
	return t->hdr.cmdline[0] ? t->hdr.cmdline : t->hdr.exe;
}

const char *report_host(const struct trace *t)
{
	return t->hdr.host[0] ? t->hdr.host : NULL;
}

/* A trace whose process called exec: the trace of the program it became. */
static char *report_successor(const struct trace *t)
{
	return t->hdr.state == MP_STATE_EXEC ? trace_exec_successor(t->path, &t->hdr) : NULL;
}

/* The end of the chain of execs that starts at next: the program's last trace. */
static char *report_chain_end(const char *next)
{
	struct mp_file_header h;
	char *cur = xstrdup(next), *n;
	int steps;

	for (steps = 0; steps < 256; steps++) {
		if (trace_peek(cur, &h) || h.state != MP_STATE_EXEC)
			break;
		n = trace_exec_successor(cur, &h);
		if (!n)
			break;
		free(cur);
		cur = n;
	}
	return cur;
}

void report_header(FILE *f, const struct replay *r)
{
	const struct trace *t = r->trace;
	char buf[512], *next;

	fprintf(f, "trace: %s\n", t->path);
	fprintf(f, "pid: %d, command: ", t->hdr.pid);
	put_text(f, report_command(t), ESC_TEXT);
	fprintf(f, "\nended: ");
	put_text(f, replay_ending(r, buf, sizeof(buf)), ESC_TEXT);
	fputc('\n', f);
	if (t->hdr.state == MP_STATE_EXEC) {
		next = report_successor(t);
		fprintf(f, "continued by: ");
		put_text(f, next ? next : "no trace of the same pid beside this one", ESC_TEXT);
		if (next) {
			char *end = report_chain_end(next);

			if (strcmp(end, next)) {
				fprintf(f, " (its execs end in ");
				put_text(f, end, ESC_TEXT);
				fputc(')', f);
			}
			free(end);
		}
		fputc('\n', f);
		free(next);
	}
	if (t->cut)
		fprintf(f, "warning: trace cut at offset %" PRIu64 ": figures are up to that point\n",
			t->cut_at);
	if (t->damaged)
		fprintf(f, "warning: the trace is damaged: corrupt records were skipped (see stderr)\n");
	if (t->hdr.skipped_total)
		fprintf(f, "warning: %" PRIu64 " event%s could not be recorded (calls made while "
			"memprov was busy, from a signal handler it could not wrap): figures may "
			"miss them; `memprov stats` lists them\n",
			t->hdr.skipped_total, t->hdr.skipped_total == 1 ? "" : "s");
	if (t->hdr.no_room_stacks)
		fprintf(f, "note: %" PRIu64 " allocation%s ha%s no native frames: %s thread had too "
			"little stack left for memprov to walk it (a small thread stack, deep "
			"recursion, an alternate signal stack)\n",
			t->hdr.no_room_stacks, t->hdr.no_room_stacks == 1 ? "" : "s",
			t->hdr.no_room_stacks == 1 ? "s" : "ve", t->hdr.no_room_stacks == 1 ? "its" : "their");
}

int report_status(const struct trace *t)
{
	if (t->cut)
		warning("trace cut at offset %" PRIu64 " in '%s': reporting what was written before",
			t->cut_at, t->path);
	if (t->hdr.skipped_total)
		warning("%" PRIu64 " event%s in '%s' could not be recorded", t->hdr.skipped_total,
			t->hdr.skipped_total == 1 ? "" : "s", t->path);
	if (!t->records && t->damaged) {
		error("nothing could be read from '%s'", t->path);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

void report_json_open(FILE *f, const char *report)
{
	fprintf(f, "{\"schema\":\"memprov.%s/%d\",", report, REPORT_SCHEMA_VERSION);
}

void report_json_trace(FILE *f, const struct trace *t)
{
	fprintf(f, "\"trace\":");
	json_str(f, t->path);
	fprintf(f, ",\"pid\":%d,\"ppid\":%d,\"host\":", t->hdr.pid, t->hdr.ppid);
	json_str(f, report_host(t));
	fprintf(f, ",\"command\":");
	json_str(f, report_command(t));
	if (t->hdr.state == MP_STATE_EXEC) {
		char *next = report_successor(t);

		fprintf(f, ",\"continued_by\":");
		if (next)
			json_str(f, next);
		else
			fprintf(f, "null");
		free(next);
	}
	fprintf(f, ",\"skipped_events\":%" PRIu64 ",\"no_room_stacks\":%" PRIu64,
		t->hdr.skipped_total, t->hdr.no_room_stacks);
}

void report_json_head(FILE *f, const struct trace *t, const char *report)
{
	report_json_open(f, report);
	report_json_trace(f, t);
	fprintf(f, ",\"state\":\"%s\",\"damaged\":%s", state_name(t->hdr.state),
		t->damaged ? "true" : "false");
}

void report_json_exit(FILE *f, const struct trace *t)
{
	fprintf(f, ",\"state\":\"%s\",\"exit_status\":", state_name(t->hdr.state));
	if (t->hdr.state == MP_STATE_EXITED && t->hdr.exit_status != MP_EXIT_UNKNOWN)
		fprintf(f, "%d", t->hdr.exit_status);
	else
		fprintf(f, "null");
	if (t->hdr.state == MP_STATE_KILLED)
		fprintf(f, ",\"signal\":%d", t->hdr.term_signal);
}

void report_json_ending(FILE *f, const struct replay *r)
{
	char buf[512];

	fprintf(f, ",\"ending\":");
	json_str(f, replay_ending(r, buf, sizeof(buf)));
}

int report_replay(struct trace *t, struct replay *r, const char *path, replay_mark_fn on_mark,
		  void *arg)
{
	if (trace_open(t, path, 0) < 0)
		return EXIT_FAIL;
	replay_init(r, t);
	inherit_seed(r);
	r->on_mark = on_mark;
	r->arg = arg;
	replay_run(r);
	return EXIT_OK;
}

int report_close(struct trace *t, struct replay *r)
{
	int ret = report_status(t);

	replay_release(r);
	trace_close(t);
	return ret;
}

/* ---- command lines ---- */

int report_parse_size(const struct command *cmd, const char *opt, const char *arg, uint64_t *out)
{
	if (parse_size(arg, out) < 0)
		return usage_error(cmd, "%s wants a size like 4096, 64K or 1.5MiB, not '%s'", opt, arg);
	return 0;
}

static int parse_uint(const struct command *cmd, const char *opt, const char *arg, uint64_t *out)
{
	char *end;

	*out = strtoull(arg, &end, 10);
	if (!*arg || *end || arg[0] == '-')
		return usage_error(cmd, "%s wants a number, not '%s'", opt, arg);
	return 0;
}

static int parse_points(struct report_args *a, const char *arg)
{
	uint64_t v;

	if (parse_uint(a->cmd, "--points", arg, &v))
		return EXIT_USAGE;
	if (v < 2 || v > 100000)
		return usage_error(a->cmd, "--points wants 2 to 100000, not %s", arg);
	a->o.points = (unsigned)v;
	return 0;
}

/* One option (getopt's code c): 0, or a usage error's status. */
static int report_opt(struct report_args *a, int c, const char *arg)
{
	switch (c) {
	case 'j': a->flags |= REPORT_JSON; return 0;
	case 'f': a->flags |= REPORT_FOLDED; return 0;
	case 'a': a->flags |= REPORT_ALL; return 0;
	case 'D':
		a->flags |= REPORT_NO_DEFAULTS;
		a->o.cat_flags |= CAT_NO_DEFAULTS;
		return 0;
	case 'n':
	case 'p':
		if (a->o.mode != SITE_DEFAULT && a->o.mode != (c == 'n' ? SITE_NATIVE : SITE_PYTHON_ONLY))
			return usage_error(a->cmd, "--native and --python-only do not go together");
		a->o.mode = c == 'n' ? SITE_NATIVE : SITE_PYTHON_ONLY;
		return 0;
	case 'A': a->o.after = arg; return 0;
	case 'R': inherit_set_parent(arg); return 0;
	case 'M': a->flags |= REPORT_PER_PROCESS; return 0;
	case 'F':
		if (alloc_fn_add(arg) < 0)
			return usage_error(a->cmd, "--alloc-fn wants a function name without parameters (1024 at most), not '%s'",
					   arg);
		return 0;
	case 'P': return parse_points(a, arg);
	case 's': return parse_uint(a->cmd, "--skip", arg, &a->o.skip) ? EXIT_USAGE : 0;
	case 'J':
		if (parse_uint(a->cmd, "--jobs", arg, &a->jobs))
			return EXIT_USAGE;
		if (!a->jobs || a->jobs > 1024)
			return usage_error(a->cmd, "--jobs wants 1 to 1024 traces at once, not '%s'", arg);
		return 0;
	case 'm':
		return report_parse_size(a->cmd, "--min-bytes", arg, &a->o.min_bytes) ? EXIT_USAGE : 0;
	}
	return a->own ? a->own(a, c, arg) : usage_error(a->cmd, "unknown option code %d", c);
}

/* What must hold once the options are read. */
static int check_args(const struct report_args *a, int n)
{
	if ((a->flags & REPORT_JSON) && (a->flags & REPORT_FOLDED))
		return usage_error(a->cmd, "--json and --folded do not go together");
	if (a->n_traces == 2)
		return n != 2 ? usage_error(a->cmd, "two traces wanted, A and B") : 0;
	if (a->many && n >= 1)
		return 0;
	if (n != 1)
		return usage_error(a->cmd, !n ? "no %s given" : "more than one %s given",
				   a->operand ? a->operand : "trace");
	return 0;
}

int report_parse(struct report_args *a, int argc, char **argv, int *status)
{
	struct cmdline *cl = &a->cl;
	const char *arg;
	int c, ret = 0;

	*cl = (struct cmdline){ .cmd = a->cmd, .argc = argc, .argv = argv,
				.shortopts = a->shortopts, .longopts = a->opts };
	while ((c = cmdline_next(cl, &arg)) > 0) {
		ret = report_opt(a, c, arg);
		if (ret) {
			c = cmdline_fail(cl, ret);
			break;
		}
	}
	if (c == CMDLINE_END)
		cl->status = check_args(a, cl->n_operands);
	a->traces = cl->operands;
	*status = cl->status;
	return *status || c == CMDLINE_STOP ? -1 : 0;
}

int report_collect(struct growth *g, struct trace *t, const char *path, const struct growth_opts *o)
{
	if (trace_open(t, path, 0) < 0)
		return -1;
	return growth_collect(g, t, o);
}

int report_end(struct growth *g, struct trace *t)
{
	int ret = report_status(t);

	growth_release(g);
	trace_close(t);
	return ret;
}

int report_start(struct report_args *a, int argc, char **argv, struct growth *g, struct trace *t,
		 int *status)
{
	if (report_parse(a, argc, argv, status) < 0)
		return -1;
	if (report_collect(g, t, a->traces[0], &a->o) == 0)
		return 0;
	*status = EXIT_FAIL;
	return -1;
}
