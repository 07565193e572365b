/* fakecuda_graph.c: CUDA graphs — graphs and their nodes, executable graphs
 * and their launch, graph memory (alloc and free nodes) and its accounting.
 *
 * A graph is its nodes in the order they were added; every dependency is an
 * earlier node, so that order is a topological one and a launch runs the
 * nodes in it, one after the other, on the launch stream (a set or copy
 * waits for the stream to reach it, as the fixture's async copies do; a
 * busy or writer node pushes the stream's time, as fakecuda_launch_* do).
 * An exec is a flat copy of the nodes (child graphs inlined), so it outlives
 * its graph.
 *
 * Graph memory (cuda.h, cuGraphAddMemAllocNode): an alloc node reserves its
 * address range at creation (a gmem; the address is fixed across
 * instantiations and launches); a launch makes it live memory (a
 * stream-ordered record); a free node of the same or another graph,
 * cuMemFree, cuMemFreeAsync or an AUTO_FREE_ON_LAUNCH relaunch frees it.
 * While it is live, relaunching its exec fails with INVALID_VALUE.  Destroying
 * the exec or the graph leaves a live allocation live; the range is given
 * back when nothing refers to it any more (gmem.refs: the alloc node, each
 * exec's copy, the live record).
 *
 * Graph memory per device, as the H200 counts it (driver 580, probe part
 * graph): physical memory comes in 32 MiB chunks, mapped when a launch needs
 * them and kept (freeing an allocation returns nothing) until
 * cuDeviceGraphMemTrim; USED_MEM_CURRENT and RESERVED_MEM_CURRENT both say
 * those chunks' size (0 before the first launch, 32 MiB after a launch of
 * 1 MiB + 3 MiB + 4 KiB, still 32 MiB after every free, 0 after a trim).
 * The chunks count in cuMemGetInfo.  A trim keeps the chunks that live
 * allocations need (not measured: every measured trim had none live).
 *
 * Handles are checked against lists (never dereferenced blindly).
 * Locking: everything under fc_lock.
 */
#include "fakecuda_internal.h"

#include <stdlib.h>
#include <string.h>

#define GRAPH_MAGIC 0x67a9b0a1u
#define NODE_MAGIC 0x70de70deu
#define EXEC_MAGIC 0xe8ecde8eu

struct fc_gmem_s {
	int device;
	uintptr_t base;
	size_t size, span;
	int refs;
	fc_rec_t *rec;            /* live, or NULL */
	fc_graph_t *freed_by;     /* the graph holding its free node, or NULL */
	CUmemPoolProps props;
	fc_gmem_t *next;
};

struct fc_node_s {
	uint32_t magic;
	fc_graph_t *graph;
	fc_nparams_t p;
	fc_node_t **deps;
	size_t ndeps;
	CUmemAccessDesc *access;  /* alloc: cuGraphMemAllocNodeGetParams's */
	size_t naccess;
};

struct fc_graph_s {
	uint32_t magic;
	fc_node_t **nodes;
	size_t n, cap;
	int execs;                /* live execs instantiated from it */
	bool mem_nodes;           /* has (or has a child with) alloc/free nodes */
	fc_graph_t *next;
};

typedef struct fc_exec_s {
	uint32_t magic;
	fc_nparams_t *nodes;
	size_t n;
	unsigned long long flags;
	fc_graph_t *origin;       /* NULL once destroyed */
	struct fc_exec_s *next;
} fc_exec_t;

static fc_graph_t *all_graphs;
static fc_exec_t *all_execs;
static fc_gmem_t *all_gmem;
#define GRAPH_CHUNK (32UL << 20)

static struct {
	uint64_t live;            /* spans of the live graph allocations */
	uint64_t chunks, high;    /* bytes of chunks mapped, and their most */
} gstat[FC_MAX_DEVICES];

static size_t
granules(size_t n)
{
	return (n + FC_GRANULARITY - 1) / FC_GRANULARITY * FC_GRANULARITY;
}

static uint64_t
chunks_for(uint64_t n)
{
	return (n + GRAPH_CHUNK - 1) / GRAPH_CHUNK * GRAPH_CHUNK;
}

/* ============================================================ memory */

static fc_gmem_t *
gmem_at(uintptr_t p)
{
	for (fc_gmem_t *g = all_gmem; g; g = g->next)
		if (g->base == p)
			return g;
	return NULL;
}

bool
fc_graph_va_has(uintptr_t p, size_t n)
{
	for (fc_gmem_t *g = all_gmem; g; g = g->next)
		if (p >= g->base && n <= g->size && p - g->base <= g->size - n)
			return true;
	return false;
}

static void
gmem_unref(fc_gmem_t *g)
{
	if (--g->refs > 0)
		return;
	for (fc_gmem_t **pg = &all_gmem; *pg; pg = &(*pg)->next) {
		if (*pg == g) {
			*pg = g->next;
			break;
		}
	}
	fc_mem_va_release(g->device, g->base, g->span);
	free(g);
}

void
fc_graph_mem_released(fc_gmem_t *g, int dev, size_t span)
{
	g->rec = NULL;
	gstat[dev].live -= span;       /* the chunks stay until a trim */
	gmem_unref(g);
}

/* A launch makes the allocation live. Returns the driver's code. */
static CUresult
gmem_map(fc_gmem_t *g)
{
	fc_device_t *d = &fc_devices[g->device];
	uint64_t need;
	CUresult r;

	if (g->rec)         /* a free the stream has not reached yet */
		fc_mem_release(g->rec);
	need = chunks_for(gstat[g->device].live + g->span);
	if (need > gstat[g->device].chunks) {
		uint64_t more = need - gstat[g->device].chunks;

		if (more > d->total - d->used)
			return CUDA_ERROR_OUT_OF_MEMORY;
		d->used += more;
		gstat[g->device].chunks = need;
		if (need > gstat[g->device].high)
			gstat[g->device].high = need;
	}
	if ((r = fc_mem_graph_map(g, g->device, g->base, g->size, g->span, &g->rec)))
		return r;
	g->refs++;
	gstat[g->device].live += g->span;
	return CUDA_SUCCESS;
}

static bool
gmem_live(const fc_gmem_t *g)
{
	return g->rec && !g->rec->free_pending;
}

/* ============================================================ graphs */

fc_graph_t *
fc_graph_new(void)
{
	fc_graph_t *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->magic = GRAPH_MAGIC;
	g->next = all_graphs;
	all_graphs = g;
	return g;
}

bool
fc_graph_valid(const fc_graph_t *g)
{
	for (fc_graph_t *q = all_graphs; q; q = q->next)
		if (q == g)
			return true;
	return false;
}

bool
fc_node_valid(const fc_node_t *n)
{
	for (fc_graph_t *g = all_graphs; g; g = g->next)
		for (size_t i = 0; i < g->n; i++)
			if (g->nodes[i] == n)
				return true;
	return false;
}

static void
node_free(fc_node_t *n)
{
	if (n->p.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
		gmem_unref(n->p.u.alloc.gmem);
	} else if (n->p.type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
		fc_gmem_t *g = gmem_at(n->p.u.free.dptr);

		if (g && g->freed_by == n->graph)
			g->freed_by = NULL;
	} else if (n->p.type == CU_GRAPH_NODE_TYPE_GRAPH) {
		fc_graph_free(n->p.u.child.graph);
	}
	n->magic = 0;
	free(n->deps);
	free(n->access);
	free(n);
}

void
fc_graph_free(fc_graph_t *g)
{
	for (fc_graph_t **pg = &all_graphs; *pg; pg = &(*pg)->next) {
		if (*pg == g) {
			*pg = g->next;
			break;
		}
	}
	for (fc_exec_t *e = all_execs; e; e = e->next)
		if (e->origin == g)
			e->origin = NULL;
	for (size_t i = 0; i < g->n; i++)
		node_free(g->nodes[i]);
	g->magic = 0;
	free(g->nodes);
	free(g);
}

static bool
node_in(const fc_graph_t *g, const fc_node_t *n)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->nodes[i] == n)
			return true;
	return false;
}

/* Does g (or a child of it) already free gm? */
static bool
frees(const fc_graph_t *g, const fc_gmem_t *gm)
{
	for (size_t i = 0; i < g->n; i++) {
		const fc_nparams_t *p = &g->nodes[i]->p;

		if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE && p->u.free.dptr == gm->base)
			return true;
		if (p->type == CU_GRAPH_NODE_TYPE_GRAPH && frees(p->u.child.graph, gm))
			return true;
	}
	return false;
}

CUresult
fc_graph_add(fc_graph_t *g, fc_node_t *const *deps, size_t ndeps,
    fc_nparams_t *p, fc_node_t **out)
{
	fc_node_t *n;
	fc_gmem_t *gm = NULL;

	if (ndeps && !deps)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < ndeps; i++)
		if (!deps[i] || !node_in(g, deps[i]))
			return CUDA_ERROR_INVALID_VALUE;
	if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
		/* cuda.h: an address not returned by an alloc node, one freed
		 * twice in a graph, or one freed in another graph */
		gm = gmem_at(p->u.free.dptr);
		if (!gm || frees(g, gm) || (gm->freed_by && gm->freed_by != g))
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		fc_node_t **nn = realloc(g->nodes, cap * sizeof(*nn));

		if (!nn)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g->nodes = nn;
		g->cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n || (ndeps && !(n->deps = malloc(ndeps * sizeof(*n->deps))))) {
		free(n);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
		size_t span = granules(p->u.alloc.size);

		gm = calloc(1, sizeof(*gm));
		if (gm)
			gm->base = fc_mem_va_reserve(p->u.alloc.device, span);
		if (!gm || !gm->base) {
			free(gm);
			free(n->deps);
			free(n);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		gm->device = p->u.alloc.device;
		gm->size = p->u.alloc.size;
		gm->span = span;
		gm->refs = 1;
		gm->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
		gm->props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		gm->props.location.id = gm->device;
		gm->next = all_gmem;
		all_gmem = gm;
		p->u.alloc.gmem = gm;
		p->u.alloc.dptr = gm->base;
		g->mem_nodes = true;
	} else if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
		if (!gm->freed_by)
			gm->freed_by = g;
		g->mem_nodes = true;
	} else if (p->type == CU_GRAPH_NODE_TYPE_GRAPH && p->u.child.graph->mem_nodes) {
		g->mem_nodes = true;
	}
	n->magic = NODE_MAGIC;
	n->graph = g;
	n->p = *p;
	if (ndeps)
		memcpy(n->deps, deps, ndeps * sizeof(*deps));
	n->ndeps = ndeps;
	g->nodes[g->n++] = n;
	*out = n;
	return CUDA_SUCCESS;
}

/* A deep copy of g without memory nodes' graphs (those cannot be cloned). */
static fc_graph_t *
graph_clone(const fc_graph_t *g)
{
	fc_graph_t *c = fc_graph_new();

	if (!c)
		return NULL;
	for (size_t i = 0; i < g->n; i++) {
		const fc_node_t *o = g->nodes[i];
		fc_node_t *deps[16], **dp = deps, *n;
		fc_nparams_t p = o->p;

		if (o->ndeps > 16 && !(dp = malloc(o->ndeps * sizeof(*dp))))
			goto fail;
		for (size_t k = 0; k < o->ndeps; k++)
			for (size_t j = 0; j < i; j++)
				if (g->nodes[j] == o->deps[k])
					dp[k] = c->nodes[j];
		if (p.type == CU_GRAPH_NODE_TYPE_GRAPH &&
		    !(p.u.child.graph = graph_clone(o->p.u.child.graph))) {
			if (dp != deps)
				free(dp);
			goto fail;
		}
		if (fc_graph_add(c, dp, o->ndeps, &p, &n)) {
			if (p.type == CU_GRAPH_NODE_TYPE_GRAPH)
				fc_graph_free(p.u.child.graph);
			if (dp != deps)
				free(dp);
			goto fail;
		}
		if (dp != deps)
			free(dp);
	}
	return c;
fail:
	fc_graph_free(c);
	return NULL;
}

/* ============================================================ execs */

static size_t
flat_count(const fc_graph_t *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n; i++)
		n += g->nodes[i]->p.type == CU_GRAPH_NODE_TYPE_GRAPH ?
		    flat_count(g->nodes[i]->p.u.child.graph) : 1;
	return n;
}

static void
flatten(const fc_graph_t *g, fc_nparams_t *out, size_t *k)
{
	for (size_t i = 0; i < g->n; i++) {
		const fc_nparams_t *p = &g->nodes[i]->p;

		if (p->type == CU_GRAPH_NODE_TYPE_GRAPH) {
			flatten(p->u.child.graph, out, k);
			continue;
		}
		out[*k] = *p;
		if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
			p->u.alloc.gmem->refs++;
		(*k)++;
	}
}

static fc_exec_t *
exec_lookup(CUgraphExec h)
{
	for (fc_exec_t *e = all_execs; e; e = e->next)
		if ((CUgraphExec)e == h)
			return e;
	return NULL;
}

static CUresult
instantiate(CUgraphExec *pe, CUgraph hg, unsigned long long flags)
{
	fc_graph_t *g = (fc_graph_t *)hg;
	fc_ctx_t *ctx;
	fc_exec_t *e;
	size_t k = 0;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if (!pe || !fc_graph_valid(g) ||
	    (flags & ~(unsigned long long)(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
	    CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
	    CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	/* cuda.h: one exec at a time of a graph with memory nodes (H200:
	 * NOT_SUPPORTED) */
	if (g->mem_nodes && g->execs > 0) {
		r = CUDA_ERROR_NOT_SUPPORTED;
		goto out;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->nodes = calloc(flat_count(g) + 1, sizeof(*e->nodes)))) {
		free(e);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	flatten(g, e->nodes, &k);
	e->n = k;
	e->magic = EXEC_MAGIC;
	e->flags = flags;
	e->origin = g;
	g->execs++;
	e->next = all_execs;
	all_execs = e;
	*pe = (CUgraphExec)e;
out:
	fc_leave();
	return r;
}

static CUresult
exec_destroy(CUgraphExec h)
{
	fc_exec_t *e;
	CUresult r;

	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!(e = exec_lookup(h))) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	for (fc_exec_t **pe = &all_execs; *pe; pe = &(*pe)->next) {
		if (*pe == e) {
			*pe = e->next;
			break;
		}
	}
	if (e->origin)
		e->origin->execs--;
	for (size_t i = 0; i < e->n; i++)
		if (e->nodes[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
			gmem_unref(e->nodes[i].u.alloc.gmem);
	e->magic = 0;
	free(e->nodes);
	free(e);
out:
	fc_leave();
	return r;
}

/* Runs one node on s. Lock held; a set or copy drops it while it waits. */
static void
run_node(const fc_nparams_t *p, fc_stream_t *s)
{
	uint64_t t;
	fc_rec_t *rec;

	switch (p->type) {
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		gmem_map(p->u.alloc.gmem);
		break;
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		rec = fc_rec_exact(p->u.free.dptr);
		if (rec && rec->gmem && !rec->free_pending)
			fc_mem_free_at(rec, fc_stream_enqueue(s, 0, NULL));
		break;
	case CU_GRAPH_NODE_TYPE_MEMSET:
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		t = fc_stream_enqueue(s, 0, NULL);
		fc_leave();
		fc_wait_until(t);
		fc_enter();
		if (p->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
			fc_mem_copy_now(p->u.memcpy.dst, p->u.memcpy.src, p->u.memcpy.n);
			break;
		}
		for (size_t row = 0; row < p->u.memset.height; row++)
			fc_mem_set_now(p->u.memset.dst + row * p->u.memset.pitch,
			    p->u.memset.value, p->u.memset.elem, p->u.memset.width);
		break;
	case CU_GRAPH_NODE_TYPE_KERNEL:
		if (p->u.kernel.writer)
			fc_stream_writer(s, p->u.kernel.p, p->u.kernel.n, p->u.kernel.dur,
			    p->u.kernel.byte);
		else
			fc_stream_enqueue(s, p->u.kernel.dur, NULL);
		break;
	default:            /* empty */
		break;
	}
}

static CUresult
launch(CUgraphExec h, CUstream hs, bool pt)
{
	fc_capture_t *cap;
	fc_ctx_t *ctx;
	fc_stream_t *s;
	fc_exec_t *e;
	CUresult r;

	fc_enter();
	if ((r = fc_need_ctx(&ctx)))
		goto out;
	if (!(e = exec_lookup(h))) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if ((r = fc_stream_get(hs, pt, &s)) || (r = fc_capture_work(s, &cap)))
		goto out;
	if (cap) {          /* a launch captured as a child graph: not simulated */
		r = CUDA_ERROR_NOT_SUPPORTED;
		goto out;
	}
	/* cuda.h: allocations of an earlier launch still live fail the launch,
	 * unless AUTO_FREE_ON_LAUNCH frees them first */
	for (size_t i = 0; i < e->n; i++) {
		fc_gmem_t *g;

		if (e->nodes[i].type != CU_GRAPH_NODE_TYPE_MEM_ALLOC)
			continue;
		g = e->nodes[i].u.alloc.gmem;
		if (gmem_live(g) &&
		    !(e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)) {
			r = CUDA_ERROR_INVALID_VALUE;
			goto out;
		}
	}
	for (size_t i = 0; i < e->n; i++) {
		fc_gmem_t *g;

		if (e->nodes[i].type != CU_GRAPH_NODE_TYPE_MEM_ALLOC)
			continue;
		g = e->nodes[i].u.alloc.gmem;
		if (gmem_live(g))
			fc_mem_free_at(g->rec, fc_stream_enqueue(s, 0, NULL));
	}
	/* the exec stays alive while it runs: copy the nodes */
	{
		size_t n = e->n;
		fc_nparams_t *nodes = malloc((n ? n : 1) * sizeof(*nodes));

		if (!nodes) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		memcpy(nodes, e->nodes, n * sizeof(*nodes));
		for (size_t i = 0; i < n; i++)
			if (nodes[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
				nodes[i].u.alloc.gmem->refs++;
		for (size_t i = 0; i < n; i++) {
			if (fc_stream_get(hs, pt, &s))
				break;      /* the stream went away meanwhile */
			run_node(&nodes[i], s);
		}
		for (size_t i = 0; i < n; i++)
			if (nodes[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
				gmem_unref(nodes[i].u.alloc.gmem);
		free(nodes);
	}
out:
	fc_leave();
	return r;
}

/* ============================================================ exports */

FC_EXPORT CUresult CUDAAPI
cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	CUresult r;

	FC_COUNT(cuGraphCreate);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!phGraph || flags != 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (!(*phGraph = (CUgraph)fc_graph_new()))
		r = CUDA_ERROR_OUT_OF_MEMORY;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphDestroy(CUgraph hGraph)
{
	CUresult r;

	FC_COUNT(cuGraphDestroy);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!fc_graph_valid((fc_graph_t *)hGraph))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		fc_graph_free((fc_graph_t *)hGraph);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
	fc_graph_t *g = (fc_graph_t *)originalGraph, *c;
	CUresult r;

	FC_COUNT(cuGraphClone);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!phGraphClone || !fc_graph_valid(g)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (g->mem_nodes) {     /* cuda.h: not supported */
		r = CUDA_ERROR_NOT_SUPPORTED;
		goto out;
	}
	if (!(c = graph_clone(g)))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else
		*phGraphClone = (CUgraph)c;
out:
	fc_leave();
	return r;
}

/* The common prologue of the cuGraphAdd* calls; lock taken. */
static CUresult
add_begin(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps)
{
	CUresult r;

	fc_enter();
	if ((r = fc_check_init()))
		return r;
	if (!out || !fc_graph_valid((fc_graph_t *)hg) || (ndeps && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult
add_node(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps,
    fc_nparams_t *p)
{
	fc_node_t *n;
	CUresult r = fc_graph_add((fc_graph_t *)hg, (fc_node_t *const *)deps, ndeps, p, &n);

	if (!r)
		*out = (CUgraphNode)n;
	return r;
}

static CUresult
alloc_params(fc_nparams_t *p, const CUmemPoolProps *props, const CUmemAccessDesc *access,
    size_t naccess, size_t bytesize)
{
	static const unsigned char zero[sizeof(props->reserved)];

	if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    props->location.id < 0 || props->location.id >= fc_config.ndevices ||
	    props->handleTypes != CU_MEM_HANDLE_TYPE_NONE || bytesize == 0 ||
	    (naccess && !access) || naccess > (size_t)fc_config.ndevices ||
	    memcmp(props->reserved, zero, sizeof(zero)) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	p->type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
	p->u.alloc.size = bytesize;
	p->u.alloc.device = props->location.id;
	return CUDA_SUCCESS;
}

/* Keeps the access descriptors for cuGraphMemAllocNodeGetParams. */
static void
keep_access(CUgraphNode h, const CUmemAccessDesc *access, size_t naccess)
{
	fc_node_t *n = (fc_node_t *)h;

	if (naccess && (n->access = malloc(naccess * sizeof(*access)))) {
		memcpy(n->access, access, naccess * sizeof(*access));
		n->naccess = naccess;
	}
}

FC_EXPORT CUresult CUDAAPI
cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies,
    CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
	fc_nparams_t p;
	CUresult r;

	FC_COUNT(cuGraphAddMemAllocNode);
	if ((r = add_begin(phGraphNode, hGraph, dependencies, numDependencies)))
		goto out;
	if (!nodeParams || (r = alloc_params(&p, &nodeParams->poolProps,
	    nodeParams->accessDescs, nodeParams->accessDescCount, nodeParams->bytesize))) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (!(r = add_node(phGraphNode, hGraph, dependencies, numDependencies, &p))) {
		nodeParams->dptr = p.u.alloc.dptr;
		keep_access(*phGraphNode, nodeParams->accessDescs, nodeParams->accessDescCount);
	}
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies, CUdeviceptr dptr)
{
	fc_nparams_t p = { .type = CU_GRAPH_NODE_TYPE_MEM_FREE };
	CUresult r;

	FC_COUNT(cuGraphAddMemFreeNode);
	if (!(r = add_begin(phGraphNode, hGraph, dependencies, numDependencies))) {
		p.u.free.dptr = (uintptr_t)dptr;
		r = add_node(phGraphNode, hGraph, dependencies, numDependencies, &p);
	}
	fc_leave();
	return r;
}

static fc_node_t *
node_of(CUgraphNode h, CUgraphNodeType type)
{
	fc_node_t *n = (fc_node_t *)h;

	return n && fc_node_valid(n) && n->p.type == type ? n : NULL;
}

FC_EXPORT CUresult CUDAAPI
cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
	fc_node_t *n;
	CUresult r;

	FC_COUNT(cuGraphMemAllocNodeGetParams);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!params_out || !(n = node_of(hNode, CU_GRAPH_NODE_TYPE_MEM_ALLOC))) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	memset(params_out, 0, sizeof(*params_out));
	params_out->poolProps = n->p.u.alloc.gmem->props;
	params_out->accessDescs = n->access;
	params_out->accessDescCount = n->naccess;
	params_out->bytesize = n->p.u.alloc.size;
	params_out->dptr = n->p.u.alloc.dptr;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
	fc_node_t *n;
	CUresult r;

	FC_COUNT(cuGraphMemFreeNodeGetParams);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!dptr_out || !(n = node_of(hNode, CU_GRAPH_NODE_TYPE_MEM_FREE)))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*dptr_out = (CUdeviceptr)n->p.u.free.dptr;
out:
	fc_leave();
	return r;
}

/* No modules are simulated, so no CUfunction is valid. */
static CUresult
kernel_node(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps,
    const void *params, CUfunction func)
{
	CUresult r;

	if (!(r = add_begin(out, hg, deps, ndeps)))
		r = !params || !func ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies,
    const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	FC_COUNT(cuGraphAddKernelNode);
	return kernel_node(phGraphNode, hGraph, dependencies, numDependencies, nodeParams,
	    nodeParams ? nodeParams->func : NULL);
}

FC_EXPORT CUresult CUDAAPI
cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies,
    const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	FC_COUNT(cuGraphAddKernelNode_v2);
	return kernel_node(phGraphNode, hGraph, dependencies, numDependencies, nodeParams,
	    nodeParams ? nodeParams->func : NULL);
}

static CUresult
memset_params(fc_nparams_t *p, CUdeviceptr dst, size_t pitch, unsigned value,
    unsigned elem, size_t width, size_t height)
{
	size_t rows = height ? height : 1;

	if ((elem != 1 && elem != 2 && elem != 4) || width == 0 || height == 0 ||
	    dst % elem || (height > 1 && pitch < width * elem) ||
	    !fc_mem_node_range_ok((uintptr_t)dst, (rows - 1) * pitch + width * elem))
		return CUDA_ERROR_INVALID_VALUE;
	p->type = CU_GRAPH_NODE_TYPE_MEMSET;
	p->u.memset.dst = (uintptr_t)dst;
	p->u.memset.pitch = pitch;
	p->u.memset.value = value;
	p->u.memset.elem = elem;
	p->u.memset.width = width;
	p->u.memset.height = height;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies,
    const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
	fc_nparams_t p;
	CUresult r;

	FC_COUNT(cuGraphAddMemsetNode);
	if ((r = add_begin(phGraphNode, hGraph, dependencies, numDependencies)))
		goto out;
	if (!memsetParams || !ctx || !fc_ctx_valid((fc_ctx_t *)ctx) ||
	    (r = memset_params(&p, memsetParams->dst, memsetParams->pitch,
	    memsetParams->value, memsetParams->elementSize, memsetParams->width,
	    memsetParams->height))) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	r = add_node(phGraphNode, hGraph, dependencies, numDependencies, &p);
out:
	fc_leave();
	return r;
}

/* A 1D copy between host, device and unified memory; anything else (arrays,
 * 2D and 3D shapes) is not simulated. */
static CUresult
memcpy_params(fc_nparams_t *p, const CUDA_MEMCPY3D *c)
{
	uintptr_t src, dst;

	if ((c->Height > 1 || c->Depth > 1 || c->srcY || c->srcZ || c->dstY || c->dstZ ||
	    c->srcLOD || c->dstLOD) ||
	    c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
		return CUDA_ERROR_NOT_SUPPORTED;
	src = (c->srcMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)c->srcHost :
	    (uintptr_t)c->srcDevice) + c->srcXInBytes;
	dst = (c->dstMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)c->dstHost :
	    (uintptr_t)c->dstDevice) + c->dstXInBytes;
	if (c->WidthInBytes == 0 || !fc_mem_node_range_ok(src, c->WidthInBytes) ||
	    !fc_mem_node_range_ok(dst, c->WidthInBytes))
		return CUDA_ERROR_INVALID_VALUE;
	p->type = CU_GRAPH_NODE_TYPE_MEMCPY;
	p->u.memcpy.dst = dst;
	p->u.memcpy.src = src;
	p->u.memcpy.n = c->WidthInBytes;
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI
cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies,
    const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
	fc_nparams_t p;
	CUresult r;

	FC_COUNT(cuGraphAddMemcpyNode);
	if ((r = add_begin(phGraphNode, hGraph, dependencies, numDependencies)))
		goto out;
	if (!copyParams || !ctx || !fc_ctx_valid((fc_ctx_t *)ctx)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (!(r = memcpy_params(&p, copyParams)))
		r = add_node(phGraphNode, hGraph, dependencies, numDependencies, &p);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies)
{
	fc_nparams_t p = { .type = CU_GRAPH_NODE_TYPE_EMPTY };
	CUresult r;

	FC_COUNT(cuGraphAddEmptyNode);
	if (!(r = add_begin(phGraphNode, hGraph, dependencies, numDependencies)))
		r = add_node(phGraphNode, hGraph, dependencies, numDependencies, &p);
	fc_leave();
	return r;
}

/* A child graph node: a clone of child (cuda.h: not of one with memory
 * nodes), or, with ownership moved, child itself. */
static CUresult
child_node(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps,
    CUgraph hchild, bool move)
{
	fc_graph_t *child = (fc_graph_t *)hchild;
	fc_nparams_t p = { .type = CU_GRAPH_NODE_TYPE_GRAPH };
	CUresult r;

	if (!fc_graph_valid(child) || child == (fc_graph_t *)hg || (move && child->execs))
		return CUDA_ERROR_INVALID_VALUE;
	if (!move && child->mem_nodes)      /* H200 */
		return CUDA_ERROR_NOT_SUPPORTED;
	if (move) {         /* the node owns it now: no longer a graph of its own */
		for (fc_graph_t **pg = &all_graphs; *pg; pg = &(*pg)->next) {
			if (*pg == child) {
				*pg = child->next;
				break;
			}
		}
		p.u.child.graph = child;
	} else if (!(p.u.child.graph = graph_clone(child))) {
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if ((r = add_node(out, hg, deps, ndeps, &p))) {
		if (move) {
			child->next = all_graphs;
			all_graphs = child;
		} else {
			fc_graph_free(p.u.child.graph);
		}
	}
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies, CUgraph childGraph)
{
	CUresult r;

	FC_COUNT(cuGraphAddChildGraphNode);
	if (!(r = add_begin(phGraphNode, hGraph, dependencies, numDependencies)))
		r = child_node(phGraphNode, hGraph, dependencies, numDependencies,
		    childGraph, false);
	fc_leave();
	return r;
}

/* cuGraphAddNode(_v2): the node types the fixture runs. */
static CUresult
add_generic(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps,
    const CUgraphEdgeData *edges, size_t ndeps, CUgraphNodeParams *np)
{
	fc_nparams_t p;
	CUresult r;

	if ((r = add_begin(out, hg, deps, ndeps)))
		return r;
	if (!np || np->reserved0[0] || np->reserved0[1] || np->reserved0[2] ||
	    np->reserved2)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; edges && i < ndeps; i++) {
		static const CUgraphEdgeData zero;

		if (memcmp(&edges[i], &zero, sizeof(zero)) != 0)
			return CUDA_ERROR_NOT_SUPPORTED;
	}
	switch (np->type) {
	case CU_GRAPH_NODE_TYPE_EMPTY:
		p.type = CU_GRAPH_NODE_TYPE_EMPTY;
		break;
	case CU_GRAPH_NODE_TYPE_MEMSET:
		if (!np->memset.ctx || !fc_ctx_valid((fc_ctx_t *)np->memset.ctx) ||
		    memset_params(&p, np->memset.dst, np->memset.pitch, np->memset.value,
		    np->memset.elementSize, np->memset.width, np->memset.height))
			return CUDA_ERROR_INVALID_VALUE;
		break;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		if (np->memcpy.flags || np->memcpy.reserved || !np->memcpy.copyCtx ||
		    !fc_ctx_valid((fc_ctx_t *)np->memcpy.copyCtx))
			return CUDA_ERROR_INVALID_VALUE;
		if ((r = memcpy_params(&p, &np->memcpy.copyParams)))
			return r;
		break;
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		if (alloc_params(&p, &np->alloc.poolProps, np->alloc.accessDescs,
		    np->alloc.accessDescCount, np->alloc.bytesize))
			return CUDA_ERROR_INVALID_VALUE;
		if ((r = add_node(out, hg, deps, ndeps, &p)))
			return r;
		np->alloc.dptr = p.u.alloc.dptr;
		keep_access(*out, np->alloc.accessDescs, np->alloc.accessDescCount);
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
		p.u.free.dptr = (uintptr_t)np->free.dptr;
		break;
	case CU_GRAPH_NODE_TYPE_GRAPH:
		if (np->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE &&
		    np->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE)
			return CUDA_ERROR_INVALID_VALUE;
		return child_node(out, hg, deps, ndeps, np->graph.graph,
		    np->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE);
	case CU_GRAPH_NODE_TYPE_KERNEL:
		return !np->kernel.func ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	return add_node(out, hg, deps, ndeps, &p);
}

FC_EXPORT CUresult CUDAAPI
cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, size_t numDependencies,
    CUgraphNodeParams *nodeParams)
{
	CUresult r;

	FC_COUNT(cuGraphAddNode);
	r = add_generic(phGraphNode, hGraph, dependencies, NULL, numDependencies, nodeParams);
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
    const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
    size_t numDependencies, CUgraphNodeParams *nodeParams)
{
	CUresult r;

	FC_COUNT(cuGraphAddNode_v2);
	r = add_generic(phGraphNode, hGraph, dependencies, dependencyData, numDependencies,
	    nodeParams);
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
	fc_graph_t *g = (fc_graph_t *)hGraph;
	CUresult r;

	FC_COUNT(cuGraphGetNodes);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!numNodes || !fc_graph_valid(g)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (nodes) {
		for (size_t i = 0; i < *numNodes; i++)
			nodes[i] = i < g->n ? (CUgraphNode)g->nodes[i] : NULL;
	}
	*numNodes = g->n;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
	fc_node_t *n = (fc_node_t *)hNode;
	CUresult r;

	FC_COUNT(cuGraphNodeGetType);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (!type || !fc_node_valid(n))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*type = n->p.type;
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphDestroyNode(CUgraphNode hNode)
{
	fc_node_t *n = (fc_node_t *)hNode;
	fc_graph_t *g;
	CUresult r;

	FC_COUNT(cuGraphDestroyNode);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	/* cuda.h: nodes of a graph with memory nodes cannot be destroyed */
	if (!fc_node_valid(n) || n->graph->mem_nodes) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	g = n->graph;
	for (size_t i = 0; i < g->n; i++) {
		fc_node_t *o = g->nodes[i];
		size_t k = 0;

		for (size_t j = 0; j < o->ndeps; j++)
			if (o->deps[j] != n)
				o->deps[k++] = o->deps[j];
		o->ndeps = k;
	}
	for (size_t i = 0; i < g->n; i++) {
		if (g->nodes[i] == n) {
			memmove(&g->nodes[i], &g->nodes[i + 1], (g->n - i - 1) * sizeof(*g->nodes));
			g->n--;
			break;
		}
	}
	node_free(n);
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
    char *logBuffer, size_t bufferSize)
{
	FC_COUNT(cuGraphInstantiate);
	(void)phErrorNode;
	if (logBuffer && bufferSize)
		logBuffer[0] = '\0';
	return instantiate(phGraphExec, hGraph, 0);
}

FC_EXPORT CUresult CUDAAPI
cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
    char *logBuffer, size_t bufferSize)
{
	FC_COUNT(cuGraphInstantiate_v2);
	(void)phErrorNode;
	if (logBuffer && bufferSize)
		logBuffer[0] = '\0';
	return instantiate(phGraphExec, hGraph, 0);
}

FC_EXPORT CUresult CUDAAPI
cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
    unsigned long long flags)
{
	FC_COUNT(cuGraphInstantiateWithFlags);
	return instantiate(phGraphExec, hGraph, flags);
}

static CUresult
instantiate_params(CUgraphExec *pe, CUgraph hg, CUDA_GRAPH_INSTANTIATE_PARAMS *ip)
{
	CUresult r;

	if (!ip)
		return CUDA_ERROR_INVALID_VALUE;
	r = instantiate(pe, hg, ip->flags);
	ip->hErrNode_out = NULL;
	ip->result_out = r ? CUDA_GRAPH_INSTANTIATE_ERROR : CUDA_GRAPH_INSTANTIATE_SUCCESS;
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
    CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	FC_COUNT(cuGraphInstantiateWithParams);
	return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

FC_EXPORT CUresult CUDAAPI
cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
    CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	FC_COUNT(cuGraphInstantiateWithParams_ptsz);
	return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

FC_EXPORT CUresult CUDAAPI
cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	FC_COUNT(cuGraphLaunch);
	return launch(hGraphExec, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	FC_COUNT(cuGraphLaunch_ptsz);
	return launch(hGraphExec, hStream, true);
}

/* Uploading moves nothing in the fixture: the handles are checked. */
static CUresult
upload(CUgraphExec h, CUstream hs, bool pt)
{
	fc_ctx_t *ctx;
	fc_stream_t *s;
	CUresult r;

	fc_enter();
	if (!(r = fc_need_ctx(&ctx)) && !exec_lookup(h))
		r = CUDA_ERROR_INVALID_VALUE;
	if (!r)
		r = fc_stream_get(hs, pt, &s);
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	FC_COUNT(cuGraphUpload);
	return upload(hGraphExec, hStream, false);
}

FC_EXPORT CUresult CUDAAPI
cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	FC_COUNT(cuGraphUpload_ptsz);
	return upload(hGraphExec, hStream, true);
}

FC_EXPORT CUresult CUDAAPI
cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	FC_COUNT(cuGraphExecDestroy);
	return exec_destroy(hGraphExec);
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGraphMemTrim(CUdevice device)
{
	CUresult r;

	FC_COUNT(cuDeviceGraphMemTrim);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (device < 0 || device >= fc_config.ndevices) {
		r = CUDA_ERROR_INVALID_DEVICE;
		goto out;
	}
	{
		uint64_t keep = chunks_for(gstat[device].live);

		fc_devices[device].used -= gstat[device].chunks - keep;
		gstat[device].chunks = keep;
	}
out:
	fc_leave();
	return r;
}

FC_EXPORT CUresult CUDAAPI
cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
	CUresult r;

	FC_COUNT(cuDeviceGetGraphMemAttribute);
	fc_enter();
	if ((r = fc_check_init()))
		goto out;
	if (device < 0 || device >= fc_config.ndevices) {
		r = CUDA_ERROR_INVALID_DEVICE;
		goto out;
	}
	if (!value) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	switch (attr) {
	case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
		*(cuuint64_t *)value = gstat[device].chunks;
		break;
	case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
		*(cuuint64_t *)value = gstat[device].high;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
	}
out:
	fc_leave();
	return r;
}
