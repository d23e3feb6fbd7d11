/*
 * site_print.c - a site as the reports write it: its frames as indented
 * text lines ("function file:line", sym_text), as JSON members, and the numbered
 * list of sites with their live figures that leaks and peak print.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sites.h"
#include "util.h"

void site_json_kind(FILE *f, const struct site *s)
{
	fprintf(f, "\"kind\":\"%s\",\"func\":", kind_name(s->kind));
	json_str(f, func_name(s->func));
	fprintf(f, ",\"api\":");
	json_str(f, site_api(s));
}

static void json_native(FILE *f, const struct sym_frame *fr)
{
	char buf[512];

	fprintf(f, "{\"function\":");
	json_str(f, fr->function ? fr->function : sym_fallback(fr, buf, sizeof(buf)));
	fprintf(f, ",\"file\":");
	json_str(f, fr->file);
	if (fr->line)
		fprintf(f, ",\"line\":%d", fr->line);
	else
		fprintf(f, ",\"line\":null");
	fprintf(f, ",\"module\":");
	json_str(f, fr->module);
	fprintf(f, ",\"address\":\"0x%" PRIx64 "\",\"inlined\":%s}", fr->ip,
		fr->inlined ? "true" : "false");
}

void site_json_frames(FILE *f, const struct site *s)
{
	size_t j;

	fprintf(f, "\"python\":[");
	for (j = 0; j < s->n_python; j++) {
		fprintf(f, "%s{\"function\":", j ? "," : "");
		json_str(f, s->python[j].function);
		fprintf(f, ",\"file\":");
		json_str(f, s->python[j].file);
		fprintf(f, ",\"line\":%u}", s->python[j].line);
	}
	fprintf(f, "],\"frames\":[");
	for (j = 0; j < s->n_native; j++) {
		if (j)
			fputc(',', f);
		json_native(f, s->native[j]);
	}
	fprintf(f, "]");
}

void site_json(FILE *f, const struct site *s)
{
	site_json_kind(f, s);
	fputc(',', f);
	site_json_frames(f, s);
}

static void text_native(FILE *f, const struct sym_frame *fr)
{
	char buf[1024];

	fprintf(f, "      %s\n", sym_text(fr, buf, sizeof(buf)));
}

void site_text(FILE *f, const struct site *s, enum site_mode mode, size_t max)
{
	size_t j, shown = 0;

	for (j = 0; j < s->n_python && shown < max; j++, shown++)
		fprintf(f, "      %s %s:%u\n", s->python[j].function,
			s->python[j].file ? s->python[j].file : "?", s->python[j].line);
	for (j = 0; j < s->n_native && shown < max; j++, shown++)
		text_native(f, s->native[j]);
	if (s->n_python + s->n_native > shown)
		fprintf(f, "      ... %zu more frames\n", s->n_python + s->n_native - shown);
	if (!s->n_python && !s->n_native)
		fprintf(f, "      %s\n", mode == SITE_PYTHON_ONLY ? "(no Python frames)" : "(no stack recorded)");
}

void sites_text(FILE *f, const struct site *sites, size_t shown, enum site_mode mode)
{
	char b[HUMAN_LEN], c[HUMAN_LEN];
	size_t i;

	for (i = 0; i < shown; i++) {
		const struct site *s = &sites[i];

		fprintf(f, "  %s#%zu %s %s: %s block%s, %s%s\n", color(f, COLOR_HEADING), i + 1,
			kind_name(s->kind), site_api(s), fmt_count(c, sizeof(c), s->blocks),
			s->blocks == 1 ? "" : "s", bytes_exact(b, sizeof(b), s->bytes), color(f, COLOR_RESET));
		site_text(f, s, mode, SITE_ALL_FRAMES);
	}
}

void site_json_key_text(FILE *f, const struct site *s, enum site_mode mode)
{
	char *text = NULL;
	size_t len;
	FILE *t = xopen_memstream(&text, &len);

	site_text(t, s, mode, SITE_ALL_FRAMES);
	fclose(t);
	fprintf(f, "\"key\":");
	json_str(f, s->key);
	fprintf(f, ",\"text\":");
	json_str(f, text);
	free(text);
}
