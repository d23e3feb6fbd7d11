/*
 * util.c - error reporting, checked allocation, human units, size
 * parsing, text output that is always valid UTF-8 (escaped for text, JSON,
 * HTML, XML or GitHub annotations) and names of trace enums.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memprov_trace.h"
#include "util.h"

/* ---- colour ---- */

static enum { WHEN_AUTO, WHEN_ALWAYS, WHEN_NEVER } color_when;
static int color_tty[3] = { -1, -1, -1 };   /* auto's answer for fds 0-2, once known */

int color_set(const char *when)
{
	if (!when || !strcmp(when, "always"))
		color_when = WHEN_ALWAYS;
	else if (!strcmp(when, "never"))
		color_when = WHEN_NEVER;
	else if (!strcmp(when, "auto"))
		color_when = WHEN_AUTO;
	else
		return -1;
	color_tty[0] = color_tty[1] = color_tty[2] = -1;
	return 0;
}

static int color_on(FILE *f)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
	int fd = fileno(f);

	if (color_when != WHEN_AUTO)
		return color_when == WHEN_ALWAYS;
	if (fd < 0 || fd > 2)
		return 0;
	if (color_tty[fd] < 0)
		color_tty[fd] = isatty(fd) && !(no && *no) && !(term && !strcmp(term, "dumb"));
	return color_tty[fd];
}

const char *color(FILE *f, enum color_code c)
{
	static const char *const seq[] = {
		[COLOR_RESET] = "\033[m", [COLOR_ERROR] = "\033[1;31m", [COLOR_WARNING] = "\033[1;33m",
		[COLOR_HEADING] = "\033[1m", [COLOR_OK] = "\033[1;32m", [COLOR_FAIL] = "\033[1;31m",
		[COLOR_DIM] = "\033[2m",
	};

	return color_on(f) ? seq[c] : "";
}

/* ---- errors ---- */

static void vreport(const char *prefix, enum color_code c, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "memprov: %s%s%s", *prefix ? color(stderr, c) : "", prefix,
		*prefix ? color(stderr, COLOR_RESET) : "");
	if (*prefix)
		fputc(' ', stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error:", COLOR_ERROR, fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning:", COLOR_WARNING, fmt, ap);
	va_end(ap);
}

static int stdout_err; /* the first failed flush's errno */

int stdout_flush(void)
{
	errno = 0;
	if (fflush(stdout) && !stdout_err)
		stdout_err = errno ? errno : EIO;
	return stdout_err;
}

int stdout_flush_take(void)
{
	int err = stdout_flush();

	if (!err && ferror(stdout))
		err = EIO;
	stdout_err = 0;
	clearerr(stdout);
	return err;
}

void note_written(const char *what, const char *path)
{
	fflush(stdout);
	fprintf(stderr, "memprov: %s written to ", what);
	put_text(stderr, path, ESC_TEXT);
	fputc('\n', stderr);
}

static int error_status = 1; /* error_exit_status */

void error_exit_status_set(int status)
{
	error_status = status;
}

int error_exit_status(void)
{
	return error_status;
}

void die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", COLOR_RESET, fmt, ap);
	va_end(ap);
	exit(status);
}

/* Out of memory: the one way the analyzer ends outside main(). */
static void *oom(size_t n)
{
	die(error_status, "out of memory allocating %zu bytes", n);
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

FILE *xopen_memstream(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	return f ? f : oom(BUFSIZ);
}

/* ---- numbers as the reports write them ---- */

const char *fmt_count(char *buf, size_t len, uint64_t n)
{
	char digits[24], *p = digits + sizeof(digits) - 1;
	char out[32], *q = out + sizeof(out) - 1;
	int k = 0;

	*p = 0;
	do {
		*--p = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	*q = 0;
	for (char *d = digits + sizeof(digits) - 2; d >= p; d--) {
		if (k && k % 3 == 0)
			*--q = ',';
		*--q = *d;
		k++;
	}
	snprintf(buf, len, "%s", q);
	return buf;
}

const char *human_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	char c[32];
	uint64_t tenths;
	double v = (double)bytes;
	unsigned i = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%s B", fmt_count(c, sizeof(c), bytes));
		return buf;
	}
	v /= 1024;
	/* rounded as printed: 1023.96 KiB is 1.0 MiB, not 1024.0 KiB */
	while (nearbyint(v * 10) >= 10240 && i + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		i++;
	}
	tenths = (uint64_t)nearbyint(v * 10);
	snprintf(buf, len, "%s.%u %s", fmt_count(c, sizeof(c), tenths / 10), (unsigned)(tenths % 10),
		 units[i]);
	return buf;
}

const char *bytes_exact(char *buf, size_t len, uint64_t bytes)
{
	char h[32], c[32];

	if (bytes < 1024)
		return human_bytes(buf, len, bytes);
	snprintf(buf, len, "%s (%s B)", human_bytes(h, sizeof(h), bytes), fmt_count(c, sizeof(c), bytes));
	return buf;
}

const char *bytes_delta(char *buf, size_t len, int64_t bytes)
{
	uint64_t a = bytes < 0 ? -(uint64_t)bytes : (uint64_t)bytes;
	const char *sign = bytes > 0 ? "+" : bytes < 0 ? "-" : "";
	char h[32], c[32];

	if (a < 1024)
		snprintf(buf, len, "%s%s", sign, human_bytes(h, sizeof(h), a));
	else
		snprintf(buf, len, "%s%s (%s%s B)", sign, human_bytes(h, sizeof(h), a), sign,
			 fmt_count(c, sizeof(c), a));
	return buf;
}

const char *fmt_rate(char *buf, size_t len, double v)
{
	char c[32];
	double r = nearbyint(fabs(v));

	if (v > 0 && v < 0.5)
		snprintf(buf, len, "<1");
	else if (v < 0 && v > -0.5)
		snprintf(buf, len, ">-1");
	else
		snprintf(buf, len, "%s%s", v < 0 ? "-" : "",
			 fmt_count(c, sizeof(c), r >= 1.8e19 ? UINT64_MAX : (uint64_t)r));
	return buf;
}

const char *bytes_rate(char *buf, size_t len, double v)
{
	if (v > 0 && v < 0.5) {
		snprintf(buf, len, "<1 B");
		return buf;
	}
	if (v < 0)
		return bytes_delta(buf, len, (int64_t)nearbyint(v));
	return bytes_exact(buf, len, v >= 1.8e19 ? UINT64_MAX : (uint64_t)nearbyint(v));
}

const char *human_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f \u00b5s", ns / 1e3);
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

/*
 * Decode the UTF-8 character at p into *cp and return its length. Bytes
 * that do not begin a valid sequence (overlong forms, surrogates, code
 * points past U+10FFFF, a stray continuation byte, a sequence cut short
 * by another character or the end) give U+FFFD for their longest valid
 * beginning (at least one byte), as Unicode recommends. Reads no byte
 * past a terminating NUL.
 */
static int utf8_decode(const unsigned char *p, unsigned *cp)
{
	unsigned c = p[0], lo = 0x80, hi = 0xbf;
	int n, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		*cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		*cp = c & 0x0f;
		lo = c == 0xe0 ? 0xa0 : 0x80;   /* not overlong */
		hi = c == 0xed ? 0x9f : 0xbf;   /* not a surrogate */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		*cp = c & 0x07;
		lo = c == 0xf0 ? 0x90 : 0x80;   /* not overlong */
		hi = c == 0xf4 ? 0x8f : 0xbf;   /* not past U+10FFFF */
	} else {
		*cp = 0xfffd;
		return 1;
	}
	for (i = 1; i < n; i++) {
		if (p[i] < lo || p[i] > hi) {
			*cp = 0xfffd;
			return i;
		}
		*cp = (*cp << 6) | (p[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

static void utf8_encode(FILE *f, unsigned cp)
{
	if (cp < 0x80) {
		fputc((int)cp, f);
	} else if (cp < 0x800) {
		fputc((int)(0xc0 | cp >> 6), f);
		fputc((int)(0x80 | (cp & 0x3f)), f);
	} else if (cp < 0x10000) {
		fputc((int)(0xe0 | cp >> 12), f);
		fputc((int)(0x80 | (cp >> 6 & 0x3f)), f);
		fputc((int)(0x80 | (cp & 0x3f)), f);
	} else {
		fputc((int)(0xf0 | cp >> 18), f);
		fputc((int)(0x80 | (cp >> 12 & 0x3f)), f);
		fputc((int)(0x80 | (cp >> 6 & 0x3f)), f);
		fputc((int)(0x80 | (cp & 0x3f)), f);
	}
}

/* Write the escape of cp for how, or return 0 when cp goes out as itself. */
static int escape(FILE *f, unsigned cp, enum text_escape how)
{
	switch (how) {
	case ESC_TEXT:
		if (cp == '\n')
			return fputs("\\n", f), 1;
		if (cp == '\t')
			return fputs("\\t", f), 1;
		if (cp < 0x20 || cp == 0x7f)
			return fprintf(f, "\\x%02x", cp), 1;
		return 0;
	case ESC_SCRIPT_JSON:
		/* nothing may read as markup, end the element or a JS line */
		if (cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 || cp == 0x2029)
			return fprintf(f, "\\u%04x", cp), 1;
		return 0;
	case ESC_JSON:
		if (cp == '"' || cp == '\\')
			return fprintf(f, "\\%c", (int)cp), 1;
		if (cp == '\n')
			return fputs("\\n", f), 1;
		if (cp == '\r')
			return fputs("\\r", f), 1;
		if (cp == '\t')
			return fputs("\\t", f), 1;
		if (cp < 0x20 || cp == 0x7f)
			return fprintf(f, "\\u%04x", cp), 1;
		return 0;
	case ESC_XML:
		/* XML 1.0 has no way to write most controls, U+FFFE or U+FFFF */
		if (cp < 0x20 && cp != '\n' && cp != '\t')
			return fputc('?', f), 1;
		if (cp == 0xfffe || cp == 0xffff)
			return utf8_encode(f, 0xfffd), 1;
		/* fall through */
	case ESC_HTML:
		if (cp == '&')
			return fputs("&amp;", f), 1;
		if (cp == '<')
			return fputs("&lt;", f), 1;
		if (cp == '>')
			return fputs("&gt;", f), 1;
		if (cp == '"')
			return fputs("&quot;", f), 1;
		return 0;
	case ESC_ANNOT_PROPERTY:
		if (cp == ':')
			return fputs("%3A", f), 1;
		if (cp == ',')
			return fputs("%2C", f), 1;
		/* fall through */
	case ESC_ANNOT_DATA:
		if (cp == '%')
			return fputs("%25", f), 1;
		if (cp == '\r')
			return fputs("%0D", f), 1;
		if (cp == '\n')
			return fputs("%0A", f), 1;
		return 0;
	}
	return 0;
}

void put_text(FILE *f, const char *s, enum text_escape how)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned cp;
		int n = utf8_decode(p, &cp);

		if (!escape(f, cp, how))
			utf8_encode(f, cp);
		p += n;
	}
}

void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	put_text(f, s, ESC_JSON);
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
		[MP_REACH_NOMAPS] = "no-memory-map",
	};

	return status < ARRAY_SIZE(names) && names[status] ? names[status] : "unknown";
}
