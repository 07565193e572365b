#include "preamble.h"
/*
 * devpool.c -- the device pool engine (devpool.h).
 *
 * Owns: segments got from a provider, the blocks carved from them, slabs
 * of small classes, and the cache of freed own segments.  Every record is
 * host memory (out of band); the device memory is never touched.
 *
 * Structures:
 *   by_addr   treap of every block (free, used, slab, own used, own cached)
 *             keyed by address: exact and interior lookups, O(log n).
 *   by_size   treap of free blocks of shared segments, keyed (size, addr):
 *             best fit is a lower-bound search, O(log n).
 *   own_free  treap of cached own segments, keyed (size, addr).
 *   neighbours: blocks of a shared segment form an address-ordered
 *             doubly-linked list (prev/next), for split and coalesce.
 *   slabs     per class, a list of slabs with a free slot; bitmap per slab.
 *
 * Invariants (devpool_validate checks them all): blocks of a segment tile
 * it exactly; no two neighbouring blocks are both free; every free block
 * of a shared segment is in by_size, nothing else is; treaps are ordered
 * by key and max-heap ordered by priority; counters equal the sums.
 *
 * Locking: none; the caller serialises (devpool.h).
 */
#include <stdlib.h>
#include <string.h>

#include "devpool.h"
#include "log.h"
#include "sizeclass.h"

/* ---------------------------------------------------------------- treap */

typedef struct tnode_s {
	struct tnode_s *l, *r;
	uint64_t prio;
} tnode_t;

typedef int (*tcmp_t)(const tnode_t *a, const tnode_t *b);

static tnode_t *
rot_right(tnode_t *t)
{
	tnode_t *l = t->l;
	t->l = l->r;
	l->r = t;
	return l;
}

static tnode_t *
rot_left(tnode_t *t)
{
	tnode_t *r = t->r;
	t->r = r->l;
	r->l = t;
	return r;
}

static tnode_t *
t_insert(tnode_t *root, tnode_t *n, tcmp_t cmp)
{
	if (root == NULL) {
		n->l = n->r = NULL;
		return n;
	}
	if (cmp(n, root) < 0) {
		root->l = t_insert(root->l, n, cmp);
		if (root->l->prio > root->prio)
			root = rot_right(root);
	} else {
		root->r = t_insert(root->r, n, cmp);
		if (root->r->prio > root->prio)
			root = rot_left(root);
	}
	return root;
}

static tnode_t *
t_merge(tnode_t *a, tnode_t *b)
{
	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	if (a->prio > b->prio) {
		a->r = t_merge(a->r, b);
		return a;
	}
	b->l = t_merge(a, b->l);
	return b;
}

static tnode_t *
t_remove(tnode_t *root, tnode_t *n, tcmp_t cmp)
{
	if (root == NULL)
		return NULL; /* not found: a bug, caught by validate */
	if (root == n)
		return t_merge(n->l, n->r);
	if (cmp(n, root) < 0)
		root->l = t_remove(root->l, n, cmp);
	else
		root->r = t_remove(root->r, n, cmp);
	return root;
}

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* --------------------------------------------------------------- blocks */

typedef enum bstate_e {
	B_FREE = 0,      /* free, in by_size */
	B_USED = 1,      /* handed out (best fit) */
	B_SLAB = 2,      /* carved into slots of one class */
	B_OWN_USED = 3,  /* own segment, handed out */
	B_OWN_CACHED = 4 /* own segment, cached in own_free */
} bstate_t;

typedef struct slab_s slab_t;
typedef struct seg_s seg_t;

typedef struct block_s {
	tnode_t by_addr;
	tnode_t by_size; /* by_size or own_free */
	uintptr_t addr;
	size_t size;      /* bytes of the block (own: of the segment) */
	size_t user_size; /* own used: bytes as handed out */
	struct block_s *prev, *next; /* neighbours in the segment */
	seg_t *seg;
	slab_t *slab;
	bstate_t state;
} block_t;

#define SLAB_MAXREGS 128
struct slab_s {
	block_t *blk;
	slab_t *prev, *next; /* in the class's partial list */
	unsigned cls;
	uint32_t nregs, nfree;
	uint64_t used[SLAB_MAXREGS / 64]; /* bit set = slot handed out */
};

struct seg_s {
	seg_t *prev, *next; /* all segments */
	uintptr_t addr;
	size_t size;
	bool own;
	struct block_s *first; /* devpool_destroy only */
};

struct devpool_s {
	devpool_config_t cfg;
	devpool_provider_t prov;
	tnode_t *by_addr, *by_size, *own_free;
	seg_t *segs;
	slab_t *partial[DEVPOOL_NCLASSES];
	block_t *spare; /* recycled block records */
	devpool_stats_t st;
	size_t nblocks, nfree_blocks, nown_cached;
};

#define BLK_OF(node, field) \
	((block_t *)((char *)(node) - offsetof(block_t, field)))

static int
cmp_addr(const tnode_t *a, const tnode_t *b)
{
	const block_t *x = BLK_OF(a, by_addr), *y = BLK_OF(b, by_addr);
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int
cmp_size(const tnode_t *a, const tnode_t *b)
{
	const block_t *x = BLK_OF(a, by_size), *y = BLK_OF(b, by_size);
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static block_t *
blk_new(devpool_t *dp)
{
	block_t *b = dp->spare;
	if (b != NULL)
		dp->spare = b->next;
	else if ((b = malloc(sizeof(*b))) == NULL)
		return NULL;
	memset(b, 0, sizeof(*b));
	dp->nblocks++;
	return b;
}

static void
blk_delete(devpool_t *dp, block_t *b)
{
	b->next = dp->spare;
	dp->spare = b;
	dp->nblocks--;
}

static void
addr_insert(devpool_t *dp, block_t *b)
{
	b->by_addr.prio = mix64(b->addr);
	dp->by_addr = t_insert(dp->by_addr, &b->by_addr, cmp_addr);
}

static void
addr_remove(devpool_t *dp, block_t *b)
{
	dp->by_addr = t_remove(dp->by_addr, &b->by_addr, cmp_addr);
}

static void
size_insert(devpool_t *dp, block_t *b)
{
	b->by_size.prio = mix64(b->addr ^ ((uint64_t)b->size << 17));
	dp->by_size = t_insert(dp->by_size, &b->by_size, cmp_size);
	dp->nfree_blocks++;
}

static void
size_remove(devpool_t *dp, block_t *b)
{
	dp->by_size = t_remove(dp->by_size, &b->by_size, cmp_size);
	dp->nfree_blocks--;
}

/* Smallest node of a (size, addr) treap with size >= want. */
static block_t *
size_lower_bound(tnode_t *t, size_t want)
{
	block_t *best = NULL;
	while (t != NULL) {
		block_t *b = BLK_OF(t, by_size);
		if (b->size >= want) {
			best = b;
			t = t->l;
		} else {
			t = t->r;
		}
	}
	return best;
}

static block_t *
size_max(tnode_t *t)
{
	if (t == NULL)
		return NULL;
	while (t->r != NULL)
		t = t->r;
	return BLK_OF(t, by_size);
}

/* The block with the greatest address <= a. */
static block_t *
addr_floor(tnode_t *t, uintptr_t a)
{
	block_t *best = NULL;
	while (t != NULL) {
		block_t *b = BLK_OF(t, by_addr);
		if (b->addr <= a) {
			best = b;
			t = t->r;
		} else {
			t = t->l;
		}
	}
	return best;
}

static size_t
round_up(size_t x, size_t to)
{
	return (x + to - 1) / to * to;
}

static uint32_t
slab_nregs(size_t csize)
{
	size_t n = (64u << 10) / csize;
	if (n < 16)
		n = 16;
	if (n > SLAB_MAXREGS)
		n = SLAB_MAXREGS;
	return (uint32_t)n;
}

/* ------------------------------------------------------------- segments */

static size_t
own_cache_max(const devpool_t *dp)
{
	if (dp->cfg.own_cache_max != 0)
		return dp->cfg.own_cache_max;
	return dp->st.allocated / 16 + ((size_t)32 << 20);
}

static bool
would_pass_limit(const devpool_t *dp, size_t more)
{
	return dp->cfg.limit != 0 && dp->st.reserved + more > dp->cfg.limit;
}

/* Gets a segment from the provider and records it.  The block covering it
 * is returned, in by_addr only (the caller decides its state). */
static int
seg_grow(devpool_t *dp, size_t size, bool own, block_t **out)
{
	if (would_pass_limit(dp, size))
		return DEVPOOL_ELIMIT;
	seg_t *s = malloc(sizeof(*s));
	block_t *b = blk_new(dp);
	if (s == NULL || b == NULL) {
		free(s);
		if (b != NULL)
			blk_delete(dp, b);
		return DEVPOOL_ENOMEM;
	}
	uintptr_t addr = 0;
	dp->st.seg_allocs++;
	/* No pointer into the structures is held across this call. */
	if (dp->prov.seg_alloc(dp->prov.arg, size, &addr)) {
		free(s);
		blk_delete(dp, b);
		return DEVPOOL_EPROVIDER;
	}
	s->addr = addr;
	s->size = size;
	s->own = own;
	s->prev = NULL;
	s->next = dp->segs;
	if (dp->segs != NULL)
		dp->segs->prev = s;
	dp->segs = s;
	dp->st.reserved += size;
	dp->st.segments++;
	if (own)
		dp->st.own_segments++;
	b->addr = addr;
	b->size = size;
	b->seg = s;
	addr_insert(dp, b);
	*out = b;
	return DEVPOOL_OK;
}

/* Forgets segment s (its one block b already out of every tree) and gives
 * it back to the provider. */
static void
seg_release(devpool_t *dp, seg_t *s, block_t *b)
{
	uintptr_t addr = s->addr;
	size_t size = s->size;
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		dp->segs = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	dp->st.reserved -= size;
	dp->st.segments--;
	if (s->own)
		dp->st.own_segments--;
	free(s);
	blk_delete(dp, b);
	dp->st.seg_frees++;
	if (dp->prov.seg_free(dp->prov.arg, addr, size))
		log_debug(1, "devpool: segment %#lx (%zu bytes) not released",
		    (unsigned long)addr, size);
}

/* ------------------------------------------------------------ best fit */

static size_t
shared_segment_size(const devpool_t *dp)
{
	return dp->cfg.segment_size;
}

/* A used block of exactly size bytes from the shared segments. */
static int
bf_alloc(devpool_t *dp, size_t size, bool grow, block_t **out)
{
	block_t *b = size_lower_bound(dp->by_size, size);
	if (b == NULL) {
		if (!grow)
			return DEVPOOL_ENOSPACE;
		size_t ss = shared_segment_size(dp);
		if (size > ss)
			ss = round_up(size, DEVPOOL_GPU_PAGE);
		int r = seg_grow(dp, ss, false, &b);
		if (r != DEVPOOL_OK)
			return r;
		b->state = B_FREE;
	} else {
		size_remove(dp, b);
	}
	if (b->size - size >= SIZECLASS_GRANULE) {
		block_t *nb = blk_new(dp);
		if (nb == NULL) {
			b->state = B_FREE;
			size_insert(dp, b);
			return DEVPOOL_ENOMEM;
		}
		nb->addr = b->addr + size;
		nb->size = b->size - size;
		nb->seg = b->seg;
		nb->state = B_FREE;
		nb->prev = b;
		nb->next = b->next;
		if (b->next != NULL)
			b->next->prev = nb;
		b->next = nb;
		b->size = size;
		addr_insert(dp, nb);
		size_insert(dp, nb);
	}
	b->state = B_USED;
	dp->st.allocated += b->size;
	*out = b;
	return DEVPOOL_OK;
}

/* Frees a used (or emptied slab) block: coalesce, back to by_size. */
static void
bf_free(devpool_t *dp, block_t *b)
{
	dp->st.allocated -= b->size;
	b->state = B_FREE;
	block_t *n = b->next;
	if (n != NULL && n->state == B_FREE) {
		size_remove(dp, n);
		addr_remove(dp, n);
		b->size += n->size;
		b->next = n->next;
		if (n->next != NULL)
			n->next->prev = b;
		blk_delete(dp, n);
	}
	block_t *p = b->prev;
	if (p != NULL && p->state == B_FREE) {
		size_remove(dp, p);
		addr_remove(dp, b);
		p->size += b->size;
		p->next = b->next;
		if (b->next != NULL)
			b->next->prev = p;
		blk_delete(dp, b);
		b = p;
	}
	size_insert(dp, b);
}

/* ----------------------------------------------------------------- slabs */

static void
partial_push(devpool_t *dp, slab_t *s)
{
	s->prev = NULL;
	s->next = dp->partial[s->cls];
	if (s->next != NULL)
		s->next->prev = s;
	dp->partial[s->cls] = s;
}

static void
partial_remove(devpool_t *dp, slab_t *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		dp->partial[s->cls] = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void
slab_init_tail(slab_t *s)
{
	/* Slots past nregs are marked used so the search never finds them. */
	for (unsigned k = s->nregs; k < SLAB_MAXREGS; k++)
		s->used[k / 64] |= 1ULL << (k % 64);
}

static int
slab_alloc(devpool_t *dp, unsigned cls, size_t csize, bool grow,
    uintptr_t *addr)
{
	slab_t *s = dp->partial[cls];
	if (s == NULL) {
		slab_t *ns = calloc(1, sizeof(*ns));
		if (ns == NULL)
			return DEVPOOL_ENOMEM;
		uint32_t n = slab_nregs(csize);
		block_t *b;
		int r = bf_alloc(dp, n * csize, grow, &b);
		if (r != DEVPOOL_OK) {
			free(ns);
			return r;
		}
		/* bf_alloc counted the slab as allocated; slots count. */
		dp->st.allocated -= b->size;
		b->state = B_SLAB;
		b->slab = ns;
		ns->blk = b;
		ns->cls = cls;
		ns->nregs = n;
		ns->nfree = n;
		slab_init_tail(ns);
		dp->st.slabs++;
		partial_push(dp, ns);
		s = ns;
	}
	unsigned i;
	for (i = 0; i < SLAB_MAXREGS / 64; i++)
		if (~s->used[i] != 0)
			break;
	unsigned bit = (unsigned)__builtin_ctzll(~s->used[i]);
	unsigned slot = i * 64 + bit;
	cw_assert(slot < s->nregs);
	s->used[i] |= 1ULL << bit;
	if (--s->nfree == 0)
		partial_remove(dp, s);
	dp->st.allocated += csize;
	*addr = s->blk->addr + slot * csize;
	return DEVPOOL_OK;
}

/* ----------------------------------------------------------------- API */

devpool_t *
devpool_create(const devpool_config_t *cfg, const devpool_provider_t *prov)
{
	devpool_t *dp = calloc(1, sizeof(*dp));
	if (dp == NULL)
		return NULL;
	dp->cfg = *cfg;
	dp->prov = *prov;
	if (dp->cfg.large_block == 0)
		dp->cfg.large_block = DEVPOOL_GPU_PAGE;
	if (dp->cfg.large_block < DEVPOOL_SLAB_MAX * 2)
		dp->cfg.large_block = DEVPOOL_SLAB_MAX * 2;
	if (dp->cfg.large_block > DEVPOOL_LARGE_MAX)
		dp->cfg.large_block = DEVPOOL_LARGE_MAX;
	size_t lc = sizeclass_round(dp->cfg.large_block - 1,
	    SIZECLASS_LGD_DEVICE);
	if (dp->cfg.segment_size == 0)
		dp->cfg.segment_size = DEVPOOL_GPU_PAGE;
	if (dp->cfg.segment_size < lc)
		dp->cfg.segment_size = lc;
	dp->cfg.segment_size = round_up(dp->cfg.segment_size,
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
		s->first = addr_floor(dp->by_addr, s->addr);
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
		size_t us = round_up(size, SIZECLASS_GRANULE);
		size_t ss = round_up(size, DEVPOOL_GPU_PAGE);
		block_t *b = size_lower_bound(dp->own_free, ss);
		if (b != NULL && b->size - ss <= ss / 8) {
			dp->own_free = t_remove(dp->own_free, &b->by_size,
			    cmp_size);
			dp->nown_cached--;
			dp->st.own_cached -= b->size;
		} else {
			if (!grow)
				return DEVPOOL_ENOSPACE;
			int r = seg_grow(dp, ss, true, &b);
			if (r != DEVPOOL_OK)
				return r;
		}
		b->state = B_OWN_USED;
		b->user_size = us;
		dp->st.allocated += b->size;
		*addr = b->addr;
		*bsize = us;
		if (flags != NULL)
			*flags = DEVPOOL_F_OWN_SEGMENT;
		return DEVPOOL_OK;
	}
	unsigned cls = sizeclass_of(size, SIZECLASS_LGD_DEVICE);
	size_t csize = sizeclass_size(cls, SIZECLASS_LGD_DEVICE);
	int r;
	if (csize <= DEVPOOL_SLAB_MAX) {
		r = slab_alloc(dp, cls, csize, grow, addr);
	} else {
		block_t *b;
		r = bf_alloc(dp, csize, grow, &b);
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

static void
own_cache_trim(devpool_t *dp)
{
	size_t max = own_cache_max(dp);
	while (dp->st.own_cached > max) {
		block_t *b = size_max(dp->own_free);
		if (b == NULL)
			break;
		dp->own_free = t_remove(dp->own_free, &b->by_size, cmp_size);
		dp->nown_cached--;
		dp->st.own_cached -= b->size;
		addr_remove(dp, b);
		seg_release(dp, b->seg, b);
	}
}

bool
devpool_free(devpool_t *dp, uintptr_t addr)
{
	block_t *b = addr_floor(dp->by_addr, addr);
	if (b == NULL || addr >= b->addr + b->size)
		return true;
	switch (b->state) {
	case B_USED:
		if (addr != b->addr)
			return true;
		bf_free(dp, b);
		return false;
	case B_OWN_USED:
		if (addr != b->addr)
			return true;
		dp->st.allocated -= b->size;
		b->state = B_OWN_CACHED;
		b->by_size.prio = mix64(b->addr ^ 0x5bd1e995);
		dp->own_free = t_insert(dp->own_free, &b->by_size, cmp_size);
		dp->nown_cached++;
		dp->st.own_cached += b->size;
		own_cache_trim(dp);
		return false;
	case B_SLAB: {
		slab_t *s = b->slab;
		size_t csize = sizeclass_size(s->cls, SIZECLASS_LGD_DEVICE);
		size_t off = addr - b->addr;
		if (off % csize != 0 || off / csize >= s->nregs)
			return true;
		unsigned slot = (unsigned)(off / csize);
		uint64_t bit = 1ULL << (slot % 64);
		if (!(s->used[slot / 64] & bit))
			return true;
		s->used[slot / 64] &= ~bit;
		dp->st.allocated -= csize;
		if (s->nfree++ == 0)
			partial_push(dp, s);
		if (s->nfree == s->nregs &&
		    (dp->partial[s->cls] != s || s->next != NULL)) {
			/* Empty and not the class's last slab: give the
			 * span back to the best-fit engine. */
			partial_remove(dp, s);
			b->slab = NULL;
			b->state = B_USED;
			dp->st.allocated += b->size;
			dp->st.slabs--;
			free(s);
			bf_free(dp, b);
		}
		return false;
	}
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
	block_t *b = addr_floor(dp->by_addr, addr);
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
	case B_SLAB: {
		slab_t *s = b->slab;
		size_t csize = sizeclass_size(s->cls, SIZECLASS_LGD_DEVICE);
		size_t slot = (addr - b->addr) / csize;
		if (slot >= s->nregs ||
		    !(s->used[slot / 64] & (1ULL << (slot % 64))))
			return true;
		*base = b->addr + slot * csize;
		*size = csize;
		*flags = 0;
		return false;
	}
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
	block_t *b = addr_floor(dp->by_addr, addr);
	return b == NULL || addr >= b->addr + b->size;
}

size_t
devpool_trim(devpool_t *dp)
{
	size_t released = 0;
	/* Cached own segments. */
	while (dp->own_free != NULL) {
		block_t *b = BLK_OF(dp->own_free, by_size);
		dp->own_free = t_remove(dp->own_free, &b->by_size, cmp_size);
		dp->nown_cached--;
		dp->st.own_cached -= b->size;
		addr_remove(dp, b);
		released += b->size;
		seg_release(dp, b->seg, b);
	}
	/* Empty slabs kept as their class's last one. */
	for (unsigned c = 0; c < DEVPOOL_NCLASSES; c++) {
		slab_t *s = dp->partial[c];
		while (s != NULL) {
			slab_t *next = s->next;
			if (s->nfree == s->nregs) {
				block_t *b = s->blk;
				partial_remove(dp, s);
				b->slab = NULL;
				b->state = B_USED;
				dp->st.allocated += b->size;
				dp->st.slabs--;
				free(s);
				bf_free(dp, b);
			}
			s = next;
		}
	}
	/* Shared segments that are one free block. */
	for (;;) {
		seg_t *s;
		block_t *b = NULL;
		for (s = dp->segs; s != NULL; s = s->next) {
			if (s->own)
				continue;
			b = addr_floor(dp->by_addr, s->addr);
			if (b != NULL && b->state == B_FREE &&
			    b->size == s->size)
				break;
		}
		if (s == NULL)
			break;
		size_remove(dp, b);
		addr_remove(dp, b);
		released += s->size;
		seg_release(dp, s, b);
	}
	return released;
}

void
devpool_stats(devpool_t *dp, devpool_stats_t *out)
{
	*out = dp->st;
	out->free_bytes = dp->st.reserved - dp->st.allocated;
	size_t lf = 0;
	block_t *b = size_max(dp->by_size);
	if (b != NULL)
		lf = b->size;
	b = size_max(dp->own_free);
	if (b != NULL && b->size > lf)
		lf = b->size;
	out->largest_free = lf;
}

/* ------------------------------------------------------------ validate */

typedef struct vstate_s {
	char *why;
	size_t whylen;
	bool bad;
	size_t count;
	const tnode_t *last;
} vstate_t;

static bool
vfail(vstate_t *v, const char *msg, uintptr_t addr)
{
	if (!v->bad && v->why != NULL)
		log_snprintf(v->why, v->whylen, "%s at %#lx", msg,
		    (unsigned long)addr);
	v->bad = true;
	return true;
}

/* In-order walk: key order, heap order, count.  Recursion depth is the
 * treap's height (O(log n) expected). */
static void
vwalk(vstate_t *v, const tnode_t *t, tcmp_t cmp, uintptr_t (*addr_of)(
    const tnode_t *))
{
	if (t == NULL || v->bad)
		return;
	if ((t->l != NULL && t->l->prio > t->prio) ||
	    (t->r != NULL && t->r->prio > t->prio))
		vfail(v, "treap heap order broken", addr_of(t));
	vwalk(v, t->l, cmp, addr_of);
	if (v->last != NULL && cmp(v->last, t) >= 0)
		vfail(v, "treap key order broken", addr_of(t));
	v->last = t;
	v->count++;
	vwalk(v, t->r, cmp, addr_of);
}

static uintptr_t
addr_of_a(const tnode_t *t)
{
	return BLK_OF(t, by_addr)->addr;
}

static uintptr_t
addr_of_s(const tnode_t *t)
{
	return BLK_OF(t, by_size)->addr;
}

bool
devpool_validate(devpool_t *dp, char *why, size_t whylen)
{
	vstate_t v = { why, whylen, false, 0, NULL };
	vwalk(&v, dp->by_addr, cmp_addr, addr_of_a);
	if (!v.bad && v.count != dp->nblocks)
		vfail(&v, "by_addr count differs from blocks", 0);
	v.count = 0;
	v.last = NULL;
	vwalk(&v, dp->by_size, cmp_size, addr_of_s);
	if (!v.bad && v.count != dp->nfree_blocks)
		vfail(&v, "by_size count differs from free blocks", 0);
	v.count = 0;
	v.last = NULL;
	vwalk(&v, dp->own_free, cmp_size, addr_of_s);
	if (!v.bad && v.count != dp->nown_cached)
		vfail(&v, "own_free count differs", 0);
	if (v.bad)
		return true;

	size_t reserved = 0, allocated = 0, nseg = 0, nown = 0, ncached = 0;
	size_t nfree = 0, nslabs = 0;
	for (seg_t *s = dp->segs; s != NULL; s = s->next) {
		nseg++;
		reserved += s->size;
		block_t *b = addr_floor(dp->by_addr, s->addr);
		if (b == NULL || b->addr != s->addr || b->prev != NULL)
			return vfail(&v, "segment does not start a block",
			    s->addr);
		if (s->own) {
			nown++;
			if (b->size != s->size || b->next != NULL)
				return vfail(&v, "own segment split", s->addr);
			if (b->state == B_OWN_USED)
				allocated += b->size;
			else if (b->state == B_OWN_CACHED)
				ncached += b->size;
			else
				return vfail(&v, "own segment state", s->addr);
			continue;
		}
		uintptr_t end = s->addr;
		for (; b != NULL; b = b->next) {
			if (b->addr != end || b->seg != s)
				return vfail(&v, "blocks do not tile segment",
				    b->addr);
			if (b->addr % SIZECLASS_GRANULE || b->size == 0)
				return vfail(&v, "block misaligned", b->addr);
			if (addr_floor(dp->by_addr, b->addr) != b)
				return vfail(&v, "block not in by_addr",
				    b->addr);
			if (b->next != NULL && b->next->prev != b)
				return vfail(&v, "neighbour links", b->addr);
			end += b->size;
			switch (b->state) {
			case B_FREE:
				nfree++;
				if (b->next != NULL && b->next->state == B_FREE)
					return vfail(&v, "free neighbours not "
					    "coalesced", b->addr);
				break;
			case B_USED:
				allocated += b->size;
				break;
			case B_SLAB: {
				slab_t *sl = b->slab;
				nslabs++;
				size_t cs = sizeclass_size(sl->cls,
				    SIZECLASS_LGD_DEVICE);
				if (sl->blk != b || sl->nregs * cs != b->size)
					return vfail(&v, "slab geometry",
					    b->addr);
				unsigned used = 0;
				for (unsigned k = 0; k < sl->nregs; k++)
					used += (sl->used[k / 64] >>
					    (k % 64)) & 1;
				if (used + sl->nfree != sl->nregs)
					return vfail(&v, "slab bitmap count",
					    b->addr);
				allocated += used * cs;
				bool on = false;
				for (slab_t *p = dp->partial[sl->cls]; p;
				    p = p->next)
					on = on || p == sl;
				if (on != (sl->nfree > 0))
					return vfail(&v, "slab partial list",
					    b->addr);
				break;
			}
			case B_OWN_USED:
			case B_OWN_CACHED:
			default:
				return vfail(&v, "own block in shared segment",
				    b->addr);
			}
		}
		if (end != s->addr + s->size)
			return vfail(&v, "blocks do not cover segment", s->addr);
	}
	if (reserved != dp->st.reserved)
		return vfail(&v, "reserved counter", reserved);
	if (allocated != dp->st.allocated)
		return vfail(&v, "allocated counter", allocated);
	if (nseg != dp->st.segments || nown != dp->st.own_segments)
		return vfail(&v, "segment counters", nseg);
	if (ncached != dp->st.own_cached)
		return vfail(&v, "own cached counter", ncached);
	if (nfree != dp->nfree_blocks)
		return vfail(&v, "free blocks not all in by_size", nfree);
	if (nslabs != dp->st.slabs)
		return vfail(&v, "slab counter", nslabs);
	return false;
}
