/*
 * tp_growth.c -- memory over time with a planted steady growth
 * (check_timeline_series.sh).  Run with FAKECUDA_DEVICES=2:
 *   site_keep   1 x 8 MiB at the start (flat: not growing)
 *   then ITER iterations, 2 ms apart, each:
 *     site_grow 1 x 1 MiB kept       (64 MiB at the end: growing)
 *     site_saw  1 x 4 MiB, freed at once (not growing)
 *     site_warm 1 x 512 KiB kept, the first 8 iterations only
 *               (4 MiB, then flat: not growing)
 *     site_host 1 x 64 KiB of pinned memory, every 16th (host)
 *   halfway: site_dev1 2 MiB on device 1
 *   then everything freed: the program leaks nothing (a long job's
 *   growth that its exit hides).
 * The peak on device 0: 8 + 64 + 4 + 4 MiB = 80 MiB, in the last
 * iteration, while its saw allocation is live.  Exits 0.
 */
#include <cuda.h>
#include <stdio.h>
#include <unistd.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define ITER 64
#define WARM 8

#define SITE(name, expr) \
	static __attribute__((noinline)) CUresult name(CUdeviceptr *p) \
	{ \
		CUresult r = (expr); \
		__asm__ volatile("" ::: "memory"); /* no tail call */ \
		return r; \
	}
SITE(site_keep, cuMemAlloc(p, 8 * MIB))
SITE(site_grow, cuMemAlloc(p, MIB))
SITE(site_saw, cuMemAlloc(p, 4 * MIB))
SITE(site_warm, cuMemAlloc(p, 512 * KIB))
SITE(site_dev1, cuMemAlloc(p, 2 * MIB))

static __attribute__((noinline)) CUresult
site_host(void **p)
{
	CUresult r = cuMemAllocHost(p, 64 * KIB);

	__asm__ volatile("" ::: "memory");
	return r;
}

int
main(void)
{
	CUdeviceptr keep, grow[ITER], warm[WARM], saw, d1 = 0;
	void *host[ITER / 16];
	CUcontext ctx0, ctx1;
	CUdevice dev0, dev1;
	int i, nh = 0;

	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev0, 0) != CUDA_SUCCESS ||
	    cuDeviceGet(&dev1, 1) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx0, dev0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx1, dev1) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx0) != CUDA_SUCCESS)
		return 2;
	if (site_keep(&keep) != CUDA_SUCCESS)
		return 2;
	for (i = 0; i < ITER; i++) {
		if (site_grow(&grow[i]) != CUDA_SUCCESS ||
		    site_saw(&saw) != CUDA_SUCCESS ||
		    (i < WARM && site_warm(&warm[i]) != CUDA_SUCCESS) ||
		    (i % 16 == 0 && site_host(&host[nh++]) != CUDA_SUCCESS) ||
		    cuMemFree(saw) != CUDA_SUCCESS)
			return 2;
		if (i == ITER / 2 && (cuCtxSetCurrent(ctx1) != CUDA_SUCCESS ||
		    site_dev1(&d1) != CUDA_SUCCESS ||
		    cuCtxSetCurrent(ctx0) != CUDA_SUCCESS))
			return 2;
		usleep(2000);
	}
	for (i = 0; i < ITER; i++)
		if (cuMemFree(grow[i]) != CUDA_SUCCESS)
			return 2;
	for (i = 0; i < WARM; i++)
		if (cuMemFree(warm[i]) != CUDA_SUCCESS)
			return 2;
	for (i = 0; i < nh; i++)
		if (cuMemFreeHost(host[i]) != CUDA_SUCCESS)
			return 2;
	if (cuMemFree(keep) != CUDA_SUCCESS || cuCtxSetCurrent(ctx1) !=
	    CUDA_SUCCESS || cuMemFree(d1) != CUDA_SUCCESS)
		return 2;
	printf("done\n");
	return 0;
}
