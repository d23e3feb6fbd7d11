/*
 * command.c - what every subcommand's command line shares: the one
 * parser rule (options and operands in any order, "--" ends the options,
 * --help and --color=WHEN known to all), the help text, and a usage
 * error with the command's usage line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "util.h"

void command_help(FILE *f, const struct command *c)
{
	fprintf(f, "usage: %s\n\n%s", c->usage, c->help);
	fprintf(f, "\nEvery subcommand takes --help and --color=WHEN (auto: colour on a terminal\n"
		   "unless NO_COLOR is set; always; never); options and operands go in any order\n"
		   "(run: its options before CMD), and -- ends the options.\n");
}

void usage_error_line(const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "memprov: %serror:%s ", color(stderr, COLOR_ERROR), color(stderr, COLOR_RESET));
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int usage_error(const struct command *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	usage_error_line(fmt, ap);
	va_end(ap);
	fprintf(stderr, "usage: %s\n", c->usage);
	return EXIT_USAGE;
}

/* The command's options, then --help and --color: set up at the first call. */
static void cmdline_setup(struct cmdline *cl)
{
	const char *given = cl->shortopts ? cl->shortopts : "";
	size_t n = 0;

	while (cl->longopts && cl->longopts[n].name)
		n++;
	if (n + 3 > ARRAY_SIZE(cl->merged) || strlen(given) + 4 > sizeof(cl->shortbuf))
		die(EXIT_FAIL, "%s: too many options for struct cmdline", cl->cmd->name);
	if (n)
		memcpy(cl->merged, cl->longopts, n * sizeof(*cl->merged));
	cl->merged[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	cl->merged[n++] = (struct option){ "color", optional_argument, NULL, CMDLINE_OPT_COLOR };
	cl->merged[n] = (struct option){ NULL, 0, NULL, 0 };
	/*
	 * "-": an operand comes back as code 1, wherever it stands (also with
	 * POSIXLY_CORRECT); "+": the first operand ends the options (run).
	 * ":": a missing value is ':', an unknown option '?'.
	 */
	given += given[0] == '+' || given[0] == '-';
	snprintf(cl->shortbuf, sizeof(cl->shortbuf), "%s:h%s", cl->stop_at_operand ? "+" : "-", given);
	cl->operands = cl->argv + 1;
	cl->ready = 1;
	opterr = 0;
	optind = 0;    /* 0, not 1: glibc forgets a cluster ("-xy") a last parse stopped in */
}

/*
 * Operands are gathered at the front of argv, after the command's name,
 * over elements getopt has read already; a NULL follows the last one.
 */
static void add_operand(struct cmdline *cl, char *s)
{
	cl->operands[cl->n_operands++] = s;
}

/* getopt's '?': an unknown option, or a value given to one that takes none. */
static void cmdline_unknown(struct cmdline *cl)
{
	const char *a = optind > 0 && optind <= cl->argc && cl->argv[optind - 1] ? cl->argv[optind - 1] : "-";

	if (!strncmp(a, "--", 2) && strchr(a, '=') && optopt)
		cl->status = usage_error(cl->cmd, "option '%.*s' takes no value", (int)(strchr(a, '=') - a), a);
	else if (!strncmp(a, "--", 2) || !optopt)
		cl->status = usage_error(cl->cmd, "unknown option '%s'", a);
	else
		cl->status = usage_error(cl->cmd, "unknown option '-%c'", optopt);
}

int cmdline_next(struct cmdline *cl, const char **arg)
{
	int c;

	if (!cl->ready)
		cmdline_setup(cl);
	for (;;) {
		c = getopt_long(cl->argc, cl->argv, cl->shortbuf, cl->merged, NULL);
		*arg = optarg;
		switch (c) {
		case -1:
			/* after "--", or from run's command on: operands all */
			while (optind < cl->argc)
				add_operand(cl, cl->argv[optind++]);
			cl->operands[cl->n_operands] = NULL;
			return CMDLINE_END;
		case 1:
			add_operand(cl, optarg);
			continue;
		case 'h':
			command_help(stdout, cl->cmd);
			cl->status = EXIT_OK;
			return CMDLINE_STOP;
		case CMDLINE_OPT_COLOR:
			if (color_set(optarg) < 0) {
				cl->status = usage_error(cl->cmd, "--color wants auto, always or never, not '%s'",
							 optarg);
				return CMDLINE_STOP;
			}
			continue;
		case ':':
			cl->status = usage_error(cl->cmd, "option '%s' needs a value",
						 optind > 0 && optind <= cl->argc && cl->argv[optind - 1] ?
						 cl->argv[optind - 1] : "?");
			return CMDLINE_STOP;
		case '?':
			cmdline_unknown(cl);
			return CMDLINE_STOP;
		default:
			return c;
		}
	}
}

int cmdline_fail(struct cmdline *cl, int status)
{
	cl->status = status;
	return CMDLINE_STOP;
}
