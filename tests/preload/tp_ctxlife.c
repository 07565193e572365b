/*
 * tp_ctxlife.c -- a primary context's end must look the same in pool mode
 * as without the shim (check_ctxlife.sh runs it plain, in audit mode and
 * in pool mode and compares the transcripts).
 *
 *   tp_ctxlife release N   retains the primary context N times, allocates
 *                          device, pinned and managed memory, releases N
 *                          times: the last release destroys the context
 *                          and its memory (nothing leaks), then asks the
 *                          driver about the context and the memory;
 *                          then a second life (retain, allocate, free).
 *   tp_ctxlife twodev      two devices (FAKECUDA_DEVICES=2): memory on
 *                          each, reset of device 1 only: device 0's
 *                          allocation lives on (and leaks), device 1's
 *                          went with the reset.
 *
 * Each line is a call and its CUresult, or a value, never an address.
 * (The pattern of ../shared/repro/ctx/release.c and twodev.c, and of
 * numba-cuda's driver tests, which reset and re-create contexts.)
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAY(what, call) printf("%-44s -> %d\n", (what), (int)(call))

static void
state(const char *what, CUdevice d)
{
	unsigned int fl = 0;
	int active = -1;

	SAY(what, cuDevicePrimaryCtxGetState(d, &fl, &active));
	printf("  %-42s %d\n", "active", active);
}

static int
release(int n)
{
	CUdevice d;
	CUcontext c;
	CUdeviceptr x = 0, m = 0;
	void *h = NULL;
	size_t f0 = 0, t0 = 0, f1 = 0, t1 = 0;

	SAY("cuInit", cuInit(0));
	SAY("cuDeviceGet", cuDeviceGet(&d, 0));
	for (int i = 0; i < n; i++)
		SAY("retain", cuDevicePrimaryCtxRetain(&c, d));
	SAY("cuCtxSetCurrent", cuCtxSetCurrent(c));
	SAY("cuMemGetInfo before", cuMemGetInfo(&f0, &t0));
	SAY("cuMemAlloc 1 MiB", cuMemAlloc(&x, 1 << 20));
	SAY("cuMemAllocHost 4096", cuMemAllocHost(&h, 4096));
	SAY("cuMemAllocManaged 8192", cuMemAllocManaged(&m, 8192,
	    CU_MEM_ATTACH_GLOBAL));
	SAY("cuMemsetD8 all of it", cuMemsetD8(x, 7, 1 << 20));
	for (int i = 0; i < n; i++)
		SAY("release", cuDevicePrimaryCtxRelease(d));
	state("state after the last release", d);
	SAY("cuMemGetInfo after it", cuMemGetInfo(&f1, &t1));
	SAY("cuMemFree of the device memory", cuMemFree(x));
	SAY("cuMemFreeHost of the pinned memory", cuMemFreeHost(h));
	/* A second life: a new context, its own memory, freed. */
	SAY("retain again", cuDevicePrimaryCtxRetain(&c, d));
	SAY("cuCtxSetCurrent", cuCtxSetCurrent(c));
	state("state in the second life", d);
	SAY("cuMemGetInfo in it", cuMemGetInfo(&f1, &t1));
	printf("  %-42s %s\n", "free memory as at the start",
	    f1 == f0 ? "yes" : "no");
	SAY("cuMemAlloc 64 KiB", cuMemAlloc(&x, 65536));
	SAY("cuMemFree of it", cuMemFree(x));
	SAY("release", cuDevicePrimaryCtxRelease(d));
	return 0;
}

static int
twodev(void)
{
	CUdevice d0, d1;
	CUcontext c0, c1;
	CUdeviceptr x0 = 0, x1 = 0;
	void *h1 = NULL;

	SAY("cuInit", cuInit(0));
	SAY("cuDeviceGet 0", cuDeviceGet(&d0, 0));
	SAY("cuDeviceGet 1", cuDeviceGet(&d1, 1));
	SAY("retain 0", cuDevicePrimaryCtxRetain(&c0, d0));
	SAY("retain 1", cuDevicePrimaryCtxRetain(&c1, d1));
	SAY("set 0", cuCtxSetCurrent(c0));
	SAY("cuMemAlloc 1 MiB on 0", cuMemAlloc(&x0, 1 << 20));
	SAY("set 1", cuCtxSetCurrent(c1));
	SAY("cuMemAlloc 2 MiB on 1", cuMemAlloc(&x1, 2 << 20));
	SAY("cuMemAllocHost 4096 in 1", cuMemAllocHost(&h1, 4096));
	SAY("set 0", cuCtxSetCurrent(c0));
	SAY("reset 1", cuDevicePrimaryCtxReset(d1));
	state("state of 1", d1);
	state("state of 0", d0);
	SAY("cuMemsetD8 on 0's memory", cuMemsetD8(x0, 1, 1 << 20));
	return 0;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && strcmp(argv[1], "release") == 0)
		return release(atoi(argv[2]));
	if (argc > 1 && strcmp(argv[1], "twodev") == 0)
		return twodev();
	fprintf(stderr, "usage: tp_ctxlife release N | twodev\n");
	return 2;
}
