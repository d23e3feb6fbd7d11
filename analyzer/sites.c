/*
 * sites.c - from (stack, kind, func) live figures to sites: choose the
 * frames a report shows, build a key from their symbolized text, merge
 * equal keys, and sort.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fn.h"
#include "sites.h"
#include "util.h"

struct frames {
	size_t n_python, n_native, cap;
	struct site_pyframe python[MP_MAX_PYFRAMES];
	const struct sym_frame **native;
	const char *api;          /* the allocation API folded away, or NULL */
};

static int is_start_code(const struct sym_frame *f)
{
	return f->function && (!strcmp(f->function, "__libc_start_main") ||
			       !strcmp(f->function, "__libc_start_call_main") ||
			       !strcmp(f->function, "__libc_start_main_impl") ||
			       !strcmp(f->function, "_start"));
}

static void pick_python(const struct replay *r, const struct replay_stack *st, struct frames *fr)
{
	size_t i;

	for (i = 0; i < st->n_python; i++) {
		const struct replay_pycode *pc = replay_find_pycode(r, st->python[i].code_id);
		struct site_pyframe *p = &fr->python[fr->n_python++];

		p->function = pc ? pc->name : "<unknown code>";
		p->file = pc ? pc->file : NULL;
		/* 0: entering the function: its first line (the def) */
		p->line = st->python[i].line || !pc ? st->python[i].line : pc->first_line;
	}
}

static void push_native(struct frames *fr, const struct sym_frame *f)
{
	ALLOC_GROW(fr->native, fr->n_native, fr->cap);
	fr->native[fr->n_native++] = f;
}

/*
 * Every frame of the stack but memprov's own, inlined ones expanded.
 * memprov's main wrapper, and whatever calls it (libc's start code),
 * ends the stack, even when libmemprov.so can no longer be read and only
 * its module is known: a memprov frame with nothing but start code or
 * unnamed frames outside it is that wrapper.
 */
static void expand_native(struct symbolizer *s, const struct replay_stack *st, struct frames *fr)
{
	size_t i, j, n, cut = SIZE_MAX;

	for (i = 0; i < st->n_native; i++) {
		const struct sym_frame *f = sym_lookup(s, st->native[i], st->ts, &n);

		if (f->memprov) {
			if (f->function && !strcmp(f->function, "main_wrapper"))
				break;
			if (fr->n_native)
				cut = fr->n_native;
			continue;
		}
		for (j = 0; j < n; j++)
			push_native(fr, &f[j]);
	}
	if (cut == SIZE_MAX)
		return;
	for (i = cut; i < fr->n_native; i++)
		if (fr->native[i]->function && !is_start_code(fr->native[i]))
			return;
	fr->n_native = cut;
}

/*
 * The frames a report shows: the allocator's frames at the inner end
 * folded into the API they stand for (fr->api), Python's interpreter and
 * what is outside it left out under Python frames (SITE_DEFAULT), libc's
 * start code left out.
 */
static void pick_native(struct symbolizer *s, const struct replay_stack *st,
			enum site_mode mode, struct frames *fr)
{
	size_t i, keep, folded = 0;
	const char *api = NULL, *a;

	expand_native(s, st, fr);
	while (folded < fr->n_native && (a = alloc_fn_match(fr->native[folded]))) {
		api = a;
		folded++;
	}
	if (folded == fr->n_native && !fr->n_python) {
		folded = 0; /* all allocator (a stack cut short): show it */
		api = NULL;
	}
	/*
	 * What the first frame left called, when that is an allocation
	 * function too: the API itself may have jumped to another one and
	 * left no frame (operator new[] to operator new).
	 */
	if (api && folded < fr->n_native && fr->native[folded]->ip != fr->native[folded - 1]->ip &&
	    (a = alloc_fn_match_name(sym_callee(s, fr->native[folded]->ip, st->ts),
				     fr->native[folded])))
		api = a;
	/*
	 * No allocator frame at all, and the first frame called a C++
	 * operator: a malloc replacement's operator new, which memprov
	 * records as malloc (interpose/hooks_cxx.c), named as libstdc++'s is.
	 */
	if (!api && fr->n_native && (a = alloc_fn_match_name(sym_callee(s, fr->native[0]->ip, st->ts),
							      fr->native[0])) &&
	    !strncmp(a, "operator ", 9))
		api = a;
	fr->api = api;
	keep = fr->n_native;
	for (i = folded; i < fr->n_native; i++)
		if (mode == SITE_DEFAULT && st->n_python && fr->native[i]->interpreter) {
			keep = i;
			break;
		}
	if (folded)
		memmove(fr->native, fr->native + folded, (keep - folded) * sizeof(*fr->native));
	fr->n_native = keep - folded;
	if (!st->n_python || mode == SITE_NATIVE)
		while (fr->n_native && is_start_code(fr->native[fr->n_native - 1]))
			fr->n_native--;
}

static void key_frames(FILE *k, const struct frames *fr)
{
	size_t i;

	for (i = 0; i < fr->n_python; i++)
		fprintf(k, "py %s %s:%u\n", fr->python[i].function,
			fr->python[i].file ? fr->python[i].file : "?", fr->python[i].line);
	for (i = 0; i < fr->n_native; i++) {
		const struct sym_frame *f = fr->native[i];

		if (f->function)
			fprintf(k, "c %s %s:%d %s\n", f->function, f->file ? f->file : "?",
				f->line, f->module ? f->module : "?");
		else
			fprintf(k, "c %s+0x%llx\n", f->module ? f->module : "?",
				(unsigned long long)(f->module ? f->offset : f->ip));
	}
}

/* The key of a frame list: kind, func and the frames' text; malloc'd, *len its length. */
static char *site_key(const struct frames *fr, unsigned kind, unsigned func, size_t *len)
{
	char *key = NULL;
	FILE *k = open_memstream(&key, len);

	if (!k)
		die(error_exit_status(), "out of memory building a site key");
	fprintf(k, "%u %u %s\n", kind, func, fr->api ? fr->api : "");
	key_frames(k, fr);
	fclose(k);
	return key;
}

/* Fill site with its key (taken over) and a copy of the frames. */
static void site_fill(struct site *site, const struct frames *fr, char *key, unsigned kind,
		      unsigned func)
{
	memset(site, 0, sizeof(*site));
	site->key = key;
	site->kind = kind;
	site->func = func;
	site->api = fr->api;
	site->n_python = fr->n_python;
	site->python = xmalloc(fr->n_python * sizeof(*site->python) + 1);
	memcpy(site->python, fr->python, fr->n_python * sizeof(*site->python));
	site->n_native = fr->n_native;
	site->native = xmalloc(fr->n_native * sizeof(*site->native) + 1);
	if (fr->n_native)
		memcpy(site->native, fr->native, fr->n_native * sizeof(*site->native));
}

/* The frames a report shows of stack id (none when it was never written). */
static void pick_frames(const struct replay *r, struct symbolizer *s, uint64_t id,
			enum site_mode mode, struct frames *fr)
{
	const struct replay_stack *st = replay_find_stack(r, id);

	fr->n_python = fr->n_native = 0;
	fr->api = NULL;
	if (!st)
		return;
	pick_python(r, st, fr);
	if (mode != SITE_PYTHON_ONLY)
		pick_native(s, st, mode, fr);
}

static struct site *site_get(struct site **table, const struct frames *fr,
			     unsigned kind, unsigned func)
{
	struct site *site;
	size_t len = 0;
	char *key = site_key(fr, kind, func, &len);

	HASH_FIND(hh, *table, key, len, site);
	if (site) {
		free(key);
		return site;
	}
	site = xmalloc(sizeof(*site));
	site_fill(site, fr, key, kind, func);
	HASH_ADD_KEYPTR(hh, *table, site->key, len, site);
	return site;
}

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->key, y->key);
}

struct site *sites_build(const struct replay *r, struct symbolizer *s,
			 const struct replay_live *live, enum site_mode mode, size_t *n)
{
	struct frames *fr = xcalloc(1, sizeof(*fr));
	struct site *table = NULL, *site, *tmp, *out;
	const struct replay_live *l, *ltmp;
	size_t i = 0;

	HASH_ITER(hh, live, l, ltmp) {
		pick_frames(r, s, l->key.stack, mode, fr);
		site = site_get(&table, fr, l->key.kind, l->key.func);
		site->blocks += l->blocks;
		site->bytes += l->bytes;
	}
	free(fr->native);
	free(fr);
	*n = HASH_COUNT(table);
	out = xcalloc(*n + 1, sizeof(*out));
	HASH_ITER(hh, table, site, tmp) {
		HASH_DEL(table, site);
		out[i++] = *site;
		free(site);
	}
	for (i = 0; i < *n; i++)
		memset(&out[i].hh, 0, sizeof(out[i].hh));
	sort_array(out, *n, sizeof(*out), site_cmp);
	return out;
}

void site_of(struct site *out, const struct replay *r, struct symbolizer *s,
	     const struct replay_live_key *key, enum site_mode mode)
{
	struct frames *fr = xcalloc(1, sizeof(*fr));
	size_t len;

	pick_frames(r, s, key->stack, mode, fr);
	site_fill(out, fr, site_key(fr, key->kind, key->func, &len), key->kind, key->func);
	free(fr->native);
	free(fr);
}

const char *site_api(const struct site *site)
{
	return site->api ? site->api : func_name(site->func);
}

void site_release(struct site *site)
{
	free(site->key);
	free(site->python);
	free(site->native);
	site->key = NULL;
	site->python = NULL;
	site->native = NULL;
}

void sites_free(struct site *sites, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		site_release(&sites[i]);
	free(sites);
}
