#include "preamble.h"
/*
 * poolmap.c -- address to pooled block (poolmap.h).
 *
 * Owns the radix: l1 (static) -> l2 nodes -> leaves, the free lists of
 * detached leaves and l2 nodes, and the idle list.
 *
 * Bounded memory.  Pools give segments back to the driver and get new
 * ones at other addresses (host memory moves with every trim and regrow),
 * so leaves made on first use and kept forever grew without bound (16 KiB
 * per 2 MiB page that ever held a block start; tests/fuzz finding A1).
 * Now a leaf counts its non-zero entries.  A leaf whose count falls to
 * zero joins the idle list (FIFO), where it keeps its page: a page emptied
 * and refilled costs nothing more.  Each leaf joining the list while it
 * holds more than POOLMAP_IDLE_MIN moves a clock hand over the oldest
 * (CLOCK_STEPS at most): one that holds entries again leaves the list (it
 * rejoins when it empties); one used since it joined or the hand last
 * passed it (S_REF, set by the first writer that finds it idle) goes to
 * the back; one empty and unused for POOLMAP_IDLE_NS (1 s) is detached
 * and put on the free list, and an l2 node whose last leaf is detached
 * likewise.  Over POOLMAP_IDLE_MAX idle leaves, the oldest is detached
 * whatever its age or use.  New pages take leaves and nodes from the free
 * lists first.  So, whatever addresses the pools' memory moves to:
 *     attached leaves <= pages holding a block start (or being set)
 *                        + POOLMAP_IDLE_MAX (4096: 64 MiB of leaves),
 *     attached l2 nodes <= attached leaves,
 * the leaves and nodes ever made are at most the peak of those
 * (poolmap_stats), and blocks at ever new addresses, none used again,
 * keep about POOLMAP_IDLE_MIN + the pages emptied in the last second
 * (tests/unit/check_poolmap.c, with a clock of its own).  Leaves and
 * nodes are never given back to malloc while the map is in use (only
 * poolmap_reset frees them): a lock-free reader may still hold a pointer
 * to one, so their memory stays a leaf (a node).
 *
 * Invariants: entry != 0 exactly at granules where a block handed out
 * starts.  A leaf's state is (count | S_REF | S_IDLE | S_DEAD): count =
 * non-zero entries + writers holding it (poolmap_set, clear_range);
 * S_IDLE: on the idle list (leaves in use again included); S_DEAD:
 * detached (on the free list, or about to be).  A leaf's tag (generation
 * << PAGE_BITS | page) changes each time it is attached, and is stored
 * before the leaf is published at its page.  A detached leaf has every
 * entry 0.  Every l2 slot of a free node is NULL.
 *
 * Locking: pm_lock (a leaf lock: only calloc is called with it held)
 * serialises attach, detach, the idle list and the free lists.  Entries
 * are read and written without it.  poolmap_set first takes a count on
 * the leaf of the page (fetch_add, then checks that the leaf was not dead
 * and that its tag is unchanged: the leaf is then this page's and cannot
 * be detached until the count is given back).  poolmap_clear needs none:
 * the entry it clears (the caller's block) holds the leaf.  A reader
 * (lookup) loads the tag before and after a hit and starts over when it
 * changed (the leaf went to another page meanwhile).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "poolmap.h"

#define L1_BITS 13
#define L2_BITS 14
#define PAGE_SHIFT 21
#define PAGE_BITS (L1_BITS + L2_BITS)
#define PAGE_MASK (((uint64_t)1 << PAGE_BITS) - 1)
#define LEAF_N ((size_t)1 << (PAGE_SHIFT - 9)) /* 4096 granules */

#define S_DEAD 0x80000000u
#define S_IDLE 0x40000000u
#define S_REF 0x20000000u
#define S_COUNT 0x1fffffffu
/* Steps of the clock per leaf joining the idle list: a leaf in use takes
 * one step a pass (POOLMAP_IDLE_NS), so with H of them the hand keeps
 * up as long as H / CLOCK_STEPS leaves join per pass, and new pages never
 * used again wait at most about H / CLOCK_STEPS behind them. */
#define CLOCK_STEPS 16

typedef struct leaf_s {
	uint64_t tag;        /* atomic: generation << PAGE_BITS | page */
	uint32_t state;      /* atomic: count | S_REF | S_IDLE | S_DEAD */
	uint32_t unused;
	struct leaf_s *next; /* free or idle list; under pm_lock */
	uint64_t since;      /* idle list: when it joined or was passed */
	uint32_t e[LEAF_N];
} leaf_t;

typedef struct l2_s {
	uint32_t nleaves;    /* attached leaves; under pm_lock */
	uint32_t idx;        /* its l1 slot; under pm_lock */
	struct l2_s *next;   /* free list; under pm_lock */
	leaf_t *leaf[1u << L2_BITS];
} l2_t;

static l2_t *l1[1u << L1_BITS];
static size_t max_units; /* the largest block seen, in granules */

static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;
static leaf_t *free_leaves;
static l2_t *free_l2;
static leaf_t *idle_head, *idle_tail; /* FIFO through next, by since */
static size_t idle_n;
static uint64_t idle_ns = POOLMAP_IDLE_NS;    /* poolmap_test_policy */
static size_t idle_max = POOLMAP_IDLE_MAX;
static uint64_t (*clock_fn)(void);            /* NULL: the monotonic clock */
static poolmap_stats_t st; /* under pm_lock (read with it) */

#define E_UNITS 0x3ffffffu
#define E_KIND_SHIFT 26
#define E_OWN (1u << 28)
#define E_HUGE (1u << 29)
#define E_ARENA_SHIFT 30 /* two bits: the pool arena */

/* ------------------------------------------------------------ structure */

/* The leaf published at page (any incarnation), lock-free. */
static leaf_t *
peek(uintptr_t page)
{
	l2_t *n2 = __atomic_load_n(&l1[page >> L2_BITS], __ATOMIC_ACQUIRE);
	if (n2 == NULL)
		return NULL;
	return __atomic_load_n(&n2->leaf[page & ((1u << L2_BITS) - 1)],
	    __ATOMIC_ACQUIRE);
}

/* Publishes a leaf at page unless one is there; returns it (NULL: no
 * memory). */
static leaf_t *
attach(uintptr_t page)
{
	leaf_t *lf = NULL;
	pthread_mutex_lock(&pm_lock);
	l2_t **p1 = &l1[page >> L2_BITS];
	l2_t *n2 = *p1;
	if (n2 == NULL) {
		if (free_l2 != NULL) {
			n2 = free_l2;
			free_l2 = n2->next;
			st.l2_free--;
		} else if ((n2 = calloc(1, sizeof(*n2))) != NULL) {
			st.l2_made++;
		} else {
			goto out;
		}
		n2->next = NULL;
		n2->nleaves = 0;
		n2->idx = (uint32_t)(page >> L2_BITS);
		__atomic_store_n(p1, n2, __ATOMIC_RELEASE);
		st.l2_attached++;
	}
	leaf_t **p2 = &n2->leaf[page & ((1u << L2_BITS) - 1)];
	lf = *p2;
	if (lf != NULL)
		goto out;
	if (free_leaves != NULL) {
		lf = free_leaves;
		free_leaves = lf->next;
		st.leaves_free--;
	} else if ((lf = calloc(1, sizeof(*lf))) != NULL) {
		st.leaves_made++;
	} else {
		if (n2->nleaves == 0) { /* made for nothing: back */
			__atomic_store_n(p1, NULL, __ATOMIC_RELEASE);
			n2->next = free_l2;
			free_l2 = n2;
			st.l2_attached--;
			st.l2_free++;
		}
		goto out;
	}
	lf->next = NULL;
	uint64_t gen = (__atomic_load_n(&lf->tag, __ATOMIC_RELAXED) >>
	    PAGE_BITS) + 1;
	__atomic_store_n(&lf->tag, gen << PAGE_BITS | page, __ATOMIC_RELEASE);
	/* Alive again; counts of setters that saw it dead stay (they give
	 * them back through leaf_put). */
	__atomic_fetch_and(&lf->state, ~(S_DEAD | S_IDLE | S_REF),
	    __ATOMIC_ACQ_REL);
	__atomic_store_n(p2, lf, __ATOMIC_RELEASE);
	n2->nleaves++;
	st.leaves_attached++;
	st.attaches++;
out:
	pthread_mutex_unlock(&pm_lock);
	return lf;
}

/* Unpublishes lf (dead, every entry 0) and frees its place: onto the free
 * list, with its l2 node when that was the node's last leaf.  Under
 * pm_lock. */
static void
detach(leaf_t *lf)
{
	uint64_t page = __atomic_load_n(&lf->tag, __ATOMIC_RELAXED) &
	    PAGE_MASK;
	l2_t *n2 = l1[page >> L2_BITS];
	cw_assert(n2 != NULL);
	cw_assert(n2->leaf[page & ((1u << L2_BITS) - 1)] == lf);
	__atomic_store_n(&n2->leaf[page & ((1u << L2_BITS) - 1)], NULL,
	    __ATOMIC_RELEASE);
	lf->next = free_leaves;
	free_leaves = lf;
	st.leaves_attached--;
	st.leaves_free++;
	st.leaves_detached++;
	if (--n2->nleaves == 0) {
		__atomic_store_n(&l1[n2->idx], NULL, __ATOMIC_RELEASE);
		n2->next = free_l2;
		free_l2 = n2;
		st.l2_attached--;
		st.l2_free++;
	}
}

static uint64_t
now_ns(void)
{
	if (clock_fn != NULL)
		return clock_fn();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
idle_append(leaf_t *lf, uint64_t now)
{
	lf->next = NULL;
	lf->since = now;
	if (idle_tail != NULL)
		idle_tail->next = lf;
	else
		idle_head = lf;
	idle_tail = lf;
	idle_n++;
}

/* One step of the clock on the oldest idle leaf: it leaves the list when
 * it holds entries (it rejoins when it empties), goes to the back when
 * used since it joined or was last passed, else is detached.  Leaves
 * younger than idle_ns stay (and so do all behind them) unless the list
 * is over idle_max.  Under pm_lock.  Returns false when it did nothing. */
static bool
clock_step(uint64_t now)
{
	leaf_t *v = idle_head;
	bool over = idle_n > idle_max;
	if (!over && now - v->since < idle_ns)
		return false;
	idle_head = v->next;
	if (idle_head == NULL)
		idle_tail = NULL;
	idle_n--;
	uint32_t s = __atomic_load_n(&v->state, __ATOMIC_ACQUIRE);
	uint32_t to;
	do {
		cw_assert(s & S_IDLE);
		cw_assert(!(s & S_DEAD));
		if (s & S_COUNT)
			to = s & ~(S_IDLE | S_REF);
		else if ((s & S_REF) && !over)
			to = s & ~S_REF;
		else
			to = S_DEAD;
	} while (!__atomic_compare_exchange_n(&v->state, &s, to, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	if (to == S_DEAD)
		detach(v);
	else if (to & S_IDLE)
		idle_append(v, now);
	return true;
}

/* lf's count fell to zero: onto the idle list, unless revived since; the
 * clock moves over the leaves old enough, CLOCK_STEPS at most. */
static void
idle_push(leaf_t *lf)
{
	pthread_mutex_lock(&pm_lock);
	/* Under pm_lock a leaf with no count, not idle and not dead is
	 * attached (attach and detach change those flags only with the lock
	 * held).  S_REF may be there: set by a writer that found the leaf
	 * idle just before the hand took it off the list. */
	uint32_t s = __atomic_load_n(&lf->state, __ATOMIC_ACQUIRE);
	bool push = false;
	while ((s & ~S_REF) == 0 && !(push = __atomic_compare_exchange_n(
	    &lf->state, &s, S_IDLE, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)))
		;
	if (push) {
		uint64_t now = now_ns();
		idle_append(lf, now);
		for (int i = 0; i < CLOCK_STEPS && idle_n > POOLMAP_IDLE_MIN;
		    i++)
			if (!clock_step(now))
				break;
	}
	pthread_mutex_unlock(&pm_lock);
}

void
poolmap_test_policy(uint64_t ns, size_t max, uint64_t (*clock)(void))
{
	pthread_mutex_lock(&pm_lock);
	idle_ns = ns;
	idle_max = max;
	clock_fn = clock;
	pthread_mutex_unlock(&pm_lock);
}

/* Gives back n counts on lf. */
static void
leaf_put(leaf_t *lf, uint32_t n)
{
	uint32_t old = __atomic_fetch_sub(&lf->state, n, __ATOMIC_ACQ_REL);
	cw_assert((old & S_COUNT) >= n);
	if ((old & S_COUNT) == n && !(old & (S_IDLE | S_DEAD)))
		idle_push(lf);
}

/* Takes a count on the leaf of page, attaching one when make (else NULL
 * when the page has none).  The leaf returned is page's and stays so
 * until leaf_put. */
static leaf_t *
leaf_hold(uintptr_t page, bool make)
{
	for (;;) {
		leaf_t *lf = peek(page);
		if (lf == NULL) {
			if (!make || (lf = attach(page)) == NULL)
				return NULL;
		}
		uint64_t tag = __atomic_load_n(&lf->tag, __ATOMIC_ACQUIRE);
		if ((tag & PAGE_MASK) != page)
			continue; /* moved to another page meanwhile */
		uint32_t old = __atomic_fetch_add(&lf->state, 1,
		    __ATOMIC_ACQ_REL);
		if (!(old & S_DEAD) &&
		    __atomic_load_n(&lf->tag, __ATOMIC_ACQUIRE) == tag) {
			/* Used while idle: the clock keeps it one more
			 * pass. */
			if ((old & (S_IDLE | S_REF)) == S_IDLE)
				__atomic_fetch_or(&lf->state, S_REF,
				    __ATOMIC_RELAXED);
			return lf;
		}
		leaf_put(lf, 1);
		if (old & S_DEAD) { /* let its detach finish */
			pthread_mutex_lock(&pm_lock);
			pthread_mutex_unlock(&pm_lock);
		}
	}
}

static size_t
gidx(uintptr_t a)
{
	return (a & (((uintptr_t)1 << PAGE_SHIFT) - 1)) >> 9;
}

/* ------------------------------------------------------------------ API */

bool
poolmap_set(uintptr_t base, size_t size, unsigned kind, unsigned flags)
{
	uintptr_t page = base >> PAGE_SHIFT;
	if (page >> PAGE_BITS)
		return true;
	leaf_t *lf = leaf_hold(page, true);
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
	/* The count taken stays for the entry, unless one was there.  Only
	 * the thread the block belongs to writes its granule. */
	uint32_t *pe = &lf->e[gidx(base)];
	uint32_t old = __atomic_load_n(pe, __ATOMIC_RELAXED);
	__atomic_store_n(pe, e, __ATOMIC_RELEASE);
	if (old != 0)
		leaf_put(lf, 1);
	return false;
}

void
poolmap_clear(uintptr_t base)
{
	uintptr_t page = base >> PAGE_SHIFT;
	if (page >> PAGE_BITS)
		return;
	/* No count taken: the entry cleared (the caller's block, set and
	 * not cleared since) holds the leaf at this page until leaf_put.
	 * When there is none (a clear racing another clear of the same
	 * block) the exchange finds 0 and changes nothing -- unless the leaf
	 * was recycled for another page meanwhile, which needs the page
	 * emptied and the clock to pass it between the load of lf and the
	 * exchange; the tag check below narrows that further. */
	leaf_t *lf = peek(page);
	if (lf == NULL)
		return;
	uint64_t tag = __atomic_load_n(&lf->tag, __ATOMIC_ACQUIRE);
	if ((tag & PAGE_MASK) != page)
		return;
	if (__atomic_exchange_n(&lf->e[gidx(base)], 0, __ATOMIC_ACQ_REL) != 0)
		leaf_put(lf, 1);
}

void
poolmap_clear_range(uintptr_t base, size_t size)
{
	uintptr_t end = base + size;
	if (end < base)
		end = UINTPTR_MAX;
	for (uintptr_t g = base & ~(POOLMAP_GRANULE - 1); g < end; ) {
		uintptr_t page_end = (g | (((uintptr_t)1 << PAGE_SHIFT) - 1)) + 1;
		uintptr_t stop = page_end < end && page_end != 0 ? page_end :
		    end;
		uintptr_t page = g >> PAGE_SHIFT;
		leaf_t *lf = page >> PAGE_BITS ? NULL : leaf_hold(page, false);
		if (lf != NULL) {
			uint32_t n = 0;
			for (uintptr_t x = g; x < stop && x >= g;
			    x += POOLMAP_GRANULE)
				if (__atomic_exchange_n(&lf->e[gidx(x)], 0,
				    __ATOMIC_ACQ_REL) != 0)
					n++;
			leaf_put(lf, n + 1);
		}
		if (page_end == 0)
			break;
		g = page_end;
	}
}

bool
poolmap_lookup(uintptr_t addr, uintptr_t *base, size_t *size,
    unsigned *kind, unsigned *flags)
{
retry:;
	size_t limit = __atomic_load_n(&max_units, __ATOMIC_RELAXED);
	uintptr_t g = addr & ~(POOLMAP_GRANULE - 1);
	for (size_t back = 0; back <= limit; ) {
		uintptr_t page = g >> PAGE_SHIFT;
		leaf_t *lf = page >> PAGE_BITS ? NULL : peek(page);
		uint64_t tag = lf != NULL ?
		    __atomic_load_n(&lf->tag, __ATOMIC_ACQUIRE) : 0;
		if (lf == NULL || (tag & PAGE_MASK) != page) {
			/* No leaf (or it went elsewhere: the page was empty
			 * then): skip the whole page. */
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
			if (__atomic_load_n(&lf->tag, __ATOMIC_ACQUIRE) != tag)
				goto retry; /* the entry may be another page's */
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
poolmap_stats(poolmap_stats_t *out)
{
	pthread_mutex_lock(&pm_lock);
	*out = st;
	out->leaves_idle = idle_n;
	out->bytes = st.leaves_made * sizeof(leaf_t) +
	    st.l2_made * sizeof(l2_t);
	pthread_mutex_unlock(&pm_lock);
}

size_t
poolmap_leaf_bytes(void)
{
	return sizeof(leaf_t);
}

size_t
poolmap_node_bytes(void)
{
	return sizeof(l2_t);
}

void
poolmap_reset(bool child)
{
	if (child) {
		/* Single-threaded; a thread of the parent may have held
		 * pm_lock or been half-way through a change.  Every
		 * published leaf is emptied and detached; the old free lists
		 * are dropped (their leaves leak, once). */
		pthread_mutex_init(&pm_lock, NULL);
		free_leaves = NULL;
		free_l2 = NULL;
		idle_head = idle_tail = NULL;
		idle_n = 0;
		memset(&st, 0, sizeof(st));
		for (size_t i = 0; i < CW_ARRAY_SIZE(l1); i++) {
			l2_t *n2 = l1[i];
			if (n2 == NULL)
				continue;
			for (size_t j = 0; j < CW_ARRAY_SIZE(n2->leaf); j++) {
				leaf_t *lf = n2->leaf[j];
				if (lf == NULL)
					continue;
				memset(lf->e, 0, sizeof(lf->e));
				lf->state = S_DEAD;
				lf->next = free_leaves;
				free_leaves = lf;
				n2->leaf[j] = NULL;
				st.leaves_made++;
				st.leaves_free++;
			}
			n2->nleaves = 0;
			n2->next = free_l2;
			free_l2 = n2;
			l1[i] = NULL;
			st.l2_made++;
			st.l2_free++;
		}
		max_units = 0;
		return;
	}
	pthread_mutex_lock(&pm_lock);
	for (size_t i = 0; i < CW_ARRAY_SIZE(l1); i++) {
		l2_t *n2 = l1[i];
		if (n2 == NULL)
			continue;
		for (size_t j = 0; j < CW_ARRAY_SIZE(n2->leaf); j++)
			free(n2->leaf[j]);
		free(n2);
		l1[i] = NULL;
	}
	while (free_leaves != NULL) {
		leaf_t *n = free_leaves->next;
		free(free_leaves);
		free_leaves = n;
	}
	while (free_l2 != NULL) {
		l2_t *n = free_l2->next;
		free(free_l2);
		free_l2 = n;
	}
	idle_head = idle_tail = NULL;
	idle_n = 0;
	memset(&st, 0, sizeof(st));
	max_units = 0;
	pthread_mutex_unlock(&pm_lock);
}

void
poolmap_prefork(void)
{
	pthread_mutex_lock(&pm_lock);
}

void
poolmap_postfork_parent(void)
{
	pthread_mutex_unlock(&pm_lock);
}

void
poolmap_postfork_child(void)
{
	pthread_mutex_init(&pm_lock, NULL);
}
