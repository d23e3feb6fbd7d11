/*
 * fuzz_options.c - libFuzzer target for the analyzer's parsers of text it
 * is given: parse_size (--min-bytes, --min-gap), JSON string escaping of
 * arbitrary bytes, human units, enum names, and the leaks/stats/dump
 * option parsers of every subcommand but run (main.c's dispatch) on an
 * argv split from the input (first byte: which subcommand). Every operand that is
 * not an option is replaced by a path that does not exist, so that no
 * file named by the input is ever opened.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 16

static void check_size(const char *s)
{
	uint64_t v = 0;
	char buf[64];

	if (parse_size(s, &v) == 0)
		human_bytes(buf, sizeof(buf), v);
	human_ns(buf, sizeof(buf), v);
}

/* main.c's main(), renamed by the fuzz build (-Dmain=memprov_main) */
int memprov_main(int argc, char **argv);

static void run_options(char *s, size_t len)
{
	/* not run (executes its arguments) nor html (writes a file it is told) */
	static const char *const cmds[] = {
		"leaks", "stats", "dump", "growth", "peak", "timeline", "diff", "help",
	};
	char *argv[MAX_ARGS + 3];
	int argc = 2;
	size_t i = 1;

	argv[0] = (char *)"memprov";
	argv[1] = (char *)cmds[(unsigned char)s[0] % ARRAY_SIZE(cmds)];
	while (i < len && argc < MAX_ARGS) {
		argv[argc] = s + i;
		i += strlen(s + i) + 1;
		if (argv[argc][0] != '-')
			argv[argc] = (char *)"/nonexistent/memprov-fuzz.trace";
		argc++;
	}
	argv[argc] = NULL;
	memprov_main(argc, argv);
	fflush(stdout);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	FILE *devnull;
	size_t i;

	memcpy(s, data, size);
	s[size] = 0;
	check_size(s);
	devnull = fopen("/dev/null", "w");
	if (devnull) {
		json_str(devnull, s);
		fclose(devnull);
	}
	for (i = 0; i + 2 <= size; i += 2)
		(void)func_name((unsigned)data[i] | (unsigned)data[i + 1] << 8);
	if (size) {
		(void)kind_name(data[0]);
		(void)state_name(data[0]);
		/* NUL-separated arguments; usage errors go to stderr */
		run_options(s, size);
	}
	free(s);
	return 0;
}
