/*
 * report.c - what every report shares: the header lines naming the trace
 * and how the process ended, warnings about damage, the exit status.
 */
#include <inttypes.h>
#include <string.h>

#include "report.h"
#include "util.h"

const char *report_command(const struct trace *t)
{
	return t->hdr.cmdline[0] ? t->hdr.cmdline : t->hdr.exe;
}

uint64_t report_rel(const struct trace *t, uint64_t ts)
{
	uint64_t start = t->hdr.start_mono_ns ? t->hdr.start_mono_ns : t->first_ts;

	return ts > start ? ts - start : 0;
}

/* s on one line: control characters as \n, \t, \xNN. */
static void print_oneline(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

void report_header(FILE *f, const struct replay *r)
{
	const struct trace *t = r->trace;
	char buf[512];

	fprintf(f, "trace: %s\n", t->path);
	fprintf(f, "pid: %d, command: ", t->hdr.pid);
	print_oneline(f, report_command(t));
	fputc('\n', f);
	fprintf(f, "ended: %s\n", replay_ending(r, buf, sizeof(buf)));
	if (t->cut)
		fprintf(f, "warning: trace cut at offset %" PRIu64 ": figures are up to that point\n",
			t->cut_at);
	if (t->damaged)
		fprintf(f, "warning: the trace is damaged: corrupt records were skipped (see stderr)\n");
}

int report_status(const struct trace *t)
{
	if (t->cut)
		warning("trace cut at offset %" PRIu64 " in '%s': reporting what was written before",
			t->cut_at, t->path);
	if (!t->records && t->damaged) {
		error("nothing could be read from '%s'", t->path);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
