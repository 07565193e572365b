/*
 * stats.h -- process-wide counters (atomics, no lock): live bytes and
 * allocations by kind with peaks and totals, and the shim's coverage
 * counters (proof that the audit ran).  Merged into cw_stats_t on demand
 * (cw_stats, stats_fill).  Owner: core.
 */
#ifndef CUWARDEN_STATS_H
#define CUWARDEN_STATS_H

#include <stdint.h>

#include "cuwarden.h"
#include "types.h"

typedef struct stats_counter_s {
	uint64_t current, peak, total; /* updated atomically */
} stats_counter_t;

void stats_counter_add(stats_counter_t *c, uint64_t n);
void stats_counter_sub(stats_counter_t *c, uint64_t n);

/* Live allocations by kind_t (every kind, not only the public three). */
void stats_on_alloc(kind_t kind, uint64_t bytes);
void stats_on_free(kind_t kind, uint64_t bytes);
stats_counter_t stats_bytes(kind_t kind);
stats_counter_t stats_allocations(kind_t kind);

/* Coverage of the shim (all zero in a process that only links the lib). */
typedef struct stats_coverage_s {
	uint64_t hooks_active;    /* 1 once a hook has run; see track.h */
	uint64_t hooked_entry_points; /* real exports the shim hooked */
	uint64_t allocations;     /* allocation calls seen (successful) */
	uint64_t frees;           /* free calls seen */
	uint64_t untracked_frees; /* frees of pointers never seen allocated,
	                           * that the driver accepted */
	uint64_t failed_calls;    /* allocation calls the driver refused */
	uint64_t gpa_lookups;     /* cuGetProcAddress answers seen */
	uint64_t gpa_redirects;   /* ... that we redirected to a hook */
	uint64_t dlsym_redirects; /* dlsym answers redirected to a hook */
	uint64_t teardown_frees;  /* allocations freed by context teardown */
	uint64_t captures;        /* stream captures begun */
	/* graph memory (shim/graphmem.h) */
	uint64_t graph_alloc_nodes, graph_free_nodes, graph_instantiations;
	uint64_t graph_launches, graph_made_live, graph_freed_by_graph;
} stats_coverage_t;

extern stats_coverage_t stats_coverage; /* update with __atomic builtins */
#define STATS_INC(field) \
	__atomic_fetch_add(&stats_coverage.field, 1, __ATOMIC_RELAXED)

/* Fills *out from every module's counters (pools included). */
void stats_fill(cw_stats_t *out);
void stats_reset(void);

#endif /* CUWARDEN_STATS_H */
