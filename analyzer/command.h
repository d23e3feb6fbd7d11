/*
 * command.h - what a subcommand of memprov is: its name, its entry point,
 * its usage line and help text (each command's file defines its own
 * struct command), the exit statuses, and the usage messages every
 * command prints (command.c). main.c only dispatches to these.
 */
#ifndef MEMPROV_COMMAND_H
#define MEMPROV_COMMAND_H

#include <stdio.h>

/* Exit statuses of the analyzer. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,   /* the trace could not be read, or the command failed */
	EXIT_USAGE = 2,  /* bad command line */
};

struct command {
	const char *name;
	int (*run)(int argc, char **argv);  /* argv[0] is the name; returns the exit status */
	const char *usage;                  /* "memprov NAME [OPTIONS] ...", one line */
	const char *help;                   /* what it does, then one line per option */
};

/* The subcommands, in the order `memprov --help` lists them. */
extern const struct command command_run;       /* run.c */
extern const struct command command_leaks;     /* report_leaks.c */
extern const struct command command_stats;     /* report_stats.c */
extern const struct command command_growth;    /* report_growth.c */
extern const struct command command_peak;      /* report_peak.c */
extern const struct command command_timeline;  /* report_timeline.c */
extern const struct command command_diff;      /* report_diff.c */
extern const struct command command_html;      /* report_html.c */
extern const struct command command_check;     /* gate.c */
extern const struct command command_dump;      /* report_dump.c */

/* "usage: USAGE", a blank line and the help text, on f. */
void command_help(FILE *f, const struct command *c);
/* "memprov: error: ..." and c's usage line on stderr; returns EXIT_USAGE. */
int usage_error(const struct command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* MEMPROV_COMMAND_H */
