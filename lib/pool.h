/*
 * pool.h -- the pools, behind cw_alloc/cw_free and the shim's pool mode.
 *
 * Device: our own engine per device (size classes carved from 2 MiB
 * segments for small requests; best fit with split and coalesce, indexed
 * by a (size, address) tree, for large ones; blocks >= CUWARDEN_LARGE_BLOCK
 * get segments of their own).  Pinned and managed: private jemalloc arenas
 * over cuMemHostAlloc / cuMemAllocManaged segments through extent hooks.
 * Reuse fence: a block freed with pool_free is handed out again only
 * after the device work submitted before the free has finished (every
 * stream of the device's primary context); cost amortised, never a
 * synchronise per free: barriers are batched, mostly issued by a helper
 * thread (fence.h).  Per-thread caches on the common path.
 * CUWARDEN_POOL=0: every call goes to direct.h.  doc/pools.md.
 * Owner: pools.
 */
#ifndef CUWARDEN_POOL_H
#define CUWARDEN_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "cuwarden.h"
#include "types.h"

#define POOL_F_OWN_SEGMENT 0x1 /* the block is a whole driver allocation */

/* kind: KIND_DEVICE, KIND_MANAGED or KIND_PINNED.  Returns CW_OK with
 * *addr (and *flags, may be NULL), or CW_ENOMEM after the OOM stages
 * (reuse, trim cached memory, retry) with requested, reserved, allocated
 * and largest free block in cw_last_error; CW_ECUDA, CW_ENODEV. */
int pool_alloc(kind_t kind, int device, size_t size, uintptr_t *addr,
    unsigned *flags);
/* Stream-ordered allocation: a block pool_free_async freed on stream, of
 * the same engine size, is handed out at once (work queued on stream from
 * now on is ordered after the work before that free; elsewhere the memory
 * needs the stream synchronised first, as with cuMemAllocAsync); else
 * pool_alloc. */
int pool_alloc_stream(kind_t kind, int device, size_t size, CUstream stream,
    uintptr_t *addr, unsigned *flags);
/* Synchronous free: reuse only behind the fence. */
int pool_free(kind_t kind, int device, uintptr_t addr, size_t size);
/* Stream-ordered free: reusable at once on stream, elsewhere once the
 * stream has passed the free. */
int pool_free_async(kind_t kind, int device, uintptr_t addr, size_t size,
    CUstream stream);

/* The block (as handed out) containing addr: for the shim's
 * cuMemGetAddressRange / cuPointerGetAttribute answers.  Returns true if
 * addr is not in a block handed out by a pool. */
bool pool_block_of(uintptr_t addr, uintptr_t *base, size_t *size,
    unsigned *flags);
/* Whether addr lies in a segment a pool holds now, handed out or not:
 * such an address is never the driver's to free or describe.  *kind
 * (may be NULL) gets the pool's kind.  Returns true if not.  Cheap for
 * addresses in no pool's 2 MiB page (poolmap_page_held); else takes the
 * pools' locks in turn (for the shim's slow paths only). */
bool pool_segment_of(uintptr_t addr, kind_t *kind);
/* Bytes cached (reserved, not handed out) on device, all kinds that use
 * device memory: cuMemGetInfo counts them as free in pool mode. */
size_t pool_cached_bytes(int device);

int pool_trim(int device);
/* The device's primary context was destroyed or reset (the shim sees
 * cuDevicePrimaryCtxReset, cuCtxDestroy of it, cudaDeviceReset): the driver
 * has freed every segment of the device's pools (and the pinned memory
 * allocated in it).  Forgets them without calling the driver; blocks
 * handed out are gone (pool_block_of no longer finds them), threads' caches
 * are dropped at their next call.  The pools start afresh. */
void pool_forget_device(int device);
void pool_stats(kind_t kind, cw_pool_stats_t *out); /* all devices */
bool pool_enabled(void); /* CUWARDEN_POOL */
/* Thread-cache hits and misses of kind's allocations, all threads (for
 * benchmarks and tests). */
void pool_cache_counters(kind_t kind, uint64_t *hits, uint64_t *misses);
/* The slow paths of the thread caches, all threads: how many and how long
 * (ns, lock waits included).  For benchmarks. */
typedef struct pool_slow_s {
	uint64_t stalls, stall_ns;   /* waited for a barrier on a miss */
	uint64_t miss_waits, miss_wait_ns; /* a running barrier served it */
	uint64_t refills, refill_ns; /* refilled under the pool lock */
	uint64_t shared_frees, shared_free_ns; /* full cache: pending list */
} pool_slow_t;
void pool_slow_counters(kind_t kind, pool_slow_t *out);

void pool_prefork(void);
void pool_postfork_parent(void);
void pool_postfork_child(void); /* forget everything, touch no CUDA */
/* Tests: return all memory to the driver and forget. */
void pool_reset(void);

#endif /* CUWARDEN_POOL_H */
