/*
 * check_poolmap.c -- the address map of pooled blocks: lookups, and its
 * memory bound (issue 7): blocks whose addresses move on forever (host
 * segments given back and taken again elsewhere) must not make the map
 * grow: with no waiting time, the leaves and nodes it ever makes stay
 * below the peak of (pages holding a block start + POOLMAP_IDLE_MIN);
 * with time standing still, below POOLMAP_IDLE_MAX idle leaves; pages in
 * use keep their leaves (a clock of the test's own, no timing).  Threads
 * setting, clearing and looking up while leaves are recycled under them
 * always find their own blocks.
 */
#include "preamble.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poolmap.h"
#include "unit.h"

#define MiB ((uintptr_t)1 << 20)
#define GiB ((uintptr_t)1 << 30)
#define PAGE (2 * MiB)
#define BASE ((uintptr_t)0x100000000000) /* 16 TiB: any 48-bit address */

/* The clock tests read: one tick per call of tick(). */
static uint64_t fake_now;

static uint64_t
fake_clock(void)
{
	return fake_now;
}

/* Empty leaves beyond POOLMAP_IDLE_MIN are recycled at once (no waiting
 * time): what the clock does, without time. */
static void
policy_at_once(void)
{
	poolmap_test_policy(0, POOLMAP_IDLE_MAX, NULL);
}

static poolmap_stats_t
stats(void)
{
	poolmap_stats_t s;

	poolmap_stats(&s);
	return s;
}

/* The block at a, which must be (base, size rounded to 512, kind). */
static void
expect_block(uintptr_t a, uintptr_t base, size_t size, unsigned kind)
{
	uintptr_t b = 0;
	size_t s = 0;
	unsigned k = 99, f = 99;

	ck_assert_msg(!poolmap_lookup(a, &b, &s, &k, &f),
	    "no block at %#lx (expected %#lx)", (unsigned long)a,
	    (unsigned long)base);
	ck_assert_uint_eq(b, base);
	ck_assert_uint_eq(s, (size + 511) / 512 * 512);
	ck_assert_uint_eq(k, kind);
}

static void
expect_none(uintptr_t a)
{
	uintptr_t b = 0;
	size_t s = 0;
	unsigned k, f;

	ck_assert_msg(poolmap_lookup(a, &b, &s, &k, &f),
	    "%#lx found in a block at %#lx of %zu bytes", (unsigned long)a,
	    (unsigned long)b, s);
}

START_TEST(test_poolmap_lookup)
{
	ck_assert(!poolmap_set(BASE + 4096, 1000, 2, 1 | POOLMAP_F_ARENA(3)));
	expect_block(BASE + 4096, BASE + 4096, 1000, 2);
	expect_block(BASE + 4096 + 1023, BASE + 4096, 1000, 2);
	expect_none(BASE + 4096 + 1024);
	expect_none(BASE + 4095);
	uintptr_t b;
	size_t s;
	unsigned k, f;
	ck_assert(!poolmap_lookup(BASE + 4097, &b, &s, &k, &f));
	ck_assert_uint_eq(f & 1, 1);
	ck_assert_uint_eq(POOLMAP_ARENA_OF(f), 3);
	/* A block over several pages is found from its last byte. */
	ck_assert(!poolmap_set(BASE + 3 * PAGE - 512, 5 * MiB, 0, 0));
	expect_block(BASE + 3 * PAGE - 512 + 5 * MiB - 1,
	    BASE + 3 * PAGE - 512, 5 * MiB, 0);
	expect_block(BASE + 5 * PAGE, BASE + 3 * PAGE - 512, 5 * MiB, 0);
	poolmap_clear(BASE + 4096);
	expect_none(BASE + 4096);
	poolmap_clear(BASE + 3 * PAGE - 512);
	expect_none(BASE + 5 * PAGE);
	/* Outside 48 bits: refused, never found. */
	ck_assert(poolmap_set((uintptr_t)1 << 48, 512, 0, 0));
	expect_none((uintptr_t)1 << 48);
	poolmap_clear((uintptr_t)1 << 48);
}
END_TEST

/* A page emptied and refilled keeps its leaf (the idle list). */
START_TEST(test_poolmap_idle_page_keeps_leaf)
{
	policy_at_once();
	for (int i = 0; i < 10000; i++) {
		ck_assert(!poolmap_set(BASE + (uintptr_t)(i % 7) * 512, 512, 1,
		    0));
		poolmap_clear(BASE + (uintptr_t)(i % 7) * 512);
	}
	poolmap_stats_t s = stats();
	ck_assert_uint_eq(s.leaves_made, 1);
	ck_assert_uint_eq(s.leaves_detached, 0);
	ck_assert_uint_eq(s.leaves_attached, 1);
	ck_assert_uint_eq(s.leaves_idle, 1);
	ck_assert_uint_eq(s.l2_made, 1);
}
END_TEST

/* Blocks at ever new addresses, one at a time: the map stays small. */
START_TEST(test_poolmap_moving_blocks_bounded)
{
	/* Stride 32 GiB + 2 MiB: every block in a page and an l2 node of its
	 * own, 200,000 of them (6.4 PiB of addresses, wrapping at 47 bits). */
	uintptr_t stride = 32 * GiB + PAGE, a = BASE;

	policy_at_once();
	for (int i = 0; i < 200000; i++) {
		a = (a + stride) & (((uintptr_t)1 << 47) - 1);
		ck_assert(!poolmap_set(a + 512, 4096, 0, 0));
		expect_block(a + 4000, a + 512, 4096, 0);
		poolmap_clear(a + 512);
		expect_none(a + 4000);
	}
	poolmap_stats_t s = stats();
	ck_assert_uint_le(s.leaves_made, POOLMAP_IDLE_MIN + 1);
	ck_assert_uint_le(s.l2_made, POOLMAP_IDLE_MIN + 1);
	ck_assert_uint_le(s.leaves_attached, POOLMAP_IDLE_MIN);
	ck_assert_uint_ge(s.leaves_detached, 200000 - POOLMAP_IDLE_MIN - 1);
	ck_assert_uint_le(s.bytes, (POOLMAP_IDLE_MIN + 1) *
	    (poolmap_leaf_bytes() + poolmap_node_bytes()));
	/* 65 leaves of 16 KiB and as many nodes of 128 KiB: about 9 MiB,
	 * where keeping every leaf would have taken 3.2 GB. */
	ck_assert_uint_le(s.bytes, (size_t)10 << 20);
}
END_TEST

/* The same with time standing still (no leaf is ever old enough): the
 * cap on idle leaves holds alone.  Here 300; POOLMAP_IDLE_MAX (4096) in
 * use, 64 MiB of leaves. */
START_TEST(test_poolmap_idle_cap)
{
	uintptr_t a = BASE;

	ck_assert_uint_eq(POOLMAP_IDLE_MAX, 4096);
	ck_assert_uint_eq(POOLMAP_IDLE_NS, 1000000000ull);
	fake_now = 1;
	poolmap_test_policy(POOLMAP_IDLE_NS, 300, fake_clock);
	for (int i = 0; i < 20000; i++) {
		a += PAGE;
		ck_assert(!poolmap_set(a, 512, 0, 0));
		poolmap_clear(a);
	}
	poolmap_stats_t s = stats();
	ck_assert_uint_le(s.leaves_made, 300 + 2);
	ck_assert_uint_le(s.leaves_attached, 300 + 1);
	ck_assert_uint_ge(s.leaves_detached, 20000 - 300 - 2);
}
END_TEST

/* Many live pages, all freed, then blocks elsewhere: the leaves of the
 * freed pages are reused; none are made beyond the peak. */
START_TEST(test_poolmap_peak_reused)
{
	policy_at_once();
	const int live = 500;

	for (int i = 0; i < live; i++)
		ck_assert(!poolmap_set(BASE + (uintptr_t)i * PAGE, PAGE, 0, 0));
	ck_assert_uint_eq(stats().leaves_made, live);
	for (int i = 0; i < live; i++)
		poolmap_clear(BASE + (uintptr_t)i * PAGE);
	for (int i = 0; i < 3 * live; i++) {
		uintptr_t a = BASE + 64 * GiB + (uintptr_t)i * PAGE;

		ck_assert(!poolmap_set(a, 512, 0, 0));
		if (i % 2)
			poolmap_clear(a);
	}
	poolmap_stats_t s = stats();
	/* At most 751 pages held a start at once (750 kept, one set and
	 * cleared), beside the 64 empty leaves of the idle list. */
	ck_assert_uint_le(s.leaves_made, 3 * live / 2 + 1 + POOLMAP_IDLE_MIN);
	ck_assert_uint_ge(s.leaves_attached, 3 * live / 2);
	for (int i = 0; i < live; i++)
		expect_none(BASE + (uintptr_t)i * PAGE + 100);
	for (int i = 0; i < 3 * live; i++) {
		uintptr_t a = BASE + 64 * GiB + (uintptr_t)i * PAGE;

		if (i % 2)
			expect_none(a + 100);
		else
			expect_block(a + 100, a, 512, 0);
	}
}
END_TEST

/* A leaf recycled for another page carries none of its old entries, and
 * the old page sees none of the new ones. */
START_TEST(test_poolmap_recycled_leaf_clean)
{
	policy_at_once();
	uintptr_t p = BASE + 7 * PAGE, q = BASE + 1000 * GiB;

	ck_assert(!poolmap_set(p + 512 * 9, 512, 2, 0));
	ck_assert(!poolmap_set(p + 512 * 20, 512, 2, 0));
	poolmap_clear(p + 512 * 9);
	poolmap_clear(p + 512 * 20);
	/* Push p's leaf out of the idle list. */
	for (int i = 1; i <= POOLMAP_IDLE_MIN; i++) {
		uintptr_t a = BASE + (uintptr_t)(100 + i) * PAGE;
		ck_assert(!poolmap_set(a, 512, 0, 0));
		poolmap_clear(a);
	}
	ck_assert_uint_eq(stats().leaves_detached, 1);
	ck_assert_uint_eq(stats().leaves_free, 1);
	ck_assert(!poolmap_set(q + 512 * 20, 1024, 1, 0)); /* takes it */
	ck_assert_uint_eq(stats().leaves_free, 0);
	expect_none(p + 512 * 20);
	expect_none(p + 512 * 9);
	expect_block(q + 512 * 21, q + 512 * 20, 1024, 1);
	expect_none(q + 512 * 9);
	/* p again: a leaf of its own, empty. */
	ck_assert(!poolmap_set(p + 512 * 30, 512, 0, 0));
	expect_none(p + 512 * 20);
	expect_block(p + 512 * 30, p + 512 * 30, 512, 0);
}
END_TEST

/* Setting over an entry, clearing twice, clearing a range: the count
 * stays right, so the leaf goes idle exactly when it is empty. */
START_TEST(test_poolmap_counts)
{
	policy_at_once();
	uintptr_t p = BASE + 3 * PAGE;

	ck_assert(!poolmap_set(p, 512, 0, 0));
	ck_assert(!poolmap_set(p, 1024, 0, 0)); /* over the same start */
	poolmap_clear(p);
	ck_assert_uint_eq(stats().leaves_idle, 1);
	poolmap_clear(p); /* again: nothing there */
	poolmap_clear(p + 512);
	ck_assert(!poolmap_set(p + 512, 512, 0, 0));
	ck_assert_uint_eq(stats().leaves_idle, 1); /* still on the list */
	ck_assert(!poolmap_set(p + PAGE, 512, 0, 0));
	ck_assert(!poolmap_set(p + 2 * PAGE + 512, 512, 0, 0));
	poolmap_clear_range(p, 3 * PAGE);
	expect_none(p + 512);
	expect_none(p + 2 * PAGE + 512);
	poolmap_stats_t s = stats();
	ck_assert_uint_eq(s.leaves_attached, 3);
	ck_assert_uint_eq(s.leaves_idle, 3);
	/* p was used while idle: the clock gives it a second pass.  The
	 * other two, unused, and then the oldest page of the loop are
	 * detached (the list is full after 61 pages). */
	for (int i = 1; i <= POOLMAP_IDLE_MIN; i++) {
		uintptr_t a = BASE + (uintptr_t)(200 + i) * PAGE;
		ck_assert(!poolmap_set(a, 512, 0, 0));
		poolmap_clear(a);
	}
	s = stats();
	ck_assert_uint_eq(s.leaves_detached, 3);
	ck_assert_uint_eq(s.leaves_made, POOLMAP_IDLE_MIN + 1);
	ck_assert_uint_eq(s.leaves_free, 1);
	ck_assert_uint_eq(s.leaves_idle, POOLMAP_IDLE_MIN);
	ck_assert(!poolmap_set(p + 512, 512, 0, 0));
	ck_assert_uint_eq(stats().leaves_free, 1); /* p kept its leaf */
	expect_block(p + 600, p + 512, 512, 0);
}
END_TEST

/* Pages in use keep their leaves while blocks elsewhere come and go: a
 * leaf is recycled only when empty and unused for POOLMAP_IDLE_NS.  One
 * round: every hot page used once (empty again after), ten new pages;
 * the clock moves one "second" per round. */
START_TEST(test_poolmap_hot_pages_kept)
{
	const int hot = 200, rounds = 50, drift = 10;
	uintptr_t d = BASE + 500 * GiB;

	fake_now = 1;
	poolmap_test_policy(POOLMAP_IDLE_NS, POOLMAP_IDLE_MAX, fake_clock);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < hot; i++) {
			uintptr_t a = BASE + (uintptr_t)i * PAGE +
			    (uintptr_t)(r % 4096) * 512;
			ck_assert(!poolmap_set(a, 512, 0, 0));
			poolmap_clear(a);
		}
		for (int i = 0; i < drift; i++) {
			d += PAGE;
			ck_assert(!poolmap_set(d, 512, 0, 0));
			poolmap_clear(d);
		}
		fake_now += POOLMAP_IDLE_NS;
	}
	poolmap_stats_t s = stats();
	/* A hot page was never detached: one attach per page ever used. */
	ck_assert_uint_eq(s.attaches, hot + (size_t)rounds * drift);
	/* New pages were: all but those the hand has not reached (the list
	 * holds about as many empty, unused leaves as pages in use). */
	ck_assert_uint_ge(s.leaves_detached,
	    (size_t)rounds * drift - hot - 4 * drift - POOLMAP_IDLE_MIN);
	ck_assert_uint_le(s.leaves_made, 2 * hot + 4 * drift +
	    POOLMAP_IDLE_MIN);
	for (int i = 0; i < hot; i++)
		expect_none(BASE + (uintptr_t)i * PAGE + 100 * 512);
}
END_TEST

START_TEST(test_poolmap_child_reset)
{
	for (int i = 0; i < 10; i++)
		ck_assert(!poolmap_set(BASE + (uintptr_t)i * PAGE, 512, 0, 0));
	poolmap_reset(true);
	for (int i = 0; i < 10; i++)
		expect_none(BASE + (uintptr_t)i * PAGE + 1);
	poolmap_stats_t s = stats();
	ck_assert_uint_eq(s.leaves_free, 10);
	ck_assert_uint_eq(s.leaves_attached, 0);
	ck_assert(!poolmap_set(BASE + 77 * GiB, 512, 0, 0));
	expect_block(BASE + 77 * GiB + 5, BASE + 77 * GiB, 512, 0);
	ck_assert_uint_eq(stats().leaves_made, 10);
	poolmap_reset(false);
	ck_assert_uint_eq(stats().bytes, 0);
	expect_none(BASE + 77 * GiB + 5);
}
END_TEST

/* ------------------------------------------------------------- threads */

#define NT 4
#define SHARED_PAGES 8

static int owner_iters = 200000; /* 20,000 under TSan (CW_TEST_SLOW) */

static volatile int stop;

/* Thread t owns granules t, t + NT, ... of SHARED_PAGES pages and checks
 * that its own blocks are always found, whole, while the others set and
 * clear beside them and the mover recycles leaves. */
static void *
owner_main(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (t + 1);

	for (int it = 0; it < owner_iters; it++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uintptr_t page = BASE + (x % SHARED_PAGES) * PAGE;
		uintptr_t a = page + ((x >> 8) % (4096 / NT) * NT + t) * 512;
		unsigned kind = (unsigned)(x >> 40) % 3;

		if (poolmap_set(a, 512, kind, POOLMAP_F_ARENA(t)))
			return (void *)1;
		uintptr_t b;
		size_t s;
		unsigned k, f;
		if (poolmap_lookup(a + 100, &b, &s, &k, &f) || b != a ||
		    s != 512 || k != kind || POOLMAP_ARENA_OF(f) != t)
			return (void *)2;
		poolmap_clear(a);
		if (!poolmap_lookup(a + 100, &b, &s, &k, &f) && b == a)
			return (void *)3;
	}
	return NULL;
}

/* Blocks on ever new pages, set and cleared: keeps the clock turning. */
static void *
mover_main(void *arg)
{
	(void)arg;
	uintptr_t a = BASE + 100 * GiB;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		a += PAGE;
		if (poolmap_set(a, 512, 0, 0))
			return (void *)1;
		poolmap_clear(a);
		/* And look up around the shared pages, racing the owners. */
		uintptr_t b;
		size_t s;
		unsigned k, f;
		uintptr_t q = BASE + (a / PAGE % (SHARED_PAGES + 2)) * PAGE +
		    (a % 4096) * 512;
		if (!poolmap_lookup(q, &b, &s, &k, &f) &&
		    (b > q || q - b >= s || b < BASE ||
		    b >= BASE + SHARED_PAGES * PAGE))
			return (void *)2;
	}
	return NULL;
}

START_TEST(test_poolmap_threads)
{
	pthread_t th[NT], mv;
	void *r;

	if (getenv("CW_TEST_SLOW") != NULL)
		owner_iters = 20000;
	policy_at_once(); /* the mover recycles leaves under the owners */

	ck_assert_int_eq(pthread_create(&mv, NULL, mover_main, NULL), 0);
	for (unsigned t = 0; t < NT; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, owner_main,
		    (void *)(uintptr_t)t), 0);
	for (unsigned t = 0; t < NT; t++) {
		ck_assert_int_eq(pthread_join(th[t], &r), 0);
		ck_assert_msg(r == NULL, "owner %u failed (%p)", t, r);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	ck_assert_int_eq(pthread_join(mv, &r), 0);
	ck_assert_msg(r == NULL, "mover failed (%p)", r);
	for (uintptr_t g = 0; g < SHARED_PAGES * 4096; g++)
		expect_none(BASE + g * 512);
	poolmap_stats_t s = stats();
	/* Everything is empty now: every leaf still attached is on the idle
	 * list (none left out of it, where nothing would recycle it), and
	 * at most POOLMAP_IDLE_MIN of them. */
	ck_assert_uint_eq(s.leaves_attached, s.leaves_idle);
	ck_assert_uint_le(s.leaves_attached, POOLMAP_IDLE_MIN);
	ck_assert_uint_le(s.leaves_made, SHARED_PAGES + POOLMAP_IDLE_MIN +
	    NT + 2);
}
END_TEST

static Suite *
make_poolmap_suite(void)
{
	Suite *s = suite_create("poolmap");
	TCase *tc = tcase_create("poolmap");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_poolmap_lookup);
	tcase_add_test(tc, test_poolmap_idle_page_keeps_leaf);
	tcase_add_test(tc, test_poolmap_moving_blocks_bounded);
	tcase_add_test(tc, test_poolmap_idle_cap);
	tcase_add_test(tc, test_poolmap_peak_reused);
	tcase_add_test(tc, test_poolmap_recycled_leaf_clean);
	tcase_add_test(tc, test_poolmap_counts);
	tcase_add_test(tc, test_poolmap_hot_pages_kept);
	tcase_add_test(tc, test_poolmap_child_reset);
	tcase_add_test(tc, test_poolmap_threads);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_poolmap_suite)
