#include "preamble.h"
/*
 * graphmem.c -- graph memory's two tables (graphmem.h).
 *
 * Both are arrays searched linearly under gm_lock (leaf): a program has
 * tens to thousands of allocation nodes and a few execs, and they are
 * read at node creation, instantiation and launch, never on the
 * allocation path of other memory.  Storage is anonymous memory (mmap),
 * never the program's malloc.
 */
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "graphmem.h"
#include "mutex.h"
#include "stats.h"

typedef struct gm_node_s {
	uintptr_t dptr;
	size_t size;
	CUgraph graph;
	stack_id_t stack;
	int device;
	bool launched;
} gm_node_t;

struct gm_exec_s {
	CUgraphExec exec;
	unsigned refs;     /* the table's (while not destroyed) + launches' */
	bool destroyed;
	size_t na, nf;
	gm_alloc_t *allocs;
	uintptr_t *frees;
	size_t bytes;      /* of this mapping (header, allocs, frees) */
};

static cw_mutex_t gm_lock = CW_MUTEX_INITIALIZER(LOCK_RANK_GRAPHMEM);
static gm_node_t *nodes;
static size_t nnodes, cap_nodes;
static gm_exec_t **execs;
static size_t nexecs, cap_execs;


void *
graphmem_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Grows *arr (elements of esize, *cap of them) to hold one more.  gm_lock
 * held.  Returns true on error. */
static bool
grow(void **arr, size_t *cap, size_t n, size_t esize)
{
	if (n < *cap)
		return false;
	size_t ncap = *cap == 0 ? 4096 / esize : *cap * 2;
	void *p = graphmem_map(ncap * esize);
	if (p == NULL)
		return true;
	if (*arr != NULL) {
		memcpy(p, *arr, n * esize);
		munmap(*arr, *cap * esize);
	}
	*arr = p;
	*cap = ncap;
	return false;
}

/* ------------------------------------------------------------ nodes */

void
graphmem_node(uintptr_t dptr, size_t size, int device, CUgraph g,
    stack_id_t st)
{
	gm_node_t n = { .dptr = dptr, .size = size, .graph = g, .stack = st,
		.device = device };

	cw_mutex_lock(&gm_lock);
	size_t i;
	for (i = 0; i < nnodes && nodes[i].dptr != dptr; i++)
		;
	/* An address the driver gives a new node belongs to no other live
	 * node: the old entry is stale (its graph is gone). */
	if (i < nnodes)
		nodes[i] = n;
	else if (!grow((void **)&nodes, &cap_nodes, nnodes, sizeof(*nodes)))
		nodes[nnodes++] = n;
	cw_mutex_unlock(&gm_lock);
	STATS_INC(graph_alloc_nodes);
}

bool
graphmem_node_find(uintptr_t dptr, size_t *size, int *device,
    stack_id_t *st)
{
	bool found = false;

	cw_mutex_lock(&gm_lock);
	for (size_t i = 0; i < nnodes; i++) {
		if (nodes[i].dptr == dptr) {
			if (size != NULL)
				*size = nodes[i].size;
			if (device != NULL)
				*device = nodes[i].device;
			if (st != NULL)
				*st = nodes[i].stack;
			found = true;
			break;
		}
	}
	cw_mutex_unlock(&gm_lock);
	return found;
}

void
graphmem_node_launched(uintptr_t dptr)
{
	cw_mutex_lock(&gm_lock);
	for (size_t i = 0; i < nnodes; i++)
		if (nodes[i].dptr == dptr)
			nodes[i].launched = true;
	cw_mutex_unlock(&gm_lock);
}

bool
graphmem_node_unlaunched(uintptr_t dptr)
{
	bool yes = false;

	cw_mutex_lock(&gm_lock);
	for (size_t i = 0; i < nnodes; i++)
		if (nodes[i].dptr == dptr)
			yes = !nodes[i].launched;
	cw_mutex_unlock(&gm_lock);
	return yes;
}

void
graphmem_graph_destroyed(CUgraph g)
{
	if (g == NULL)
		return;
	cw_mutex_lock(&gm_lock);
	size_t j = 0;
	for (size_t i = 0; i < nnodes; i++)
		if (nodes[i].graph != g)
			nodes[j++] = nodes[i];
	nnodes = j;
	cw_mutex_unlock(&gm_lock);
}

/* ------------------------------------------------------------ execs */

static void
exec_unref(gm_exec_t *x)
{
	/* gm_lock held */
	if (--x->refs == 0)
		munmap(x, x->bytes);
}

void
graphmem_exec_destroyed(CUgraphExec e)
{
	cw_mutex_lock(&gm_lock);
	for (size_t i = 0; i < nexecs; i++) {
		if (execs[i]->exec == e) {
			gm_exec_t *x = execs[i];
			execs[i] = execs[--nexecs];
			x->destroyed = true;
			exec_unref(x);
			break;
		}
	}
	cw_mutex_unlock(&gm_lock);
}

bool
graphmem_exec_add(CUgraphExec e, const gm_alloc_t *allocs, size_t na,
    const uintptr_t *frees, size_t nf)
{
	size_t ha = (sizeof(gm_exec_t) + 15) & ~(size_t)15;
	size_t bytes = ha + na * sizeof(gm_alloc_t) + nf * sizeof(uintptr_t);
	gm_exec_t *x = graphmem_map(bytes);

	if (x == NULL)
		return true;
	x->exec = e;
	x->refs = 1;
	x->na = na;
	x->nf = nf;
	x->bytes = bytes;
	x->allocs = (gm_alloc_t *)((char *)x + ha);
	x->frees = (uintptr_t *)(x->allocs + na);
	if (na > 0)
		memcpy(x->allocs, allocs, na * sizeof(*allocs));
	if (nf > 0)
		memcpy(x->frees, frees, nf * sizeof(*frees));
	/* A handle the driver gives again was destroyed behind our back. */
	graphmem_exec_destroyed(e);
	cw_mutex_lock(&gm_lock);
	bool err = grow((void **)&execs, &cap_execs, nexecs, sizeof(*execs));
	if (!err)
		execs[nexecs++] = x;
	else
		exec_unref(x);
	cw_mutex_unlock(&gm_lock);
	if (!err)
		STATS_INC(graph_instantiations);
	return err;
}

const gm_exec_t *
graphmem_exec_acquire(CUgraphExec e)
{
	gm_exec_t *x = NULL;

	cw_mutex_lock(&gm_lock);
	for (size_t i = 0; i < nexecs; i++) {
		if (execs[i]->exec == e) {
			x = execs[i];
			x->refs++;
			break;
		}
	}
	cw_mutex_unlock(&gm_lock);
	return x;
}

void
graphmem_exec_release(const gm_exec_t *cx)
{
	if (cx == NULL)
		return;
	cw_mutex_lock(&gm_lock);
	exec_unref((gm_exec_t *)cx);
	cw_mutex_unlock(&gm_lock);
}

size_t
graphmem_exec_allocs(const gm_exec_t *x, const gm_alloc_t **allocs)
{
	*allocs = x->allocs;
	return x->na;
}

size_t
graphmem_exec_frees(const gm_exec_t *x, const uintptr_t **frees)
{
	*frees = x->frees;
	return x->nf;
}

/* ------------------------------------------------------------ reset */

void
graphmem_reset(void)
{
	cw_mutex_reinit(&gm_lock);
	for (size_t i = 0; i < nexecs; i++)
		munmap(execs[i], execs[i]->bytes);
	if (execs != NULL)
		munmap(execs, cap_execs * sizeof(*execs));
	if (nodes != NULL)
		munmap(nodes, cap_nodes * sizeof(*nodes));
	execs = NULL;
	nodes = NULL;
	nexecs = cap_execs = nnodes = cap_nodes = 0;
}

static void
gm_prefork(void)
{
	cw_mutex_prefork(&gm_lock);
}

static void
gm_postfork_parent(void)
{
	cw_mutex_postfork_parent(&gm_lock);
}

const fork_hooks_t graphmem_fork = { LOCK_RANK_GRAPHMEM, gm_prefork,
	gm_postfork_parent, graphmem_reset };
