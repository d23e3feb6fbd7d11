/*
 * flame.c - a site's frames as flame-graph frames, outermost first: the
 * Python frames (outermost first), then the native frames between the
 * interpreter and the allocation, as `--folded` lines. Frame names have
 * no ';' (the folded separator) and no newline.
 */
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "util.h"

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

static void clean(char *s)
{
	for (; *s; s++)
		if (*s == ';' || *s == '\n' || *s == '\r')
			*s = '_';
}

/* Frame i (0 = outermost) of site s into buf; returns the count if buf is NULL. */
static size_t frame_name(const struct site *s, size_t i, char *buf, size_t len)
{
	size_t n = s->n_python + s->n_native;
	char fb[512];

	if (!buf)
		return n ? n : 1;
	if (!n) {
		snprintf(buf, len, "[%s %s, no stack]", kind_name(s->kind), func_name(s->func));
		return 1;
	}
	if (i < s->n_python) {
		const struct site_pyframe *p = &s->python[s->n_python - 1 - i];

		snprintf(buf, len, "%s (%s:%u)", p->function, p->file ? base_name(p->file) : "?", p->line);
	} else {
		const struct sym_frame *f = s->native[s->n_native - 1 - (i - s->n_python)];

		if (f->function && f->file)
			snprintf(buf, len, "%s (%s:%d)", f->function, base_name(f->file), f->line);
		else if (f->function)
			snprintf(buf, len, "%s", f->function);
		else
			snprintf(buf, len, "%s", sym_fallback(f, fb, sizeof(fb)));
	}
	clean(buf);
	return n;
}

void flame_folded(FILE *f, const struct site *s, uint64_t value)
{
	size_t i, n = frame_name(s, 0, NULL, 0);
	char buf[1024];

	for (i = 0; i < n; i++) {
		frame_name(s, i, buf, sizeof(buf));
		fprintf(f, "%s%s", i ? ";" : "", buf);
	}
	fprintf(f, " %llu\n", (unsigned long long)value);
}
