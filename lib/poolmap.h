/*
 * poolmap.h -- which pooled block contains an address, lock-free.
 *
 * A two-level radix over 2 MiB pages of the 48-bit address space; a leaf
 * holds one 32-bit entry per 512-byte granule, non-zero where a block
 * handed out starts: its size in granules (rounded up), kind and flags.
 * Every pooled block is 512-byte aligned and at least 512 bytes, so a
 * granule holds at most one start.  A lookup scans back from the address
 * to the nearest start.  Leaves are made on first use and kept (1/128 of
 * the bytes of pages where blocks start).  Owner: pools.
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

/* Records a block handed out.  Returns true on error (no memory for a
 * leaf, or an address outside 48 bits). */
bool poolmap_set(uintptr_t base, size_t size, unsigned kind,
    unsigned flags);
void poolmap_clear(uintptr_t base);
/* Clears every entry in [base, base + size) (a segment that died). */
void poolmap_clear_range(uintptr_t base, size_t size);
/* The block containing addr.  *size is rounded up to 512 bytes (or
 * POOLMAP_MAX_SIZE with POOLMAP_F_HUGE in *flags).  Returns true if
 * none. */
bool poolmap_lookup(uintptr_t addr, uintptr_t *base, size_t *size,
    unsigned *kind, unsigned *flags);
/* Forgets every entry (frees the leaves unless in a forked child). */
void poolmap_reset(bool child);

#endif /* CUWARDEN_POOLMAP_H */
