#include "preamble.h"
/*
 * pool_stats.c -- the pools' statistics (pool.h: pool_stats,
 * pool_cache_counters, pool_slow_counters, pool_cached_bytes; doc/pools.md
 * "Statistics").
 *
 * Owns no state: the counters live where they are counted, in each
 * pool_t (reserved and segment peaks and totals, driver calls, fence
 * waits, trims, the retired threads' cache counters), in each thread
 * cache (unpublished allocated bytes, hits, misses, slow paths) and in
 * the (kind, device)'s pool_pub_t; this file sums them on demand.
 * Invariants of the figures: allocated.current and total are exact;
 * allocated.peak is exact with one thread and an upper bound with
 * several, capped by total and by the reserved peak and never below
 * current; reserved.peak and segments.peak sum the arenas' peaks.
 *
 * Locking: p->tcl_lock for each pool's list of caches (a leaf: callable
 * with p->lock held), p->lock for the engine's figures, one pool at a
 * time.  On the exit report of a thread interrupted inside the pools
 * (nowait.h) a lock it may hold is tried first (stats_lockable).
 */
#include <pthread.h>
#include <string.h>

#include "hostpool.h"
#include "mutex.h"
#include "nowait.h"
#include "pool_int.h"

void
pool_slow_sum(pool_slow_t *to, const pool_slow_t *from)
{
	const uint64_t *f = (const uint64_t *)from;
	uint64_t *t = (uint64_t *)to;
	for (size_t i = 0; i < sizeof(*to) / sizeof(uint64_t); i++)
		t[i] += __atomic_load_n(&f[i], __ATOMIC_RELAXED);
}

/* Allocated bytes now of p's (kind, device), every arena, published and
 * not.  Takes the arenas' tcl_lock (leaves): callable with p->lock held. */
uint64_t
pool_allocated_now(pool_t *p)
{
	int64_t a = (int64_t)__atomic_load_n(&p->pub->cur_pub,
	    __ATOMIC_RELAXED);
	pool_t *q;
	FOR_ARENAS(q, p->kind, p->device) {
		cw_mutex_lock(&q->tcl_lock);
		for (tcache_t *t = q->tcaches; t != NULL; t = t->next)
			a += __atomic_load_n(&t->unpub, __ATOMIC_RELAXED);
		cw_mutex_unlock(&q->tcl_lock);
	}
	/* Exact but for counts that move while we add them up. */
	return a > 0 ? (uint64_t)a : 0;
}

/* Whether pool_stats may take the locks of (kind, device).  The exit
 * report on a thread interrupted inside the pools (nowait.h) may hold one
 * of them for good: each is tried first, and a device whose locks this
 * thread holds is left out of the figures.  (A lock that passes the try
 * is not this thread's: taking it again waits only for another thread's
 * short hold.) */
static bool
stats_lockable(kind_t kind, int device)
{
	pool_t *p;

	if (!nowait_active())
		return true;
	FOR_ARENAS(p, kind, device) {
		if (nowait_lock(&p->tcl_lock))
			return false;
		cw_mutex_unlock(&p->tcl_lock);
		if (nowait_lock(&p->lock))
			return false;
		bool held = p->hp != NULL && hostpool_locked(p->hp);
		cw_mutex_unlock(&p->lock);
		if (held)
			return false;
	}
	return true;
}

void
pool_stats(kind_t kind, cw_pool_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	if (!pool_kind_pooled(kind))
		return;
	double free_total = 0;
	for (int d = 0; d < POOL_MAX_DEVICES; d++) {
		pool_t *p, *any = NULL;
		uint64_t tot = 0;
		if (!stats_lockable(kind, d))
			continue;
		FOR_ARENAS(p, kind, d) {
			any = p;
			cw_mutex_lock(&p->tcl_lock);
			for (tcache_t *t = p->tcaches; t != NULL; t = t->next)
				tot += __atomic_load_n(&t->tot_unpub,
				    __ATOMIC_RELAXED);
			cw_mutex_unlock(&p->tcl_lock);
		}
		if (any == NULL)
			continue;
		/* Allocated: the (kind, device)'s counters, exact; its peak
		 * an upper bound (count_alloc, pool.c), never above the bytes
		 * ever allocated or the reserved peak, never below now. */
		pool_pub_t *pub = &pool_pubs[kind][d];
		uint64_t alloc = pool_allocated_now(any);
		pool_atomic_max(&pub->peak, alloc);
		uint64_t total = tot + __atomic_load_n(&pub->tot_pub,
		    __ATOMIC_RELAXED);
		uint64_t peak = __atomic_load_n(&pub->peak, __ATOMIC_RELAXED);
		uint64_t res_peak = 0;
		FOR_ARENAS(p, kind, d)
			res_peak += __atomic_load_n(&p->res_peak,
			    __ATOMIC_RELAXED);
		if (peak > total)
			peak = total;
		if (peak > res_peak)
			peak = res_peak;
		if (peak < alloc)
			peak = alloc;
		out->allocated.current += alloc;
		out->allocated.peak += peak;
		out->allocated.total += total;
		/* The rest per arena, summed (the reserved and segment peaks
		 * are the sums of the arenas' peaks: an upper bound when
		 * there are several). */
		FOR_ARENAS(p, kind, d) {
			eng_stat_t es;
			cw_mutex_lock(&p->lock);
			pool_eng_stat(p, &es);
			size_t largest = es.largest_free;
			out->reserved.current += es.reserved;
			out->reserved.peak += __atomic_load_n(&p->res_peak,
			    __ATOMIC_RELAXED);
			out->reserved.total += __atomic_load_n(&p->res_total,
			    __ATOMIC_RELAXED);
			out->segments.current += es.segments;
			out->segments.peak += __atomic_load_n(&p->seg_peak,
			    __ATOMIC_RELAXED);
			out->segments.total += __atomic_load_n(&p->seg_total,
			    __ATOMIC_RELAXED);
			out->fence_waits += p->fence_waits;
			out->driver_allocs += __atomic_load_n(
			    &p->driver_allocs, __ATOMIC_RELAXED);
			out->driver_frees += __atomic_load_n(&p->driver_frees,
			    __ATOMIC_RELAXED);
			out->trims += p->trims;
			if (largest > out->largest_free)
				out->largest_free = largest;
			free_total += (double)es.free_bytes;
			cw_mutex_unlock(&p->lock);
		}
	}
	if (free_total > 0)
		out->fragmentation = 1.0 - (double)out->largest_free /
		    free_total;
}

/* Every thread cache's counters of kind, the retired threads' included:
 * hits, misses and slow paths, under each arena's tcl_lock. */
static void
tcache_sums(kind_t kind, uint64_t *hits, uint64_t *misses, pool_slow_t *slow)
{
	*hits = *misses = 0;
	memset(slow, 0, sizeof(*slow));
	if (!pool_kind_pooled(kind))
		return;
	for (int d = 0; d < POOL_MAX_DEVICES; d++) {
		pool_t *p;
		FOR_ARENAS(p, kind, d) {
			cw_mutex_lock(&p->tcl_lock);
			for (tcache_t *t = p->tcaches; t != NULL;
			    t = t->next) {
				*hits += __atomic_load_n(&t->hits,
				    __ATOMIC_RELAXED);
				*misses += __atomic_load_n(&t->misses,
				    __ATOMIC_RELAXED);
				pool_slow_sum(slow, &t->slow);
			}
			*hits += p->retired_hits;
			*misses += p->retired_misses;
			pool_slow_sum(slow, &p->retired_slow);
			cw_mutex_unlock(&p->tcl_lock);
		}
	}
}

void
pool_cache_counters(kind_t kind, uint64_t *hits, uint64_t *misses)
{
	pool_slow_t slow;

	tcache_sums(kind, hits, misses, &slow);
}

void
pool_slow_counters(kind_t kind, pool_slow_t *out)
{
	uint64_t hits, misses;

	tcache_sums(kind, &hits, &misses, out);
}
