/*
 * gpu_test.c -- the test program of the CTest example (CMakeLists.txt
 * here): a CUDA driver-API program that allocates device memory and frees
 * it, or, with --leak, forgets one buffer, the bug cuwarden-audit turns
 * into a test failure.  Without the audit both runs pass.
 */
#include <stdio.h>
#include <string.h>

#include <cuda.h>

static int
failed(CUresult r, const char *what)
{
	const char *name = NULL;

	if (r == CUDA_SUCCESS)
		return 0;
	if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == NULL)
		name = "unknown error";
	fprintf(stderr, "gpu_test: %s: %s\n", what, name);
	return 1;
}

int
main(int argc, char **argv)
{
	int leak = argc > 1 && strcmp(argv[1], "--leak") == 0;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr big, small;

	if (failed(cuInit(0), "cuInit") ||
	    failed(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
	    failed(cuDevicePrimaryCtxRetain(&ctx, dev),
	    "cuDevicePrimaryCtxRetain") ||
	    failed(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
	    failed(cuMemAlloc(&big, 1 << 20), "cuMemAlloc") ||
	    failed(cuMemAlloc(&small, 1 << 16), "cuMemAlloc") ||
	    failed(cuMemsetD8(big, 0, 1 << 20), "cuMemsetD8") ||
	    failed(cuMemFree(big), "cuMemFree"))
		return 2;
	if (!leak && failed(cuMemFree(small), "cuMemFree"))
		return 2;
	printf("gpu_test: done%s\n", leak ? " (64 KiB never freed)" : "");
	return 0;
}
