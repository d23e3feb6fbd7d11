/*
 * trace_chain.c - traces found by their names and headers alone: the
 * names libmemprov.so gives for an output template (trace_file.c: %p,
 * %%, a directory, NAME.<k>.trace when a name is taken) and the trace
 * that continues one whose process called exec (same pid, a numbered
 * sibling begun when the old image ended). `memprov run` uses it to name
 * the trace of the program its command finally became; the reports use
 * it to say where an exec'd trace goes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_chain.h"
#include "util.h"

int trace_peek(const char *path, struct mp_file_header *h)
{
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	n = pread(fd, h, sizeof(*h), 0);
	close(fd);
	return n == (ssize_t)sizeof(*h) && !memcmp(h->magic, MP_MAGIC, MP_MAGIC_LEN) ? 0 : -1;
}

char *trace_expand(const char *tmpl, const char *rep)
{
	size_t n = strlen(tmpl) + 1, rl = strlen(rep);
	char *out = xmalloc(n * (rl + 1) + 1), *o = out;

	for (; *tmpl; tmpl++) {
		if (tmpl[0] == '%' && tmpl[1] == 'p') {
			memcpy(o, rep, rl);
			o += rl;
			tmpl++;
		} else if (tmpl[0] == '%' && tmpl[1] == '%') {
			*o++ = '%';
			tmpl++;
		} else {
			*o++ = *tmpl;
		}
	}
	*o = 0;
	return out;
}

char *trace_template(const char *tmpl)
{
	char *probe = trace_expand(tmpl, "0"), *out;
	size_t n = strlen(tmpl);
	struct stat st;

	if ((n && tmpl[n - 1] == '/') || (!stat(probe, &st) && S_ISDIR(st.st_mode))) {
		out = xmalloc(n + 32);
		sprintf(out, "%s%smemprov.%%p.trace", tmpl, n && tmpl[n - 1] == '/' ? "" : "/");
	} else {
		out = xstrdup(tmpl);
	}
	free(probe);
	return out;
}

int trace_template_fixed(const char *tmpl)
{
	for (; *tmpl; tmpl++) {
		if (tmpl[0] == '%' && tmpl[1] == 'p')
			return 0;
		if (tmpl[0] == '%' && tmpl[1] == '%')
			tmpl++;
	}
	return 1;
}

/* s with glob's special characters escaped. */
static char *glob_quote(const char *s)
{
	char *out = xmalloc(2 * strlen(s) + 1), *o = out;

	for (; *s; s++) {
		if (strchr("*?[]\\", *s))
			*o++ = '\\';
		*o++ = *s;
	}
	*o = 0;
	return out;
}

/* Add the files matching pat to g (GLOB_APPEND once g holds something). */
static void glob_add(const char *pat, glob_t *g)
{
	glob_t tmp;
	size_t i;

	memset(&tmp, 0, sizeof(tmp));
	if (glob(pat, 0, NULL, &tmp))
		return;
	g->gl_pathv = xrealloc(g->gl_pathv, (g->gl_pathc + tmp.gl_pathc + 1) * sizeof(char *));
	for (i = 0; i < tmp.gl_pathc; i++)
		g->gl_pathv[g->gl_pathc++] = xstrdup(tmp.gl_pathv[i]);
	g->gl_pathv[g->gl_pathc] = NULL;
	globfree(&tmp);
}

/* Length of name without its ".trace" suffix, if it has one. */
static size_t stem_len(const char *name)
{
	size_t len = strlen(name);

	return len >= 6 && !strcmp(name + len - 6, ".trace") ? len - 6 : len;
}

/* Both the name and its numbered siblings, for a pattern or a path. */
static void glob_family(const char *pat, size_t stem, glob_t *g)
{
	char *num = xmalloc(strlen(pat) + 8);

	sprintf(num, "%.*s.*%s", (int)stem, pat, pat + stem);
	glob_add(pat, g);
	glob_add(num, g);
	free(num);
}

void trace_glob(const char *tmpl, glob_t *g)
{
	char *q = glob_quote(tmpl), *pat;

	memset(g, 0, sizeof(*g));
	/* %p was quoted as itself: expand it to a star, %% to a percent */
	pat = trace_expand(q, "*");
	glob_family(pat, stem_len(pat), g);
	free(pat);
	free(q);
}

void trace_glob_free(glob_t *g)
{
	size_t i;

	for (i = 0; i < g->gl_pathc; i++)
		free(g->gl_pathv[i]);
	free(g->gl_pathv);
	memset(g, 0, sizeof(*g));
}

char *trace_exec_successor(const char *path, const struct mp_file_header *h)
{
	size_t stem = stem_len(path), i;
	uint64_t after = h->end_mono_ns > h->start_mono_ns ? h->end_mono_ns : h->start_mono_ns;
	char *base, *q, *pat, *best = NULL;
	uint64_t best_ts = 0;
	glob_t g;

	/* the family's base name: a numbered sibling's number taken off */
	base = xstrndup(path, stem);
	q = strrchr(base, '.');
	if (q && q[1] && strspn(q + 1, "0123456789") == strlen(q + 1) && !strchr(q, '/'))
		*q = 0;
	q = glob_quote(base);
	pat = xmalloc(strlen(q) + strlen(path + stem) + 1);
	sprintf(pat, "%s%s", q, path + stem);
	memset(&g, 0, sizeof(g));
	glob_family(pat, strlen(q), &g);
	for (i = 0; i < g.gl_pathc; i++) {
		struct mp_file_header h2;

		if (!strcmp(g.gl_pathv[i], path) || trace_peek(g.gl_pathv[i], &h2))
			continue;
		if (h2.pid != h->pid || h2.start_mono_ns < after ||
		    h2.start_real_ns < h->start_real_ns)
			continue;
		if (!best || h2.start_mono_ns < best_ts) {
			free(best);
			best = xstrdup(g.gl_pathv[i]);
			best_ts = h2.start_mono_ns;
		}
	}
	trace_glob_free(&g);
	free(pat);
	free(q);
	free(base);
	return best;
}
