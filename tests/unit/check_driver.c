/*
 * check_driver.c -- the driver layer (lib/driver.c, lib/direct.c) against
 * the simulated driver (tests/fakecuda/libcuda.so.1, found through
 * LD_LIBRARY_PATH).  check forks each test, and the runner process never
 * touches CUDA, so every test starts with a fresh driver and may set
 * FAKECUDA_* variables before its first call.
 */
#include "preamble.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "direct.h"
#include "driver.h"
#include "lasterr.h"
#include "ledger.h"
#include "unit.h"

#include "../fakecuda/fakecuda.h"

/* The fixture's test API, reached through the loaded driver (the test is
 * not linked with it: the product code dlopens it). */
static void (*fc_counters)(struct fakecuda_counters *);
static void (*fc_reset_counters)(void);
static unsigned long (*fc_calls)(const char *);
static int (*fc_inject)(const char *, long);
static void *(*fc_host_alias)(CUdeviceptr, size_t);

static void
load_fixture(void)
{
	void *h;

	ck_assert_ptr_nonnull(driver_get());
	h = driver_handle();
	ck_assert_ptr_nonnull(h);
	*(void **)&fc_counters = dlsym(h, "fakecuda_counters");
	*(void **)&fc_reset_counters = dlsym(h, "fakecuda_reset_counters");
	*(void **)&fc_calls = dlsym(h, "fakecuda_calls");
	*(void **)&fc_inject = dlsym(h, "fakecuda_inject");
	*(void **)&fc_host_alias = dlsym(h, "fakecuda_host_alias");
	if (!fc_counters || !fc_calls || !fc_inject || !fc_reset_counters ||
	    !fc_host_alias) {
		fprintf(stderr, "libcuda.so.1 is not the simulated driver\n");
		exit(99);
	}
}

static CUcontext
current_ctx(void)
{
	CUcontext c = (CUcontext)(uintptr_t)1;

	ck_assert_int_eq(driver_get()->cuCtxGetCurrent(&c), CUDA_SUCCESS);
	return c;
}

/* ============================================================ loading */

START_TEST(test_driver_load)
{
	const driver_fns_t *f = driver_get();
	char buf[64];

	ck_assert_ptr_nonnull(f);
	load_fixture();
	ck_assert(driver_is_loaded());
	/* The table holds the driver's own exports. */
	ck_assert_ptr_eq((void *)f->cuMemAlloc_v2,
	    dlsym(driver_handle(), "cuMemAlloc_v2"));
	ck_assert_ptr_eq(driver_real_dlsym(driver_handle(), "cuInit"),
	    dlsym(driver_handle(), "cuInit"));
	/* Optional entries the fixture has, including the "_v1" names. */
	ck_assert_ptr_nonnull((void *)f->cuStreamCreate);
	ck_assert_ptr_nonnull((void *)f->cuMemAllocAsync);
	ck_assert_ptr_eq((void *)f->cuMemPrefetchAsync_v1,
	    dlsym(driver_handle(), "cuMemPrefetchAsync"));
	ck_assert_ptr_eq((void *)f->cuMemAdvise_v1,
	    dlsym(driver_handle(), "cuMemAdvise"));
	ck_assert_ptr_ne((void *)f->cuMemAdvise_v1, (void *)f->cuMemAdvise_v2);
	ck_assert_str_eq(driver_export_name("cuMemAdvise_v1", buf,
	    sizeof(buf)), "cuMemAdvise");
	ck_assert_str_eq(driver_export_name("cuMemAlloc_v2", buf,
	    sizeof(buf)), "cuMemAlloc_v2");
	/* Loading is not initialising. */
	ck_assert_uint_eq(fc_calls("cuInit"), 0);
}
END_TEST

START_TEST(test_driver_error_names)
{
	/* Before the driver is loaded: the built-in table. */
	ck_assert_str_eq(driver_error_name(CUDA_ERROR_OUT_OF_MEMORY),
	    "CUDA_ERROR_OUT_OF_MEMORY");
	ck_assert_str_eq(driver_error_name((CUresult)987654),
	    "CUDA_ERROR_UNRECOGNIZED");
	/* The built-in table (cuerrors.h), what reports use. */
	ck_assert_str_eq(driver_error_name_builtin(
	    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
	    "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED");
	ck_assert_ptr_null(driver_error_name_builtin((CUresult)987654));
	load_fixture();
	ck_assert_str_eq(driver_error_name(CUDA_ERROR_NO_DEVICE),
	    "CUDA_ERROR_NO_DEVICE");
	ck_assert_uint_ge(fc_calls("cuGetErrorName"), 1);
}
END_TEST

/* ============================================================ contexts */

#define NTHREADS 16
static pthread_barrier_t barrier;

static void *
bind_thread(void *arg)
{
	intptr_t bad = 0;

	(void)arg;
	pthread_barrier_wait(&barrier);
	if (driver_bind(0) != CW_OK)
		bad = 1;
	else if (current_ctx() != driver_primary_ctx(0))
		bad = 2;
	return (void *)bad;
}

START_TEST(test_driver_retain_once_16_threads)
{
	pthread_t t[NTHREADS];
	void *ret;

	load_fixture();
	fc_reset_counters();
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, bind_thread,
		    NULL), 0);
	for (int i = 0; i < NTHREADS; i++) {
		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_int_eq((int)(intptr_t)ret, 0);
	}
	pthread_barrier_destroy(&barrier);
	ck_assert_ptr_nonnull(driver_primary_ctx(0));
	ck_assert_uint_eq(fc_calls("cuDevicePrimaryCtxRetain"), 1);
	ck_assert_uint_eq(fc_calls("cuInit"), 1);
	/* Never released by us. */
	ck_assert_uint_eq(fc_calls("cuDevicePrimaryCtxRelease_v2") +
	    fc_calls("cuDevicePrimaryCtxRelease"), 0);
	/* Every thread had to set it: none was current there. */
	ck_assert_uint_eq(fc_calls("cuCtxSetCurrent"), NTHREADS);
}
END_TEST

static void *
fresh_thread(void *arg)
{
	intptr_t bad = 0;

	(void)arg;
	if (current_ctx() != NULL)
		bad = 1;
	else if (driver_bind(0) != CW_OK)
		bad = 2;
	else if (current_ctx() != driver_primary_ctx(0))
		bad = 3;
	return (void *)bad;
}

START_TEST(test_driver_bind_new_thread)
{
	pthread_t t;
	void *ret;
	unsigned long sets;

	load_fixture();
	ck_assert_int_eq(driver_bind(0), CW_OK);
	ck_assert_ptr_eq(current_ctx(), driver_primary_ctx(0));
	/* Bound already: no cuCtxSetCurrent on the hot path. */
	sets = fc_calls("cuCtxSetCurrent");
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(driver_bind(0), CW_OK);
	ck_assert_uint_eq(fc_calls("cuCtxSetCurrent"), sets);
	ck_assert_int_eq(pthread_create(&t, NULL, fresh_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(t, &ret), 0);
	ck_assert_int_eq((int)(intptr_t)ret, 0);
	ck_assert_uint_eq(fc_calls("cuDevicePrimaryCtxRetain"), 1);
}
END_TEST

/* The program changes the current context behind our back. */
START_TEST(test_driver_program_switches_context)
{
	const driver_fns_t *f;
	CUcontext own = NULL, prev = (CUcontext)(uintptr_t)1;
	CUdevice dev;
	CUresult (*ctx_create)(CUcontext *, unsigned int, CUdevice);
	CUresult (*ctx_destroy)(CUcontext);

	load_fixture();
	f = driver_get();
	ck_assert_int_eq(driver_bind(0), CW_OK);
	ck_assert_int_eq(f->cuCtxSetCurrent(NULL), CUDA_SUCCESS);
	ck_assert_ptr_null(current_ctx());
	ck_assert_int_eq(driver_bind(0), CW_OK);
	ck_assert_ptr_eq(current_ctx(), driver_primary_ctx(0));

	/* A context of the program's own. */
	*(void **)&ctx_create = dlsym(driver_handle(), "cuCtxCreate_v2");
	*(void **)&ctx_destroy = dlsym(driver_handle(), "cuCtxDestroy_v2");
	ck_assert_ptr_nonnull((void *)ctx_create);
	ck_assert_int_eq(f->cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	ck_assert_int_eq(ctx_create(&own, 0, dev), CUDA_SUCCESS);
	ck_assert_ptr_eq(current_ctx(), own);
	ck_assert_int_eq(driver_bind(0), CW_OK);
	ck_assert_ptr_eq(current_ctx(), driver_primary_ctx(0));

	/* The shim's way: save, bind, restore. */
	ck_assert_int_eq(f->cuCtxSetCurrent(own), CUDA_SUCCESS);
	ck_assert_int_eq(driver_bind_save(0, &prev), CW_OK);
	ck_assert_ptr_eq(prev, own);
	ck_assert_ptr_eq(current_ctx(), driver_primary_ctx(0));
	driver_restore(prev);
	ck_assert_ptr_eq(current_ctx(), own);
	ck_assert_int_eq(ctx_destroy(own), CUDA_SUCCESS);
	ck_assert_uint_eq(fc_calls("cuDevicePrimaryCtxRetain"), 1);
}
END_TEST

START_TEST(test_driver_bad_ordinal)
{
	load_fixture();
	ck_assert_int_eq(driver_device_count(), 1);
	ck_assert_int_eq(driver_bind(1), CW_ENODEV);
	ck_assert_int_eq(lasterr_get()->status, CW_ENODEV);
	ck_assert_int_eq(lasterr_get()->cuda_error, CUDA_ERROR_INVALID_DEVICE);
	ck_assert_int_eq(driver_bind(-1), CW_ENODEV);
	ck_assert_int_eq(driver_bind(DRIVER_MAX_DEVICES), CW_ENODEV);
	ck_assert_int_eq(driver_bind(1 << 20), CW_ENODEV);
	ck_assert_ptr_null(driver_primary_ctx(1));
	ck_assert_ptr_null(driver_primary_ctx(-1));
	ck_assert_uint_eq(fc_calls("cuDevicePrimaryCtxRetain"), 0);
	/* Device 0 still works. */
	ck_assert_int_eq(driver_bind(0), CW_OK);
}
END_TEST

START_TEST(test_driver_no_device)
{
	int v = -1;

	setenv("FAKECUDA_NO_DEVICE", "1", 1);
	lasterr_clear();
	ck_assert_int_eq(driver_bind(0), CW_ENODEV);
	ck_assert_int_eq(lasterr_get()->status, CW_ENODEV);
	ck_assert_int_eq(lasterr_get()->cuda_error, CUDA_ERROR_NO_DEVICE);
	ck_assert_str_eq(lasterr_get()->cuda_error_name,
	    "CUDA_ERROR_NO_DEVICE");
	ck_assert_int_eq(driver_device_count(), 0);
	ck_assert(driver_attr(0, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
	    &v));
	ck_assert_int_eq(v, -1);
	ck_assert_ptr_null(driver_primary_ctx(0));
	load_fixture();
	/* cuInit's answer is kept: asked once. */
	ck_assert_int_eq(driver_bind(0), CW_ENODEV);
	ck_assert_uint_eq(fc_calls("cuInit"), 1);
	{
		uintptr_t a = 1;

		ck_assert_int_eq(direct_alloc(KIND_DEVICE, 0, 4096, &a),
		    CW_ENODEV);
		ck_assert_uint_eq(a, 0);
	}
}
END_TEST

START_TEST(test_driver_n_devices)
{
	CUcontext c[4];

	setenv("FAKECUDA_DEVICES", "4", 1);
	ck_assert_int_eq(driver_device_count(), 4);
	load_fixture();
	for (int d = 0; d < 4; d++) {
		ck_assert_int_eq(driver_bind(d), CW_OK);
		c[d] = driver_primary_ctx(d);
		ck_assert_ptr_nonnull(c[d]);
		ck_assert_ptr_eq(current_ctx(), c[d]);
		for (int e = 0; e < d; e++)
			ck_assert_ptr_ne(c[d], c[e]);
	}
	ck_assert_int_eq(driver_bind(4), CW_ENODEV);
	ck_assert_int_eq(driver_bind(1), CW_OK);
	ck_assert_ptr_eq(current_ctx(), c[1]);
	ck_assert_uint_eq(fc_calls("cuDevicePrimaryCtxRetain"), 4);
	/* Allocations land on the device asked for. */
	for (int d = 0; d < 4; d++) {
		uintptr_t a;
		CUdevice dev = -1;
		int ordinal = -1;

		ck_assert_int_eq(direct_alloc(KIND_DEVICE, d, 1 << 20, &a),
		    CW_OK);
		ck_assert_int_eq(driver_get()->cuPointerGetAttribute(&ordinal,
		    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)a),
		    CUDA_SUCCESS);
		ck_assert_int_eq(ordinal, d);
		ck_assert_int_eq(driver_get()->cuCtxGetDevice(&dev),
		    CUDA_SUCCESS);
		/* The context bound before (device 1's, bound above) is
		 * put back, in the library as in the shim. */
		ck_assert_int_eq(dev, 1);
		ck_assert_int_eq(direct_free(KIND_DEVICE, d, a, 1 << 20),
		    CW_OK);
	}
}
END_TEST

/* ============================================================ attributes */

START_TEST(test_driver_attr_cache)
{
	int v = -1, w = -1;
	unsigned long n;

	load_fixture();
	ck_assert(!driver_attr(0,
	    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, &v));
	ck_assert_int_eq(v, 1);
	n = fc_calls("cuDeviceGetAttribute");
	ck_assert_uint_eq(n, 1);
	for (int i = 0; i < 10; i++) {
		ck_assert(!driver_attr(0,
		    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, &w));
		ck_assert_int_eq(w, v);
	}
	ck_assert_uint_eq(fc_calls("cuDeviceGetAttribute"), n);
	/* A different attribute is a different entry. */
	ck_assert(!driver_attr(0, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
	    &w));
	ck_assert_int_gt(w, 0);
	ck_assert_uint_eq(fc_calls("cuDeviceGetAttribute"), n + 1);
	/* The cache agrees with the driver. */
	{
		int direct = -1;

		ck_assert_int_eq(driver_get()->cuDeviceGetAttribute(&direct,
		    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0),
		    CUDA_SUCCESS);
		ck_assert_int_eq(direct, w);
	}
	/* Bad attribute, bad device: errors, no driver call. */
	n = fc_calls("cuDeviceGetAttribute");
	ck_assert(driver_attr(0, (CUdevice_attribute)0, &w));
	ck_assert_int_eq(lasterr_get()->status, CW_EINVAL);
	ck_assert(driver_attr(0, CU_DEVICE_ATTRIBUTE_MAX, &w));
	ck_assert(driver_attr(3, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
	    &w));
	ck_assert_int_eq(lasterr_get()->status, CW_ENODEV);
	ck_assert_uint_eq(fc_calls("cuDeviceGetAttribute"), n);
	/* Attributes need no context. */
	ck_assert_ptr_null(driver_primary_ctx(0));
}
END_TEST

START_TEST(test_driver_no_concurrent_managed)
{
	int v = -1;

	setenv("FAKECUDA_NO_CONCURRENT_MANAGED", "1", 1);
	ck_assert(!driver_attr(0,
	    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, &v));
	ck_assert_int_eq(v, 0);
	ck_assert(!driver_attr(0,
	    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, &v));
	ck_assert_int_eq(v, 0);
	/* Managed memory can still be allocated. */
	{
		uintptr_t a;

		ck_assert_int_eq(direct_alloc(KIND_MANAGED, 0, 4096, &a),
		    CW_OK);
		ck_assert_int_eq(direct_free(KIND_MANAGED, 0, a, 4096), CW_OK);
	}
}
END_TEST

/* ============================================================ direct */

START_TEST(test_direct_each_kind)
{
	static const kind_t kinds[] = { KIND_DEVICE, KIND_MANAGED,
		KIND_PINNED };
	struct fakecuda_counters c0, c1;
	uintptr_t a[3];

	load_fixture();
	fc_counters(&c0);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(direct_alloc(kinds[i], 0, 3 << 20, &a[i]),
		    CW_OK);
		ck_assert_uint_ne(a[i], 0);
	}
	fc_counters(&c1);
	ck_assert_uint_eq(c1.mem_alloc - c0.mem_alloc, 1);
	ck_assert_uint_eq(c1.mem_alloc_managed - c0.mem_alloc_managed, 1);
	ck_assert_uint_eq(c1.mem_host_alloc - c0.mem_host_alloc, 1);
	ck_assert_uint_eq(c1.live_device, c0.live_device + 1);
	ck_assert_uint_eq(c1.live_managed, c0.live_managed + 1);
	ck_assert_uint_eq(c1.live_pinned, c0.live_pinned + 1);
	ck_assert_uint_eq(c1.live_bytes - c0.live_bytes, 3ull * (3 << 20));
	/* Managed and pinned are host-addressable. */
	memset((void *)a[1], 0xab, 3 << 20);
	memset((void *)a[2], 0xcd, 3 << 20);
	ck_assert_ptr_nonnull(fc_host_alias((CUdeviceptr)a[0], 3 << 20));
	/* Pinned memory is portable and mapped (DEVICEMAP). */
	{
		unsigned int flags = 0;
		CUresult (*get_flags)(unsigned int *, void *);

		*(void **)&get_flags = dlsym(driver_handle(),
		    "cuMemHostGetFlags");
		ck_assert_int_eq(driver_bind(0), CW_OK);
		ck_assert_int_eq(get_flags(&flags, (void *)a[2]), CUDA_SUCCESS);
		ck_assert_uint_ne(flags & CU_MEMHOSTALLOC_PORTABLE, 0);
		ck_assert_uint_ne(flags & CU_MEMHOSTALLOC_DEVICEMAP, 0);
	}
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(direct_free(kinds[i], 0, a[i], 3 << 20),
		    CW_OK);
	fc_counters(&c1);
	ck_assert_uint_eq(c1.live_allocations, c0.live_allocations);
	ck_assert_uint_eq(c1.mem_free - c0.mem_free, 2);
	ck_assert_uint_eq(c1.mem_free_host - c0.mem_free_host, 1);
	ck_assert_uint_eq(ledger_failures(), 0);
}
END_TEST

START_TEST(test_direct_bad_args)
{
	uintptr_t a = 7;
	unsigned long n;

	load_fixture();
	ck_assert_int_eq(driver_bind(0), CW_OK);
	n = fc_calls("cuMemAlloc_v2") + fc_calls("cuMemFree_v2");
	ck_assert_int_eq(direct_alloc(KIND_DEVICE, 0, 0, &a), CW_EINVAL);
	ck_assert_uint_eq(a, 0);
	ck_assert_int_eq(direct_alloc(KIND_DEVICE, 0, 16, NULL), CW_EINVAL);
	ck_assert_int_eq(direct_alloc(KIND_VMM, 0, 16, &a), CW_EINVAL);
	ck_assert_int_eq(direct_alloc(KIND_COUNT, 0, 16, &a), CW_EINVAL);
	ck_assert_int_eq(direct_free(KIND_ASYNC, 0, 0x1000, 16), CW_EINVAL);
	ck_assert_int_eq(direct_free(KIND_DEVICE, 0, 0, 16), CW_EINVAL);
	ck_assert_int_eq(direct_alloc(KIND_DEVICE, 5, 16, &a), CW_ENODEV);
	ck_assert_uint_eq(fc_calls("cuMemAlloc_v2") + fc_calls("cuMemFree_v2"),
	    n);
}
END_TEST

START_TEST(test_direct_alloc_failure)
{
	static const kind_t kinds[] = { KIND_DEVICE, KIND_MANAGED,
		KIND_PINNED };

	load_fixture();
	for (int i = 0; i < 3; i++) {
		uintptr_t a = 7;
		size_t size = ((size_t)5 << 20) + (size_t)i;
		const cw_error_t *e;

		ck_assert_int_eq(fc_inject("fail_alloc", 1), 0);
		lasterr_clear();
		ck_assert_int_eq(direct_alloc(kinds[i], 0, size, &a),
		    CW_ENOMEM);
		ck_assert_uint_eq(a, 0);
		e = cw_last_error();   /* what a library user sees */
		ck_assert_ptr_eq(e, lasterr_get());
		ck_assert_int_eq(e->status, CW_ENOMEM);
		ck_assert_uint_eq(e->requested, size);
		ck_assert_int_eq(e->cuda_error, CUDA_ERROR_OUT_OF_MEMORY);
		ck_assert_str_eq(e->cuda_error_name,
		    "CUDA_ERROR_OUT_OF_MEMORY");
		ck_assert_ptr_nonnull(strstr(e->message, "bytes"));
		/* The next one succeeds. */
		ck_assert_int_eq(direct_alloc(kinds[i], 0, size, &a), CW_OK);
		ck_assert_int_eq(direct_free(kinds[i], 0, a, size), CW_OK);
	}
	/* An absurd size fails (CW_ENOMEM or CW_ECUDA, as the driver
	 * says), the size still reported. */
	{
		uintptr_t a;

		ck_assert_int_lt(direct_alloc(KIND_DEVICE, 0, (size_t)1 << 40, &a), 0);
		ck_assert_uint_eq(lasterr_get()->requested, (size_t)1 << 40);
		ck_assert_int_ne(lasterr_get()->cuda_error, 0);
	}
}
END_TEST

START_TEST(test_direct_free_failure_ledger)
{
	uintptr_t a, b;
	const cw_error_t *e;

	load_fixture();
	ledger_reset();
	ck_assert_int_eq(direct_alloc(KIND_DEVICE, 0, 1 << 20, &a), CW_OK);
	ck_assert_int_eq(direct_alloc(KIND_PINNED, 0, 1 << 16, &b), CW_OK);
	ck_assert_int_eq(fc_inject("fail_free", 1), 0);
	ck_assert_int_eq(direct_free(KIND_DEVICE, 0, a, 1 << 20), CW_ECUDA);
	e = cw_last_error();
	ck_assert_int_eq(e->status, CW_ECUDA);
	ck_assert_int_ne(e->cuda_error, 0);
	ck_assert_ptr_nonnull(e->cuda_error_name);
	ck_assert_uint_eq(e->address, a);
	ck_assert(ledger_contains(a));
	ck_assert_uint_eq(ledger_failures(), 1);
	ck_assert_uint_eq(ledger_size(), 1);
	ck_assert_int_eq(fc_inject("fail_free", 1), 0);
	ck_assert_int_eq(direct_free(KIND_PINNED, 0, b, 1 << 16), CW_ECUDA);
	ck_assert(ledger_contains(b));
	ck_assert_uint_eq(ledger_failures(), 2);
	/* A successful free adds nothing. */
	{
		uintptr_t c;

		ck_assert_int_eq(direct_alloc(KIND_MANAGED, 0, 4096, &c),
		    CW_OK);
		ck_assert_int_eq(direct_free(KIND_MANAGED, 0, c, 4096), CW_OK);
		ck_assert(!ledger_contains(c));
		ck_assert_uint_eq(ledger_failures(), 2);
	}
}
END_TEST

/* The calling thread runs in a context of its own, or in none: after a
 * direct allocation or free it finds its context as it was, in the
 * library as in the shim (a thread working on one device must never find
 * itself on another). */
START_TEST(test_direct_context_policy)
{
	const driver_fns_t *f;
	CUcontext own = NULL;
	CUdevice dev;
	uintptr_t a;
	CUresult (*ctx_create)(CUcontext *, unsigned int, CUdevice);

	load_fixture();
	f = driver_get();
	ck_assert_int_eq(driver_device_count(), 1);   /* cuInit */
	*(void **)&ctx_create = dlsym(driver_handle(), "cuCtxCreate_v2");
	ck_assert_int_eq(f->cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	ck_assert_int_eq(ctx_create(&own, 0, dev), CUDA_SUCCESS);
	ck_assert_ptr_eq(current_ctx(), own);
	ck_assert_int_eq(direct_alloc(KIND_DEVICE, 0, 1 << 20, &a), CW_OK);
	ck_assert_ptr_eq(current_ctx(), own);
	ck_assert_int_eq(direct_free(KIND_DEVICE, 0, a, 1 << 20), CW_OK);
	ck_assert_ptr_eq(current_ctx(), own);
	/* No context at all before: none after. */
	ck_assert_int_eq(f->cuCtxSetCurrent(NULL), CUDA_SUCCESS);
	ck_assert_ptr_null(current_ctx());
	ck_assert_int_eq(direct_alloc(KIND_PINNED, 0, 4096, &a), CW_OK);
	ck_assert_ptr_null(current_ctx());
	ck_assert_int_eq(direct_free(KIND_PINNED, 0, a, 4096), CW_OK);
	ck_assert_ptr_null(current_ctx());
}
END_TEST

/* ============================================================ fork */

START_TEST(test_driver_fork_child_no_cuda)
{
	uintptr_t a;
	pid_t pid;
	int status;

	load_fixture();
	ck_assert_int_eq(direct_alloc(KIND_DEVICE, 0, 1 << 20, &a), CW_OK);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct fakecuda_counters c0, c1;
		uintptr_t b = 1;
		int v;

		fc_counters(&c0);
		driver_postfork_child();
		if (driver_primary_ctx(0) != NULL)
			_exit(10);
		if (driver_bind(0) != CW_ENODEV)
			_exit(11);
		if (direct_alloc(KIND_DEVICE, 0, 4096, &b) != CW_ENODEV ||
		    b != 0)
			_exit(12);
		if (direct_free(KIND_DEVICE, 0, a, 1 << 20) != CW_ENODEV)
			_exit(13);
		if (ledger_failures() != 0)
			_exit(14);
		if (driver_device_count() != 0)
			_exit(15);
		if (!driver_attr(0, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
		    &v))
			_exit(16);
		(void)driver_error_name(CUDA_ERROR_INVALID_VALUE);
		driver_restore(NULL);
		/* The table stays, for the shim's pass-through. */
		if (driver_get() == NULL)
			_exit(18);
		fc_counters(&c1);
		/* Not a single driver entry point was called. */
		if (c1.total_calls != c0.total_calls)
			_exit(17);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* The parent is untouched. */
	ck_assert_int_eq(direct_free(KIND_DEVICE, 0, a, 1 << 20), CW_OK);
}
END_TEST

START_TEST(test_driver_reset)
{
	load_fixture();
	ck_assert_int_eq(driver_bind(0), CW_OK);
	driver_reset();
	ck_assert_ptr_null(driver_primary_ctx(0));
	ck_assert_int_eq(fc_inject("no_device", 1), 0);
	ck_assert_int_eq(driver_bind(0), CW_ENODEV);
	ck_assert_int_eq(lasterr_get()->cuda_error, CUDA_ERROR_NO_DEVICE);
	ck_assert_int_eq(fc_inject("no_device", 0), 0);
	driver_reset();
	ck_assert_int_eq(driver_bind(0), CW_OK);
	ck_assert_uint_eq(fc_calls("cuDevicePrimaryCtxRetain"), 2);
}
END_TEST

static Suite *
make_driver_suite(void)
{
	Suite *s = suite_create("driver");
	TCase *tc = tcase_create("driver");

	tcase_add_test(tc, test_driver_load);
	tcase_add_test(tc, test_driver_error_names);
	tcase_add_test(tc, test_driver_retain_once_16_threads);
	tcase_add_test(tc, test_driver_bind_new_thread);
	tcase_add_test(tc, test_driver_program_switches_context);
	tcase_add_test(tc, test_driver_bad_ordinal);
	tcase_add_test(tc, test_driver_no_device);
	tcase_add_test(tc, test_driver_n_devices);
	tcase_add_test(tc, test_driver_attr_cache);
	tcase_add_test(tc, test_driver_no_concurrent_managed);
	tcase_add_test(tc, test_direct_each_kind);
	tcase_add_test(tc, test_direct_bad_args);
	tcase_add_test(tc, test_direct_alloc_failure);
	tcase_add_test(tc, test_direct_free_failure_ledger);
	tcase_add_test(tc, test_direct_context_policy);
	tcase_add_test(tc, test_driver_fork_child_no_cuda);
	tcase_add_test(tc, test_driver_reset);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_driver_suite)
