/*
 * html.h - the HTML report's assets (html_assets.c).
 */
#ifndef MEMPROV_HTML_H
#define MEMPROV_HTML_H

extern const char html_css[];
extern const char html_js[];

#endif /* MEMPROV_HTML_H */
