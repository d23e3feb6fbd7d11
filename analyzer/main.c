/*
 * main.c - the memprov command line: subcommand dispatch, usage and help.
 * Only this file exits; subcommands return their exit status.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "util.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
	const char *help;
};

static const struct subcommand subcommands[] = {
	{ "run", cmd_run,
	  "memprov run [-o PATH] [--mark-on MODULE:FUNCTION]... [--check [CHECK OPTIONS]] -- CMD [ARGS...]",
	  "Run CMD with libmemprov.so preloaded and write its trace.\n"
	  "  -o, --output PATH        trace path; %p is the pid (default memprov.%p.trace)\n"
	  "  --mark-on MODULE:FUNC    put a mark each time this Python function is called\n"
	  "  --check [CHECK OPTIONS]  then gate the trace as `memprov check` does (its options\n"
	  "                           go here too): the command's own trace, after any exec\n"
	  "  --children               with --check: gate its child processes' traces too\n"
	  "  --gate-status N          with --check: exit status when CMD succeeded but the\n"
	  "                           gate failed (default 23); 2 when no trace could be read\n"
	  "Exits with CMD's status (128+N if killed by signal N), 127 if CMD is not found.\n"
	  "The library is $MEMPROV_LIB, else ../interpose/libmemprov.so or ../lib/libmemprov.so\n"
	  "next to this program.\n" },
	{ "leaks", cmd_leaks,
	  "memprov leaks [--json] [--native|--python-only] [--alloc-fn NAME]... [--all] TRACE",
	  "Memory still live at the end of the Python main module (if the trace marks it),\n"
	  "else at exit or at the point of death, grouped by allocation site, biggest first.\n"
	  "  --json         one JSON object on stdout\n"
	  "  --native       show every native frame, interpreter frames included\n"
	  "  --python-only  show Python frames only\n"
	  "  --alloc-fn NAME  NAME allocates too ('*' matches any run): sites are its\n"
	  "                 callers, named by it, as for strdup and operator new\n"
	  "  --all          show every site, not the top 20\n" },
	{ "stats", cmd_stats,
	  "memprov stats [--json] TRACE",
	  "Calls, bytes and failures per function; allocations, frees, peak and live\n"
	  "memory per kind; duration, threads, events, marks; whether the trace is cut.\n"
	  "  --json         one JSON object on stdout\n" },
	{ "growth", cmd_growth,
	  "memprov growth [--json|--folded] [--points N] [--skip N] [--after LABEL] [--min-bytes SIZE] [--native|--python-only] [--alloc-fn NAME]... [--all] TRACE",
	  "Live bytes and blocks of every site at each mark (memprov_mark), or at N evenly\n"
	  "spaced instants when the trace has no marks; lists the sites whose live memory\n"
	  "keeps rising (suspects), biggest growth first, with the slope per mark (or per\n"
	  "second), where growth started, bytes at the end and a confidence figure.\n"
	  "A site that rises and falls back (bounded cache, sawtooth) is not a suspect.\n"
	  "  --json            one JSON object on stdout\n"
	  "  --folded          suspects' growth as folded stacks (flamegraph.pl, speedscope)\n"
	  "  --points N        instants when there are no marks (default 20)\n"
	  "  --skip N          leave out the first N marks (or instants): warm-up\n"
	  "  --after LABEL     start at the first mark named LABEL\n"
	  "  --min-bytes SIZE  least growth over the window for a suspect (default 1K)\n"
	  "  --native, --python-only, --alloc-fn NAME   frames shown, as for leaks\n"
	  "  --all             also list the sites that are not suspects\n" },
	{ "peak", cmd_peak,
	  "memprov peak [--json|--folded] [--native|--python-only] [--alloc-fn NAME]... [--all] TRACE",
	  "When live memory peaked (all kinds together, and each kind on its own) and what\n"
	  "was live at the overall peak, by site, biggest first.\n"
	  "  --json         one JSON object on stdout\n"
	  "  --folded       live bytes at the peak as folded stacks\n"
	  "  --native, --python-only, --alloc-fn NAME   frames shown, as for leaks\n"
	  "  --all          show every site, not the top 20\n" },
	{ "timeline", cmd_timeline,
	  "memprov timeline [--json] [--points N] [--min-gap SIZE] TRACE",
	  "Tracked live bytes per kind and resident memory (RSS samples) at N evenly\n"
	  "spaced instants, with the marks; flags a gap when RSS rises while tracked host\n"
	  "memory does not (allocator retention or untracked memory, not a leak).\n"
	  "  --json          one JSON object on stdout\n"
	  "  --points N      instants (default 20)\n"
	  "  --min-gap SIZE  least unexplained RSS rise to flag (default 1M)\n" },
	{ "diff", cmd_diff,
	  "memprov diff [--json] [--growth] [--min-bytes SIZE] [--skip N] [--native|--python-only] [--alloc-fn NAME]... A B",
	  "Sites whose live memory at the end (as leaks measures it) differs between\n"
	  "traces A and B by at least --min-bytes (default 1K), or with --growth, sites\n"
	  "growing in one trace only or whose slopes differ by 10% or more. Sites are\n"
	  "matched by their symbolized frames. Figures are B - A.\n"
	  "  --json            one JSON object on stdout\n"
	  "  --growth          compare growth (suspects and slopes) instead of live at end\n"
	  "  --min-bytes SIZE  least difference listed (default 1K)\n"
	  "  --skip N          with --growth: leave out the first N marks of each trace\n"
	  "  --native, --python-only, --alloc-fn NAME   frames shown, as for leaks\n" },
	{ "html", cmd_html,
	  "memprov html [-o FILE] [--points N] [--skip N] [--after LABEL] [--min-bytes SIZE] [--native|--python-only] [--alloc-fn NAME]... TRACE",
	  "One self-contained HTML page (no network): timeline chart of tracked live memory\n"
	  "per kind, RSS and marks, the gap check, the growing sites (as growth reports\n"
	  "them) and a flame graph of their growth, or of memory live at the end.\n"
	  "  -o, --output FILE   where to write it (default memprov-report.html; - for stdout)\n"
	  "  other options as for growth\n" },
	{ "check", cmd_check,
	  "memprov check [--max-leak SIZE] [--max-growth SIZE] [--kind KIND] [--suppressions FILE]... [--no-default-suppressions] [--skip N] [--after LABEL] [--junit FILE] [--annotations|--json] [--alloc-fn NAME]... TRACE...",
	  "The CI gate: memory still live when each process ended (after suppressions) is\n"
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
	  "  --alloc-fn NAME          NAME allocates too, as for leaks\n" },
	{ "dump", cmd_dump,
	  "memprov dump TRACE",
	  "Every record of the trace in time order, one line each.\n" },
};

static const struct subcommand *find_subcommand(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(subcommands); i++)
		if (!strcmp(subcommands[i].name, name))
			return &subcommands[i];
	return NULL;
}

int show_usage(FILE *f, const char *cmd)
{
	const struct subcommand *s = cmd ? find_subcommand(cmd) : NULL;
	size_t i;

	if (s) {
		fprintf(f, "usage: %s\n\n%s", s->usage, s->help);
		return 0;
	}
	fprintf(f, "usage: memprov SUBCOMMAND [OPTIONS] ...\n\n");
	for (i = 0; i < ARRAY_SIZE(subcommands); i++)
		fprintf(f, "  %s\n", subcommands[i].usage);
	fprintf(f, "\n  memprov help SUBCOMMAND    details of one subcommand\n"
		   "\nExit status: 0 success, 1 failure (unreadable trace, command failed),\n"
		   "2 bad command line; run exits with the command's status.\n");
	return 0;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	const struct subcommand *s = cmd ? find_subcommand(cmd) : NULL;
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "memprov: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (s)
		fprintf(stderr, "usage: %s\n", s->usage);
	else
		show_usage(stderr, NULL);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const struct subcommand *s;

	if (argc < 2)
		return usage_error(NULL, "no subcommand given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		show_usage(stdout, NULL);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			show_usage(stdout, NULL);
			return EXIT_OK;
		}
		if (!find_subcommand(argv[2]))
			return usage_error(NULL, "unknown subcommand '%s'", argv[2]);
		show_usage(stdout, argv[2]);
		return EXIT_OK;
	}
	if (argv[1][0] == '-')
		return usage_error(NULL, "unknown option '%s'", argv[1]);
	s = find_subcommand(argv[1]);
	if (!s)
		return usage_error(NULL, "unknown subcommand '%s'", argv[1]);
	return s->fn(argc - 1, argv + 1);
}
