/*
 * flame.h - folded stacks of sites, shared by `--folded` output (one
 * "outer;...;inner BYTES" line per site, for flamegraph.pl and speedscope)
 * and the HTML report's flame graph (a tree of frames written as JSON).
 */
#ifndef MEMPROV_FLAME_H
#define MEMPROV_FLAME_H

#include <stdint.h>
#include <stdio.h>

#include "sites.h"

struct flame_node {
	char *name;
	uint64_t value;
	struct flame_node *child, *next;
};

/* One folded line: the site's frames outermost first, then value. */
void flame_folded(FILE *f, const struct site *s, uint64_t value);

/* Add a site's frames (outermost first) with value to the tree. */
void flame_add(struct flame_node *root, const struct site *s, uint64_t value);
/* {"n":NAME,"v":VALUE,"c":[...]} for the tree, children biggest first. */
void flame_json(FILE *f, const struct flame_node *root);
/* Free the tree below root and root's name (root itself is the caller's). */
void flame_free(struct flame_node *root);

#endif /* MEMPROV_FLAME_H */
