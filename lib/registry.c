#include "preamble.h"

/*
 * registry.c -- the registry's API (registry.h): insert, lookups by
 * handle, by (ns, base) and by interior pointer, update, remove, the walk
 * and the counts; and the stripes with their H locks.  The layout, the
 * invariants and the locking of the whole registry are in
 * registry_int.h; the design and the measured costs in doc/registry.md.
 *
 * A record's life: registry_insert takes a slot of its stripe (a keyed
 * record's stripe is picked by the hash of (ns, base), an unkeyed one's
 * by a per-thread rotation), links a keyed one into the stripe's hash and
 * a treap, and makes seq odd; remove_locked undoes that, leaves a
 * tombstone and makes seq even.  Both run under the stripe's H lock.
 */

#include <pthread.h>

#include "nowait.h"
#include "registry_int.h"

#define FOREACH_BATCH 32

stripe_t registry_stripes[NSTRIPES] = { [0 ... NSTRIPES - 1] =
	{ .lock = CW_MUTEX_INITIALIZER_ADAPTIVE(LOCK_RANK_REGISTRY_H) } };
static CW_TLS unsigned unkeyed_rr;

/* Everything but base, ns, kind and size (which tree-lock holders may be
 * reading: see registry_update). */
static void
rec_to_slot(const reg_rec_t *rec, slot_t *sl)
{
	sl->ctx = rec->ctx;
	sl->aux = rec->aux;
	sl->parent = rec->parent;
	sl->api = rec->api;
	sl->alloc_stack = rec->alloc_stack;
	sl->owner = rec->owner;
	sl->refcount = rec->refcount;
	sl->flags = rec->flags;
	sl->device = rec->device;
}

static inline reg_state_t
state_of(uint32_t gen, uint32_t seq)
{
	uint32_t cur = registry_gen_of_seq(seq);
	if (gen > cur)
		return REG_INVALID;
	if (gen < cur || (seq & 1) == 0)
		return REG_FREED;
	return REG_LIVE;
}

reg_state_t
registry_state(reg_handle_t h)
{
	uint32_t slot, gen;
	unsigned s;
	if (registry_handle_split(h, &slot, &gen, &s))
		return REG_INVALID;
	return state_of(gen,
	    __atomic_load_n(&registry_slot_at(slot)->seq, __ATOMIC_ACQUIRE));
}

/* A live record found by its handle, its stripe locked (live_lock). */
typedef struct live_s {
	stripe_t *st;
	slot_t *sl;
	uint32_t slot;
	int err;     /* when not live: -REG_FREED or -REG_INVALID */
} live_t;

/* Locks h's stripe and fills *l with its live slot.  Returns true, with
 * no lock held and l->err set, if h names no live record. */
static bool
live_lock(reg_handle_t h, live_t *l)
{
	uint32_t slot, gen;
	unsigned s;
	if (registry_handle_split(h, &slot, &gen, &s)) {
		l->err = -(int)REG_INVALID;
		return true;
	}
	stripe_t *st = &registry_stripes[s];
	h_lock(st);
	slot_t *sl = registry_slot_at(slot);
	reg_state_t state = state_of(gen, sl->seq);
	if (state != REG_LIVE) {
		h_unlock(st);
		l->err = -(int)state;
		return true;
	}
	l->st = st;
	l->sl = sl;
	l->slot = slot;
	return false;
}

/* Lock held: takes a live slot out of every index, leaves a tombstone,
 * and frees it. */
static void
remove_locked(stripe_t *st, uint32_t i, stack_id_t free_stack,
    uint32_t *hlink)
{
	slot_t *sl = registry_slot_at(i);
	reg_handle_t h = registry_make_handle(i, sl->seq);
	if (sl->ns != NS_NONE) {
		if (hlink == NULL)
			hlink = registry_hash_link(st, sl->ns, sl->base,
			    registry_key_hash(sl->ns, sl->base));
		if (*hlink != i + 1)
			registry_fail("record missing from its hash chain");
		*hlink = sl->hnext;
		sl->hnext = 0;
		registry_tree_del(i);
		st->nkeyed--;
	}
	registry_tomb_add(st, sl, h, free_stack);
	__atomic_store_n(&sl->seq, sl->seq + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&st->live, st->live - 1, __ATOMIC_RELAXED);
	registry_slot_free(st, i);
}

bool
registry_insert(const reg_rec_t *rec, reg_handle_t *handle,
    reg_rec_t *replaced, bool *had_replaced)
{
	if (had_replaced != NULL)
		*had_replaced = false;
	if (registry_init() || rec->ns >= NS_COUNT)
		return true;
	bool keyed = rec->ns != NS_NONE;
	uint64_t h = 0;
	unsigned s;
	if (keyed) {
		h = registry_key_hash(rec->ns, rec->base);
		s = registry_hash_stripe(h);
	} else {
		if (unkeyed_rr == 0)
			unkeyed_rr = (unsigned)hash_mix64(
			    (uintptr_t)&unkeyed_rr);
		s = unkeyed_rr++ % NSTRIPES;
	}
	stripe_t *st = &registry_stripes[s];
	h_lock(st);
	uint32_t i;
	if ((keyed && registry_hash_reserve(st, st->nkeyed + 1)) ||
	    registry_slot_alloc(st, s, &i)) {
		h_unlock(st);
		return true;
	}
	uint32_t *link = NULL;
	if (keyed) {
		link = registry_hash_link(st, rec->ns, rec->base, h);
		if (*link != 0) {
			uint32_t old = *link - 1;
			if (replaced != NULL)
				registry_slot_to_rec(registry_slot_at(old),
				    replaced);
			if (had_replaced != NULL)
				*had_replaced = true;
			remove_locked(st, old, 0, link);
			link = registry_hash_link(st, rec->ns, rec->base, h);
		}
	}
	slot_t *sl = registry_slot_at(i);
	sl->base = rec->base;
	sl->ns = rec->ns;
	sl->kind = rec->kind;
	sl->size = rec->size;
	rec_to_slot(rec, sl);
	sl->left = sl->right = 0;
	sl->level = (uint8_t)registry_level_of(rec->size);
	uint32_t seq = sl->seq + 1;
	__atomic_store_n(&sl->seq, seq, __ATOMIC_RELEASE);
	if (keyed) {
		sl->hnext = 0;
		*link = i + 1;
		st->nkeyed++;
		registry_tree_add(i);
	}
	__atomic_store_n(&st->live, st->live + 1, __ATOMIC_RELAXED);
	h_unlock(st);
	*handle = registry_make_handle(i, seq);
	return false;
}

bool
registry_get(reg_handle_t h, reg_rec_t *out)
{
	live_t l;
	if (live_lock(h, &l))
		return true;
	registry_slot_to_rec(l.sl, out);
	h_unlock(l.st);
	return false;
}

bool
registry_find(ns_t ns, uintptr_t base, reg_handle_t *h, reg_rec_t *out)
{
	uint64_t hh;
	stripe_t *st = registry_key_lock(ns, base, &hh);
	if (st == NULL)
		return true;
	bool miss = true;
	if (st->nbuckets != 0) {
		uint32_t n = *registry_hash_link(st, ns, base, hh);
		if (n != 0) {
			if (h != NULL)
				*h = registry_make_handle(n - 1, NODE(n)->seq);
			if (out != NULL)
				registry_slot_to_rec(NODE(n), out);
			miss = false;
		}
	}
	h_unlock(st);
	return miss;
}

bool
registry_find_containing(ns_t ns, uintptr_t p, reg_handle_t *h,
    reg_rec_t *out)
{
	if ((unsigned)ns >= NS_KEYED || registry_init())
		return true;
	/* Live ranges of one namespace do not overlap (the driver never
	 * hands out overlapping ones), so the first container found is the
	 * one.  The treap search gives its slot and seq; the copy is made
	 * under the record's own lock, and retried if the record went away
	 * in between. */
	for (int attempt = 0; attempt < 4; attempt++) {
		uint32_t slot, seq;
		if (registry_tree_find(ns, p, &slot, &seq))
			return true;
		if (out == NULL) {
			if (h != NULL)
				*h = registry_make_handle(slot, seq);
			return false;
		}
		stripe_t *st = &registry_stripes[slot >> registry_pshift];
		h_lock(st);
		slot_t *sl = registry_slot_at(slot);
		bool hit = sl->seq == seq && p - sl->base < sl->size;
		if (hit) {
			if (h != NULL)
				*h = registry_make_handle(slot, seq);
			registry_slot_to_rec(sl, out);
		}
		h_unlock(st);
		if (hit)
			return false;
	}
	return true;
}

int
registry_update(reg_handle_t h, reg_update_fn fn, void *arg)
{
	live_t l;
	if (live_lock(h, &l))
		return l.err;
	slot_t *sl = l.sl;
	reg_rec_t tmp;
	registry_slot_to_rec(sl, &tmp);
	int r = fn(&tmp, arg);
	size_t size = tmp.size;
	rec_to_slot(&tmp, sl);
	if (size != sl->size) {
		/* Tree-lock holders read the size of records in their
		 * treaps (registry_tree_resize). */
		if (sl->ns == NS_NONE)
			sl->size = size;
		else
			registry_tree_resize(l.slot, size);
	}
	h_unlock(l.st);
	return r;
}

int
registry_remove(reg_handle_t h, reg_update_fn check, void *arg,
    stack_id_t free_stack, reg_rec_t *out)
{
	live_t l;
	if (live_lock(h, &l))
		return l.err;
	if (check != NULL) {
		reg_rec_t tmp;
		registry_slot_to_rec(l.sl, &tmp);
		int r = check(&tmp, arg);
		if (r != 0) {
			h_unlock(l.st);
			return r;
		}
	}
	if (out != NULL) {
		registry_slot_to_rec(l.sl, out);
		out->free_stack = free_stack;
	}
	remove_locked(l.st, l.slot, free_stack, NULL);
	h_unlock(l.st);
	return 0;
}

int
registry_foreach(reg_walk_fn fn, void *arg)
{
	if (!__atomic_load_n(&registry_ready, __ATOMIC_ACQUIRE))
		return 0;
	reg_rec_t recs[FOREACH_BATCH];
	reg_handle_t hs[FOREACH_BATCH];
	for (unsigned s = 0; s < NSTRIPES; s++) {
		stripe_t *st = &registry_stripes[s];
		uint32_t k = 0;
		for (;;) {
			unsigned n = 0;
			/* The exit report on a thread that may hold this
			 * stripe (nowait.h): the stripe is left out. */
			if (nowait_lock(&st->lock))
				break;
			uint32_t hw = st->hw;
			for (; k < hw && n < FOREACH_BATCH; k++) {
				uint32_t i = (s << registry_pshift) + k;
				slot_t *sl = registry_slot_at(i);
				if ((sl->seq & 1) == 0)
					continue;
				registry_slot_to_rec(sl, &recs[n]);
				hs[n] = registry_make_handle(i, sl->seq);
				n++;
			}
			h_unlock(st);
			for (unsigned j = 0; j < n; j++) {
				int r = fn(hs[j], &recs[j], arg);
				if (r != 0)
					return r;
			}
			if (k >= hw)
				break;
		}
	}
	return 0;
}

size_t
registry_live_count(void)
{
	size_t n = 0;
	for (unsigned s = 0; s < NSTRIPES; s++)
		n += __atomic_load_n(&registry_stripes[s].live,
		    __ATOMIC_RELAXED);
	return n;
}

size_t
registry_bytes(void)
{
	size_t n = sizeof(registry_stripes) + registry_tree_bytes();
	for (unsigned s = 0; s < NSTRIPES; s++) {
		stripe_t *st = &registry_stripes[s];
		h_lock(st);
		n += (size_t)st->committed * sizeof(slot_t);
		n += (size_t)st->nbuckets * sizeof(uint32_t);
		n += registry_tomb_bytes(st);
		h_unlock(st);
	}
	return n;
}
