#include "preamble.h"
/*
 * devpool_own.c -- the device engine's large path (devpool_int.h): a
 * request of large_block bytes or more gets a segment of its own, whole
 * GPU pages, so that the block starts a driver allocation (IPC handles and
 * range queries stay exact).  Freed own segments are cached in own_free
 * and reused for a request within 1/8 of their size; beyond the cache's
 * cap (cfg.own_cache_max, or allocated / 16 + 32 MiB) the largest go back
 * to the provider.
 *
 * Locking: none; the caller serialises (devpool.h).
 */
#include "devpool_int.h"
#include "sizeclass.h"

static size_t
own_cache_max(const devpool_t *dp)
{
	if (dp->cfg.own_cache_max != 0)
		return dp->cfg.own_cache_max;
	return dp->st.allocated / 16 + ((size_t)32 << 20);
}

int
devpool_own_alloc(devpool_t *dp, size_t size, bool grow, uintptr_t *addr,
    size_t *bsize)
{
	size_t us = devpool_round_up(size, SIZECLASS_GRANULE);
	size_t ss = devpool_round_up(size, DEVPOOL_GPU_PAGE);
	block_t *b = devpool_size_lower_bound(dp->own_free, ss);
	if (b != NULL && b->size - ss <= ss / 8) {
		devpool_ownfree_remove(dp, b);
	} else {
		if (!grow)
			return DEVPOOL_ENOSPACE;
		int r = devpool_seg_grow(dp, ss, true, &b);
		if (r != DEVPOOL_OK)
			return r;
	}
	b->state = B_OWN_USED;
	b->user_size = us;
	dp->st.allocated += b->size;
	*addr = b->addr;
	*bsize = us;
	return DEVPOOL_OK;
}

void
devpool_own_free(devpool_t *dp, block_t *b)
{
	dp->st.allocated -= b->size;
	b->state = B_OWN_CACHED;
	devpool_ownfree_insert(dp, b);
	devpool_own_shrink(dp, own_cache_max(dp));
}

size_t
devpool_own_shrink(devpool_t *dp, size_t keep)
{
	size_t released = 0;
	while (dp->st.own_cached > keep) {
		block_t *b = devpool_size_max(dp->own_free);
		if (b == NULL)
			break;
		devpool_ownfree_remove(dp, b);
		devpool_addr_remove(dp, b);
		released += b->size;
		devpool_seg_release(dp, b->seg, b);
	}
	return released;
}
