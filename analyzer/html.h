/*
 * html.h - the HTML report's parts: the data the page renders
 * (html_data.c) and its script and style sheet (html_assets.c, from
 * analyzer/html/).
 */
#ifndef MEMPROV_HTML_H
#define MEMPROV_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "growth.h"
#include "report.h"
#include "timeline.h"

/*
 * The page's data, one JSON object ("schema": "memprov.html/1"): trace,
 * timeline, marks and window, gap, suspects, live memory at the end by
 * site (with what the gate's default suppressions explain), and the
 * frame table the sites' "f" lists index. g must be analyzed
 * (growth_analyze) and collected with GROWTH_END_LIVE.
 */
void html_data(FILE *f, struct growth *g, const struct tl_gap *gap, uint64_t min_gap);

/* The page's style sheet and script, NUL-terminated. */
extern const char html_css[];
extern const char html_js[];

#endif /* MEMPROV_HTML_H */
