/* fakecuda_stream.c: streams, events and simulated asynchronous work.
 *
 * Nothing really runs on a stream: a stream is the time its last work ends.
 * fakecuda_launch_busy() pushes that time forward; fakecuda_launch_writer()
 * does too and starts a detached thread that writes a byte over a memory range
 * from the work's start to its end, as a kernel still running would. Ordering
 * follows the driver: a blocking stream's work starts after the context's NULL
 * (legacy) stream's work, legacy work after every blocking stream's work,
 * non-blocking streams are independent, and each thread has its own
 * per-thread default stream per context (never freed: a thread-local cache
 * points at it).
 *
 * During a capture (fakecuda_capture.c) work enqueued on a capturing stream
 * becomes graph nodes instead; an event recorded there belongs to the
 * capture (capture_id) until it is recorded again.
 *
 * Waiting (synchronise, queries that answer "done", synchronous frees) sleeps
 * without fc_lock until the deadline, then takes the writer rwlock for write
 * once (fc_fence): writers hold it for read around each chunk they write and
 * re-check the clock under it, so after the fence no work that ended before
 * the deadline writes again.
 */
#include "fakecuda_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STREAM_MAGIC 0x5743a115u
#define EVENT_MAGIC 0xe7e47e47u
#define WRITER_CHUNK (64UL << 10)
#define PT_CACHE 16

typedef struct fc_event_s {
	uint32_t magic;
	fc_ctx_t *ctx;
	unsigned flags;
	bool recorded;
	uint64_t time;
	unsigned long long capture_id;  /* last recorded in that capture, or 0 */
	struct fc_event_s *next_all;
} fc_event_t;

static fc_stream_t *all_streams;
static fc_event_t *all_events;
static pthread_rwlock_t writer_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

static __thread struct {
	fc_ctx_t *ctx;
	fc_stream_t *s;
} tl_pt[PT_CACHE];
static __thread int tl_npt;

/* ============================================================== fence */

void
fc_fence(void)
{
	pthread_rwlock_wrlock(&writer_lock);
	pthread_rwlock_unlock(&writer_lock);
}

void
fc_writer_rdlock(void)
{
	pthread_rwlock_rdlock(&writer_lock);
}

void
fc_writer_unlock(void)
{
	pthread_rwlock_unlock(&writer_lock);
}

static void
atfork_prepare(void)
{
	pthread_rwlock_wrlock(&writer_lock);
}

static void
atfork_release(void)
{
	pthread_rwlock_unlock(&writer_lock);
}

/* In the child the forking thread has a new thread id, so glibc would take
 * an unlock for a reader's and leave the lock corrupt (the next fork or
 * synchronise in the child deadlocks).  No other thread exists there:
 * start the lock afresh. */
static void
atfork_child(void)
{
	pthread_rwlock_t fresh =
	    PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

	writer_lock = fresh;
}

__attribute__((constructor)) static void
stream_constructor(void)
{
	pthread_atfork(atfork_prepare, atfork_release, atfork_child);
}

/* ============================================================ streams */

static fc_stream_t *
stream_new(fc_ctx_t *ctx, unsigned flags, int priority)
{
	fc_stream_t *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->magic = STREAM_MAGIC;
	s->ctx = ctx;
	s->flags = flags;
	s->priority = priority;
	s->next_all = all_streams;
	all_streams = s;
	return s;
}

static fc_stream_t *
legacy_of(fc_ctx_t *ctx)
{
	if (!ctx->legacy) {
		ctx->legacy = stream_new(ctx, 0, 0);
		if (ctx->legacy)
			ctx->legacy->legacy = true;
	}
	return ctx->legacy;
}

static fc_stream_t *
per_thread_of(fc_ctx_t *ctx)
{
	fc_stream_t *s;

	for (int i = 0; i < tl_npt; i++)
		if (tl_pt[i].ctx == ctx)
			return tl_pt[i].s;
	s = stream_new(ctx, 0, 0);
	if (!s)
		return NULL;
	s->per_thread = true;
	if (tl_npt == PT_CACHE)
		tl_npt--;     /* forget the last one; it stays valid for ordering */
	tl_pt[tl_npt].ctx = ctx;
	tl_pt[tl_npt].s = s;
	tl_npt++;
	return s;
}

static fc_stream_t *
stream_lookup(CUstream h)
{
	for (fc_stream_t *s = all_streams; s; s = s->next_all)
		if ((CUstream)s == h)
			return s->magic == STREAM_MAGIC && s->ctx->alive ? s : NULL;
	return NULL;
}

CUresult
fc_stream_get(CUstream h, bool ptsz, fc_stream_t **out)
{
	fc_ctx_t *ctx = fc_current();
	fc_stream_t *s;

	if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
		if (!ctx || !fc_ctx_valid(ctx))
			return CUDA_ERROR_INVALID_CONTEXT;
		if (h == CU_STREAM_PER_THREAD || (h == NULL && ptsz))
			s = per_thread_of(ctx);
		else
			s = legacy_of(ctx);
		if (!s)
			return CUDA_ERROR_OUT_OF_MEMORY;
	} else if (!(s = stream_lookup(h))) {
		return CUDA_ERROR_INVALID_HANDLE;
	}
	*out = s;
	return CUDA_SUCCESS;
}

static bool
blocking(const fc_stream_t *s)
{
	return !(s->flags & CU_STREAM_NON_BLOCKING);
}

uint64_t
fc_stream_enqueue(fc_stream_t *s, uint64_t dur, uint64_t *start)
{
	uint64_t st = fc_now();

	if (s->done > st)
		st = s->done;
	if (s->legacy) {
		for (fc_stream_t *t = all_streams; t; t = t->next_all)
			if (t->ctx == s->ctx && blocking(t) && t->done > st)
				st = t->done;
	} else if (blocking(s) && s->ctx->legacy && s->ctx->legacy->done > st) {
		st = s->ctx->legacy->done;
	}
	if (start)
		*start = st;
	s->done = st + dur;
	fc_device_done(s->ctx->device, s->done);
	return s->done;
}

static fc_event_t *
event_lookup(CUevent h)
{
	for (fc_event_t *e = all_events; e; e = e->next_all)
		if ((CUevent)e == h)
			return e->magic == EVENT_MAGIC ? e : NULL;
	return NULL;
}

void
fc_stream_ctx_teardown(fc_ctx_t *ctx)
{
	for (fc_stream_t **ps = &all_streams; *ps;) {
		fc_stream_t *s = *ps;

		if (s->ctx == ctx && !s->legacy && !s->per_thread) {
			*ps = s->next_all;
			fc_capture_stream_gone(s);
			s->magic = 0;
			free(s);
		} else {
			if (s->ctx == ctx)
				s->done = 0;
			ps = &s->next_all;
		}
	}
	for (fc_event_t **pe = &all_events; *pe;) {
		fc_event_t *e = *pe;

		if (e->ctx == ctx) {
			*pe = e->next_all;
			e->magic = 0;
			free(e);
		} else {
			pe = &e->next_all;
		}
	}
}

static CUresult
stream_create(CUstream *ph, unsigned flags, int priority)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (priority < -5)
		priority = -5;
	if (priority > 0)
		priority = 0;
	s = stream_new(ctx, flags, priority);
	if (!s)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else
		*ph = (CUstream)s;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	FC_COUNT(cuStreamCreate);
	return stream_create(phStream, Flags, 0);
}

FC_EXPORT CUresult CUDAAPI
cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
	FC_COUNT(cuStreamCreateWithPriority);
	return stream_create(phStream, flags, priority);
}

static CUresult
stream_destroy(CUstream h)
{
	fc_stream_t *s;
	CUresult r;

	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	s = stream_lookup(h);
	if (!s || s->legacy || s->per_thread) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	/* Its work still counts in the device's done time; a capture ends. */
	fc_capture_stream_gone(s);
	for (fc_stream_t **ps = &all_streams; *ps; ps = &(*ps)->next_all) {
		if (*ps == s) {
			*ps = s->next_all;
			break;
		}
	}
	s->magic = 0;
	free(s);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuStreamDestroy(CUstream hStream)
{
	FC_COUNT(cuStreamDestroy);
	return stream_destroy(hStream);
}

FC_EXPORT CUresult CUDAAPI
cuStreamDestroy_v2(CUstream hStream)
{
	FC_COUNT(cuStreamDestroy_v2);
	return stream_destroy(hStream);
}

static CUresult
stream_sync(CUstream h, bool pt)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	CUresult r;
	uint64_t t;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)) ||
	    (r = fc_capture_wait(s))) {
		fc_leave();
		return r;
	}
	t = s->done;
	fc_leave();
	fc_wait_until(t);
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuStreamSynchronize(CUstream hStream)
{
	FC_COUNT(cuStreamSynchronize);
	return stream_sync(hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuStreamSynchronize_ptsz(CUstream hStream)
{
	FC_COUNT(cuStreamSynchronize_ptsz);
	return stream_sync(hStream, true);
}

static CUresult
stream_query(CUstream h, bool pt)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	CUresult r;
	bool done;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)) ||
	    (r = fc_capture_wait(s))) {
		fc_leave();
		return r;
	}
	done = s->done <= fc_now();
	fc_leave();
	if (!done)
		return CUDA_ERROR_NOT_READY;
	fc_fence();
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuStreamQuery(CUstream hStream)
{
	FC_COUNT(cuStreamQuery);
	return stream_query(hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuStreamQuery_ptsz(CUstream hStream)
{
	FC_COUNT(cuStreamQuery_ptsz);
	return stream_query(hStream, true);
}

static CUresult
stream_wait_event(CUstream h, CUevent he, unsigned flags, bool pt)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	fc_event_t *e;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)))
		goto out;
	e = event_lookup(he);
	if (!e) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (e->capture_id && fc_capture_find(e->capture_id)) {
		/* joining another stream into a capture: not simulated */
		if (!s->capture || fc_capture_id(s->capture) != e->capture_id)
			r = CUDA_ERROR_NOT_SUPPORTED;
		goto out;
	}
	if (s->capture)     /* an outside event: no node (not simulated) */
		goto out;
	if (e->recorded && e->time > s->done)
		s->done = e->time;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	FC_COUNT(cuStreamWaitEvent);
	return stream_wait_event(hStream, hEvent, Flags, false);
}

FC_EXPORT CUresult CUDAAPI
cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	FC_COUNT(cuStreamWaitEvent_ptsz);
	return stream_wait_event(hStream, hEvent, Flags, true);
}

/* what: 0 priority, 1 flags, 2 context */
static CUresult
stream_get(CUstream h, bool pt, int what, void *out)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)))
		goto out;
	if (!out)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (what == 0)
		*(int *)out = s->priority;
	else if (what == 1)
		*(unsigned *)out = s->flags;
	else
		*(CUcontext *)out = (CUcontext)s->ctx;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetPriority(CUstream hStream, int *priority)
{
	FC_COUNT(cuStreamGetPriority);
	return stream_get(hStream, false, 0, priority);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
	FC_COUNT(cuStreamGetPriority_ptsz);
	return stream_get(hStream, true, 0, priority);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	FC_COUNT(cuStreamGetFlags);
	return stream_get(hStream, false, 1, flags);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
	FC_COUNT(cuStreamGetFlags_ptsz);
	return stream_get(hStream, true, 1, flags);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
	FC_COUNT(cuStreamGetCtx);
	return stream_get(hStream, false, 2, pctx);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
	FC_COUNT(cuStreamGetCtx_ptsz);
	return stream_get(hStream, true, 2, pctx);
}

static CUresult
stream_get_ctx_v2(CUstream h, bool pt, CUcontext *pctx, CUgreenCtx *pgreen)
{
	CUresult r;

	if (!pctx || !pgreen)
		return CUDA_ERROR_INVALID_VALUE;
	r = stream_get(h, pt, 2, pctx);
	if (!r)
		*pgreen = NULL;
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
	FC_COUNT(cuStreamGetCtx_v2);
	return stream_get_ctx_v2(hStream, false, pCtx, pGreenCtx);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
	FC_COUNT(cuStreamGetCtx_v2_ptsz);
	return stream_get_ctx_v2(hStream, true, pCtx, pGreenCtx);
}

/* ============================================================= events */

FC_EXPORT CUresult CUDAAPI
cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	fc_ctx_t *ctx;
	fc_event_t *e;
	CUresult r;

	FC_COUNT(cuEventCreate);
	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if (!phEvent || (Flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
	    CU_EVENT_INTERPROCESS)) || ((Flags & CU_EVENT_INTERPROCESS) &&
	    !(Flags & CU_EVENT_DISABLE_TIMING))) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	e->magic = EVENT_MAGIC;
	e->ctx = ctx;
	e->flags = Flags;
	e->next_all = all_events;
	all_events = e;
	*phEvent = (CUevent)e;
out:
	fc_leave();
	return r;
}

static CUresult
event_record(CUevent he, CUstream h, unsigned flags, bool pt)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	fc_event_t *e;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)))
		goto out;
	e = event_lookup(he);
	if (!e) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	{
		fc_capture_t *cap;

		if ((r = fc_capture_work(s, &cap)))
			goto out;
		if (cap) {          /* the event now belongs to the capture */
			e->capture_id = fc_capture_id(cap);
			goto out;
		}
	}
	e->capture_id = 0;
	e->time = fc_stream_enqueue(s, 0, NULL);
	e->recorded = true;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuEventRecord(CUevent hEvent, CUstream hStream)
{
	FC_COUNT(cuEventRecord);
	return event_record(hEvent, hStream, 0, false);
}

FC_EXPORT CUresult CUDAAPI
cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	FC_COUNT(cuEventRecord_ptsz);
	return event_record(hEvent, hStream, 0, true);
}

FC_EXPORT CUresult CUDAAPI
cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	FC_COUNT(cuEventRecordWithFlags);
	return event_record(hEvent, hStream, flags, false);
}

FC_EXPORT CUresult CUDAAPI
cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	FC_COUNT(cuEventRecordWithFlags_ptsz);
	return event_record(hEvent, hStream, flags, true);
}

/* Deadline of an event (0 when never recorded). */
static CUresult
event_time(CUevent he, uint64_t *t)
{
	fc_event_t *e;
	CUresult r;

	fc_enter();
	if (!(r = fc_check_init())) {
		fc_capture_t *c;

		e = event_lookup(he);
		if (!e)
			r = CUDA_ERROR_INVALID_HANDLE;
		else if (e->capture_id && (c = fc_capture_find(e->capture_id))) {
			/* an event of a capture still going on: refused, and the
			 * capture invalidated, in every mode (H200) */
			fc_capture_invalidate(c);
			r = CUDA_ERROR_CAPTURED_EVENT;
		} else if (!(r = fc_capture_unsafe()))
			*t = e->recorded ? e->time : 0;
	}
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuEventQuery(CUevent hEvent)
{
	uint64_t t;
	CUresult r;

	FC_COUNT(cuEventQuery);
	if ((r = event_time(hEvent, &t)))
		return r;
	if (t > fc_now())
		return CUDA_ERROR_NOT_READY;
	fc_fence();
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuEventSynchronize(CUevent hEvent)
{
	uint64_t t;
	CUresult r;

	FC_COUNT(cuEventSynchronize);
	if ((r = event_time(hEvent, &t)))
		return r;
	fc_wait_until(t);
	return CUDA_SUCCESS;
}

static CUresult
event_destroy(CUevent he)
{
	CUresult r;

	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	r = CUDA_ERROR_INVALID_HANDLE;
	for (fc_event_t **pe = &all_events; *pe; pe = &(*pe)->next_all) {
		if (*pe == (fc_event_t *)he) {
			fc_event_t *e = *pe;

			*pe = e->next_all;
			e->magic = 0;
			free(e);
			r = CUDA_SUCCESS;
			break;
		}
	}
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuEventDestroy(CUevent hEvent)
{
	FC_COUNT(cuEventDestroy);
	return event_destroy(hEvent);
}

FC_EXPORT CUresult CUDAAPI
cuEventDestroy_v2(CUevent hEvent)
{
	FC_COUNT(cuEventDestroy_v2);
	return event_destroy(hEvent);
}

static CUresult
elapsed(float *ms, CUevent hs, CUevent he)
{
	fc_event_t *s, *e;
	CUresult r;

	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	s = event_lookup(hs);
	e = event_lookup(he);
	if (!ms) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (!s || !e || !s->recorded || !e->recorded ||
	    ((s->flags | e->flags) & CU_EVENT_DISABLE_TIMING)) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else if (s->time > fc_now() || e->time > fc_now()) {
		r = CUDA_ERROR_NOT_READY;
	} else {
		*ms = (float)((double)((int64_t)(e->time - s->time)) / 1e6);
	}
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	FC_COUNT(cuEventElapsedTime);
	return elapsed(pMilliseconds, hStart, hEnd);
}

FC_EXPORT CUresult CUDAAPI
cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	FC_COUNT(cuEventElapsedTime_v2);
	return elapsed(pMilliseconds, hStart, hEnd);
}

/* ========================================================== simulated work */

FC_EXPORT CUresult
fakecuda_launch_busy(CUstream h, unsigned ms)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	CUresult r;

	fc_enter();
	if (!(r = fc_need_ctx(&ctx)) && !(r = fc_stream_get(h, false, &s))) {
		fc_capture_t *cap;

		if (!(r = fc_capture_work(s, &cap))) {
			if (cap) {          /* a kernel node */
				fc_nparams_t np = { .type = CU_GRAPH_NODE_TYPE_KERNEL };

				np.u.kernel.dur = (uint64_t)ms * 1000000u;
				r = fc_capture_add(cap, &np);
			} else {
				fc_stream_enqueue(s, (uint64_t)ms * 1000000u, NULL);
			}
		}
	}
	fc_leave();
	return r;
}

struct writer_s {
	unsigned char *addr;
	size_t n;
	uint64_t start, end;
	unsigned char byte;
};

static void
sleep_until(uint64_t t)
{
	struct timespec ts;

	while (fc_now() < t) {
		ts.tv_sec = (time_t)(t / 1000000000u);
		ts.tv_nsec = (long)(t % 1000000000u);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

static void *
writer_main(void *arg)
{
	struct writer_s w = *(struct writer_s *)arg;

	free(arg);
	sleep_until(w.start);
	for (;;) {
		for (size_t off = 0; off < w.n; off += WRITER_CHUNK) {
			size_t k = w.n - off < WRITER_CHUNK ? w.n - off : WRITER_CHUNK;

			fc_writer_rdlock();
			if (fc_now() >= w.end) {
				fc_writer_unlock();
				return NULL;
			}
			memset(w.addr + off, w.byte, k);
			fc_writer_unlock();
		}
		{
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL);
		}
	}
}

CUresult
fc_stream_writer(fc_stream_t *s, uintptr_t p, size_t n, uint64_t dur,
    unsigned char byte)
{
	struct writer_s *w;
	pthread_attr_t attr;
	pthread_t tid;
	void *addr;
	CUresult r = CUDA_SUCCESS;

	addr = fc_mem_translate(p, n);
	w = addr ? malloc(sizeof(*w)) : NULL;
	if (!addr || !w)
		return addr ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	w->addr = addr;
	w->n = n;
	w->byte = byte;
	w->end = fc_stream_enqueue(s, dur, &w->start);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 << 10);
	if (pthread_create(&tid, &attr, writer_main, w) != 0) {
		free(w);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_attr_destroy(&attr);
	return r;
}

FC_EXPORT CUresult
fakecuda_launch_writer(CUstream h, CUdeviceptr p, size_t n, unsigned ms,
    unsigned char byte)
{
	fc_capture_t *cap;
	fc_ctx_t *ctx;
	fc_stream_t *s;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, false, &s)) ||
	    (r = fc_capture_work(s, &cap)))
		goto out;
	if (cap) {          /* a kernel node that writes when the graph runs */
		fc_nparams_t np = { .type = CU_GRAPH_NODE_TYPE_KERNEL };

		if (!fc_mem_node_range_ok((uintptr_t)p, n)) {
			r = CUDA_ERROR_INVALID_VALUE;
			goto out;
		}
		np.u.kernel.dur = (uint64_t)ms * 1000000u;
		np.u.kernel.p = (uintptr_t)p;
		np.u.kernel.n = n;
		np.u.kernel.byte = byte;
		np.u.kernel.writer = true;
		r = fc_capture_add(cap, &np);
		goto out;
	}
	r = fc_stream_writer(s, (uintptr_t)p, n, (uint64_t)ms * 1000000u, byte);
out:
	fc_leave();
	return r;
}
