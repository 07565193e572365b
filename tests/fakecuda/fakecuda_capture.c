/* fakecuda_capture.c: stream capture — each thread's capture interaction
 * mode, one capture per stream, the rule for potentially unsafe calls, and
 * the capture exports.
 *
 * A capture belongs to one stream (the fixture does not join other streams
 * into it through events), was begun by one thread in one mode, and builds
 * one graph: work issued on the stream while it captures becomes nodes of
 * that graph, each depending on the nodes the work before it made (deps).
 *
 * The rule (cuda.h, cuThreadExchangeStreamCaptureMode): a thread in mode
 * GLOBAL or THREAD_LOCAL that began a capture not begun RELAXED, or a
 * thread in mode GLOBAL while another thread has a GLOBAL capture, is
 * prohibited from potentially unsafe calls; such a call returns
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the captures that
 * prohibit it.  An invalidated capture still goes on (its stream refuses new
 * work with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) until cuStreamEndCapture
 * returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and no graph.  Measured on
 * the H200 (driver 580, probe part capture): cuMemAllocAsync on a stream
 * that does not capture is such a call, synchronous sets are not, the v1
 * cuStreamBeginCapture captures relaxed, cuCtxSynchronize is refused during
 * any capture of the device whatever the mode, and cuStreamEndCapture of a
 * non-relaxed capture from another thread ends it (WRONG_THREAD, no graph).
 *
 * Locking: everything under fc_lock; the mode is thread-local.
 */
#include "fakecuda_internal.h"

#include <stdlib.h>
#include <string.h>

#define CAPTURE_MAX_DEPS 64

struct fc_capture_s {
	fc_stream_t *stream;
	CUstreamCaptureMode mode;
	pthread_t owner;          /* the thread that began it */
	CUstreamCaptureStatus status;
	unsigned long long id;
	fc_graph_t *graph;
	bool own_graph;           /* cuStreamBeginCapture made it (not ToGraph) */
	fc_node_t *deps[CAPTURE_MAX_DEPS];
	size_t ndeps;
	fc_capture_t *next;
};

static fc_capture_t *captures;
static unsigned long long next_capture_id = 1;
static __thread CUstreamCaptureMode tl_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

/* ================================================================ rule */

void
fc_capture_invalidate(fc_capture_t *c)
{
	c->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
}

bool
fc_capture_active(const fc_capture_t *c)
{
	return c->status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

CUresult
fc_capture_unsafe(void)
{
	pthread_t self = pthread_self();
	bool prohibited = false;

	if (tl_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_SUCCESS;
	for (fc_capture_t *c = captures; c; c = c->next) {
		bool mine = pthread_equal(c->owner, self);

		if ((mine && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
		    (!mine && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
		    tl_mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
			fc_capture_invalidate(c);
			prohibited = true;
		}
	}
	return prohibited ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

CUresult
fc_capture_ctx_sync(int dev)
{
	bool any = false;

	for (fc_capture_t *c = captures; c; c = c->next) {
		if (c->stream->ctx->device == dev) {
			fc_capture_invalidate(c);
			any = true;
		}
	}
	return any ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* The legacy stream synchronises with every blocking stream of its context:
 * with a capturing one it cannot. */
static CUresult
legacy_implicit(const fc_stream_t *s)
{
	bool any = false;

	if (!s->legacy)
		return CUDA_SUCCESS;
	for (fc_capture_t *c = captures; c; c = c->next) {
		if (c->stream->ctx == s->ctx && !(c->stream->flags & CU_STREAM_NON_BLOCKING)) {
			fc_capture_invalidate(c);
			any = true;
		}
	}
	return any ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
}

CUresult
fc_capture_work(fc_stream_t *s, fc_capture_t **cap)
{
	*cap = NULL;
	if (s->capture) {
		if (!fc_capture_active(s->capture))
			return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
		*cap = s->capture;
		return CUDA_SUCCESS;
	}
	return legacy_implicit(s);
}

CUresult
fc_capture_wait(fc_stream_t *s)
{
	CUresult r;

	if (s->capture) {
		fc_capture_invalidate(s->capture);
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	if ((r = legacy_implicit(s)))
		return r;
	return fc_capture_unsafe();
}

CUresult
fc_capture_add(fc_capture_t *c, fc_nparams_t *p)
{
	fc_node_t *n;
	CUresult r = fc_graph_add(c->graph, c->deps, c->ndeps, p, &n);

	/* A free node of memory that is no graph memory (cuMemFreeAsync of a
	 * cuMemAlloc pointer) is refused and leaves the capture as it was
	 * (H200: probe graph risky 7); any other refusal breaks it. */
	if (r == CUDA_ERROR_INVALID_VALUE && p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
		return r;
	if (r) {
		fc_capture_invalidate(c);
		return r;
	}
	c->deps[0] = n;
	c->ndeps = 1;
	return CUDA_SUCCESS;
}

fc_capture_t *
fc_capture_find(unsigned long long id)
{
	for (fc_capture_t *c = captures; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

unsigned long long
fc_capture_id(const fc_capture_t *c)
{
	return c->id;
}

static void
capture_unlink(fc_capture_t *c)
{
	for (fc_capture_t **pc = &captures; *pc; pc = &(*pc)->next) {
		if (*pc == c) {
			*pc = c->next;
			break;
		}
	}
	c->stream->capture = NULL;
}

void
fc_capture_stream_gone(fc_stream_t *s)
{
	fc_capture_t *c = s->capture;

	if (!c)
		return;
	capture_unlink(c);
	if (c->own_graph)
		fc_graph_free(c->graph);
	free(c);
}

/* ============================================================= exports */

static CUresult
begin(CUstream h, bool pt, CUstreamCaptureMode mode, fc_graph_t *into,
    const CUgraphNode *deps, size_t ndeps)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	fc_capture_t *c;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)))
		goto out;
	if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL &&
	    mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	    mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (s->legacy) {    /* the NULL stream cannot be captured */
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		goto out;
	}
	if (s->capture) {
		r = CUDA_ERROR_ILLEGAL_STATE;
		goto out;
	}
	if (into && (!fc_graph_valid(into) || ndeps > CAPTURE_MAX_DEPS ||
	    (ndeps && !deps))) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	for (size_t i = 0; into && i < ndeps; i++) {
		if (!fc_node_valid((const fc_node_t *)deps[i])) {
			r = CUDA_ERROR_INVALID_VALUE;
			goto out;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c || (!into && !(c->graph = fc_graph_new()))) {
		free(c);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if (into) {
		c->graph = into;
		for (size_t i = 0; i < ndeps; i++)
			c->deps[i] = (fc_node_t *)deps[i];
		c->ndeps = ndeps;
	}
	c->own_graph = !into;
	c->stream = s;
	c->mode = mode;
	c->owner = pthread_self();
	c->status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	c->id = next_capture_id++;
	c->next = captures;
	captures = c;
	s->capture = c;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuStreamBeginCapture(CUstream hStream)
{
	FC_COUNT(cuStreamBeginCapture);
	/* the v1 capture prohibits nothing, neither its thread nor another
	 * (H200, driver 580): relaxed */
	return begin(hStream, false, CU_STREAM_CAPTURE_MODE_RELAXED, NULL, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI
cuStreamBeginCapture_ptsz(CUstream hStream)
{
	FC_COUNT(cuStreamBeginCapture_ptsz);
	return begin(hStream, true, CU_STREAM_CAPTURE_MODE_RELAXED, NULL, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI
cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	FC_COUNT(cuStreamBeginCapture_v2);
	return begin(hStream, false, mode, NULL, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI
cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
	FC_COUNT(cuStreamBeginCapture_v2_ptsz);
	return begin(hStream, true, mode, NULL, NULL, 0);
}

static CUresult
begin_to_graph(CUstream h, bool pt, CUgraph g, const CUgraphNode *deps,
    const CUgraphEdgeData *edges, size_t ndeps, CUstreamCaptureMode mode)
{
	/* edge data other than the default (all zero) is not simulated */
	for (size_t i = 0; edges && i < ndeps; i++) {
		static const CUgraphEdgeData zero;

		if (memcmp(&edges[i], &zero, sizeof(zero)) != 0)
			return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	return begin(h, pt, mode, (fc_graph_t *)g, deps, ndeps);
}

FC_EXPORT CUresult CUDAAPI
cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
    const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
    size_t numDependencies, CUstreamCaptureMode mode)
{
	FC_COUNT(cuStreamBeginCaptureToGraph);
	return begin_to_graph(hStream, false, hGraph, dependencies, dependencyData,
	    numDependencies, mode);
}

FC_EXPORT CUresult CUDAAPI
cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
    const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
    size_t numDependencies, CUstreamCaptureMode mode)
{
	FC_COUNT(cuStreamBeginCaptureToGraph_ptsz);
	return begin_to_graph(hStream, true, hGraph, dependencies, dependencyData,
	    numDependencies, mode);
}

static CUresult
end(CUstream h, bool pt, CUgraph *pg)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	fc_capture_t *c;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)))
		goto out;
	if (!pg) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	c = s->capture;
	if (!c) {
		r = CUDA_ERROR_ILLEGAL_STATE;
		goto out;
	}
	capture_unlink(c);
	if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
	    !pthread_equal(c->owner, pthread_self())) {
		/* the capture ends all the same, without a graph (H200) */
		*pg = NULL;
		if (c->own_graph)
			fc_graph_free(c->graph);
		r = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
	} else if (fc_capture_active(c)) {
		*pg = (CUgraph)c->graph;
	} else {
		*pg = NULL;
		if (c->own_graph)
			fc_graph_free(c->graph);
		r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	}
	free(c);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	FC_COUNT(cuStreamEndCapture);
	return end(hStream, false, phGraph);
}

FC_EXPORT CUresult CUDAAPI
cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	FC_COUNT(cuStreamEndCapture_ptsz);
	return end(hStream, true, phGraph);
}

/* cuStreamIsCapturing and cuStreamGetCaptureInfo: the status, and while a
 * capture goes on its id, graph and current dependencies. */
static CUresult
info(CUstream h, bool pt, CUstreamCaptureStatus *status, cuuint64_t *id,
    CUgraph *graph, const CUgraphNode **deps, const CUgraphEdgeData **edges,
    size_t *ndeps)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	fc_capture_t *c;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)) || (r = fc_stream_get(h, pt, &s)))
		goto out;
	if (!status) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = legacy_implicit(s)))
		goto out;
	c = s->capture;
	*status = c ? c->status : CU_STREAM_CAPTURE_STATUS_NONE;
	if (!c)
		goto out;
	if (id)
		*id = c->id;
	if (graph)
		*graph = (CUgraph)c->graph;
	if (deps)
		*deps = (const CUgraphNode *)c->deps;
	if (edges)
		*edges = NULL;      /* every edge is the default one */
	if (ndeps)
		*ndeps = c->ndeps;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	FC_COUNT(cuStreamIsCapturing);
	return info(hStream, false, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

FC_EXPORT CUresult CUDAAPI
cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	FC_COUNT(cuStreamIsCapturing_ptsz);
	return info(hStream, true, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
    cuuint64_t *id_out)
{
	FC_COUNT(cuStreamGetCaptureInfo);
	return info(hStream, false, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
    cuuint64_t *id_out)
{
	FC_COUNT(cuStreamGetCaptureInfo_ptsz);
	return info(hStream, true, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
    cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out,
    size_t *numDependencies_out)
{
	FC_COUNT(cuStreamGetCaptureInfo_v2);
	return info(hStream, false, captureStatus_out, id_out, graph_out,
	    dependencies_out, NULL, numDependencies_out);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
    cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out,
    size_t *numDependencies_out)
{
	FC_COUNT(cuStreamGetCaptureInfo_v2_ptsz);
	return info(hStream, true, captureStatus_out, id_out, graph_out,
	    dependencies_out, NULL, numDependencies_out);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
    cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out,
    const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
	FC_COUNT(cuStreamGetCaptureInfo_v3);
	return info(hStream, false, captureStatus_out, id_out, graph_out,
	    dependencies_out, edgeData_out, numDependencies_out);
}

FC_EXPORT CUresult CUDAAPI
cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
    cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out,
    const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
	FC_COUNT(cuStreamGetCaptureInfo_v3_ptsz);
	return info(hStream, true, captureStatus_out, id_out, graph_out,
	    dependencies_out, edgeData_out, numDependencies_out);
}

FC_EXPORT CUresult CUDAAPI
cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode m;
	CUresult r;

	FC_COUNT(cuThreadExchangeStreamCaptureMode);
	fc_enter();
	r = fc_check_init();
	fc_leave();
	if (r)
		return r;
	if (!mode || (*mode != CU_STREAM_CAPTURE_MODE_GLOBAL &&
	    *mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	    *mode != CU_STREAM_CAPTURE_MODE_RELAXED))
		return CUDA_ERROR_INVALID_VALUE;
	m = tl_mode;
	tl_mode = *mode;
	*mode = m;
	return CUDA_SUCCESS;
}
