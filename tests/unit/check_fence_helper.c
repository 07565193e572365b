/*
 * check_fence_helper.c -- the fence's helper thread (fence_helper.c) over
 * the simulated driver (tests/fakecuda/libcuda.so.1, two devices; its
 * fakecuda_* API is reached with dlsym inside each test, so the runner
 * process never loads it before forking).
 *
 * What is proven: a request is served by one barrier of the helper; a
 * stop (fence_reset) makes the helper exit, awake or asleep, and the next
 * request starts a new one; requests from many threads are all covered,
 * by no more barriers than requests, each a synchronise; fence_wait_for
 * is served by the helper; requests for two devices are each served; a
 * failing barrier drops its request, and the synchronous path and the
 * next request still work.  Every assertion waits for its event by
 * polling a counter, with no bound on time (the test case's timeout
 * catches a helper that never comes); none asserts on timing.
 */
#include "preamble.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "driver.h"
#include "fence.h"
#include "unit.h"

#include "../fakecuda/fakecuda.h"

static void (*fc_counters)(struct fakecuda_counters *);
static void (*fc_reset_counters)(void);

static void
setup(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	ck_assert_msg(h != NULL, "the simulated driver: %s", dlerror());
	*(void **)&fc_counters = dlsym(h, "fakecuda_counters");
	*(void **)&fc_reset_counters = dlsym(h, "fakecuda_reset_counters");
	ck_assert(fc_counters != NULL && fc_reset_counters != NULL);
	fence_reset();
	ck_assert_int_eq(driver_bind(0), CW_OK);
	fc_reset_counters();
}

static void
teardown(void)
{
	fence_reset();
	ck_assert_uint_eq(fence_helper_threads(), 0);
}

static unsigned long
synchronises(void)
{
	struct fakecuda_counters c;
	fc_counters(&c);
	return c.ctx_synchronize;
}

static uint64_t
device_barriers(int device)
{
	return __atomic_load_n(&fence_devs[device].barriers, __ATOMIC_RELAXED);
}

/* Until frees stamped <= stamp on device are safe. */
static void
wait_passed(int device, uint64_t stamp)
{
	while (!fence_passed(device, stamp))
		sched_yield();
}

/* Until the helper has counted n barriers (it counts each after the
 * synchronise returned, failed or not). */
static void
wait_helper_barriers(uint64_t n)
{
	while (fence_helper_barriers() < n)
		usleep(100);
}

START_TEST(test_fence_helper_request_served_by_one_barrier)
{
	ck_assert_uint_eq(fence_helper_threads(), 0);
	uint64_t s = fence_stamp(0);
	ck_assert(!fence_passed(0, s));
	ck_assert(!fence_request(0, s)); /* a helper: no error */
	ck_assert_uint_eq(fence_helper_threads(), 1);
	ck_assert_uint_ge(fence_helper_wanted(0), s);
	wait_helper_barriers(1);
	ck_assert(fence_passed(0, s));
	/* One barrier served it, and nothing is left to do: no other. */
	ck_assert_uint_eq(fence_helper_barriers(), 1);
	ck_assert_uint_eq(device_barriers(0), 1);
	ck_assert_uint_eq(synchronises(), 1);
	ck_assert_uint_eq(fence_helper_threads(), 1);
}
END_TEST

/* fence_reset stops the helper and waits until it has exited, its
 * counters cleared; the next request starts a new helper.  Right after a
 * barrier the helper is in its spin: stopped there, again and again. */
START_TEST(test_fence_helper_reset_stops_and_restarts)
{
	for (int i = 0; i < 50; i++) {
		uint64_t s = fence_stamp(0);
		ck_assert(!fence_request(0, s));
		wait_helper_barriers(1);
		ck_assert(fence_passed(0, s));
		ck_assert_uint_eq(fence_helper_threads(), 1);
		fence_reset();
		ck_assert_uint_eq(fence_helper_threads(), 0);
		ck_assert_uint_eq(fence_helper_barriers(), 0);
		ck_assert_uint_eq(fence_helper_wanted(0), 0);
		ck_assert(!fence_passed(0, fence_stamp(0)));
	}
	ck_assert_uint_eq(synchronises(), 50);
}
END_TEST

/* A helper out of requests polls, then sleeps: a stop reaches it asleep
 * too (the pause makes that likely; the test holds either way), and a
 * request after the pause wakes it. */
START_TEST(test_fence_helper_reset_while_asleep)
{
	uint64_t s = fence_stamp(0);
	ck_assert(!fence_request(0, s));
	wait_helper_barriers(1);
	usleep(20 * FENCE_HELPER_SPIN_NS / 1000);
	s = fence_stamp(0);
	ck_assert(!fence_passed(0, s));
	ck_assert(!fence_request(0, s));
	wait_helper_barriers(2);
	ck_assert(fence_passed(0, s));
	ck_assert_uint_eq(fence_helper_threads(), 1);
	usleep(20 * FENCE_HELPER_SPIN_NS / 1000);
	fence_reset();
	ck_assert_uint_eq(fence_helper_threads(), 0);
}
END_TEST

enum { NTHREADS = 8, NREQ = 200 };
static unsigned long covered; /* requests seen passed (atomic) */
static unsigned long refused; /* requests answered "no helper" (atomic) */

static void *
requester(void *arg)
{
	(void)arg;
	for (int i = 0; i < NREQ; i++) {
		uint64_t s = fence_stamp(0);
		if (fence_request(0, s))
			__atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
		wait_passed(0, s);
		__atomic_fetch_add(&covered, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Requests of many threads at once, none of them synchronising itself:
 * every one is covered, by barriers of the one helper, at most one per
 * request; then a reset brings the helper count back to 0. */
START_TEST(test_fence_helper_many_threads_covered)
{
	pthread_t t[NTHREADS];
	covered = refused = 0;
	for (int i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, requester, NULL),
		    0);
	for (int i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_uint_eq(covered, NTHREADS * NREQ);
	ck_assert_uint_eq(refused, 0);
	ck_assert_uint_eq(fence_helper_threads(), 1);
	/* The helper counts its last barrier just after the requesters may
	 * have seen it pass; no request is left for another. */
	wait_helper_barriers(synchronises());
	uint64_t hb = fence_helper_barriers();
	ck_assert_uint_eq(hb, synchronises());
	ck_assert_uint_eq(hb, device_barriers(0));
	ck_assert_uint_ge(hb, 1);
	ck_assert_uint_le(hb, NTHREADS * NREQ);
	fence_reset();
	ck_assert_uint_eq(fence_helper_threads(), 0);
}
END_TEST

/* fence_wait_for asks the helper and waits for its barrier (a wait no
 * scheduler delay outlasts: the outcome does not depend on timing). */
START_TEST(test_fence_helper_wait_for)
{
	const uint64_t forever = UINT64_C(1) << 62;
	uint64_t s = fence_stamp(0);
	ck_assert(fence_wait_for(0, s, forever));
	ck_assert(fence_passed(0, s));
	wait_helper_barriers(1);
	ck_assert_uint_eq(device_barriers(0), 1);
	ck_assert_uint_eq(fence_helper_barriers(), 1);
	/* Covered already: no request, no barrier. */
	ck_assert(fence_wait_for(0, s, forever));
	ck_assert_uint_eq(device_barriers(0), 1);
}
END_TEST

/* Requests for two devices: the one helper serves each with a barrier of
 * that device. */
START_TEST(test_fence_helper_two_devices)
{
	ck_assert_int_ge(driver_device_count(), 2);
	uint64_t s0 = fence_stamp(0), s1 = fence_stamp(1);
	ck_assert(!fence_request(1, s1));
	ck_assert(!fence_request(0, s0));
	wait_passed(1, s1);
	wait_passed(0, s0);
	ck_assert_uint_eq(fence_helper_threads(), 1);
	wait_helper_barriers(2);
	ck_assert_uint_eq(device_barriers(0), 1);
	ck_assert_uint_eq(device_barriers(1), 1);
	ck_assert_uint_eq(fence_helper_barriers(), 2);
}
END_TEST

/* A barrier that fails (the synchronise refused) leaves the frees
 * pending and drops the request: the helper does not retry it.  The
 * synchronous path still covers them, and the helper serves the next
 * request. */
START_TEST(test_fence_helper_failed_barrier_dropped)
{
	ck_assert(!fence_inject("sync", 1));
	uint64_t s = fence_stamp(0);
	ck_assert(!fence_request(0, s));
	wait_helper_barriers(1);
	ck_assert_uint_eq(fence_injected(), 1);
	ck_assert(!fence_passed(0, s));
	ck_assert_uint_eq(device_barriers(0), 0);
	ck_assert_uint_eq(
	    __atomic_load_n(&fence_devs[0].failures, __ATOMIC_RELAXED), 1);
	/* Dropped under the lock that counted the barrier: nothing left for
	 * the helper to retry. */
	ck_assert_uint_eq(fence_helper_wanted(0), 0);
	ck_assert_uint_eq(fence_helper_barriers(), 1);
	ck_assert_uint_eq(synchronises(), 0);
	/* The synchronous path. */
	ck_assert(!fence_barrier(0));
	ck_assert(fence_passed(0, s));
	ck_assert_uint_eq(synchronises(), 1);
	/* And the helper, for the next request. */
	uint64_t s2 = fence_stamp(0);
	ck_assert(!fence_request(0, s2));
	wait_helper_barriers(2);
	ck_assert(fence_passed(0, s2));
	ck_assert_uint_eq(fence_helper_barriers(), 2);
	ck_assert_uint_eq(synchronises(), 2);
}
END_TEST

static Suite *
make_fence_helper_suite(void)
{
	Suite *s = suite_create("fence_helper");
	TCase *tc = tcase_create("fence_helper");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fence_helper_request_served_by_one_barrier);
	tcase_add_test(tc, test_fence_helper_reset_stops_and_restarts);
	tcase_add_test(tc, test_fence_helper_reset_while_asleep);
	tcase_add_test(tc, test_fence_helper_many_threads_covered);
	tcase_add_test(tc, test_fence_helper_wait_for);
	tcase_add_test(tc, test_fence_helper_two_devices);
	tcase_add_test(tc, test_fence_helper_failed_barrier_dropped);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	/* Two simulated devices, set before any test loads the driver. */
	setenv("FAKECUDA_DEVICES", "2", 1);
	SRunner *sr = srunner_create(make_fence_helper_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
