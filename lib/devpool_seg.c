#include "preamble.h"
/*
 * devpool_seg.c -- the device engine's segments and the best-fit blocks
 * carved from the shared ones (devpool_int.h).
 *
 * A segment comes from the provider whole and goes back whole: shared
 * segments (cfg.segment_size, or whole GPU pages for a block larger than
 * that) are tiled by blocks in address order, split on allocation and
 * coalesced with free neighbours on free; an own segment is one block
 * (devpool_own.c).  reserved never passes cfg.limit.
 *
 * Locking: none; the caller serialises (devpool.h).  No pointer into the
 * structures is held across a provider call.
 */
#include <stdlib.h>

#include "devpool_int.h"
#include "log.h"
#include "sizeclass.h"

/* ------------------------------------------------------------- segments */

static bool
would_pass_limit(const devpool_t *dp, size_t more)
{
	return dp->cfg.limit != 0 && dp->st.reserved + more > dp->cfg.limit;
}

int
devpool_seg_grow(devpool_t *dp, size_t size, bool own, block_t **out)
{
	if (would_pass_limit(dp, size))
		return DEVPOOL_ELIMIT;
	seg_t *s = malloc(sizeof(*s));
	block_t *b = devpool_blk_new(dp);
	if (s == NULL || b == NULL) {
		free(s);
		if (b != NULL)
			devpool_blk_delete(dp, b);
		return DEVPOOL_ENOMEM;
	}
	uintptr_t addr = 0;
	dp->st.seg_allocs++;
	/* No pointer into the structures is held across this call. */
	if (dp->prov.seg_alloc(dp->prov.arg, size, &addr)) {
		free(s);
		devpool_blk_delete(dp, b);
		return DEVPOOL_EPROVIDER;
	}
	s->addr = addr;
	s->size = size;
	s->own = own;
	s->prev = NULL;
	s->next = dp->segs;
	if (dp->segs != NULL)
		dp->segs->prev = s;
	dp->segs = s;
	dp->st.reserved += size;
	dp->st.segments++;
	if (own)
		dp->st.own_segments++;
	b->addr = addr;
	b->size = size;
	b->seg = s;
	devpool_addr_insert(dp, b);
	*out = b;
	return DEVPOOL_OK;
}

void
devpool_seg_release(devpool_t *dp, seg_t *s, block_t *b)
{
	uintptr_t addr = s->addr;
	size_t size = s->size;
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		dp->segs = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	dp->st.reserved -= size;
	dp->st.segments--;
	if (s->own)
		dp->st.own_segments--;
	free(s);
	devpool_blk_delete(dp, b);
	dp->st.seg_frees++;
	if (dp->prov.seg_free(dp->prov.arg, addr, size))
		log_debug(1, "devpool: segment %#lx (%zu bytes) not released",
		    (unsigned long)addr, size);
}

size_t
devpool_seg_trim(devpool_t *dp)
{
	size_t released = 0;
	for (;;) {
		seg_t *s;
		block_t *b = NULL;
		for (s = dp->segs; s != NULL; s = s->next) {
			if (s->own)
				continue;
			b = devpool_addr_floor(dp, s->addr);
			if (b != NULL && b->state == B_FREE &&
			    b->size == s->size)
				break;
		}
		if (s == NULL)
			break;
		devpool_size_remove(dp, b);
		devpool_addr_remove(dp, b);
		released += s->size;
		devpool_seg_release(dp, s, b);
	}
	return released;
}

/* ------------------------------------------------------------- best fit */

int
devpool_bf_alloc(devpool_t *dp, size_t size, bool grow, block_t **out)
{
	block_t *b = devpool_size_lower_bound(dp->by_size, size);
	if (b == NULL) {
		if (!grow)
			return DEVPOOL_ENOSPACE;
		size_t ss = dp->cfg.segment_size;
		if (size > ss)
			ss = devpool_round_up(size, DEVPOOL_GPU_PAGE);
		int r = devpool_seg_grow(dp, ss, false, &b);
		if (r != DEVPOOL_OK)
			return r;
		b->state = B_FREE;
	} else {
		devpool_size_remove(dp, b);
	}
	if (b->size - size >= SIZECLASS_GRANULE) {
		block_t *nb = devpool_blk_new(dp);
		if (nb == NULL) {
			b->state = B_FREE;
			devpool_size_insert(dp, b);
			return DEVPOOL_ENOMEM;
		}
		nb->addr = b->addr + size;
		nb->size = b->size - size;
		nb->seg = b->seg;
		nb->state = B_FREE;
		nb->prev = b;
		nb->next = b->next;
		if (b->next != NULL)
			b->next->prev = nb;
		b->next = nb;
		b->size = size;
		devpool_addr_insert(dp, nb);
		devpool_size_insert(dp, nb);
	}
	b->state = B_USED;
	dp->st.allocated += b->size;
	*out = b;
	return DEVPOOL_OK;
}

/* lo takes in hi, its next neighbour in the segment, which goes (the
 * caller has taken the one of them that was free out of the size tree). */
static void
absorb(devpool_t *dp, block_t *lo, block_t *hi)
{
	devpool_addr_remove(dp, hi);
	lo->size += hi->size;
	lo->next = hi->next;
	if (hi->next != NULL)
		hi->next->prev = lo;
	devpool_blk_delete(dp, hi);
}

void
devpool_bf_free(devpool_t *dp, block_t *b)
{
	dp->st.allocated -= b->size;
	b->state = B_FREE;
	block_t *n = b->next;
	if (n != NULL && n->state == B_FREE) {
		devpool_size_remove(dp, n);
		absorb(dp, b, n);
	}
	block_t *p = b->prev;
	if (p != NULL && p->state == B_FREE) {
		devpool_size_remove(dp, p);
		absorb(dp, p, b);
		b = p;
	}
	devpool_size_insert(dp, b);
}
