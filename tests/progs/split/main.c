/*
 * split/main.c - the first unit of tests/bin/split (see tests/progs.mk),
 * linked in this order: main.c and tail.c with their .debug_aranges,
 * part.c between them and last.c after them without (as a cgo program's
 * Go code, which Go gives none). Each allocating line must be its own
 * file's. Used by t1050-symbolize.sh.
 */
#include <stdlib.h>

void *main_alloc(size_t n);
void *part_alloc(size_t n);
void *tail_alloc(size_t n);
void *last_alloc(size_t n);

void *main_alloc(size_t n)
{
	return malloc(n);
}

int main(void)
{
	static void *keep[4];

	keep[0] = main_alloc(100);
	keep[1] = part_alloc(200);
	keep[2] = tail_alloc(300);
	keep[3] = last_alloc(400);
	return keep[0] && keep[1] && keep[2] && keep[3] ? 0 : 1;
}
