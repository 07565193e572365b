#include "preamble.h"
/*
 * fence.c -- the reuse fence (fence.h).
 *
 * Owns the per-device epochs, the barriers in progress, a free list of
 * events per device and the fault injection of the fence's driver calls;
 * the helper thread that issues requested barriers is fence_helper.c
 * (what the two share: fence_int.h).
 * Invariants: done < epoch; done only grows.  Locking: the epochs are
 * atomics; the event free lists have a mutex each (leaves, rank POOL),
 * never held across a driver call.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "capture.h"
#include "driver.h"
#include "fence.h"
#include "fence_int.h"
#include "log.h"
#include "mutex.h"

fence_dev_t fence_devs[FENCE_MAX_DEVICES] = {
	[0 ... FENCE_MAX_DEVICES - 1] = { .epoch = 1, .done = 0 }
};

#define EV_CACHE 256
typedef struct evlist_s {
	cw_mutex_t lock;
	CUevent ev[EV_CACHE];
	unsigned n;
} evlist_t;

static evlist_t evlists[FENCE_MAX_DEVICES] = {
	[0 ... FENCE_MAX_DEVICES - 1] = { .lock = CW_MUTEX_INITIALIZER(LOCK_RANK_FENCE) }
};

/* ------------------------------------------------------ fault injection */

enum { OP_SYNC, OP_EV_CREATE, OP_EV_RECORD, OP_EV_QUERY, OP_COUNT };
static const char *const op_names[OP_COUNT] = {
	"sync", "event_create", "event_record", "event_query"
};
static long inject_at[OP_COUNT];
static uint64_t injected;

static bool
inject(int op)
{
	long n = __atomic_load_n(&inject_at[op], __ATOMIC_RELAXED);
	if (n <= 0)
		return false;
	n = __atomic_sub_fetch(&inject_at[op], 1, __ATOMIC_RELAXED);
	if (n != 0)
		return false;
	__atomic_fetch_add(&injected, 1, __ATOMIC_RELAXED);
	return true;
}

bool
fence_inject(const char *op, long n)
{
	for (int i = 0; i < OP_COUNT; i++) {
		if (strcmp(op, op_names[i]) == 0) {
			__atomic_store_n(&inject_at[i], n, __ATOMIC_RELAXED);
			return false;
		}
	}
	return true;
}

uint64_t
fence_injected(void)
{
	return __atomic_load_n(&injected, __ATOMIC_RELAXED);
}

static void
count_failure(int device, const char *what, CUresult r)
{
	__atomic_fetch_add(&fence_devs[device].failures, 1, __ATOMIC_RELAXED);
	log_debug(1, "fence: %s on device %d failed: %s", what, device,
	    driver_error_name(r));
}

/* --------------------------------------------------------------- barrier */

/* Barriers in progress, per device: the epoch the running one covers (0:
 * none).  A thread that needs frees stamped <= s covered waits for a
 * running barrier with epoch >= s instead of issuing its own, so that
 * many threads hitting the trigger at once cost one synchronise.  One
 * barrier at a time lost (doc/benchmarks.md, "What was tried"). */
uint64_t fence_running[FENCE_MAX_DEVICES];
/* Calls of fence_barrier_for by threads other than the helper that had to
 * wait (their frees had not passed): the helper paces itself only while
 * this does not move. */
uint64_t fence_stalls[FENCE_MAX_DEVICES];
CW_TLS bool fence_tls_helper;

bool
fence_barrier(int device)
{
	return fence_barrier_for(device, fence_stamp(device));
}

bool
fence_barrier_for(int device, uint64_t stamp)
{
	fence_dev_t *f = &fence_devs[device];
	const driver_fns_t *d = driver_get();
	if (d == NULL || d->cuCtxSynchronize == NULL)
		return true;
	if (!fence_tls_helper && !fence_passed(device, stamp))
		__atomic_fetch_add(&fence_stalls[device], 1, __ATOMIC_RELAXED);
	for (int spins = 0; ; spins++) {
		if (fence_passed(device, stamp))
			return false;
		uint64_t r = __atomic_load_n(&fence_running[device],
		    __ATOMIC_ACQUIRE);
		if (r == 0 || r < stamp || spins > 100000)
			break;
		sched_yield(); /* another thread's barrier covers us */
	}
	/* No barrier while a stream capture is in progress: the driver
	 * refuses cuCtxSynchronize then and breaks the capture (capture.h).
	 * The frees wait for the first barrier after it. */
	if (!capture_barrier_enter()) {
		__atomic_fetch_add(&f->deferred, 1, __ATOMIC_RELAXED);
		return true;
	}
	uint64_t e = __atomic_fetch_add(&f->epoch, 1, __ATOMIC_SEQ_CST);
	uint64_t prev = __atomic_load_n(&fence_running[device],
	    __ATOMIC_RELAXED);
	while (prev < e && !__atomic_compare_exchange_n(&fence_running[device],
	    &prev, e, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	uint64_t cur = e;
	CUcontext saved;
	if (driver_bind_save(device, &saved) != CW_OK) {
		__atomic_compare_exchange_n(&fence_running[device], &cur, 0,
		    false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
		capture_barrier_leave();
		return true;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CUresult r = inject(OP_SYNC) ? CUDA_ERROR_UNKNOWN :
	    d->cuCtxSynchronize();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	driver_restore(saved);
	if (r == CUDA_SUCCESS) {
		int64_t ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 +
		    (t1.tv_nsec - t0.tv_nsec);
		__atomic_store_n(&f->last_ns, ns > 0 ? (uint64_t)ns : 0,
		    __ATOMIC_RELAXED);
		uint64_t old = __atomic_load_n(&f->done, __ATOMIC_RELAXED);
		while (old < e && !__atomic_compare_exchange_n(&f->done, &old,
		    e, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
	}
	__atomic_compare_exchange_n(&fence_running[device], &cur, 0, false,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	capture_barrier_leave();
	if (r != CUDA_SUCCESS) {
		count_failure(device, "cuCtxSynchronize", r);
		return true;
	}
	__atomic_fetch_add(&f->barriers, 1, __ATOMIC_RELAXED);
	return false;
}

static uint64_t reuse_wait_ns = FENCE_REUSE_WAIT_NS;

uint64_t
fence_reuse_wait(void)
{
	return __atomic_load_n(&reuse_wait_ns, __ATOMIC_RELAXED);
}

void
fence_set_reuse_wait(uint64_t ns)
{
	__atomic_store_n(&reuse_wait_ns, ns != 0 ? ns : FENCE_REUSE_WAIT_NS,
	    __ATOMIC_RELAXED);
}

bool
fence_wait_running(int device, uint64_t stamp, uint64_t max_ns)
{
	if (fence_passed(device, stamp))
		return true;
	if (__atomic_load_n(&fence_running[device], __ATOMIC_ACQUIRE) < stamp)
		return false;
	uint64_t end = fence_mono_ns() + max_ns;
	while (!fence_passed(device, stamp)) {
		/* done is published before running is cleared. */
		if (__atomic_load_n(&fence_running[device], __ATOMIC_ACQUIRE) <
		    stamp)
			return fence_passed(device, stamp);
		if (fence_mono_ns() >= end)
			return false;
		sched_yield();
	}
	return true;
}

uint64_t
fence_deferred(void)
{
	uint64_t n = 0;
	for (int d = 0; d < FENCE_MAX_DEVICES; d++)
		n += __atomic_load_n(&fence_devs[d].deferred, __ATOMIC_RELAXED);
	return n;
}

/* ---------------------------------------------------------------- events */

static CUevent event_record_bound(const driver_fns_t *d, int device,
    CUstream stream);

/* In the shim the program's current context is put back afterwards. */
CUevent
fence_event_record(int device, CUstream stream)
{
	const driver_fns_t *d = driver_get();
	if (d == NULL || d->cuEventRecord == NULL || d->cuEventCreate == NULL)
		return NULL;
	/* On a capturing stream the record would become a node of the
	 * program's graph: the free waits for a barrier instead. */
	if (capture_active()) {
		CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
		if (d->cuStreamIsCapturing == NULL ||
		    d->cuStreamIsCapturing(stream, &cs) != CUDA_SUCCESS ||
		    cs != CU_STREAM_CAPTURE_STATUS_NONE)
			return NULL;
	}
	CUcontext saved;
	if (driver_bind_save(device, &saved) != CW_OK)
		return NULL;
	CUevent ev = event_record_bound(d, device, stream);
	driver_restore(saved);
	return ev;
}

/* fence_event_record's work, with device's primary context current. */
static CUevent
event_record_bound(const driver_fns_t *d, int device, CUstream stream)
{
	evlist_t *l = &evlists[device];
	CUevent ev = NULL;
	cw_mutex_lock(&l->lock);
	if (l->n > 0)
		ev = l->ev[--l->n];
	cw_mutex_unlock(&l->lock);
	CUresult r;
	if (ev == NULL) {
		r = inject(OP_EV_CREATE) ? CUDA_ERROR_UNKNOWN :
		    d->cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
		if (r != CUDA_SUCCESS) {
			count_failure(device, "cuEventCreate", r);
			return NULL;
		}
	}
	r = inject(OP_EV_RECORD) ? CUDA_ERROR_UNKNOWN :
	    d->cuEventRecord(ev, stream);
	if (r != CUDA_SUCCESS) {
		count_failure(device, "cuEventRecord", r);
		fence_event_release(device, ev);
		return NULL;
	}
	return ev;
}

int
fence_event_query(int device, CUevent ev)
{
	const driver_fns_t *d = driver_get();
	if (d == NULL || d->cuEventQuery == NULL)
		return -1;
	/* A query the driver forbids now would break the capture: not
	 * known yet (the block waits). */
	if (capture_forbids())
		return 0;
	CUcontext saved;
	if (driver_bind_save(device, &saved) != CW_OK)
		return -1;
	CUresult r = inject(OP_EV_QUERY) ? CUDA_ERROR_UNKNOWN :
	    d->cuEventQuery(ev);
	driver_restore(saved);
	if (r == CUDA_SUCCESS)
		return 1;
	if (r == CUDA_ERROR_NOT_READY)
		return 0;
	count_failure(device, "cuEventQuery", r);
	return -1;
}

void
fence_event_release(int device, CUevent ev)
{
	evlist_t *l = &evlists[device];
	cw_mutex_lock(&l->lock);
	if (l->n < EV_CACHE) {
		l->ev[l->n++] = ev;
		ev = NULL;
	}
	cw_mutex_unlock(&l->lock);
	if (ev != NULL) {
		const driver_fns_t *d = driver_get();
		if (d != NULL && d->cuEventDestroy_v2 != NULL)
			d->cuEventDestroy_v2(ev);
	}
}

void
fence_forget_device(int device)
{
	if (device < 0 || device >= FENCE_MAX_DEVICES)
		return;
	cw_mutex_lock(&evlists[device].lock);
	evlists[device].n = 0;
	cw_mutex_unlock(&evlists[device].lock);
}

/* ------------------------------------------------------------------ fork */

void
fence_prefork(void)
{
	fence_helper_prefork();
	for (int i = 0; i < FENCE_MAX_DEVICES; i++)
		cw_mutex_prefork(&evlists[i].lock);
}

void
fence_postfork_parent(void)
{
	for (int i = FENCE_MAX_DEVICES; i-- > 0; )
		cw_mutex_postfork_parent(&evlists[i].lock);
	fence_helper_postfork_parent();
}

void
fence_postfork_child(void)
{
	for (int i = FENCE_MAX_DEVICES; i-- > 0; ) {
		cw_mutex_postfork_child(&evlists[i].lock);
		evlists[i].n = 0; /* the parent's events: forgotten */
		fence_devs[i].epoch = 1;
		fence_devs[i].done = 0;
		fence_devs[i].last_ns = 0;
		fence_running[i] = 0;
		fence_stalls[i] = 0;
	}
	fence_helper_postfork_child();
}

void
fence_reset(void)
{
	fence_helper_reset();
	const driver_fns_t *d = driver_is_loaded() ? driver_get() : NULL;
	for (int i = 0; i < FENCE_MAX_DEVICES; i++) {
		evlist_t *l = &evlists[i];
		cw_mutex_lock(&l->lock);
		if (d != NULL && d->cuEventDestroy_v2 != NULL && l->n > 0 &&
		    driver_bind(i) == CW_OK)
			for (unsigned k = 0; k < l->n; k++)
				d->cuEventDestroy_v2(l->ev[k]);
		l->n = 0;
		cw_mutex_unlock(&l->lock);
		fence_devs[i].epoch = 1;
		fence_devs[i].done = 0;
		fence_devs[i].barriers = 0;
		fence_devs[i].failures = 0;
		fence_devs[i].deferred = 0;
		fence_devs[i].last_ns = 0;
		fence_running[i] = 0;
		fence_stalls[i] = 0;
	}
	for (int i = 0; i < OP_COUNT; i++)
		inject_at[i] = 0;
	fence_set_reuse_wait(0);
	injected = 0;
}
