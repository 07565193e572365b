/*
 * poolmap.h -- which pooled block contains an address, lock-free.
 *
 * A two-level radix over 2 MiB pages of the 48-bit address space; a leaf
 * holds one 32-bit entry per 512-byte granule, non-zero where a block
 * handed out starts: its size in granules (rounded up), kind and flags.
 * Every pooled block is 512-byte aligned and at least 512 bytes, so a
 * granule holds at most one start.  A lookup scans back from the address
 * to the nearest start.
 *
 * Memory: the pools hold the pages of each segment while they have it
 * (poolmap_hold / poolmap_release, off the fast path).  A page gets a
 * leaf (16 KiB, 1/128 of the page) at the first block handed out in it,
 * and loses it when no segment holds the page any more; the leaf goes to
 * a free list for the next page.  So the leaves are bounded by the most
 * pages with blocks in them that the pools held at once, whatever
 * addresses the driver hands out over time.  l2 nodes (320 KiB, one per
 * 32 GiB of address space that ever held a segment) are kept.
 * Owner: pools.
 */
#ifndef CUWARDEN_POOLMAP_H
#define CUWARDEN_POOLMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POOLMAP_GRANULE ((uintptr_t)512)
#define POOLMAP_MAX_SIZE (((size_t)1 << 26) * 512 - 512) /* 32 GiB */
#define POOLMAP_F_HUGE 0x100 /* size >= POOLMAP_MAX_SIZE: ask the engine */
/* The pool arena (0..3) a block came from, in flags bits 12-13 (kept in
 * the entry's two top bits). */
#define POOLMAP_F_ARENA_SHIFT 12
#define POOLMAP_F_ARENA(a) ((unsigned)(a) << POOLMAP_F_ARENA_SHIFT)
#define POOLMAP_ARENA_OF(flags) (((flags) >> POOLMAP_F_ARENA_SHIFT) & 3u)

/* Holds the pages of [base, base + size) (a segment the pools got):
 * entries can be set there until the matching release.  Holds count
 * bytes, so ranges may share pages.  Returns true on error (no host
 * memory, or outside 48 bits), holding nothing. */
bool poolmap_hold(uintptr_t base, size_t size);
/* Gives back a hold (the segment left the pools) and clears the entries
 * in the range, whatever blocks were still recorded there (a segment that
 * died with its context); a page no segment holds loses its leaf. */
void poolmap_release(uintptr_t base, size_t size);
/* Records a block handed out.  Returns true on error (the address is not
 * in a held segment). */
bool poolmap_set(uintptr_t base, size_t size, unsigned kind,
    unsigned flags);
void poolmap_clear(uintptr_t base);
/* The block containing addr.  *size is rounded up to 512 bytes (or
 * POOLMAP_MAX_SIZE with POOLMAP_F_HUGE in *flags).  Returns true if
 * none. */
bool poolmap_lookup(uintptr_t addr, uintptr_t *base, size_t *size,
    unsigned *kind, unsigned *flags);
/* Whether a segment the pools hold shares addr's 2 MiB page: false means
 * addr is no pool's memory; true means it may be (ask the pools).
 * Lock-free. */
bool poolmap_page_held(uintptr_t addr);
typedef struct poolmap_stats_s {
	size_t leaves_live; /* published: pages held now */
	size_t leaves_free; /* kept for the next pages held */
	size_t nodes;       /* l2 nodes */
	size_t bytes;       /* of all three */
} poolmap_stats_t;
void poolmap_stats(poolmap_stats_t *out);
/* Forgets every entry and hold (frees the memory unless in a forked
 * child, where the leaves go to the free list). */
void poolmap_reset(bool child);

#endif /* CUWARDEN_POOLMAP_H */
