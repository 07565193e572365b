/*
 * poolmap.h -- which pooled block contains an address, lock-free.
 *
 * A two-level radix over 2 MiB pages of the 48-bit address space; a leaf
 * holds one 32-bit entry per 512-byte granule, non-zero where a block
 * handed out starts: its size in granules (rounded up), kind and flags.
 * Every pooled block is 512-byte aligned and at least 512 bytes, so a
 * granule holds at most one start.  A lookup scans back from the address
 * to the nearest start.  Leaves are made on first use (1/128 of the bytes
 * of pages where blocks start); a leaf left empty and not used again for
 * a second is recycled for another page, so the leaves attached are at
 * most the pages holding a block start + POOLMAP_IDLE_MAX, whatever
 * addresses the pools' memory moves to (poolmap.c).
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
/* Empty leaves (the idle list): at least IDLE_MIN kept at their page; one
 * unused for IDLE_NS is recycled; never more than IDLE_MAX (64 MiB). */
#define POOLMAP_IDLE_MIN 64
#define POOLMAP_IDLE_NS 1000000000ull
#define POOLMAP_IDLE_MAX 4096

typedef struct poolmap_stats_s {
	size_t leaves_made;     /* allocated since the last reset */
	size_t leaves_attached; /* published at a page (idle ones included) */
	size_t leaves_idle;     /* of those, on the idle list */
	size_t leaves_free;     /* detached, ready for another page */
	size_t attaches;        /* times a leaf was attached to a page */
	size_t leaves_detached; /* times a leaf was detached, in all */
	size_t l2_made, l2_attached, l2_free; /* the same for l2 nodes */
	size_t bytes;           /* bytes allocated: leaves and nodes made */
} poolmap_stats_t;

/* Records a block handed out.  Returns true on error (no memory for a
 * leaf, or an address outside 48 bits). */
bool poolmap_set(uintptr_t base, size_t size, unsigned kind,
    unsigned flags);
/* Clears the entry of a block the caller holds (set, not cleared since). */
void poolmap_clear(uintptr_t base);
/* Clears every entry in [base, base + size) (a segment that died). */
void poolmap_clear_range(uintptr_t base, size_t size);
/* The block containing addr.  *size is rounded up to 512 bytes (or
 * POOLMAP_MAX_SIZE with POOLMAP_F_HUGE in *flags).  Returns true if
 * none. */
bool poolmap_lookup(uintptr_t addr, uintptr_t *base, size_t *size,
    unsigned *kind, unsigned *flags);
/* Forgets every entry (frees the leaves unless in a forked child, where
 * they go to the free lists). */
void poolmap_reset(bool child);
void poolmap_stats(poolmap_stats_t *out);
size_t poolmap_leaf_bytes(void); /* sizeof a leaf, for tests */
size_t poolmap_node_bytes(void); /* sizeof an l2 node, for tests */
/* Tests: the idle policy (POOLMAP_IDLE_NS, POOLMAP_IDLE_MAX, NULL = the
 * monotonic clock) and the clock it reads. */
void poolmap_test_policy(uint64_t idle_ns, size_t idle_max,
    uint64_t (*clock)(void));
/* Fork: the map's lock (a leaf lock, below the pools'). */
void poolmap_prefork(void);
void poolmap_postfork_parent(void);
void poolmap_postfork_child(void);

#endif /* CUWARDEN_POOLMAP_H */
