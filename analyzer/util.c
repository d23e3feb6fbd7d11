/*
 * util.c - error reporting, checked allocation, human units, size
 * parsing, JSON escaping and names of trace enums for the analyzer.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "memprov_trace.h"
#include "util.h"

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "memprov: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	exit(status);
}

static void *oom(size_t n)
{
	die(1, "out of memory allocating %zu bytes", n);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	return p ? p : oom(n);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	return p ? p : oom(n * size);
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	return p ? p : oom(n);
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

const char *human_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	unsigned i = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	v /= 1024;
	while (v >= 1024 && i + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, "%.1f %s", v, units[i]);
	return buf;
}

const char *human_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
	return buf;
}

int parse_size(const char *s, uint64_t *out)
{
	static const struct { const char *name; int shift; } units[] = {
		{ "", 0 }, { "b", 0 },
		{ "k", 10 }, { "kb", 10 }, { "kib", 10 },
		{ "m", 20 }, { "mb", 20 }, { "mib", 20 },
		{ "g", 30 }, { "gb", 30 }, { "gib", 30 },
		{ "t", 40 }, { "tb", 40 }, { "tib", 40 },
	};
	char unit[8];
	char *end;
	double v;
	size_t i, n;

	errno = 0;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	while (*end == ' ')
		end++;
	n = strlen(end);
	if (n >= sizeof(unit))
		return -1;
	for (i = 0; i <= n; i++)
		unit[i] = (char)tolower((unsigned char)end[i]);
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(unit, units[i].name))
			continue;
		v = ldexp(v, units[i].shift);
		if (v >= 18446744073709551616.0)
			return -1;
		*out = (uint64_t)v;
		return 0;
	}
	return -1;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if it is not one. */
static int utf8_len(const unsigned char *p)
{
	int n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*p) {
		int n = utf8_len(p);

		if (n > 1) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
			continue;
		}
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			/* control bytes, and bytes that are not UTF-8 (as Latin-1) */
			if (*p < 0x20 || *p >= 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
		p++;
	}
	fputc('"', f);
}

const char *func_name(unsigned fn)
{
	static char buf[32];

	switch (fn) {
#define MP_FUNC_NAME(id, name) case id: return #name;
	MP_FUNCS(MP_FUNC_NAME)
#undef MP_FUNC_NAME
	case 0: return "none";
	}
	snprintf(buf, sizeof(buf), "func#%u", fn);
	return buf;
}

const char *kind_name(unsigned kind)
{
	static const char *const names[] = {
#define MP_KIND_NAME(id, name, NAME) [id] = #name,
		MP_KINDS(MP_KIND_NAME)
#undef MP_KIND_NAME
	};

	return kind < ARRAY_SIZE(names) && names[kind] ? names[kind] : "unknown";
}

const char *state_name(unsigned state)
{
	static const char *const names[] = {
#define MP_STATE_NAME(id, name, NAME) [id] = #name,
		MP_STATES(MP_STATE_NAME)
#undef MP_STATE_NAME
	};

	return state < ARRAY_SIZE(names) && names[state] ? names[state] : "running";
}

const char *reach_class_name(unsigned cls)
{
	static const char *const names[] = {
#define MP_REACH_CLASS_NAME(id, name, NAME) [id] = #name,
		MP_REACH_CLASSES(MP_REACH_CLASS_NAME)
#undef MP_REACH_CLASS_NAME
	};

	return cls < ARRAY_SIZE(names) && names[cls] ? names[cls] : "unknown";
}

const char *reach_status_name(unsigned status)
{
	static const char *const names[] = {
		[MP_REACH_DONE] = "done", [MP_REACH_OFF] = "off",
		[MP_REACH_TIMEOUT] = "timeout", [MP_REACH_NOMEM] = "memory",
		[MP_REACH_NOTRACE] = "unreadable-trace", [MP_REACH_UNSUPPORTED] = "unsupported",
		[MP_REACH_FAULT] = "fault", [MP_REACH_PARTIAL] = "partial-trace",
	};

	return status < ARRAY_SIZE(names) && names[status] ? names[status] : "unknown";
}
