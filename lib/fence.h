/*
 * fence.h -- the reuse fence: freed memory is handed out again only after
 * the device work submitted before the free has finished.
 *
 * Per device, an epoch.  A free is stamped with the current epoch
 * (fence_stamp).  A barrier takes the epoch e and advances it, then
 * synchronises the device's primary context (cuCtxSynchronize: every
 * stream of that context, blocking or not); when it returns, every free
 * stamped <= e is safe (fence_passed).  Barriers are amortised by the
 * pools (one per many frees), never one per free.  Stream-ordered frees
 * also record an event on their stream; such a block is safe once the
 * event has completed, or after any later barrier.  Threads may also ask
 * a helper thread for a barrier without waiting (fence_request).
 *
 * Limits: work in other contexts of the device (cuCtxCreate) is not
 * waited for; nor is work submitted by other processes.  Owner: pools.
 */
#ifndef CUWARDEN_FENCE_H
#define CUWARDEN_FENCE_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

/* The pools and the fence serve devices 0..FENCE_MAX_DEVICES-1 (their
 * tables are per device; a call for a higher ordinal is forwarded), a
 * subset of the devices the driver layer knows (DRIVER_MAX_DEVICES). */
#define FENCE_MAX_DEVICES 16

typedef struct fence_dev_s {
	uint64_t epoch;  /* stamp of frees made now */
	uint64_t done;   /* frees stamped <= done are safe */
	uint64_t barriers;
	uint64_t failures; /* driver calls of the fence that failed */
	uint64_t last_ns;  /* how long the last barrier's synchronise took */
	uint64_t deferred; /* barriers not taken: a stream capture was on */
	char pad[16];
} fence_dev_t;

extern fence_dev_t fence_devs[FENCE_MAX_DEVICES];

static inline uint64_t
fence_stamp(int device)
{
	return __atomic_load_n(&fence_devs[device].epoch, __ATOMIC_SEQ_CST);
}

static inline bool
fence_passed(int device, uint64_t stamp)
{
	return stamp <= __atomic_load_n(&fence_devs[device].done,
	    __ATOMIC_ACQUIRE);
}

static inline uint64_t
fence_done(int device)
{
	return __atomic_load_n(&fence_devs[device].done, __ATOMIC_ACQUIRE);
}

/* One device-wide barrier (no lock of ours held across the driver call).
 * Returns true on error (the epoch does not advance). */
bool fence_barrier(int device);
/* The same, for frees stamped <= stamp: waits for a barrier already
 * running that covers them rather than issuing another. */
bool fence_barrier_for(int device, uint64_t stamp);

/* Waits at most max_ns for a barrier covering frees stamped <= stamp,
 * made by the helper thread, which is woken at once (no pacing).  On an
 * idle device that takes microseconds; with a kernel running the wait
 * ends at max_ns and the caller grows instead of waiting for the kernel.
 * Returns true when the frees are covered. */
bool fence_wait_for(int device, uint64_t stamp, uint64_t max_ns);

/* How long an allocation that would otherwise grow a pool waits for a
 * barrier that lets it reuse a pending block (pool_reuse_barrier,
 * pool_pend.c): an idle device's barrier, with the helper's wake-up,
 * takes a few microseconds; a new segment costs the driver 70 us
 * (device) to over a millisecond (pinned). */
#define FENCE_REUSE_WAIT_NS 100000u
/* That wait now: FENCE_REUSE_WAIT_NS unless a test set another. */
uint64_t fence_reuse_wait(void);
/* Tests: a wait no scheduler delay can outlast makes reuse of a pending
 * block depend on the pool's logic alone, not on when the helper thread
 * ran; 0 restores FENCE_REUSE_WAIT_NS. */
void fence_set_reuse_wait(uint64_t ns);
/* The helper, out of requests, polls this long before it sleeps. */
#define FENCE_HELPER_SPIN_NS 50000u
/* fence_wait_for: how long the helper may take to start that barrier. */
#define FENCE_START_WAIT_NS 2000000u

/* Waits at most max_ns for a barrier already running that covers frees
 * stamped <= stamp; starts none.  Returns true when they are covered. */
bool fence_wait_running(int device, uint64_t stamp, uint64_t max_ns);
/* A thread-cache miss whose oldest pending block a running barrier covers
 * waits this long for it rather than refilling under the pool lock. */
#define FENCE_MISS_WAIT_NS 50000u

/* The helper starts a barrier no sooner than max(FENCE_HELPER_GAP_NS,
 * 2 x the last synchronise, at most FENCE_HELPER_GAP_MAX_NS) after its
 * last one ended: one barrier serves every request made meanwhile. */
#ifndef FENCE_HELPER_GAP_NS
#define FENCE_HELPER_GAP_NS 20000u
#endif
#ifndef FENCE_HELPER_GAP_MAX_NS
#define FENCE_HELPER_GAP_MAX_NS 1000000u
#endif

/* Asks the helper thread for a barrier covering frees stamped <= stamp,
 * without waiting (it is started on first use).  Returns true when there
 * is no helper (the thread could not be made): the caller then relies on
 * synchronous barriers. */
bool fence_request(int device, uint64_t stamp);
/* Barriers not taken because a stream capture was in progress
 * (capture.h), over every device. */
uint64_t fence_deferred(void);
/* Barriers the helper has made (tests, benchmarks). */
uint64_t fence_helper_barriers(void);
/* Helper threads started and not yet exited: 0 or 1 (tests). */
unsigned fence_helper_threads(void);
/* The highest stamp the helper was asked to see passed on device, kept
 * once served; 0 when none, or when the barrier made for it failed and
 * the request was dropped (tests). */
uint64_t fence_helper_wanted(int device);

/* Records an event on stream for a stream-ordered free; NULL when that
 * fails (the caller relies on the epoch alone). */
CUevent fence_event_record(int device, CUstream stream);
/* 1: the event has completed; 0: not yet; -1: the query failed. */
int fence_event_query(int device, CUevent ev);
/* Gives the event back to the device's free list. */
void fence_event_release(int device, CUevent ev);

/* Tests: fail the n-th call from now of op ("sync", "event_create",
 * "event_record", "event_query"), as if the driver had refused it; n = 0
 * clears.  Returns true for an unknown op. */
bool fence_inject(const char *op, long n);
uint64_t fence_injected(void);

/* The device's context died: forget its cached events (never destroy
 * them: they died with it). */
void fence_forget_device(int device);

void fence_prefork(void);
void fence_postfork_parent(void);
/* Forgets events and epochs; touches no CUDA. */
void fence_postfork_child(void);
/* Tests: stops the helper and waits until it has exited, destroys the
 * cached events, resets the epochs. */
void fence_reset(void);

#endif /* CUWARDEN_FENCE_H */
