#include "preamble.h"
/*
 * pool_seg.c -- the pools' segments (pool_int.h): the providers that get
 * them from the driver for the engines (direct.h: cuMemAlloc_v2,
 * cuMemAllocManaged, cuMemHostAlloc), the budget of CUWARDEN_POOL_LIMIT,
 * and the calls into the engines (devpool.c for device memory, the
 * jemalloc arenas of hostpool.c for managed and pinned memory).
 *
 * Owns pool_budget_used: the bytes reserved from the driver per budget
 * (device and managed memory of a device share one, pinned memory has
 * its own) and device.  Invariants: a segment is held in the address map
 * (poolmap_hold) for as long as an engine has it; a budget is raised
 * before the driver is asked and lowered when the call fails or the
 * segment goes back, and a reservation past the limit is refused.  The
 * pool's driver_allocs count failed calls too.
 *
 * Locking: the device provider is called by devpool with p->lock held and
 * drops it around the driver call; the host provider is called from
 * jemalloc's hooks without it (its counters are atomics).  The budgets
 * are atomics.  A pool being forgotten (p->forgetting: its context died)
 * gives segments back without calling the driver.
 */
#include <pthread.h>

#include "devpool.h"
#include "direct.h"
#include "hostpool.h"
#include "lasterr.h"
#include "log.h"
#include "mutex.h"
#include "options.h"
#include "pool_int.h"
#include "poolmap.h"
#include "stackdepot.h"
#include "violation.h"

uint64_t pool_budget_used[POOL_NKINDS][POOL_MAX_DEVICES];

/* --------------------------------------------------------------- budget */

/* Device and managed memory share a device's budget. */
static uint64_t *
budget_of(pool_t *p)
{
	return &pool_budget_used[p->kind == KIND_PINNED ? 1 : 0][p->device];
}

size_t
pool_limit(void)
{
	return (size_t)options_get(OPT_POOL_LIMIT);
}

/* ------------------------------------------------------------ providers */

/* Reserves budget for size bytes.  Returns true if over the limit. */
static bool
budget_take(pool_t *p, size_t size)
{
	size_t limit = pool_limit();
	uint64_t *b = budget_of(p);
	uint64_t now = __atomic_add_fetch(b, size, __ATOMIC_RELAXED);
	if (limit != 0 && now > limit) {
		__atomic_sub_fetch(b, size, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

static void
seg_account(pool_t *p, size_t size, bool add)
{
	if (add) {
		p->driver_allocs++;
		p->res_total += size;
		p->seg_total++;
		return;
	}
	p->driver_frees++;
	__atomic_sub_fetch(budget_of(p), size, __ATOMIC_RELAXED);
}

/* A segment the driver would not take back.  direct_free put it in the
 * failed-free ledger; like every failed free (doc/contracts.md) it is also
 * a failed_free violation, named after the driver call that failed, with
 * no handle: no cw_free was refused, the pool lost a segment. */
static void
seg_free_failed(const pool_t *p, uintptr_t addr, size_t size)
{
	violation_t v = {
		.type = V_FAILED_FREE,
		.api = p->kind == KIND_PINNED ? "cuMemFreeHost" : "cuMemFree_v2",
		.address = addr,
		.size = size,
		.kind = (int)p->kind,
		.device = p->device,
		.owner = 0,
		.cuda_error = lasterr_get()->cuda_error,
		.stack = stack_capture_outside(),
	};
	violation_record(&v);
}

/* A new segment the address map could not hold (no host memory): given
 * back to the driver.  CW_ENOMEM. */
static int
seg_unheld(pool_t *p, uintptr_t addr, size_t size)
{
	log_warn("pool: no host memory to map a %zu-byte %s segment", size,
	    kind_name(p->kind));
	if (direct_free(p->kind, p->device, addr, size) == CW_ECUDA)
		seg_free_failed(p, addr, size);
	return CW_ENOMEM;
}

/* A new segment from the driver, held in the address map.  On failure
 * (its status), the budget budget_take raised is lowered again. */
static int
seg_from_driver(pool_t *p, size_t size, uintptr_t *addr)
{
	int r = direct_alloc(p->kind, p->device, size, addr);
	if (r == CW_OK && poolmap_hold(*addr, size))
		r = seg_unheld(p, *addr, size);
	if (r != CW_OK)
		__atomic_sub_fetch(budget_of(p), size, __ATOMIC_RELAXED);
	return r;
}

/* A segment of a pool being forgotten: the driver freed it already. */
static void
seg_forget(pool_t *p, uintptr_t addr, size_t size)
{
	__atomic_sub_fetch(budget_of(p), size, __ATOMIC_RELAXED);
	poolmap_release(addr, size);
}

/* A segment back to the driver, p->lock not held.  Whatever the driver
 * says, the engine drops it.  Returns true if the driver refused. */
static bool
seg_to_driver(pool_t *p, uintptr_t addr, size_t size)
{
	poolmap_release(addr, size);
	int r = direct_free(p->kind, p->device, addr, size);
	if (r == CW_ECUDA)
		seg_free_failed(p, addr, size);
	return r != CW_OK;
}

/* Device provider: called by devpool with p->lock held; drops it. */
bool
pool_dev_seg_alloc(void *arg, size_t size, uintptr_t *addr)
{
	pool_t *p = arg;
	if (budget_take(p, size)) {
		p->grow_limited = true;
		return true;
	}
	p->grow_limited = false;
	cw_mutex_unlock(&p->lock);
	int r = seg_from_driver(p, size, addr);
	cw_mutex_lock(&p->lock);
	if (r != CW_OK) {
		p->driver_allocs++;
		p->grow_status = r;
		return true;
	}
	seg_account(p, size, true);
	return false;
}

bool
pool_dev_seg_free(void *arg, uintptr_t addr, size_t size)
{
	pool_t *p = arg;
	if (p->forgetting) {
		seg_forget(p, addr, size);
		return false;
	}
	seg_account(p, size, false);
	cw_mutex_unlock(&p->lock);
	bool refused = seg_to_driver(p, addr, size);
	cw_mutex_lock(&p->lock);
	return refused;
}

/* Host provider: called from jemalloc's hooks, p->lock not held. */
bool
pool_host_seg_alloc(void *arg, size_t size, uintptr_t *addr)
{
	pool_t *p = arg;
	if (budget_take(p, size)) {
		__atomic_store_n(&p->grow_limited, true, __ATOMIC_RELAXED);
		return true;
	}
	int r = seg_from_driver(p, size, addr);
	__atomic_fetch_add(&p->driver_allocs, 1, __ATOMIC_RELAXED);
	if (r != CW_OK) {
		__atomic_store_n(&p->grow_status, r, __ATOMIC_RELAXED);
		return true;
	}
	__atomic_fetch_add(&p->res_total, size, __ATOMIC_RELAXED);
	__atomic_fetch_add(&p->seg_total, 1, __ATOMIC_RELAXED);
	return false;
}

bool
pool_host_seg_free(void *arg, uintptr_t addr, size_t size)
{
	pool_t *p = arg;
	if (p->forgetting) {
		seg_forget(p, addr, size);
		return false;
	}
	__atomic_fetch_add(&p->driver_frees, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(budget_of(p), size, __ATOMIC_RELAXED);
	return seg_to_driver(p, addr, size);
}

/* --------------------------------------------------------------- engine */

void
pool_eng_stat(pool_t *p, eng_stat_t *o)
{
	if (p->dp != NULL) {
		devpool_stats_t s;
		devpool_stats(p->dp, &s);
		o->reserved = s.reserved;
		o->segments = s.segments;
		o->largest_free = s.largest_free;
		o->free_bytes = s.free_bytes;
		return;
	}
	hostpool_stats_t s;
	hostpool_stats(p->hp, &s);
	o->reserved = s.reserved;
	o->segments = s.segments;
	o->free_bytes = s.reserved - s.allocated;
	o->largest_free = o->free_bytes;
}

static void
res_sample(pool_t *p)
{
	eng_stat_t e;
	pool_eng_stat(p, &e);
	pool_atomic_max(&p->res_peak, e.reserved);
	pool_atomic_max(&p->seg_peak, e.segments);
}

size_t
pool_eng_reserved(pool_t *p)
{
	eng_stat_t e;
	pool_eng_stat(p, &e);
	return e.reserved;
}

/* p->lock held (dropped and retaken around growth).  Returns a
 * devpool_err_e-like code: 0 or non-zero. */
int
pool_eng_alloc(pool_t *p, size_t size, bool grow, uintptr_t *addr,
    size_t *bs, unsigned *flags)
{
	int r;
	if (p->dp != NULL) {
		r = devpool_alloc(p->dp, size, grow, addr, bs, flags);
		if (r == DEVPOOL_OK && grow)
			res_sample(p);
		return r;
	}
	cw_mutex_unlock(&p->lock);
	bool err = hostpool_alloc(p->hp, size, addr, bs);
	cw_mutex_lock(&p->lock);
	if (err)
		return DEVPOOL_EPROVIDER;
	*flags = 0;
	res_sample(p);
	return DEVPOOL_OK;
}

/* p->lock held. */
void
pool_eng_free(pool_t *p, uintptr_t addr, size_t bsize)
{
	if (p->dp != NULL) {
		if (devpool_free(p->dp, addr))
			log_warn("pool: device block %#lx unknown to the engine",
			    (unsigned long)addr);
		return;
	}
	hostpool_free(p->hp, addr, bsize);
}
