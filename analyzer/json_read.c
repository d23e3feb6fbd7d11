/*
 * json_read.c - a small strict JSON reader (json_read.h). Recursive
 * descent, depth bounded so that a hostile file cannot exhaust the stack.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "util.h"

#define JSON_MAX_DEPTH 200

struct jp {
	const char *s, *end, *p;
	char *err;
	size_t errlen;
	int failed;
};

static int fail(struct jp *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct jp *j, const char *fmt, ...)
{
	const char *q;
	unsigned line = 1, col = 1;
	char what[160];
	va_list ap;

	if (j->failed)
		return -1;
	j->failed = 1;
	for (q = j->s; q < j->p && q < j->end; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(j->err, j->errlen, "line %u, column %u: %s", line, col, what);
	return -1;
}

static void skip_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static const char *found(const struct jp *j)
{
	return j->p >= j->end ? "the end of the text" : "another character";
}

static int lit(struct jp *j, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n))
		return fail(j, "not a JSON value");
	j->p += n;
	return 0;
}

static int hex4(struct jp *j, unsigned *cp)
{
	int i;

	*cp = 0;
	for (i = 0; i < 4; i++, j->p++) {
		int c = j->p < j->end ? *j->p : -1, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return fail(j, "\\u needs four hex digits");
		*cp = *cp << 4 | (unsigned)d;
	}
	return 0;
}

static void put_utf8(FILE *f, unsigned cp)
{
	if (cp < 0x80) {
		fputc((int)cp, f);
	} else if (cp < 0x800) {
		fputc(0xc0 | (int)(cp >> 6), f);
		fputc(0x80 | (int)(cp & 0x3f), f);
	} else if (cp < 0x10000) {
		fputc(0xe0 | (int)(cp >> 12), f);
		fputc(0x80 | (int)((cp >> 6) & 0x3f), f);
		fputc(0x80 | (int)(cp & 0x3f), f);
	} else {
		fputc(0xf0 | (int)(cp >> 18), f);
		fputc(0x80 | (int)((cp >> 12) & 0x3f), f);
		fputc(0x80 | (int)((cp >> 6) & 0x3f), f);
		fputc(0x80 | (int)(cp & 0x3f), f);
	}
}

static int parse_string(struct jp *j, char **out)
{
	char *buf = NULL;
	size_t len;
	FILE *f = xopen_memstream(&buf, &len);

	j->p++; /* the opening quote */
	for (;;) {
		unsigned char c;

		if (j->p >= j->end) {
			fclose(f);
			free(buf);
			return fail(j, "a string is not closed");
		}
		c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			break;
		}
		if (c < 0x20) {
			fclose(f);
			free(buf);
			return fail(j, "a control character in a string (it must be escaped)");
		}
		if (c != '\\') {
			fputc(c, f);
			j->p++;
			continue;
		}
		j->p++;
		c = j->p < j->end ? (unsigned char)*j->p : 0;
		j->p++;
		switch (c) {
		case '"': case '\\': case '/':
			fputc(c, f);
			break;
		case 'b': fputc('\b', f); break;
		case 'f': fputc('\f', f); break;
		case 'n': fputc('\n', f); break;
		case 'r': fputc('\r', f); break;
		case 't': fputc('\t', f); break;
		case 'u': {
			unsigned cp, lo;

			if (hex4(j, &cp) < 0)
				break;
			if (cp >= 0xd800 && cp < 0xdc00 && j->end - j->p >= 6 && j->p[0] == '\\' &&
			    j->p[1] == 'u') {
				const char *save = j->p;

				j->p += 2;
				if (hex4(j, &lo) < 0)
					break;
				if (lo >= 0xdc00 && lo < 0xe000)
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				else
					j->p = save;
			}
			if (cp >= 0xd800 && cp < 0xe000)
				cp = 0xfffd; /* a lone surrogate */
			put_utf8(f, cp);
			break;
		}
		default:
			j->p--;
			fail(j, "an unknown escape in a string");
		}
		if (j->failed) {
			fclose(f);
			free(buf);
			return -1;
		}
	}
	fclose(f);
	*out = buf;
	return 0;
}

static int parse_number(struct jp *j, struct jval *v)
{
	const char *q = j->p, *start = j->p;
	int neg = 0, integral = 1;
	char tmp[64];

	if (q < j->end && *q == '-') {
		neg = 1;
		q++;
	}
	if (q >= j->end || *q < '0' || *q > '9')
		return fail(j, "not a JSON value");
	if (*q == '0' && q + 1 < j->end && q[1] >= '0' && q[1] <= '9')
		return fail(j, "a number with a leading zero");
	while (q < j->end && *q >= '0' && *q <= '9')
		q++;
	if (q < j->end && *q == '.') {
		integral = 0;
		if (++q >= j->end || *q < '0' || *q > '9')
			return j->p = q, fail(j, "a digit must follow the decimal point");
		while (q < j->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < j->end && (*q == 'e' || *q == 'E')) {
		integral = 0;
		q++;
		if (q < j->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= j->end || *q < '0' || *q > '9')
			return j->p = q, fail(j, "a digit must follow the exponent");
		while (q < j->end && *q >= '0' && *q <= '9')
			q++;
	}
	if ((size_t)(q - start) >= sizeof(tmp))
		return fail(j, "a number of more than %zu characters", sizeof(tmp) - 1);
	memcpy(tmp, start, (size_t)(q - start));
	tmp[q - start] = 0;
	v->type = J_NUM;
	v->num = strtod(tmp, NULL);
	if (integral) {
		errno = 0;
		if (neg) {
			long long x = strtoll(tmp, NULL, 10);

			if (!errno) {
				v->exact = 1;
				v->i = x;
			}
		} else {
			unsigned long long x = strtoull(tmp, NULL, 10);

			if (!errno) {
				v->exact = 1;
				v->u = x;
				v->i = x <= INT64_MAX ? (int64_t)x : INT64_MAX;
			}
		}
	}
	j->p = q;
	return 0;
}

static int parse_value(struct jp *j, struct jval *v, int depth);

/* An array or an object: its members into v. */
static int parse_members(struct jp *j, struct jval *v, int depth, int object)
{
	size_t alloc = 0, kalloc = 0;
	char close = object ? '}' : ']';

	v->type = object ? J_OBJ : J_ARR;
	j->p++;
	skip_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		struct jval item;
		char *key = NULL;

		skip_ws(j);
		if (object) {
			if (j->p >= j->end || *j->p != '"')
				return fail(j, "a member name (a string) expected, found %s", found(j));
			if (parse_string(j, &key) < 0)
				return -1;
			skip_ws(j);
			if (j->p >= j->end || *j->p != ':') {
				free(key);
				return fail(j, "':' expected after a member name");
			}
			j->p++;
		}
		memset(&item, 0, sizeof(item));
		if (parse_value(j, &item, depth + 1) < 0) {
			free(key);
			json_free(&item);
			return -1;
		}
		if (object) {
			ALLOC_GROW(v->keys, v->n, kalloc);
			v->keys[v->n] = key;
		}
		ALLOC_GROW(v->items, v->n, alloc);
		v->items[v->n++] = item;
		skip_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return 0;
		}
		return fail(j, "',' or '%c' expected", close);
	}
}

static int parse_value(struct jp *j, struct jval *v, int depth)
{
	if (depth > JSON_MAX_DEPTH)
		return fail(j, "nested more than %d deep", JSON_MAX_DEPTH);
	skip_ws(j);
	if (j->p >= j->end)
		return fail(j, "a value expected, found the end of the text");
	switch (*j->p) {
	case '{':
		return parse_members(j, v, depth, 1);
	case '[':
		return parse_members(j, v, depth, 0);
	case '"':
		v->type = J_STR;
		return parse_string(j, &v->str);
	case 't':
		v->type = J_BOOL;
		v->boolean = 1;
		return lit(j, "true");
	case 'f':
		v->type = J_BOOL;
		return lit(j, "false");
	case 'n':
		v->type = J_NULL;
		return lit(j, "null");
	default:
		return parse_number(j, v);
	}
}

int json_parse(const char *text, size_t len, struct jval *out, char *err, size_t errlen)
{
	struct jp j = { .s = text, .end = text + len, .p = text, .err = err, .errlen = errlen };

	memset(out, 0, sizeof(*out));
	if (parse_value(&j, out, 0) == 0) {
		skip_ws(&j);
		if (j.p < j.end)
			fail(&j, "more text after the JSON value");
	}
	if (j.failed) {
		json_free(out);
		return -1;
	}
	return 0;
}

void json_free(struct jval *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		json_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

const struct jval *json_get(const struct jval *obj, const char *key)
{
	size_t i;

	if (!obj || obj->type != J_OBJ)
		return NULL;
	for (i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return &obj->items[i];
	return NULL;
}

const char *json_get_str(const struct jval *obj, const char *key)
{
	const struct jval *v = json_get(obj, key);

	return v && v->type == J_STR ? v->str : NULL;
}

int json_get_u64(const struct jval *obj, const char *key, uint64_t *out)
{
	const struct jval *v = json_get(obj, key);

	if (!v || v->type != J_NUM || !v->exact || v->num < 0)
		return -1;
	*out = v->u;
	return 0;
}
