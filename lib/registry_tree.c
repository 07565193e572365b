#include "preamble.h"

/*
 * registry_tree.c -- the interval treaps: interior lookups (which live
 * record contains p) in O(log n), with no global lock.
 *
 * NROOTS intrusive treaps (links in the slots: slot + 1; the priority is
 * a hash of the link) keyed by (ns, level, base).  A record of size in
 * [2^level_shift[L-1], 2^level_shift[L]) is at level L and sits in the
 * treap hashed from (ns, L, base >> level_shift[L]) (its "region").
 * Since its size is below 2^level_shift[L], a record containing p has its
 * base in the region of p or in the one before, so an interior lookup
 * searches at most 2 treaps per level in use (9 at most), each holding
 * about n / NROOTS records.  Why this NROOTS and these levels:
 * doc/registry.md, "Measured".
 *
 * Locking: TLOCKS tree locks (rank 2), one per line of 16 roots, guard
 * the roots and links of their treaps and the size of the records in
 * them; they are taken under the record's H lock (add, del, resize) or
 * with no registry lock (lookups).  A root is peeked at without its lock
 * (relaxed) to skip empty treaps, and level_used (sticky) to skip levels
 * that never held a record of the namespace.
 */

#include <string.h>

#include "registry_int.h"

#define NROOTS_BITS 18
#define NROOTS (1u << NROOTS_BITS)    /* treaps */

tlock_t registry_tlocks[TLOCKS] = { [0 ... TLOCKS - 1] =
	{ .lock = CW_MUTEX_INITIALIZER_ADAPTIVE(LOCK_RANK_REGISTRY_T) } };
static uint32_t roots[NROOTS];                 /* slot + 1 */
static uint8_t level_used[NS_KEYED][LEVELS];   /* sticky, atomic */

static inline void
t_lock(tlock_t *tl)
{
	cw_mutex_lock(&tl->lock);
}

static inline void
t_unlock(tlock_t *tl)
{
	cw_mutex_unlock(&tl->lock);
}

static inline uint32_t
prio(uint32_t n)
{
	return (uint32_t)hash_mix64(n);
}

static inline uintptr_t
region_of(uintptr_t p, unsigned level)
{
	return level_shift[level] >= 64 ? 0 : p >> level_shift[level];
}

static inline unsigned
root_of(unsigned ns, unsigned level, uintptr_t region)
{
	uint64_t h = hash_mix64((uint64_t)region +
	    ((uint64_t)(ns * LEVELS + level + 1) << 56));
	return (unsigned)(h >> (64 - NROOTS_BITS));
}

static unsigned
root_of_slot(const slot_t *sl)
{
	return root_of(sl->ns, sl->level, region_of(sl->base, sl->level));
}

/* The 16 roots of one cache line share a lock, so that no two threads
 * write one line of roots at once. */
static inline tlock_t *
tlock_of(unsigned root)
{
	return &registry_tlocks[(root / 16) % TLOCKS];
}

/* The treap key: (ns, level, base), ns and level packed as nl. */
static inline unsigned
nl_of(const slot_t *sl)
{
	return (unsigned)sl->ns * 8 + sl->level;
}

/* Whether sl's key is below (nl, base). */
static inline bool
key_lt(const slot_t *sl, unsigned nl, uintptr_t base)
{
	unsigned a = nl_of(sl);
	return a < nl || (a == nl && sl->base < base);
}

/* ----------------------------------------------------------------- treaps */

static void
link_set(uint32_t *link, uint32_t v)
{
	/* Roots are peeked without the lock by registry_tree_find. */
	__atomic_store_n(link, v, __ATOMIC_RELAXED);
}

static void
treap_insert(uint32_t *root, uint32_t x)
{
	slot_t *sx = NODE(x);
	unsigned nl = nl_of(sx);
	uint32_t px = prio(x);
	uint32_t *link = root;
	while (*link != 0 && prio(*link) >= px) {
		slot_t *sl = NODE(*link);
		link = key_lt(sl, nl, sx->base) ? &sl->right : &sl->left;
	}
	/* Split the subtree at *link around x's key, under x. */
	uint32_t t = *link;
	uint32_t *l = &sx->left, *r = &sx->right;
	while (t != 0) {
		slot_t *st = NODE(t);
		if (key_lt(st, nl, sx->base)) {
			*l = t;
			l = &st->right;
			t = st->right;
		} else {
			*r = t;
			r = &st->left;
			t = st->left;
		}
	}
	*l = 0;
	*r = 0;
	link_set(link, x);
}

static void
treap_remove(uint32_t *root, uint32_t x)
{
	slot_t *sx = NODE(x);
	unsigned nl = nl_of(sx);
	uint32_t *link = root;
	while (*link != x) {
		if (*link == 0)
			registry_fail("record missing from its treap");
		slot_t *sl = NODE(*link);
		link = key_lt(sl, nl, sx->base) ? &sl->right : &sl->left;
	}
	uint32_t a = sx->left, b = sx->right;
	while (a != 0 && b != 0) {
		if (prio(a) >= prio(b)) {
			link_set(link, a);
			link = &NODE(a)->right;
			a = *link;
		} else {
			link_set(link, b);
			link = &NODE(b)->left;
			b = *link;
		}
	}
	link_set(link, a != 0 ? a : b);
	sx->left = 0;
	sx->right = 0;
}

/* The node of key (nl, b) with the greatest b <= p, or 0. */
static uint32_t
treap_pred(uint32_t n, unsigned nl, uintptr_t p)
{
	uint32_t best = 0;
	while (n != 0) {
		slot_t *sl = NODE(n);
		if (key_lt(sl, nl, p) || (nl_of(sl) == nl && sl->base == p)) {
			best = n;
			n = sl->right;
		} else {
			n = sl->left;
		}
	}
	return best != 0 && nl_of(NODE(best)) == nl ? best : 0;
}

/* ------------------------------------------------------------ add, del */

void
registry_tree_add(uint32_t i)
{
	slot_t *sl = registry_slot_at(i);
	unsigned root = root_of_slot(sl);
	tlock_t *tl = tlock_of(root);
	if (!__atomic_load_n(&level_used[sl->ns][sl->level], __ATOMIC_RELAXED))
		__atomic_store_n(&level_used[sl->ns][sl->level], 1,
		    __ATOMIC_RELAXED);
	t_lock(tl);
	treap_insert(&roots[root], i + 1);
	t_unlock(tl);
}

void
registry_tree_del(uint32_t i)
{
	unsigned root = root_of_slot(registry_slot_at(i));
	tlock_t *tl = tlock_of(root);
	t_lock(tl);
	treap_remove(&roots[root], i + 1);
	t_unlock(tl);
}

void
registry_tree_resize(uint32_t i, size_t size)
{
	slot_t *sl = registry_slot_at(i);
	unsigned level = registry_level_of(size);
	/* Tree-lock holders read the size of records in their treaps:
	 * change it under that lock, or out of the treap. */
	if (level != sl->level) {
		registry_tree_del(i);
		sl->size = size;
		sl->level = (uint8_t)level;
		registry_tree_add(i);
	} else {
		tlock_t *tl = tlock_of(root_of_slot(sl));
		t_lock(tl);
		sl->size = size;
		t_unlock(tl);
	}
}

/* --------------------------------------------------------------- lookup */

/* Tree lock of root held by nobody.  Looks for a record of (ns, level)
 * in that treap containing p.  Returns 1 and fills slot/seq if found,
 * 0 if not, and -1 if the treap's predecessor of p lies in the region
 * (then no record of an earlier region can contain p without overlapping
 * it). */
static int
search_root(unsigned root, unsigned nl, unsigned level, uintptr_t region,
    uintptr_t p, uint32_t *slot, uint32_t *seq)
{
	if (__atomic_load_n(&roots[root], __ATOMIC_RELAXED) == 0)
		return 0;
	tlock_t *tl = tlock_of(root);
	int r = 0;
	t_lock(tl);
	uint32_t n = treap_pred(roots[root], nl, p);
	if (n != 0) {
		slot_t *sl = NODE(n);
		if (p - sl->base < sl->size) {
			*slot = n - 1;
			*seq = sl->seq;
			r = 1;
		} else if (region_of(sl->base, level) == region) {
			r = -1;
		}
	}
	t_unlock(tl);
	return r;
}

bool
registry_tree_find(ns_t ns, uintptr_t p, uint32_t *slot, uint32_t *seq)
{
	for (unsigned l = 0; l < LEVELS; l++) {
		if (!__atomic_load_n(&level_used[ns][l], __ATOMIC_RELAXED))
			continue;
		uintptr_t r = region_of(p, l);
		unsigned nl = ns * 8 + l;
		int f = search_root(root_of(ns, l, r), nl, l, r, p, slot, seq);
		if (f == 1)
			return false;
		if (f == 0 && r > 0 && level_shift[l] < 64 &&
		    search_root(root_of(ns, l, r - 1), nl, l, r - 1, p, slot,
		    seq) == 1)
			return false;
	}
	return true;
}

/* ---------------------------------------------------- reset, bytes, check */

void
registry_tree_reset(void)
{
	memset(roots, 0, sizeof(roots));
	memset(level_used, 0, sizeof(level_used));
}

size_t
registry_tree_bytes(void)
{
	return sizeof(registry_tlocks) + sizeof(roots);
}

/* All locks held.  Returns the number of nodes. */
static size_t
validate_treap(unsigned root_index, uint32_t root)
{
	unsigned pshift = registry_pshift;
	uint32_t stack[256];
	unsigned depth = 0;
	size_t count = 0;
	uint32_t n = root;
	bool have_prev = false;
	unsigned prev_nl = 0;
	uintptr_t prev = 0;
	/* In-order walk with an explicit stack. */
	while (n != 0 || depth > 0) {
		while (n != 0) {
			VCHECK(depth < CW_ARRAY_SIZE(stack), "treap too deep");
			uint32_t i = n - 1;
			VCHECK((i >> pshift) < NSTRIPES &&
			    (i & ((1u << pshift) - 1)) <
			    registry_stripes[i >> pshift].hw,
			    "treap link out of range");
			stack[depth++] = n;
			n = NODE(n)->left;
		}
		n = stack[--depth];
		slot_t *sl = NODE(n);
		VCHECK(sl->seq & 1, "freed record in a treap");
		VCHECK(sl->ns < NS_KEYED, "unkeyed record in a treap");
		VCHECK(registry_level_of(sl->size) == sl->level,
		    "record at the wrong level");
		VCHECK(__atomic_load_n(&level_used[sl->ns][sl->level],
		    __ATOMIC_RELAXED), "level in use not marked");
		VCHECK(root_of_slot(sl) == root_index,
		    "record in the wrong treap");
		VCHECK(!have_prev || prev_nl < nl_of(sl) ||
		    (prev_nl == nl_of(sl) && prev < sl->base),
		    "treap out of order");
		if (sl->left != 0)
			VCHECK(prio(sl->left) <= prio(n), "treap heap order");
		if (sl->right != 0)
			VCHECK(prio(sl->right) <= prio(n), "treap heap order");
		have_prev = true;
		prev_nl = nl_of(sl);
		prev = sl->base;
		count++;
		n = sl->right;
	}
	return count;
}

size_t
registry_tree_validate(void)
{
	size_t in_trees = 0;
	for (unsigned r = 0; r < NROOTS; r++)
		in_trees += validate_treap(r, roots[r]);
	return in_trees;
}
