/*
 * check_track.c -- the shim's engine (shim/) called directly, with
 * the simulated driver's own entry points as `real`: what it records,
 * how it classifies frees, context teardown, the VMM namespaces, and that
 * the driver's answer always comes back unchanged.  (tests/preload/ runs
 * the same engine behind the real wrappers, in whole processes.)
 */
#include "preamble.h"

#include <stdio.h>
#include <string.h>

#include "../fakecuda/fakecuda.h"
#include "ledger.h"
#include "driver.h"
#include "log.h"
#include "registry.h"
#include "stats.h"
#include "track.h"
#include "unit.h"
#include "violation.h"

#define R(name) driver_sym(#name)

static CUcontext pctx;
static CUdevice dev;

static void
sink(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

static void
setup(void)
{
	CUresult (*init)(unsigned int) = (CUresult (*)(unsigned int))R(cuInit);
	CUresult (*get)(CUdevice *, int) =
	    (CUresult (*)(CUdevice *, int))R(cuDeviceGet);
	CUresult (*set)(CUcontext) = (CUresult (*)(CUcontext))R(cuCtxSetCurrent);

	if (init == NULL) {
		fprintf(stderr, "no libcuda.so.1 (LD_LIBRARY_PATH)\n");
		exit(99);
	}
	log_set_output(sink, NULL);
	track_init();
	ck_assert_int_eq(init(0), CUDA_SUCCESS);
	ck_assert_int_eq(get(&dev, 0), CUDA_SUCCESS);
	ck_assert_int_eq(track_primary_retain(R(cuDevicePrimaryCtxRetain),
	    "cuDevicePrimaryCtxRetain", &pctx, dev), CUDA_SUCCESS);
	ck_assert_int_eq(set(pctx), CUDA_SUCCESS);
}

static CUdeviceptr
alloc(size_t n)
{
	CUdeviceptr p = 0;

	ck_assert_int_eq(track_mem_alloc(R(cuMemAlloc_v2), "cuMemAlloc_v2", &p,
	    n), CUDA_SUCCESS);
	return p;
}

static CUresult
mem_free(CUdeviceptr p)
{
	return track_mem_free(R(cuMemFree_v2), "cuMemFree_v2", p);
}

START_TEST(test_record)
{
	reg_handle_t h;
	reg_rec_t rec;
	uint64_t a0 = stats_coverage.allocations;
	CUdeviceptr p = alloc(3000);

	ck_assert(!registry_find(NS_ADDR, p, &h, &rec));
	ck_assert_int_eq(rec.kind, KIND_DEVICE);
	ck_assert_uint_eq(rec.size, 3000);
	ck_assert_int_eq(rec.device, 0);
	ck_assert_str_eq(rec.api, "cuMemAlloc_v2");
	ck_assert_uint_eq(rec.ctx, (uintptr_t)pctx);
	ck_assert_uint_ne(rec.alloc_stack, 0);
	ck_assert_uint_ne(rec.owner, 0);
	ck_assert_uint_eq(stats_coverage.allocations, a0 + 1);
	ck_assert_int_eq(mem_free(p), CUDA_SUCCESS);
	ck_assert(registry_find(NS_ADDR, p, &h, &rec));
	ck_assert(!registry_tomb_find(NS_ADDR, p, &rec));
	ck_assert_uint_ne(rec.free_stack, 0);
}
END_TEST

START_TEST(test_classify)
{
	uint64_t u0 = stats_coverage.untracked_frees;
	CUdeviceptr p = alloc(4096), q = alloc(8192);

	/* double */
	ck_assert_int_eq(mem_free(p), CUDA_SUCCESS);
	ck_assert_int_eq(mem_free(p), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(violation_count_type(V_DOUBLE_FREE), 1);
	/* interior */
	ck_assert_int_eq(mem_free(q + 64), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(violation_count_type(V_INTERIOR_FREE), 1);
	/* mismatched, then right */
	ck_assert_int_eq(track_mem_free_host(R(cuMemFreeHost), "cuMemFreeHost",
	    (void *)(uintptr_t)q), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(violation_count_type(V_MISMATCHED_FREE), 1);
	ck_assert_int_eq(mem_free(q), CUDA_SUCCESS);
	/* invalid */
	ck_assert_int_eq(mem_free(0x1000), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(violation_count_type(V_INVALID_FREE), 1);
	/* untracked: made past the engine */
	CUdeviceptr u;
	CUresult (*real)(CUdeviceptr *, size_t) =
	    (CUresult (*)(CUdeviceptr *, size_t))R(cuMemAlloc_v2);
	ck_assert_int_eq(real(&u, 512), CUDA_SUCCESS);
	ck_assert_int_eq(mem_free(u), CUDA_SUCCESS);
	ck_assert_uint_eq(stats_coverage.untracked_frees, u0 + 1);
	/* NULL is no free */
	ck_assert_int_eq(mem_free(0), CUDA_SUCCESS);
	ck_assert_uint_eq(violation_count(), 4);
}
END_TEST

START_TEST(test_failed_free)
{
	int (*inject)(const char *, long) =
	    (int (*)(const char *, long))R(fakecuda_inject);
	reg_handle_t h;
	reg_rec_t rec;
	CUdeviceptr p = alloc(5000);

	ck_assert_ptr_nonnull(inject);
	inject("fail_free", 1);
	ck_assert_int_eq(mem_free(p), CUDA_ERROR_ILLEGAL_ADDRESS);
	ck_assert_uint_eq(violation_count_type(V_FAILED_FREE), 1);
	ck_assert(ledger_contains(p));
	ck_assert(!registry_find(NS_ADDR, p, &h, &rec)); /* still live */
}
END_TEST

START_TEST(test_teardown)
{
	CUresult (*create)(CUcontext *, unsigned int, CUdevice) =
	    (CUresult (*)(CUcontext *, unsigned int, CUdevice))R(cuCtxCreate_v2);
	CUcontext c;
	reg_handle_t h;
	reg_rec_t rec;
	CUdeviceptr a, m;
	void *hp;
	uint64_t t0 = stats_coverage.teardown_frees;

	ck_assert_int_eq(create(&c, 0, dev), CUDA_SUCCESS);
	a = alloc(100);
	ck_assert_int_eq(track_mem_alloc_managed(R(cuMemAllocManaged),
	    "cuMemAllocManaged", &m, 200, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
	ck_assert_int_eq(track_mem_host_alloc(R(cuMemHostAlloc),
	    "cuMemHostAlloc", &hp, 300, 0), CUDA_SUCCESS);
	CUdeviceptr as;
	ck_assert_int_eq(track_mem_alloc_async(R(cuMemAllocAsync),
	    "cuMemAllocAsync", &as, 400, NULL), CUDA_SUCCESS);
	ck_assert_int_eq(track_ctx_destroy(R(cuCtxDestroy_v2), "cuCtxDestroy_v2",
	    c), CUDA_SUCCESS);
	ck_assert_uint_eq(stats_coverage.teardown_frees, t0 + 3);
	ck_assert(registry_find(NS_ADDR, a, &h, &rec));
	ck_assert(registry_find(NS_ADDR, m, &h, &rec));
	ck_assert(registry_find(NS_ADDR, (uintptr_t)hp, &h, &rec));
	ck_assert(!registry_find(NS_ADDR, as, &h, &rec)); /* survives */
	ck_assert_int_eq(rec.device, 0);
}
END_TEST

START_TEST(test_vmm)
{
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle mh;
	CUdeviceptr va;
	reg_handle_t h;
	reg_rec_t rec;
	size_t g = 2 << 20;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	ck_assert_int_eq(track_mem_create(R(cuMemCreate), "cuMemCreate", &mh, g,
	    &prop, 0), CUDA_SUCCESS);
	ck_assert_int_eq(track_mem_address_reserve(R(cuMemAddressReserve),
	    "cuMemAddressReserve", &va, 2 * g, 0, 0, 0), CUDA_SUCCESS);
	ck_assert_int_eq(track_mem_map(R(cuMemMap), "cuMemMap", va, g, 0, mh,
	    0), CUDA_SUCCESS);
	ck_assert_int_eq(track_mem_map(R(cuMemMap), "cuMemMap", va + g, g, 0,
	    mh, 0), CUDA_SUCCESS);
	ck_assert(!registry_find(NS_VMM, mh, &h, &rec));
	ck_assert_int_eq(rec.kind, KIND_VMM);
	ck_assert(!registry_find(NS_MAP, va + g, &h, &rec));
	ck_assert_uint_eq(rec.aux, mh);
	/* release while mapped: legal; the memory lives on, and so does the
	 * record (a vmm leak if never unmapped), marked released */
	ck_assert_int_eq(track_mem_release(R(cuMemRelease), "cuMemRelease", mh),
	    CUDA_SUCCESS);
	ck_assert(!registry_find(NS_VMM, mh, &h, &rec));
	ck_assert(rec.flags & REC_F_VMM_RELEASED);
	/* the reservation cannot go while mapped: refused, nothing changes,
	 * no violation (neither a double free nor a failed one) */
	ck_assert_int_eq(track_mem_address_free(R(cuMemAddressFree),
	    "cuMemAddressFree", va, 2 * g), CUDA_ERROR_INVALID_VALUE);
	ck_assert(!registry_find(NS_VA, va, &h, &rec));
	ck_assert_uint_eq(violation_count(), 0);
	/* the driver failing otherwise (found by the fault matrix's pairs:
	 * cuMemUnmap and cuMemAddressFree both failing) is a failed free of
	 * the live reservation, not "still mapped" */
	int (*inject_call)(const char *, const char *, int) =
	    (int (*)(const char *, const char *, int))R(fakecuda_inject_call);
	ck_assert_ptr_nonnull(inject_call);
	ck_assert_int_eq(inject_call("cuMemAddressFree", "1",
	    CUDA_ERROR_UNKNOWN), 0);
	ck_assert_int_eq(track_mem_address_free(R(cuMemAddressFree),
	    "cuMemAddressFree", va, 2 * g), CUDA_ERROR_UNKNOWN);
	ck_assert(!registry_find(NS_VA, va, &h, &rec));
	ck_assert_uint_eq(violation_count_type(V_FAILED_FREE), 1);
	ck_assert(ledger_contains(va));
	ck_assert_uint_eq(violation_count(), 1);
	/* one unmap of both mappings; the released handle goes with them */
	ck_assert_int_eq(track_mem_unmap(R(cuMemUnmap), "cuMemUnmap", va, 2 * g),
	    CUDA_SUCCESS);
	ck_assert(registry_find(NS_MAP, va, &h, &rec));
	ck_assert(registry_find(NS_MAP, va + g, &h, &rec));
	ck_assert(registry_find(NS_VMM, mh, &h, &rec));
	ck_assert_int_eq(track_mem_address_free(R(cuMemAddressFree),
	    "cuMemAddressFree", va, 2 * g), CUDA_SUCCESS);
	ck_assert(registry_find(NS_VA, va, &h, &rec));
	ck_assert_uint_eq(violation_count(), 1);
}
END_TEST

START_TEST(test_out_params)
{
	size_t total = 0;

	/* NULL out-parameters are the driver's business. */
	ck_assert_int_eq(track_mem_get_info(R(cuMemGetInfo_v2),
	    "cuMemGetInfo_v2", NULL, &total), CUDA_SUCCESS);
	ck_assert_uint_gt(total, 0);
	ck_assert_int_eq(track_mem_alloc(R(cuMemAlloc_v2), "cuMemAlloc_v2",
	    NULL, 16), CUDA_ERROR_INVALID_VALUE);
	CUdeviceptr p;
	ck_assert_int_eq(track_mem_alloc(R(cuMemAlloc_v2), "cuMemAlloc_v2", &p,
	    0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(registry_live_count(), 0);
}
END_TEST

static Suite *
make_track_suite(void)
{
	Suite *s = suite_create("track");
	TCase *tc = tcase_create("engine");

	/* each test in its own process: fresh registry and counters */
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_record);
	tcase_add_test(tc, test_classify);
	tcase_add_test(tc, test_failed_free);
	tcase_add_test(tc, test_teardown);
	tcase_add_test(tc, test_vmm);
	tcase_add_test(tc, test_out_params);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_track_suite)
