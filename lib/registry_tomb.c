#include "preamble.h"

/*
 * registry_tomb.c -- tombstones: the records of recent frees, so that a
 * double free is told from an invalid one.
 *
 * CUWARDEN_TOMBSTONES tombstones, split evenly among the stripes: each
 * stripe has a ring (mapped at its first removal) with two chained
 * indexes, by (ns, base) and by handle.  Adding one writes the next ring
 * entry and two bucket heads, O(1).  Chains are never unlinked: the ring
 * overwrites its oldest entry and walks stop at a link to a newer one
 * (tomb_age).  Forgetting a tombstone never changes a handle's state
 * (registry_state needs no tombstone).
 *
 * Locking: everything of a stripe's ring under its H lock.
 */

#include <string.h>

#include "options.h"
#include "registry_int.h"

struct tomb_s {
	reg_rec_t rec;
	reg_handle_t h;
	uint32_t knext;   /* chain by (ns, base): index + 1 */
	uint32_t hnext;   /* chain by handle: index + 1 */
};

static uint32_t tomb_per;   /* tombstones per stripe, from the option */

/* CUWARDEN_TOMBSTONES split evenly among the stripes; options.c keeps
 * the option in its range (0..2^24). */
static uint32_t
tomb_option(void)
{
	long long n = options_get(OPT_TOMBSTONES);
	return (uint32_t)((n + NSTRIPES - 1) / NSTRIPES);
}

void
registry_tomb_init(void)
{
	tomb_per = tomb_option();
}

/* Lock held.  Maps this stripe's ring if needed.  Returns true if there
 * is none. */
static bool
tomb_ready(stripe_t *st)
{
	if (st->tomb_cap != 0)
		return false;
	if (tomb_per == 0)
		return true;
	uint32_t nb = 1;
	while (nb < tomb_per)
		nb <<= 1;
	tomb_t *t = registry_map_zeroed((size_t)tomb_per * sizeof(tomb_t));
	uint32_t *bk = registry_map_zeroed((size_t)nb * 2 * sizeof(uint32_t));
	if (t == NULL || bk == NULL) {
		registry_unmap(t, (size_t)tomb_per * sizeof(tomb_t));
		registry_unmap(bk, (size_t)nb * 2 * sizeof(uint32_t));
		return true;
	}
	st->tombs = t;
	st->tb_key = bk;
	st->tb_handle = bk + nb;
	st->tomb_nb = nb;
	st->tomb_cap = tomb_per;
	st->tnext = 0;
	st->tcount = 0;
	return false;
}

static void
tomb_unmap(stripe_t *st)
{
	if (st->tomb_cap == 0)
		return;
	registry_unmap(st->tombs, (size_t)st->tomb_cap * sizeof(tomb_t));
	registry_unmap(st->tb_key, (size_t)st->tomb_nb * 2 * sizeof(uint32_t));
	st->tombs = NULL;
	st->tb_key = st->tb_handle = NULL;
	st->tomb_cap = st->tomb_nb = st->tnext = st->tcount = 0;
}

static inline uint32_t
tomb_hbucket(const stripe_t *st, reg_handle_t h)
{
	return (uint32_t)hash_mix64(h) & (st->tomb_nb - 1);
}

static inline uint32_t
tomb_kbucket(const stripe_t *st, unsigned ns, uintptr_t base)
{
	return (uint32_t)registry_key_hash(ns, base) & (st->tomb_nb - 1);
}

/* Chains are never unlinked: the ring overwrites its oldest entry, and a
 * walk follows a link only to an older entry (an entry overwritten since
 * it was linked is now newer, which ends the chain).  A head whose entry
 * now belongs to another bucket ends it too: everything older than that
 * entry was overwritten first. */
static inline uint32_t
tomb_age(const stripe_t *st, uint32_t idx)
{
	uint32_t newest = st->tnext == 0 ? st->tomb_cap - 1 : st->tnext - 1;
	return newest >= idx ? newest - idx : newest + st->tomb_cap - idx;
}

static uint32_t
tomb_first(const stripe_t *st, uint32_t bucket, bool bykey)
{
	uint32_t n = bykey ? st->tb_key[bucket] : st->tb_handle[bucket];
	if (n == 0 || n - 1 >= st->tcount)
		return 0;
	const tomb_t *t = &st->tombs[n - 1];
	if (bykey ? t->rec.ns == NS_NONE ||
	    tomb_kbucket(st, t->rec.ns, t->rec.base) != bucket :
	    tomb_hbucket(st, t->h) != bucket)
		return 0;
	return n;
}

static uint32_t
tomb_next(const stripe_t *st, uint32_t cur, bool bykey)
{
	const tomb_t *t = &st->tombs[cur - 1];
	uint32_t n = bykey ? t->knext : t->hnext;
	if (n == 0 || n - 1 >= st->tcount ||
	    tomb_age(st, n - 1) <= tomb_age(st, cur - 1))
		return 0;
	return n;
}

void
registry_tomb_add(stripe_t *st, const slot_t *sl, reg_handle_t h,
    stack_id_t fs)
{
	if (tomb_ready(st))
		return;
	uint32_t idx = st->tnext;
	tomb_t *t = &st->tombs[idx];
	if (st->tcount < st->tomb_cap)
		st->tcount++;
	registry_slot_to_rec(sl, &t->rec);
	t->rec.free_stack = fs;
	t->h = h;
	t->knext = 0;
	if (sl->ns != NS_NONE) {
		uint32_t *kb = &st->tb_key[tomb_kbucket(st, sl->ns, sl->base)];
		t->knext = *kb;
		*kb = idx + 1;
	}
	uint32_t *hb = &st->tb_handle[tomb_hbucket(st, h)];
	t->hnext = *hb;
	*hb = idx + 1;
	st->tnext = idx + 1 == st->tomb_cap ? 0 : idx + 1;
}

bool
registry_tomb_find(ns_t ns, uintptr_t base, reg_rec_t *out)
{
	uint64_t hh;
	stripe_t *st = registry_key_lock(ns, base, &hh);
	if (st == NULL)
		return true;
	bool miss = true;
	if (st->tomb_cap != 0) {
		uint32_t n = tomb_first(st, tomb_kbucket(st, ns, base), true);
		for (; n != 0; n = tomb_next(st, n, true)) {
			tomb_t *t = &st->tombs[n - 1];
			if (t->rec.base == base && t->rec.ns == ns) {
				if (out != NULL)
					*out = t->rec;
				miss = false;
				break;
			}
		}
	}
	h_unlock(st);
	return miss;
}

bool
registry_tomb_get(reg_handle_t h, reg_rec_t *out)
{
	uint32_t slot, gen;
	unsigned s;
	if (registry_handle_split(h, &slot, &gen, &s))
		return true;
	stripe_t *st = &registry_stripes[s];
	bool miss = true;
	h_lock(st);
	if (st->tomb_cap != 0) {
		uint32_t n = tomb_first(st, tomb_hbucket(st, h), false);
		for (; n != 0; n = tomb_next(st, n, false)) {
			tomb_t *t = &st->tombs[n - 1];
			if (t->h == h) {
				if (out != NULL)
					*out = t->rec;
				miss = false;
				break;
			}
		}
	}
	h_unlock(st);
	return miss;
}

void
registry_tomb_reset(void)
{
	uint32_t per = tomb_option();
	for (unsigned s = 0; s < NSTRIPES; s++) {
		stripe_t *st = &registry_stripes[s];
		if (st->tomb_cap != per) {
			tomb_unmap(st);
		} else if (st->tomb_cap != 0) {
			memset(st->tb_key, 0,
			    (size_t)st->tomb_nb * 2 * sizeof(uint32_t));
			st->tnext = st->tcount = 0;
		}
	}
	tomb_per = per;
}

size_t
registry_tomb_bytes(const stripe_t *st)
{
	return (size_t)st->tomb_cap * sizeof(tomb_t) +
	    (size_t)st->tomb_nb * 2 * sizeof(uint32_t);
}

void
registry_tomb_validate(const stripe_t *st)
{
	if (st->tomb_cap == 0)
		return;
	VCHECK(st->tcount <= st->tomb_cap && st->tnext < st->tomb_cap &&
	    (st->tcount == st->tomb_cap || st->tnext == st->tcount),
	    "tombstone ring");
	for (uint32_t j = 0; j < st->tcount; j++) {
		const tomb_t *t = &st->tombs[j];
		uint32_t n, steps = 0;
		if (t->rec.ns != NS_NONE) {
			n = tomb_first(st, tomb_kbucket(st, t->rec.ns,
			    t->rec.base), true);
			for (; n != 0 && n != j + 1; n = tomb_next(st, n, true))
				VCHECK(++steps <= st->tcount,
				    "tombstone chain");
			VCHECK(n == j + 1, "tombstone lost from the key index");
		}
		n = tomb_first(st, tomb_hbucket(st, t->h), false);
		for (; n != 0 && n != j + 1; n = tomb_next(st, n, false))
			VCHECK(++steps <= 2 * st->tcount, "tombstone chain");
		VCHECK(n == j + 1, "tombstone lost from the handle index");
	}
}
