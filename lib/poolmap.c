#include "preamble.h"
/*
 * poolmap.c -- address to pooled block (poolmap.h).
 *
 * Owns the radix of leaves.  Invariants: entry != 0 exactly at granules
 * where a block handed out starts; nodes once published are never freed
 * except by poolmap_reset (tests, single-threaded).  Locking: none;
 * nodes are published with compare-and-swap, entries written with
 * relaxed atomics by the thread that owns the block at that moment.
 */
#include <stdlib.h>
#include <string.h>

#include "poolmap.h"

#define L1_BITS 13
#define L2_BITS 14
#define PAGE_SHIFT 21
#define LEAF_N ((size_t)1 << (PAGE_SHIFT - 9)) /* 4096 granules */

typedef struct leaf_s {
	uint32_t e[LEAF_N];
} leaf_t;

typedef struct l2_s {
	leaf_t *leaf[1u << L2_BITS];
} l2_t;

static l2_t *l1[1u << L1_BITS];
static size_t max_units; /* the largest block seen, in granules */

#define E_UNITS 0x3ffffffu
#define E_KIND_SHIFT 26
#define E_OWN (1u << 28)
#define E_HUGE (1u << 29)
#define E_ARENA_SHIFT 30 /* two bits: the pool arena */

static leaf_t *
leaf_get(uintptr_t a, bool make)
{
	uintptr_t page = a >> PAGE_SHIFT;
	if (page >> (L1_BITS + L2_BITS))
		return NULL;
	l2_t **p1 = &l1[page >> L2_BITS];
	l2_t *n2 = __atomic_load_n(p1, __ATOMIC_ACQUIRE);
	if (n2 == NULL) {
		if (!make)
			return NULL;
		l2_t *fresh = calloc(1, sizeof(*fresh));
		if (fresh == NULL)
			return NULL;
		if (!__atomic_compare_exchange_n(p1, &n2, fresh, false,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			free(fresh);
		else
			n2 = fresh;
	}
	leaf_t **p2 = &n2->leaf[page & ((1u << L2_BITS) - 1)];
	leaf_t *lf = __atomic_load_n(p2, __ATOMIC_ACQUIRE);
	if (lf == NULL) {
		if (!make)
			return NULL;
		leaf_t *fresh = calloc(1, sizeof(*fresh));
		if (fresh == NULL)
			return NULL;
		if (!__atomic_compare_exchange_n(p2, &lf, fresh, false,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			free(fresh);
		else
			lf = fresh;
	}
	return lf;
}

static size_t
gidx(uintptr_t a)
{
	return (a & (((uintptr_t)1 << PAGE_SHIFT) - 1)) >> 9;
}

bool
poolmap_set(uintptr_t base, size_t size, unsigned kind, unsigned flags)
{
	leaf_t *lf = leaf_get(base, true);
	if (lf == NULL)
		return true;
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
	leaf_t *lf = leaf_get(base, false);
	if (lf != NULL)
		__atomic_store_n(&lf->e[gidx(base)], 0, __ATOMIC_RELEASE);
}

void
poolmap_clear_range(uintptr_t base, size_t size)
{
	uintptr_t end = base + size;
	for (uintptr_t g = base & ~(POOLMAP_GRANULE - 1); g < end; ) {
		leaf_t *lf = leaf_get(g, false);
		uintptr_t page_end = (g | (((uintptr_t)1 << PAGE_SHIFT) - 1)) + 1;
		uintptr_t stop = page_end < end ? page_end : end;
		if (lf != NULL)
			for (uintptr_t x = g; x < stop; x += POOLMAP_GRANULE)
				__atomic_store_n(&lf->e[gidx(x)], 0,
				    __ATOMIC_RELAXED);
		g = page_end;
	}
}

bool
poolmap_lookup(uintptr_t addr, uintptr_t *base, size_t *size,
    unsigned *kind, unsigned *flags)
{
	size_t limit = __atomic_load_n(&max_units, __ATOMIC_RELAXED);
	uintptr_t g = addr & ~(POOLMAP_GRANULE - 1);
	for (size_t back = 0; back <= limit; ) {
		leaf_t *lf = leaf_get(g, false);
		if (lf == NULL) {
			/* Skip the whole page. */
			size_t in = gidx(g) + 1;
			back += in;
			if (g < (in << 9))
				return true;
			g -= in << 9;
			continue;
		}
		for (size_t i = gidx(g) + 1; i-- > 0; back++,
		    g -= POOLMAP_GRANULE) {
			uint32_t e = __atomic_load_n(&lf->e[i],
			    __ATOMIC_ACQUIRE);
			if (e == 0)
				continue;
			size_t bytes = (size_t)(e & E_UNITS) * POOLMAP_GRANULE;
			if (!(e & E_HUGE) && addr >= g + bytes)
				return true;
			*base = g;
			*size = bytes;
			*kind = (e >> E_KIND_SHIFT) & 3;
			*flags = ((e & E_OWN) ? 1u : 0u) |
			    ((e & E_HUGE) ? POOLMAP_F_HUGE : 0u) |
			    POOLMAP_F_ARENA(e >> E_ARENA_SHIFT);
			return false;
		}
		if (g == (uintptr_t)0 - POOLMAP_GRANULE)
			return true;
	}
	return true;
}

void
poolmap_reset(bool child)
{
	for (size_t i = 0; i < CW_ARRAY_SIZE(l1); i++) {
		l2_t *n2 = l1[i];
		if (n2 == NULL)
			continue;
		if (child) {
			for (size_t j = 0; j < CW_ARRAY_SIZE(n2->leaf); j++)
				if (n2->leaf[j] != NULL)
					memset(n2->leaf[j], 0,
					    sizeof(leaf_t));
			continue;
		}
		for (size_t j = 0; j < CW_ARRAY_SIZE(n2->leaf); j++)
			free(n2->leaf[j]);
		free(n2);
		l1[i] = NULL;
	}
	max_units = 0;
}
