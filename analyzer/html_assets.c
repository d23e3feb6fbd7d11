/*
 * html_assets.c - the HTML report's style sheet and script, put into the
 * program from their own files, which can be read, linted and tested as
 * CSS and JavaScript: analyzer/html/report.css, and the script's parts
 * in order (fmt.js: number and time formats; view.js: DOM helpers and
 * tables; timeline.js: the chart; flame.js: the flame graph; main.js:
 * the page). Each array ends with a NUL. The page stays one
 * self-contained file: no network, no external script or font.
 *
 * The paths are relative to the top of the tree, where make runs the
 * compiler; the Makefile makes html_assets.o depend on the files.
 */
#include "html.h"

#define HTML_DIR "analyzer/html/"

__asm__(".section .rodata\n"
	".globl html_css\n"
	".type html_css, @object\n"
	"html_css:\n"
	".incbin \"" HTML_DIR "report.css\"\n"
	".byte 0\n"
	".size html_css, . - html_css\n"
	".globl html_js\n"
	".type html_js, @object\n"
	"html_js:\n"
	".incbin \"" HTML_DIR "fmt.js\"\n"
	".incbin \"" HTML_DIR "view.js\"\n"
	".incbin \"" HTML_DIR "timeline.js\"\n"
	".incbin \"" HTML_DIR "flame.js\"\n"
	".incbin \"" HTML_DIR "main.js\"\n"
	".byte 0\n"
	".size html_js, . - html_js\n"
	".previous\n");
