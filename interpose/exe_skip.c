/*
 * exe_skip.c - whether this process's program is one that
 * MEMPROV_SKIP_EXE (`memprov run --skip-exe`) names: such a process is
 * not traced (no trace, no scan), and its children are judged on their
 * own, as valgrind's --trace-children-skip does. The tools a build or
 * a test suite runs (the compiler driver, the assembler, the linker)
 * keep their memory until exit on purpose, as valgrind shows, and under
 * `run --check --children` they failed the gate of a clean project.
 *
 * The patterns (include/memprov_exe_match.h, the gate's rule too) are
 * matched against the path the program was run by (AT_EXECFN:
 * /usr/bin/cc) and the file it resolves to (/proc/self/exe:
 * /usr/bin/x86_64-linux-gnu-gcc-12), or the last component of either (cc,
 * x86_64-linux-gnu-gcc-12) for a pattern without a `/`.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls sys only.
 */
#include <sys/auxv.h>

#include "exe_skip.h"
#include "memprov_exe_match.h"

int mp_exe_skipped(const char *patterns)
{
	char exe[4096];

	if (!patterns || !*patterns)
		return 0;
	mp_self_exe(exe, sizeof(exe));
	return mp_exe_names(patterns, (const char *)getauxval(AT_EXECFN), exe);
}
