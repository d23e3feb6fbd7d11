/*
 * flame.c - a site's frames as flame-graph frames, outermost first: the
 * Python frames (outermost first), then the native frames between the
 * interpreter and the allocation. Frame names have no ';' (the folded
 * separator) and no newline.
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

void flame_add(struct flame_node *root, const struct site *s, uint64_t value)
{
	size_t i, n = frame_name(s, 0, NULL, 0);
	struct flame_node *node = root, *c;
	char buf[1024];

	root->value += value;
	for (i = 0; i < n; i++) {
		frame_name(s, i, buf, sizeof(buf));
		for (c = node->child; c; c = c->next)
			if (!strcmp(c->name, buf))
				break;
		if (!c) {
			c = xcalloc(1, sizeof(*c));
			c->name = xstrdup(buf);
			c->next = node->child;
			node->child = c;
		}
		c->value += value;
		node = c;
	}
}

static int node_cmp(const void *a, const void *b)
{
	const struct flame_node *x = *(struct flame_node *const *)a, *y = *(struct flame_node *const *)b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->name, y->name);
}

void flame_json(FILE *f, const struct flame_node *root)
{
	const struct flame_node *c;
	struct flame_node **kids;
	size_t n = 0, i;

	fprintf(f, "{\"n\":");
	json_str(f, root->name ? root->name : "all");
	fprintf(f, ",\"v\":%llu,\"c\":[", (unsigned long long)root->value);
	for (c = root->child; c; c = c->next)
		n++;
	kids = xmalloc((n + 1) * sizeof(*kids));
	for (i = 0, c = root->child; c; c = c->next)
		kids[i++] = (struct flame_node *)c;
	sort_array(kids, n, sizeof(*kids), node_cmp);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		flame_json(f, kids[i]);
	}
	free(kids);
	fprintf(f, "]}");
}

void flame_free(struct flame_node *root)
{
	struct flame_node *c, *next;

	for (c = root->child; c; c = next) {
		next = c->next;
		flame_free(c);
		free(c);
	}
	root->child = NULL;
	free(root->name);
	root->name = NULL;
}
