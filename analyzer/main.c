/*
 * main.c - the memprov command line: finds the subcommand and hands it
 * the arguments; `memprov --help` and `memprov help [NAME]`. Each
 * subcommand owns its usage text and options (struct command, in its
 * own file); nothing calls back into this file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "command.h"
#include "util.h"

static const struct command *const commands[] = {
	&command_run, &command_leaks, &command_stats, &command_growth, &command_peak,
	&command_timeline, &command_diff, &command_html, &command_check, &command_dump,
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

	fprintf(f, "usage: memprov SUBCOMMAND [OPTIONS] ...\n\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %s\n", commands[i]->usage);
	fprintf(f, "\n  memprov help SUBCOMMAND    details of one subcommand\n"
		   "\nExit status: 0 success, 1 failure (unreadable trace, command failed),\n"
		   "2 bad command line; run exits with the command's status.\n");
}

/* "memprov: error: ..." and the list of subcommands; returns EXIT_USAGE. */
static int main_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int main_usage_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "memprov: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	show_usage(stderr);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2)
		return main_usage_error("no subcommand given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		show_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			show_usage(stdout);
			return EXIT_OK;
		}
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
	return c->run(argc - 1, argv + 1);
}
