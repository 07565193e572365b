/*
 * gpu_driver.c -- the driver layer (lib/driver.c, lib/direct.c) against the
 * real driver, run by run-gpu-tests.sh (case "driver-layer").  Prints one
 * line per check; exit 0 when all hold, 1 otherwise.  Needs a GPU: the
 * script runs it only after it has seen one.
 */
#include "preamble.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "direct.h"
#include "driver.h"
#include "lasterr.h"
#include "ledger.h"

static int fails;
#define CHECK(c) do { if (!(c)) { printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #c); fails++; } else printf("ok   %s\n", #c); } while (0)

static void *
thr(void *a)
{
	CUcontext cur = NULL;
	(void)a;
	if (driver_bind(0) != CW_OK) return (void *)1;
	driver_get()->cuCtxGetCurrent(&cur);
	return cur == driver_primary_ctx(0) ? NULL : (void *)2;
}

int
main(void)
{
	const driver_fns_t *f = driver_get();
	CUcontext cur = NULL, own = NULL, prev;
	CUdevice dev;
	uintptr_t a[3];
	int v = -1;
	kind_t k[3] = { KIND_DEVICE, KIND_MANAGED, KIND_PINNED };
	pthread_t t[16];
	void *r;

	CHECK(f != NULL);
	CHECK(driver_device_count() >= 1);
	CHECK(f->cuMemAdvise_v1 != NULL && f->cuMemPrefetchAsync_v1 != NULL && f->cuGetProcAddress_v2 != NULL);
	CHECK(driver_bind(0) == CW_OK);
	f->cuCtxGetCurrent(&cur);
	CHECK(cur == driver_primary_ctx(0));
	for (int i = 0; i < 16; i++) pthread_create(&t[i], NULL, thr, NULL);
	for (int i = 0; i < 16; i++) { pthread_join(t[i], &r); CHECK(r == NULL); }
	CHECK(!driver_attr(0, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, &v));
	printf("     CONCURRENT_MANAGED_ACCESS = %d\n", v);
	CHECK(strcmp(driver_error_name(CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY") == 0);
	for (int i = 0; i < 3; i++) CHECK(direct_alloc(k[i], 0, 3 << 20, &a[i]) == CW_OK);
	memset((void *)a[1], 1, 3 << 20);
	memset((void *)a[2], 2, 3 << 20);
	CHECK(f->cuMemsetD8_v2((CUdeviceptr)a[0], 7, 3 << 20) == CUDA_SUCCESS);
	{
		CUdeviceptr dp = 0;
		CHECK(f->cuMemHostGetDevicePointer_v2(&dp, (void *)a[2], 0) == CUDA_SUCCESS && dp != 0);
	}
	for (int i = 0; i < 3; i++) CHECK(direct_free(k[i], 0, a[i], 3 << 20) == CW_OK);
	/* A double free: the driver fails, CW_ECUDA, the ledger has it. */
	CHECK(direct_alloc(KIND_DEVICE, 0, 1 << 20, &a[0]) == CW_OK);
	CHECK(direct_free(KIND_DEVICE, 0, a[0], 1 << 20) == CW_OK);
	CHECK(direct_free(KIND_DEVICE, 0, a[0], 1 << 20) == CW_ECUDA);
	printf("     %s / %s\n", cw_last_error()->message, cw_last_error()->cuda_error_name);
	CHECK(ledger_contains(a[0]));
	/* Out of memory: 1 TiB. */
	CHECK(direct_alloc(KIND_DEVICE, 0, (size_t)1 << 40, &a[0]) == CW_ENOMEM);
	CHECK(cw_last_error()->requested == (size_t)1 << 40);
	/* A context of the program's own. */
	f->cuDeviceGet(&dev, 0);
	{
		CUresult (*create)(CUcontext *, CUctxCreateParams *, unsigned int, CUdevice);
		*(void **)&create = driver_real_dlsym(driver_handle(), "cuCtxCreate_v4");
		CHECK(create && create(&own, NULL, 0, dev) == CUDA_SUCCESS);
	}
	f->cuCtxGetCurrent(&cur);
	CHECK(cur == own);
	CHECK(driver_bind_save(0, &prev) == CW_OK && prev == own);
	f->cuCtxGetCurrent(&cur);
	CHECK(cur == driver_primary_ctx(0));
	driver_restore(prev);
	f->cuCtxGetCurrent(&cur);
	CHECK(cur == own);
	CHECK(driver_bind(0) == CW_OK);
	f->cuCtxGetCurrent(&cur);
	CHECK(cur == driver_primary_ctx(0));
	CHECK(driver_bind(1) == CW_ENODEV || driver_device_count() > 1);
	printf("gpu_driver: %d failed\n", fails);
	return fails != 0;
}
