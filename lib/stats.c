#include "preamble.h"
/*
 * stats.c -- process-wide counters.
 *
 * Owns: live bytes and allocations per kind_t (current, peak, total) and
 * the shim's coverage counters (stats_coverage).  Views are counted under
 * KIND_VIEW (allocations = views live, bytes = bytes they cover).
 *
 * Invariants: current <= peak <= total (as read by load).  Every
 * stats_on_free matches a stats_on_alloc (the callers' contract: one per
 * registry insert/remove), but across threads the sub may land first:
 * current is kept as a two's-complement sum, read as zero while below.
 *
 * Locking: none; every field is updated with __atomic builtins (relaxed:
 * the counters are statistics, not synchronisation).  stats_fill reads
 * each counter atomically but not the set as one snapshot.
 */
#include <string.h>

#include "ledger.h"
#include "pool.h"
#include "stackdepot.h"
#include "stats.h"
#include "violation.h"

static stats_counter_t bytes_by_kind[KIND_COUNT];
static stats_counter_t allocs_by_kind[KIND_COUNT];
stats_coverage_t stats_coverage;

void
stats_counter_add(stats_counter_t *c, uint64_t n)
{
	uint64_t now = __atomic_add_fetch(&c->current, n, __ATOMIC_RELAXED);
	uint64_t peak = __atomic_load_n(&c->peak, __ATOMIC_RELAXED);

	__atomic_fetch_add(&c->total, n, __ATOMIC_RELAXED);
	/* current is a two's-complement sum: another thread's matching sub
	 * may come first (a free racing the count of its allocation), and a
	 * value below zero is no peak. */
	while ((int64_t)now >= 0 && now > peak &&
	    !__atomic_compare_exchange_n(&c->peak, &peak, now, true,
		__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void
stats_counter_sub(stats_counter_t *c, uint64_t n)
{
	__atomic_fetch_sub(&c->current, n, __ATOMIC_RELAXED);
}

static stats_counter_t
load(const stats_counter_t *c)
{
	stats_counter_t r;

	r.current = __atomic_load_n(&c->current, __ATOMIC_RELAXED);
	if ((int64_t)r.current < 0) /* see stats_counter_add */
		r.current = 0;
	r.peak = __atomic_load_n(&c->peak, __ATOMIC_RELAXED);
	r.total = __atomic_load_n(&c->total, __ATOMIC_RELAXED);
	if (r.peak < r.current)
		r.peak = r.current;
	return r;
}

void
stats_on_alloc(kind_t kind, uint64_t bytes)
{
	if ((unsigned)kind >= KIND_COUNT)
		return;
	stats_counter_add(&bytes_by_kind[kind], bytes);
	stats_counter_add(&allocs_by_kind[kind], 1);
}

void
stats_on_free(kind_t kind, uint64_t bytes)
{
	if ((unsigned)kind >= KIND_COUNT)
		return;
	stats_counter_sub(&bytes_by_kind[kind], bytes);
	stats_counter_sub(&allocs_by_kind[kind], 1);
}

stats_counter_t
stats_bytes(kind_t kind)
{
	stats_counter_t zero = { 0, 0, 0 };

	if ((unsigned)kind >= KIND_COUNT)
		return zero;
	return load(&bytes_by_kind[kind]);
}

stats_counter_t
stats_allocations(kind_t kind)
{
	stats_counter_t zero = { 0, 0, 0 };

	if ((unsigned)kind >= KIND_COUNT)
		return zero;
	return load(&allocs_by_kind[kind]);
}

static void
to_public(cw_counter_t *out, stats_counter_t c)
{
	out->current = c.current;
	out->peak = c.peak;
	out->total = c.total;
}

/* cw_stats_t's arrays by cw_kind_t hold the public kinds. */
_Static_assert(CW_ARRAY_SIZE(((cw_stats_t *)0)->bytes) == KIND_PUBLIC_COUNT &&
    CW_ARRAY_SIZE(((cw_stats_t *)0)->allocations) == KIND_PUBLIC_COUNT &&
    CW_ARRAY_SIZE(((cw_stats_t *)0)->pool) == KIND_PUBLIC_COUNT,
    "cw_stats_t has one entry per public kind");

void
stats_fill(cw_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	for (int k = 0; k < KIND_PUBLIC_COUNT; k++) {
		to_public(&out->bytes[k], stats_bytes((kind_t)k));
		to_public(&out->allocations[k], stats_allocations((kind_t)k));
	}
	out->views_live = stats_allocations(KIND_VIEW).current;
	out->violations = violation_count();
	out->failed_frees = ledger_failures();
	out->failed_free_overflow = ledger_overflow();
	out->failed_free_ledger = ledger_size();
	out->stacks = stack_count();
	out->stack_bytes = stack_bytes();
	if (pool_enabled())
		for (int k = 0; k < KIND_PUBLIC_COUNT; k++)
			pool_stats((kind_t)k, &out->pool[k]);
}

void
stats_reset(void)
{
	memset(bytes_by_kind, 0, sizeof(bytes_by_kind));
	memset(allocs_by_kind, 0, sizeof(allocs_by_kind));
	memset(&stats_coverage, 0, sizeof(stats_coverage));
}
