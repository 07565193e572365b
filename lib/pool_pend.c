#include "preamble.h"
/*
 * pool_pend.c -- the pools' pending list (pool_int.h): blocks freed but
 * not yet safe to hand out again, the barriers that make them safe, and
 * the reuse of a pending block instead of growing.
 *
 * Owns each pool's pend array (pend, npend, pend_cap, pend_bytes, nev,
 * scanned_done).  A pending block waits for its fence stamp to pass
 * (fence_passed) or, for a stream-ordered free, for its event to complete
 * (stamp set to 0 once the event was seen completed).  Invariants:
 * pend_bytes is the sum of the entries' bsize; nev the number of entries
 * with an event; a block leaves the list for the engine only once safe,
 * never early because a driver call failed; scanned_done is the
 * fence_done() of the last full scan (nothing more to release until the
 * fence moves, or (uint64_t)-1 after an event poll).
 *
 * Locking: everything under p->lock; barriers, event queries and the
 * wait for the helper's barrier run with it dropped (and retaken), so
 * callers must not keep pointers into pend across them.
 */
#include <pthread.h>
#include <stdlib.h>

#include "fence.h"
#include "mutex.h"
#include "pool_int.h"

#define PEND_MIN_THRESHOLD ((size_t)32 << 20)

/* -------------------------------------------------------------- pending */

/* p->lock held.  Returns true on error (no memory for the list: the
 * block is then lost rather than reused early). */
bool
pool_pend_push(pool_t *p, uintptr_t addr, size_t bsize, uint64_t stamp,
    CUevent ev)
{
	if (p->npend == p->pend_cap) {
		size_t nc = p->pend_cap ? p->pend_cap * 2 : 256;
		pend_t *n = realloc(p->pend, nc * sizeof(*n));
		if (n == NULL)
			return true;
		p->pend = n;
		p->pend_cap = nc;
	}
	p->pend[p->npend++] = (pend_t){ addr, bsize, stamp, ev, NULL };
	p->pend_bytes += bsize;
	if (ev != NULL)
		p->nev++;
	return false;
}

/* Asks the driver about up to 64 events of the pending list, with p->lock
 * dropped, and marks the entries whose event completed (stamp 0).
 * p->lock held on entry and exit. */
static void
pend_poll_events(pool_t *p)
{
	CUevent evs[64];
	int done[64];
	unsigned n = 0;
	for (size_t i = 0; i < p->npend && n < 64; i++)
		if (p->pend[i].ev != NULL && p->pend[i].stamp != 0)
			evs[n++] = p->pend[i].ev;
	if (n == 0)
		return;
	cw_mutex_unlock(&p->lock);
	for (unsigned k = 0; k < n; k++)
		done[k] = fence_event_query(p->device, evs[k]);
	cw_mutex_lock(&p->lock);
	for (unsigned k = 0; k < n; k++) {
		if (done[k] != 1)
			continue;
		for (size_t i = 0; i < p->npend; i++)
			if (p->pend[i].ev == evs[k])
				p->pend[i].stamp = 0;
	}
	p->scanned_done = (uint64_t)-1; /* rescan */
}

/* Moves pending blocks whose fence has passed (or whose event completed)
 * to the engine.  The engine may drop p->lock, so ready entries are taken
 * out of the list before any is freed.  p->lock held.  Returns the bytes
 * released. */
size_t
pool_pend_release(pool_t *p, bool poll_events)
{
	if (poll_events && p->nev > 0)
		pend_poll_events(p);
	size_t freed = 0;
	for (;;) {
		uint64_t done = fence_done(p->device);
		if (done == p->scanned_done)
			return freed;
		pend_t out[256];
		size_t nout = 0, j = 0;
		for (size_t i = 0; i < p->npend; i++) {
			pend_t e = p->pend[i];
			if (e.stamp > done || nout == CW_ARRAY_SIZE(out)) {
				p->pend[j++] = e;
				continue;
			}
			out[nout++] = e;
			if (e.ev != NULL)
				p->nev--;
			p->pend_bytes -= e.bsize;
		}
		p->npend = j;
		if (nout < CW_ARRAY_SIZE(out))
			p->scanned_done = done;
		for (size_t i = 0; i < nout; i++) {
			if (out[i].ev != NULL)
				fence_event_release(p->device, out[i].ev);
			freed += out[i].bsize;
			pool_eng_free(p, out[i].addr, out[i].bsize);
		}
		if (nout == 0)
			return freed;
	}
}

/* One barrier: drops p->lock around the synchronise. */
bool
pool_barrier(pool_t *p)
{
	cw_mutex_unlock(&p->lock);
	bool err = fence_barrier(p->device);
	cw_mutex_lock(&p->lock);
	if (!err)
		__atomic_fetch_add(&p->fence_waits, 1, __ATOMIC_RELAXED);
	pool_pend_release(p, true);
	return err;
}

/* Before growing: a pending block big enough for esize waits only for the
 * fence.  The helper is asked for a barrier at once and this thread waits
 * for it at most FENCE_REUSE_WAIT_NS: on an idle device it comes in
 * microseconds, far less than a new segment (cuMemHostAlloc of megabytes:
 * milliseconds), and a steady alloc/free loop of one size stays on one
 * block; with a kernel running the wait ends and the pool grows, so an
 * allocation never waits for a kernel here.  p->lock held (dropped
 * around the wait).  Returns true when a barrier passed and released
 * blocks. */
bool
pool_reuse_barrier(pool_t *p, size_t esize)
{
	uint64_t stamp = 0;
	for (size_t i = 0; i < p->npend; i++) {
		pend_t *e = &p->pend[i];
		if (e->bsize >= esize && e->stamp != 0 &&
		    (stamp == 0 || e->stamp < stamp))
			stamp = e->stamp;
	}
	if (stamp == 0)
		return false;
	if (!fence_passed(p->device, stamp)) {
		cw_mutex_unlock(&p->lock);
		bool ok = fence_wait_for(p->device, stamp,
		    fence_reuse_wait());
		cw_mutex_lock(&p->lock);
		if (!ok)
			return false;
		__atomic_fetch_add(&p->fence_waits, 1, __ATOMIC_RELAXED);
	}
	return pool_pend_release(p, false) > 0;
}

size_t
pool_pend_threshold(pool_t *p)
{
	size_t t = pool_eng_reserved(p) / 16;
	return t > PEND_MIN_THRESHOLD ? t : PEND_MIN_THRESHOLD;
}

/* A block pool_free_async freed on stream, of exactly the engine size a
 * request of size takes: work queued on stream from now on runs after
 * the work queued before that free, so it may be handed out at once.
 * Taken out of the pending list.  Returns true when one was found. */
bool
pool_pend_take_stream(pool_t *p, size_t size, CUstream stream,
    uintptr_t *addr)
{
	size_t bs = pool_eng_size(p, size);
	CUevent ev = NULL;
	bool found = false;
	cw_mutex_lock(&p->lock);
	for (size_t i = p->npend; p->nev > 0 && i-- > 0; ) {
		pend_t *e = &p->pend[i];
		if (e->ev == NULL || e->stream != stream || e->bsize != bs)
			continue;
		*addr = e->addr;
		ev = e->ev;
		p->pend[i] = p->pend[--p->npend];
		p->nev--;
		p->pend_bytes -= bs;
		found = true;
		break;
	}
	cw_mutex_unlock(&p->lock);
	if (ev != NULL)
		fence_event_release(p->device, ev);
	return found;
}
