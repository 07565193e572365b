/*
 * check_devpool.c -- the device pool engine alone, over a fake segment
 * provider (no driver, no memory: addresses only; the engine never
 * touches them).  Slabs, best fit, split and coalesce, own segments and
 * their cache, limits, provider failures, the invariant validator after
 * every step of random runs, and the two fragmentation runs (RMM-style
 * random allocations up to 64 MiB, many holes) with reserved/allocated
 * <= 1.3.
 */
#include "preamble.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devpool.h"
#include "unit.h"

#define MiB ((size_t)1 << 20)
#define KiB ((size_t)1 << 10)

/* ------------------------------------------------------- fake provider */

#define FP_MAX 65536
typedef struct fprov_s {
	uintptr_t next;
	uintptr_t base[FP_MAX];
	size_t size[FP_MAX];
	size_t n;
	unsigned allocs, frees, bad_frees;
	int fail_next; /* the n-th next call fails */
	size_t live_bytes;
} fprov_t;

static fprov_t fp;

static bool
fp_alloc(void *arg, size_t size, uintptr_t *addr)
{
	(void)arg;
	fp.allocs++;
	if (fp.fail_next > 0 && --fp.fail_next == 0)
		return true;
	if (fp.n == FP_MAX)
		return true;
	*addr = fp.next;
	fp.next += (size + 2 * MiB - 1) / (2 * MiB) * (2 * MiB) + 2 * MiB;
	fp.base[fp.n] = *addr;
	fp.size[fp.n] = size;
	fp.n++;
	fp.live_bytes += size;
	return false;
}

static bool
fp_free(void *arg, uintptr_t addr, size_t size)
{
	(void)arg;
	fp.frees++;
	for (size_t i = 0; i < fp.n; i++) {
		if (fp.base[i] == addr) {
			if (fp.size[i] != size)
				fp.bad_frees++;
			fp.live_bytes -= fp.size[i];
			fp.base[i] = fp.base[fp.n - 1];
			fp.size[i] = fp.size[fp.n - 1];
			fp.n--;
			return false;
		}
	}
	fp.bad_frees++;
	return true;
}

static devpool_t *
mk(size_t limit, size_t own_cache_max)
{
	memset(&fp, 0, sizeof(fp));
	fp.next = (uintptr_t)0x200000000000ULL;
	devpool_config_t cfg = { 0, 0, limit, own_cache_max };
	devpool_provider_t prov = { fp_alloc, fp_free, NULL };
	devpool_t *dp = devpool_create(&cfg, &prov);
	ck_assert_ptr_nonnull(dp);
	return dp;
}

static void
valid(devpool_t *dp)
{
	char why[200] = "";
	bool bad = devpool_validate(dp, why, sizeof(why));
	ck_assert_msg(!bad, "validate: %s", why);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---------------------------------------------------------------- tests */

START_TEST(test_devpool_slabs)
{
	devpool_t *dp = mk(0, 0);
	enum { N = 3000 };
	static uintptr_t a[N];
	for (int i = 0; i < N; i++) {
		size_t bs;
		unsigned fl = 9;
		ck_assert_int_eq(devpool_alloc(dp, 700, true, &a[i], &bs, &fl),
		    DEVPOOL_OK);
		ck_assert_uint_eq(bs, 1024);
		ck_assert_uint_eq(fl, 0);
		ck_assert_uint_eq(a[i] % 512, 0);
	}
	valid(dp);
	/* Distinct, non-overlapping. */
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < i + 50 && j < N; j++)
			ck_assert(a[i] + 1024 <= a[j] || a[j] + 1024 <= a[i]);
	devpool_stats_t st;
	devpool_stats(dp, &st);
	ck_assert_uint_eq(st.allocated, (size_t)N * 1024);
	ck_assert_uint_ge(st.slabs, 1);
	/* Interior lookups answer for the slot. */
	uintptr_t base;
	size_t sz;
	unsigned fl;
	ck_assert(!devpool_block_of(dp, a[17] + 1000, &base, &sz, &fl));
	ck_assert_uint_eq(base, a[17]);
	ck_assert_uint_eq(sz, 1024);
	/* Interior and double frees are refused. */
	ck_assert(devpool_free(dp, a[5] + 512));
	ck_assert(!devpool_free(dp, a[5]));
	ck_assert(devpool_free(dp, a[5]));
	ck_assert(devpool_block_of(dp, a[5], &base, &sz, &fl));
	for (int i = 0; i < N; i++)
		if (i != 5)
			ck_assert(!devpool_free(dp, a[i]));
	valid(dp);
	devpool_stats(dp, &st);
	ck_assert_uint_eq(st.allocated, 0);
	ck_assert_uint_le(st.slabs, 1); /* one kept per class */
	size_t rel = devpool_trim(dp);
	ck_assert_uint_gt(rel, 0);
	devpool_stats(dp, &st);
	ck_assert_uint_eq(st.reserved, 0);
	ck_assert_uint_eq(fp.live_bytes, 0);
	valid(dp);
	devpool_destroy(dp);
	ck_assert_uint_eq(fp.bad_frees, 0);
}
END_TEST

START_TEST(test_devpool_split_coalesce_best_fit)
{
	devpool_t *dp = mk(0, 0);
	uintptr_t a, b, c, d, e;
	size_t bs;
	unsigned fl;
	/* 256 KiB is a best-fit class: four fit one 2 MiB segment... */
	ck_assert_int_eq(devpool_alloc(dp, 256 * KiB, true, &a, &bs, &fl), 0);
	ck_assert_int_eq(devpool_alloc(dp, 256 * KiB, true, &b, &bs, &fl), 0);
	ck_assert_int_eq(devpool_alloc(dp, 512 * KiB, true, &c, &bs, &fl), 0);
	ck_assert_int_eq(devpool_alloc(dp, 256 * KiB, true, &d, &bs, &fl), 0);
	ck_assert_uint_eq(fp.allocs, 1);
	ck_assert_uint_eq(b, a + 256 * KiB);
	ck_assert_uint_eq(c, b + 256 * KiB);
	ck_assert_uint_eq(d, c + 512 * KiB);
	valid(dp);
	/* Holes of 256 KiB (b) and 512 KiB (c), not adjacent after freeing
	 * only b and c?  They are adjacent: coalesce into 768 KiB. */
	ck_assert(!devpool_free(dp, b));
	valid(dp);
	ck_assert(!devpool_free(dp, c));
	valid(dp);
	devpool_stats_t st;
	devpool_stats(dp, &st);
	/* The tail (768 KiB) and the coalesced hole (768 KiB). */
	ck_assert_uint_eq(st.largest_free, 768 * KiB);
	/* Best fit: 200 KiB (class 224 KiB) goes to the smallest hole that
	 * fits; make a small hole first. */
	ck_assert_int_eq(devpool_alloc(dp, 700 * KiB, true, &e, &bs, &fl), 0);
	ck_assert_uint_eq(e, b); /* lowest address among equal sizes */
	valid(dp);
	uintptr_t f;
	/* Left: 768-704 = 64 KiB hole after e, 768 KiB tail after d. */
	ck_assert_int_eq(devpool_alloc(dp, 150 * KiB, true, &f, &bs, &fl), 0);
	ck_assert_uint_eq(f, d + 256 * KiB); /* only the tail fits */
	uintptr_t g;
	ck_assert_int_eq(devpool_alloc(dp, 60 * KiB, true, &g, &bs, &fl), 0);
	/* 60 KiB is a slab class: a slab of 16 x 60 KiB = 960 KiB. */
	valid(dp);
	ck_assert(!devpool_free(dp, a));
	ck_assert(!devpool_free(dp, d));
	ck_assert(!devpool_free(dp, e));
	ck_assert(!devpool_free(dp, f));
	ck_assert(!devpool_free(dp, g));
	valid(dp);
	devpool_trim(dp);
	devpool_stats(dp, &st);
	ck_assert_uint_eq(st.reserved, 0);
	ck_assert_uint_eq(st.allocated, 0);
	devpool_destroy(dp);
	ck_assert_uint_eq(fp.bad_frees, 0);
}
END_TEST

START_TEST(test_devpool_best_fit_smallest_hole)
{
	devpool_t *dp = mk(0, 0);
	uintptr_t x[7];
	size_t bs;
	unsigned fl;
	/* 2 MiB segment: [A 256K][B 512K][C 256K][D 320K][E 256K] tail. */
	size_t sz[5] = { 256 * KiB, 512 * KiB, 256 * KiB, 320 * KiB,
		256 * KiB };
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(devpool_alloc(dp, sz[i], true, &x[i], &bs,
		    &fl), 0);
	ck_assert(!devpool_free(dp, x[1])); /* 512 KiB hole */
	ck_assert(!devpool_free(dp, x[3])); /* 320 KiB hole */
	valid(dp);
	/* 300 KiB (class 320 KiB): the 320 KiB hole, not the 512 one. */
	ck_assert_int_eq(devpool_alloc(dp, 300 * KiB, true, &x[5], &bs, &fl),
	    0);
	ck_assert_uint_eq(x[5], x[3]);
	/* 460 KiB (class 480 KiB): the tail (448 KiB) is too small, so the
	 * 512 KiB hole. */
	ck_assert_int_eq(devpool_alloc(dp, 460 * KiB, true, &x[6], &bs, &fl),
	    0);
	ck_assert_uint_eq(x[6], x[1]);
	ck_assert_uint_eq(fp.allocs, 1);
	valid(dp);
	devpool_destroy(dp);
	ck_assert_uint_eq(fp.n, 0);
}
END_TEST

START_TEST(test_devpool_own_segments)
{
	devpool_t *dp = mk(0, 0);
	uintptr_t a, b, c;
	size_t bs;
	unsigned fl = 0;
	ck_assert_int_eq(devpool_alloc(dp, 3 * MiB + 5, true, &a, &bs, &fl),
	    0);
	ck_assert_uint_eq(fl, DEVPOOL_F_OWN_SEGMENT);
	ck_assert_uint_eq(bs, 3 * MiB + 512);
	ck_assert_uint_eq(fp.allocs, 1);
	ck_assert_uint_eq(fp.size[0], 4 * MiB); /* whole GPU pages */
	ck_assert_uint_eq(fp.base[0], a);       /* exact: base = segment */
	uintptr_t base;
	size_t sz;
	ck_assert(!devpool_block_of(dp, a + 3 * MiB, &base, &sz, &fl));
	ck_assert_uint_eq(base, a);
	ck_assert_uint_eq(sz, 3 * MiB + 512);
	ck_assert(devpool_block_of(dp, a + 3 * MiB + 600, &base, &sz, &fl));
	ck_assert(!devpool_free(dp, a));
	valid(dp);
	/* A cached own segment serves a request that fits it within 1/8. */
	ck_assert_int_eq(devpool_alloc(dp, 4 * MiB, true, &b, &bs, &fl), 0);
	ck_assert_uint_eq(b, a);
	ck_assert_uint_eq(fp.allocs, 1);
	ck_assert(!devpool_free(dp, b));
	/* ... but not a much smaller one. */
	ck_assert_int_eq(devpool_alloc(dp, 2 * MiB, true, &c, &bs, &fl), 0);
	ck_assert_uint_ne(c, a);
	ck_assert_uint_eq(fp.allocs, 2);
	/* Without grow: no new segment. */
	uintptr_t d;
	ck_assert_int_eq(devpool_alloc(dp, 64 * MiB, false, &d, &bs, &fl),
	    DEVPOOL_ENOSPACE);
	valid(dp);
	devpool_stats_t st;
	devpool_stats(dp, &st);
	ck_assert_uint_eq(st.own_segments, 2);
	ck_assert_uint_eq(st.own_cached, 4 * MiB);
	ck_assert_uint_eq(devpool_trim(dp), 4 * MiB);
	ck_assert(!devpool_free(dp, c));
	ck_assert_uint_eq(devpool_trim(dp), 2 * MiB);
	ck_assert_uint_eq(fp.n, 0);
	valid(dp);
	devpool_destroy(dp);
}
END_TEST

START_TEST(test_devpool_own_cache_cap)
{
	devpool_t *dp = mk(0, 8 * MiB);
	uintptr_t a[4];
	size_t bs;
	unsigned fl;
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(devpool_alloc(dp, (size_t)(4 + 2 * i) * MiB,
		    true, &a[i], &bs, &fl), 0);
	for (int i = 0; i < 4; i++)
		ck_assert(!devpool_free(dp, a[i]));
	devpool_stats_t st;
	devpool_stats(dp, &st);
	ck_assert_uint_le(st.own_cached, 8 * MiB);
	ck_assert_uint_eq(st.reserved, st.own_cached);
	ck_assert_uint_eq(fp.live_bytes, st.reserved);
	valid(dp);
	devpool_destroy(dp);
}
END_TEST

START_TEST(test_devpool_limit_and_provider_failure)
{
	devpool_t *dp = mk(6 * MiB, 0);
	uintptr_t a, b, c;
	size_t bs;
	unsigned fl;
	ck_assert_int_eq(devpool_alloc(dp, 4 * MiB, true, &a, &bs, &fl), 0);
	ck_assert_int_eq(devpool_alloc(dp, 1 * MiB, true, &b, &bs, &fl), 0);
	/* 1 MiB is left in the shared segment: 1.5 MiB needs a new one. */
	ck_assert_int_eq(devpool_alloc(dp, 1536 * KiB, true, &c, &bs, &fl),
	    DEVPOOL_ELIMIT);
	ck_assert_int_eq(devpool_alloc(dp, 2 * MiB, true, &c, &bs, &fl),
	    DEVPOOL_ELIMIT);
	ck_assert_int_eq(devpool_alloc(dp, 1 * MiB, true, &c, &bs, &fl), 0);
	ck_assert(!devpool_free(dp, c));
	devpool_stats_t st;
	devpool_stats(dp, &st);
	ck_assert_uint_le(st.reserved, 6 * MiB);
	devpool_set_limit(dp, 0);
	fp.fail_next = 1;
	ck_assert_int_eq(devpool_alloc(dp, 1536 * KiB, true, &c, &bs, &fl),
	    DEVPOOL_EPROVIDER);
	valid(dp);
	ck_assert_int_eq(devpool_alloc(dp, 1536 * KiB, true, &c, &bs, &fl),
	    0);
	valid(dp);
	devpool_destroy(dp);
	ck_assert_uint_eq(fp.n, 0);
	ck_assert_uint_eq(fp.bad_frees, 0);
}
END_TEST

/* Random mix of every path, validated after every operation. */
START_TEST(test_devpool_random_validated)
{
	devpool_t *dp = mk(0, 0);
	enum { N = 600 };
	static uintptr_t a[N];
	static size_t s[N];
	memset(a, 0, sizeof(a));
	for (int step = 0; step < 6000; step++) {
		int i = (int)(rnd() % N);
		if (a[i] != 0) {
			ck_assert(!devpool_free(dp, a[i]));
			a[i] = 0;
		} else {
			uint64_t r = rnd();
			size_t sz = (r & 3) == 0 ? 1 + rnd() % (8 * MiB) :
			    (r & 3) == 1 ? 1 + rnd() % (64 * KiB) :
			    1 + rnd() % (2 * MiB);
			size_t bs;
			unsigned fl;
			ck_assert_int_eq(devpool_alloc(dp, sz, true, &a[i],
			    &bs, &fl), 0);
			ck_assert_uint_ge(bs, sz);
			s[i] = bs;
		}
		if (step % 7 == 0)
			valid(dp);
		if (step % 1000 == 999)
			devpool_trim(dp);
	}
	valid(dp);
	/* No two live blocks overlap. */
	for (int i = 0; i < N; i++) {
		if (a[i] == 0)
			continue;
		uintptr_t base;
		size_t sz;
		unsigned fl;
		ck_assert(!devpool_block_of(dp, a[i] + s[i] - 1, &base, &sz,
		    &fl));
		ck_assert_uint_eq(base, a[i]);
	}
	devpool_destroy(dp);
	ck_assert_uint_eq(fp.n, 0);
	ck_assert_uint_eq(fp.bad_frees, 0);
}
END_TEST

/* RMM's random_allocations: 10,000 allocations up to 64 MiB, random frees,
 * live bytes capped; reserved/allocated (requested bytes) at the end. */
START_TEST(test_devpool_rmm_random)
{
	devpool_t *dp = mk(0, 0);
	enum { N = 10000 };
	static uintptr_t a[N];
	static size_t req[N];
	size_t live = 0, cap = (size_t)16 << 30;
	int nlive = 0;
	static int idx[N];
	double worst = 0;
	for (int i = 0; i < N; i++) {
		size_t sz = 1 + rnd() % (64 * MiB);
		while (live + sz > cap || (nlive > 0 && rnd() % 2 == 0)) {
			int k = (int)(rnd() % (uint64_t)nlive);
			int j = idx[k];
			ck_assert(!devpool_free(dp, a[j]));
			live -= req[j];
			idx[k] = idx[--nlive];
		}
		size_t bs;
		unsigned fl;
		ck_assert_int_eq(devpool_alloc(dp, sz, true, &a[i], &bs, &fl),
		    0);
		req[i] = sz;
		live += sz;
		idx[nlive++] = i;
		if (live > 256 * MiB) {
			devpool_stats_t st;
			devpool_stats(dp, &st);
			double r = (double)st.reserved / (double)live;
			if (r > worst)
				worst = r;
		}
	}
	valid(dp);
	devpool_stats_t st;
	devpool_stats(dp, &st);
	double ratio = (double)st.reserved / (double)live;
	printf("rmm random: %d live, %zu MiB requested, %zu MiB reserved, "
	    "ratio %.3f (worst %.3f), %u driver allocs\n", nlive, live >> 20,
	    st.reserved >> 20, ratio, worst, fp.allocs);
	ck_assert(ratio <= 1.3);
	devpool_destroy(dp);
}
END_TEST

/* Many holes: every other block freed, then refilled with new sizes. */
START_TEST(test_devpool_many_holes)
{
	devpool_t *dp = mk(0, 0);
	enum { N = 20000 };
	static uintptr_t a[N];
	static size_t req[N];
	size_t live = 0, bs;
	unsigned fl;
	for (int i = 0; i < N; i++) {
		req[i] = 65 * KiB + rnd() % (960 * KiB);
		ck_assert_int_eq(devpool_alloc(dp, req[i], true, &a[i], &bs,
		    &fl), 0);
		live += req[i];
	}
	for (int i = 0; i < N; i += 2) {
		ck_assert(!devpool_free(dp, a[i]));
		live -= req[i];
	}
	valid(dp);
	devpool_stats_t st0;
	devpool_stats(dp, &st0);
	for (int i = 0; i < N; i += 2) {
		req[i] = 65 * KiB + rnd() % (960 * KiB);
		ck_assert_int_eq(devpool_alloc(dp, req[i], true, &a[i], &bs,
		    &fl), 0);
		live += req[i];
	}
	valid(dp);
	devpool_stats_t st;
	devpool_stats(dp, &st);
	double ratio = (double)st.reserved / (double)live;
	printf("many holes: %d blocks, %zu MiB requested, reserved %zu -> "
	    "%zu MiB, ratio %.3f, fragmentation after holes %.3f\n", N,
	    live >> 20, st0.reserved >> 20, st.reserved >> 20, ratio,
	    1.0 - (double)st0.largest_free / (double)st0.free_bytes);
	ck_assert(ratio <= 1.3);
	devpool_destroy(dp);
}
END_TEST

static Suite *
make_devpool_suite(void)
{
	Suite *s = suite_create("devpool");
	TCase *tc = tcase_create("engine");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_devpool_slabs);
	tcase_add_test(tc, test_devpool_split_coalesce_best_fit);
	tcase_add_test(tc, test_devpool_best_fit_smallest_hole);
	tcase_add_test(tc, test_devpool_own_segments);
	tcase_add_test(tc, test_devpool_own_cache_cap);
	tcase_add_test(tc, test_devpool_limit_and_provider_failure);
	tcase_add_test(tc, test_devpool_random_validated);
	tcase_add_test(tc, test_devpool_rmm_random);
	tcase_add_test(tc, test_devpool_many_holes);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_devpool_suite)
