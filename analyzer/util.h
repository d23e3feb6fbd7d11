/*
 * util.h - small helpers shared by the memprov analyzer: error reporting
 * in git's error() style, allocation that dies on exhaustion, human
 * byte units, size parsing and text output that is always valid UTF-8.
 */
#ifndef MEMPROV_UTIL_H
#define MEMPROV_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Print "memprov: error: ..." on stderr and return -1. Errors go up to
 * main() as return values; the analyzer ends elsewhere only when it runs
 * out of memory (die, below: exit 1, as git's xmalloc) and when
 * `memprov run` dies of the signal that killed its command (run.c).
 */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "memprov: warning: ..." on stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "memprov: WHAT written to PATH" on stderr: every file memprov writes is named. */
void note_written(const char *what, const char *path);
/* fflush(stdout): 0, or the errno of the first flush of stdout that failed
 * (kept: a later flush finds the stream's error flag and no reason). */
int stdout_flush(void);
/* The same, then forgotten with the stream's error flag: stdout was another
 * file for a while (run --check's report), and its failure is said there. */
int stdout_flush_take(void);
/*
 * Print "memprov: ..." on stderr and exit(status): for running out of
 * memory only (the x* helpers below; prefer them), never for an error
 * that a caller can report.
 */
void die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
/*
 * The status an error that ends the analyzer outside main() exits with
 * (running out of memory, a worker that cannot start): 1, or what the
 * subcommand set (check and run --check: 2, since 1 says "over budget").
 */
void error_exit_status_set(int status);
int error_exit_status(void);

/*
 * Colour: escape sequences for f, or "" when f gets no colour. --color=WHEN
 * (color_set: "auto", "always", "never"; NULL is "always") chooses; auto,
 * the default, colours a terminal only, and never when NO_COLOR is set
 * (non-empty) or TERM is "dumb". Returns 0, or -1 for another WHEN.
 */
enum color_code {
	COLOR_RESET,
	COLOR_ERROR,    /* "error:" */
	COLOR_WARNING,  /* "warning:" */
	COLOR_HEADING,  /* a site's first line */
	COLOR_OK,       /* a verdict that passes */
	COLOR_FAIL,     /* a verdict that fails */
	COLOR_DIM,      /* secondary text */
};
int color_set(const char *when);
const char *color(FILE *f, enum color_code c);

/* Allocation that cannot fail: out of memory ends the analyzer. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* open_memstream that cannot fail, likewise. */
FILE *xopen_memstream(char **buf, size_t *len);

/*
 * Numbers as every report writes them (the HTML page's fmt.js does the
 * same): whole bytes and blocks, thousands separators, one human figure
 * with the exact one beside it where it matters, never both when they
 * read the same. Each writes into buf and returns it; HUMAN_LEN is room
 * for any of them.
 */
#define HUMAN_LEN 64
/* "8,000,000" */
const char *fmt_count(char *buf, size_t len, uint64_t n);
/* "300 B", "7.6 MiB", "1,023.5 KiB": one figure, exact under 1 KiB. */
const char *human_bytes(char *buf, size_t len, uint64_t bytes);
/* "300 B", "7.6 MiB (8,000,000 B)": the exact bytes beside a rounded figure. */
const char *bytes_exact(char *buf, size_t len, uint64_t bytes);
/* "+7.6 MiB (+8,000,000 B)", "-300 B", "0 B": a signed amount. */
const char *bytes_delta(char *buf, size_t len, int64_t bytes);
/* A rate or mean rounded to a whole number: "3", "24,000,000"; "<1" (">-1") under 0.5. */
const char *fmt_rate(char *buf, size_t len, double v);
/* A byte rate: bytes_exact of it rounded ("22.9 MiB (24,000,000 B)"), "<1 B" under 0.5. */
const char *bytes_rate(char *buf, size_t len, double v);
/* "850 ns", "12.5 µs", "3.2 ms", "5.190 s". */
const char *human_ns(char *buf, size_t len, uint64_t ns);

/*
 * Parse "4096", "10K", "10M", "512KiB", "1.5GiB", "2kB" (binary units for
 * both spellings). Returns 0, or -1 on a malformed or overflowing value.
 */
int parse_size(const char *s, uint64_t *out);

/* How put_text escapes what it writes. */
enum text_escape {
	ESC_TEXT,            /* a text report: controls as \n, \t, \xNN */
	ESC_JSON,            /* inside a JSON string: quotes, backslashes, controls */
	ESC_SCRIPT_JSON,     /* JSON text put in an HTML <script>: < > & U+2028 U+2029 as
			      * \uXXXX (they occur only inside JSON strings) */
	ESC_HTML,            /* HTML text or attribute: & < > " */
	ESC_XML,             /* XML text or attribute: as HTML, and the controls XML forbids */
	ESC_ANNOT_DATA,      /* GitHub workflow command message: % CR LF */
	ESC_ANNOT_PROPERTY,  /* GitHub workflow command property: also : , */
};

/*
 * Write s as valid UTF-8, escaped for how: every invalid sequence
 * (overlong, surrogate, past U+10FFFF, cut short, stray continuation byte)
 * becomes U+FFFD. Every string from a trace that a report writes goes
 * through here: paths, command lines, labels and names are bytes, not text.
 */
void put_text(FILE *f, const char *s, enum text_escape how);
/* Write s as a JSON string literal, quotes included; NULL writes null. */
void json_str(FILE *f, const char *s);

/* Name of an mp_func / mp_kind / mp_state number ("func#N" if unknown). */
const char *func_name(unsigned fn);
const char *kind_name(unsigned kind);
const char *state_name(unsigned state);
/* enum mp_reach_class ("definitely_lost") and enum mp_reach_status ("done"). */
const char *reach_class_name(unsigned cls);
const char *reach_status_name(unsigned status);

/*
 * Room for one more element in array x, nr used of alloc: doubles alloc
 * (16 at first) when it is full (git's ALLOC_GROW).
 */
#define ALLOC_GROW(x, nr, alloc)                                               \
	do {                                                                   \
		if ((nr) >= (alloc)) {                                         \
			(alloc) = (alloc) ? 2 * (alloc) : 16;                  \
			(x) = xrealloc((x), (alloc) * sizeof(*(x)));           \
		}                                                              \
	} while (0)

/* qsort that accepts an empty array (qsort(NULL, 0, ...) is undefined). */
static inline void sort_array(void *base, size_t n, size_t size,
			      int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

#endif /* MEMPROV_UTIL_H */
