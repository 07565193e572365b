/*
 * staging.c -- an allocation-heavy driver-API program: pinned staging
 * buffers allocated, filled, copied to the device and freed in a loop, as
 * data loaders do.  Run plain and under the shim in pool mode
 * (bench/run-gpu-bench.sh) to compare.
 *
 * usage: staging [iterations] [bytes]     (default 200, 8 MiB)
 * prints: staging: N iterations of B bytes: T us/iteration (alloc+copy+free)
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call) \
	do { \
		CUresult r_ = (call); \
		if (r_ != CUDA_SUCCESS) { \
			const char *n_ = "?"; \
			cuGetErrorName(r_, &n_); \
			fprintf(stderr, "staging: %s failed: %s\n", #call, n_); \
			return 1; \
		} \
	} while (0)

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int
main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 200;
	size_t bytes = argc > 2 ? strtoull(argv[2], NULL, 0) : (8u << 20);
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d;
	double t0, t1;

	if (iters <= 0 || bytes == 0) {
		fprintf(stderr, "usage: staging [iterations] [bytes]\n");
		return 2;
	}
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuMemAlloc(&d, bytes));
	t0 = now_us();
	for (int i = 0; i < iters; i++) {
		void *h;

		CHECK(cuMemHostAlloc(&h, bytes, 0));
		memset(h, i & 0xff, 4096);
		CHECK(cuMemcpyHtoD(d, h, 4096));
		CHECK(cuMemFreeHost(h));
	}
	CHECK(cuCtxSynchronize());
	t1 = now_us();
	CHECK(cuMemFree(d));
	printf("staging: %d iterations of %zu bytes: %.2f us/iteration "
	    "(alloc+copy+free)\n", iters, bytes, (t1 - t0) / iters);
	return 0;
}
