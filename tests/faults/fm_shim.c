/*
 * fm_shim.c -- the fault matrix's workload for the shim: a driver-API
 * program (linked with the driver, calling it through its PLT), run both
 * without and under libcuwarden_preload.so by check_faults_shim.sh while
 * the simulated driver fails whatever FAKECUDA_FAIL_CALL names.
 *
 * It makes one fixed sequence of calls of every hooked family -- device,
 * pitched, managed, pinned (both entry points), registered, stream-ordered
 * (with a set and a free on a stream, and from a pool of its own), VMM
 * (handle, reservation, mapping), 2D, 3D and mipmapped arrays, copies, an
 * allocation through a pointer from cuGetProcAddress_v2 (as cudart makes
 * them), a context of its own destroyed with memory in it -- frees most of it, frees one pointer twice on purpose,
 * and leaves two allocations live on purpose.  It goes on whatever a call
 * answers, and prints:
 *
 *   call NAME R            each driver call and its CUresult, in order
 *                          (the transcript: under the shim it must be
 *                          the one the driver gives without it)
 *   live ADDR SIZE         what it still holds at exit (by its own
 *                          account: a successful allocation not followed
 *                          by a successful free); SIZE -1 when unknown
 *   expect TYPE ADDR       a violation the report must record: the
 *                          planted double free, and a failed_free for
 *                          every free of live memory the driver refused
 *                          with an error other than "not mine"
 *   count NAME N           at the end, the driver's count of calls of
 *                          each entry point it used (fakecuda_calls):
 *                          more under the shim when the shim calls it too
 *
 * Exit 0 always, unless the harness breaks (99); the checking is the
 * harness's: the report's leaks must be exactly the live lines, its
 * violations exactly the expect lines.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cuda.h>

#define MAX_LIVE 64

static struct {
	unsigned long long v;
	long long size;
} live[MAX_LIVE];
static int nlive;

unsigned long fakecuda_calls(const char *exported_name);

static const char *names[96];
static int nnames;

static CUresult
note(const char *name, CUresult r)
{
	int i;

	printf("call %s %d\n", name, (int)r);
	if (strchr(name, ':'))  /* a call through a pointer, not an export */
		return r;
	for (i = 0; i < nnames && strcmp(names[i], name) != 0; i++)
		;
	if (i == nnames && nnames < 96)
		names[nnames++] = name;
	return r;
}

#define CALL(fn, ...) note(#fn, fn(__VA_ARGS__))

static void
hold(unsigned long long v, long long size)
{
	if (nlive == MAX_LIVE) {
		printf("fm_shim: harness: too many live\n");
		exit(99);
	}
	live[nlive].v = v;
	live[nlive].size = size;
	nlive++;
}

static int
held(unsigned long long v)
{
	for (int i = 0; i < nlive; i++)
		if (live[i].v == v)
			return i;
	return -1;
}

/* After a free-like call of v answered r: forget v on success; expect a
 * failed_free when the driver refused live memory for another reason than
 * not knowing it (the shim's rule, shim/classify.c). */
static void
freed(unsigned long long v, CUresult r)
{
	int i = held(v);

	if (i < 0)
		return;
	if (r == CUDA_SUCCESS) {
		live[i] = live[--nlive];
		return;
	}
	if (r != CUDA_ERROR_INVALID_VALUE && r != CUDA_ERROR_INVALID_HANDLE &&
	    r != CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)
		printf("expect failed_free 0x%llx\n", v);
}

int
main(void)
{
	CUdevice dev = 0;
	CUcontext ctx = NULL;
	CUdeviceptr d1 = 0, d2 = 0, pitched = 0, m1 = 0, a1 = 0, a2 = 0, va = 0;
	void *h1 = NULL, *h2 = NULL, *reg;
	size_t pitch = 0, gran = 0;
	CUstream s = NULL;
	CUmemGenericAllocationHandle mh = 0;
	CUarray arr = NULL;
	CUmemAllocationProp prop;
	CUDA_ARRAY_DESCRIPTOR ad;
	unsigned char in[4096], out[4096];

	setvbuf(stdout, NULL, _IOLBF, 0);
	CALL(cuInit, 0);
	CALL(cuDeviceGet, &dev, 0);
	if (CALL(cuDevicePrimaryCtxRetain, &ctx, dev) == CUDA_SUCCESS)
		CALL(cuCtxSetCurrent, ctx);

	/* Every allocating family. */
	if (CALL(cuMemAlloc_v2, &d1, 4096) == CUDA_SUCCESS)
		hold(d1, 4096);
	if (CALL(cuMemAlloc_v2, &d2, (size_t)1 << 20) == CUDA_SUCCESS)
		hold(d2, (size_t)1 << 20);
	if (CALL(cuMemAllocPitch_v2, &pitched, &pitch, 1000, 8, 4) == CUDA_SUCCESS)
		hold(pitched, -1);
	if (CALL(cuMemAllocManaged, &m1, 65536, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS)
		hold(m1, 65536);
	if (CALL(cuMemHostAlloc, &h1, 8192, 0) == CUDA_SUCCESS)
		hold((uintptr_t)h1, 8192);
	if (CALL(cuMemAllocHost_v2, &h2, 4096) == CUDA_SUCCESS)
		hold((uintptr_t)h2, 4096);
	reg = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (reg == MAP_FAILED) {
		printf("fm_shim: harness: mmap\n");
		return 99;
	}
	if (CALL(cuMemHostRegister_v2, reg, 65536, 0) == CUDA_SUCCESS)
		hold((uintptr_t)reg, 65536);

	/* Copies through device memory. */
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 13 + 1);
	if (d1 && CALL(cuMemcpyHtoD_v2, d1, in, sizeof(in)) == CUDA_SUCCESS &&
	    CALL(cuMemcpyDtoH_v2, out, d1, sizeof(out)) == CUDA_SUCCESS)
		printf("data %s\n", memcmp(in, out, sizeof(in)) ? "differs" : "same");

	/* Stream-ordered memory on a stream of our own. */
	if (CALL(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS) {
		if (CALL(cuMemAllocAsync, &a1, 65536, s) == CUDA_SUCCESS)
			hold(a1, 65536);
		if (CALL(cuMemAllocAsync, &a2, 4096, s) == CUDA_SUCCESS)
			hold(a2, 4096);
		if (a1) {
			CALL(cuMemsetD8Async, a1, 0x5a, 65536, s);
			freed(a1, CALL(cuMemFreeAsync, a1, s));
		}
		if (a2)
			freed(a2, CALL(cuMemFreeAsync, a2, s));
		CALL(cuStreamSynchronize, s);
		CALL(cuStreamDestroy_v2, s);
	}

	/* VMM: a handle, mapped into a reservation, then taken apart. */
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	if (CALL(cuMemGetAllocationGranularity, &gran, &prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS && gran) {
		if (CALL(cuMemCreate, &mh, gran, &prop, 0) == CUDA_SUCCESS)
			hold(mh, (long long)gran);
		if (CALL(cuMemAddressReserve, &va, gran, 0, 0, 0) == CUDA_SUCCESS)
			hold(va, (long long)gran);
		bool still_mapped = false;

		if (mh && va && CALL(cuMemMap, va, gran, 0, mh, 0) == CUDA_SUCCESS) {
			CUresult r = CALL(cuMemUnmap, va, gran);

			/* A mapping is freed like memory: a refusal other
			 * than "not mine" is a failed free of it. */
			still_mapped = r != CUDA_SUCCESS;
			if (still_mapped && r != CUDA_ERROR_INVALID_VALUE)
				printf("expect failed_free 0x%llx\n", (unsigned long long)va);
		}
		if (mh) {
			CUresult r = CALL(cuMemRelease, mh);

			/* Released while mapped: the memory lives on, and the
			 * report lists the handle (doc/report-schema.md). */
			if (r != CUDA_SUCCESS || !still_mapped)
				freed(mh, r);
		}
		if (va)
			freed(va, CALL(cuMemAddressFree, va, gran));
	}

	/* An array, destroyed. */
	memset(&ad, 0, sizeof(ad));
	ad.Width = 16;
	ad.Height = 16;
	ad.Format = CU_AD_FORMAT_FLOAT;
	ad.NumChannels = 1;
	if (CALL(cuArrayCreate_v2, &arr, &ad) == CUDA_SUCCESS) {
		hold((uintptr_t)arr, -1);
		freed((uintptr_t)arr, CALL(cuArrayDestroy, arr));
	}

	/* 3D and mipmapped arrays, destroyed. */
	{
		CUDA_ARRAY3D_DESCRIPTOR d3;
		CUarray a3 = NULL;
		CUmipmappedArray mm = NULL;

		memset(&d3, 0, sizeof(d3));
		d3.Width = 8;
		d3.Height = 8;
		d3.Depth = 4;
		d3.Format = CU_AD_FORMAT_FLOAT;
		d3.NumChannels = 2;
		if (CALL(cuArray3DCreate_v2, &a3, &d3) == CUDA_SUCCESS) {
			hold((uintptr_t)a3, -1);
			freed((uintptr_t)a3, CALL(cuArrayDestroy, a3));
		}
		if (CALL(cuMipmappedArrayCreate, &mm, &d3, 3) == CUDA_SUCCESS) {
			hold((uintptr_t)mm, -1);
			freed((uintptr_t)mm, CALL(cuMipmappedArrayDestroy, mm));
		}
	}

	/* A pool of our own: allocate from it on a stream, free, destroy. */
	{
		CUmemPoolProps pp;
		CUmemoryPool pool = NULL;
		CUstream ps = NULL;
		CUdeviceptr pa = 0;

		memset(&pp, 0, sizeof(pp));
		pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
		pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		pp.location.id = dev;
		if (CALL(cuMemPoolCreate, &pool, &pp) == CUDA_SUCCESS) {
			if (CALL(cuStreamCreate, &ps, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS) {
				if (CALL(cuMemAllocFromPoolAsync, &pa, 6144, pool, ps) == CUDA_SUCCESS) {
					hold(pa, 6144);
					freed(pa, CALL(cuMemFreeAsync, pa, ps));
				}
				CALL(cuStreamSynchronize, ps);
				CALL(cuStreamDestroy_v2, ps);
			}
			CALL(cuMemPoolDestroy, pool);
		}
	}

	/* The way cudart reaches the driver: an entry point from
	 * cuGetProcAddress_v2, called through the pointer (the shim answers
	 * with its hook). */
	{
		CUresult (*alloc_fn)(CUdeviceptr *, size_t) = NULL;
		CUresult (*free_fn)(CUdeviceptr) = NULL;
		CUdriverProcAddressQueryResult q1 = CU_GET_PROC_ADDRESS_SUCCESS, q2 = q1;
		CUdeviceptr gp = 0;

		if (CALL(cuGetProcAddress_v2, "cuMemAlloc", (void **)&alloc_fn, 12000,
		    CU_GET_PROC_ADDRESS_DEFAULT, &q1) == CUDA_SUCCESS &&
		    CALL(cuGetProcAddress_v2, "cuMemFree", (void **)&free_fn, 12000,
		    CU_GET_PROC_ADDRESS_DEFAULT, &q2) == CUDA_SUCCESS &&
		    alloc_fn && free_fn) {
			if (note("gpa:cuMemAlloc", alloc_fn(&gp, 12288)) == CUDA_SUCCESS) {
				hold(gp, 12288);
				freed(gp, note("gpa:cuMemFree", free_fn(gp)));
			}
		}
	}

	/* A context of our own with memory in it, destroyed: the teardown
	 * frees the memory (the shim must forget it, and nothing else). */
	{
		CUcontext own = NULL;
		CUdeviceptr cp = 0;

#if CUDA_VERSION >= 13000
		CUresult cr = CALL(cuCtxCreate_v4, &own, NULL, 0, dev);
#else
		CUresult cr = CALL(cuCtxCreate_v2, &own, 0, dev);
#endif
		if (cr == CUDA_SUCCESS) {
			if (CALL(cuMemAlloc_v2, &cp, 8192) == CUDA_SUCCESS)
				hold(cp, 8192);
			if (CALL(cuCtxDestroy_v2, own) == CUDA_SUCCESS && cp) {
				int i = held(cp);

				if (i >= 0)
					live[i] = live[--nlive];
			}
			if (ctx)
				CALL(cuCtxSetCurrent, ctx);
		}
	}

	/* Frees; d2 and h2 stay live on purpose (the planted leaks). */
	if (d1)
		freed(d1, CALL(cuMemFree_v2, d1));
	if (pitched)
		freed(pitched, CALL(cuMemFree_v2, pitched));
	if (m1)
		freed(m1, CALL(cuMemFree_v2, m1));
	if (h1)
		freed((uintptr_t)h1, CALL(cuMemFreeHost, h1));
	if (held((uintptr_t)reg) >= 0)
		freed((uintptr_t)reg, CALL(cuMemHostUnregister, reg));

	/* The planted double free: d1 again, when the first one took. */
	if (d1) {
		if (held(d1) < 0) {
			CUresult r = CALL(cuMemFree_v2, d1);

			if (r != CUDA_SUCCESS)
				printf("expect double_free 0x%llx\n", (unsigned long long)d1);
		} else {
			freed(d1, CALL(cuMemFree_v2, d1));
		}
	}

	for (int i = 0; i < nlive; i++)
		printf("live 0x%llx %lld\n", live[i].v, live[i].size);
	/* Calls of each entry point it used, as the driver counted them: with
	 * the shim, more than here when the shim calls it itself. */
	for (int i = 0; i < nnames; i++)
		printf("count %s %lu\n", names[i], fakecuda_calls(names[i]));
	return 0;
}
