/*
 * tp_more.c -- a driver-API program (linked with -lcuda, so it calls the
 * driver through its PLT) for the hooked entry points tp_driver.c does not
 * reach: 3D and mipmapped arrays, pool pointer import, and VMM handles
 * imported from a shareable handle.  Run under the shim by
 * tests/preload/check_more_families.sh.
 *
 *   tp_more             every family below
 *   tp_more crosstype   a live mipmapped array given to cuArrayDestroy
 *
 * It does a known set of allocations, frees and mistakes, prints KEY=VALUE
 * lines (addresses and handles the driver chose) for check.py, asserts
 * every answer of the driver (the shim must return them unchanged) and
 * exits 1 when one differs.  It runs without the shim as well.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

static int errors;
static CUdevice dev;
static CUcontext pctx;

#define EXPECT(call, want) \
	do { \
		CUresult r_ = (call); \
		if (r_ != (want)) { \
			fprintf(stderr, "%s:%d: %s = %d, want %d\n", \
			    __FILE__, __LINE__, #call, (int)r_, (int)(want)); \
			errors++; \
		} \
	} while (0)
#define OK(call) EXPECT(call, CUDA_SUCCESS)
#define INVAL CUDA_ERROR_INVALID_VALUE

static void
var(const char *k, unsigned long long v)
{
	printf("%s=0x%llx\n", k, v);
}

static void
desc3d(CUDA_ARRAY3D_DESCRIPTOR *d, size_t w, size_t h, size_t dep,
    CUarray_format f, unsigned ch)
{
	memset(d, 0, sizeof(*d));
	d->Width = w;
	d->Height = h;
	d->Depth = dep;
	d->Format = f;
	d->NumChannels = ch;
}

/* ------------------------------------------------------------ arrays */

static void
arrays(void)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUarray a, a2;
	CUmipmappedArray m, m2;

	/* 3D: 8 x 8 x 4 of float2 leaked, 16 x 4 x 2 bytes freed */
	desc3d(&d, 8, 8, 4, CU_AD_FORMAT_FLOAT, 2);
	OK(cuArray3DCreate(&a, &d));
	var("a3d", (uintptr_t)a);
	desc3d(&d, 16, 4, 2, CU_AD_FORMAT_UNSIGNED_INT8, 1);
	OK(cuArray3DCreate(&a2, &d));
	var("a3d_freed", (uintptr_t)a2);
	OK(cuArrayDestroy(a2));
	/* descriptors the driver refuses: no array, a failed call each */
	desc3d(&d, 0, 8, 4, CU_AD_FORMAT_FLOAT, 1);
	EXPECT(cuArray3DCreate(&a2, &d), INVAL);
	desc3d(&d, 8, 0, 4, CU_AD_FORMAT_FLOAT, 1);     /* depth without height */
	EXPECT(cuArray3DCreate(&a2, &d), INVAL);
	desc3d(&d, 8, 8, 4, CU_AD_FORMAT_FLOAT, 3);     /* 3 channels */
	EXPECT(cuArray3DCreate(&a2, &d), INVAL);
	desc3d(&d, 8, 8, 5, CU_AD_FORMAT_FLOAT, 1);     /* a cubemap needs 6 */
	d.Flags = CUDA_ARRAY3D_CUBEMAP;
	EXPECT(cuArray3DCreate(&a2, &d), INVAL);

	/* mipmapped: 32 x 32 float, 3 levels, leaked; 16 x 16 x 16 ushort4,
	 * 5 levels, freed */
	desc3d(&d, 32, 32, 0, CU_AD_FORMAT_FLOAT, 1);
	OK(cuMipmappedArrayCreate(&m, &d, 3));
	var("mip", (uintptr_t)m);
	desc3d(&d, 16, 16, 16, CU_AD_FORMAT_UNSIGNED_INT16, 4);
	OK(cuMipmappedArrayCreate(&m2, &d, 5));
	var("mip_freed", (uintptr_t)m2);
	OK(cuMipmappedArrayDestroy(m2));
	/* 1 + log2(16) = 5 levels at most; zero levels */
	EXPECT(cuMipmappedArrayCreate(&m2, &d, 6), INVAL);
	EXPECT(cuMipmappedArrayCreate(&m2, &d, 0), INVAL);

	/* a handle the driver never gave, and a double destroy */
	EXPECT(cuArrayDestroy((CUarray)(uintptr_t)0xdead0), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(cuMipmappedArrayDestroy(NULL), CUDA_ERROR_INVALID_HANDLE);
	desc3d(&d, 4, 4, 4, CU_AD_FORMAT_FLOAT, 1);
	OK(cuMipmappedArrayCreate(&m2, &d, 1));
	var("mip_double", (uintptr_t)m2);
	OK(cuMipmappedArrayDestroy(m2));
	EXPECT(cuMipmappedArrayDestroy(m2), CUDA_ERROR_INVALID_HANDLE);
}

/* ------------------------------------------------------------ pool import */

/* Pointers shared through an IPC-capable pool, imported in this same
 * process: the fixture hands out a fresh range (tests/fakecuda/README.md). */
static void
pool_import(void)
{
	CUmemPoolProps pp;
	CUmemoryPool pool, ipool;
	CUmemPoolPtrExportData e;
	CUdeviceptr p[3], q[3], r;
	CUstream s;
	int fd = -1;
	static const size_t size[3] = { 12288, 4096, 8192 };

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	memset(&pp, 0, sizeof(pp));
	pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	pp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	pp.location.id = dev;
	OK(cuMemPoolCreate(&pool, &pp));
	OK(cuMemPoolExportToShareableHandle(&fd, pool,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	OK(cuMemPoolImportFromShareableHandle(&ipool, (void *)(intptr_t)fd,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	close(fd);
	/* an imported pool allocates nothing */
	EXPECT(cuMemAllocFromPoolAsync(&r, 4096, ipool, s), INVAL);
	for (int i = 0; i < 3; i++) {
		OK(cuMemAllocFromPoolAsync(&p[i], size[i], pool, s));
		OK(cuMemPoolExportPointer(&e, p[i]));
		OK(cuMemPoolImportPointer(&q[i], ipool, &e));
		if (q[i] == p[i]) {
			fprintf(stderr, "import %d: the exporter's address\n", i);
			errors++;
		}
	}
	var("imp_leak", q[0]);
	var("imp_async", q[1]);
	var("imp_sync", q[2]);
	/* the importer frees first (cuda.h), then the exporter; the
	 * allocation of the leaked import stays too */
	OK(cuMemFreeAsync(q[1], s));
	OK(cuMemFree(q[2]));
	OK(cuMemFreeAsync(p[1], s));
	OK(cuMemFreeAsync(p[2], s));
	/* the same import freed again */
	EXPECT(cuMemFree(q[2]), INVAL);
	var("imp_double", q[2]);
	/* a pool without a handle type exports nothing */
	CUmemoryPool dpool;
	OK(cuDeviceGetDefaultMemPool(&dpool, dev));
	OK(cuMemAllocFromPoolAsync(&r, 512, dpool, s));
	EXPECT(cuMemPoolExportPointer(&e, r), INVAL);
	OK(cuMemFreeAsync(r, s));
	OK(cuStreamSynchronize(s));
	OK(cuStreamDestroy(s));
}

/* ------------------------------------------------------------ VMM import */

static void
vmm_import(void)
{
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle h, h2, h3;
	CUdeviceptr va;
	size_t gran = 0;
	int fd = -1;
	unsigned char in[64], out[64];

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	OK(cuMemGetAllocationGranularity(&gran, &prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	var("gran", gran);
	OK(cuMemCreate(&h, gran, &prop, 0));
	var("vmm_orig", h);
	OK(cuMemExportToShareableHandle(&fd, h,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	/* two imports: new handles, each to be released */
	OK(cuMemImportFromShareableHandle(&h2, (void *)(intptr_t)fd,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
	OK(cuMemImportFromShareableHandle(&h3, (void *)(intptr_t)fd,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
	close(fd);
	if (h2 == h || h3 == h || h2 == h3) {
		fprintf(stderr, "import gave an existing handle\n");
		errors++;
	}
	var("vmm_leak", h2);
	var("vmm_freed", h3);
	/* the import maps the exporter's memory */
	OK(cuMemAddressReserve(&va, 2 * gran, 0, 0, 0));
	OK(cuMemMap(va, gran, 0, h, 0));
	OK(cuMemMap(va + gran, gran, 0, h3, 0));
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 1);
	OK(cuMemcpyHtoD(va, in, sizeof(in)));
	OK(cuMemcpyDtoH(out, va + gran, sizeof(out)));
	if (memcmp(in, out, sizeof(in)) != 0) {
		fprintf(stderr, "imported handle does not share the memory\n");
		errors++;
	}
	OK(cuMemUnmap(va, 2 * gran));
	OK(cuMemAddressFree(va, 2 * gran));
	OK(cuMemRelease(h3));
	OK(cuMemRelease(h));
	/* released twice; a handle type the allocation was not made for */
	EXPECT(cuMemRelease(h3), INVAL);
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
	OK(cuMemCreate(&h, gran, &prop, 0));
	EXPECT(cuMemExportToShareableHandle(&fd, h,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), INVAL);
	OK(cuMemRelease(h));
	/* a descriptor that is no allocation */
	EXPECT(cuMemImportFromShareableHandle(&h3, (void *)(intptr_t)0,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), INVAL);
}

/* A mipmapped array is no CUarray: the driver refuses cuArrayDestroy of
 * one (nothing is freed), and cuMipmappedArrayDestroy then frees it. */
static void
crosstype(void)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUmipmappedArray m;

	desc3d(&d, 16, 16, 0, CU_AD_FORMAT_FLOAT, 1);
	OK(cuMipmappedArrayCreate(&m, &d, 2));
	var("mip", (uintptr_t)m);
	EXPECT(cuArrayDestroy((CUarray)m), CUDA_ERROR_INVALID_HANDLE);
	OK(cuMipmappedArrayDestroy(m));
}

int
main(int argc, char **argv)
{
	OK(cuInit(0));
	OK(cuDeviceGet(&dev, 0));
	OK(cuDevicePrimaryCtxRetain(&pctx, dev));
	OK(cuCtxSetCurrent(pctx));
	if (argc > 1 && strcmp(argv[1], "crosstype") == 0) {
		crosstype();
	} else if (argc > 1) {
		fprintf(stderr, "usage: %s [crosstype]\n", argv[0]);
		return 99;
	} else {
		arrays();
		pool_import();
		vmm_import();
	}
	printf("errors=%d\n", errors);
	return errors != 0;
}
