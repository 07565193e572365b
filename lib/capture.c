#include "preamble.h"
/*
 * capture.c -- the captures in progress (capture.h).
 *
 * A small table under a mutex (leaf, rank POOL; never held across a
 * driver call), read only while a capture is in progress: with none,
 * every question is one atomic load.  The gate is two counters, written
 * with sequentially consistent atomics (Dekker): a barrier raises
 * `syncing` and then looks at `active`; a capture raises `active` and
 * then waits for `syncing` to fall.  Either the barrier sees the capture
 * and backs off, or the capture waits for the barrier.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture.h"
#include "driver.h"
#include "mutex.h"

#define CAPTURE_MAX 64

typedef struct cap_s {
	CUstream stream;
	pid_t tid;     /* the thread that began it */
	int mode;
	bool used;
} cap_t;

static cw_mutex_t cap_lock = CW_MUTEX_INITIALIZER(LOCK_RANK_CAPTURE);
static cap_t caps[CAPTURE_MAX];
/* Captures beyond the table: counted, and then every thread is taken to
 * be forbidden (the safe answer). */
static unsigned overflow;
static unsigned active;   /* atomic: captures in progress */
static unsigned syncing;  /* atomic: barriers in flight */
static uint64_t begun;    /* atomic */

static CW_TLS int tls_mode; /* CU_STREAM_CAPTURE_MODE_GLOBAL is 0 */
static CW_TLS pid_t tls_tid;

static pid_t
self_tid(void)
{
	if (tls_tid == 0)
		tls_tid = (pid_t)syscall(SYS_gettid);
	return tls_tid;
}

/* The legacy and per-thread default streams are the same handle in
 * every thread but a different stream: a capture of one belongs to its
 * thread. */
static bool
same_stream(const cap_t *c, CUstream s)
{
	if (c->stream != s)
		return false;
	if ((uintptr_t)s <= (uintptr_t)CU_STREAM_PER_THREAD)
		return c->tid == self_tid();
	return true;
}

void
capture_begin(CUstream s, int mode)
{
	pid_t me = self_tid();

	cw_mutex_lock(&cap_lock);
	int i;
	for (i = 0; i < CAPTURE_MAX && caps[i].used; i++)
		;
	if (i < CAPTURE_MAX)
		caps[i] = (cap_t){ .stream = s, .tid = me, .mode = mode,
			.used = true };
	else
		overflow++;
	cw_mutex_unlock(&cap_lock);
	__atomic_add_fetch(&active, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&begun, 1, __ATOMIC_RELAXED);
	/* A barrier that started before it: the capture waits for it (a
	 * synchronise of the device's work, once). */
	while (__atomic_load_n(&syncing, __ATOMIC_SEQ_CST) != 0)
		sched_yield();
}

void
capture_end(CUstream s)
{
	cw_mutex_lock(&cap_lock);
	bool found = false;
	for (int i = 0; i < CAPTURE_MAX; i++) {
		if (caps[i].used && same_stream(&caps[i], s)) {
			caps[i].used = false;
			found = true;
			break;
		}
	}
	if (!found && overflow > 0) {
		overflow--;
		found = true;
	}
	cw_mutex_unlock(&cap_lock);
	if (found)
		__atomic_sub_fetch(&active, 1, __ATOMIC_SEQ_CST);
}

bool
capture_active(void)
{
	return __atomic_load_n(&active, __ATOMIC_SEQ_CST) != 0;
}

unsigned
capture_count(void)
{
	return __atomic_load_n(&active, __ATOMIC_RELAXED);
}

uint64_t
capture_begun(void)
{
	return __atomic_load_n(&begun, __ATOMIC_RELAXED);
}

bool
capture_forbids(void)
{
	if (!capture_active() || tls_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return false;
	pid_t me = self_tid();
	bool no = false;

	cw_mutex_lock(&cap_lock);
	if (overflow > 0)
		no = true;
	for (int i = 0; i < CAPTURE_MAX && !no; i++) {
		const cap_t *c = &caps[i];
		if (!c->used || c->mode == CU_STREAM_CAPTURE_MODE_RELAXED)
			continue;
		if (c->tid == me)
			no = true; /* its own strict capture */
		else if (tls_mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
		    c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)
			no = true; /* another thread's global capture */
	}
	cw_mutex_unlock(&cap_lock);
	return no;
}

int
capture_thread_mode(void)
{
	return tls_mode;
}

void
capture_set_thread_mode(int mode)
{
	tls_mode = mode;
}

bool
capture_barrier_enter(void)
{
	__atomic_add_fetch(&syncing, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&active, __ATOMIC_SEQ_CST) == 0)
		return true;
	__atomic_sub_fetch(&syncing, 1, __ATOMIC_SEQ_CST);
	return false;
}

void
capture_barrier_leave(void)
{
	__atomic_sub_fetch(&syncing, 1, __ATOMIC_SEQ_CST);
}

int
capture_relax(void)
{
	if (!capture_active())
		return -1;
	const driver_fns_t *d = driver_is_loaded() ? driver_get() : NULL;
	if (d == NULL || d->cuThreadExchangeStreamCaptureMode == NULL)
		return -1;
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (d->cuThreadExchangeStreamCaptureMode(&m) != CUDA_SUCCESS)
		return -1;
	return (int)m;
}

void
capture_unrelax(int saved)
{
	if (saved < 0)
		return;
	const driver_fns_t *d = driver_get();
	CUstreamCaptureMode m = (CUstreamCaptureMode)saved;
	if (d != NULL && d->cuThreadExchangeStreamCaptureMode != NULL)
		d->cuThreadExchangeStreamCaptureMode(&m);
}

void
capture_prefork(void)
{
	cw_mutex_prefork(&cap_lock);
}

void
capture_postfork_parent(void)
{
	cw_mutex_postfork_parent(&cap_lock);
}

void
capture_postfork_child(void)
{
	capture_reset();
}

void
capture_reset(void)
{
	cw_mutex_reinit(&cap_lock);
	memset(caps, 0, sizeof(caps));
	overflow = 0;
	active = syncing = 0;
	begun = 0;
	tls_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
	tls_tid = 0;
}
