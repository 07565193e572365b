/*
 * tp_oom.c -- an allocation the driver refuses for want of memory
 * (check_oom.sh: the OOM report).  Live at the OOM: two 1 MiB blocks
 * from site_a and two 4 MiB blocks from site_b (a third 1 MiB block of
 * site_a freed just before); then cuMemAlloc of 1 GiB on a device of
 * FAKECUDA_MEM=512M fails, and a second OOM follows.  Prints what the
 * program saw (the same with and without the shim); frees everything
 * and exits 0.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define MIB ((size_t)1 << 20)

static CUdeviceptr a[3], b[2];
/* Not unrolled: one return address in main for each site. */
static volatile int na = 3, nb = 2;

static __attribute__((noinline)) CUresult
site_a(CUdeviceptr *p)
{
	CUresult r = cuMemAlloc(p, MIB);

	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r;
}

static __attribute__((noinline)) CUresult
site_b(CUdeviceptr *p)
{
	CUresult r = cuMemAlloc(p, 4 * MIB);

	__asm__ volatile("" ::: "memory");
	return r;
}

static __attribute__((noinline)) CUresult
too_much(CUdeviceptr *p)
{
	CUresult r = cuMemAlloc(p, 1024 * MIB);

	__asm__ volatile("" ::: "memory");
	return r;
}

/* TP_OOM_VMM: a VMM handle mapped, released while mapped, then unmapped
 * (the handle goes with its mapping), and the range freed: frees the OOM
 * report's recent events must show, besides cuMemFree's. */
static CUresult
vmm_round(void)
{
	CUmemAllocationProp prop = { 0 };
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	size_t g = 0, size;
	CUresult r;

	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	if ((r = cuMemGetAllocationGranularity(&g, &prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM)) != CUDA_SUCCESS)
		return r;
	size = g > 2 * MIB ? g : 2 * MIB;
	if ((r = cuMemCreate(&h, size, &prop, 0)) != CUDA_SUCCESS ||
	    (r = cuMemAddressReserve(&va, size, 0, 0, 0)) != CUDA_SUCCESS ||
	    (r = cuMemMap(va, size, 0, h, 0)) != CUDA_SUCCESS ||
	    (r = cuMemRelease(h)) != CUDA_SUCCESS ||
	    (r = cuMemUnmap(va, size)) != CUDA_SUCCESS)
		return r;
	return cuMemAddressFree(va, size);
}

int
main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr big = 0;
	CUresult r;
	int i;

	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
		fprintf(stderr, "tp_oom: no device\n");
		return 2;
	}
	/* One call site each: the same stack for every block of a site. */
	for (i = 0; i < na; i++)
		if (site_a(&a[i]) != CUDA_SUCCESS)
			return 2;
	for (i = 0; i < nb; i++)
		if (site_b(&b[i]) != CUDA_SUCCESS)
			return 2;
	if (cuMemFree(a[2]) != CUDA_SUCCESS)
		return 2;
	if (getenv("TP_OOM_VMM") != NULL && vmm_round() != CUDA_SUCCESS)
		return 2;
	r = too_much(&big);
	printf("first: %d\n", (int)r);
	r = too_much(&big);
	printf("second: %d\n", (int)r);
	for (i = 0; i < 2; i++)
		if (cuMemFree(a[i]) != CUDA_SUCCESS ||
		    cuMemFree(b[i]) != CUDA_SUCCESS)
			printf("free %d failed\n", i);
	printf("done\n");
	return 0;
}
