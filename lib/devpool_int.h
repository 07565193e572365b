/*
 * devpool_int.h -- the device engine's internals, shared by the files of
 * the engine (lib/devpool*.c) and nobody else; the contract is devpool.h.
 * Include it after preamble.h.
 *
 *   devpool.c           the API: create, destroy, alloc, free, lookups,
 *                       trim, statistics
 *   devpool_tree.c      the block records and the treaps that index them
 *   devpool_seg.c       segments from the provider, and the best-fit
 *                       blocks carved from shared ones (split, coalesce)
 *   devpool_slab.c      slabs: the slots of the small classes
 *   devpool_own.c       own segments (the large path) and their cache
 *   devpool_validate.c  devpool_validate
 *
 * Structures (every record is host memory; the device memory is never
 * touched):
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
#ifndef CUWARDEN_DEVPOOL_INT_H
#define CUWARDEN_DEVPOOL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devpool.h"

#pragma GCC visibility push(hidden)

#define DEVPOOL_NCLASSES 160 /* device classes below DEVPOOL_LARGE_MAX */
#define SLAB_MAXREGS 128

typedef struct tnode_s {
	struct tnode_s *l, *r;
	uint64_t prio;
} tnode_t;

typedef int (*tcmp_t)(const tnode_t *a, const tnode_t *b);

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

/* The block of a treap node, field being by_addr or by_size. */
#define BLK_OF(node, field) \
	((block_t *)((char *)(node) - offsetof(block_t, field)))

static inline size_t
devpool_round_up(size_t x, size_t to)
{
	return (x + to - 1) / to * to;
}

/* ------------------------------------------------------ "devpool_tree.c" */

/* A zeroed block record, counted in nblocks; NULL when host memory is
 * short. */
block_t *devpool_blk_new(devpool_t *dp);
/* Recycles b (out of every tree already). */
void devpool_blk_delete(devpool_t *dp, block_t *b);
/* b into / out of by_addr. */
void devpool_addr_insert(devpool_t *dp, block_t *b);
void devpool_addr_remove(devpool_t *dp, block_t *b);
/* The block with the greatest address <= a, or NULL. */
block_t *devpool_addr_floor(const devpool_t *dp, uintptr_t a);
/* b into / out of by_size, counted in nfree_blocks. */
void devpool_size_insert(devpool_t *dp, block_t *b);
void devpool_size_remove(devpool_t *dp, block_t *b);
/* b into / out of own_free, counted in nown_cached and st.own_cached. */
void devpool_ownfree_insert(devpool_t *dp, block_t *b);
void devpool_ownfree_remove(devpool_t *dp, block_t *b);
/* Of a (size, addr) treap: the smallest block with size >= want, the
 * largest block; NULL if none. */
block_t *devpool_size_lower_bound(tnode_t *t, size_t want);
block_t *devpool_size_max(tnode_t *t);
/* The orders of by_addr and of the (size, addr) treaps. */
int devpool_cmp_addr(const tnode_t *a, const tnode_t *b);
int devpool_cmp_size(const tnode_t *a, const tnode_t *b);

/* ------------------------------------------------------- "devpool_seg.c" */

/* Gets a segment of size bytes from the provider and records it.  Returns
 * DEVPOOL_OK with *out, the block covering it, in by_addr only (the
 * caller sets its state), or DEVPOOL_ELIMIT, _ENOMEM, _EPROVIDER. */
int devpool_seg_grow(devpool_t *dp, size_t size, bool own, block_t **out);
/* Forgets segment s (its one block b already out of every tree) and gives
 * it back to the provider. */
void devpool_seg_release(devpool_t *dp, seg_t *s, block_t *b);
/* A used block of exactly size bytes from the shared segments (grow: may
 * get a new one).  Returns DEVPOOL_OK with *out, or an error. */
int devpool_bf_alloc(devpool_t *dp, size_t size, bool grow, block_t **out);
/* Frees a used (or emptied slab) block: coalesce, back to by_size. */
void devpool_bf_free(devpool_t *dp, block_t *b);
/* Gives back every shared segment that is one free block.  Returns the
 * bytes released. */
size_t devpool_seg_trim(devpool_t *dp);

/* ------------------------------------------------------ "devpool_slab.c" */

/* A slot of class cls (csize bytes), from a slab with a free slot or a new
 * slab.  Returns DEVPOOL_OK with *addr, or an error. */
int devpool_slab_alloc(devpool_t *dp, unsigned cls, size_t csize,
    bool grow, uintptr_t *addr);
/* Frees the slot starting at addr of slab block b.  Returns true if addr
 * is not the start of a slot handed out (nothing changed). */
bool devpool_slab_free(devpool_t *dp, block_t *b, uintptr_t addr);
/* The slot handed out of slab block b that contains addr.  Returns true
 * if none. */
bool devpool_slab_block_of(const block_t *b, uintptr_t addr,
    uintptr_t *base, size_t *size);
/* Gives the empty slabs kept as their class's last one back to the
 * best-fit blocks. */
void devpool_slab_trim(devpool_t *dp);

/* ------------------------------------------------------- "devpool_own.c" */

/* An own segment for size bytes: a cached one within 1/8, or a new one
 * (grow).  Returns DEVPOOL_OK with *addr and *bsize, or an error. */
int devpool_own_alloc(devpool_t *dp, size_t size, bool grow,
    uintptr_t *addr, size_t *bsize);
/* Caches own segment b (handed out), then gives the largest cached ones
 * back beyond the cache's cap. */
void devpool_own_free(devpool_t *dp, block_t *b);
/* Gives cached own segments back, largest first, until at most keep
 * bytes stay cached.  Returns the bytes released. */
size_t devpool_own_shrink(devpool_t *dp, size_t keep);

#pragma GCC visibility pop

#endif /* CUWARDEN_DEVPOOL_INT_H */
