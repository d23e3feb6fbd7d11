/*
 * exe_skip.c - whether this process's program is one that
 * MEMPROV_SKIP_EXE (`memprov run --skip-exe`) names: such a process is
 * not traced (no trace, no scan), and its children are judged on their
 * own, as valgrind's --trace-children-skip does. The tools a build or
 * a test suite runs (the compiler driver, the assembler, the linker)
 * keep their memory until exit on purpose, as valgrind shows, and under
 * `run --check --children` they failed the gate of a clean project.
 *
 * Patterns, separated by commas: `*` matches any run of characters, `?`
 * one. A pattern with a `/` is matched against the path the program was
 * run by (AT_EXECFN: /usr/bin/cc) and the file it resolves to
 * (/proc/self/exe: /usr/bin/x86_64-linux-gnu-gcc-12); one without, against
 * the last component of either (cc, x86_64-linux-gnu-gcc-12).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls sys only.
 */
#include <string.h>
#include <sys/auxv.h>

#include "exe_skip.h"

/* Whether s[0, n) matches p[0, m) whole (iterative, backtracking to the last '*'). */
static int glob(const char *p, size_t m, const char *s, size_t n)
{
	size_t i = 0, j = 0, star = (size_t)-1, mark = 0;

	while (j < n) {
		if (i < m && (p[i] == '?' || p[i] == s[j])) {
			i++;
			j++;
		} else if (i < m && p[i] == '*') {
			star = i++;
			mark = j;
		} else if (star != (size_t)-1) {
			i = star + 1;
			j = ++mark;
		} else {
			return 0;
		}
	}
	while (i < m && p[i] == '*')
		i++;
	return i == m;
}

static const char *base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Whether pattern p[0, m) names the program run by path (NULL or "": no such path). */
static int names(const char *p, size_t m, const char *path)
{
	if (!path || !*path)
		return 0;
	if (memchr(p, '/', m))
		return glob(p, m, path, strlen(path));
	return glob(p, m, base(path), strlen(base(path)));
}

int mp_exe_skipped(const char *patterns)
{
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	char exe[4096];
	const char *p = patterns;

	if (!p || !*p)
		return 0;
	mp_self_exe(exe, sizeof(exe));
	while (*p) {
		const char *end = strchr(p, ',');
		size_t m = end ? (size_t)(end - p) : strlen(p);

		if (m && (names(p, m, execfn) || names(p, m, exe)))
			return 1;
		p += m + (end != NULL);
	}
	return 0;
}
