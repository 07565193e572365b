/* check_interpose.c: the simulated driver keeps pointer identity under
 * interposition.
 *
 * This program defines and exports (-rdynamic) its own cuMemAlloc_v2, as a
 * preloaded shim does, then opens libcuda.so.1 the way cudart does. The
 * driver's cuGetProcAddress_v2 must still hand out the driver's own
 * cuMemAlloc_v2 — the address dlsym(handle, "cuMemAlloc_v2") gives — never
 * the interposer's, so a shim's reverse map (dlsym of versioned names) finds
 * every pointer the driver returns. The fixture gets this from
 * -Bsymbolic-functions; without it the driver's table would bind to us.
 * Exit: 0 pass, 1 fail, 99 harness error.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

/* The interposer. Never called by a correct driver. */
CUresult CUDAAPI
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	(void)dptr;
	(void)bytesize;
	return CUDA_ERROR_UNKNOWN;
}

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t,
    CUdriverProcAddressQueryResult *);

int
main(void)
{
	CUresult (*init)(unsigned);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*set)(CUcontext);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*fr)(CUdeviceptr);
	CUdriverProcAddressQueryResult st;
	void *h, *p = NULL, *d;
	CUcontext ctx;
	CUdeviceptr m = 0;
	gpa_t gpa;
	int failed = 0;

	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "check_interpose: dlopen: %s\n", dlerror());
		return 99;
	}
	*(void **)&gpa = dlsym(h, "cuGetProcAddress_v2");
	*(void **)&init = dlsym(h, "cuInit");
	*(void **)&retain = dlsym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&set = dlsym(h, "cuCtxSetCurrent");
	*(void **)&fr = dlsym(h, "cuMemFree_v2");
	d = dlsym(h, "cuMemAlloc_v2");
	if (!gpa || !init || !retain || !set || !fr || !d)
		return 99;
	if (gpa("cuMemAlloc", &p, 3020, 0, &st) != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS)
		return 99;
	if (p != d) {
		fprintf(stderr, "FAIL: cuGetProcAddress answer is not dlsym's cuMemAlloc_v2\n");
		failed = 1;
	}
	if (p == (void *)cuMemAlloc_v2 || d == (void *)cuMemAlloc_v2) {
		fprintf(stderr, "FAIL: the driver handed out the interposer\n");
		failed = 1;
	}
	if (init(0) || retain(&ctx, 0) || set(ctx))
		return 99;
	*(void **)&alloc = p;
	if (alloc(&m, 4096) != CUDA_SUCCESS || fr(m) != CUDA_SUCCESS) {
		fprintf(stderr, "FAIL: calling the answered pointer did not reach the driver\n");
		failed = 1;
	}
	if (!failed)
		printf("check_interpose: cuGetProcAddress answers the driver's own export\n");
	return failed;
}
