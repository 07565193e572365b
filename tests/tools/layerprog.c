/*
 * layerprog.c -- a driver-API test program for cuwarden-audit's grouping
 * and baselines (tests/tools/check_grouping.sh), linked against
 * tests/fakecuda/libcuda.so.1, built -O0 -g -fno-omit-frame-pointer
 * -fno-inline; the user's CFLAGS come last (-O2 by default), so the code
 * keeps its frames optimized too: every function noinline, no call in
 * tail position, no loop the compiler could unroll into several call
 * sites, no two branches it could merge.
 *
 * Usage: layerprog MODE
 *   layers  leaks through layer_a() and layer_b(), each calling deep(n)
 *           for n = 0..DEPTHS-1: 2 * DEPTHS distinct stacks that share
 *           their innermost frames (leaf, deep, deep, ...) when n is
 *           large.  Stack (path, n) leaks COUNT(n) allocations of
 *           SIZE(path, n) bytes; the test computes the same.
 *   line1   leaks 3 x 64 KiB from leak_here(), at LINE-HERE1
 *   line2   leaks 3 x 128 KiB from leak_here(), at LINE-HERE2 (the same
 *           function, another line; the rest of the stack the same)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define DEPTHS 15
#define COUNT(n) ((n) % 3 + 1)
#define SIZE(path, n) ((size_t)4096 * ((path) == 'a' ? (n) + 1 : 32 + (n)))

static void
check(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "layerprog: %s failed: %d\n", what, (int)r);
		exit(99);
	}
}

static void
setup(void)
{
	CUdevice dev;
	CUcontext ctx;

	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

/* Keeps the compiler from turning a call into a jump (a tail call would
 * drop the caller's frame). */
static volatile int sink;

__attribute__((noinline)) static void
leaf(size_t size)
{
	CUdeviceptr p = 0;

	check(cuMemAlloc(&p, size), "cuMemAlloc");
	sink++;
}

__attribute__((noinline)) static void
deep(int n, size_t size)
{
	if (n == 0)
		leaf(size);
	else
		deep(n - 1, size);
	sink++;
}

__attribute__((noinline)) static void
layer_a(int n)
{
	deep(n, SIZE('a', n));
	sink++;
}

__attribute__((noinline)) static void
layer_b(int n)
{
	deep(n, SIZE('b', n));
	sink++;
}

/* Not a constant, so that an optimizing build keeps one call per branch
 * rather than unrolling the loop into three. */
static volatile int reps = 3;

__attribute__((noinline)) static void
leak_here(int which)
{
	for (int i = 0; i < reps; i++) {
		if (which == 1)
			leaf(65536); /* LINE-HERE1 */
		else
			leaf(131072); /* LINE-HERE2 */
	}
	sink++;
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setup();
	if (strcmp(mode, "layers") == 0) {
		for (int n = 0; n < DEPTHS; n++)
			for (int k = 0; k < COUNT(n); k++)
				layer_a(n);
		for (int n = 0; n < DEPTHS; n++)
			for (int k = 0; k < COUNT(n); k++)
				layer_b(n);
	} else if (strcmp(mode, "line1") == 0 || strcmp(mode, "line2") == 0) {
		/* One call site for both: only leak_here's line differs. */
		leak_here(mode[4] - '0');
	} else {
		fprintf(stderr, "usage: layerprog layers|line1|line2\n");
		return 2;
	}
	sink++;
	return 0;
}
