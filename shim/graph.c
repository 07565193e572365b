#include "preamble.h"
/*
 * graph.c -- stream capture (lib/capture.h) and graph memory
 * (graphmem.h): the capture hooks keep the table of captures in
 * progress; the graph hooks keep the node and exec tables and turn a
 * launch into records of kind graph and frees; in pool mode, attachments
 * of pooled managed memory (doc/shim.md "Stream capture and graphs").
 *
 * A launch: each allocation node of the exec that no free node of it
 * frees becomes a live record of kind graph (the stack that made the
 * node; aux: the launch's stack), and each other free node frees the
 * record at its address.
 */
#include <string.h>
#include <sys/mman.h>

#include "engine.h"

/* The per-thread variants name the calling thread's default stream by
 * the handle 0: the same stream as CU_STREAM_PER_THREAD. */
CUstream
shim_stream_of(const char *api, CUstream s)
{
	size_t n = strlen(api);
	if (s == NULL && n > 5 && strcmp(api + n - 5, "_ptsz") == 0)
		return CU_STREAM_PER_THREAD;
	return s;
}

/* Whether stream s, as api names it, is capturing; *g gets the graph
 * being captured when the driver says (else NULL).  One atomic load with
 * no capture in progress; the driver is asked only while one is. */
bool
shim_stream_capturing(const char *api, CUstream s, CUgraph *g)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUgraph graph = NULL;

	*g = NULL;
	if (!capture_active())
		return false;
	s = shim_stream_of(api, s);
	const driver_fns_t *d = driver_get();
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;
	if (d == NULL)
		return false;
	if (d->cuStreamGetCaptureInfo_v3 != NULL)
		r = d->cuStreamGetCaptureInfo_v3(s, &st, NULL, &graph, NULL, NULL, NULL);
	else if (d->cuStreamGetCaptureInfo_v2 != NULL)
		r = d->cuStreamGetCaptureInfo_v2(s, &st, NULL, &graph, NULL, NULL);
	else if (d->cuStreamIsCapturing != NULL)
		r = d->cuStreamIsCapturing(s, &st);
	if (r != CUDA_SUCCESS)
		return false;
	if (st == CU_STREAM_CAPTURE_STATUS_NONE)
		return false;
	*g = graph;
	return true;
}

/* After the driver's answer to a begin: the capture is in progress (a
 * success), or never was. */
static CUresult
begun(CUresult r, CUstream s)
{
	if (r == CUDA_SUCCESS) {
		STATS_INC(captures);
		log_debug(2, "stream capture begun on %p (%u in progress)",
		    (void *)s, capture_count());
	} else {
		capture_end(s);
	}
	return r;
}

CUresult
track_begin_capture_v1(void *real, const char *api, CUstream s)
{
	CUstream k = shim_stream_of(api, s);

	/* The mode-less ABI of CUDA 10.0 captures in relaxed mode (H200,
	 * driver 580: probe part capture). */
	capture_begin(k, CU_STREAM_CAPTURE_MODE_RELAXED);
	return begun(CALL(real, CUresult (*)(CUstream), (s)), k);
}

CUresult
track_begin_capture(void *real, const char *api, CUstream s,
    CUstreamCaptureMode m)
{
	CUstream k = shim_stream_of(api, s);

	capture_begin(k, (int)m);
	return begun(CALL(real, CUresult (*)(CUstream, CUstreamCaptureMode),
	    (s, m)), k);
}

CUresult
track_begin_capture_to_graph(void *real, const char *api, CUstream s,
    CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges,
    size_t ndeps, CUstreamCaptureMode m)
{
	typedef CUresult (*fn_t)(CUstream, CUgraph, const CUgraphNode *,
	    const CUgraphEdgeData *, size_t, CUstreamCaptureMode);
	CUstream k = shim_stream_of(api, s);

	capture_begin(k, (int)m);
	return begun(CALL(real, fn_t, (s, g, deps, edges, ndeps, m)), k);
}

CUresult
track_end_capture(void *real, const char *api, CUstream s, CUgraph *pg)
{
	CUstream k = shim_stream_of(api, s);
	CUresult r = CALL(real, CUresult (*)(CUstream, CUgraph *), (s, pg));
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;

	/* The capture is over unless the driver says the stream still
	 * captures, whatever the end answered (H200: a strict capture ended
	 * on another thread, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, is over
	 * too).  k names the per-thread stream explicitly. */
	const driver_fns_t *d = driver_get();
	if (d == NULL || d->cuStreamIsCapturing == NULL || d->cuStreamIsCapturing(k, &st) != CUDA_SUCCESS ||
	    st == CU_STREAM_CAPTURE_STATUS_NONE)
		capture_end(k);
	return r;
}

CUresult
track_exchange_capture_mode(void *real, const char *api,
    CUstreamCaptureMode *m)
{
	CUstreamCaptureMode want = m != NULL ? *m : CU_STREAM_CAPTURE_MODE_GLOBAL;
	CUresult r = CALL(real, CUresult (*)(CUstreamCaptureMode *), (m));

	(void)api;
	if (r == CUDA_SUCCESS)
		capture_set_thread_mode((int)want);
	return r;
}

CUresult
track_graph_add_mem_alloc(void *real, const char *api, CUgraphNode *node,
    CUgraph g, const CUgraphNode *deps, size_t ndeps,
    CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	typedef CUresult (*fn_t)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    size_t, CUDA_MEM_ALLOC_NODE_PARAMS *);
	CUresult r = CALL(real, fn_t, (node, g, deps, ndeps, p));

	(void)api;
	if (r == CUDA_SUCCESS && p != NULL)
		graphmem_node((uintptr_t)p->dptr, p->bytesize,
		    p->poolProps.location.id, g, stack_capture_outside());
	return r;
}

CUresult
track_graph_add_mem_free(void *real, const char *api, CUgraphNode *node,
    CUgraph g, const CUgraphNode *deps, size_t ndeps, CUdeviceptr dptr)
{
	typedef CUresult (*fn_t)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    size_t, CUdeviceptr);
	CUresult r = CALL(real, fn_t, (node, g, deps, ndeps, dptr));

	(void)api;
	if (r == CUDA_SUCCESS)
		STATS_INC(graph_free_nodes);
	return r;
}

/* cuGraphAddNode's parameters, after the driver filled them in. */
static void
node_added(CUgraph g, const CUgraphNodeParams *p)
{
	if (p == NULL)
		return;
	if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
		graphmem_node((uintptr_t)p->alloc.dptr, p->alloc.bytesize,
		    p->alloc.poolProps.location.id, g, stack_capture_outside());
	else if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
		STATS_INC(graph_free_nodes);
}

CUresult
track_graph_add_node_v1(void *real, const char *api, CUgraphNode *node,
    CUgraph g, const CUgraphNode *deps, size_t ndeps, CUgraphNodeParams *p)
{
	typedef CUresult (*fn_t)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    size_t, CUgraphNodeParams *);
	CUresult r = CALL(real, fn_t, (node, g, deps, ndeps, p));

	(void)api;
	if (r == CUDA_SUCCESS)
		node_added(g, p);
	return r;
}

CUresult
track_graph_add_node(void *real, const char *api, CUgraphNode *node,
    CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges,
    size_t ndeps, CUgraphNodeParams *p)
{
	typedef CUresult (*fn_t)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    const CUgraphEdgeData *, size_t, CUgraphNodeParams *);
	CUresult r = CALL(real, fn_t, (node, g, deps, edges, ndeps, p));

	(void)api;
	if (r == CUDA_SUCCESS)
		node_added(g, p);
	return r;
}

/* The memory nodes of g (and of its child graphs), gathered for an exec. */
typedef struct scan_s {
	gm_alloc_t *allocs;
	uintptr_t *frees;
	size_t na, nf, cap;
	bool failed;
} scan_t;

static void
scan_graph(const driver_fns_t *d, CUgraph g, scan_t *sc, int depth)
{
	size_t n = 0;

	if (depth > 8 || d->cuGraphGetNodes == NULL || d->cuGraphNodeGetType == NULL ||
	    d->cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS || n == 0)
		return;
	size_t bytes = n * sizeof(CUgraphNode);
	CUgraphNode *nodes = graphmem_map(bytes);
	if (nodes == NULL) {
		sc->failed = true;
		return;
	}
	size_t got = n;
	if (d->cuGraphGetNodes(g, nodes, &got) != CUDA_SUCCESS)
		got = 0;
	for (size_t i = 0; i < got && i < n && !sc->failed; i++) {
		CUgraphNodeType t;
		if (d->cuGraphNodeGetType(nodes[i], &t) != CUDA_SUCCESS)
			continue;
		if (t == CU_GRAPH_NODE_TYPE_GRAPH && d->cuGraphChildGraphNodeGetGraph != NULL) {
			CUgraph child;
			if (d->cuGraphChildGraphNodeGetGraph(nodes[i], &child) == CUDA_SUCCESS)
				scan_graph(d, child, sc, depth + 1);
			continue;
		}
		if (t != CU_GRAPH_NODE_TYPE_MEM_ALLOC &&
		    t != CU_GRAPH_NODE_TYPE_MEM_FREE)
			continue;
		if (sc->na == sc->cap || sc->nf == sc->cap) {
			sc->failed = true; /* more than the graph had nodes */
			break;
		}
		if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
			CUDA_MEM_ALLOC_NODE_PARAMS p;
			memset(&p, 0, sizeof(p));
			if (d->cuGraphMemAllocNodeGetParams == NULL ||
			    d->cuGraphMemAllocNodeGetParams(nodes[i], &p) != CUDA_SUCCESS)
				continue;
			gm_alloc_t *a = &sc->allocs[sc->na++];
			memset(a, 0, sizeof(*a));
			a->dptr = (uintptr_t)p.dptr;
			a->size = p.bytesize;
			a->device = p.poolProps.location.id;
			graphmem_node_find(a->dptr, NULL, NULL, &a->stack);
		} else {
			CUdeviceptr dptr = 0;
			if (d->cuGraphMemFreeNodeGetParams == NULL ||
			    d->cuGraphMemFreeNodeGetParams(nodes[i], &dptr) !=
			    CUDA_SUCCESS)
				continue;
			sc->frees[sc->nf++] = (uintptr_t)dptr;
		}
	}
	munmap(nodes, bytes);
}

/* Reads the memory nodes of g for the new exec e. */
static void
model_exec(CUgraphExec e, CUgraph g)
{
	size_t n = 0;

	const driver_fns_t *d = driver_get();
	if (d == NULL || d->cuGraphGetNodes == NULL || d->cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS)
		return;
	/* Child graphs may hold more: room for 4x the top level's nodes,
	 * and at least 1024. */
	scan_t sc = { .cap = n * 4 < 1024 ? 1024 : n * 4 };
	size_t bytes = sc.cap * (sizeof(gm_alloc_t) + sizeof(uintptr_t));
	void *buf = graphmem_map(bytes);
	if (buf == NULL)
		return;
	sc.allocs = buf;
	sc.frees = (uintptr_t *)(sc.allocs + sc.cap);
	scan_graph(d, g, &sc, 0);
	if (sc.failed)
		log_warn("graph %p: its memory nodes could not all be read; "
		    "its launches are not modelled", (void *)g);
	else if (sc.na + sc.nf > 0) {
		for (size_t i = 0; i < sc.na; i++)
			for (size_t j = 0; j < sc.nf; j++)
				if (sc.frees[j] == sc.allocs[i].dptr)
					sc.allocs[i].freed_inside = true;
		if (graphmem_exec_add(e, sc.allocs, sc.na, sc.frees, sc.nf))
			log_warn("out of memory: graph exec %p not modelled",
			    (void *)e);
	}
	munmap(buf, bytes);
}

/* After a cuGraphInstantiate*: the new exec's memory nodes. */
static void
instantiated(CUresult r, CUgraphExec *pe, CUgraph g)
{
	if (r == CUDA_SUCCESS && pe != NULL)
		model_exec(*pe, g);
}

CUresult
track_graph_instantiate_v1(void *real, const char *api, CUgraphExec *pe,
    CUgraph g, CUgraphNode *err_node, char *log, size_t log_size)
{
	typedef CUresult (*fn_t)(CUgraphExec *, CUgraph, CUgraphNode *,
	    char *, size_t);
	CUresult r = CALL(real, fn_t, (pe, g, err_node, log, log_size));

	(void)api;
	instantiated(r, pe, g);
	return r;
}

CUresult
track_graph_instantiate(void *real, const char *api, CUgraphExec *pe,
    CUgraph g, unsigned long long flags)
{
	typedef CUresult (*fn_t)(CUgraphExec *, CUgraph, unsigned long long);
	CUresult r = CALL(real, fn_t, (pe, g, flags));

	(void)api;
	instantiated(r, pe, g);
	return r;
}

CUresult
track_graph_instantiate_params(void *real, const char *api,
    CUgraphExec *pe, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	typedef CUresult (*fn_t)(CUgraphExec *, CUgraph,
	    CUDA_GRAPH_INSTANTIATE_PARAMS *);
	CUresult r = CALL(real, fn_t, (pe, g, p));

	(void)api;
	instantiated(r, pe, g);
	return r;
}

/* A free node ran: the live record at d is freed (graph memory, or
 * stream-ordered memory made before). */
static void
graph_frees(uintptr_t d, stack_id_t st, const char *api)
{
	reg_handle_t h;
	reg_rec_t rec;

	/* Nothing live there (the driver's business), or a pooled block,
	 * whose address the driver never saw (no free node can name it). */
	if (registry_find(NS_ADDR, d, &h, &rec) || (rec.flags & REC_F_POOLED))
		return;
	STATS_INC(graph_freed_by_graph);
	STATS_INC(frees);
	shim_remove_rec(h, st, 0, api);
}

CUresult
track_graph_launch(void *real, const char *api, CUgraphExec e, CUstream s)
{
	CUresult r = CALL(real, CUresult (*)(CUgraphExec, CUstream), (e, s));
	CUgraph cg;

	if (r != CUDA_SUCCESS)
		return r;
	STATS_INC(graph_launches);
	/* Launched into a capture, it is a node of that graph: nothing
	 * runs now. */
	if (shim_stream_capturing(api, s, &cg))
		return r;
	const gm_exec_t *x = graphmem_exec_acquire(e);
	if (x == NULL)
		return r;
	const gm_alloc_t *a;
	const uintptr_t *f;
	size_t na = graphmem_exec_allocs(x, &a);
	size_t nf = graphmem_exec_frees(x, &f);
	stack_id_t st = stack_capture_outside();
	for (size_t j = 0; j < nf; j++) {
		bool own = false;
		for (size_t i = 0; i < na && !own; i++)
			own = a[i].dptr == f[j];
		if (!own)
			graph_frees(f[j], st, api);
	}
	for (size_t i = 0; i < na; i++) {
		if (a[i].freed_inside)
			continue;
		reg_handle_t h;
		reg_rec_t rec;
		/* Still live from an earlier launch: the driver accepted the
		 * launch, so it freed it (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_
		 * FREE_ON_LAUNCH). */
		if (!registry_find(NS_ADDR, a[i].dptr, &h, &rec)) {
			STATS_INC(frees);
			shim_remove_rec(h, st, 0, api);
		}
		shim_record_st(NS_ADDR, KIND_GRAPH, a[i].dptr, a[i].size,
		    a[i].device, NULL, (uintptr_t)st, api, 0,
		    a[i].stack != 0 ? a[i].stack : st);
		graphmem_node_launched(a[i].dptr);
		STATS_INC(graph_made_live);
	}
	graphmem_exec_release(x);
	return r;
}

CUresult
track_graph_exec_destroy(void *real, const char *api, CUgraphExec e)
{
	CUresult r = CALL(real, CUresult (*)(CUgraphExec), (e));

	(void)api;
	if (r == CUDA_SUCCESS)
		graphmem_exec_destroyed(e);
	return r;
}

CUresult
track_graph_destroy(void *real, const char *api, CUgraph g)
{
	CUresult r = CALL(real, CUresult (*)(CUgraph), (g));

	(void)api;
	if (r == CUDA_SUCCESS)
		graphmem_graph_destroyed(g);
	return r;
}

/* Whether device dev lets the CPU and the GPU use managed memory at once
 * (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, driver.h's cached
 * attribute): there a stream attachment changes no result, so a pooled
 * managed block needs none of the driver's. */
bool
shim_concurrent_managed(int dev)
{
	int v = 0;

	return !driver_attr(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
	    &v) && v != 0;
}

CUresult
track_stream_attach_mem(void *real, const char *api, CUstream s,
    CUdeviceptr dptr, size_t length, unsigned int flags)
{
	typedef CUresult (*fn_t)(CUstream, CUdeviceptr, size_t, unsigned int);
	reg_rec_t rec;
	kind_t k;

	if (shim_pool_mode()) {
		switch (shim_pooled_at((uintptr_t)dptr, &rec, &k)) {
		case PQ_LIVE:
			if (rec.kind != KIND_MANAGED)
				return CUDA_ERROR_INVALID_VALUE;
			/* As on a driver allocation of that size: its start,
			 * all of it (H200, probe part capture). */
			if ((uintptr_t)dptr != rec.base ||
			    (length != 0 && length != rec.size) ||
			    (flags != CU_MEM_ATTACH_GLOBAL &&
			    flags != CU_MEM_ATTACH_HOST &&
			    flags != CU_MEM_ATTACH_SINGLE))
				return CUDA_ERROR_INVALID_VALUE;
			return CUDA_SUCCESS;
		case PQ_DEAD:
			return CUDA_ERROR_INVALID_VALUE;
		case PQ_NONE:
			break;
		}
	}
	(void)api;
	return CALL(real, fn_t, (s, dptr, length, flags));
}
