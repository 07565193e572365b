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

#define FENCE_MAX_DEVICES 16

typedef struct fence_dev_s {
	uint64_t epoch;  /* stamp of frees made now */
	uint64_t done;   /* frees stamped <= done are safe */
	uint64_t barriers;
	uint64_t failures; /* driver calls of the fence that failed */
	uint64_t last_ns;  /* how long the last barrier's synchronise took */
	char pad[24];
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

/* Barriers that take at most this long (an idle device: a few
 * microseconds) are worth issuing instead of growing a pool. */
#define FENCE_CHEAP_NS 500000u

/* True when the device's last barrier was cheap (or none was measured
 * yet): the device is likely idle, so a barrier now costs microseconds,
 * not the time of a running kernel. */
static inline bool
fence_cheap(int device)
{
	return __atomic_load_n(&fence_devs[device].last_ns,
	    __ATOMIC_RELAXED) <= FENCE_CHEAP_NS;
}

/* The helper starts a barrier no sooner than max(FENCE_HELPER_GAP_NS,
 * 2 x the last synchronise, at most FENCE_HELPER_GAP_MAX_NS) after its
 * last one ended: one barrier serves every request made meanwhile. */
#define FENCE_HELPER_GAP_NS 20000u
#define FENCE_HELPER_GAP_MAX_NS 1000000u

/* Asks the helper thread for a barrier covering frees stamped <= stamp,
 * without waiting (it is started on first use).  Returns true when there
 * is no helper (the thread could not be made): the caller then relies on
 * synchronous barriers. */
bool fence_request(int device, uint64_t stamp);
/* Barriers the helper has made (tests, benchmarks). */
uint64_t fence_helper_barriers(void);

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
/* Tests: destroys the cached events, resets the epochs. */
void fence_reset(void);

#endif /* CUWARDEN_FENCE_H */
