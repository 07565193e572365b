/*
 * check_poolmap.c -- the pools' address map (poolmap.h) alone.
 *
 * What is proven: a block is found from any address inside it and from
 * none outside; blocks are recorded only inside held segments; holds count
 * bytes, so two segments sharing a page keep its leaf until both are
 * gone; 10,000 segments at ever-new addresses keep one leaf (finding A1:
 * leaves used to be kept for every page that ever held a block); a bad
 * hold holds nothing; a forked child's reset keeps the leaves for reuse;
 * lookups racing with leaves being retired and reused never return a
 * block that was not there (4 reader threads, 1 writer).
 */
#include "preamble.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "poolmap.h"
#include "unit.h"

#define KiB ((uintptr_t)1 << 10)
#define MiB ((uintptr_t)1 << 20)
#define GiB ((uintptr_t)1 << 30)
#define PG (2 * MiB)

/* Addresses only: the map never touches the memory. */
#define AREA ((uintptr_t)0x7f0000000000)

static poolmap_stats_t
stats(void)
{
	poolmap_stats_t st;
	poolmap_stats(&st);
	return st;
}

static void
expect_block(uintptr_t addr, uintptr_t base, size_t size, unsigned kind)
{
	uintptr_t b;
	size_t s;
	unsigned k, f;
	ck_assert_msg(!poolmap_lookup(addr, &b, &s, &k, &f), "no block at "
	    "%#lx", (unsigned long)addr);
	ck_assert_uint_eq(b, base);
	ck_assert_uint_eq(s, size);
	ck_assert_uint_eq(k, kind);
}

static void
expect_none(uintptr_t addr)
{
	uintptr_t b;
	size_t s;
	unsigned k, f;
	ck_assert_msg(poolmap_lookup(addr, &b, &s, &k, &f), "a block at "
	    "%#lx: %#lx, %zu", (unsigned long)addr, (unsigned long)b, s);
}

START_TEST(test_poolmap_set_lookup_clear)
{
	poolmap_reset(false);
	uintptr_t seg = AREA;
	/* Not held: nothing can be recorded. */
	ck_assert(poolmap_set(seg, 4096, 1, 0));
	ck_assert(!poolmap_hold(seg, 8 * MiB));
	/* A block crossing a page boundary, one at a page start, one
	 * 512-byte block. */
	uintptr_t a = seg + PG - 4096, b = seg + 2 * PG, c = seg + 3 * PG + 512;
	ck_assert(!poolmap_set(a, 3 * MiB, 0, 0));
	ck_assert(!poolmap_set(b, 512, 2, POOLMAP_F_ARENA(3)));
	ck_assert(!poolmap_set(c, 100, 1, 1));
	expect_block(a, a, 3 * MiB, 0);
	expect_block(a + PG, a, 3 * MiB, 0);
	expect_block(b - 1, a, 3 * MiB, 0);
	/* b starts inside a's range: b wins from its start. */
	expect_block(b + 511, b, 512, 2);
	expect_none(b + 512);
	expect_none(a - 1);
	uintptr_t bb;
	size_t s;
	unsigned k, f;
	ck_assert(!poolmap_lookup(c + 99, &bb, &s, &k, &f));
	ck_assert_uint_eq(bb, c);
	ck_assert_uint_eq(s, 512); /* rounded up */
	ck_assert_uint_eq(f & 1, 1);
	ck_assert(!poolmap_lookup(b, &bb, &s, &k, &f));
	ck_assert_uint_eq(POOLMAP_ARENA_OF(f), 3);
	poolmap_clear(b);
	poolmap_clear(c);
	expect_none(c);
	poolmap_clear(a);
	expect_none(a + 1);
	ck_assert_uint_eq(stats().leaves_live, 3); /* a's, b's, c's pages */
	poolmap_release(seg, 8 * MiB);
	poolmap_stats_t st = stats();
	ck_assert_uint_eq(st.leaves_live, 0);
	ck_assert_uint_eq(st.leaves_free, 3);
	/* Released: nothing can be recorded there any more. */
	ck_assert(poolmap_set(a, 4096, 0, 0));
	expect_none(a);
	poolmap_reset(false);
	st = stats();
	ck_assert_uint_eq(st.leaves_live + st.leaves_free + st.nodes, 0);
}
END_TEST

START_TEST(test_poolmap_shared_page)
{
	poolmap_reset(false);
	/* Two segments share the page at AREA: [0, 1 MiB) and
	 * [1 MiB, 3 MiB). */
	ck_assert(!poolmap_hold(AREA, 1 * MiB));
	ck_assert(!poolmap_hold(AREA + 1 * MiB, 2 * MiB));
	ck_assert(!poolmap_set(AREA, 4096, 0, 0));
	ck_assert(!poolmap_set(AREA + 1 * MiB, 4096, 0, 0));
	ck_assert(!poolmap_set(AREA + PG, 4096, 0, 0));
	poolmap_clear(AREA);
	poolmap_release(AREA, 1 * MiB);
	/* The second segment still holds the page: its block stays. */
	expect_block(AREA + 1 * MiB + 100, AREA + 1 * MiB, 4096, 0);
	ck_assert_uint_eq(stats().leaves_live, 2);
	poolmap_clear(AREA + 1 * MiB);
	poolmap_clear(AREA + PG);
	poolmap_release(AREA + 1 * MiB, 2 * MiB);
	ck_assert_uint_eq(stats().leaves_live, 0);
	ck_assert_uint_eq(stats().leaves_free, 2);
	poolmap_reset(false);
}
END_TEST

START_TEST(test_poolmap_bounded_over_new_addresses)
{
	poolmap_reset(false);
	/* 10,000 segments of 4 MiB, each at a new address (40 GB of
	 * address space, as a driver handing out fresh ranges), one block
	 * in each page: one page's worth of leaves at a time. */
	for (uintptr_t i = 0; i < 10000; i++) {
		uintptr_t seg = AREA + i * 4 * MiB;
		ck_assert(!poolmap_hold(seg, 4 * MiB));
		ck_assert(!poolmap_set(seg, 3 * MiB, 0, 0));
		ck_assert(!poolmap_set(seg + 3 * MiB, 1 * MiB, 1, 0));
		expect_block(seg + PG, seg, 3 * MiB, 0);
		poolmap_clear(seg);
		poolmap_clear(seg + 3 * MiB);
		poolmap_release(seg, 4 * MiB);
		poolmap_stats_t st = stats();
		ck_assert_uint_eq(st.leaves_live, 0);
		ck_assert_uint_le(st.leaves_free, 2);
	}
	poolmap_stats_t st = stats();
	ck_assert_uint_le(st.nodes, 3); /* 40 GB: 2 or 3 nodes of 32 GiB */
	ck_assert_uint_le(st.bytes, 2 * 16400 + 3 * 320 * 1024);
	poolmap_reset(false);
}
END_TEST

START_TEST(test_poolmap_bad_holds)
{
	poolmap_reset(false);
	ck_assert(poolmap_hold(AREA, 0));
	ck_assert(poolmap_hold((uintptr_t)1 << 48, 4096));
	/* Crosses the 48-bit limit: nothing of it stays held. */
	ck_assert(poolmap_hold(((uintptr_t)1 << 48) - PG, 2 * PG));
	ck_assert(poolmap_set(((uintptr_t)1 << 48) - PG, 4096, 0, 0));
	ck_assert(poolmap_hold(UINTPTR_MAX - 4095, 8192)); /* wraps */
	/* Releasing what was never held changes nothing. */
	ck_assert(!poolmap_hold(AREA, PG));
	poolmap_release(AREA + 64 * GiB, PG);
	ck_assert(!poolmap_set(AREA, 4096, 0, 0));
	expect_block(AREA + 1, AREA, 4096, 0);
	poolmap_clear(AREA);
	poolmap_release(AREA, PG);
	ck_assert_uint_eq(stats().leaves_live, 0);
	poolmap_reset(false);
}
END_TEST

START_TEST(test_poolmap_child_reset)
{
	poolmap_reset(false);
	ck_assert(!poolmap_hold(AREA, 3 * PG));
	for (int i = 0; i < 3; i++)
		ck_assert(!poolmap_set(AREA + (uintptr_t)i * PG, 4096, 0, 0));
	poolmap_reset(true); /* what a forked child does */
	poolmap_stats_t st = stats();
	ck_assert_uint_eq(st.leaves_live, 0);
	ck_assert_uint_eq(st.leaves_free, 3);
	expect_none(AREA);
	ck_assert(poolmap_set(AREA, 4096, 0, 0)); /* no hold left */
	ck_assert(!poolmap_hold(AREA, PG));
	ck_assert(!poolmap_set(AREA, 4096, 0, 0));
	ck_assert_uint_eq(stats().leaves_free, 2); /* reused */
	poolmap_clear(AREA);
	poolmap_release(AREA, PG);
	poolmap_reset(false);
}
END_TEST

/* ---------------------------------------------------------- concurrency */

/* The writer churns segments over pages CHURN..CHURN+3 (hold, blocks at
 * multiples of CHUNK, clear, release), so their leaves are retired and
 * reused all the time, also for each other's pages.  A block's size tells
 * its page (CSIZE), so a lookup that read a leaf reused for another page
 * would answer a size the writer never put there.  A stable segment below
 * holds one block.  Readers look up addresses in both: a block found in
 * the churned range must be one the writer records there; in the stable
 * one, always the stable block.  On a 2-CPU machine a lookup without the
 * generation check failed this test in half to all of the runs. */
#define CHUNK (64 * KiB)
#define CSIZE(b) (CHUNK - 512 * (((b) - CHURN) / PG))
#define STABLE AREA
#define CHURN (AREA + 4 * PG)

static int stop_flag;
static unsigned long wrong, found_churn;

static void *
reader(void *arg)
{
	uint64_t r = (uintptr_t)arg * 7919 + 1;
	unsigned long bad = 0, found = 0;
	while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		/* Mostly in the two pages that trade a leaf. */
		uintptr_t x = (r & 3) == 0 ? CHURN + (r >> 20) % (4 * PG) :
		    CHURN + ((r >> 8) & 1) * 2 * PG + (r >> 20) % PG;
		uintptr_t b;
		size_t s;
		unsigned k, f;
		if (!poolmap_lookup(x, &b, &s, &k, &f)) {
			found++;
			if (b % CHUNK != 0 || s != CSIZE(b) || k != 1 || x < b ||
			    x >= b + s)
				bad++;
		}
		uintptr_t y = STABLE + (r >> 40) % (3 * MiB);
		if (poolmap_lookup(y, &b, &s, &k, &f) || b != STABLE ||
		    s != 3 * MiB || k != 2)
			bad++;
	}
	__atomic_fetch_add(&wrong, bad, __ATOMIC_RELAXED);
	__atomic_fetch_add(&found_churn, found, __ATOMIC_RELAXED);
	return NULL;
}

START_TEST(test_poolmap_lookups_race_retirement)
{
	poolmap_reset(false);
	ck_assert(!poolmap_hold(STABLE, 4 * MiB));
	ck_assert(!poolmap_set(STABLE, 3 * MiB, 2, 0));
	stop_flag = 0;
	wrong = found_churn = 0;
	pthread_t th[4];
	for (uintptr_t i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, reader,
		    (void *)i), 0);
	uint64_t r = 42;
	for (int round = 0; round < 20000; round++) {
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		/* One segment of 1..4 pages somewhere in the churned range,
		 * or (every other round) one page, alternately the first and
		 * the third: the leaf retired from one is published for the
		 * other at once. */
		uintptr_t first = (r >> 30) % 4, n = 1 + (r >> 40) % (4 - first);
		if (round % 2 == 0) {
			first = (uintptr_t)(round / 2 % 2) * 2;
			n = 1;
		}
		uintptr_t seg = CHURN + first * PG;
		ck_assert(!poolmap_hold(seg, n * PG));
		for (uintptr_t o = 0; o < n * PG; o += CHUNK)
			ck_assert(!poolmap_set(seg + o, CSIZE(seg + o), 1, 0));
		for (uintptr_t o = 0; o < n * PG; o += CHUNK)
			poolmap_clear(seg + o);
		poolmap_release(seg, n * PG);
	}
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(wrong, 0);
	ck_assert_uint_gt(found_churn, 0); /* the race was run */
	poolmap_stats_t st = stats();
	ck_assert_uint_eq(st.leaves_live, 1); /* the stable page */
	ck_assert_uint_le(st.leaves_free, 4);
	poolmap_reset(false);
}
END_TEST

static Suite *
make_poolmap_suite(void)
{
	Suite *s = suite_create("poolmap");
	TCase *tc = tcase_create("poolmap");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_poolmap_set_lookup_clear);
	tcase_add_test(tc, test_poolmap_shared_page);
	tcase_add_test(tc, test_poolmap_bounded_over_new_addresses);
	tcase_add_test(tc, test_poolmap_bad_holds);
	tcase_add_test(tc, test_poolmap_child_reset);
	tcase_add_test(tc, test_poolmap_lookups_race_retirement);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_poolmap_suite)
