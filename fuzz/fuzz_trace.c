/*
 * fuzz_trace.c - libFuzzer target for everything the analyzer reads from
 * a trace: the input is written as a trace file and goes through the
 * reader (format versions 1 and 2: the seeds in fuzz/corpus/trace have
 * both), the replay and the leaks (text and JSON), stats (text and JSON),
 * dump and timeline (which reads each thread's last chunk on its own)
 * reports, exactly as `memprov leaks FILE` would take it.
 *
 * Symbolization is linked in but switched off (-Wl,--wrap=sym_new): with
 * it on, the analyzer opens the module paths the input names, which is
 * normal behaviour (read-only, regular files) but makes a fuzzer slow and
 * dependent on the machine's files. tests/t9400-hostile-paths.sh covers
 * those opens.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "symbolize.h"

struct symbolizer *__real_sym_new(const struct replay *r, int enabled);
struct symbolizer *__wrap_sym_new(const struct replay *r, int enabled);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct symbolizer *__wrap_sym_new(const struct replay *r, int enabled)
{
	(void)enabled;
	return __real_sym_new(r, 0);
}

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd;

	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "/tmp/memprov-fuzz.%d.trace", (int)getpid());
	/* reports print on stdout: not wanted here */
	fd = open("/dev/null", O_WRONLY);
	if (fd >= 0) {
		dup2(fd, 1);
		close(fd);
	}
	return 0;
}

static void run(int (*cmd)(int, char **), const char *a0, const char *a1)
{
	char *argv[4];
	int argc = 0;

	argv[argc++] = (char *)a0;
	if (a1)
		argv[argc++] = (char *)a1;
	argv[argc++] = path;
	argv[argc] = NULL;
	cmd(argc, argv);
	fflush(stdout);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	run(command_leaks.run, "leaks", "--json");
	run(command_leaks.run, "leaks", "--all");
	run(command_stats.run, "stats", "--json");
	run(command_stats.run, "stats", NULL);
	run(command_dump.run, "dump", NULL);
	run(command_timeline.run, "timeline", "--json");
	unlink(path);
	return 0;
}
