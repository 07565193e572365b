/*
 * devpool.h -- the device pool engine: pure bookkeeping over segments
 * that a provider hands out (the driver in pool_seg.c, a fake in the unit
 * test).  Metadata is out of band: the engine never reads or writes the
 * memory it manages.
 *
 *   size < large_block   rounded to a device size class (sizeclass.h).
 *                        Classes <= DEVPOOL_SLAB_MAX are slots of slabs;
 *                        larger classes are best-fit blocks.
 *                        Slabs and best-fit blocks are carved from shared
 *                        segments (segment_size, 2 MiB by default) with
 *                        split and coalesce, free blocks indexed by a
 *                        (size, address) treap -- never a linear list.
 *   size >= large_block  a segment of its own (DEVPOOL_F_OWN_SEGMENT);
 *                        freed ones are cached in their own (size,
 *                        address) treap and reused when they fit within
 *                        1/8, released beyond own_cache_max.
 *
 * Not thread-safe: the caller serialises (the pools hold the pool lock).
 * The provider may drop and retake that lock: the engine keeps no
 * pointer into its structures across a provider call.  Owner: pools.
 */
#ifndef CUWARDEN_DEVPOOL_H
#define CUWARDEN_DEVPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEVPOOL_GPU_PAGE ((size_t)2 << 20)
#define DEVPOOL_SLAB_MAX ((size_t)64 << 10) /* largest slab class */
#define DEVPOOL_LARGE_MAX ((size_t)1 << 30) /* cap on large_block */

#define DEVPOOL_F_OWN_SEGMENT 0x1 /* == POOL_F_OWN_SEGMENT */

typedef struct devpool_provider_s {
	/* A new segment of exactly size bytes.  Returns true on error. */
	bool (*seg_alloc)(void *arg, size_t size, uintptr_t *addr);
	/* Returns a segment.  Returns true on error (the engine forgets the
	 * segment anyway). */
	bool (*seg_free)(void *arg, uintptr_t addr, size_t size);
	void *arg;
} devpool_provider_t;

typedef struct devpool_config_s {
	size_t segment_size;  /* shared segments; 0 = 2 MiB */
	size_t large_block;   /* own segment from here; devpool_large_block */
	size_t limit;         /* reserved never exceeds it; 0 = none */
	size_t own_cache_max; /* cached own segments kept; 0 = 1/16 of
	                       * allocated + 32 MiB */
} devpool_config_t;

typedef struct devpool_stats_s {
	size_t reserved;      /* bytes of all segments */
	size_t allocated;     /* bytes of blocks handed out (block sizes) */
	size_t free_bytes;    /* reserved - allocated (slab slack included) */
	size_t largest_free;  /* largest block a request could get at once */
	size_t segments;
	size_t own_segments;  /* own segments, handed out or cached */
	size_t own_cached;    /* bytes of cached own segments */
	size_t slabs;
	uint64_t seg_allocs;  /* provider calls */
	uint64_t seg_frees;
} devpool_stats_t;

typedef struct devpool_s devpool_t;

enum devpool_err_e {
	DEVPOOL_OK = 0,
	DEVPOOL_ENOSPACE = 1, /* no room and grow not allowed */
	DEVPOOL_ELIMIT = 2,   /* growing would pass the limit */
	DEVPOOL_EPROVIDER = 3, /* the provider failed */
	DEVPOOL_ENOMEM = 4    /* host metadata could not be allocated */
};

/* The large_block the engine takes for want: 0 is 2 MiB, and the result
 * lies in [2 * DEVPOOL_SLAB_MAX, DEVPOOL_LARGE_MAX]. */
size_t devpool_large_block(size_t want);
/* NULL when host memory for the metadata is short. */
devpool_t *devpool_create(const devpool_config_t *cfg,
    const devpool_provider_t *prov);
/* Returns every segment to the provider and frees the metadata. */
void devpool_destroy(devpool_t *dp);
void devpool_set_limit(devpool_t *dp, size_t limit);

/* Allocates size bytes; grow: may ask the provider for a segment.
 * Returns DEVPOOL_OK with *addr, *bsize (the block as handed out) and
 * *flags, or an error of devpool_err_e. */
int devpool_alloc(devpool_t *dp, size_t size, bool grow, uintptr_t *addr,
    size_t *bsize, unsigned *flags);
/* Frees the block starting at addr.  Returns true if addr is not the
 * start of a block handed out (nothing changed). */
bool devpool_free(devpool_t *dp, uintptr_t addr);
/* The block handed out that contains addr.  Returns true if none. */
bool devpool_block_of(devpool_t *dp, uintptr_t addr, uintptr_t *base,
    size_t *size, unsigned *flags);
/* Whether addr lies in a segment of dp (in a block handed out, cached or
 * free).  Returns true if not. */
bool devpool_segment_of(devpool_t *dp, uintptr_t addr);
/* Returns every free segment (and cached own segment) to the provider.
 * Returns the bytes released. */
size_t devpool_trim(devpool_t *dp);
void devpool_stats(devpool_t *dp, devpool_stats_t *out);
/* Checks every invariant (tree order and heap, neighbours, coalescing,
 * sizes, slab bitmaps, counters).  Returns true on error, with what is
 * wrong in why (may be NULL). */
bool devpool_validate(devpool_t *dp, char *why, size_t whylen);

#endif /* CUWARDEN_DEVPOOL_H */
