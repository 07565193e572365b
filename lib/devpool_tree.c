#include "preamble.h"
/*
 * devpool_tree.c -- the device engine's block records and the treaps that
 * index them (devpool_int.h): by_addr (every block), by_size (free blocks
 * of shared segments) and own_free (cached own segments), the last two
 * keyed (size, addr).
 *
 * A treap's priorities are a hash of the key, so its shape depends only on
 * its keys (no random state); recursion depth is its height, O(log n)
 * expected.  Block records are recycled through dp->spare.
 *
 * Locking: none; the caller serialises (devpool.h).
 */
#include <stdlib.h>
#include <string.h>

#include "devpool_int.h"
#include "hash.h"

/* ---------------------------------------------------------------- treap */

static tnode_t *
rot_right(tnode_t *t)
{
	tnode_t *l = t->l;
	t->l = l->r;
	l->r = t;
	return l;
}

static tnode_t *
rot_left(tnode_t *t)
{
	tnode_t *r = t->r;
	t->r = r->l;
	r->l = t;
	return r;
}

static tnode_t *
t_insert(tnode_t *root, tnode_t *n, tcmp_t cmp)
{
	if (root == NULL) {
		n->l = n->r = NULL;
		return n;
	}
	if (cmp(n, root) < 0) {
		root->l = t_insert(root->l, n, cmp);
		if (root->l->prio > root->prio)
			root = rot_right(root);
	} else {
		root->r = t_insert(root->r, n, cmp);
		if (root->r->prio > root->prio)
			root = rot_left(root);
	}
	return root;
}

static tnode_t *
t_merge(tnode_t *a, tnode_t *b)
{
	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	if (a->prio > b->prio) {
		a->r = t_merge(a->r, b);
		return a;
	}
	b->l = t_merge(a, b->l);
	return b;
}

static tnode_t *
t_remove(tnode_t *root, tnode_t *n, tcmp_t cmp)
{
	if (root == NULL)
		return NULL; /* not found: a bug, caught by validate */
	if (root == n)
		return t_merge(n->l, n->r);
	if (cmp(n, root) < 0)
		root->l = t_remove(root->l, n, cmp);
	else
		root->r = t_remove(root->r, n, cmp);
	return root;
}

/* --------------------------------------------------------------- blocks */

int
devpool_cmp_addr(const tnode_t *a, const tnode_t *b)
{
	const block_t *x = BLK_OF(a, by_addr), *y = BLK_OF(b, by_addr);
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int
devpool_cmp_size(const tnode_t *a, const tnode_t *b)
{
	const block_t *x = BLK_OF(a, by_size), *y = BLK_OF(b, by_size);
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

block_t *
devpool_blk_new(devpool_t *dp)
{
	block_t *b = dp->spare;
	if (b != NULL)
		dp->spare = b->next;
	else if ((b = malloc(sizeof(*b))) == NULL)
		return NULL;
	memset(b, 0, sizeof(*b));
	dp->nblocks++;
	return b;
}

void
devpool_blk_delete(devpool_t *dp, block_t *b)
{
	b->next = dp->spare;
	dp->spare = b;
	dp->nblocks--;
}

void
devpool_addr_insert(devpool_t *dp, block_t *b)
{
	b->by_addr.prio = hash_mix64(b->addr);
	dp->by_addr = t_insert(dp->by_addr, &b->by_addr, devpool_cmp_addr);
}

void
devpool_addr_remove(devpool_t *dp, block_t *b)
{
	dp->by_addr = t_remove(dp->by_addr, &b->by_addr, devpool_cmp_addr);
}

void
devpool_size_insert(devpool_t *dp, block_t *b)
{
	b->by_size.prio = hash_mix64(b->addr ^ ((uint64_t)b->size << 17));
	dp->by_size = t_insert(dp->by_size, &b->by_size, devpool_cmp_size);
	dp->nfree_blocks++;
}

void
devpool_size_remove(devpool_t *dp, block_t *b)
{
	dp->by_size = t_remove(dp->by_size, &b->by_size, devpool_cmp_size);
	dp->nfree_blocks--;
}

void
devpool_ownfree_insert(devpool_t *dp, block_t *b)
{
	b->by_size.prio = hash_mix64(b->addr ^ 0x5bd1e995);
	dp->own_free = t_insert(dp->own_free, &b->by_size, devpool_cmp_size);
	dp->nown_cached++;
	dp->st.own_cached += b->size;
}

void
devpool_ownfree_remove(devpool_t *dp, block_t *b)
{
	dp->own_free = t_remove(dp->own_free, &b->by_size, devpool_cmp_size);
	dp->nown_cached--;
	dp->st.own_cached -= b->size;
}

block_t *
devpool_size_lower_bound(tnode_t *t, size_t want)
{
	block_t *best = NULL;
	while (t != NULL) {
		block_t *b = BLK_OF(t, by_size);
		if (b->size >= want) {
			best = b;
			t = t->l;
		} else {
			t = t->r;
		}
	}
	return best;
}

block_t *
devpool_size_max(tnode_t *t)
{
	if (t == NULL)
		return NULL;
	while (t->r != NULL)
		t = t->r;
	return BLK_OF(t, by_size);
}

block_t *
devpool_addr_floor(const devpool_t *dp, uintptr_t a)
{
	block_t *best = NULL;
	tnode_t *t = dp->by_addr;
	while (t != NULL) {
		block_t *b = BLK_OF(t, by_addr);
		if (b->addr <= a) {
			best = b;
			t = t->r;
		} else {
			t = t->l;
		}
	}
	return best;
}
