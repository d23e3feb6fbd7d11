/*
 * command.c - the usage messages of a subcommand: its help (--help, and
 * `memprov help NAME`) and a usage error with its usage line.
 */
#include <stdarg.h>
#include <stdio.h>

#include "command.h"

void command_help(FILE *f, const struct command *c)
{
	fprintf(f, "usage: %s\n\n%s", c->usage, c->help);
}

int usage_error(const struct command *c, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "memprov: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, "usage: %s\n", c->usage);
	return EXIT_USAGE;
}
