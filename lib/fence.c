#include "preamble.h"
/*
 * fence.c -- the reuse fence (fence.h).
 *
 * Owns the per-device epochs, a free list of events per device, and the
 * helper thread that issues requested barriers.
 * Invariants: done < epoch; done only grows.  Locking: the epochs are
 * atomics; the event free lists and the helper have a mutex each (leaves,
 * rank POOL), never held across a driver call.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "capture.h"
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
 * many threads hitting the trigger at once cost one synchronise.  One
 * barrier at a time lost (doc/benchmarks.md, "What was tried"). */
static uint64_t running[FENCE_MAX_DEVICES];
/* Calls of fence_barrier_for by threads other than the helper that had to
 * wait (their frees had not passed): the helper paces itself only while
 * this does not move. */
static uint64_t stalls[FENCE_MAX_DEVICES];
static CW_TLS bool tls_helper;

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
	if (!tls_helper && !fence_passed(device, stamp))
		__atomic_fetch_add(&stalls[device], 1, __ATOMIC_RELAXED);
	for (int spins = 0; ; spins++) {
		if (fence_passed(device, stamp))
			return false;
		uint64_t r = __atomic_load_n(&running[device],
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
	uint64_t prev = __atomic_load_n(&running[device], __ATOMIC_RELAXED);
	while (prev < e && !__atomic_compare_exchange_n(&running[device],
	    &prev, e, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	uint64_t cur = e;
	CUcontext saved;
	if (driver_bind_save(device, &saved) != CW_OK) {
		__atomic_compare_exchange_n(&running[device], &cur, 0, false,
		    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
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
	__atomic_compare_exchange_n(&running[device], &cur, 0, false,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	capture_barrier_leave();
	if (r != CUDA_SUCCESS) {
		count_failure(device, "cuCtxSynchronize", r);
		return true;
	}
	__atomic_fetch_add(&f->barriers, 1, __ATOMIC_RELAXED);
	return false;
}

/* --------------------------------------------------------- helper thread */

/* One detached thread, started on the first request, issues barriers that
 * threads ask for without waiting (fence_request), so the synchronise is
 * off their path and one serves every request made before it started.
 * helper_lock (leaf) guards the fields below except wanted, helper_started
 * and helper_sleeping (atomics: a request takes no lock while the helper
 * is awake); it is never held across the synchronise. */
static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t helper_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t exit_cv = PTHREAD_COND_INITIALIZER;
static bool helper_started, helper_broken;
static uint64_t helper_life; /* bumped by reset: the old helper exits */
static unsigned helper_threads; /* helper threads not yet exited */
static uint64_t wanted[FENCE_MAX_DEVICES]; /* stamps to see passed */
static uint64_t helper_barriers;

static bool helper_sleeping; /* atomic: waiting on helper_cv */
static uint64_t helper_last_end; /* mono_ns() when its last barrier ended */
static uint64_t helper_stalls[FENCE_MAX_DEVICES]; /* stalls[] then */

static uint64_t
mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The device with a request not yet passed, or -1.  Requests are atomics:
 * threads add them without the lock. */
static int
helper_pick(uint64_t *w)
{
	for (int d = 0; d < FENCE_MAX_DEVICES; d++) {
		uint64_t x = __atomic_load_n(&wanted[d], __ATOMIC_SEQ_CST);
		if (x != 0 && !fence_passed(d, x)) {
			*w = x;
			return d;
		}
	}
	return -1;
}

/* Polls for a request for up to FENCE_HELPER_SPIN_NS with helper_lock
 * dropped.  helper_lock held on entry and exit.  Returns true when one
 * came (or the helper was stopped meanwhile). */
static bool
helper_spin(uint64_t life)
{
	uint64_t w, end = mono_ns() + FENCE_HELPER_SPIN_NS;
	bool got = false;
	pthread_mutex_unlock(&helper_lock);
	for (unsigned i = 0; ; i++) {
		if (helper_pick(&w) >= 0 || __atomic_load_n(&helper_life,
		    __ATOMIC_RELAXED) != life) {
			got = true;
			break;
		}
		if ((i & 63) == 63 && mono_ns() >= end)
			break;
		cw_cpu_relax();
	}
	pthread_mutex_lock(&helper_lock);
	return got;
}

static void *
helper_main(void *arg)
{
	uint64_t life = (uint64_t)(uintptr_t)arg;
	tls_helper = true;
	/* Its pacing waits are tens of microseconds: the default timer
	 * slack (50 us) would more than double them. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	pthread_mutex_lock(&helper_lock);
	while (life == helper_life) {
		uint64_t w = 0;
		int dev = helper_pick(&w);
		if (dev < 0) {
			/* Spin a little first (the lock dropped): in an
			 * alloc/free loop the next request comes within
			 * microseconds, and waking a sleeping thread costs
			 * more than that (5-10 us in a VM), which an
			 * allocation waiting in fence_wait_for would pay. */
			if (helper_spin(life))
				continue;
			/* Sleep; a requester that sees helper_sleeping
			 * signals.  Set it, then look once more, so that a
			 * request made meanwhile is not missed; and a stop
			 * made during the spin (its broadcast came before
			 * this wait: the helper then slept for ever). */
			__atomic_store_n(&helper_sleeping, true,
			    __ATOMIC_SEQ_CST);
			if (helper_pick(&w) < 0 && life == helper_life)
				pthread_cond_wait(&helper_cv, &helper_lock);
			__atomic_store_n(&helper_sleeping, false,
			    __ATOMIC_SEQ_CST);
			continue;
		}
		/* Pacing: the next barrier starts no sooner than
		 * max(FENCE_HELPER_GAP_NS, 2 x the last synchronise) after the
		 * last ended, so that the helper synchronises at most a third
		 * of the time even when threads ask all the time; every
		 * request made meanwhile rides on that one barrier.  A thread
		 * that cannot wait issues its own (fence_barrier_for). */
		uint64_t gap = __atomic_load_n(&fence_devs[dev].last_ns,
		    __ATOMIC_RELAXED) * 2;
		if (gap < FENCE_HELPER_GAP_NS)
			gap = FENCE_HELPER_GAP_NS;
		if (gap > FENCE_HELPER_GAP_MAX_NS)
			gap = FENCE_HELPER_GAP_MAX_NS;
		uint64_t st = __atomic_load_n(&stalls[dev], __ATOMIC_RELAXED);
		uint64_t now = mono_ns();
		if (st == helper_stalls[dev] && now < helper_last_end + gap) {
			/* A thread that stalls meanwhile signals helper_cv
			 * (fence_wait_for) and ends the wait. */
			uint64_t end = helper_last_end + gap;
			struct timespec ts = { (time_t)(end / 1000000000u),
				(long)(end % 1000000000u) };
			pthread_cond_clockwait(&helper_cv, &helper_lock,
			    CLOCK_MONOTONIC, &ts);
			continue;
		}
		pthread_mutex_unlock(&helper_lock);
		bool err = fence_barrier_for(dev, w);
		pthread_mutex_lock(&helper_lock);
		helper_last_end = mono_ns();
		helper_stalls[dev] = st;
		helper_barriers++;
		if (err && life == helper_life) {
			/* Drop the request (the synchronous paths retry). */
			uint64_t cur = w;
			__atomic_compare_exchange_n(&wanted[dev], &cur, 0,
			    false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
		}
	}
	helper_threads--;
	pthread_cond_broadcast(&exit_cv);
	pthread_mutex_unlock(&helper_lock);
	return NULL;
}

bool
fence_request(int device, uint64_t stamp)
{
	uint64_t w = __atomic_load_n(&wanted[device], __ATOMIC_RELAXED);
	while (stamp > w && !__atomic_compare_exchange_n(&wanted[device], &w,
	    stamp, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
	/* A helper that is running will see the request: no lock, no
	 * wake-up on the common path. */
	if (__atomic_load_n(&helper_started, __ATOMIC_SEQ_CST) &&
	    !__atomic_load_n(&helper_sleeping, __ATOMIC_SEQ_CST))
		return false;
	bool err = false;
	pthread_mutex_lock(&helper_lock);
	if (!helper_started && !helper_broken) {
		pthread_attr_t attr;
		pthread_t tid;
		sigset_t all, old;
		sigfillset(&all);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 << 10);
		/* The helper takes no signal of the program's. */
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&tid, &attr, helper_main,
		    (void *)(uintptr_t)helper_life) == 0) {
			helper_threads++;
			__atomic_store_n(&helper_started, true,
			    __ATOMIC_SEQ_CST);
		} else
			helper_broken = true;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	err = !helper_started;
	pthread_cond_signal(&helper_cv);
	pthread_mutex_unlock(&helper_lock);
	return err;
}

bool
fence_wait_for(int device, uint64_t stamp, uint64_t max_ns)
{
	if (fence_passed(device, stamp))
		return true;
	/* During a capture no barrier comes: grow instead of waiting. */
	if (capture_active())
		return false;
	/* A stall: the helper skips its pacing for it. */
	__atomic_fetch_add(&stalls[device], 1, __ATOMIC_RELAXED);
	if (fence_request(device, stamp))
		return false;
	pthread_mutex_lock(&helper_lock);
	pthread_cond_signal(&helper_cv);
	pthread_mutex_unlock(&helper_lock);
	/* max_ns counts from the moment a barrier that covers stamp runs:
	 * a helper slow to be scheduled (a loaded machine) is waited for up
	 * to FENCE_START_WAIT_NS more (or max_ns, when longer), since the
	 * device may well be idle. */
	uint64_t t = mono_ns();
	uint64_t start_by = t + (max_ns > FENCE_START_WAIT_NS ? max_ns :
	    FENCE_START_WAIT_NS);
	uint64_t end = 0;
	while (!fence_passed(device, stamp)) {
		t = mono_ns();
		if (end == 0 && __atomic_load_n(&running[device],
		    __ATOMIC_ACQUIRE) >= stamp)
			end = t + max_ns;
		if (end != 0 ? t >= end : t >= start_by)
			return false;
		sched_yield();
	}
	return true;
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
	if (__atomic_load_n(&running[device], __ATOMIC_ACQUIRE) < stamp)
		return false;
	uint64_t end = mono_ns() + max_ns;
	while (!fence_passed(device, stamp)) {
		/* done is published before running is cleared. */
		if (__atomic_load_n(&running[device], __ATOMIC_ACQUIRE) <
		    stamp)
			return fence_passed(device, stamp);
		if (mono_ns() >= end)
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

uint64_t
fence_helper_barriers(void)
{
	pthread_mutex_lock(&helper_lock);
	uint64_t n = helper_barriers;
	pthread_mutex_unlock(&helper_lock);
	return n;
}

unsigned
fence_helper_threads(void)
{
	pthread_mutex_lock(&helper_lock);
	unsigned n = helper_threads;
	pthread_mutex_unlock(&helper_lock);
	return n;
}

/* Stops the helper and waits until it has exited (it does at its next
 * wake-up, or within its spin), so that nothing reads what reset then
 * clears.  helper_lock held. */
static void
helper_stop_locked(void)
{
	/* helper_spin reads it without the lock. */
	__atomic_add_fetch(&helper_life, 1, __ATOMIC_SEQ_CST);
	for (int d = 0; d < FENCE_MAX_DEVICES; d++)
		__atomic_store_n(&wanted[d], 0, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&helper_cv);
	while (helper_threads > 0)
		pthread_cond_wait(&exit_cv, &helper_lock);
	__atomic_store_n(&helper_started, false, __ATOMIC_SEQ_CST);
	__atomic_store_n(&helper_sleeping, false, __ATOMIC_SEQ_CST);
	helper_broken = false;
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

void
fence_forget_device(int device)
{
	if (device < 0 || device >= FENCE_MAX_DEVICES)
		return;
	pthread_mutex_lock(&evlists[device].lock);
	evlists[device].n = 0;
	pthread_mutex_unlock(&evlists[device].lock);
}

/* ------------------------------------------------------------------ fork */

void
fence_prefork(void)
{
	pthread_mutex_lock(&helper_lock);
	for (int i = 0; i < FENCE_MAX_DEVICES; i++)
		pthread_mutex_lock(&evlists[i].lock);
}

void
fence_postfork_parent(void)
{
	for (int i = FENCE_MAX_DEVICES; i-- > 0; )
		pthread_mutex_unlock(&evlists[i].lock);
	pthread_mutex_unlock(&helper_lock);
}

void
fence_postfork_child(void)
{
	for (int i = FENCE_MAX_DEVICES; i-- > 0; ) {
		pthread_mutex_init(&evlists[i].lock, NULL);
		evlists[i].n = 0; /* the parent's events: forgotten */
		fence_devs[i].epoch = 1;
		fence_devs[i].done = 0;
		fence_devs[i].last_ns = 0;
		running[i] = 0;
		stalls[i] = helper_stalls[i] = 0;
	}
	/* The helper thread does not exist here. */
	pthread_mutex_init(&helper_lock, NULL);
	pthread_cond_init(&helper_cv, NULL);
	pthread_cond_init(&exit_cv, NULL);
	helper_started = helper_broken = false;
	helper_sleeping = false;
	helper_last_end = 0;
	helper_threads = 0;
	helper_life++;
	memset(wanted, 0, sizeof(wanted));
}

void
fence_reset(void)
{
	pthread_mutex_lock(&helper_lock);
	helper_stop_locked();
	helper_barriers = 0;
	pthread_mutex_unlock(&helper_lock);
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
		fence_devs[i].deferred = 0;
		fence_devs[i].last_ns = 0;
		running[i] = 0;
		stalls[i] = helper_stalls[i] = 0;
	}
	for (int i = 0; i < OP_COUNT; i++)
		inject_at[i] = 0;
	fence_set_reuse_wait(0);
	injected = 0;
}
