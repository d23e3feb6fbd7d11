/*
 * main.c - the memprov command line: finds the subcommand and hands it
 * the arguments; `memprov --help`, `memprov help [NAME]`, `memprov
 * --version` and `memprov version`, and --color=WHEN before the
 * subcommand. Each subcommand owns its usage text and options (struct
 * command, in its own file); nothing calls back into this file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "command.h"
#include "memprov_trace.h"
#include "report.h"
#include "util.h"

#ifndef MEMPROV_VERSION
#define MEMPROV_VERSION "unknown"
#endif

static const struct command *const commands[] = {
	&command_run, &command_leaks, &command_stats, &command_growth, &command_peak,
	&command_timeline, &command_diff, &command_html, &command_check, &command_merge,
	&command_dump,
};

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

/* Every subcommand's usage line. */
static void show_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: memprov [--color=WHEN] SUBCOMMAND [OPTIONS] ...\n\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %s\n", commands[i]->usage);
	fprintf(f, "\n  memprov help SUBCOMMAND    details of one subcommand\n"
		   "  memprov version            memprov's version and the trace format it reads\n"
		   "\nOptions and traces go in any order; -- ends the options (run: before CMD).\n"
		   "--color=auto|always|never: colour on a terminal only (auto, the default;\n"
		   "NO_COLOR turns it off), always, or never.\n"
		   "\nExit status: 0 success, 1 failure (unreadable trace, command failed; check:\n"
		   "over budget), 2 bad command line (check: also an unreadable trace); run exits\n"
		   "with the command's status.\n");
}

/* "memprov: error: ..." and the list of subcommands; returns EXIT_USAGE. */
static int main_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int main_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	usage_error_line(fmt, ap);
	va_end(ap);
	show_usage(stderr);
	return EXIT_USAGE;
}

/* `memprov --version`, `memprov version`: what this build is and reads. */
static int show_version(int argc)
{
	if (argc > 0)
		return main_usage_error("version takes no argument");
	printf("memprov %s\ntrace format %d\nJSON reports: memprov.REPORT/%d\n", MEMPROV_VERSION,
	       MP_VERSION, REPORT_SCHEMA_VERSION);
	return EXIT_OK;
}

/* `memprov version --help`, `memprov help version`. */
static int version_help(void)
{
	printf("usage: memprov version (or memprov --version)\n\n"
	       "memprov's version, the trace format it writes and reads, and the\n"
	       "schema version of its JSON reports.\n");
	return EXIT_OK;
}

/*
 * A report that could not be written (a full disk, a closed pipe with
 * SIGPIPE ignored) fails with the system's reason, as a trace that could
 * not be read does; for check, whose 1 is a verdict, with 2.
 */
static int flush_stdout(const struct command *c, int ret)
{
	int err = stdout_flush();

	if (!err && ferror(stdout))
		err = EIO;
	if (!err)
		return ret;
	error("cannot write the report to stdout: %s", strerror(err));
	return c == &command_check ? EXIT_USAGE : ret ? ret : EXIT_FAIL;
}

int main(int argc, char **argv)
{
	const struct command *c;

	color_set("auto");
	/* --color=WHEN before the subcommand, as after it */
	while (argc > 1 && !strncmp(argv[1], "--color", 7) && (!argv[1][7] || argv[1][7] == '=')) {
		if (color_set(argv[1][7] ? argv[1] + 8 : NULL) < 0)
			return main_usage_error("--color wants auto, always or never, not '%s'", argv[1] + 8);
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 2)
		return main_usage_error("no subcommand given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		show_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "version") && argc == 3 &&
	    (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")))
		return version_help();
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))
		return show_version(argc - 2);
	if (!strcmp(argv[1], "help")) {
		if (argc < 3 || !strcmp(argv[2], "--help") || !strcmp(argv[2], "-h") ||
		    !strcmp(argv[2], "help")) {
			show_usage(stdout);
			return EXIT_OK;
		}
		if (!strcmp(argv[2], "version"))
			return version_help();
		c = find_command(argv[2]);
		if (!c)
			return main_usage_error("unknown subcommand '%s'", argv[2]);
		command_help(stdout, c);
		return EXIT_OK;
	}
	if (argv[1][0] == '-')
		return main_usage_error("unknown option '%s'", argv[1]);
	c = find_command(argv[1]);
	if (!c)
		return main_usage_error("unknown subcommand '%s'", argv[1]);
	return flush_stdout(c, c->run(argc - 1, argv + 1));
}
