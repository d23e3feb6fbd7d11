/*
 * pattern.h - suppression-style patterns (pattern.c).
 */
#ifndef MEMPROV_PATTERN_H
#define MEMPROV_PATTERN_H

/* Does pattern match text (NULL: never)? '*' any run, '^' start, '$' end;
 * otherwise a substring. */
int pattern_match(const char *pattern, const char *text);

#endif /* MEMPROV_PATTERN_H */
