/*
 * graphmem.h -- CUDA graph memory as the driver models it, for the shim.
 *
 * An allocation node (cuGraphAddMemAllocNode, cuGraphAddNode of type
 * MEM_ALLOC, or cuMemAllocAsync captured into a graph) gets its address
 * when it is created; the memory behind it is live only from the launch
 * of an executable graph holding the node until a free node runs (in
 * that launch or another graph's) or the program frees the address
 * outside any graph (cuMemFree, cuMemFreeAsync).  This module keeps the
 * two tables that model needs:
 *
 *  - node addresses: address -> (size, device, graph, the stack that made
 *    the node), so that the memory made live at a launch is reported
 *    with the stack that created its node;
 *  - executable graphs: exec -> the allocation and free nodes of the
 *    graph it was instantiated from, read at instantiation (the exec is
 *    a copy: later edits of the graph do not change it).
 *
 * What is live is the registry's (kind KIND_GRAPH); shim/graph.c turns a
 * launch into records and removals.  Both tables are small (graphs are
 * few and long-lived) and under one mutex (leaf), never held across a
 * driver call.  Memory: anonymous mmap (graphmem_map), never the
 * program's malloc.  Owner: shim.
 */
#ifndef CUWARDEN_GRAPHMEM_H
#define CUWARDEN_GRAPHMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "fork.h"
#include "types.h"

/* An allocation node, as an exec holds it. */
typedef struct gm_alloc_s {
	uintptr_t dptr;
	size_t size;
	int device;
	stack_id_t stack;   /* where its node was made; 0 if not seen */
	bool freed_inside;  /* a free node of the same graph frees it */
} gm_alloc_t;

/* What a launch does: allocs made live (unless freed_inside), frees run
 * (addresses the graph does not allocate itself). */
typedef struct gm_exec_s gm_exec_t;

/* Node addresses. */
void graphmem_node(uintptr_t dptr, size_t size, int device, CUgraph g,
    stack_id_t st);
bool graphmem_node_find(uintptr_t dptr, size_t *size, int *device,
    stack_id_t *st);
/* A launch made the node at dptr live. */
void graphmem_node_launched(uintptr_t dptr);
/* Whether dptr is the address of a node no launch has made live: a free
 * of it is an invalid free, whatever an older tombstone at that address
 * says (the driver gives freed graph addresses to new nodes). */
bool graphmem_node_unlaunched(uintptr_t dptr);
/* cuGraphDestroy: the graph's nodes are gone (live memory is not). */
void graphmem_graph_destroyed(CUgraph g);


/* An exec made from a graph whose allocation nodes are allocs[0..na) and
 * free nodes frees[0..nf) (copied).  Returns true on error (no memory:
 * the exec is not modelled, its launches change nothing). */
bool graphmem_exec_add(CUgraphExec e, const gm_alloc_t *allocs, size_t na,
    const uintptr_t *frees, size_t nf);
/* The exec's nodes, held until graphmem_exec_release (a destroy
 * meanwhile frees it then).  NULL for an exec not modelled. */
const gm_exec_t *graphmem_exec_acquire(CUgraphExec e);
void graphmem_exec_release(const gm_exec_t *x);
size_t graphmem_exec_allocs(const gm_exec_t *x, const gm_alloc_t **allocs);
size_t graphmem_exec_frees(const gm_exec_t *x, const uintptr_t **frees);
void graphmem_exec_destroyed(CUgraphExec e);

/* Anonymous read-write memory of bytes (munmap it): the tables' storage
 * and shim/graph.c's scans of a graph.  NULL if mmap failed. */
void *graphmem_map(size_t bytes);

/* Fork child, tests. */
void graphmem_reset(void);
/* Its fork hooks (gm_lock; the child forgets the tables: graphmem_reset). */
extern const fork_hooks_t graphmem_fork;

#endif /* CUWARDEN_GRAPHMEM_H */
