#include "preamble.h"
/*
 * poolmap.c -- address to pooled block (poolmap.h).
 *
 * Owns the radix: l1 (static) -> l2 nodes (one per 32 GiB, made by the
 * first hold there, kept; a slot per 2 MiB page, and the held bytes of
 * its page) -> leaves (one per page where a block was handed out since
 * the page was last held by no segment).  Invariants: entry != 0 exactly
 * at granules where a block handed out starts; a slot has a leaf only
 * while its page's held != 0; a leaf leaves its slot when held falls to 0,
 * with all entries zero, and goes to the free list, from which the next
 * leaf is taken.  Leaves are never given back to the system (type-stable
 * memory): a lookup that raced with the retirement of a leaf still reads
 * a leaf, and the slot's generation tells it to retry.
 *
 * Locking: map_lock (leaf lock, never held across a call out of this
 * file except calloc) for hold, release, publishing a leaf (the first
 * block handed out in a page) and the free list.  Entries are written
 * with atomics, without the lock, by the thread that owns the block at
 * that moment (the fast path).  Lookups take no lock: a seqlock-style
 * read of each slot (its generation even and unchanged across the read of
 * the leaf; it is odd while the slot changes, and on the same cache line
 * as the leaf pointer, which every lookup reads anyway); after
 * LOOKUP_TRIES failed attempts a lookup takes map_lock, which keeps the
 * slots still.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mutex.h"
#include "poolmap.h"

#define L1_BITS 13
#define L2_BITS 14
#define PAGE_SHIFT 21
#define PAGE_BYTES ((uintptr_t)1 << PAGE_SHIFT)
#define LEAF_N ((size_t)1 << (PAGE_SHIFT - 9)) /* 4096 granules */
#define LOOKUP_TRIES 4

typedef struct leaf_s {
	struct leaf_s *next; /* free list (map_lock) */
	uint32_t e[LEAF_N];
} leaf_t;

typedef struct slot_s {
	leaf_t *leaf; /* atomic */
	uint64_t gen; /* odd while the slot changes (atomic) */
} slot_t;

typedef struct l2_s {
	slot_t slot[1u << L2_BITS];
	uint32_t held[1u << L2_BITS]; /* bytes of live segments (written under
					 * map_lock, read without) */
} l2_t;

static l2_t *l1[1u << L1_BITS];
static size_t max_units; /* the largest block seen, in granules */
static cw_mutex_t map_lock = CW_MUTEX_INITIALIZER(LOCK_RANK_POOLMAP);
static leaf_t *free_leaves;       /* map_lock */
static poolmap_stats_t map_stats; /* map_lock */

#define E_UNITS 0x3ffffffu
#define E_KIND_SHIFT 26
#define E_OWN (1u << 28)
#define E_HUGE (1u << 29)
#define E_ARENA_SHIFT 30 /* two bits: the pool arena */

/* page's l2 node; with make, made if missing (map_lock held).  NULL
 * outside 48 bits or with no memory. */
static l2_t *
node_of(uintptr_t page, bool make)
{
	if (page >> (L1_BITS + L2_BITS))
		return NULL;
	l2_t **p1 = &l1[page >> L2_BITS];
	l2_t *n2 = __atomic_load_n(p1, __ATOMIC_ACQUIRE);
	if (n2 == NULL && make) {
		n2 = calloc(1, sizeof(*n2));
		if (n2 == NULL)
			return NULL;
		__atomic_store_n(p1, n2, __ATOMIC_RELEASE);
		map_stats.nodes++;
	}
	return n2;
}

#define SLOT(page) ((page) & ((1u << L2_BITS) - 1))

static slot_t *
slot_of(uintptr_t a)
{
	l2_t *n2 = node_of(a >> PAGE_SHIFT, false);
	return n2 != NULL ? &n2->slot[SLOT(a >> PAGE_SHIFT)] : NULL;
}

static leaf_t *
leaf_of(uintptr_t a)
{
	slot_t *sl = slot_of(a);
	return sl != NULL ? __atomic_load_n(&sl->leaf, __ATOMIC_ACQUIRE) :
	    NULL;
}

static size_t
gidx(uintptr_t a)
{
	return (a & (PAGE_BYTES - 1)) >> 9;
}

/* ------------------------------------------------------- hold / release */

/* Bytes of [base, end) inside the page starting at pg. */
static size_t
overlap(uintptr_t base, uintptr_t end, uintptr_t pg)
{
	uintptr_t lo = base > pg ? base : pg;
	uintptr_t hi = end < pg + PAGE_BYTES ? end : pg + PAGE_BYTES;
	return (size_t)(hi - lo);
}

/* Starts and ends a change of sl (map_lock held): its generation is odd
 * in between. */
static void
slot_begin(slot_t *sl)
{
	__atomic_store_n(&sl->gen, sl->gen + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void
slot_end(slot_t *sl)
{
	__atomic_store_n(&sl->gen, sl->gen + 1, __ATOMIC_RELEASE);
}

/* A leaf published in sl (map_lock held).  NULL with no memory. */
static leaf_t *
leaf_publish(slot_t *sl)
{
	leaf_t *lf = free_leaves;
	if (lf != NULL) {
		free_leaves = lf->next;
		map_stats.leaves_free--;
	} else {
		lf = calloc(1, sizeof(*lf));
		if (lf == NULL)
			return NULL;
	}
	lf->next = NULL;
	/* Entries are zero (see leaf_retire). */
	slot_begin(sl);
	__atomic_store_n(&sl->leaf, lf, __ATOMIC_RELEASE);
	slot_end(sl);
	map_stats.leaves_live++;
	return lf;
}

/* Takes sl's leaf out, zeroes it, puts it on the free list (map_lock
 * held).  A lookup reading it meanwhile sees the generation move. */
static void
leaf_retire(slot_t *sl)
{
	leaf_t *lf = sl->leaf;
	slot_begin(sl);
	__atomic_store_n(&sl->leaf, NULL, __ATOMIC_RELAXED);
	for (size_t i = 0; i < LEAF_N; i++)
		__atomic_store_n(&lf->e[i], 0, __ATOMIC_RELAXED);
	slot_end(sl);
	lf->next = free_leaves;
	free_leaves = lf;
	map_stats.leaves_live--;
	map_stats.leaves_free++;
}

/* Gives back the holds of [base, end) on the pages below stop, and
 * clears the range's entries: a page no segment holds any more loses its
 * leaf, one still held keeps the other segments' entries (map_lock
 * held). */
static void
release_locked(uintptr_t base, uintptr_t end, uintptr_t stop)
{
	for (uintptr_t pg = base & ~(PAGE_BYTES - 1); pg < stop;
	    pg += PAGE_BYTES) {
		l2_t *n2 = node_of(pg >> PAGE_SHIFT, false);
		if (n2 == NULL)
			continue; /* never held: a caller's error, ignored */
		size_t i = SLOT(pg >> PAGE_SHIFT);
		uint32_t n = (uint32_t)overlap(base, end, pg);
		__atomic_store_n(&n2->held[i], n2->held[i] > n ?
		    n2->held[i] - n : 0, __ATOMIC_RELAXED);
		leaf_t *lf = n2->slot[i].leaf;
		if (lf == NULL)
			continue;
		if (n2->held[i] == 0) {
			leaf_retire(&n2->slot[i]);
			continue;
		}
		uintptr_t lo = base > pg ? base : pg;
		for (uintptr_t g = lo & ~(POOLMAP_GRANULE - 1);
		    g < lo + n; g += POOLMAP_GRANULE)
			__atomic_store_n(&lf->e[gidx(g)], 0, __ATOMIC_RELAXED);
	}
}

bool
poolmap_hold(uintptr_t base, size_t size)
{
	uintptr_t end = base + size;
	if (size == 0 || end < base || (end - 1) >> (PAGE_SHIFT + L1_BITS +
	    L2_BITS))
		return true;
	cw_mutex_lock(&map_lock);
	for (uintptr_t pg = base & ~(PAGE_BYTES - 1); pg < end;
	    pg += PAGE_BYTES) {
		l2_t *n2 = node_of(pg >> PAGE_SHIFT, true);
		if (n2 == NULL) {
			release_locked(base, end, pg);
			cw_mutex_unlock(&map_lock);
			return true;
		}
		uint32_t *h = &n2->held[SLOT(pg >> PAGE_SHIFT)];
		__atomic_store_n(h, *h + (uint32_t)overlap(base, end, pg),
		    __ATOMIC_RELAXED);
	}
	cw_mutex_unlock(&map_lock);
	return false;
}

void
poolmap_release(uintptr_t base, size_t size)
{
	uintptr_t end = base + size;
	if (size == 0 || end < base)
		return;
	cw_mutex_lock(&map_lock);
	release_locked(base, end, end);
	cw_mutex_unlock(&map_lock);
}

/* The first block handed out in a page since it was last unheld: its
 * leaf, published if the page is held.  NULL otherwise. */
static leaf_t *
leaf_make(uintptr_t a)
{
	uintptr_t page = a >> PAGE_SHIFT;
	cw_mutex_lock(&map_lock);
	l2_t *n2 = node_of(page, false);
	leaf_t *lf = NULL;
	if (n2 != NULL && n2->held[SLOT(page)] != 0) {
		lf = n2->slot[SLOT(page)].leaf;
		if (lf == NULL)
			lf = leaf_publish(&n2->slot[SLOT(page)]);
	}
	cw_mutex_unlock(&map_lock);
	return lf;
}

/* ------------------------------------------------------------- entries */

bool
poolmap_set(uintptr_t base, size_t size, unsigned kind, unsigned flags)
{
	leaf_t *lf = leaf_of(base);
	if (unlikely(lf == NULL) && (lf = leaf_make(base)) == NULL)
		return true; /* not in a held segment, or no memory */
	size_t units = (size + POOLMAP_GRANULE - 1) / POOLMAP_GRANULE;
	uint32_t e;
	if (units >= E_UNITS)
		e = E_UNITS | E_HUGE;
	else
		e = (uint32_t)(units == 0 ? 1 : units);
	e |= (uint32_t)(kind & 3) << E_KIND_SHIFT;
	if (flags & 1)
		e |= E_OWN;
	e |= (uint32_t)POOLMAP_ARENA_OF(flags) << E_ARENA_SHIFT;
	size_t m = __atomic_load_n(&max_units, __ATOMIC_RELAXED);
	while (units > m && !__atomic_compare_exchange_n(&max_units, &m,
	    units, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	__atomic_store_n(&lf->e[gidx(base)], e, __ATOMIC_RELEASE);
	return false;
}

void
poolmap_clear(uintptr_t base)
{
	leaf_t *lf = leaf_of(base);
	if (lf != NULL)
		__atomic_store_n(&lf->e[gidx(base)], 0, __ATOMIC_RELEASE);
}

/* -------------------------------------------------------------- lookup */

enum { L_FOUND, L_NONE, L_RETRY };

/* One attempt.  Every leaf read is checked: its slot's generation even
 * and the same after the read; else L_RETRY. */
static int
lookup_once(uintptr_t addr, uintptr_t *base, size_t *size, unsigned *kind,
    unsigned *flags)
{
	size_t limit = __atomic_load_n(&max_units, __ATOMIC_RELAXED);
	uintptr_t g = addr & ~(POOLMAP_GRANULE - 1);
	for (size_t back = 0; back <= limit; ) {
		slot_t *sl = slot_of(g);
		uint64_t gen = 0;
		leaf_t *lf = NULL;
		if (sl != NULL) {
			gen = __atomic_load_n(&sl->gen, __ATOMIC_ACQUIRE);
			if (gen & 1)
				return L_RETRY;
			lf = __atomic_load_n(&sl->leaf, __ATOMIC_ACQUIRE);
		}
		if (lf == NULL) {
			/* Skip the whole page. */
			size_t in = gidx(g) + 1;
			back += in;
			if (g < (in << 9))
				return L_NONE;
			g -= in << 9;
			continue;
		}
		uint32_t e = 0;
		for (size_t i = gidx(g) + 1; i-- > 0; back++,
		    g -= POOLMAP_GRANULE) {
			e = __atomic_load_n(&lf->e[i], __ATOMIC_ACQUIRE);
			if (e != 0)
				break;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&sl->gen, __ATOMIC_RELAXED) != gen)
			return L_RETRY;
		if (e != 0) {
			size_t bytes = (size_t)(e & E_UNITS) * POOLMAP_GRANULE;
			if (!(e & E_HUGE) && addr >= g + bytes)
				return L_NONE;
			*base = g;
			*size = bytes;
			*kind = (e >> E_KIND_SHIFT) & 3;
			*flags = ((e & E_OWN) ? 1u : 0u) |
			    ((e & E_HUGE) ? POOLMAP_F_HUGE : 0u) |
			    POOLMAP_F_ARENA(e >> E_ARENA_SHIFT);
			return L_FOUND;
		}
		/* g wrapped below the page: it is the previous page's last
		 * granule, or 0 - 512 past address 0. */
		if (g == (uintptr_t)0 - POOLMAP_GRANULE)
			return L_NONE;
	}
	return L_NONE;
}

bool
poolmap_lookup(uintptr_t addr, uintptr_t *base, size_t *size,
    unsigned *kind, unsigned *flags)
{
	int r = L_RETRY;
	for (int i = 0; i < LOOKUP_TRIES && r == L_RETRY; i++)
		r = lookup_once(addr, base, size, kind, flags);
	if (r == L_RETRY) {
		/* Slots keep changing: hold them still.  The generations
		 * cannot move while map_lock is held. */
		cw_mutex_lock(&map_lock);
		r = lookup_once(addr, base, size, kind, flags);
		cw_mutex_unlock(&map_lock);
	}
	return r != L_FOUND;
}

bool
poolmap_page_held(uintptr_t addr)
{
	l2_t *n2 = node_of(addr >> PAGE_SHIFT, false);
	return n2 != NULL &&
	    __atomic_load_n(&n2->held[SLOT(addr >> PAGE_SHIFT)],
	    __ATOMIC_RELAXED) != 0;
}

/* --------------------------------------------------------------- misc */

void
poolmap_stats(poolmap_stats_t *out)
{
	cw_mutex_lock(&map_lock);
	*out = map_stats;
	cw_mutex_unlock(&map_lock);
	out->bytes = (out->leaves_live + out->leaves_free) * sizeof(leaf_t) +
	    out->nodes * sizeof(l2_t);
}

void
poolmap_reset(bool child)
{
	if (child) /* another thread may have held it at the fork */
		cw_mutex_reinit(&map_lock);
	cw_mutex_lock(&map_lock);
	for (size_t i = 0; i < CW_ARRAY_SIZE(l1); i++) {
		l2_t *n2 = l1[i];
		if (n2 == NULL)
			continue;
		for (size_t j = 0; j < CW_ARRAY_SIZE(n2->slot); j++) {
			n2->held[j] = 0;
			if (child) /* a change cut short by the fork */
				n2->slot[j].gen &= ~(uint64_t)1;
			if (n2->slot[j].leaf != NULL)
				leaf_retire(&n2->slot[j]);
		}
		if (!child) {
			free(n2);
			l1[i] = NULL;
			map_stats.nodes--;
		}
	}
	if (!child) {
		while (free_leaves != NULL) {
			leaf_t *lf = free_leaves;
			free_leaves = lf->next;
			free(lf);
			map_stats.leaves_free--;
		}
	}
	if (child) /* a leaf taken at the fork may be counted in neither */
		map_stats.leaves_live = 0;
	max_units = 0;
	cw_mutex_unlock(&map_lock);
}
