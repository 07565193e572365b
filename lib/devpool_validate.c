#include "preamble.h"
/*
 * devpool_validate.c -- devpool_validate (devpool.h): checks every
 * invariant of devpool_int.h -- the treaps' key and heap order and their
 * counts, the tiling of segments by their blocks, coalescing, slab
 * geometry, bitmaps and partial lists, and every counter against the sum
 * it stands for.  It walks every structure: the unit test runs it after
 * every step, the pools never.
 *
 * Locking: none; the caller serialises (devpool.h).
 */
#include "devpool_int.h"
#include "fmt.h"
#include "sizeclass.h"

typedef struct vstate_s {
	char *why;
	size_t whylen;
	bool bad;
	size_t count;
	const tnode_t *last;
} vstate_t;

static bool
vfail(vstate_t *v, const char *msg, uintptr_t addr)
{
	if (!v->bad && v->why != NULL)
		fmt_snprintf(v->why, v->whylen, "%s at %#lx", msg,
		    (unsigned long)addr);
	v->bad = true;
	return true;
}

/* In-order walk: key order, heap order, count.  Recursion depth is the
 * treap's height (O(log n) expected). */
static void
vwalk(vstate_t *v, const tnode_t *t, tcmp_t cmp, uintptr_t (*addr_of)(
    const tnode_t *))
{
	if (t == NULL || v->bad)
		return;
	if ((t->l != NULL && t->l->prio > t->prio) ||
	    (t->r != NULL && t->r->prio > t->prio))
		vfail(v, "treap heap order broken", addr_of(t));
	vwalk(v, t->l, cmp, addr_of);
	if (v->last != NULL && cmp(v->last, t) >= 0)
		vfail(v, "treap key order broken", addr_of(t));
	v->last = t;
	v->count++;
	vwalk(v, t->r, cmp, addr_of);
}

static uintptr_t
addr_of_a(const tnode_t *t)
{
	return BLK_OF(t, by_addr)->addr;
}

static uintptr_t
addr_of_s(const tnode_t *t)
{
	return BLK_OF(t, by_size)->addr;
}

bool
devpool_validate(devpool_t *dp, char *why, size_t whylen)
{
	vstate_t v = { why, whylen, false, 0, NULL };
	vwalk(&v, dp->by_addr, devpool_cmp_addr, addr_of_a);
	if (!v.bad && v.count != dp->nblocks)
		vfail(&v, "by_addr count differs from blocks", 0);
	v.count = 0;
	v.last = NULL;
	vwalk(&v, dp->by_size, devpool_cmp_size, addr_of_s);
	if (!v.bad && v.count != dp->nfree_blocks)
		vfail(&v, "by_size count differs from free blocks", 0);
	v.count = 0;
	v.last = NULL;
	vwalk(&v, dp->own_free, devpool_cmp_size, addr_of_s);
	if (!v.bad && v.count != dp->nown_cached)
		vfail(&v, "own_free count differs", 0);
	if (v.bad)
		return true;

	size_t reserved = 0, allocated = 0, nseg = 0, nown = 0, ncached = 0;
	size_t nfree = 0, nslabs = 0;
	for (seg_t *s = dp->segs; s != NULL; s = s->next) {
		nseg++;
		reserved += s->size;
		block_t *b = devpool_addr_floor(dp, s->addr);
		if (b == NULL || b->addr != s->addr || b->prev != NULL)
			return vfail(&v, "segment does not start a block",
			    s->addr);
		if (s->own) {
			nown++;
			if (b->size != s->size || b->next != NULL)
				return vfail(&v, "own segment split", s->addr);
			if (b->state == B_OWN_USED)
				allocated += b->size;
			else if (b->state == B_OWN_CACHED)
				ncached += b->size;
			else
				return vfail(&v, "own segment state", s->addr);
			continue;
		}
		uintptr_t end = s->addr;
		for (; b != NULL; b = b->next) {
			if (b->addr != end || b->seg != s)
				return vfail(&v, "blocks do not tile segment",
				    b->addr);
			if (b->addr % SIZECLASS_GRANULE || b->size == 0)
				return vfail(&v, "block misaligned", b->addr);
			if (devpool_addr_floor(dp, b->addr) != b)
				return vfail(&v, "block not in by_addr",
				    b->addr);
			if (b->next != NULL && b->next->prev != b)
				return vfail(&v, "neighbour links", b->addr);
			end += b->size;
			switch (b->state) {
			case B_FREE:
				nfree++;
				if (b->next != NULL && b->next->state == B_FREE)
					return vfail(&v, "free neighbours not "
					    "coalesced", b->addr);
				break;
			case B_USED:
				allocated += b->size;
				break;
			case B_SLAB: {
				slab_t *sl = b->slab;
				nslabs++;
				size_t cs = sizeclass_size(sl->cls,
				    SIZECLASS_LGD_DEVICE);
				if (sl->blk != b || sl->nregs * cs != b->size)
					return vfail(&v, "slab geometry",
					    b->addr);
				unsigned used = 0;
				for (unsigned k = 0; k < sl->nregs; k++)
					used += (sl->used[k / 64] >>
					    (k % 64)) & 1;
				if (used + sl->nfree != sl->nregs)
					return vfail(&v, "slab bitmap count",
					    b->addr);
				allocated += used * cs;
				bool on = false;
				for (slab_t *p = dp->partial[sl->cls]; p;
				    p = p->next)
					on = on || p == sl;
				if (on != (sl->nfree > 0))
					return vfail(&v, "slab partial list",
					    b->addr);
				break;
			}
			case B_OWN_USED:
			case B_OWN_CACHED:
			default:
				return vfail(&v, "own block in shared segment",
				    b->addr);
			}
		}
		if (end != s->addr + s->size)
			return vfail(&v, "blocks do not cover segment",
			    s->addr);
	}
	if (reserved != dp->st.reserved)
		return vfail(&v, "reserved counter", reserved);
	if (allocated != dp->st.allocated)
		return vfail(&v, "allocated counter", allocated);
	if (nseg != dp->st.segments || nown != dp->st.own_segments)
		return vfail(&v, "segment counters", nseg);
	if (ncached != dp->st.own_cached)
		return vfail(&v, "own cached counter", ncached);
	if (nfree != dp->nfree_blocks)
		return vfail(&v, "free blocks not all in by_size", nfree);
	if (nslabs != dp->st.slabs)
		return vfail(&v, "slab counter", nslabs);
	return false;
}
