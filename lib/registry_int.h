/*
 * registry_int.h -- the registry's internals, shared by the files of the
 * registry (lib/registry*.c) and nobody else; the contract is registry.h,
 * the design and the measured costs doc/registry.md.  Include it after
 * preamble.h.
 *
 *   registry.c        the API: insert, lookups, update, remove, walk,
 *                     handle states, counts; the stripes and their H locks
 *   registry_slot.c   the slot table (reservation, commit, free lists)
 *                     and each stripe's hash by (ns, base)
 *   registry_tree.c   the interval treaps (interior lookups), T locks
 *   registry_tomb.c   the tombstone rings and their lookups
 *   registry_fork.c   taking every lock, fork hooks, reset
 *   registry_check.c  registry_validate and registry_fail
 *
 * Owns:
 *  - the slot table: one PROT_NONE reservation (MAP_NORESERVE) of
 *    NSTRIPES * 2^pshift slots of 88 bytes, stripe-major: stripe s owns
 *    slots [s << pshift, (s + 1) << pshift) and commits them (mprotect)
 *    in chunks of CHUNK_SLOTS as its high-water mark grows.  A slot never
 *    changes stripe, so a handle names its stripe (slot >> pshift) and its
 *    lock without any lookup.  Freed slots go on the stripe's free list.
 *  - per stripe (H stripes): a chained hash of the keyed live records of
 *    the stripe by (ns, base) (chains linked through the slots), the free
 *    list, the live counts and a ring of tombstones with two chained
 *    indexes (by (ns, base) and by handle).  A keyed record's stripe is
 *    picked by the hash of (ns, base); an unkeyed one (NS_NONE) by a
 *    per-thread rotation.
 *  - NROOTS intrusive treaps (links in the slots) keyed by (ns, level,
 *    base), guarded by TLOCKS tree locks (registry_tree.c).
 *
 * Handles: (generation << 32 | slot).  slot->seq counts issues and
 * removals: odd = live, and the generation of the last issued handle is
 * (seq + 1) / 2.  registry_state() reads only the stripe's high-water mark
 * and the slot's seq (atomics), never a lock.  A slot whose seq would wrap
 * is retired (never reissued), so a handle is never issued twice.
 *
 * Invariants (registry_validate checks them all): a live keyed slot is in
 * exactly one hash chain (of its stripe, its bucket) and in exactly one
 * treap (the root of its ns, level and region); treaps are ordered by
 * (ns, level, base) and heap-ordered by priority; no two live records
 * share (ns, base); live + free + retired == high-water mark per stripe;
 * every tombstone in a ring is reached from both its buckets.
 *
 * Locking: H stripe locks (rank REGISTRY_H) protect everything of their
 * stripe, slots included; T locks (REGISTRY_T) protect treap links and
 * roots, and the size of the records in their treaps (a size changes
 * under both).  Order: at most one H lock, then at most one T lock under
 * it, but for registry_lock_all (reset, validation: every H then every T
 * in index order, why both ranks are nestable); never any other lock of
 * cuwarden under them, never a driver call.  The base, ns, level and seq of a slot change only while
 * it is in no treap, so a T-lock holder may read them.  Callbacks
 * (registry_update, registry_remove's check) run under the H lock;
 * registry_foreach calls its function with no lock held.  Fork: prefork
 * takes every H then every T lock, in index order.  Lock-free readers:
 * registry_state (hw, seq) and the empty-root and level-in-use peeks of
 * interior lookups (atomics, relaxed).
 *
 * Memory: no malloc anywhere; slots, hash buckets and tombstones are
 * mmap'd.  Per live record: 88 bytes of slot, 4-8 of hash bucket, plus
 * the commit granularity and the tombstone ring shared by all.
 */
#ifndef CUWARDEN_REGISTRY_INT_H
#define CUWARDEN_REGISTRY_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "mutex.h"
#include "registry.h"

#pragma GCC visibility push(hidden)

#define STRIPE_BITS 6
#define NSTRIPES (1u << STRIPE_BITS)  /* H stripes */
#define TLOCKS 64u                    /* tree locks */
#define NS_KEYED ((unsigned)NS_NONE)  /* namespaces with a key */
#define LEVELS 5
#define SEQ_RETIRE 0xfffffffeu        /* a slot freed at this seq retires */

/* Level L holds sizes below 2^level_shift[L]; the last holds the rest. */
static const unsigned level_shift[LEVELS] = { 16, 24, 32, 40, 64 };

/* A record as stored: reg_rec_t less free_stack, plus links. 88 bytes.
 * What hash and treap walks read (base, size, links, seq, ns, level) is in
 * the first 40 bytes, so a visit touches one cache line more often than
 * not. */
typedef struct slot_s {
	uintptr_t base;
	size_t size;
	uint32_t left;    /* treap links: slot + 1, 0 = none */
	uint32_t right;
	uint32_t seq;     /* odd = live; generation = (seq + 1) / 2 */
	uint32_t hnext;   /* hash chain or free list: slot + 1, 0 = end */
	uint8_t ns;
	uint8_t level;    /* keyed: the treap level it sits in */
	uint8_t kind;
	uint8_t unused;
	uint16_t flags;
	int16_t device;
	uintptr_t ctx;
	uintptr_t aux;
	reg_handle_t parent;
	const char *api;
	stack_id_t alloc_stack;
	owner_id_t owner;
	int32_t refcount;
} slot_t;

_Static_assert(sizeof(slot_t) == 88, "slot_t is 88 bytes");
_Static_assert(KIND_COUNT <= UINT8_MAX + 1, "a kind_t fits slot_t.kind");

typedef struct tomb_s tomb_t; /* registry_tomb.c */

typedef struct stripe_s {
	cw_mutex_t lock;
	uint32_t *buckets;   /* slot + 1 */
	uint32_t nbuckets;   /* power of 2; 0 before the first keyed insert */
	uint32_t nkeyed;     /* live keyed records */
	uint32_t live;       /* live records (atomic for readers) */
	uint32_t hw;         /* slots ever used (atomic for readers) */
	uint32_t committed;  /* slots accessible */
	uint32_t free_head;  /* slot + 1 */
	uint32_t retired;
	/* tombstones */
	tomb_t *tombs;       /* ring of tomb_cap */
	uint32_t *tb_key;    /* tomb_nb heads, index + 1 */
	uint32_t *tb_handle;
	uint32_t tomb_cap;   /* ring size of this mapping (0 = none mapped) */
	uint32_t tomb_nb;
	uint32_t tnext;      /* next ring position to write */
	uint32_t tcount;     /* tombstones held */
} __attribute__((aligned(64))) stripe_t;

typedef struct tlock_s {
	cw_mutex_t lock;
} __attribute__((aligned(64))) tlock_t;

/* -------------------------------------------------------- "registry.c" */

extern stripe_t registry_stripes[NSTRIPES];

/* Ranks REGISTRY_H and REGISTRY_T (lockrank.h), checked by mutex.h. */
static inline void
h_lock(stripe_t *st)
{
	cw_mutex_lock(&st->lock);
}

static inline void
h_unlock(stripe_t *st)
{
	cw_mutex_unlock(&st->lock);
}

/* ---------------------------------------------------- "registry_slot.c" */

extern char *registry_table;     /* the slot reservation */
extern unsigned registry_pshift; /* slots per stripe = 1 << pshift */
extern bool registry_ready;      /* atomic: the table is reserved */

/* Reserves the slot table once.  Returns true on error (no table). */
bool registry_init_slow(void);

/* Returns true on error (no slot table). */
static inline bool
registry_init(void)
{
	if (likely(__atomic_load_n(&registry_ready, __ATOMIC_ACQUIRE)))
		return false;
	return registry_init_slow();
}

static inline slot_t *
registry_slot_at(uint32_t i)
{
	return (slot_t *)(void *)(registry_table + (size_t)i * sizeof(slot_t));
}

/* n is a link value (slot + 1, non-zero). */
#define NODE(n) registry_slot_at((n) - 1)

static inline uint64_t
registry_key_hash(unsigned ns, uintptr_t base)
{
	return hash_mix64((uint64_t)base + ((uint64_t)ns << 58) +
	    HASH_GOLDEN);
}

/* The stripe of a keyed record, from registry_key_hash. */
static inline unsigned
registry_hash_stripe(uint64_t h)
{
	return (unsigned)(h >> (64 - STRIPE_BITS));
}

/* Locks the stripe of the key (ns, base) and returns it, the key's hash
 * in *hh; NULL, nothing locked, for a namespace without keys or a
 * registry that cannot start. */
static inline stripe_t *
registry_key_lock(ns_t ns, uintptr_t base, uint64_t *hh)
{
	if ((unsigned)ns >= NS_KEYED || registry_init())
		return NULL;
	*hh = registry_key_hash(ns, base);
	stripe_t *st = &registry_stripes[registry_hash_stripe(*hh)];
	h_lock(st);
	return st;
}

static inline uint32_t
registry_gen_of_seq(uint32_t seq)
{
	return (uint32_t)(((uint64_t)seq + 1) >> 1);
}

static inline reg_handle_t
registry_make_handle(uint32_t slot, uint32_t seq)
{
	return ((uint64_t)registry_gen_of_seq(seq) << 32) | slot;
}

/* Splits a handle.  Returns true if it cannot name an issued slot. */
static inline bool
registry_handle_split(reg_handle_t h, uint32_t *slot, uint32_t *gen,
    unsigned *s)
{
	*slot = (uint32_t)h;
	*gen = (uint32_t)(h >> 32);
	if (*gen == 0 || !__atomic_load_n(&registry_ready, __ATOMIC_ACQUIRE))
		return true;
	*s = *slot >> registry_pshift;
	if (*s >= NSTRIPES)
		return true;
	uint32_t k = *slot & ((1u << registry_pshift) - 1);
	return k >= __atomic_load_n(&registry_stripes[*s].hw,
	    __ATOMIC_ACQUIRE);
}

static inline void
registry_slot_to_rec(const slot_t *sl, reg_rec_t *out)
{
	out->base = sl->base;
	out->size = sl->size;
	out->ctx = sl->ctx;
	out->aux = sl->aux;
	out->parent = sl->parent;
	out->api = sl->api;
	out->alloc_stack = sl->alloc_stack;
	out->free_stack = 0;
	out->owner = sl->owner;
	out->refcount = sl->refcount;
	out->flags = sl->flags;
	out->kind = sl->kind;
	out->ns = sl->ns;
	out->device = sl->device;
}

/* Zeroed private memory.  NULL when out of memory. */
void *registry_map_zeroed(size_t bytes);
/* Unmaps p (if non-NULL). */
void registry_unmap(void *p, size_t bytes);
/* Lock held.  Returns true on error (stripe full or out of memory). */
bool registry_slot_alloc(stripe_t *st, unsigned s, uint32_t *out);
/* Lock held; the slot is no longer live (seq even). */
void registry_slot_free(stripe_t *st, uint32_t i);
/* Lock held.  Returns the link that points at (ns, base)'s slot, or at
 * the 0 ending its chain; h is registry_key_hash(ns, base). */
uint32_t *registry_hash_link(stripe_t *st, unsigned ns, uintptr_t base,
    uint64_t h);
/* Lock held.  Grows the bucket array to hold n keyed records.  Returns
 * true on error (only when there is no array at all). */
bool registry_hash_reserve(stripe_t *st, uint32_t n);

/* ---------------------------------------------------- "registry_tree.c" */

extern tlock_t registry_tlocks[TLOCKS];

static inline unsigned
registry_level_of(size_t size)
{
	for (unsigned l = 0; l < LEVELS - 1; l++)
		if (size < ((size_t)1 << level_shift[l]))
			return l;
	return LEVELS - 1;
}

/* H lock of slot i held: puts keyed live slot i in (or takes it out of)
 * the treap of its ns, level and region. */
void registry_tree_add(uint32_t i);
void registry_tree_del(uint32_t i);
/* H lock of slot i held: sets keyed live slot i's size, moving it to the
 * treap of its new level when the level changes. */
void registry_tree_resize(uint32_t i, size_t size);
/* No registry lock held.  The slot and seq of the live record of keyed
 * ns containing p.  Returns true if none. */
bool registry_tree_find(ns_t ns, uintptr_t p, uint32_t *slot,
    uint32_t *seq);
/* All locks held: empties every treap and forgets the levels in use. */
void registry_tree_reset(void);
/* The treaps' fixed memory: roots and tree locks. */
size_t registry_tree_bytes(void);
/* All locks held: checks every treap (registry_fail on a broken
 * invariant).  Returns the number of records in them. */
size_t registry_tree_validate(void);

/* ---------------------------------------------------- "registry_tomb.c" */

/* Reads CUWARDEN_TOMBSTONES (at init). */
void registry_tomb_init(void);
/* Lock held.  O(1): the tombstone of live slot sl, whose handle is h,
 * freed at fs. */
void registry_tomb_add(stripe_t *st, const slot_t *sl, reg_handle_t h,
    stack_id_t fs);
/* All locks held: drops every tombstone and re-reads
 * CUWARDEN_TOMBSTONES. */
void registry_tomb_reset(void);
/* Lock held: the bytes of st's ring and its indexes. */
size_t registry_tomb_bytes(const stripe_t *st);
/* All locks held: checks st's ring, if it has one (registry_fail on a
 * broken invariant). */
void registry_tomb_validate(const stripe_t *st);

/* ---------------------------------------------------- "registry_fork.c" */

/* Takes every H lock, then every T lock, in index order; and releases
 * them. */
void registry_lock_all(void);
void registry_unlock_all(void);

/* --------------------------------------------------- "registry_check.c" */

/* Logs a broken invariant and aborts. */
void registry_fail(const char *what) __attribute__((noreturn));

#define VCHECK(cond, what) \
	do { \
		if (unlikely(!(cond))) \
			registry_fail(what); \
	} while (0)

#pragma GCC visibility pop

#endif /* CUWARDEN_REGISTRY_INT_H */
