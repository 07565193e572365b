/*
 * hostpool.h -- pinned and managed pools: one private jemalloc arena per
 * pool, with extent hooks over segments from a provider (cuMemHostAlloc /
 * cuMemAllocManaged through direct.h in pool_seg.c; a fake in the unit
 * test).
 *
 * Rules (doc/pools.md "Pinned and managed memory"): the arena is created with our
 * hooks, which serve its metadata from anonymous memory (never from the
 * provider) and unmap it when the arena is destroyed; every call passes
 * MALLOCX_TCACHE_NONE (the pools' thread caches sit in front, behind
 * the fence); dalloc opts out for data (retain);
 * merge is refused across segments; purge and decommit are refused;
 * retain_grow_limit is capped; decay is off; no MALLOCX_ZERO, no rallocx.
 * Memory goes back to the provider only when the arena is destroyed
 * (hostpool_trim with nothing live, hostpool_destroy).
 *
 * Thread-safe: jemalloc serialises the arena; a rwlock keeps trim (arena
 * destroy) away from allocations.  Owner: pools.
 */
#ifndef CUWARDEN_HOSTPOOL_H
#define CUWARDEN_HOSTPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hostpool_provider_s {
	/* A segment of exactly size bytes.  Returns true on error. */
	bool (*seg_alloc)(void *arg, size_t size, uintptr_t *addr);
	/* Returns a segment.  Returns true on error. */
	bool (*seg_free)(void *arg, uintptr_t addr, size_t size);
	void *arg;
} hostpool_provider_t;

typedef struct hostpool_stats_s {
	size_t reserved;   /* bytes of segments */
	size_t allocated;  /* bytes of blocks live in the arena */
	size_t segments;
	size_t largest_segment;
	uint64_t seg_allocs; /* provider calls */
	uint64_t seg_frees;
	uint64_t arenas_created;
	/* jemalloc's metadata blocks the hooks mapped and unmapped (equal
	 * when no arena is alive). */
	uint64_t meta_maps, meta_unmaps;
} hostpool_stats_t;

typedef struct hostpool_s hostpool_t;

/* NULL when host memory is short.  The arena is made on first use. */
hostpool_t *hostpool_create(const hostpool_provider_t *prov, size_t limit,
    size_t grow_limit);
void hostpool_set_limit(hostpool_t *hp, size_t limit);
/* Returns true on error (limit, provider or jemalloc failure). *bsize:
 * the bytes of the block (jemalloc's size class). */
bool hostpool_alloc(hostpool_t *hp, size_t size, uintptr_t *addr,
    size_t *bsize);
/* bsize is ignored (jemalloc knows the size). */
void hostpool_free(hostpool_t *hp, uintptr_t addr, size_t bsize);
/* Destroys the arena and releases every segment when no block is live.
 * Returns the bytes released. */
size_t hostpool_trim(hostpool_t *hp);
void hostpool_stats(hostpool_t *hp, hostpool_stats_t *out);
/* Whether hostpool_stats would wait for good: its lock cannot be taken
 * (nowait.h; always false outside the exit report's nowait state). */
bool hostpool_locked(hostpool_t *hp);
/* Releases everything (blocks still live are lost) and frees hp. */
void hostpool_destroy(hostpool_t *hp);
/* The segment containing addr.  Returns true if none. */
bool hostpool_segment_of(hostpool_t *hp, uintptr_t addr, uintptr_t *base,
    size_t *size);
/* jemalloc's version string (tests). */
const char *hostpool_jemalloc_version(void);

#endif /* CUWARDEN_HOSTPOOL_H */
