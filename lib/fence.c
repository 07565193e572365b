#include "preamble.h"
/*
 * fence.c -- the reuse fence (fence.h).
 *
 * Owns the per-device epochs and a free list of events per device.
 * Invariants: done < epoch; done only grows.  Locking: the epochs are
 * atomics; the event free list has a mutex (a leaf, rank POOL), never
 * held across a driver call.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "fence.h"
#include "log.h"

fence_dev_t fence_devs[FENCE_MAX_DEVICES] = {
	[0 ... FENCE_MAX_DEVICES - 1] = { .epoch = 1, .done = 0 }
};

#define EV_CACHE 256
typedef struct evlist_s {
	pthread_mutex_t lock;
	CUevent ev[EV_CACHE];
	unsigned n;
} evlist_t;

static evlist_t evlists[FENCE_MAX_DEVICES] = {
	[0 ... FENCE_MAX_DEVICES - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER }
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
 * many threads hitting the trigger at once cost one synchronise. */
static uint64_t running[FENCE_MAX_DEVICES];

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
	for (int spins = 0; ; spins++) {
		if (fence_passed(device, stamp))
			return false;
		uint64_t r = __atomic_load_n(&running[device],
		    __ATOMIC_ACQUIRE);
		if (r == 0 || r < stamp || spins > 100000)
			break;
		sched_yield(); /* another thread's barrier covers us */
	}
	uint64_t e = __atomic_fetch_add(&f->epoch, 1, __ATOMIC_SEQ_CST);
	uint64_t prev = __atomic_load_n(&running[device], __ATOMIC_RELAXED);
	while (prev < e && !__atomic_compare_exchange_n(&running[device],
	    &prev, e, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	if (driver_bind(device) != CW_OK)
		return true;
	CUresult r = inject(OP_SYNC) ? CUDA_ERROR_UNKNOWN :
	    d->cuCtxSynchronize();
	if (r == CUDA_SUCCESS) {
		uint64_t old = __atomic_load_n(&f->done, __ATOMIC_RELAXED);
		while (old < e && !__atomic_compare_exchange_n(&f->done, &old,
		    e, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
	}
	uint64_t cur = e;
	__atomic_compare_exchange_n(&running[device], &cur, 0, false,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	if (r != CUDA_SUCCESS) {
		count_failure(device, "cuCtxSynchronize", r);
		return true;
	}
	__atomic_fetch_add(&f->barriers, 1, __ATOMIC_RELAXED);
	return false;
}

/* ---------------------------------------------------------------- events */

CUevent
fence_event_record(int device, CUstream stream)
{
	const driver_fns_t *d = driver_get();
	if (d == NULL || d->cuEventRecord == NULL || d->cuEventCreate == NULL)
		return NULL;
	if (driver_bind(device) != CW_OK)
		return NULL;
	evlist_t *l = &evlists[device];
	CUevent ev = NULL;
	pthread_mutex_lock(&l->lock);
	if (l->n > 0)
		ev = l->ev[--l->n];
	pthread_mutex_unlock(&l->lock);
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
	if (driver_bind(device) != CW_OK)
		return -1;
	CUresult r = inject(OP_EV_QUERY) ? CUDA_ERROR_UNKNOWN :
	    d->cuEventQuery(ev);
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
	pthread_mutex_lock(&l->lock);
	if (l->n < EV_CACHE) {
		l->ev[l->n++] = ev;
		ev = NULL;
	}
	pthread_mutex_unlock(&l->lock);
	if (ev != NULL) {
		const driver_fns_t *d = driver_get();
		if (d != NULL && d->cuEventDestroy_v2 != NULL)
			d->cuEventDestroy_v2(ev);
	}
}

/* ------------------------------------------------------------------ fork */

void
fence_prefork(void)
{
	for (int i = 0; i < FENCE_MAX_DEVICES; i++)
		pthread_mutex_lock(&evlists[i].lock);
}

void
fence_postfork_parent(void)
{
	for (int i = FENCE_MAX_DEVICES; i-- > 0; )
		pthread_mutex_unlock(&evlists[i].lock);
}

void
fence_postfork_child(void)
{
	for (int i = FENCE_MAX_DEVICES; i-- > 0; ) {
		pthread_mutex_init(&evlists[i].lock, NULL);
		evlists[i].n = 0; /* the parent's events: forgotten */
		fence_devs[i].epoch = 1;
		fence_devs[i].done = 0;
	}
}

void
fence_reset(void)
{
	const driver_fns_t *d = driver_is_loaded() ? driver_get() : NULL;
	for (int i = 0; i < FENCE_MAX_DEVICES; i++) {
		evlist_t *l = &evlists[i];
		pthread_mutex_lock(&l->lock);
		if (d != NULL && d->cuEventDestroy_v2 != NULL && l->n > 0 &&
		    driver_bind(i) == CW_OK)
			for (unsigned k = 0; k < l->n; k++)
				d->cuEventDestroy_v2(l->ev[k]);
		l->n = 0;
		pthread_mutex_unlock(&l->lock);
		fence_devs[i].epoch = 1;
		fence_devs[i].done = 0;
		fence_devs[i].barriers = 0;
		fence_devs[i].failures = 0;
	}
	for (int i = 0; i < OP_COUNT; i++)
		inject_at[i] = 0;
	injected = 0;
}
