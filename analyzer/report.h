/*
 * report.h - the subcommands of memprov (one file each) and what they
 * share: usage errors, opening a trace for a report, the header lines
 * every report starts with.
 */
#ifndef MEMPROV_REPORT_H
#define MEMPROV_REPORT_H

#include <stdio.h>

#include "replay.h"
#include "trace_reader.h"

/* Exit statuses of the analyzer. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,   /* the trace could not be read, or the command failed */
	EXIT_USAGE = 2,  /* bad command line */
};

int cmd_leaks(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_growth(int argc, char **argv);
int cmd_peak(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_html(int argc, char **argv);

/* Print "memprov: error: ..." and the subcommand's usage; returns 2. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print the usage of a subcommand (or of memprov when cmd is NULL). */
int show_usage(FILE *f, const char *cmd);

/* Status of a report: 1 when nothing at all could be read. */
int report_status(const struct trace *t);
/* trace/pid/command/ending lines and damage warnings (text reports). */
void report_header(FILE *f, const struct replay *r);
/* "command" of a trace: its cmdline, else its exe. */
const char *report_command(const struct trace *t);
/* ns since the trace started. */
uint64_t report_rel(const struct trace *t, uint64_t ts);

#endif /* MEMPROV_REPORT_H */
