#include "preamble.h"

/*
 * registry_fork.c -- the registry's fork hooks and reset: every lock at
 * once (H locks, then T locks, in index order), and the drop of every
 * record and tombstone.
 *
 * A fork child keeps the data (registry_postfork_child only releases the
 * locks); whether it drops it is the caller's decision (registry_reset).
 * Reset marks every live slot freed (its seq moves on) rather than
 * forgetting the slots, so a handle from before reads FREED, never LIVE.
 */

#include <string.h>

#include "registry_int.h"

/* fn on every lock of the registry: in rank order (the stripes, then
 * the tree locks) to take them, in reverse to let them go. */
static void
each_lock(void (*fn)(cw_mutex_t *), bool reverse)
{
	if (!reverse) {
		for (unsigned s = 0; s < NSTRIPES; s++)
			fn(&registry_stripes[s].lock);
		for (unsigned t = 0; t < TLOCKS; t++)
			fn(&registry_tlocks[t].lock);
		return;
	}
	for (unsigned t = TLOCKS; t-- > 0;)
		fn(&registry_tlocks[t].lock);
	for (unsigned s = NSTRIPES; s-- > 0;)
		fn(&registry_stripes[s].lock);
}

void
registry_lock_all(void)
{
	each_lock(cw_mutex_lock, false);
}

void
registry_unlock_all(void)
{
	each_lock(cw_mutex_unlock, true);
}

void
registry_prefork(void)
{
	each_lock(cw_mutex_prefork, false);
}

void
registry_postfork_parent(void)
{
	each_lock(cw_mutex_postfork_parent, true);
}

void
registry_postfork_child(void)
{
	each_lock(cw_mutex_postfork_child, true);
}

void
registry_reset(void)
{
	if (!__atomic_load_n(&registry_ready, __ATOMIC_ACQUIRE))
		return;
	registry_lock_all();
	for (unsigned s = 0; s < NSTRIPES; s++) {
		stripe_t *st = &registry_stripes[s];
		/* Every live slot becomes freed (its handles read FREED,
		 * never LIVE again); the free list is rebuilt. */
		st->free_head = 0;
		st->retired = 0;
		for (uint32_t k = st->hw; k-- > 0;) {
			uint32_t i = (s << registry_pshift) + k;
			slot_t *sl = registry_slot_at(i);
			if (sl->seq & 1)
				__atomic_store_n(&sl->seq, sl->seq + 1,
				    __ATOMIC_RELEASE);
			sl->left = sl->right = sl->hnext = 0;
			registry_slot_free(st, i);
		}
		if (st->nbuckets != 0)
			memset(st->buckets, 0,
			    (size_t)st->nbuckets * sizeof(uint32_t));
		st->nkeyed = 0;
		__atomic_store_n(&st->live, 0, __ATOMIC_RELAXED);
	}
	registry_tomb_reset();
	registry_tree_reset();
	registry_unlock_all();
}
