/*
 * command.h - what a subcommand of memprov is: its name, its entry point,
 * its usage line and help text (each command's file defines its own
 * struct command), the exit statuses, and the usage messages every
 * command prints (command.c). main.c only dispatches to these.
 */
#ifndef MEMPROV_COMMAND_H
#define MEMPROV_COMMAND_H

#include <getopt.h>
#include <stdarg.h>
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
extern const struct command command_merge;     /* report_merge.c */
extern const struct command command_dump;      /* report_dump.c */

/*
 * The one rule of every subcommand's command line: options and operands
 * in any order (`memprov leaks TRACE --json` is `memprov leaks --json
 * TRACE`), "--" ends the options, and --help and --color=WHEN are known
 * to every command. With stop_at_operand (run), the first operand ends
 * the options: it and everything after it are the command to run.
 *
 *	struct cmdline cl = { .cmd = &command_x, .argc = argc, .argv = argv,
 *			      .shortopts = "o:", .longopts = opts };
 *	while ((c = cmdline_next(&cl, &arg)) > 0)
 *		... the command's own option c, value arg ...
 *	if (c == CMDLINE_STOP)
 *		return cl.status;    (after --help: 0; a usage error: 2, printed)
 *	... cl.operands[0 .. cl.n_operands), then NULL (in argv: nothing to free) ...
 */
struct cmdline {
	const struct command *cmd;
	int argc;
	char **argv;
	const char *shortopts;           /* the command's short options ("o:"), or NULL */
	const struct option *longopts;   /* its long options, NULL-terminated, or NULL */
	int stop_at_operand;
	/* filled by cmdline_next */
	char **operands;
	int n_operands;
	int status;                      /* the exit status after CMDLINE_STOP */
	/* private */
	int ready;
	struct option merged[40];
	char shortbuf[40];
};

enum {
	CMDLINE_END = 0,            /* every option read: the operands are in cl->operands */
	CMDLINE_STOP = -1,          /* the command ends here with cl->status */
	CMDLINE_OPT_COLOR = 0x7f00, /* --color's code (no command's option may use it) */
};

/* The next option of the command's own (> 0), or CMDLINE_END / CMDLINE_STOP. */
int cmdline_next(struct cmdline *cl, const char **arg);
/* A command's option handler failed with status (printed): CMDLINE_STOP. */
int cmdline_fail(struct cmdline *cl, int status);

/* "usage: USAGE", a blank line and the help text, on f. */
void command_help(FILE *f, const struct command *c);
/* "memprov: error: ..." and c's usage line on stderr; returns EXIT_USAGE. */
int usage_error(const struct command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The "memprov: error: ..." line alone (stdout flushed first). */
void usage_error_line(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif /* MEMPROV_COMMAND_H */
