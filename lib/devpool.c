#include "preamble.h"
/*
 * devpool.c -- the device pool engine's API (devpool.h): create and
 * destroy, the choice of a path for an allocation (slab slot, best-fit
 * block, own segment), frees and lookups by block state, trim and
 * statistics.  The structures, their invariants and the files that keep
 * them are in devpool_int.h.
 *
 * Owns: segments got from a provider, the blocks carved from them, slabs
 * of small classes, and the cache of freed own segments.
 *
 * Locking: none; the caller serialises (devpool.h).
 */
#include <stdlib.h>

#include "devpool.h"
#include "devpool_int.h"
#include "sizeclass.h"

size_t
devpool_large_block(size_t want)
{
	if (want == 0)
		want = DEVPOOL_GPU_PAGE;
	if (want < DEVPOOL_SLAB_MAX * 2)
		want = DEVPOOL_SLAB_MAX * 2;
	if (want > DEVPOOL_LARGE_MAX)
		want = DEVPOOL_LARGE_MAX;
	return want;
}

devpool_t *
devpool_create(const devpool_config_t *cfg, const devpool_provider_t *prov)
{
	devpool_t *dp = calloc(1, sizeof(*dp));
	if (dp == NULL)
		return NULL;
	dp->cfg = *cfg;
	dp->prov = *prov;
	dp->cfg.large_block = devpool_large_block(dp->cfg.large_block);
	size_t lc = sizeclass_round(dp->cfg.large_block - 1,
	    SIZECLASS_LGD_DEVICE);
	if (dp->cfg.segment_size == 0)
		dp->cfg.segment_size = DEVPOOL_GPU_PAGE;
	if (dp->cfg.segment_size < lc)
		dp->cfg.segment_size = lc;
	dp->cfg.segment_size = devpool_round_up(dp->cfg.segment_size,
	    DEVPOOL_GPU_PAGE);
	return dp;
}

void
devpool_set_limit(devpool_t *dp, size_t limit)
{
	dp->cfg.limit = limit;
}

void
devpool_destroy(devpool_t *dp)
{
	if (dp == NULL)
		return;
	for (seg_t *s = dp->segs; s != NULL; s = s->next)
		s->first = devpool_addr_floor(dp, s->addr);
	while (dp->segs != NULL) {
		seg_t *s = dp->segs;
		block_t *b = s->first;
		while (b != NULL) {
			block_t *n = b->next;
			free(b->slab);
			free(b);
			b = n;
		}
		dp->segs = s->next;
		dp->st.seg_frees++;
		dp->prov.seg_free(dp->prov.arg, s->addr, s->size);
		free(s);
	}
	while (dp->spare != NULL) {
		block_t *b = dp->spare;
		dp->spare = b->next;
		free(b);
	}
	free(dp);
}

int
devpool_alloc(devpool_t *dp, size_t size, bool grow, uintptr_t *addr,
    size_t *bsize, unsigned *flags)
{
	if (size == 0)
		size = 1;
	if (size >= dp->cfg.large_block) {
		int r = devpool_own_alloc(dp, size, grow, addr, bsize);
		if (r == DEVPOOL_OK && flags != NULL)
			*flags = DEVPOOL_F_OWN_SEGMENT;
		return r;
	}
	unsigned cls = sizeclass_of(size, SIZECLASS_LGD_DEVICE);
	size_t csize = sizeclass_size(cls, SIZECLASS_LGD_DEVICE);
	int r;
	if (csize <= DEVPOOL_SLAB_MAX) {
		r = devpool_slab_alloc(dp, cls, csize, grow, addr);
	} else {
		block_t *b;
		r = devpool_bf_alloc(dp, csize, grow, &b);
		if (r == DEVPOOL_OK)
			*addr = b->addr;
	}
	if (r != DEVPOOL_OK)
		return r;
	*bsize = csize;
	if (flags != NULL)
		*flags = 0;
	return DEVPOOL_OK;
}

bool
devpool_free(devpool_t *dp, uintptr_t addr)
{
	block_t *b = devpool_addr_floor(dp, addr);
	if (b == NULL || addr >= b->addr + b->size)
		return true;
	switch (b->state) {
	case B_USED:
		if (addr != b->addr)
			return true;
		devpool_bf_free(dp, b);
		return false;
	case B_OWN_USED:
		if (addr != b->addr)
			return true;
		devpool_own_free(dp, b);
		return false;
	case B_SLAB:
		return devpool_slab_free(dp, b, addr);
	case B_FREE:
	case B_OWN_CACHED:
	default:
		return true;
	}
}

bool
devpool_block_of(devpool_t *dp, uintptr_t addr, uintptr_t *base,
    size_t *size, unsigned *flags)
{
	block_t *b = devpool_addr_floor(dp, addr);
	if (b == NULL || addr >= b->addr + b->size)
		return true;
	switch (b->state) {
	case B_USED:
		*base = b->addr;
		*size = b->size;
		*flags = 0;
		return false;
	case B_OWN_USED:
		if (addr >= b->addr + b->user_size)
			return true;
		*base = b->addr;
		*size = b->user_size;
		*flags = DEVPOOL_F_OWN_SEGMENT;
		return false;
	case B_SLAB:
		if (devpool_slab_block_of(b, addr, base, size))
			return true;
		*flags = 0;
		return false;
	case B_FREE:
	case B_OWN_CACHED:
	default:
		return true;
	}
}

bool
devpool_segment_of(devpool_t *dp, uintptr_t addr)
{
	/* The blocks of a segment tile it, free ones included. */
	block_t *b = devpool_addr_floor(dp, addr);
	return b == NULL || addr >= b->addr + b->size;
}

size_t
devpool_trim(devpool_t *dp)
{
	size_t released = devpool_own_shrink(dp, 0);
	/* Empty slabs first: their spans may free whole segments. */
	devpool_slab_trim(dp);
	return released + devpool_seg_trim(dp);
}

void
devpool_stats(devpool_t *dp, devpool_stats_t *out)
{
	*out = dp->st;
	out->free_bytes = dp->st.reserved - dp->st.allocated;
	size_t lf = 0;
	block_t *b = devpool_size_max(dp->by_size);
	if (b != NULL)
		lf = b->size;
	b = devpool_size_max(dp->own_free);
	if (b != NULL && b->size > lf)
		lf = b->size;
	out->largest_free = lf;
}
