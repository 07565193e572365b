/*
 * registry.h -- every live allocation (and view), and tombstones of freed
 * ones.
 *
 * Records live in a slot table (mmap'd, up to millions of slots); a handle
 * is (generation << 32 | slot), so a freed or foreign handle is told
 * apart from a live one in O(1) without dereferencing anything.  Keyed
 * records (ns != NS_NONE) are also in a lock-striped hash by (ns, base)
 * (O(1) lookup by base) and in one of 2^18 treaps picked by (ns, size
 * level, base >> the level's shift) (interior lookups in O(log n), at
 * most 2 treaps per size level).  No single global lock on the hot path.
 * Freed records leave a tombstone (base, size, kind, stacks) in a bounded
 * table (CUWARDEN_TOMBSTONES) so a double free is told from an invalid
 * one.  At most 128 bytes of metadata per live record.
 *
 * Callbacks run under a stripe lock: they must be short and must not call
 * back into the registry or into the driver.  Owner: core.
 */
#ifndef CUWARDEN_REGISTRY_H
#define CUWARDEN_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

typedef uint64_t reg_handle_t; /* == cw_buf_t; 0 = none */

/* A record, as copied in and out. */
typedef struct reg_rec_s {
	uintptr_t base;          /* key within ns (address or handle value) */
	size_t size;             /* bytes */
	uintptr_t ctx;           /* CUcontext it was made in (teardown), or 0 */
	uintptr_t aux;           /* kind-specific: stream, pool, VMM handle of a
	                          * mapping, pitch... */
	reg_handle_t parent;     /* view: the allocation it refers to */
	const char *api;         /* static string: entry point that made it */
	stack_id_t alloc_stack;
	stack_id_t free_stack;   /* tombstones only */
	owner_id_t owner;
	int32_t refcount;        /* 1 = owner only */
	uint16_t flags;          /* REC_F_* */
	uint8_t kind;            /* kind_t */
	uint8_t ns;              /* ns_t */
	int16_t device;          /* ordinal, -1 = host/unknown */
} reg_rec_t;

#define REC_F_POOLED 0x1     /* served from a pool (not a driver allocation) */
#define REC_F_ANNOTATED 0x2  /* the program annotated owner/references */
#define REC_F_LIBRARY 0x4    /* made by cw_alloc/cw_view */
#define REC_F_VMM_RELEASED 0x8 /* VMM handle released while still mapped */

typedef enum reg_state_e {
	REG_LIVE = 0,
	REG_FREED = 1,   /* the handle was issued and has been freed */
	REG_INVALID = 2  /* never issued (or 0) */
} reg_state_t;

/* Inserts a live record.  If a live record with the same (ns, base)
 * exists, it is replaced (its memory was freed behind our back, e.g. by a
 * teardown we missed) and copied to *replaced (if non-NULL) with
 * *had_replaced = true.  Returns true on error (out of metadata memory). */
bool registry_insert(const reg_rec_t *rec, reg_handle_t *handle,
    reg_rec_t *replaced, bool *had_replaced);

reg_state_t registry_state(reg_handle_t h);
/* Copies a live record.  Returns true if h is not live. */
bool registry_get(reg_handle_t h, reg_rec_t *out);

/* Exact lookup by (ns, base).  Returns true if not found. */
bool registry_find(ns_t ns, uintptr_t base, reg_handle_t *h, reg_rec_t *out);
/* The live record of ns whose [base, base+size) contains p.  Returns true
 * if none.  Live ranges of one namespace are expected not to overlap (the
 * driver never makes overlapping ones); where they do, which container is
 * returned is unspecified. */
bool registry_find_containing(ns_t ns, uintptr_t p, reg_handle_t *h,
    reg_rec_t *out);

/* Runs fn on the live record under its lock; fn may change refcount,
 * owner, flags, aux, size (never base, ns or kind).  Returns fn's result,
 * or REG_FREED / REG_INVALID as a negative number (-1 / -2) when h is not
 * live. */
typedef int (*reg_update_fn)(reg_rec_t *rec, void *arg);
int registry_update(reg_handle_t h, reg_update_fn fn, void *arg);

/* Removes a live record: under its lock, check (if non-NULL) may refuse
 * by returning non-zero, which is returned and nothing changes.
 * Otherwise the record is removed, a tombstone with free_stack is kept,
 * *out (if non-NULL) gets the record, and 0 is returned.  -1 / -2 when h
 * is not live (freed / never issued). */
int registry_remove(reg_handle_t h, reg_update_fn check, void *arg,
    stack_id_t free_stack, reg_rec_t *out);

/* The most recent tombstone of (ns, base), free_stack included.  Returns
 * true if none is remembered. */
bool registry_tomb_find(ns_t ns, uintptr_t base, reg_rec_t *out);
/* The tombstone of a freed handle.  Returns true if none. */
bool registry_tomb_get(reg_handle_t h, reg_rec_t *out);

/* Calls fn for each live record; the callback sees a stable copy and
 * runs with no registry lock held (copies are taken under each stripe's
 * lock, a batch at a time).  Every record live for the whole walk is seen
 * exactly once; one inserted or removed during it may or may not be.
 * Returning non-zero stops the walk (and is returned). */
typedef int (*reg_walk_fn)(reg_handle_t h, const reg_rec_t *rec, void *arg);
int registry_foreach(reg_walk_fn fn, void *arg);

size_t registry_live_count(void);
size_t registry_bytes(void); /* metadata bytes in use */

/* Drops every record and tombstone (fork child, tests); no other thread
 * may use the registry meanwhile.  Handles issued before read FREED
 * afterwards, never LIVE.  Re-reads CUWARDEN_TOMBSTONES. */
void registry_reset(void);
void registry_prefork(void);
void registry_postfork_parent(void);
void registry_postfork_child(void);

/* Checks every invariant (debug builds, tests); aborts on a broken one. */
void registry_validate(void);

#endif /* CUWARDEN_REGISTRY_H */
