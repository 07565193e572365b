/*
 * bench_shim.c -- what the shim adds to a driver call.
 *
 * A driver-API program linked with -lcuda (so it calls cuMemAlloc_v2
 * through its PLT, the way the shim catches it).  Times pairs of
 * allocation + free per size, and prints one line per (pair, size):
 *
 *   <pair> <size> <ns per pair> <pairs>
 *
 * bench/run-bench-shim.sh runs it plain, under the shim in audit mode
 * (CUWARDEN_STACK_DEPTH=24) and in pool mode, and prints the three side by
 * side.  Meant for the GPU machine (real driver); against the simulated
 * driver it measures only the shim's own cost.
 *
 *   bench_shim [-q]     -q: fewer iterations (a smoke run)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int
check(CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return 0;
	const char *name = NULL;
	cuGetErrorName(r, &name);
	fprintf(stderr, "bench_shim: %s: %s\n", what, name ? name : "?");
	return 1;
}

/* Iterations for a size: fewer for big blocks (the driver's cost grows). */
static int
iters_for(size_t size, int quick)
{
	int n = size <= (64 << 10) ? 20000 : size <= (2 << 20) ? 5000 : 500;
	return quick ? n / 20 : n;
}

int
main(int argc, char **argv)
{
	static const size_t sizes[] = { 512, 64 << 10, 2 << 20, 64 << 20 };
	int quick = argc > 1 && strcmp(argv[1], "-q") == 0;
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CUdeviceptr p;

	if (cuInit(0) != CUDA_SUCCESS) {
		fprintf(stderr, "bench_shim: no CUDA device\n");
		return 77;
	}
	if (check(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
	    check(cuDevicePrimaryCtxRetain(&ctx, dev), "retain") ||
	    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
	    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "stream"))
		return 1;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i];
		int n = iters_for(size, quick);

		/* warm up: the driver's first allocations are slower */
		for (int k = 0; k < 16; k++)
			if (check(cuMemAlloc(&p, size), "cuMemAlloc") ||
			    check(cuMemFree(p), "cuMemFree"))
				return 1;
		double t0 = now_ns();
		for (int k = 0; k < n; k++) {
			if (cuMemAlloc(&p, size) != CUDA_SUCCESS ||
			    cuMemFree(p) != CUDA_SUCCESS)
				return check(CUDA_ERROR_UNKNOWN, "pair");
		}
		double t1 = now_ns();
		printf("cuMemAlloc_v2+cuMemFree_v2 %zu %.1f %d\n", size,
		    (t1 - t0) / n, n);

		for (int k = 0; k < 16; k++)
			if (check(cuMemAllocAsync(&p, size, s), "async") ||
			    check(cuMemFreeAsync(p, s), "free async"))
				return 1;
		cuStreamSynchronize(s);
		t0 = now_ns();
		for (int k = 0; k < n; k++) {
			if (cuMemAllocAsync(&p, size, s) != CUDA_SUCCESS ||
			    cuMemFreeAsync(p, s) != CUDA_SUCCESS)
				return check(CUDA_ERROR_UNKNOWN, "async pair");
		}
		cuStreamSynchronize(s);
		t1 = now_ns();
		printf("cuMemAllocAsync+cuMemFreeAsync %zu %.1f %d\n", size,
		    (t1 - t0) / n, n);
		fflush(stdout);
	}
	cuStreamDestroy(s);
	return 0;
}
