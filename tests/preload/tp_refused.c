/*
 * tp_refused.c -- frees the driver refuses for another reason than the
 * pointer: the allocation is still the driver's, so the shim must keep it
 * live (a failed_free, then a leak if never freed), never call it a double
 * free.  check_refused.sh asserts the report.
 *
 *   - cuMemFreeAsync on a destroyed stream (a stream-ordered and a
 *     cuMemAlloc block), then on a garbage stream: left allocated (the
 *     simulated driver refuses such a stream; driver 580 on the H200
 *     dereferences it and the program dies of SIGSEGV, shim or not: this
 *     case is for the simulated driver only);
 *   - cuMemAddressFree with the wrong size, then never freed: a leaked
 *     reservation (4 MiB);
 *   - a partial cuMemUnmap (refused), then the whole teardown: clean.
 * Then, a real double free of each family for contrast.
 * `tp_refused invalid N`: N frees of an address never allocated (the
 * violation lines printed are capped per type).
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAY(what, call) printf("%-44s -> %d\n", (what), (int)(call))

int
main(int argc, char **argv)
{
	CUdevice d;
	CUcontext c;
	CUstream s, dead;
	CUdeviceptr p = 0, q = 0, r = 0, r2 = 0, x = 0;
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp prop;
	size_t g = 0;

	cuInit(0);
	cuDeviceGet(&d, 0);
	cuDevicePrimaryCtxRetain(&c, d);
	cuCtxSetCurrent(c);
	if (argc > 2 && strcmp(argv[1], "invalid") == 0) {
		for (long i = atol(argv[2]); i > 0; i--)
			cuMemFree((CUdeviceptr)0x7f0000001000ULL);
		return 0;
	}
	cuStreamCreate(&s, 0);
	cuStreamCreate(&dead, 0);
	SAY("cuMemAllocAsync p 1 MiB", cuMemAllocAsync(&p, 1 << 20, s));
	SAY("cuMemAlloc q 1 MiB", cuMemAlloc(&q, 1 << 20));
	cuStreamSynchronize(s);
	SAY("cuStreamDestroy", cuStreamDestroy(dead));
	SAY("free p on the destroyed stream", cuMemFreeAsync(p, dead));
	SAY("free q on the destroyed stream", cuMemFreeAsync(q, dead));
	SAY("free p on a garbage stream", cuMemFreeAsync(p, (CUstream)0x1234));

	SAY("reserve r 4 MiB", cuMemAddressReserve(&r, 4 << 20, 0, 0, 0));
	SAY("address free r, 2 MiB (wrong size)", cuMemAddressFree(r, 2 << 20));

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	cuMemGetAllocationGranularity(&g, &prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	SAY("create h (2g)", cuMemCreate(&h, 2 * g, &prop, 0));
	SAY("reserve r2 (2g)", cuMemAddressReserve(&r2, 2 * g, 0, 0, 0));
	SAY("map h at r2", cuMemMap(r2, 2 * g, 0, h, 0));
	SAY("unmap the first half (refused)", cuMemUnmap(r2, g));
	SAY("unmap all", cuMemUnmap(r2, 2 * g));
	SAY("release h", cuMemRelease(h));
	SAY("address free r2", cuMemAddressFree(r2, 2 * g));

	/* Real double frees: the driver does not know these any more. */
	SAY("cuMemAlloc x", cuMemAlloc(&x, 4096));
	SAY("free x", cuMemFree(x));
	SAY("free x again (double)", cuMemFreeAsync(x, s));
	SAY("unmap all again (double)", cuMemUnmap(r2, 2 * g));
	SAY("address free r2 again (double)", cuMemAddressFree(r2, 2 * g));
	return 0;
}
