/*
 * core_test.h -- helpers shared by the core's unit tests (check_contracts,
 * check_api, check_threads, check_xfer): the simulated driver's test API
 * (reached through the loaded driver, as the product dlopens it), output
 * capture, and the last violation recorded.  Header-only, static.
 */
#ifndef CUWARDEN_TESTS_CORE_TEST_H
#define CUWARDEN_TESTS_CORE_TEST_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fakecuda/fakecuda.h"
#include "cuwarden.h"
#include "driver.h"
#include "lasterr.h"
#include "ledger.h"
#include "options.h"
#include "registry.h"
#include "stats.h"
#include "violation.h"

#define CW_TEST_UNUSED __attribute__((unused))

static void (*fc_counters)(struct fakecuda_counters *) CW_TEST_UNUSED;
static int (*fc_inject)(const char *, long) CW_TEST_UNUSED;
static void *(*fc_host_alias)(CUdeviceptr, size_t) CW_TEST_UNUSED;

/* Loads the simulated driver's test API; exits 99 if libcuda.so.1 is not
 * the simulated driver (LD_LIBRARY_PATH not set by the harness). */
static CW_TEST_UNUSED void
load_fixture(void)
{
	void *h;

	if (driver_get() == NULL || (h = driver_handle()) == NULL) {
		fprintf(stderr, "cannot load libcuda.so.1\n");
		exit(99);
	}
	*(void **)&fc_counters = dlsym(h, "fakecuda_counters");
	*(void **)&fc_inject = dlsym(h, "fakecuda_inject");
	*(void **)&fc_host_alias = dlsym(h, "fakecuda_host_alias");
	if (!fc_counters || !fc_inject || !fc_host_alias) {
		fprintf(stderr, "libcuda.so.1 is not the simulated driver\n");
		exit(99);
	}
}

/* Output capture: counts lines and keeps the last one. */
static pthread_mutex_t out_lock CW_TEST_UNUSED = PTHREAD_MUTEX_INITIALIZER;
static char out_last[512] CW_TEST_UNUSED;
static unsigned long out_lines CW_TEST_UNUSED;

static CW_TEST_UNUSED void
out_capture(const char *msg, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&out_lock);
	snprintf(out_last, sizeof(out_last), "%s", msg);
	out_lines++;
	pthread_mutex_unlock(&out_lock);
}

static CW_TEST_UNUSED void
quiet(void)
{
	cw_set_output(out_capture, NULL);
}

/* Straight to the driver, no pools (for fault injection on frees). */
static CW_TEST_UNUSED void
pools_off(void)
{
	setenv("CUWARDEN_POOL", "0", 1);
	options_reset();
}

static CW_TEST_UNUSED int
last_cb(const violation_t *v, void *arg)
{
	*(violation_t *)arg = *v;
	return 0;
}

/* The last kept violation; type V_COUNT when none. */
static CW_TEST_UNUSED violation_t
last_violation(void)
{
	violation_t v;

	memset(&v, 0, sizeof(v));
	v.type = V_COUNT;
	violation_foreach(last_cb, &v);
	return v;
}

/* What a refused call must leave unchanged. */
typedef struct snapshot_s {
	size_t live;
	cw_stats_t stats;
} snapshot_t;

static CW_TEST_UNUSED snapshot_t
snap(void)
{
	snapshot_t s;

	memset(&s, 0, sizeof(s));
	s.live = registry_live_count();
	cw_stats(&s.stats);
	return s;
}

/* Compares everything but the violation count (which a refusal raises)
 * and the stack depot (which a refusal may grow). */
#define ck_assert_unchanged(a, b) \
	do { \
		ck_assert_uint_eq((a).live, (b).live); \
		for (int k_ = 0; k_ < 3; k_++) { \
			ck_assert_uint_eq((a).stats.bytes[k_].current, \
			    (b).stats.bytes[k_].current); \
			ck_assert_uint_eq((a).stats.allocations[k_].current, \
			    (b).stats.allocations[k_].current); \
			ck_assert_uint_eq((a).stats.allocations[k_].total, \
			    (b).stats.allocations[k_].total); \
		} \
		ck_assert_uint_eq((a).stats.views_live, \
		    (b).stats.views_live); \
		ck_assert_uint_eq((a).stats.failed_frees, \
		    (b).stats.failed_frees); \
	} while (0)

#endif /* CUWARDEN_TESTS_CORE_TEST_H */
