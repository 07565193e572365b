/*
 * staging.c -- an allocation-heavy driver-API program: pinned staging
 * buffers allocated, filled, copied to the device and freed in a loop, as
 * data loaders do.  Run plain and under the shim in pool mode
 * (bench/run-gpu-bench.sh) to compare.
 *
 * usage: staging [iterations] [bytes] [warmup]   (default 200, 8 MiB, 5)
 * The warm-up iterations run first, untimed (the first allocation of a
 * pool reserves its segment; the driver's first calls are slower too).
 * prints: staging: N iterations of B bytes: T us/iteration (alloc+copy+free)
 *         staging: medians: alloc A us, copy C us, free F us
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[n / 2];
}

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
	int warm = argc > 3 ? atoi(argv[3]) : 5;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d;
	double t0 = 0, t1;

	if (iters <= 0 || bytes < 4096 || warm < 0) {
		fprintf(stderr, "usage: staging [iterations] [bytes >= 4096] "
		    "[warmup]\n");
		return 2;
	}
	double *ta = malloc(3 * sizeof(double) * (size_t)iters);
	if (ta == NULL)
		return 1;
	double *tc = ta + iters, *tf = tc + iters;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuMemAlloc(&d, bytes));
	for (int i = -warm; i < iters; i++) {
		void *h;
		double a = now_us(), b, c;

		if (i == 0) {
			CHECK(cuCtxSynchronize());
			t0 = a = now_us();
		}
		CHECK(cuMemHostAlloc(&h, bytes, 0));
		b = now_us();
		memset(h, i & 0xff, 4096);
		CHECK(cuMemcpyHtoD(d, h, 4096));
		c = now_us();
		CHECK(cuMemFreeHost(h));
		if (i >= 0) {
			ta[i] = b - a;
			tc[i] = c - b;
			tf[i] = now_us() - c;
		}
	}
	CHECK(cuCtxSynchronize());
	t1 = now_us();
	CHECK(cuMemFree(d));
	printf("staging: %d iterations of %zu bytes: %.2f us/iteration "
	    "(alloc+copy+free)\n", iters, bytes, (t1 - t0) / iters);
	printf("staging: medians: alloc %.2f us, copy %.2f us, free %.2f us\n",
	    median(ta, iters), median(tc, iters), median(tf, iters));
	free(ta);
	return 0;
}
