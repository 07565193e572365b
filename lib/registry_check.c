#include "preamble.h"

/*
 * registry_check.c -- registry_validate, the checker of every invariant
 * listed in registry_int.h (debug builds, tests), and registry_fail.
 *
 * The stripes' counts, free lists and hash chains are checked here; the
 * treaps (registry_tree_validate) and the tombstone rings
 * (registry_tomb_validate) by the files that own them.  Every lock is
 * held meanwhile (registry_lock_all).
 */

#include <stdlib.h>

#include "log.h"
#include "registry_int.h"

void
registry_fail(const char *what)
{
	log_error("registry: broken invariant: %s", what);
	abort();
}

/* All locks held: stripe s's counts, free list and hash chains.  Returns
 * its number of keyed records. */
static uint32_t
validate_stripe(unsigned s)
{
	const stripe_t *st = &registry_stripes[s];
	unsigned pshift = registry_pshift;
	uint32_t live = 0, keyed = 0, freed = 0, retired = 0;
	VCHECK(st->hw <= st->committed && st->committed <= (1u << pshift),
	    "high-water mark");
	for (uint32_t k = 0; k < st->hw; k++) {
		slot_t *sl = registry_slot_at((s << pshift) + k);
		if (sl->seq & 1) {
			live++;
			VCHECK(sl->ns < NS_COUNT, "bad ns");
			if (sl->ns != NS_NONE) {
				keyed++;
				VCHECK(registry_hash_stripe(registry_key_hash(
				    sl->ns, sl->base)) == s,
				    "record in the wrong stripe");
			}
		} else if (sl->seq >= SEQ_RETIRE) {
			retired++;
		}
	}
	VCHECK(live == st->live, "live count");
	VCHECK(keyed == st->nkeyed, "keyed count");
	VCHECK(retired == st->retired, "retired count");
	for (uint32_t n = st->free_head; n != 0; n = NODE(n)->hnext) {
		uint32_t i = n - 1;
		VCHECK((i >> pshift) == s &&
		    (i & ((1u << pshift) - 1)) < st->hw,
		    "free list leaves its stripe");
		VCHECK((NODE(n)->seq & 1) == 0, "live slot on free list");
		VCHECK(++freed <= st->hw, "free list loops");
	}
	VCHECK(live + freed + retired == st->hw,
	    "slots lost (live + free + retired != issued)");
	uint32_t chained = 0;
	for (uint32_t b = 0; b < st->nbuckets; b++) {
		for (uint32_t n = st->buckets[b]; n != 0; n = NODE(n)->hnext) {
			slot_t *sl = NODE(n);
			VCHECK(((n - 1) >> pshift) == s,
			    "hash chain leaves its stripe");
			VCHECK(sl->seq & 1, "freed record hashed");
			VCHECK(sl->ns != NS_NONE, "unkeyed record hashed");
			VCHECK((registry_key_hash(sl->ns, sl->base) &
			    (st->nbuckets - 1)) == b, "wrong bucket");
			VCHECK(++chained <= keyed, "hash chain loops");
			for (uint32_t m = sl->hnext; m != 0;
			    m = NODE(m)->hnext)
				VCHECK(NODE(m)->base != sl->base ||
				    NODE(m)->ns != sl->ns,
				    "duplicate (ns, base)");
		}
	}
	VCHECK(chained == keyed, "keyed record missing from the hash");
	return keyed;
}

void
registry_validate(void)
{
	if (!__atomic_load_n(&registry_ready, __ATOMIC_ACQUIRE))
		return;
	registry_lock_all();
	size_t keyed_total = 0;
	for (unsigned s = 0; s < NSTRIPES; s++) {
		keyed_total += validate_stripe(s);
		registry_tomb_validate(&registry_stripes[s]);
	}
	VCHECK(registry_tree_validate() == keyed_total,
	    "keyed records and treap nodes differ");
	registry_unlock_all();
}
