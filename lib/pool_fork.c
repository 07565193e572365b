#include "preamble.h"
/*
 * pool_fork.c -- the pools' fork hooks, their teardown when a device's
 * context dies (pool_forget_device) and the tests' reset (pool.h).
 *
 * Owns no state: it clears the pools' (pool_table, pool_pubs, the
 * budgets, pool_life, pool_forked).  Invariants: after
 * pool_forget_device a device's pools hold no segment, pending block or
 * event of the dead context, and have a new incarnation (threads drop
 * their caches for them at their next call); in a fork child every pool
 * is forgotten without touching CUDA and pool_forked is set (allocations
 * fail with CW_ENODEV, frees of the parent's blocks do nothing) until
 * pool_reset; pool_life moves on every reset and in the child, so that
 * every thread cache made before is forgotten.
 *
 * Locking: pool_prefork takes pool_init_lock, then each initialised
 * pool's lock, then each one's tcl_lock (ranks POOL_INIT, POOL,
 * POOL_TCACHE; kinds, devices and arenas in order), then the fence's
 * (fence_prefork); pool_postfork_parent releases them.  pool_forget_device takes one pool lock at a
 * time and drops it around hostpool_destroy.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "devpool.h"
#include "fence.h"
#include "hostpool.h"
#include "mutex.h"
#include "pool_int.h"
#include "poolmap.h"

void
pool_forget_device(int device)
{
	if (device < 0 || device >= POOL_MAX_DEVICES)
		return;
	for (int k = 0; k < POOL_NKINDS; k++) {
		__atomic_store_n(&pool_pubs[k][device].cur_pub, 0,
		    __ATOMIC_RELAXED);
		pool_t *p;
		FOR_ARENAS(p, k, device) {
		cw_mutex_lock(&p->lock);
		p->forgetting = true;
		/* Pending blocks and their events died with the context. */
		p->npend = 0;
		p->pend_bytes = 0;
		p->nev = 0;
		p->scanned_done = 0;
		if (p->dp != NULL) {
			devpool_destroy(p->dp); /* segments: map cleared only */
			devpool_config_t cfg = { 0, p->large, 0, 0 };
			devpool_provider_t prov = { pool_dev_seg_alloc,
				pool_dev_seg_free, p };
			p->dp = devpool_create(&cfg, &prov);
		}
		hostpool_t *old = p->hp;
		if (old != NULL) {
			hostpool_provider_t prov = { pool_host_seg_alloc,
				pool_host_seg_free, p };
			p->hp = hostpool_create(&prov, 0, 0);
		}
		cw_mutex_unlock(&p->lock);
		if (old != NULL)
			hostpool_destroy(old); /* segments: map cleared only */
		cw_mutex_lock(&p->lock);
		p->forgetting = false;
		p->incarnation++;
		__atomic_fetch_add(&p->flush_gen, 1, __ATOMIC_RELEASE);
		if ((p->kind == KIND_DEVICE && p->dp == NULL) ||
		    (p->kind != KIND_DEVICE && p->hp == NULL))
			__atomic_store_n(&p->inited, false, __ATOMIC_RELEASE);
		cw_mutex_unlock(&p->lock);
		}
	}
	fence_forget_device(device);
}

/* ----------------------------------------------------------------- fork */

#define POOL_COUNT (POOL_NKINDS * POOL_MAX_DEVICES * POOL_ARENAS)

/* Rank order: pool_init_lock, every initialised pool's lock in table
 * order, every tcl_lock (a pool lock's holder may take tcl_locks:
 * pool_oom.c's others_cache), then the fence's. */
void
pool_prefork(void)
{
	pool_t *all = &pool_table[0][0][0];

	cw_mutex_prefork(&pool_init_lock);
	for (size_t i = 0; i < POOL_COUNT; i++)
		if (all[i].inited)
			cw_mutex_prefork(&all[i].lock);
	for (size_t i = 0; i < POOL_COUNT; i++)
		if (all[i].inited)
			cw_mutex_prefork(&all[i].tcl_lock);
	fence_prefork();
}

void
pool_postfork_parent(void)
{
	pool_t *all = &pool_table[0][0][0];

	fence_postfork_parent();
	for (size_t i = POOL_COUNT; i-- > 0; )
		if (all[i].inited)
			cw_mutex_postfork_parent(&all[i].tcl_lock);
	for (size_t i = POOL_COUNT; i-- > 0; )
		if (all[i].inited)
			cw_mutex_postfork_parent(&all[i].lock);
	cw_mutex_postfork_parent(&pool_init_lock);
}

void
pool_postfork_child(void)
{
	/* Forget everything (the engines and caches leak: they describe the
	 * parent's memory); touch no CUDA. */
	fence_postfork_child();
	poolmap_reset(true);
	memset(pool_table, 0, sizeof(pool_table));
	memset(pool_pubs, 0, sizeof(pool_pubs));
	memset(pool_budget_used, 0, sizeof(pool_budget_used));
	__atomic_fetch_add(&pool_life, 1, __ATOMIC_RELEASE);
	pool_forked = true;
	cw_mutex_postfork_child(&pool_init_lock);
}

void
pool_reset(void)
{
	for (int k = 0; k < POOL_NKINDS; k++) {
		for (int d = 0; d < POOL_MAX_DEVICES; d++) {
		for (int a = 0; a < POOL_ARENAS; a++) {
			pool_t *p = &pool_table[k][d][a];
			if (!p->inited)
				continue;
			cw_mutex_lock(&p->lock);
			for (size_t i = 0; i < p->npend; i++)
				if (p->pend[i].ev != NULL)
					fence_event_release(d, p->pend[i].ev);
			free(p->pend);
			p->pend = NULL;
			p->npend = 0;
			if (p->dp != NULL)
				devpool_destroy(p->dp); /* drops the lock */
			cw_mutex_unlock(&p->lock);
			if (p->hp != NULL)
				hostpool_destroy(p->hp);
			p->dp = NULL;
			p->hp = NULL;
			tcache_t *t = p->tcaches;
			while (t != NULL) {
				tcache_t *n = t->next;
				free(t);
				t = n;
			}
			cw_mutex_destroy(&p->lock);
			cw_mutex_destroy(&p->tcl_lock);
			memset(p, 0, sizeof(*p));
		}
		}
	}
	memset(pool_pubs, 0, sizeof(pool_pubs));
	memset(pool_budget_used, 0, sizeof(pool_budget_used));
	__atomic_store_n(&pool_narenas, 0, __ATOMIC_RELEASE);
	__atomic_fetch_add(&pool_life, 1, __ATOMIC_RELEASE);
	poolmap_reset(false);
	fence_reset();
	pool_forked = false;
}
