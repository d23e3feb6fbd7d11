/*
 * json_read.h - read JSON text (RFC 8259) into a tree: what `memprov
 * merge` needs to read the summaries that `leaks --json` and `growth
 * --json` wrote. Strict: one value, nothing after it but white space;
 * an error names the line and column where the text went wrong.
 */
#ifndef MEMPROV_JSON_READ_H
#define MEMPROV_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	int boolean;
	double num;          /* J_NUM */
	int exact;           /* J_NUM: an integer in int64 or uint64 range, written without . or e */
	int64_t i;           /* J_NUM, exact: the value (negative ones) */
	uint64_t u;          /* J_NUM, exact and >= 0: the value */
	char *str;           /* J_STR: UTF-8, NUL-terminated (a \u0000 ends it early) */
	size_t n;            /* J_ARR, J_OBJ: members */
	struct jval *items;  /* J_ARR, J_OBJ: the values */
	char **keys;         /* J_OBJ: the names */
};

/*
 * Parse text[0..len) into *out. Returns 0, or -1 with a message
 * ("line L, column C: what was wrong") in err.
 */
int json_parse(const char *text, size_t len, struct jval *out, char *err, size_t errlen);
void json_free(struct jval *v);

/* Object member by name, or NULL (not an object, or no such member). */
const struct jval *json_get(const struct jval *obj, const char *key);
/* The member as a string, or NULL when absent or not a string. */
const char *json_get_str(const struct jval *obj, const char *key);
/* The member as an exact unsigned integer: 0, or -1 when absent, not one. */
int json_get_u64(const struct jval *obj, const char *key, uint64_t *out);

#endif /* MEMPROV_JSON_READ_H */
