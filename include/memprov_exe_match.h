/*
 * memprov_exe_match.h - whether a `--skip-exe` pattern list names a
 * program, one rule for both sides: libmemprov.so, which leaves such a
 * process untraced (interpose/exe_skip.c, MEMPROV_SKIP_EXE), and the
 * gate, which leaves such a trace out of its verdict (analyzer/gate.c,
 * `memprov check --skip-exe`).
 *
 * Patterns are separated by commas: `*` matches any run of characters,
 * `?` one. A pattern with a `/` is matched against a path whole; one
 * without, against its last component.
 *
 * Header-only and allocation-free: the preload object calls it in its
 * constructor, before anything else is set up.
 */
#ifndef MEMPROV_EXE_MATCH_H
#define MEMPROV_EXE_MATCH_H

#include <stddef.h>
#include <string.h>

/* Whether s[0, n) matches p[0, m) whole (iterative, back to the last '*'). */
static inline int mp_glob_match(const char *p, size_t m, const char *s, size_t n)
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

/* Whether pattern p[0, m) names the program at path (NULL or "": none). */
static inline int mp_exe_pattern_names(const char *p, size_t m, const char *path)
{
	const char *last;

	if (!path || !*path)
		return 0;
	if (memchr(p, '/', m))
		return mp_glob_match(p, m, path, strlen(path));
	last = strrchr(path, '/');
	last = last ? last + 1 : path;
	return mp_glob_match(p, m, last, strlen(last));
}

/* Whether one of the comma-separated patterns names the program at a or at b. */
static inline int mp_exe_names(const char *patterns, const char *a, const char *b)
{
	const char *p = patterns;

	if (!p)
		return 0;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t m = end ? (size_t)(end - p) : strlen(p);

		if (m && (mp_exe_pattern_names(p, m, a) || mp_exe_pattern_names(p, m, b)))
			return 1;
		p += m + (end != NULL);
	}
	return 0;
}

#endif /* MEMPROV_EXE_MATCH_H */
