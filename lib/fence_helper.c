#include "preamble.h"
/*
 * fence_helper.c -- the fence's helper thread (fence.h: fence_request,
 * fence_wait_for, fence_helper_barriers, fence_helper_threads,
 * fence_helper_wanted).
 *
 * One detached thread, started on the first request, issues barriers that
 * threads ask for without waiting (fence_request), so the synchronise is
 * off their path and one serves every request made before it started.
 * It paces itself (FENCE_HELPER_GAP_NS) unless a thread stalls on the
 * fence (fence_wait_for wakes it at once); out of requests it polls for
 * FENCE_HELPER_SPIN_NS, then sleeps on helper_cv.  It makes one kind of
 * driver call, fence_barrier_for's cuCtxSynchronize, and blocks every
 * signal.
 *
 * Owns the requests (wanted[], per device the highest stamp asked for),
 * the helper's state and its counters.  Invariants: at most one helper
 * thread (helper_threads is 0 or 1): fence_reset bumps helper_life and
 * waits until the old one has exited; a request is dropped only when the
 * barrier made for it failed (the synchronous paths retry); a fork child
 * has no helper until its first request.
 *
 * Locking: helper_lock (leaf, rank POOL) guards the fields below except
 * wanted, helper_started, helper_sleeping and helper_life (atomics: a
 * request takes no lock while the helper is awake); it is never held
 * across the synchronise.  exit_cv tells fence_reset the helper is gone.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "capture.h"
#include "fence.h"
#include "fence_int.h"
#include "mutex.h"

static cw_mutex_t helper_lock = CW_MUTEX_INITIALIZER(LOCK_RANK_FENCE_HELPER);
static pthread_cond_t helper_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t exit_cv = PTHREAD_COND_INITIALIZER;
static bool helper_started, helper_broken;
static uint64_t helper_life; /* bumped by reset: the old helper exits */
static unsigned helper_threads; /* helper threads not yet exited */
static uint64_t wanted[FENCE_MAX_DEVICES]; /* stamps to see passed */
static uint64_t helper_barriers;

static bool helper_sleeping; /* atomic: waiting on helper_cv */
static uint64_t helper_last_end; /* fence_mono_ns() at its last barrier's end */
static uint64_t helper_stalls[FENCE_MAX_DEVICES]; /* fence_stalls[] then */

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
	uint64_t w, end = fence_mono_ns() + FENCE_HELPER_SPIN_NS;
	bool got = false;
	cw_mutex_unlock(&helper_lock);
	for (unsigned i = 0; ; i++) {
		if (helper_pick(&w) >= 0 || __atomic_load_n(&helper_life,
		    __ATOMIC_RELAXED) != life) {
			got = true;
			break;
		}
		if ((i & 63) == 63 && fence_mono_ns() >= end)
			break;
		cw_cpu_relax();
	}
	cw_mutex_lock(&helper_lock);
	return got;
}

static void *
helper_main(void *arg)
{
	uint64_t life = (uint64_t)(uintptr_t)arg;
	fence_tls_helper = true;
	/* Its pacing waits are tens of microseconds: the default timer
	 * slack (50 us) would more than double them. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	cw_mutex_lock(&helper_lock);
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
				pthread_cond_wait(&helper_cv, &helper_lock.m);
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
		uint64_t st = __atomic_load_n(&fence_stalls[dev],
		    __ATOMIC_RELAXED);
		uint64_t now = fence_mono_ns();
		if (st == helper_stalls[dev] && now < helper_last_end + gap) {
			/* A thread that stalls meanwhile signals helper_cv
			 * (fence_wait_for) and ends the wait. */
			uint64_t end = helper_last_end + gap;
			struct timespec ts = { (time_t)(end / 1000000000u),
				(long)(end % 1000000000u) };
			pthread_cond_clockwait(&helper_cv, &helper_lock.m,
			    CLOCK_MONOTONIC, &ts);
			continue;
		}
		cw_mutex_unlock(&helper_lock);
		bool err = fence_barrier_for(dev, w);
		cw_mutex_lock(&helper_lock);
		helper_last_end = fence_mono_ns();
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
	cw_mutex_unlock(&helper_lock);
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
	cw_mutex_lock(&helper_lock);
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
	cw_mutex_unlock(&helper_lock);
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
	__atomic_fetch_add(&fence_stalls[device], 1, __ATOMIC_RELAXED);
	if (fence_request(device, stamp))
		return false;
	cw_mutex_lock(&helper_lock);
	pthread_cond_signal(&helper_cv);
	cw_mutex_unlock(&helper_lock);
	/* max_ns counts from the moment a barrier that covers stamp runs:
	 * a helper slow to be scheduled (a loaded machine) is waited for up
	 * to FENCE_START_WAIT_NS more (or max_ns, when longer), since the
	 * device may well be idle. */
	uint64_t t = fence_mono_ns();
	uint64_t start_by = t + (max_ns > FENCE_START_WAIT_NS ? max_ns :
	    FENCE_START_WAIT_NS);
	uint64_t end = 0;
	while (!fence_passed(device, stamp)) {
		t = fence_mono_ns();
		if (end == 0 && __atomic_load_n(&fence_running[device],
		    __ATOMIC_ACQUIRE) >= stamp)
			end = t + max_ns;
		if (end != 0 ? t >= end : t >= start_by)
			return false;
		sched_yield();
	}
	return true;
}

uint64_t
fence_helper_barriers(void)
{
	cw_mutex_lock(&helper_lock);
	uint64_t n = helper_barriers;
	cw_mutex_unlock(&helper_lock);
	return n;
}

unsigned
fence_helper_threads(void)
{
	cw_mutex_lock(&helper_lock);
	unsigned n = helper_threads;
	cw_mutex_unlock(&helper_lock);
	return n;
}

uint64_t
fence_helper_wanted(int device)
{
	return __atomic_load_n(&wanted[device], __ATOMIC_SEQ_CST);
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
		pthread_cond_wait(&exit_cv, &helper_lock.m);
	__atomic_store_n(&helper_started, false, __ATOMIC_SEQ_CST);
	__atomic_store_n(&helper_sleeping, false, __ATOMIC_SEQ_CST);
	helper_broken = false;
}

/* ------------------------------------------------------------------ fork */

void
fence_helper_prefork(void)
{
	cw_mutex_prefork(&helper_lock);
}

void
fence_helper_postfork_parent(void)
{
	cw_mutex_postfork_parent(&helper_lock);
}

void
fence_helper_postfork_child(void)
{
	/* The helper thread does not exist here. */
	cw_mutex_postfork_child(&helper_lock);
	pthread_cond_init(&helper_cv, NULL);
	pthread_cond_init(&exit_cv, NULL);
	helper_started = helper_broken = false;
	helper_sleeping = false;
	helper_last_end = 0;
	helper_threads = 0;
	helper_life++;
	memset(wanted, 0, sizeof(wanted));
	memset(helper_stalls, 0, sizeof(helper_stalls));
}

void
fence_helper_reset(void)
{
	cw_mutex_lock(&helper_lock);
	helper_stop_locked();
	helper_barriers = 0;
	memset(helper_stalls, 0, sizeof(helper_stalls));
	cw_mutex_unlock(&helper_lock);
}
