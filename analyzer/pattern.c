/*
 * pattern.c - the patterns of suppression rules and --alloc-fn: a
 * substring match where '*' matches any run of characters, '^' anchors at
 * the start and '$' at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "util.h"

/* Glob with '*' of p[0..pn) against all of t[0..tn). */
static int glob_n(const char *p, size_t pn, const char *t, size_t tn)
{
	size_t pi = 0, ti = 0, star_p = (size_t)-1, star_t = 0;

	while (ti < tn) {
		if (pi < pn && p[pi] == '*') {
			star_p = ++pi;
			star_t = ti;
		} else if (pi < pn && p[pi] == t[ti]) {
			pi++;
			ti++;
		} else if (star_p != (size_t)-1) {
			pi = star_p;
			ti = ++star_t;
		} else {
			return 0;
		}
	}
	while (pi < pn && p[pi] == '*')
		pi++;
	return pi == pn;
}

int pattern_match(const char *pattern, const char *text)
{
	size_t pn = strlen(pattern);
	char buf[512], *g = buf;
	int start = 0, end = 0, ret;

	if (!text)
		return 0;
	if (pn && pattern[0] == '^') {
		start = 1;
		pattern++;
		pn--;
	}
	if (pn && pattern[pn - 1] == '$') {
		end = 1;
		pn--;
	}
	/* unanchored ends match anything: a '*' there */
	if (pn + 3 > sizeof(buf))
		g = xmalloc(pn + 3);
	sprintf(g, "%s%.*s%s", start ? "" : "*", (int)pn, pattern, end ? "" : "*");
	ret = glob_n(g, strlen(g), text, strlen(text));
	if (g != buf)
		free(g);
	return ret;
}
