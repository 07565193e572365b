/*
 * pool_int.h -- the pools' internals, shared by the files of the pools
 * (lib/pool*.c) and nobody else; the contract is pool.h.  Include it
 * after preamble.h.
 *
 *   pool.c         the API, arena selection, the alloc and free paths
 *   pool_tcache.c  the per-thread caches (their life, flush and spill)
 *   pool_pend.c    the pending (fenced) frees, barriers, reuse
 *   pool_seg.c     segments: the providers over direct.h, the budget,
 *                  the engine calls (devpool or hostpool)
 *   pool_oom.c     the out-of-memory stages and trim
 *   pool_stats.c   statistics
 *   pool_query.c   the pool-mode queries (block of, segment of, cached)
 *   pool_fork.c    fork, context teardown (forget) and reset
 *
 * One pool per (kind, device) for devices 0..POOL_MAX_DEVICES-1, in
 * 1..POOL_ARENAS arenas: each arena is a pool_t with its own lock,
 * engine and pending list; the allocation counters (pool_pub_t) and the
 * budget are shared by a (kind, device)'s arenas.
 *
 * Invariants: a block is in exactly one of: handed out (poolmap entry
 * set), a thread cache, the pending list, the engine.  reserved <= the
 * limit of CUWARDEN_POOL_LIMIT (device and managed pools of a device
 * share one budget; pinned pools have their own).
 *
 * Locking: pool_init_lock (pool creation), then per pool `lock` (rank
 * POOL): never held across a driver call (the providers drop it;
 * barriers, event queries and jemalloc calls that may grow run without
 * it), except the cuEventDestroy of an event beyond the 256 fence.c
 * keeps per device.  tcl_lock (per pool, leaf) guards the list of thread
 * caches for statistics.
 *
 * What the alloc and free paths need on every call is here as static
 * inline (the hit path takes no lock and makes no call into another
 * file of the pools); the rest is declared here and defined in the file
 * named above its declarations.
 */
#ifndef CUWARDEN_POOL_INT_H
#define CUWARDEN_POOL_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "devpool.h"
#include "driver.h"
#include "fence.h"
#include "hostpool.h"
#include "mutex.h"
#include "pool.h"
#include "sizeclass.h"
#include "types.h"

/* Declared hidden, so that the hot path reaches them without the GOT. */
#pragma GCC visibility push(hidden)

#define POOL_MAX_DEVICES FENCE_MAX_DEVICES
_Static_assert(POOL_MAX_DEVICES <= DRIVER_MAX_DEVICES,
    "the pools serve a subset of the driver layer's devices");
#define POOL_ARENAS 4 /* at most, per (kind, device); the map keeps 2 bits */
#define POOL_NKINDS 3 /* the pooled kinds: device, managed, pinned */
#define TC_CAP 32                           /* entries per FIFO / stack */
/* Sizes below TC_MAX_CLASS_SIZE use the thread caches: TC_NBINS bins,
 * one per class below it at the device's (finest) grid; check_sizeclass
 * checks the two agree with sizeclass.c. */
#define TC_MAX_CLASS_SIZE ((size_t)2 << 20)
#define TC_NBINS 80
#define PUBLISH_BYTES ((int64_t)1 << 20)

typedef struct pend_s {
	uintptr_t addr;
	size_t bsize;
	uint64_t stamp;
	CUevent ev;
	CUstream stream; /* with ev: the stream it was freed on */
} pend_t;

typedef struct tc_ent_s {
	uintptr_t addr;
	uint64_t stamp;
} tc_ent_t;

typedef struct tc_bin_s {
	uint16_t nready, head, npend;
	uintptr_t ready[TC_CAP];
	tc_ent_t pend[TC_CAP];
} tc_bin_t;

typedef struct pool_s pool_t;

typedef struct tcache_s {
	struct tcache_s *prev, *next; /* in pool->tcaches */
	pool_t *pool;
	uint64_t gen;
	int64_t unpub;      /* allocated bytes not yet in cur_pub (atomic) */
	uint64_t tot_unpub; /* total bytes not yet in tot_pub (atomic) */
	size_t bytes;       /* bytes cached, ready and pending */
	size_t pend_bytes;  /* bytes in the FIFOs */
	size_t unfenced;    /* bytes freed here since the fence last moved */
	uint64_t seen_done; /* fence_done() when unfenced was reset */
	bool asked;         /* a barrier was requested since then */
	uint64_t incarnation; /* of the pool when this cache was filled */
	uint64_t hits, misses; /* read by pool_cache_counters (atomic) */
	pool_slow_t slow;   /* read by pool_slow_counters (atomic) */
	tc_bin_t bins[TC_NBINS];
} tcache_t;

/* Fields read on every call come first, apart from the lock and the
 * fields written under it (a miss of one thread must not invalidate the
 * line every other thread reads on its hits). */
struct pool_s {
	/* read-mostly: set at init (flush_gen, incarnation: rarely) */
	bool inited;
	kind_t kind;
	int device;
	unsigned lgd;       /* classes per doubling, log2 (sizeclass.h) */
	size_t tc_max;      /* sizes below this use the thread cache */
	size_t tc_cap;      /* bytes a thread may cache */
	size_t tc_ask;      /* unfenced bytes: ask the helper for a barrier */
	size_t tc_sync;     /* unfenced bytes: wait for a barrier on a miss */
	size_t large;
	unsigned arena;     /* index among the (kind, device)'s arenas */
	struct pool_pub_s *pub; /* the (kind, device)'s allocation counters */
	uint64_t flush_gen; /* atomic */
	uint64_t incarnation; /* bumped by pool_forget_device */
	devpool_t *dp;      /* KIND_DEVICE */
	hostpool_t *hp;     /* KIND_MANAGED, KIND_PINNED */
	/* under lock */
	_Alignas(64) cw_mutex_t lock;
	pend_t *pend;
	size_t npend, pend_cap, pend_bytes, nev;
	uint64_t scanned_done;
	bool grow_limited;  /* the last provider refusal was the limit */
	bool forgetting;    /* pool_forget_device: the driver freed it all */
	int grow_status;    /* CW_* of the last failed provider call */
	/* statistics */
	uint64_t res_peak, res_total, seg_peak, seg_total;
	uint64_t fence_waits, driver_allocs, driver_frees, trims;
	cw_mutex_t tcl_lock;
	tcache_t *tcaches;
	uint64_t retired_hits, retired_misses; /* of exited threads */
	pool_slow_t retired_slow;
};

/* Published allocation counters of a (kind, device), shared by its
 * arenas: read on every allocation, written once per megabyte a thread
 * publishes.  cur_pub is a two's-complement sum: a thread's frees of
 * blocks another thread allocated are published before that thread's
 * allocations may be, so it can be below zero for a while (read it with
 * pool_pub_current).  ntc counts the thread caches (each holds less than
 * PUBLISH_BYTES unpublished): it makes peak an upper bound
 * (count_alloc, pool.c). */
typedef struct pool_pub_s {
	_Alignas(64) uint64_t cur_pub, tot_pub, peak; /* atomics */
	uint64_t ntc;                                 /* atomic */
} pool_pub_t;

typedef struct tc_set_s {
	uint64_t life;
	unsigned home; /* this thread's arena */
	tcache_t *tc[POOL_NKINDS][POOL_MAX_DEVICES]; /* of the home arena */
} tc_set_t;

/* The engine's figures, device or host alike.  p->lock held. */
typedef struct eng_stat_s {
	size_t reserved, segments;
	size_t largest_free; /* jemalloc: an upper bound (free_bytes) */
	size_t free_bytes;
} eng_stat_t;

/* ------------------------------------------------------------ "pool.c" */

/* Arenas: a (kind, device) has pool_narenas pools, each with its own
 * lock, engine and pending list; a thread allocates from one of them
 * (its home, given in turn), and a block goes back to the arena it came
 * from (the address map keeps the arena).  With many threads the refills
 * of different arenas take different locks. */
extern pool_t pool_table[POOL_NKINDS][POOL_MAX_DEVICES][POOL_ARENAS];
extern pool_pub_t pool_pubs[POOL_NKINDS][POOL_MAX_DEVICES];
extern unsigned pool_narenas; /* 1..POOL_ARENAS, fixed at the first pool */
extern unsigned pool_arena_turn; /* the next thread's home arena (atomic) */
extern cw_mutex_t pool_init_lock;
extern uint64_t pool_life; /* bumped by reset and in a fork child */
extern bool pool_forked;
extern CW_TLS unsigned pool_tls_home;

static inline bool
pool_kind_pooled(kind_t kind)
{
	return kind == KIND_DEVICE || kind == KIND_MANAGED ||
	    kind == KIND_PINNED;
}

static inline void
pool_atomic_max(uint64_t *at, uint64_t v)
{
	uint64_t old = __atomic_load_n(at, __ATOMIC_RELAXED);
	while (v > old && !__atomic_compare_exchange_n(at, &old, v, true,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* The calling thread's arena (given in turn at its first allocation). */
static inline unsigned
pool_home_arena(void)
{
	unsigned n = __atomic_load_n(&pool_narenas, __ATOMIC_ACQUIRE);
	if (unlikely(pool_tls_home == UINT32_MAX))
		pool_tls_home = __atomic_fetch_add(&pool_arena_turn, 1,
		    __ATOMIC_RELAXED);
	return n <= 1 ? 0 : pool_tls_home % n;
}

/* Every initialised arena of (kind, device), for the loops below. */
static inline pool_t *
pool_arena_at(int kind, int device, unsigned a)
{
	pool_t *p = &pool_table[kind][device][a];
	return __atomic_load_n(&p->inited, __ATOMIC_ACQUIRE) ? p : NULL;
}
#define FOR_ARENAS(p, kind, device) \
	for (unsigned a_ = 0; a_ < POOL_ARENAS; a_++) \
		if (((p) = pool_arena_at((kind), (device), a_)) == NULL) \
			continue; \
		else

/* The engine's size of a block handed out for size bytes: a class size
 * below tc_max (pool_free gives it back so), else size. */
static inline size_t
pool_eng_size(pool_t *p, size_t size)
{
	return size < p->tc_max ?
	    sizeclass_round(size, p->lgd) : size;
}

/* ------------------------------------------------------- "pool_tcache.c" */

extern CW_TLS tc_set_t *pool_tls_tcs;

/* The calling thread's cache for p, made on first use: NULL when p is
 * not the thread's home arena or no memory is left. */
tcache_t *pool_tc_make(pool_t *p);

static inline tcache_t *
pool_tc_get(pool_t *p)
{
	tc_set_t *set = pool_tls_tcs;
	if (likely(set != NULL && set->life == __atomic_load_n(&pool_life,
	    __ATOMIC_ACQUIRE))) {
		tcache_t *tc = set->tc[p->kind][p->device];
		if (likely(tc != NULL))
			return likely(tc->pool == p) ? tc : NULL;
	}
	return pool_tc_make(p);
}

/* The calling thread's cache for p, if it has one (never made here). */
tcache_t *pool_tc_peek(pool_t *p);
/* Everything cached goes back: ready blocks to the engine, pending ones
 * to the pending list.  p->lock held. */
void pool_tc_flush(pool_t *p, tcache_t *tc);
/* The older half of one bin's FIFO goes to the pending list (or to the
 * engine when its fence has passed).  p->lock held. */
void pool_tc_spill_bin(pool_t *p, tcache_t *tc, tc_bin_t *b, size_t cs);

static inline void
pool_publish(pool_t *p, tcache_t *tc)
{
	__atomic_fetch_add(&p->pub->cur_pub, (uint64_t)tc->unpub,
	    __ATOMIC_RELAXED);
	__atomic_fetch_add(&p->pub->tot_pub, tc->tot_unpub, __ATOMIC_RELAXED);
	__atomic_store_n(&tc->unpub, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tc->tot_unpub, 0, __ATOMIC_RELAXED);
}

/* The published part of the allocated bytes, never below zero. */
static inline uint64_t
pool_pub_current(const pool_pub_t *pub)
{
	int64_t c = (int64_t)__atomic_load_n(&pub->cur_pub, __ATOMIC_RELAXED);
	return c > 0 ? (uint64_t)c : 0;
}

/* --------------------------------------------------------- "pool_pend.c" */

/* p->lock held.  Returns true on error (no memory for the list: the
 * block is then lost rather than reused early). */
bool pool_pend_push(pool_t *p, uintptr_t addr, size_t bsize, uint64_t stamp,
    CUevent ev);
/* Moves pending blocks whose fence has passed (or whose event completed,
 * poll_events: asks the driver first) to the engine.  p->lock held
 * (the engine may drop it).  Returns the bytes released. */
size_t pool_pend_release(pool_t *p, bool poll_events);
/* One barrier, then pool_pend_release: drops p->lock around the
 * synchronise.  Returns true on error. */
bool pool_barrier(pool_t *p);
/* Before growing: waits at most fence_reuse_wait() for a barrier that
 * covers a pending block big enough for esize.  p->lock held (dropped
 * around the wait).  Returns true when a barrier passed and released
 * blocks. */
bool pool_reuse_barrier(pool_t *p, size_t esize);
/* Pending bytes beyond which an allocation that misses issues a barrier:
 * max(32 MiB, reserved / 16).  p->lock held. */
size_t pool_pend_threshold(pool_t *p);
/* A block pool_free_async freed on stream, of exactly the engine size a
 * request of size takes, taken out of the pending list (p->lock taken
 * here).  Returns true when one was found. */
bool pool_pend_take_stream(pool_t *p, size_t size, CUstream stream,
    uintptr_t *addr);

/* ---------------------------------------------------------- "pool_seg.c" */

extern uint64_t pool_budget_used[POOL_NKINDS][POOL_MAX_DEVICES];

size_t pool_limit(void); /* CUWARDEN_POOL_LIMIT, 0: none */
/* The providers of the engines.  Device: called by devpool with p->lock
 * held, dropped around the driver call.  Host: called from jemalloc's
 * hooks, p->lock not held.  Return true on error. */
bool pool_dev_seg_alloc(void *arg, size_t size, uintptr_t *addr);
bool pool_dev_seg_free(void *arg, uintptr_t addr, size_t size);
bool pool_host_seg_alloc(void *arg, size_t size, uintptr_t *addr);
bool pool_host_seg_free(void *arg, uintptr_t addr, size_t size);
/* The engine, device or host alike; p->lock held (dropped and retaken
 * where the engine may grow). */
void pool_eng_stat(pool_t *p, eng_stat_t *o);
size_t pool_eng_reserved(pool_t *p);
/* Returns a devpool_err_e-like code: 0 or non-zero. */
int pool_eng_alloc(pool_t *p, size_t size, bool grow, uintptr_t *addr,
    size_t *bs, unsigned *flags);
void pool_eng_free(pool_t *p, uintptr_t addr, size_t bsize);

/* ---------------------------------------------------------- "pool_oom.c" */

/* The staged allocation of esize engine bytes for a request of req.
 * p->lock held (dropped inside at times).  Returns CW_OK or the
 * CW_ENOMEM of the last stage (cw_last_error says why), or the driver's
 * other failure at once. */
int pool_alloc_staged(pool_t *p, tcache_t *tc, size_t esize, size_t req,
    uintptr_t *addr, size_t *bs, unsigned *flags);

/* -------------------------------------------------------- "pool_stats.c" */

/* Allocated bytes now of p's (kind, device), every arena, published and
 * not.  Takes the arenas' tcl_lock (leaves): callable with p->lock held. */
uint64_t pool_allocated_now(pool_t *p);
/* Adds the counters of from to to (relaxed reads). */
void pool_slow_sum(pool_slow_t *to, const pool_slow_t *from);

#pragma GCC visibility pop

#endif /* CUWARDEN_POOL_INT_H */
