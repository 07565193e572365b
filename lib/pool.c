#include "preamble.h"
/*
 * pool.c -- the front of the pools (pool.h): the API, the choice of a
 * pool (kind, device, the thread's home arena) and the paths of an
 * allocation and a free.  The other parts of the pools are files of their
 * own; pool_int.h lists them, with the invariants and the locking that
 * they share.
 *
 * One pool per (kind, device) for devices 0..POOL_MAX_DEVICES-1 (others
 * go straight to direct.h), in 1..POOL_ARENAS arenas (CUWARDEN_POOL_ARENAS,
 * default one per 4 CPUs), made on first use: each arena is a pool_t with
 * its own lock, engine and pending list; a thread allocates from its home
 * arena; a block goes back to the arena it came from (poolmap keeps it),
 * through the freeing thread's cache only when that is its home.  The
 * allocation counters (pool_pub_t) and the budget are shared by a (kind,
 * device)'s arenas.  Engines: devpool.c for device memory, hostpool.c
 * (jemalloc) for managed and pinned.
 *
 * Paths.
 *   alloc, size < large_block: the thread's cache for (kind, device) has,
 *     per size class, a stack of ready blocks and a FIFO of freed blocks
 *     stamped with the fence epoch; a block leaves the FIFO only once
 *     fence_passed(stamp).  A miss refills a few blocks under the pool
 *     lock.  No shared lock and no shared write on a hit.
 *   free, size < large_block: onto the FIFO (stamp = fence_stamp).  A full
 *     FIFO spills to the pool's pending list; a full cache (tc_cap: 1/256
 *     of the device's memory, 8 to 128 MiB) sends the block there.
 *   large blocks, stream-ordered frees, threads without a cache: the
 *     pool's pending list under the pool lock.
 *   Pending blocks reach the engine when their stamp has passed (or their
 *     event has completed).  Barriers (one cuCtxSynchronize, fence.c): a
 *     thread whose cache took tc_ask bytes of frees since the fence last
 *     moved asks the helper thread for one and goes on; a thread at tc_sync
 *     bytes that misses waits for one; an allocation that misses while the
 *     pool's pending list passed max(32 MiB, reserved / 16) issues one; so
 *     does an allocation that would grow while a pending block fits it:
 *     it asks the helper and waits at most FENCE_REUSE_WAIT_NS for that
 *     barrier (pool_reuse_barrier, pool_pend.c); so do the OOM stages and
 *     pool_trim (pool_oom.c).
 *
 * Owns pool_table, pool_pubs, the arena count and turn, pool_life and
 * pool_forked (pool_int.h).  Locking here: pool_init_lock around a pool's
 * creation; a hit takes no lock; a miss, a spill, a full cache and a
 * free that bypasses the cache take p->lock, never across a driver call.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "devpool.h"
#include "direct.h"
#include "driver.h"
#include "fence.h"
#include "hostpool.h"
#include "lasterr.h"
#include "log.h"
#include "mutex.h"
#include "options.h"
#include "pool.h"
#include "pool_int.h"
#include "poolmap.h"
#include "sizeclass.h"

#ifndef TC_MAX_BYTES
#define TC_MAX_BYTES ((size_t)128 << 20)     /* cached per thread and pool */
#endif
#define TC_MIN_BYTES ((size_t)8 << 20)
#ifndef TC_PEND_ASK
#define TC_PEND_ASK ((size_t)16 << 20)      /* unfenced: ask the helper */
#endif
#ifndef TC_PEND_SYNC
#define TC_PEND_SYNC ((size_t)64 << 20)     /* unfenced: barrier on a miss */
#endif

pool_t pool_table[POOL_NKINDS][POOL_MAX_DEVICES][POOL_ARENAS];
pool_pub_t pool_pubs[POOL_NKINDS][POOL_MAX_DEVICES];
unsigned pool_narenas;
unsigned pool_arena_turn;
cw_mutex_t pool_init_lock = CW_MUTEX_INITIALIZER(LOCK_RANK_POOL_INIT);
uint64_t pool_life = 1;
bool pool_forked;
CW_TLS unsigned pool_tls_home = UINT32_MAX;

/* --------------------------------------------------------------- arenas */

/* What a thread may cache per pool: 1/256 of the device's memory (or of
 * CUWARDEN_POOL_LIMIT), between 8 and 128 MiB, so that the caches of many
 * threads never hold much of a small device. */
static size_t
tc_cap_for(int device)
{
	size_t total = 0, free_b = 0, limit = pool_limit();
	const driver_fns_t *d = driver_get();
	CUcontext prev;
	if (d != NULL && d->cuMemGetInfo_v2 != NULL &&
	    driver_bind_save(device, &prev) == CW_OK) {
		if (d->cuMemGetInfo_v2(&free_b, &total) != CUDA_SUCCESS)
			total = 0;
		driver_restore(prev);
	}
	if (limit != 0 && (total == 0 || limit < total))
		total = limit;
	size_t cap = total / 256;
	if (cap < TC_MIN_BYTES)
		cap = TC_MIN_BYTES;
	if (cap > TC_MAX_BYTES)
		cap = TC_MAX_BYTES;
	return cap;
}

/* CUWARDEN_POOL_ARENAS, or one arena per 4 online CPUs (1..4). */
static unsigned
arenas_wanted(void)
{
	long n = (long)options_get(OPT_POOL_ARENAS);
	if (n <= 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		n = cpus / 4;
	}
	if (n < 1)
		n = 1;
	if (n > POOL_ARENAS)
		n = POOL_ARENAS;
	return (unsigned)n;
}

static bool
pool_init_locked(pool_t *p, kind_t kind, int device, unsigned arena,
    size_t tc_cap)
{
	size_t large = devpool_large_block(
	    (size_t)options_get(OPT_LARGE_BLOCK));
	memset(p, 0, sizeof(*p));
	/* The lock's holds are short (a refill: about a microsecond) and,
	 * with many threads, frequent: an adaptive mutex spins a little
	 * before sleeping, where a futex sleep and wake-up (tens of
	 * microseconds in a VM) would turn each contended refill into a
	 * convoy. */
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
#ifndef CW_PLAIN_POOL_LOCK /* comparison builds (doc/benchmarks.md, Threads) */
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	cw_mutex_init_attr(&p->lock, &ma, LOCK_RANK_POOL);
	pthread_mutexattr_destroy(&ma);
	cw_mutex_init(&p->tcl_lock, LOCK_RANK_POOL_TCACHE);
	p->kind = kind;
	p->device = device;
	p->arena = arena;
	p->pub = &pool_pubs[kind][device];
	p->large = large;
	p->lgd = kind == KIND_DEVICE ? SIZECLASS_LGD_DEVICE :
	    SIZECLASS_LGD_HOST;
	p->tc_max = large < TC_MAX_CLASS_SIZE ? large : TC_MAX_CLASS_SIZE;
	p->tc_cap = tc_cap;
	/* Bigger ones lost hit rate (doc/benchmarks.md, "What was tried"). */
	p->tc_ask = tc_cap / 2 < TC_PEND_ASK ? tc_cap / 2 : TC_PEND_ASK;
	p->tc_sync = tc_cap < TC_PEND_SYNC ? tc_cap : TC_PEND_SYNC;
	if (kind == KIND_DEVICE) {
		devpool_config_t cfg = { 0, large, 0, 0 };
		devpool_provider_t prov = { pool_dev_seg_alloc,
			pool_dev_seg_free, p };
		p->dp = devpool_create(&cfg, &prov);
		if (p->dp == NULL)
			return true;
	} else {
		hostpool_provider_t prov = { pool_host_seg_alloc,
			pool_host_seg_free, p };
		p->hp = hostpool_create(&prov, 0, 0);
		if (p->hp == NULL)
			return true;
	}
	__atomic_store_n(&p->inited, true, __ATOMIC_RELEASE);
	return false;
}

/* The calling thread's pool (its home arena) for (kind, device), made on
 * first use. */
static pool_t *
pool_get(kind_t kind, int device)
{
	if (unlikely(__atomic_load_n(&pool_narenas, __ATOMIC_ACQUIRE) == 0)) {
		unsigned want = arenas_wanted();
		unsigned zero = 0;
		__atomic_compare_exchange_n(&pool_narenas, &zero, want, false,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
	unsigned arena = pool_home_arena();
	pool_t *p = &pool_table[kind][device][arena];
	if (likely(__atomic_load_n(&p->inited, __ATOMIC_ACQUIRE)))
		return p;
	size_t cap = tc_cap_for(device); /* a driver call: before the lock */
	cw_mutex_lock(&pool_init_lock);
	bool err = !p->inited && pool_init_locked(p, kind, device, arena,
	    cap);
	cw_mutex_unlock(&pool_init_lock);
	return err ? NULL : p;
}

/* ------------------------------------------------------------- hit path */

/* The peak is an upper bound of the allocated bytes, not an exact
 * figure: the bytes allocated now are the published sum plus every
 * thread's unpublished count, and a thread knows only its own.  Each
 * other thread holds less than PUBLISH_BYTES unpublished, so the bytes
 * allocated at the moment of this allocation are at most cur_pub + u +
 * (ntc - 1) * PUBLISH_BYTES; with one thread that is exact.  pool_stats
 * caps it further by the total allocated and the reserved peak. */
static inline void
count_alloc(pool_t *p, tcache_t *tc, size_t size)
{
	if (tc != NULL) {
		int64_t u = tc->unpub + (int64_t)size;
		__atomic_store_n(&tc->unpub, u, __ATOMIC_RELAXED);
		__atomic_store_n(&tc->tot_unpub, tc->tot_unpub + size,
		    __ATOMIC_RELAXED);
		int64_t others = (int64_t)__atomic_load_n(&p->pub->ntc,
		    __ATOMIC_RELAXED) - 1;
		int64_t cur = (int64_t)__atomic_load_n(&p->pub->cur_pub,
		    __ATOMIC_RELAXED) + u + (others > 0 ? others : 0) *
		    PUBLISH_BYTES;
		if (cur > 0 && (uint64_t)cur >
		    __atomic_load_n(&p->pub->peak, __ATOMIC_RELAXED))
			pool_atomic_max(&p->pub->peak, (uint64_t)cur);
		if (u >= PUBLISH_BYTES)
			pool_publish(p, tc);
		return;
	}
	int64_t cur = (int64_t)__atomic_add_fetch(&p->pub->cur_pub, size,
	    __ATOMIC_RELAXED);
	__atomic_fetch_add(&p->pub->tot_pub, size, __ATOMIC_RELAXED);
	int64_t others = (int64_t)__atomic_load_n(&p->pub->ntc,
	    __ATOMIC_RELAXED);
	cur += others * PUBLISH_BYTES;
	if (cur > 0)
		pool_atomic_max(&p->pub->peak, (uint64_t)cur);
}

static inline void
count_free(pool_t *p, tcache_t *tc, size_t size)
{
	if (tc != NULL) {
		int64_t u = tc->unpub - (int64_t)size;
		__atomic_store_n(&tc->unpub, u, __ATOMIC_RELAXED);
		if (u <= -PUBLISH_BYTES)
			pool_publish(p, tc);
		return;
	}
	__atomic_sub_fetch(&p->pub->cur_pub, size, __ATOMIC_RELAXED);
}

/* The slow paths of a thread's cache are timed (a clock read each side,
 * on under 1 % of calls) so that a benchmark can say where the time of a
 * many-thread run goes.  Written by the owning thread only. */
static inline uint64_t
slow_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void
slow_add(uint64_t *n, uint64_t *ns, uint64_t t0)
{
	__atomic_store_n(n, *n + 1, __ATOMIC_RELAXED);
	__atomic_store_n(ns, *ns + (slow_clock() - t0), __ATOMIC_RELAXED);
}

static inline bool
tc_pop(pool_t *p, tc_bin_t *b, size_t cs, tcache_t *tc, uintptr_t *addr)
{
	if (b->nready > 0) {
		*addr = b->ready[--b->nready];
		tc->bytes -= cs;
		return true;
	}
	if (b->npend > 0 && fence_passed(p->device, b->pend[b->head].stamp)) {
		*addr = b->pend[b->head].addr;
		b->head = (uint16_t)((b->head + 1) % TC_CAP);
		b->npend--;
		tc->bytes -= cs;
		tc->pend_bytes -= cs;
		return true;
	}
	return false;
}

/* ------------------------------------------------------------------ API */

bool
pool_enabled(void)
{
	return options_get_bool(OPT_POOL);
}

static int
bad_kind(kind_t kind)
{
	return lasterr_set(CW_EINVAL, "pool_alloc", "kind %d has no pool",
	    (int)kind);
}

/* poolmap_set failed (no host memory): the block, not handed out after
 * all, goes back through the pending list. */
static int
unmapped(pool_t *p, uintptr_t a, size_t size)
{
	cw_mutex_lock(&p->lock);
	if (pool_pend_push(p, a, pool_eng_size(p, size),
	    fence_stamp(p->device), NULL))
		log_warn("pool: block %#lx lost", (unsigned long)a);
	cw_mutex_unlock(&p->lock);
	return lasterr_set(CW_ENOMEM, "pool_alloc", "no host memory for the "
	    "address map");
}

/* Block a of p goes to the caller: into the address map (with its arena),
 * counted (in tc's share when the thread has a cache). */
static int
hand_out(pool_t *p, tcache_t *tc, uintptr_t a, size_t size, unsigned fl,
    uintptr_t *addr, unsigned *flags)
{
	if (unlikely(poolmap_set(a, size, p->kind, fl |
	    POOLMAP_F_ARENA(p->arena))))
		return unmapped(p, a, size);
	count_alloc(p, tc, size);
	*addr = a;
	if (flags != NULL)
		*flags = fl;
	return CW_OK;
}

int
pool_alloc(kind_t kind, int device, size_t size, uintptr_t *addr,
    unsigned *flags)
{
	if (!pool_kind_pooled(kind))
		return bad_kind(kind);
	if (size == 0)
		return lasterr_set(CW_EINVAL, "pool_alloc", "size is 0");
	if (!pool_enabled() || device < 0 || device >= POOL_MAX_DEVICES) {
		int st = direct_alloc(kind, device, size, addr);
		if (st == CW_OK && flags != NULL)
			*flags = POOL_F_OWN_SEGMENT;
		return st;
	}
	if (unlikely(pool_forked))
		return lasterr_set(CW_ENODEV, "pool_alloc", "CUDA is unusable "
		    "in a forked child until exec");
	pool_t *p = pool_get(kind, device);
	if (p == NULL)
		return lasterr_set(CW_ENOMEM, "pool_alloc", "no host memory "
		    "for the pool of %s memory", kind_name(kind));
	unsigned fl = 0;
	size_t bs = 0;
	uintptr_t a = 0;
	tcache_t *tc = NULL;
	int r;
	if (size < p->tc_max && (tc = pool_tc_get(p)) != NULL) {
		if (unlikely(tc->gen != __atomic_load_n(&p->flush_gen,
		    __ATOMIC_RELAXED))) {
			cw_mutex_lock(&p->lock);
			pool_tc_flush(p, tc);
			cw_mutex_unlock(&p->lock);
		}
		unsigned c = sizeclass_of(size, p->lgd);
		size_t cs = sizeclass_size(c, p->lgd);
		tc_bin_t *b = &tc->bins[c];
		if (likely(tc_pop(p, b, cs, tc, &a))) {
			__atomic_store_n(&tc->hits, tc->hits + 1,
			    __ATOMIC_RELAXED);
			goto done;
		}
		__atomic_store_n(&tc->misses, tc->misses + 1, __ATOMIC_RELAXED);
		/* Enough of this thread's frees wait for the fence, among
		 * them this class's oldest: one barrier (no lock of ours
		 * held) makes them ready.  A barrier already running that
		 * covers that block is waited for instead of issuing
		 * another, so threads share barriers.  Refilling first cost
		 * hit rate (doc/benchmarks.md, "What was tried"). */
		if (b->npend > 0 && tc->unfenced >= p->tc_sync &&
		    tc->seen_done == fence_done(device)) {
			uint64_t t0 = slow_clock();
			tc->unfenced = 0;
			if (!fence_barrier_for(device, b->pend[b->head].stamp))
				__atomic_fetch_add(&p->fence_waits, 1,
				    __ATOMIC_RELAXED);
			bool hit = tc_pop(p, b, cs, tc, &a);
			slow_add(&tc->slow.stalls, &tc->slow.stall_ns, t0);
			if (hit)
				goto done;
		}
#ifndef CW_NO_MISS_WAIT /* comparison builds (doc/benchmarks.md, Threads) */
		/* A barrier running now covers this class's oldest pending
		 * block: waiting for it (a microsecond on an idle device) is
		 * cheaper than a refill under the pool lock, which with many
		 * threads convoys, and keeps the cache from growing. */
		if (b->npend > 0) {
			uint64_t t0 = slow_clock();
			bool ok = fence_wait_running(device,
			    b->pend[b->head].stamp, FENCE_MISS_WAIT_NS) &&
			    tc_pop(p, b, cs, tc, &a);
			if (ok) {
				slow_add(&tc->slow.miss_waits,
				    &tc->slow.miss_wait_ns, t0);
				goto done;
			}
		}
#endif
		/* Refill: one block now, a few more into the stack. */
		uint64_t t0 = slow_clock();
		cw_mutex_lock(&p->lock);
		pool_publish(p, tc);
		r = pool_alloc_staged(p, tc, cs, size, &a, &bs, &fl);
		if (r == CW_OK) {
			unsigned more = (unsigned)((256u << 10) / cs);
			if (more > 7)
				more = 7;
			while (more-- > 0 && b->nready < TC_CAP &&
			    tc->bytes + cs <= p->tc_cap) {
				uintptr_t x;
				size_t xb;
				unsigned xf;
				if (p->dp != NULL ? pool_eng_alloc(p, cs, false,
				    &x, &xb, &xf) != DEVPOOL_OK : true)
					break;
				b->ready[b->nready++] = x;
				tc->bytes += cs;
			}
		}
		cw_mutex_unlock(&p->lock);
		slow_add(&tc->slow.refills, &tc->slow.refill_ns, t0);
		if (r != CW_OK)
			return r;
		fl = 0;
		goto done;
	}
	tc = NULL;
	cw_mutex_lock(&p->lock);
	/* The OOM stages flush this thread's cache, if it has one.  The
	 * engine size is the one pool_free gives back (a class size below
	 * tc_max, for a thread that has no cache too). */
	r = pool_alloc_staged(p, pool_tc_peek(p), pool_eng_size(p, size), size,
	    &a, &bs, &fl);
	cw_mutex_unlock(&p->lock);
	if (r != CW_OK)
		return r;
done:
	return hand_out(p, tc, a, size, fl, addr, flags);
}

int
pool_alloc_stream(kind_t kind, int device, size_t size, CUstream stream,
    uintptr_t *addr, unsigned *flags)
{
	if (pool_kind_pooled(kind) && size > 0 && pool_enabled() &&
	    device >= 0 && device < POOL_MAX_DEVICES && !pool_forked) {
		pool_t *p;
		uintptr_t a;
		/* The block went back to the arena it came from: look in
		 * each. */
		FOR_ARENAS(p, kind, device) {
			if (__atomic_load_n(&p->nev, __ATOMIC_RELAXED) == 0 ||
			    !pool_pend_take_stream(p, size, stream, &a))
				continue;
			/* Device blocks of large_block and more have a
			 * segment of their own (devpool.h). */
			unsigned fl = p->dp != NULL && size >= p->large ?
			    POOL_F_OWN_SEGMENT : 0;
			return hand_out(p, NULL, a, size, fl, addr, flags);
		}
	}
	return pool_alloc(kind, device, size, addr, flags);
}

static int
free_common(kind_t kind, int device, uintptr_t addr, size_t size,
    CUstream stream, bool async)
{
	if (!pool_kind_pooled(kind))
		return bad_kind(kind);
	if (!pool_enabled() || device < 0 || device >= POOL_MAX_DEVICES)
		return direct_free(kind, device, addr, size);
	if (unlikely(pool_forked))
		return CW_OK; /* the parent's memory: not ours to free */
	uintptr_t base;
	size_t msize;
	unsigned mkind, mflags;
	if (poolmap_lookup(addr, &base, &msize, &mkind, &mflags) ||
	    base != addr || mkind != (unsigned)kind) {
		lasterr_set(CW_EINVAL, "pool_free", "%#lx is not the start of "
		    "a pooled %s block", (unsigned long)addr, kind_name(kind));
		lasterr_get()->address = addr;
		return CW_EINVAL;
	}
	/* Back to the arena it came from; the thread's cache only when
	 * that is the thread's own arena (pool_tc_get answers NULL
	 * otherwise). */
	pool_t *p = &pool_table[kind][device][POOLMAP_ARENA_OF(mflags)];
	if (!__atomic_load_n(&p->inited, __ATOMIC_ACQUIRE))
		return lasterr_set(CW_EINVAL, "pool_free", "%#lx is not a "
		    "pooled block", (unsigned long)addr);
	poolmap_clear(addr);
	tcache_t *tc = NULL;
	if (!async && size < p->tc_max && (tc = pool_tc_get(p)) != NULL) {
		unsigned c = sizeclass_of(size, p->lgd);
		size_t cs = sizeclass_size(c, p->lgd);
		tc_bin_t *b = &tc->bins[c];
		if (unlikely(tc->gen != __atomic_load_n(&p->flush_gen,
		    __ATOMIC_RELAXED))) {
			cw_mutex_lock(&p->lock);
			pool_publish(p, tc);
			pool_tc_flush(p, tc);
			cw_mutex_unlock(&p->lock);
		}
		if (unlikely(tc->bytes + cs > p->tc_cap)) {
			/* The cache is full: this block goes to the pool's
			 * pending list; what is cached stays. */
			count_free(p, tc, size);
			uint64_t t0 = slow_clock();
			cw_mutex_lock(&p->lock);
			bool err = pool_pend_push(p, addr, cs,
			    fence_stamp(device), NULL);
			cw_mutex_unlock(&p->lock);
			slow_add(&tc->slow.shared_frees,
			    &tc->slow.shared_free_ns, t0);
			if (err)
				log_warn("pool: no host memory for the pending "
				    "list; block %#lx is lost",
				    (unsigned long)addr);
			return CW_OK;
		}
		if (unlikely(b->npend == TC_CAP)) {
			cw_mutex_lock(&p->lock);
			pool_publish(p, tc);
			pool_tc_spill_bin(p, tc, b, cs);
			cw_mutex_unlock(&p->lock);
		}
		unsigned slot = (b->head + b->npend) % TC_CAP;
		b->pend[slot].addr = addr;
		b->pend[slot].stamp = fence_stamp(device);
		b->npend++;
		tc->bytes += cs;
		tc->pend_bytes += cs;
		uint64_t done = fence_done(device);
		if (done != tc->seen_done) {
			tc->seen_done = done;
			tc->unfenced = 0;
			tc->asked = false;
		}
		tc->unfenced += cs;
		if (unlikely(tc->unfenced >= p->tc_ask && !tc->asked)) {
			/* Ready before they are needed: the helper thread
			 * synchronises while this thread goes on. */
			tc->asked = true;
			fence_request(device, b->pend[slot].stamp);
		}
		count_free(p, tc, size);
		return CW_OK;
	}
	count_free(p, NULL, size);
	uint64_t stamp = fence_stamp(device);
	CUevent ev = NULL;
	if (async)
		ev = fence_event_record(device, stream);
	size_t bs = pool_eng_size(p, size);
	cw_mutex_lock(&p->lock);
	bool err = pool_pend_push(p, addr, bs, stamp, ev);
	if (!err && ev != NULL)
		p->pend[p->npend - 1].stream = stream;
	cw_mutex_unlock(&p->lock);
	if (err) {
		if (ev != NULL)
			fence_event_release(device, ev);
		log_warn("pool: no host memory for the pending list; block "
		    "%#lx is lost", (unsigned long)addr);
	}
	return CW_OK;
}

int
pool_free(kind_t kind, int device, uintptr_t addr, size_t size)
{
	return free_common(kind, device, addr, size, NULL, false);
}

int
pool_free_async(kind_t kind, int device, uintptr_t addr, size_t size,
    CUstream stream)
{
	return free_common(kind, device, addr, size, stream, true);
}
