/*
 * leaky.c -- a small CUDA driver-API program with planted memory bugs, for
 * trying cuwarden-audit (examples/README.md).  It allocates device, pinned
 * and managed memory from two functions, frees most of it, and:
 *
 *   - leaks 3 x 1 MiB of device memory, all from one call site
 *     (cuMemAlloc_v2 in device_buffer(), called from one loop);
 *   - leaks 1 x 256 KiB of pinned host memory (cuMemHostAlloc in
 *     host_buffer());
 *   - frees one device buffer twice (the second cuMemFree_v2 fails with
 *     CUDA_ERROR_INVALID_VALUE; the status is printed).
 *
 * Managed memory is allocated and freed (no leak).  Output is the same on
 * every run, so runs with and without the shim can be compared.
 *
 * Build (see examples/README.md):
 *   gcc -O1 -g -I/usr/local/cuda/include examples/leaky.c -o leaky \
 *       -L/usr/local/cuda/lib64/stubs -lcuda
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define MIB ((size_t)1 << 20)

static const char *
errname(CUresult r)
{
	const char *s = NULL;

	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s)
		return "unknown CUresult";
	return s;
}

static void
check(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "leaky: %s failed: %s\n", what, errname(r));
		exit(2);
	}
}

/* ---------------------------------------------------- device memory */

/* Every device buffer of this program comes from here: cuMemAlloc is
 * cuMemAlloc_v2 in cuda.h. */
static CUdeviceptr
device_buffer(size_t size)
{
	CUdeviceptr p = 0;

	check(cuMemAlloc(&p, size), "cuMemAlloc_v2");
	check(cuMemsetD8(p, 0x5a, size), "cuMemsetD8_v2");
	return p;
}

static void
device_work(void)
{
	CUdeviceptr kept[5];
	CUdeviceptr twice;
	unsigned char probe[16];
	CUresult r;

	/* Five 1 MiB buffers from one call site; two are freed, three are
	 * planted leaks. */
	for (int i = 0; i < 5; i++)
		kept[i] = device_buffer(MIB);
	check(cuMemcpyDtoH(probe, kept[0], sizeof(probe)), "cuMemcpyDtoH");
	check(cuMemFree(kept[3]), "cuMemFree_v2");
	check(cuMemFree(kept[4]), "cuMemFree_v2");
	printf("leaky: device: probe byte 0x%02x\n", probe[0]);
	printf("leaky: planted leak: 3 x %zu bytes of device memory "
	    "(cuMemAlloc_v2, one call site)\n", MIB);

	/* A 64 KiB buffer freed twice. */
	twice = device_buffer(64 * 1024);
	check(cuMemFree(twice), "cuMemFree_v2");
	r = cuMemFree(twice);
	printf("leaky: planted double free: second cuMemFree_v2 returned %s\n",
	    errname(r));

	/* A larger buffer, used and freed properly. */
	{
		CUdeviceptr big = device_buffer(4 * MIB);

		check(cuMemcpyDtoD(big, kept[1], MIB), "cuMemcpyDtoD");
		check(cuMemFree(big), "cuMemFree_v2");
	}
}

/* ---------------------------------------------------- host memory */

/* Pinned and managed memory come from here. */
static void *
host_buffer(size_t size, int managed)
{
	void *p = NULL;

	if (managed) {
		CUdeviceptr d = 0;

		check(cuMemAllocManaged(&d, size, CU_MEM_ATTACH_GLOBAL),
		    "cuMemAllocManaged");
		p = (void *)(uintptr_t)d;
	} else {
		check(cuMemHostAlloc(&p, size, CU_MEMHOSTALLOC_PORTABLE),
		    "cuMemHostAlloc");
	}
	memset(p, 0x11, size);
	return p;
}

static void
host_work(void)
{
	unsigned char *staging = host_buffer(128 * 1024, 0);
	unsigned char *leaked = host_buffer(256 * 1024, 0);
	unsigned char *shared = host_buffer(2 * MIB, 1);
	unsigned sum = 0;

	for (size_t i = 0; i < 2 * MIB; i += 4096)
		sum += shared[i] + staging[i % (128 * 1024)];
	leaked[0] = 1;
	printf("leaky: host: checksum %u\n", sum);
	check(cuMemFreeHost(staging), "cuMemFreeHost");
	check(cuMemFree((CUdeviceptr)(uintptr_t)shared), "cuMemFree_v2");
	printf("leaky: planted leak: 1 x %d bytes of pinned memory "
	    "(cuMemHostAlloc)\n", 256 * 1024);
}

int
main(void)
{
	CUdevice dev;
	CUcontext ctx;

	setvbuf(stdout, NULL, _IOLBF, 0);
	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");

	device_work();
	host_work();

	/* The primary context is not released: its memory is still
	 * allocated when the process ends, as in most programs. */
	printf("leaky: done: expect 4 leaks (3145728 device + 262144 pinned "
	    "= 3407872 bytes) and 1 double free\n");
	return 0;
}
