#include "preamble.h"
/*
 * pool_oom.c -- the pools' out-of-memory stages and trim (pool_int.h;
 * doc/pools.md "Out of memory, in stages").
 *
 * A request the thread cache cannot serve goes through the stages:
 * ready blocks -> completed events -> grow -> barrier, flush this
 * thread's cache, release pending, retry -> trim the engine (free
 * segments back to the driver) and the other arenas of the (kind,
 * device), retry -> wait up to 5 ms for other threads to flush their
 * caches (the flush generation moved: at their next call), retry ->
 * CW_ENOMEM with requested, reserved, allocated and largest free block in
 * cw_last_error.  A driver failure other than out-of-memory is returned
 * at once.  pool_trim runs the barrier and trim stages for every pool of
 * a device.
 *
 * Owns no state: it moves blocks between the places pool_int.h lists.
 * Locking: entered with p->lock held, which is dropped around barriers,
 * jemalloc calls that may grow or trim, the waits, and the work on
 * another arena (one pool lock at a time).
 */
#include <pthread.h>
#include <unistd.h>

#include "devpool.h"
#include "fmt.h"
#include "hostpool.h"
#include "lasterr.h"
#include "mutex.h"
#include "pool_int.h"

static int
oom_error(pool_t *p, size_t size)
{
	eng_stat_t es;
	pool_eng_stat(p, &es);
	size_t res = es.reserved, largest = es.largest_free;
	uint64_t alloc = pool_allocated_now(p);
	char arena[48] = "";
	if (pool_narenas > 1)
		fmt_snprintf(arena, sizeof(arena), " (reserved by arena %u of "
		    "%u)", p->arena + 1, pool_narenas);
	lasterr_set(CW_ENOMEM, "pool_alloc", "out of %s memory on device %d: "
	    "%zu bytes requested, %zu reserved%s, %llu allocated, largest free "
	    "block %zu%s", kind_name(p->kind), p->device, size, res, arena,
	    (unsigned long long)alloc, largest,
	    p->grow_limited ? " (CUWARDEN_POOL_LIMIT reached)" : "");
	cw_error_t *e = lasterr_get();
	e->requested = size;
	e->reserved = res;
	e->allocated = (size_t)alloc;
	e->largest_free = largest;
	return CW_ENOMEM;
}

/* p->lock held.  Returns the bytes given back to the driver. */
static size_t
pool_trim_locked(pool_t *p)
{
	p->trims++;
	size_t n;
	if (p->dp != NULL) {
		n = devpool_trim(p->dp);
	} else {
		cw_mutex_unlock(&p->lock);
		n = hostpool_trim(p->hp);
		cw_mutex_lock(&p->lock);
	}
	return n;
}

/* Bytes the other threads' caches hold, every arena (relaxed reads). */
static size_t
others_cache(pool_t *p, tcache_t *self)
{
	size_t n = 0;
	pool_t *q;
	FOR_ARENAS(q, p->kind, p->device) {
		cw_mutex_lock(&q->tcl_lock);
		for (tcache_t *t = q->tcaches; t != NULL; t = t->next)
			if (t != self)
				n += __atomic_load_n(&t->bytes,
				    __ATOMIC_RELAXED);
		cw_mutex_unlock(&q->tcl_lock);
	}
	return n;
}

/* The OOM stages' work on the other arenas of p's (kind, device): their
 * caches flush at their threads' next call, and their released pending
 * blocks and free segments go back to the driver, so that this arena
 * may grow within the limit.  p->lock held (dropped around each). */
static void
siblings_give_back(pool_t *p)
{
	pool_t *q;
	FOR_ARENAS(q, p->kind, p->device) {
		if (q == p)
			continue;
		__atomic_fetch_add(&q->flush_gen, 1, __ATOMIC_RELEASE);
		cw_mutex_unlock(&p->lock);
		cw_mutex_lock(&q->lock);
		pool_pend_release(q, true);
		pool_trim_locked(q);
		cw_mutex_unlock(&q->lock);
		cw_mutex_lock(&p->lock);
	}
}

/* Pinned and managed pools: jemalloc cannot serve esize without a new
 * segment when the bytes reserved and not handed out are fewer. */
static bool
host_would_grow(pool_t *p, size_t esize)
{
	hostpool_stats_t s;
	hostpool_stats(p->hp, &s);
	return s.reserved < s.allocated + esize;
}

/* The staged allocation.  p->lock held (dropped inside at times). */
int
pool_alloc_staged(pool_t *p, tcache_t *tc, size_t esize, size_t req,
    uintptr_t *addr, size_t *bs, unsigned *flags)
{
	p->grow_status = CW_OK;
	p->grow_limited = false;
	pool_pend_release(p, false);
	if (p->pend_bytes >= pool_pend_threshold(p))
		pool_barrier(p);
	else if (p->hp != NULL && host_would_grow(p, esize))
		pool_reuse_barrier(p, esize); /* jemalloc grows by itself */
	int r = pool_eng_alloc(p, esize, false, addr, bs, flags);
	if (r == DEVPOOL_OK)
		return CW_OK;
	if (p->dp != NULL) {
		if (p->nev > 0 && pool_pend_release(p, true) > 0 &&
		    pool_eng_alloc(p, esize, false, addr, bs, flags) ==
		    DEVPOOL_OK)
			return CW_OK;
		if (pool_reuse_barrier(p, esize) &&
		    pool_eng_alloc(p, esize, false, addr, bs, flags) ==
		    DEVPOOL_OK)
			return CW_OK;
		r = pool_eng_alloc(p, esize, true, addr, bs, flags);
		if (r == DEVPOOL_OK)
			return CW_OK;
	}
	if (p->grow_status != CW_OK && p->grow_status != CW_ENOMEM)
		return p->grow_status; /* the driver failed otherwise */
	/* Stage: barrier, flush what this thread caches, release. */
	__atomic_fetch_add(&p->flush_gen, 1, __ATOMIC_RELEASE);
	if (tc != NULL)
		pool_tc_flush(p, tc);
	pool_barrier(p);
	r = pool_eng_alloc(p, esize, true, addr, bs, flags);
	if (r == DEVPOOL_OK)
		return CW_OK;
	/* Stage: trim cached memory (every arena's), retry. */
	pool_trim_locked(p);
	siblings_give_back(p);
	r = pool_eng_alloc(p, esize, true, addr, bs, flags);
	if (r == DEVPOOL_OK)
		return CW_OK;
	if (p->grow_status != CW_OK && p->grow_status != CW_ENOMEM)
		return p->grow_status;
	/* Stage: other threads' caches.  They flush at their next call (the
	 * flush generation moved); give the busy ones a few milliseconds. */
	for (int i = 0; i < 20 && others_cache(p, tc) >= esize; i++) {
		cw_mutex_unlock(&p->lock);
		usleep(250);
		cw_mutex_lock(&p->lock);
		if (p->npend > 0)
			pool_barrier(p);
		pool_trim_locked(p);
		siblings_give_back(p);
		r = pool_eng_alloc(p, esize, true, addr, bs, flags);
		if (r == DEVPOOL_OK)
			return CW_OK;
	}
	return oom_error(p, req);
}

int
pool_trim(int device)
{
	if (!pool_enabled() || pool_forked)
		return CW_OK;
	if (device < 0 || device >= POOL_MAX_DEVICES)
		return lasterr_set(CW_ENODEV, "pool_trim", "no pool on device "
		    "%d", device);
	for (int k = 0; k < POOL_NKINDS; k++) {
		pool_t *p;
		FOR_ARENAS(p, k, device) {
		cw_mutex_lock(&p->lock);
		__atomic_fetch_add(&p->flush_gen, 1, __ATOMIC_RELEASE);
		tcache_t *tc = pool_tc_peek(p);
		if (tc != NULL) {
			pool_publish(p, tc);
			pool_tc_flush(p, tc);
		}
		if (p->npend > 0)
			pool_barrier(p);
		pool_trim_locked(p);
		cw_mutex_unlock(&p->lock);
		}
	}
	return CW_OK;
}
