#include "preamble.h"
/*
 * pool_tcache.c -- the pools' per-thread caches (pool_int.h): making a
 * thread's cache at its first allocation (pool_tc_make; the hit path,
 * pool_tc_get, is inline), flushing it at thread exit and when its pool's
 * flush generation moves (trim, the OOM stages, a forgotten device), and
 * spilling a full FIFO.
 *
 * A thread has a set of caches, one per (kind, device), all of its home
 * arena.  A cache holds, per size class below tc_max, a stack of ready
 * blocks and a FIFO of freed blocks stamped with the fence epoch; a block
 * leaves the FIFO only once fence_passed(stamp).  Invariants: bytes
 * counts the blocks of both, pend_bytes those of the FIFOs; bytes stays
 * within tc_cap (pool_free checks before caching); only the owning
 * thread changes a cache, others read its counters (atomics); a cache
 * whose pool's incarnation moved holds blocks that died with their
 * context and gives nothing back; a set from before pool_reset or a fork
 * (pool_life moved) is forgotten, its caches freed by the reset.
 *
 * Locking: a thread's own cache needs no lock; giving blocks back to the
 * engine or the pending list needs p->lock (held by the callers of
 * pool_tc_flush and pool_tc_spill_bin); a pool's list of caches
 * (p->tcaches) is under p->tcl_lock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fence.h"
#include "log.h"
#include "mutex.h"
#include "pool_int.h"
#include "sizeclass.h"

CW_TLS tc_set_t *pool_tls_tcs;
static pthread_key_t tc_key;
static pthread_once_t tc_key_once = PTHREAD_ONCE_INIT;
static bool tc_key_ok;

static void
tc_thread_exit(void *arg)
{
	tc_set_t *set = arg;
	if (set == NULL)
		return;
	if (set->life == __atomic_load_n(&pool_life, __ATOMIC_ACQUIRE) &&
	    !pool_forked) {
		for (int k = 0; k < POOL_NKINDS; k++) {
			for (int d = 0; d < POOL_MAX_DEVICES; d++) {
				tcache_t *tc = set->tc[k][d];
				if (tc == NULL)
					continue;
				pool_t *p = tc->pool;
				cw_mutex_lock(&p->lock);
				pool_tc_flush(p, tc);
				cw_mutex_unlock(&p->lock);
				cw_mutex_lock(&p->tcl_lock);
				__atomic_fetch_add(&p->pub->cur_pub,
				    (uint64_t)tc->unpub, __ATOMIC_RELAXED);
				__atomic_fetch_add(&p->pub->tot_pub,
				    tc->tot_unpub, __ATOMIC_RELAXED);
				p->retired_hits += tc->hits;
				p->retired_misses += tc->misses;
				pool_slow_sum(&p->retired_slow, &tc->slow);
				if (tc->prev != NULL)
					tc->prev->next = tc->next;
				else
					p->tcaches = tc->next;
				if (tc->next != NULL)
					tc->next->prev = tc->prev;
				cw_mutex_unlock(&p->tcl_lock);
				__atomic_fetch_sub(&p->pub->ntc, 1,
				    __ATOMIC_RELAXED);
				free(tc);
			}
		}
	}
	if (pool_tls_tcs == set)
		pool_tls_tcs = NULL;
	free(set);
}

static void
tc_key_make(void)
{
	tc_key_ok = pthread_key_create(&tc_key, tc_thread_exit) == 0;
}

/* pool_tc_get's slow path: the set and the cache made here. */
tcache_t *
pool_tc_make(pool_t *p)
{
	tc_set_t *set = pool_tls_tcs;
	uint64_t life = __atomic_load_n(&pool_life, __ATOMIC_ACQUIRE);
	if (set == NULL || set->life != life) {
		if (set == NULL) {
			pthread_once(&tc_key_once, tc_key_make);
			if (!tc_key_ok)
				return NULL;
			set = calloc(1, sizeof(*set));
			if (set == NULL)
				return NULL;
			pool_tls_tcs = set;
			pthread_setspecific(tc_key, set);
		} else {
			/* The caches were freed by pool_reset or belong to
			 * the parent of a fork: forget them. */
			memset(set->tc, 0, sizeof(set->tc));
		}
		set->life = life;
	}
	tcache_t *tc = set->tc[p->kind][p->device];
	if (likely(tc != NULL))
		return likely(tc->pool == p) ? tc : NULL;
	if (p->arena != pool_home_arena())
		return NULL; /* a block of another arena: no cache here */
	tc = calloc(1, sizeof(*tc));
	if (tc == NULL)
		return NULL;
	tc->pool = p;
	tc->gen = __atomic_load_n(&p->flush_gen, __ATOMIC_ACQUIRE);
	tc->incarnation = p->incarnation;
	cw_mutex_lock(&p->tcl_lock);
	tc->next = p->tcaches;
	if (tc->next != NULL)
		tc->next->prev = tc;
	p->tcaches = tc;
	cw_mutex_unlock(&p->tcl_lock);
	__atomic_fetch_add(&p->pub->ntc, 1, __ATOMIC_RELAXED);
	set->tc[p->kind][p->device] = tc;
	return tc;
}

/* The calling thread's cache for p, if it has one (never made here). */
tcache_t *
pool_tc_peek(pool_t *p)
{
	tc_set_t *set = pool_tls_tcs;
	if (set == NULL ||
	    set->life != __atomic_load_n(&pool_life, __ATOMIC_ACQUIRE))
		return NULL;
	tcache_t *tc = set->tc[p->kind][p->device];
	return tc != NULL && tc->pool == p ? tc : NULL;
}

/* Everything cached goes back: ready blocks to the engine, pending ones to
 * the pending list.  p->lock held. */
void
pool_tc_flush(pool_t *p, tcache_t *tc)
{
	if (unlikely(tc->incarnation != p->incarnation)) {
		/* The pool was forgotten (its memory died with the device's
		 * context): drop what this thread cached, give back nothing. */
		memset(tc->bins, 0, sizeof(tc->bins));
		tc->bytes = tc->pend_bytes = tc->unfenced = 0;
		__atomic_store_n(&tc->unpub, 0, __ATOMIC_RELAXED);
		tc->incarnation = p->incarnation;
		tc->gen = __atomic_load_n(&p->flush_gen, __ATOMIC_ACQUIRE);
		return;
	}
	for (unsigned c = 0; c < TC_NBINS; c++) {
		tc_bin_t *b = &tc->bins[c];
		if (b->nready == 0 && b->npend == 0)
			continue;
		size_t cs = sizeclass_size(c, p->lgd);
		for (unsigned i = 0; i < b->nready; i++)
			pool_eng_free(p, b->ready[i], cs);
		for (unsigned i = 0; i < b->npend; i++) {
			tc_ent_t *e = &b->pend[(b->head + i) % TC_CAP];
			if (fence_passed(p->device, e->stamp))
				pool_eng_free(p, e->addr, cs);
			else if (pool_pend_push(p, e->addr, cs, e->stamp, NULL))
				log_warn("pool: pending list full; block lost");
		}
		b->nready = b->npend = b->head = 0;
	}
	tc->bytes = 0;
	tc->pend_bytes = 0;
	tc->gen = __atomic_load_n(&p->flush_gen, __ATOMIC_ACQUIRE);
}

/* The older half of one bin's FIFO goes to the pending list (or to the
 * engine when its fence has passed).  p->lock held. */
void
pool_tc_spill_bin(pool_t *p, tcache_t *tc, tc_bin_t *b, size_t cs)
{
	unsigned n = b->npend > TC_CAP / 2 ? TC_CAP / 2 : b->npend;
	tc_ent_t ents[TC_CAP];
	for (unsigned i = 0; i < n; i++) {
		ents[i] = b->pend[b->head];
		b->head = (uint16_t)((b->head + 1) % TC_CAP);
	}
	b->npend = (uint16_t)(b->npend - n);
	tc->bytes -= n * cs;
	tc->pend_bytes -= n * cs;
	for (unsigned i = 0; i < n; i++) {
		if (fence_passed(p->device, ents[i].stamp))
			pool_eng_free(p, ents[i].addr, cs);
		else if (pool_pend_push(p, ents[i].addr, cs, ents[i].stamp,
		    NULL))
			log_warn("pool: pending list full; block lost");
	}
}
