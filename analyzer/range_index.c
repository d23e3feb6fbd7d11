/*
 * range_index.c - an AVL tree of address ranges ordered by start, each
 * node carrying the largest end of its subtree (an interval tree). Depth
 * stays under 1.45 log2(n), so the recursion below is shallow.
 */
#include <stdlib.h>

#include "range_index.h"
#include "util.h"

struct range_node {
	uint64_t start, end;
	uint64_t max_end;        /* largest end in this subtree */
	void *item;
	struct range_node *left, *right;
	int height;
};

static int height(const struct range_node *n)
{
	return n ? n->height : 0;
}

static uint64_t max_end(const struct range_node *n)
{
	return n ? n->max_end : 0;
}

/* Recompute n's height and largest end from its children. */
static void update(struct range_node *n)
{
	int hl = height(n->left), hr = height(n->right);
	uint64_t m = n->end;

	n->height = 1 + (hl > hr ? hl : hr);
	if (max_end(n->left) > m)
		m = max_end(n->left);
	if (max_end(n->right) > m)
		m = max_end(n->right);
	n->max_end = m;
}

static struct range_node *rotate_right(struct range_node *y)
{
	struct range_node *x = y->left;

	y->left = x->right;
	x->right = y;
	update(y);
	update(x);
	return x;
}

static struct range_node *rotate_left(struct range_node *x)
{
	struct range_node *y = x->right;

	x->right = y->left;
	y->left = x;
	update(x);
	update(y);
	return y;
}

/* Restore the AVL balance at n after one of its subtrees changed by one level. */
static struct range_node *balance(struct range_node *n)
{
	int bf;

	update(n);
	bf = height(n->left) - height(n->right);
	if (bf > 1) {
		if (height(n->left->left) < height(n->left->right))
			n->left = rotate_left(n->left);
		return rotate_right(n);
	}
	if (bf < -1) {
		if (height(n->right->right) < height(n->right->left))
			n->right = rotate_right(n->right);
		return rotate_left(n);
	}
	return n;
}

static struct range_node *insert(struct range_index *ix, struct range_node *n, uint64_t start,
				 uint64_t end, void *item)
{
	if (!n) {
		n = xcalloc(1, sizeof(*n));
		n->start = start;
		n->end = end;
		n->item = item;
		n->height = 1;
		n->max_end = end;
		ix->n++;
		return n;
	}
	if (start < n->start) {
		n->left = insert(ix, n->left, start, end, item);
	} else if (start > n->start) {
		n->right = insert(ix, n->right, start, end, item);
	} else {
		n->end = end;
		n->item = item;
	}
	return balance(n);
}

void range_index_set(struct range_index *ix, uint64_t start, uint64_t end, void *item)
{
	ix->root = insert(ix, ix->root, start, end, item);
}

/* Unhook the leftmost node of n into *min; returns what is left of n. */
static struct range_node *take_min(struct range_node *n, struct range_node **min)
{
	if (!n->left) {
		*min = n;
		return n->right;
	}
	n->left = take_min(n->left, min);
	return balance(n);
}

static struct range_node *remove_node(struct range_index *ix, struct range_node *n,
				      uint64_t start, int *found)
{
	struct range_node *m;

	if (!n)
		return NULL;
	if (start < n->start) {
		n->left = remove_node(ix, n->left, start, found);
	} else if (start > n->start) {
		n->right = remove_node(ix, n->right, start, found);
	} else {
		*found = 1;
		ix->n--;
		if (!n->left || !n->right) {
			m = n->left ? n->left : n->right;
			free(n);
			return m;
		}
		n->right = take_min(n->right, &m);
		m->left = n->left;
		m->right = n->right;
		free(n);
		n = m;
	}
	return balance(n);
}

int range_index_remove(struct range_index *ix, uint64_t start)
{
	int found = 0;

	ix->root = remove_node(ix, ix->root, start, &found);
	return found ? 0 : -1;
}

static void find(const struct range_node *n, uint64_t start, uint64_t end, void ***out,
		 size_t *alloc, size_t *nr)
{
	/* no range below n reaches start */
	if (!n || n->max_end <= start)
		return;
	find(n->left, start, end, out, alloc, nr);
	if (n->start >= end)
		return; /* nor does n or anything right of it begin before end */
	if (n->end > start) {
		ALLOC_GROW(*out, *nr, *alloc);
		(*out)[(*nr)++] = n->item;
	}
	find(n->right, start, end, out, alloc, nr);
}

size_t range_index_find(const struct range_index *ix, uint64_t start, uint64_t end, void ***out,
			size_t *alloc)
{
	size_t nr = 0;

	find(ix->root, start, end, out, alloc, &nr);
	return nr;
}

static void free_nodes(struct range_node *n)
{
	while (n) {
		struct range_node *right = n->right;

		free_nodes(n->left);
		free(n);
		n = right;
	}
}

void range_index_release(struct range_index *ix)
{
	free_nodes(ix->root);
	ix->root = NULL;
	ix->n = 0;
}
