/*
 * range_index.h - address ranges [start, end) in a balanced tree ordered
 * by start, where each subtree knows the largest end inside it, so that
 * the ranges meeting a query range are found in O(log n + k) however many
 * there are. Starts are unique; ranges may overlap. The replay indexes
 * its live mmap blocks with it: a munmap then costs O(log n), not a walk
 * over every live mapping.
 */
#ifndef MEMPROV_RANGE_INDEX_H
#define MEMPROV_RANGE_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct range_node;

struct range_index {
	struct range_node *root;
	size_t n;
};

/* Add [start, end) for item, or replace the range that starts at start. */
void range_index_set(struct range_index *ix, uint64_t start, uint64_t end, void *item);
/* Remove the range that starts at start: 0, or -1 when there is none. */
int range_index_remove(struct range_index *ix, uint64_t start);
/*
 * The items of the ranges that meet [start, end) (s < end && e > start),
 * in order of start, into *out (grown as needed, *alloc its room).
 * Returns how many.
 */
size_t range_index_find(const struct range_index *ix, uint64_t start, uint64_t end, void ***out,
			size_t *alloc);
void range_index_release(struct range_index *ix);

#endif /* MEMPROV_RANGE_INDEX_H */
