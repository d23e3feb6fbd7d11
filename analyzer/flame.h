/*
 * flame.h - folded stacks of sites for `--folded` output (one
 * "outer;...;inner BYTES" line per site, for flamegraph.pl and
 * speedscope). The HTML report builds its flame graph in the page.
 */
#ifndef MEMPROV_FLAME_H
#define MEMPROV_FLAME_H

#include <stdint.h>
#include <stdio.h>

#include "sites.h"

/* One folded line: the site's frames outermost first, then value. */
void flame_folded(FILE *f, const struct site *s, uint64_t value);

#endif /* MEMPROV_FLAME_H */
