#include "preamble.h"

/*
 * registry.c -- every live allocation (and view), and tombstones of freed
 * ones.  See registry.h for the contract and doc/registry.md for the
 * design and the measured costs.
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
 *    per-thread rotation.  Tombstone chains are never unlinked: the ring
 *    overwrites its oldest entry and walks stop at a link to a newer one.
 *  - NROOTS intrusive treaps (links in the slots) keyed by (ns, level,
 *    base), guarded by TLOCKS tree locks (a lock per line of roots).  A
 *    record of size in [2^shift[L-1], 2^shift[L]) is at level L and sits
 *    in the treap hashed from (ns, L, base >> shift[L]) (its "region").
 *    Since its size is below 2^shift[L], a record containing p has its
 *    base in the region of p or in the one before, so an interior lookup
 *    searches at most 2 treaps per level in use (9 at most), each holding
 *    about n / NROOTS records: O(log n), and no global lock anywhere.
 *
 * Handles: (generation << 32 | slot).  slot->seq counts issues and
 * removals: odd = live, and the generation of the last issued handle is
 * (seq + 1) / 2.  registry_state() reads only the stripe's high-water mark
 * and the slot's seq (atomics), never a lock.  A slot whose seq would wrap
 * is retired (never reissued), so a handle is never issued twice.
 *
 * Invariants (registry_validate checks them all): a live keyed slot is in
 * exactly one hash chain (of its stripe, its bucket) and in exactly one
 * treap (the root of its ns, level_of(size) and region); treaps are
 * ordered by (ns, level, base) and heap-ordered by prio(slot); no two
 * live records share (ns, base); live + free + retired == high-water mark
 * per stripe; every tombstone in a ring is reached from both its buckets.
 *
 * Locking: H stripe locks (rank 1) protect everything of their stripe,
 * slots included; T locks (rank 2) protect treap links and roots, and the
 * size of the records in their treaps (registry_update changes a size
 * under both).  Order: at most one H lock, then at most one T lock under
 * it; never two of one rank, never any other lock of cuwarden under them,
 * never a driver call.  The base, ns, level and seq of a slot change only
 * while it is in no treap, so a T-lock holder may read them.  Callbacks
 * (registry_update, registry_remove's check) run under the H lock;
 * registry_foreach calls its function with no lock held.  Fork: prefork
 * takes every H then every T lock, in index order.  Lock-free readers:
 * registry_state (hw, seq) and the empty-root and level-in-use peeks of
 * interior lookups (atomics, relaxed).

 * Memory: no malloc anywhere; slots, hash buckets and tombstones are
 * mmap'd.  Per live record: 88 bytes of slot, 4-8 of hash bucket, plus
 * the commit granularity and the tombstone ring shared by all.
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hash.h"
#include "log.h"
#include "options.h"
#include "nowait.h"
#include "registry.h"

/* ---------------------------------------------------------------- config */

#define STRIPE_BITS 6
#define NSTRIPES (1u << STRIPE_BITS)  /* H stripes */
#define TLOCKS 64u                    /* tree locks */
#define NROOTS_BITS 18
#define NROOTS (1u << NROOTS_BITS)    /* treaps */
#define NS_KEYED ((unsigned)NS_NONE)  /* namespaces with a key */
#define LEVELS 5
#define CHUNK_SLOTS 512u              /* 512 * 88 bytes = 11 pages */
#define PSHIFT_MAX 19                 /* 2^19 slots per stripe, 2^25 in all */
#define PSHIFT_MIN 12
#define BUCKETS_MIN 1024u
#define TOMBS_MAX (1ll << 26)
#define SEQ_RETIRE 0xfffffffeu        /* a slot freed at this seq retires */
#define FOREACH_BATCH 32

/* Level L holds sizes below 2^level_shift[L]; the last holds the rest. */
static const unsigned level_shift[LEVELS] = { 16, 24, 32, 40, 64 };

/* ----------------------------------------------------------------- types */

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

typedef struct tomb_s {
	reg_rec_t rec;
	reg_handle_t h;
	uint32_t knext;   /* chain by (ns, base): index + 1 */
	uint32_t hnext;   /* chain by handle: index + 1 */
} tomb_t;

typedef struct stripe_s {
	pthread_mutex_t lock;
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
	pthread_mutex_t lock;
} __attribute__((aligned(64))) tlock_t;

/* ----------------------------------------------------------------- state */

#define LOCK_INIT { .lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP }
static stripe_t stripes[NSTRIPES] = { [0 ... NSTRIPES - 1] = LOCK_INIT };
static tlock_t tlocks[TLOCKS] = { [0 ... TLOCKS - 1] = LOCK_INIT };
static uint32_t roots[NROOTS];                 /* slot + 1 */
static uint8_t level_used[NS_KEYED][LEVELS];   /* sticky, atomic */

static char *table;         /* the slot reservation */
static size_t table_bytes;
static unsigned pshift;     /* slots per stripe = 1 << pshift */
static uint32_t tomb_per;   /* tombstones per stripe, from the option */
static bool ready;          /* atomic */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CW_TLS unsigned unkeyed_rr;

/* ----------------------------------------------------------------- locks */

/* Lock ranks, checked in debug builds: an H lock (1) only with no
 * registry lock held, a T lock (2) only with at most an H lock held. */
enum { RANK_H = 1, RANK_T = 2 };
static CW_TLS unsigned held_rank;

static inline void
h_lock(stripe_t *st)
{
	cw_assert(held_rank == 0);
	pthread_mutex_lock(&st->lock);
	if (config_debug)
		held_rank = RANK_H;
}

static inline void
h_unlock(stripe_t *st)
{
	cw_assert(held_rank == RANK_H);
	if (config_debug)
		held_rank = 0;
	pthread_mutex_unlock(&st->lock);
}

static inline void
t_lock(tlock_t *tl)
{
	cw_assert(held_rank < RANK_T);
	pthread_mutex_lock(&tl->lock);
	if (config_debug)
		held_rank = held_rank == RANK_H ? RANK_H | RANK_T : RANK_T;
}

static inline void
t_unlock(tlock_t *tl)
{
	cw_assert(held_rank & RANK_T);
	if (config_debug)
		held_rank &= ~(unsigned)RANK_T;
	pthread_mutex_unlock(&tl->lock);
}

/* ------------------------------------------------------------- helpers */

static inline uint64_t
key_hash(unsigned ns, uintptr_t base)
{
	return hash_mix64((uint64_t)base + ((uint64_t)ns << 58) +
	    HASH_GOLDEN);
}

static inline unsigned
hash_stripe(uint64_t h)
{
	return (unsigned)(h >> (64 - STRIPE_BITS));
}

static inline slot_t *
slot_at(uint32_t i)
{
	return (slot_t *)(void *)(table + (size_t)i * sizeof(slot_t));
}

/* n is a link value (slot + 1, non-zero). */
#define NODE(n) slot_at((n) - 1)

static inline uint32_t
prio(uint32_t n)
{
	return (uint32_t)hash_mix64(n);
}

static inline unsigned
level_of(size_t size)
{
	for (unsigned l = 0; l < LEVELS - 1; l++)
		if (size < ((size_t)1 << level_shift[l]))
			return l;
	return LEVELS - 1;
}

static inline uintptr_t
region_of(uintptr_t p, unsigned level)
{
	return level_shift[level] >= 64 ? 0 : p >> level_shift[level];
}

static inline unsigned
root_of(unsigned ns, unsigned level, uintptr_t region)
{
	uint64_t h = hash_mix64((uint64_t)region +
	    ((uint64_t)(ns * LEVELS + level + 1) << 56));
	return (unsigned)(h >> (64 - NROOTS_BITS));
}

/* The 16 roots of one cache line share a lock, so that no two threads
 * write one line of roots at once. */
static inline tlock_t *
tlock_of(unsigned root)
{
	return &tlocks[(root / 16) % TLOCKS];
}

/* The treap key: (ns, level, base), ns and level packed as nl. */
static inline unsigned
nl_of(const slot_t *sl)
{
	return (unsigned)sl->ns * 8 + sl->level;
}

/* Whether sl's key is below (nl, base). */
static inline bool
key_lt(const slot_t *sl, unsigned nl, uintptr_t base)
{
	unsigned a = nl_of(sl);
	return a < nl || (a == nl && sl->base < base);
}

static inline uint32_t
gen_of_seq(uint32_t seq)
{
	return (uint32_t)(((uint64_t)seq + 1) >> 1);
}

static inline reg_handle_t
make_handle(uint32_t slot, uint32_t seq)
{
	return ((uint64_t)gen_of_seq(seq) << 32) | slot;
}

static void *
map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void
unmap(void *p, size_t bytes)
{
	if (p != NULL)
		munmap(p, bytes);
}

static void
slot_to_rec(const slot_t *sl, reg_rec_t *out)
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

/* Everything but base, ns, kind and size (which tree-lock holders may be
 * reading: see registry_update). */
static void
rec_to_slot(const reg_rec_t *rec, slot_t *sl)
{
	sl->ctx = rec->ctx;
	sl->aux = rec->aux;
	sl->parent = rec->parent;
	sl->api = rec->api;
	sl->alloc_stack = rec->alloc_stack;
	sl->owner = rec->owner;
	sl->refcount = rec->refcount;
	sl->flags = rec->flags;
	sl->device = rec->device;
}

static uint32_t
tomb_option(void)
{
	long long n = options_get(OPT_TOMBSTONES);
	if (n < 0)
		n = 0;
	if (n > TOMBS_MAX)
		n = TOMBS_MAX;
	return (uint32_t)((n + NSTRIPES - 1) / NSTRIPES);
}

/* ------------------------------------------------------------------ init */

static void
registry_init_once(void)
{
	for (unsigned sh = PSHIFT_MAX; sh >= PSHIFT_MIN; sh--) {
		size_t bytes = ((size_t)NSTRIPES << sh) * sizeof(slot_t);
		void *p = mmap(NULL, bytes, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED) {
			table = p;
			table_bytes = bytes;
			pshift = sh;
			break;
		}
	}
	if (table == NULL) {
		log_error("registry: cannot reserve the slot table");
		return;
	}
	tomb_per = tomb_option();
	__atomic_store_n(&ready, true, __ATOMIC_RELEASE);
}

/* Returns true on error (no slot table). */
static inline bool
registry_init(void)
{
	if (likely(__atomic_load_n(&ready, __ATOMIC_ACQUIRE)))
		return false;
	pthread_once(&init_once, registry_init_once);
	return !__atomic_load_n(&ready, __ATOMIC_ACQUIRE);
}

/* ----------------------------------------------------------------- slots */

/* Lock held.  Returns true on error (stripe full or out of memory). */
static bool
slot_alloc(stripe_t *st, unsigned s, uint32_t *out)
{
	if (st->free_head != 0) {
		uint32_t i = st->free_head - 1;
		st->free_head = slot_at(i)->hnext;
		slot_at(i)->hnext = 0;
		*out = i;
		return false;
	}
	uint32_t k = st->hw;
	if (k >= (1u << pshift))
		return true;
	if (k >= st->committed) {
		uint32_t first = (s << pshift) + st->committed;
		if (mprotect(slot_at(first), CHUNK_SLOTS * sizeof(slot_t),
		    PROT_READ | PROT_WRITE) != 0)
			return true;
		st->committed += CHUNK_SLOTS;
	}
	__atomic_store_n(&st->hw, k + 1, __ATOMIC_RELEASE);
	*out = (s << pshift) + k;
	return false;
}

/* Lock held; the slot is no longer live (seq even). */
static void
slot_free(stripe_t *st, uint32_t i)
{
	slot_t *sl = slot_at(i);
	if (sl->seq >= SEQ_RETIRE) {
		st->retired++;
		return;
	}
	sl->hnext = st->free_head;
	st->free_head = i + 1;
}

/* ------------------------------------------------------------------ hash */

/* Lock held.  Returns the link that points at (ns, base)'s slot, or at
 * the 0 ending its chain. */
static uint32_t *
hash_link(stripe_t *st, unsigned ns, uintptr_t base, uint64_t h)
{
	uint32_t *link = &st->buckets[h & (st->nbuckets - 1)];
	while (*link != 0) {
		slot_t *sl = NODE(*link);
		if (sl->base == base && sl->ns == ns)
			break;
		link = &sl->hnext;
	}
	return link;
}

/* Lock held.  Grows the bucket array to hold n keyed records.  Returns
 * true on error (only when there is no array at all). */
static bool
hash_reserve(stripe_t *st, uint32_t n)
{
	if (st->nbuckets != 0 && n <= st->nbuckets)
		return false;
	uint32_t nb = st->nbuckets == 0 ? BUCKETS_MIN : st->nbuckets * 2;
	uint32_t *nbk = map_zeroed((size_t)nb * sizeof(uint32_t));
	if (nbk == NULL)
		return st->nbuckets == 0; /* keep the old one, longer chains */
	for (uint32_t b = 0; b < st->nbuckets; b++) {
		uint32_t n1 = st->buckets[b];
		while (n1 != 0) {
			slot_t *sl = NODE(n1);
			uint32_t next = sl->hnext;
			uint64_t h = key_hash(sl->ns, sl->base);
			sl->hnext = nbk[h & (nb - 1)];
			nbk[h & (nb - 1)] = n1;
			n1 = next;
		}
	}
	unmap(st->buckets, (size_t)st->nbuckets * sizeof(uint32_t));
	st->buckets = nbk;
	st->nbuckets = nb;
	return false;
}

/* ----------------------------------------------------------------- treaps */

static void
link_set(uint32_t *link, uint32_t v)
{
	/* Roots are peeked without the lock by find_containing. */
	__atomic_store_n(link, v, __ATOMIC_RELAXED);
}

static void
treap_insert(uint32_t *root, uint32_t x)
{
	slot_t *sx = NODE(x);
	unsigned nl = nl_of(sx);
	uint32_t px = prio(x);
	uint32_t *link = root;
	while (*link != 0 && prio(*link) >= px) {
		slot_t *sl = NODE(*link);
		link = key_lt(sl, nl, sx->base) ? &sl->right : &sl->left;
	}
	/* Split the subtree at *link around x's key, under x. */
	uint32_t t = *link;
	uint32_t *l = &sx->left, *r = &sx->right;
	while (t != 0) {
		slot_t *st = NODE(t);
		if (key_lt(st, nl, sx->base)) {
			*l = t;
			l = &st->right;
			t = st->right;
		} else {
			*r = t;
			r = &st->left;
			t = st->left;
		}
	}
	*l = 0;
	*r = 0;
	link_set(link, x);
}

static void registry_fail(const char *what) __attribute__((noreturn));

static void
registry_fail(const char *what)
{
	log_error("registry: broken invariant: %s", what);
	abort();
}

static void
treap_remove(uint32_t *root, uint32_t x)
{
	slot_t *sx = NODE(x);
	unsigned nl = nl_of(sx);
	uint32_t *link = root;
	while (*link != x) {
		if (*link == 0)
			registry_fail("record missing from its treap");
		slot_t *sl = NODE(*link);
		link = key_lt(sl, nl, sx->base) ? &sl->right : &sl->left;
	}
	uint32_t a = sx->left, b = sx->right;
	while (a != 0 && b != 0) {
		if (prio(a) >= prio(b)) {
			link_set(link, a);
			link = &NODE(a)->right;
			a = *link;
		} else {
			link_set(link, b);
			link = &NODE(b)->left;
			b = *link;
		}
	}
	link_set(link, a != 0 ? a : b);
	sx->left = 0;
	sx->right = 0;
}

/* The node of key (nl, b) with the greatest b <= p, or 0. */
static uint32_t
treap_pred(uint32_t n, unsigned nl, uintptr_t p)
{
	uint32_t best = 0;
	while (n != 0) {
		slot_t *sl = NODE(n);
		if (key_lt(sl, nl, p) || (nl_of(sl) == nl && sl->base == p)) {
			best = n;
			n = sl->right;
		} else {
			n = sl->left;
		}
	}
	return best != 0 && nl_of(NODE(best)) == nl ? best : 0;
}

static unsigned
root_of_slot(const slot_t *sl)
{
	return root_of(sl->ns, sl->level, region_of(sl->base, sl->level));
}

/* H lock held. */
static void
tree_add(uint32_t i)
{
	slot_t *sl = slot_at(i);
	unsigned root = root_of_slot(sl);
	tlock_t *tl = tlock_of(root);
	if (!__atomic_load_n(&level_used[sl->ns][sl->level], __ATOMIC_RELAXED))
		__atomic_store_n(&level_used[sl->ns][sl->level], 1,
		    __ATOMIC_RELAXED);
	t_lock(tl);
	treap_insert(&roots[root], i + 1);
	t_unlock(tl);
}

/* H lock held. */
static void
tree_del(uint32_t i)
{
	unsigned root = root_of_slot(slot_at(i));
	tlock_t *tl = tlock_of(root);
	t_lock(tl);
	treap_remove(&roots[root], i + 1);
	t_unlock(tl);
}

/* ------------------------------------------------------------ tombstones */

/* Lock held.  Maps this stripe's ring if needed.  Returns true if there
 * is none. */
static bool
tomb_ready(stripe_t *st)
{
	if (st->tomb_cap != 0)
		return false;
	if (tomb_per == 0)
		return true;
	uint32_t nb = 1;
	while (nb < tomb_per)
		nb <<= 1;
	tomb_t *t = map_zeroed((size_t)tomb_per * sizeof(tomb_t));
	uint32_t *bk = map_zeroed((size_t)nb * 2 * sizeof(uint32_t));
	if (t == NULL || bk == NULL) {
		unmap(t, (size_t)tomb_per * sizeof(tomb_t));
		unmap(bk, (size_t)nb * 2 * sizeof(uint32_t));
		return true;
	}
	st->tombs = t;
	st->tb_key = bk;
	st->tb_handle = bk + nb;
	st->tomb_nb = nb;
	st->tomb_cap = tomb_per;
	st->tnext = 0;
	st->tcount = 0;
	return false;
}

static void
tomb_unmap(stripe_t *st)
{
	if (st->tomb_cap == 0)
		return;
	unmap(st->tombs, (size_t)st->tomb_cap * sizeof(tomb_t));
	unmap(st->tb_key, (size_t)st->tomb_nb * 2 * sizeof(uint32_t));
	st->tombs = NULL;
	st->tb_key = st->tb_handle = NULL;
	st->tomb_cap = st->tomb_nb = st->tnext = st->tcount = 0;
}

static inline uint32_t
tomb_hbucket(const stripe_t *st, reg_handle_t h)
{
	return (uint32_t)hash_mix64(h) & (st->tomb_nb - 1);
}

static inline uint32_t
tomb_kbucket(const stripe_t *st, unsigned ns, uintptr_t base)
{
	return (uint32_t)key_hash(ns, base) & (st->tomb_nb - 1);
}

/* Chains are never unlinked: the ring overwrites its oldest entry, and a
 * walk follows a link only to an older entry (an entry overwritten since
 * it was linked is now newer, which ends the chain).  A head whose entry
 * now belongs to another bucket ends it too: everything older than that
 * entry was overwritten first. */
static inline uint32_t
tomb_age(const stripe_t *st, uint32_t idx)
{
	uint32_t newest = st->tnext == 0 ? st->tomb_cap - 1 : st->tnext - 1;
	return newest >= idx ? newest - idx : newest + st->tomb_cap - idx;
}

static uint32_t
tomb_first(const stripe_t *st, uint32_t bucket, bool bykey)
{
	uint32_t n = bykey ? st->tb_key[bucket] : st->tb_handle[bucket];
	if (n == 0 || n - 1 >= st->tcount)
		return 0;
	const tomb_t *t = &st->tombs[n - 1];
	if (bykey ? t->rec.ns == NS_NONE ||
	    tomb_kbucket(st, t->rec.ns, t->rec.base) != bucket :
	    tomb_hbucket(st, t->h) != bucket)
		return 0;
	return n;
}

static uint32_t
tomb_next(const stripe_t *st, uint32_t cur, bool bykey)
{
	const tomb_t *t = &st->tombs[cur - 1];
	uint32_t n = bykey ? t->knext : t->hnext;
	if (n == 0 || n - 1 >= st->tcount ||
	    tomb_age(st, n - 1) <= tomb_age(st, cur - 1))
		return 0;
	return n;
}

/* Lock held.  O(1): writes the next ring entry and two bucket heads. */
static void
tomb_add(stripe_t *st, const slot_t *sl, reg_handle_t h, stack_id_t fs)
{
	if (tomb_ready(st))
		return;
	uint32_t idx = st->tnext;
	tomb_t *t = &st->tombs[idx];
	if (st->tcount < st->tomb_cap)
		st->tcount++;
	slot_to_rec(sl, &t->rec);
	t->rec.free_stack = fs;
	t->h = h;
	t->knext = 0;
	if (sl->ns != NS_NONE) {
		uint32_t *kb = &st->tb_key[tomb_kbucket(st, sl->ns, sl->base)];
		t->knext = *kb;
		*kb = idx + 1;
	}
	uint32_t *hb = &st->tb_handle[tomb_hbucket(st, h)];
	t->hnext = *hb;
	*hb = idx + 1;
	st->tnext = idx + 1 == st->tomb_cap ? 0 : idx + 1;
}

/* ---------------------------------------------------------------- access */

/* Splits a handle.  Returns true if it cannot name an issued slot. */
static inline bool
handle_split(reg_handle_t h, uint32_t *slot, uint32_t *gen, unsigned *s)
{
	*slot = (uint32_t)h;
	*gen = (uint32_t)(h >> 32);
	if (*gen == 0 || !__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return true;
	*s = *slot >> pshift;
	if (*s >= NSTRIPES)
		return true;
	uint32_t k = *slot & ((1u << pshift) - 1);
	return k >= __atomic_load_n(&stripes[*s].hw, __ATOMIC_ACQUIRE);
}

static inline reg_state_t
state_of(uint32_t gen, uint32_t seq)
{
	uint32_t cur = gen_of_seq(seq);
	if (gen > cur)
		return REG_INVALID;
	if (gen < cur || (seq & 1) == 0)
		return REG_FREED;
	return REG_LIVE;
}

reg_state_t
registry_state(reg_handle_t h)
{
	uint32_t slot, gen;
	unsigned s;
	if (handle_split(h, &slot, &gen, &s))
		return REG_INVALID;
	return state_of(gen,
	    __atomic_load_n(&slot_at(slot)->seq, __ATOMIC_ACQUIRE));
}

/* Locks h's stripe and returns its live slot, or returns NULL with no
 * lock held and *err = -REG_FREED / -REG_INVALID. */
static slot_t *
live_lock(reg_handle_t h, stripe_t **stp, uint32_t *slotp, int *err)
{
	uint32_t slot, gen;
	unsigned s;
	if (handle_split(h, &slot, &gen, &s)) {
		*err = -(int)REG_INVALID;
		return NULL;
	}
	stripe_t *st = &stripes[s];
	h_lock(st);
	slot_t *sl = slot_at(slot);
	reg_state_t state = state_of(gen, sl->seq);
	if (state != REG_LIVE) {
		h_unlock(st);
		*err = -(int)state;
		return NULL;
	}
	*stp = st;
	*slotp = slot;
	return sl;
}

/* Lock held: takes a live slot out of every index, leaves a tombstone,
 * and frees it. */
static void
remove_locked(stripe_t *st, uint32_t i, stack_id_t free_stack,
    uint32_t *hlink)
{
	slot_t *sl = slot_at(i);
	reg_handle_t h = make_handle(i, sl->seq);
	if (sl->ns != NS_NONE) {
		if (hlink == NULL)
			hlink = hash_link(st, sl->ns, sl->base,
			    key_hash(sl->ns, sl->base));
		if (*hlink != i + 1)
			registry_fail("record missing from its hash chain");
		*hlink = sl->hnext;
		sl->hnext = 0;
		tree_del(i);
		st->nkeyed--;
	}
	tomb_add(st, sl, h, free_stack);
	__atomic_store_n(&sl->seq, sl->seq + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&st->live, st->live - 1, __ATOMIC_RELAXED);
	slot_free(st, i);
}

bool
registry_insert(const reg_rec_t *rec, reg_handle_t *handle,
    reg_rec_t *replaced, bool *had_replaced)
{
	if (had_replaced != NULL)
		*had_replaced = false;
	if (registry_init() || rec->ns >= NS_COUNT)
		return true;
	bool keyed = rec->ns != NS_NONE;
	uint64_t h = 0;
	unsigned s;
	if (keyed) {
		h = key_hash(rec->ns, rec->base);
		s = hash_stripe(h);
	} else {
		if (unkeyed_rr == 0)
			unkeyed_rr = (unsigned)hash_mix64(
			    (uintptr_t)&unkeyed_rr);
		s = unkeyed_rr++ % NSTRIPES;
	}
	stripe_t *st = &stripes[s];
	h_lock(st);
	uint32_t i;
	if ((keyed && hash_reserve(st, st->nkeyed + 1)) ||
	    slot_alloc(st, s, &i)) {
		h_unlock(st);
		return true;
	}
	uint32_t *link = NULL;
	if (keyed) {
		link = hash_link(st, rec->ns, rec->base, h);
		if (*link != 0) {
			uint32_t old = *link - 1;
			if (replaced != NULL)
				slot_to_rec(slot_at(old), replaced);
			if (had_replaced != NULL)
				*had_replaced = true;
			remove_locked(st, old, 0, link);
			link = hash_link(st, rec->ns, rec->base, h);
		}
	}
	slot_t *sl = slot_at(i);
	sl->base = rec->base;
	sl->ns = rec->ns;
	sl->kind = rec->kind;
	sl->size = rec->size;
	rec_to_slot(rec, sl);
	sl->left = sl->right = 0;
	sl->level = (uint8_t)level_of(rec->size);
	uint32_t seq = sl->seq + 1;
	__atomic_store_n(&sl->seq, seq, __ATOMIC_RELEASE);
	if (keyed) {
		sl->hnext = 0;
		*link = i + 1;
		st->nkeyed++;
		tree_add(i);
	}
	__atomic_store_n(&st->live, st->live + 1, __ATOMIC_RELAXED);
	h_unlock(st);
	*handle = make_handle(i, seq);
	return false;
}

bool
registry_get(reg_handle_t h, reg_rec_t *out)
{
	stripe_t *st;
	uint32_t i;
	int err;
	slot_t *sl = live_lock(h, &st, &i, &err);
	if (sl == NULL)
		return true;
	slot_to_rec(sl, out);
	h_unlock(st);
	return false;
}

bool
registry_find(ns_t ns, uintptr_t base, reg_handle_t *h, reg_rec_t *out)
{
	if ((unsigned)ns >= NS_KEYED || registry_init())
		return true;
	uint64_t hh = key_hash(ns, base);
	stripe_t *st = &stripes[hash_stripe(hh)];
	bool miss = true;
	h_lock(st);
	if (st->nbuckets != 0) {
		uint32_t n = *hash_link(st, ns, base, hh);
		if (n != 0) {
			if (h != NULL)
				*h = make_handle(n - 1, NODE(n)->seq);
			if (out != NULL)
				slot_to_rec(NODE(n), out);
			miss = false;
		}
	}
	h_unlock(st);
	return miss;
}

/* Tree lock of root held by nobody.  Looks for a record of (ns, level)
 * in that treap containing p.  Returns 1 and fills slot/seq if found,
 * 0 if not, and -1 if the treap's predecessor of p lies in the region
 * (then no record of an earlier region can contain p without overlapping
 * it). */
static int
search_root(unsigned root, unsigned nl, unsigned level, uintptr_t region,
    uintptr_t p, uint32_t *slot, uint32_t *seq)
{
	if (__atomic_load_n(&roots[root], __ATOMIC_RELAXED) == 0)
		return 0;
	tlock_t *tl = tlock_of(root);
	int r = 0;
	t_lock(tl);
	uint32_t n = treap_pred(roots[root], nl, p);
	if (n != 0) {
		slot_t *sl = NODE(n);
		if (p - sl->base < sl->size) {
			*slot = n - 1;
			*seq = sl->seq;
			r = 1;
		} else if (region_of(sl->base, level) == region) {
			r = -1;
		}
	}
	t_unlock(tl);
	return r;
}

/* Returns true if no record of ns contains p. */
static bool
containing(ns_t ns, uintptr_t p, uint32_t *slot, uint32_t *seq)
{
	for (unsigned l = 0; l < LEVELS; l++) {
		if (!__atomic_load_n(&level_used[ns][l], __ATOMIC_RELAXED))
			continue;
		uintptr_t r = region_of(p, l);
		unsigned nl = ns * 8 + l;
		int f = search_root(root_of(ns, l, r), nl, l, r, p, slot, seq);
		if (f == 1)
			return false;
		if (f == 0 && r > 0 && level_shift[l] < 64 &&
		    search_root(root_of(ns, l, r - 1), nl, l, r - 1, p, slot,
		    seq) == 1)
			return false;
	}
	return true;
}

bool
registry_find_containing(ns_t ns, uintptr_t p, reg_handle_t *h,
    reg_rec_t *out)
{
	if ((unsigned)ns >= NS_KEYED || registry_init())
		return true;
	/* Live ranges of one namespace do not overlap (the driver never
	 * hands out overlapping ones), so the first container found is the
	 * one.  The treap search gives its slot and seq; the copy is made
	 * under the record's own lock, and retried if the record went away
	 * in between. */
	for (int attempt = 0; attempt < 4; attempt++) {
		uint32_t slot, seq;
		if (containing(ns, p, &slot, &seq))
			return true;
		if (out == NULL) {
			if (h != NULL)
				*h = make_handle(slot, seq);
			return false;
		}
		stripe_t *st = &stripes[slot >> pshift];
		h_lock(st);
		slot_t *sl = slot_at(slot);
		bool hit = sl->seq == seq && p - sl->base < sl->size;
		if (hit) {
			if (h != NULL)
				*h = make_handle(slot, seq);
			slot_to_rec(sl, out);
		}
		h_unlock(st);
		if (hit)
			return false;
	}
	return true;
}

int
registry_update(reg_handle_t h, reg_update_fn fn, void *arg)
{
	stripe_t *st;
	uint32_t i;
	int err;
	slot_t *sl = live_lock(h, &st, &i, &err);
	if (sl == NULL)
		return err;
	reg_rec_t tmp;
	slot_to_rec(sl, &tmp);
	int r = fn(&tmp, arg);
	size_t size = tmp.size;
	rec_to_slot(&tmp, sl);
	if (size != sl->size) {
		/* Tree-lock holders read the size of records in their
		 * treaps: change it under that lock, or out of the treap. */
		unsigned level = level_of(size);
		if (sl->ns == NS_NONE) {
			sl->size = size;
		} else if (level != sl->level) {
			tree_del(i);
			sl->size = size;
			sl->level = (uint8_t)level;
			tree_add(i);
		} else {
			tlock_t *tl = tlock_of(root_of_slot(sl));
			t_lock(tl);
			sl->size = size;
			t_unlock(tl);
		}
	}
	h_unlock(st);
	return r;
}

int
registry_remove(reg_handle_t h, reg_update_fn check, void *arg,
    stack_id_t free_stack, reg_rec_t *out)
{
	stripe_t *st;
	uint32_t i;
	int err;
	slot_t *sl = live_lock(h, &st, &i, &err);
	if (sl == NULL)
		return err;
	if (check != NULL) {
		reg_rec_t tmp;
		slot_to_rec(sl, &tmp);
		int r = check(&tmp, arg);
		if (r != 0) {
			h_unlock(st);
			return r;
		}
	}
	if (out != NULL) {
		slot_to_rec(sl, out);
		out->free_stack = free_stack;
	}
	remove_locked(st, i, free_stack, NULL);
	h_unlock(st);
	return 0;
}

bool
registry_tomb_find(ns_t ns, uintptr_t base, reg_rec_t *out)
{
	if ((unsigned)ns >= NS_KEYED || registry_init())
		return true;
	uint64_t hh = key_hash(ns, base);
	stripe_t *st = &stripes[hash_stripe(hh)];
	bool miss = true;
	h_lock(st);
	if (st->tomb_cap != 0) {
		uint32_t n = tomb_first(st, tomb_kbucket(st, ns, base), true);
		for (; n != 0; n = tomb_next(st, n, true)) {
			tomb_t *t = &st->tombs[n - 1];
			if (t->rec.base == base && t->rec.ns == ns) {
				if (out != NULL)
					*out = t->rec;
				miss = false;
				break;
			}
		}
	}
	h_unlock(st);
	return miss;
}

bool
registry_tomb_get(reg_handle_t h, reg_rec_t *out)
{
	uint32_t slot, gen;
	unsigned s;
	if (handle_split(h, &slot, &gen, &s))
		return true;
	stripe_t *st = &stripes[s];
	bool miss = true;
	h_lock(st);
	if (st->tomb_cap != 0) {
		uint32_t n = tomb_first(st, tomb_hbucket(st, h), false);
		for (; n != 0; n = tomb_next(st, n, false)) {
			tomb_t *t = &st->tombs[n - 1];
			if (t->h == h) {
				if (out != NULL)
					*out = t->rec;
				miss = false;
				break;
			}
		}
	}
	h_unlock(st);
	return miss;
}

int
registry_foreach(reg_walk_fn fn, void *arg)
{
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return 0;
	reg_rec_t recs[FOREACH_BATCH];
	reg_handle_t hs[FOREACH_BATCH];
	for (unsigned s = 0; s < NSTRIPES; s++) {
		stripe_t *st = &stripes[s];
		uint32_t k = 0;
		for (;;) {
			unsigned n = 0;
			/* The exit report on a thread that may hold this
			 * stripe (nowait.h): the stripe is left out. */
			cw_assert(held_rank == 0);
			if (nowait_lock(&st->lock))
				break;
			if (config_debug)
				held_rank = RANK_H;
			uint32_t hw = st->hw;
			for (; k < hw && n < FOREACH_BATCH; k++) {
				uint32_t i = (s << pshift) + k;
				slot_t *sl = slot_at(i);
				if ((sl->seq & 1) == 0)
					continue;
				slot_to_rec(sl, &recs[n]);
				hs[n] = make_handle(i, sl->seq);
				n++;
			}
			h_unlock(st);
			for (unsigned j = 0; j < n; j++) {
				int r = fn(hs[j], &recs[j], arg);
				if (r != 0)
					return r;
			}
			if (k >= hw)
				break;
		}
	}
	return 0;
}

size_t
registry_live_count(void)
{
	size_t n = 0;
	for (unsigned s = 0; s < NSTRIPES; s++)
		n += __atomic_load_n(&stripes[s].live, __ATOMIC_RELAXED);
	return n;
}

size_t
registry_bytes(void)
{
	size_t n = sizeof(stripes) + sizeof(tlocks) + sizeof(roots);
	for (unsigned s = 0; s < NSTRIPES; s++) {
		stripe_t *st = &stripes[s];
		h_lock(st);
		n += (size_t)st->committed * sizeof(slot_t);
		n += (size_t)st->nbuckets * sizeof(uint32_t);
		n += (size_t)st->tomb_cap * sizeof(tomb_t);
		n += (size_t)st->tomb_nb * 2 * sizeof(uint32_t);
		h_unlock(st);
	}
	return n;
}

/* ------------------------------------------------------------ fork, reset */

static void
lock_all(void)
{
	for (unsigned s = 0; s < NSTRIPES; s++)
		pthread_mutex_lock(&stripes[s].lock);
	for (unsigned t = 0; t < TLOCKS; t++)
		pthread_mutex_lock(&tlocks[t].lock);
}

static void
unlock_all(void)
{
	for (unsigned t = TLOCKS; t-- > 0;)
		pthread_mutex_unlock(&tlocks[t].lock);
	for (unsigned s = NSTRIPES; s-- > 0;)
		pthread_mutex_unlock(&stripes[s].lock);
}

void
registry_prefork(void)
{
	lock_all();
}

void
registry_postfork_parent(void)
{
	unlock_all();
}

void
registry_postfork_child(void)
{
	unlock_all();
}

void
registry_reset(void)
{
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return;
	lock_all();
	uint32_t per = tomb_option();
	for (unsigned s = 0; s < NSTRIPES; s++) {
		stripe_t *st = &stripes[s];
		/* Every live slot becomes freed (its handles read FREED,
		 * never LIVE again); the free list is rebuilt. */
		st->free_head = 0;
		st->retired = 0;
		for (uint32_t k = st->hw; k-- > 0;) {
			uint32_t i = (s << pshift) + k;
			slot_t *sl = slot_at(i);
			if (sl->seq & 1)
				__atomic_store_n(&sl->seq, sl->seq + 1,
				    __ATOMIC_RELEASE);
			sl->left = sl->right = sl->hnext = 0;
			slot_free(st, i);
		}
		if (st->nbuckets != 0)
			memset(st->buckets, 0,
			    (size_t)st->nbuckets * sizeof(uint32_t));
		st->nkeyed = 0;
		__atomic_store_n(&st->live, 0, __ATOMIC_RELAXED);
		if (st->tomb_cap != per) {
			tomb_unmap(st);
		} else if (st->tomb_cap != 0) {
			memset(st->tb_key, 0,
			    (size_t)st->tomb_nb * 2 * sizeof(uint32_t));
			st->tnext = st->tcount = 0;
		}
	}
	tomb_per = per;
	memset(roots, 0, sizeof(roots));
	memset(level_used, 0, sizeof(level_used));
	unlock_all();
}

/* -------------------------------------------------------------- validate */

#define VCHECK(cond, what) \
	do { \
		if (unlikely(!(cond))) \
			registry_fail(what); \
	} while (0)

/* All locks held.  Returns the number of nodes. */
static size_t
validate_treap(unsigned root_index, uint32_t root)
{
	uint32_t stack[256];
	unsigned depth = 0;
	size_t count = 0;
	uint32_t n = root;
	bool have_prev = false;
	unsigned prev_nl = 0;
	uintptr_t prev = 0;
	/* In-order walk with an explicit stack. */
	while (n != 0 || depth > 0) {
		while (n != 0) {
			VCHECK(depth < CW_ARRAY_SIZE(stack), "treap too deep");
			uint32_t i = n - 1;
			VCHECK((i >> pshift) < NSTRIPES &&
			    (i & ((1u << pshift) - 1)) <
			    stripes[i >> pshift].hw, "treap link out of range");
			stack[depth++] = n;
			n = NODE(n)->left;
		}
		n = stack[--depth];
		slot_t *sl = NODE(n);
		VCHECK(sl->seq & 1, "freed record in a treap");
		VCHECK(sl->ns < NS_KEYED, "unkeyed record in a treap");
		VCHECK(level_of(sl->size) == sl->level,
		    "record at the wrong level");
		VCHECK(__atomic_load_n(&level_used[sl->ns][sl->level],
		    __ATOMIC_RELAXED), "level in use not marked");
		VCHECK(root_of_slot(sl) == root_index,
		    "record in the wrong treap");
		VCHECK(!have_prev || prev_nl < nl_of(sl) ||
		    (prev_nl == nl_of(sl) && prev < sl->base),
		    "treap out of order");
		if (sl->left != 0)
			VCHECK(prio(sl->left) <= prio(n), "treap heap order");
		if (sl->right != 0)
			VCHECK(prio(sl->right) <= prio(n), "treap heap order");
		have_prev = true;
		prev_nl = nl_of(sl);
		prev = sl->base;
		count++;
		n = sl->right;
	}
	return count;
}

/* All locks held: every tombstone is reached from its buckets. */
static void
validate_tombs(const stripe_t *st)
{
	VCHECK(st->tcount <= st->tomb_cap && st->tnext < st->tomb_cap &&
	    (st->tcount == st->tomb_cap || st->tnext == st->tcount),
	    "tombstone ring");
	for (uint32_t j = 0; j < st->tcount; j++) {
		const tomb_t *t = &st->tombs[j];
		uint32_t n, steps = 0;
		if (t->rec.ns != NS_NONE) {
			n = tomb_first(st, tomb_kbucket(st, t->rec.ns,
			    t->rec.base), true);
			for (; n != 0 && n != j + 1; n = tomb_next(st, n, true))
				VCHECK(++steps <= st->tcount,
				    "tombstone chain");
			VCHECK(n == j + 1, "tombstone lost from the key index");
		}
		n = tomb_first(st, tomb_hbucket(st, t->h), false);
		for (; n != 0 && n != j + 1; n = tomb_next(st, n, false))
			VCHECK(++steps <= 2 * st->tcount, "tombstone chain");
		VCHECK(n == j + 1, "tombstone lost from the handle index");
	}
}

void
registry_validate(void)
{
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return;
	lock_all();
	size_t keyed_total = 0;
	for (unsigned s = 0; s < NSTRIPES; s++) {
		stripe_t *st = &stripes[s];
		uint32_t live = 0, keyed = 0, freed = 0, retired = 0;
		VCHECK(st->hw <= st->committed &&
		    st->committed <= (1u << pshift), "high-water mark");
		for (uint32_t k = 0; k < st->hw; k++) {
			slot_t *sl = slot_at((s << pshift) + k);
			if (sl->seq & 1) {
				live++;
				VCHECK(sl->ns < NS_COUNT, "bad ns");
				if (sl->ns != NS_NONE) {
					keyed++;
					VCHECK(hash_stripe(key_hash(sl->ns,
					    sl->base)) == s,
					    "record in the wrong stripe");
				}
			} else if (sl->seq >= SEQ_RETIRE) {
				retired++;
			}
		}
		VCHECK(live == st->live, "live count");
		VCHECK(keyed == st->nkeyed, "keyed count");
		VCHECK(retired == st->retired, "retired count");
		for (uint32_t n = st->free_head; n != 0; n = NODE(n)->hnext) {
			uint32_t i = n - 1;
			VCHECK((i >> pshift) == s &&
			    (i & ((1u << pshift) - 1)) < st->hw,
			    "free list leaves its stripe");
			VCHECK((NODE(n)->seq & 1) == 0,
			    "live slot on free list");
			VCHECK(++freed <= st->hw, "free list loops");
		}
		VCHECK(live + freed + retired == st->hw,
		    "slots lost (live + free + retired != issued)");
		uint32_t chained = 0;
		for (uint32_t b = 0; b < st->nbuckets; b++) {
			for (uint32_t n = st->buckets[b]; n != 0;
			    n = NODE(n)->hnext) {
				slot_t *sl = NODE(n);
				VCHECK(((n - 1) >> pshift) == s,
				    "hash chain leaves its stripe");
				VCHECK(sl->seq & 1, "freed record hashed");
				VCHECK(sl->ns != NS_NONE,
				    "unkeyed record hashed");
				VCHECK((key_hash(sl->ns, sl->base) &
				    (st->nbuckets - 1)) == b, "wrong bucket");
				VCHECK(++chained <= keyed, "hash chain loops");
				for (uint32_t m = sl->hnext; m != 0;
				    m = NODE(m)->hnext)
					VCHECK(NODE(m)->base != sl->base ||
					    NODE(m)->ns != sl->ns,
					    "duplicate (ns, base)");
			}
		}
		VCHECK(chained == keyed, "keyed record missing from the hash");
		keyed_total += keyed;
		if (st->tomb_cap != 0)
			validate_tombs(st);
	}
	size_t in_trees = 0;
	for (unsigned r = 0; r < NROOTS; r++)
		in_trees += validate_treap(r, roots[r]);
	VCHECK(in_trees == keyed_total, "keyed records and treap nodes differ");
	unlock_all();
}
