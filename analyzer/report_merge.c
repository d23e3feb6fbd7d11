/*
 * report_merge.c - `memprov merge`: the reduce step of a job whose traces
 * lie on many hosts. Each trace's summary (`memprov leaks --json TRACE`,
 * or `growth --json`) is written where the trace is, by whatever runs the
 * job there (a Slurm array, MPI ranks, GNU parallel); merge reads the
 * summaries alone and prints the report that `memprov leaks DIR` (or
 * `growth DIR`) prints on the traces (merge.h).
 */
#include <stdlib.h>

#include "command.h"
#include "merge.h"
#include "report.h"
#include "util.h"

static int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		REPORT_OPT_JSON, REPORT_OPT_PER_PROCESS, REPORT_OPT_END,
	};
	struct report_args a = { .cmd = &command_merge, .opts = opts, .n_traces = 1, .many = 1,
				 .operand = "summary" };
	struct merge m = { 0 };
	size_t count = 0;
	int i, ret;

	if (report_parse(&a, argc, argv, &ret) < 0)
		return ret;
	if ((a.flags & (REPORT_PER_PROCESS | REPORT_JSON)) == REPORT_PER_PROCESS)
		m.per_process = stdout;
	for (i = 0; i < a.cl.n_operands; i++)
		if (merge_read_file(&m, a.traces[i], &count) < 0) {
			merge_release(&m);
			return EXIT_FAIL;
		}
	count -= m.duplicates; /* each said on stderr */
	if (a.flags & REPORT_JSON)
		merge_print_json(&m, stdout, count);
	else
		merge_print(&m, stdout, count);
	merge_release(&m);
	return EXIT_OK;
}

const struct command command_merge = {
	.name = "merge",
	.run = cmd_merge,
	.usage = "memprov merge [--json] [--per-process] SUMMARY...",
	.help = "Merge per-trace summaries into one report, without the traces: the reduce step\n"
		"of a job whose traces lie on many hosts. A SUMMARY is a file holding what\n"
		"`memprov leaks --json TRACE` wrote (or `growth --json`, `peak --json`), one object,\n"
		"or one per line; all of one kind. The report is the one `memprov leaks DIR` (or\n"
		"growth, peak) prints on the traces: sites merged by their frames, each with the\n"
		"processes that hold it (and their hosts, when more than one), worst first.\n"
		"  --json         one memprov.merge/1 object on stdout\n"
		"  --per-process  each summary's own sites apart, before the merge\n",
};
