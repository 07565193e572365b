/*
 * tp_dlopen.c -- reaches the driver the way cudart does, never linked
 * with it:
 *
 *   tp_dlopen dlsym [hooked]   dlopen("libcuda.so.1") + dlsym of each
 *                              versioned name
 *   tp_dlopen table hooked NAME...  every hooked name is redirected
 *   tp_dlopen gpa [hooked]     dlopen + dlsym("cuGetProcAddress_v2"),
 *                              then every entry point by base name and
 *                              version, with and without the per-thread
 *                              default stream flag (2), and the self-query
 *
 * With "hooked" (under the shim) it also asserts that the pointers handed
 * out are the shim's exports of the exact variant the driver chose (the
 * shim's exports are what RTLD_DEFAULT finds first), and that names the
 * shim does not hook come back untouched.  Leaks: cuMemAlloc_v2 4096,
 * cuMemAllocAsync 8192 (flags 0), cuMemAllocAsync_ptsz 16384 (flags 2),
 * cuMemAllocManaged 32768; gpa ends with the last release of the primary
 * context through the v1 export, which frees the first and the last.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

typedef CUresult (*gpa_v2_t)(const char *, void **, int, cuuint64_t,
    CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa_v1_t)(const char *, void **, int, cuuint64_t);

static int errors;
static int hooked;
static void *lib;

#define FAIL(...) \
	do { \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		errors++; \
	} while (0)

/* The shim's export of name (the first definition in the global scope),
 * or NULL without the shim. */
static void *
shim_export(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

static void *
by_dlsym(const char *name, int should_hook)
{
	void *p = dlsym(lib, name);

	if (p == NULL)
		FAIL("dlsym(%s) = NULL", name);
	else if (hooked && should_hook && p != shim_export(name))
		FAIL("dlsym(%s) not redirected", name);
	else if (hooked && !should_hook && shim_export(name) == p)
		FAIL("dlsym(%s) redirected", name);
	return p;
}

static gpa_v2_t gpa;

static void *
by_gpa(const char *base, int version, cuuint64_t flags, const char *expect)
{
	void *p = NULL;
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	CUresult r = gpa(base, &p, version, flags, &st);

	if (r != CUDA_SUCCESS || p == NULL || st != CU_GET_PROC_ADDRESS_SUCCESS) {
		FAIL("gpa(%s, %d, %llu) = %d, %p, %d", base, version,
		    (unsigned long long)flags, (int)r, p, (int)st);
		return p;
	}
	if (expect[0] == '-') {
		/* not hooked: the driver's own pointer, untouched */
		if (p != dlsym(lib, expect + 1))
			FAIL("gpa(%s) was changed", base);
	} else if (hooked) {
		if (p != shim_export(expect))
			FAIL("gpa(%s, %d, %llu) is not the shim's %s", base,
			    version, (unsigned long long)flags, expect);
	} else if (p != dlsym(lib, expect)) {
		FAIL("gpa(%s) is not the driver's %s", base, expect);
	}
	return p;
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	CUresult (*init)(unsigned int);
	CUresult (*dev_get)(CUdevice *, int);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*set_current)(CUcontext);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t);
	CUresult (*mem_free)(CUdeviceptr);
	CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream);
	CUresult (*alloc_async_pt)(CUdeviceptr *, size_t, CUstream);
	CUresult (*managed)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*stream_sync)(CUstream);
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;

	hooked = argc > 2 && strcmp(argv[2], "hooked") == 0;
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		fprintf(stderr, "%s\n", dlerror());
		return 99;
	}
	/* Names that are not the driver's come back as they are. */
	if (dlsym(lib, "cudnnCreate") != NULL || dlsym(lib, "cuNoSuchThing"))
		FAIL("unknown names resolved");
	if (strcmp(mode, "table") == 0) {
		/* Every hooked name (argv[3..]): under the shim, dlsym of the
		 * driver's handle answers the shim's export of that name when
		 * the driver exports it, NULL when it does not. */
		int n = 0, missing = 0;
		for (int i = 3; i < argc; i++) {
			void *sym = dlsym(lib, argv[i]);
			if (sym == NULL) {
				missing++;
				continue;
			}
			n++;
			if (hooked && sym != shim_export(argv[i]))
				FAIL("dlsym(%s) not redirected", argv[i]);
		}
		printf("exported=%d missing=%d\n", n, missing);
		return errors != 0;
	}
	if (strcmp(mode, "dlsym") == 0) {
		init = (CUresult (*)(unsigned int))by_dlsym("cuInit", 1);
		dev_get = (CUresult (*)(CUdevice *, int))by_dlsym(
		    "cuDeviceGet", 0);
		retain = (CUresult (*)(CUcontext *, CUdevice))by_dlsym(
		    "cuDevicePrimaryCtxRetain", 1);
		set_current = (CUresult (*)(CUcontext))by_dlsym(
		    "cuCtxSetCurrent", 0);
		mem_alloc = (CUresult (*)(CUdeviceptr *, size_t))by_dlsym(
		    "cuMemAlloc_v2", 1);
		mem_free = (CUresult (*)(CUdeviceptr))by_dlsym("cuMemFree_v2",
		    1);
		alloc_async = (CUresult (*)(CUdeviceptr *, size_t, CUstream))
		    by_dlsym("cuMemAllocAsync", 1);
		alloc_async_pt = (CUresult (*)(CUdeviceptr *, size_t,
		    CUstream))by_dlsym("cuMemAllocAsync_ptsz", 1);
		managed = (CUresult (*)(CUdeviceptr *, size_t, unsigned int))
		    by_dlsym("cuMemAllocManaged", 1);
		stream_sync = (CUresult (*)(CUstream))by_dlsym(
		    "cuStreamSynchronize", 0);
	} else if (strcmp(mode, "gpa") == 0) {
		gpa = (gpa_v2_t)by_dlsym("cuGetProcAddress_v2", 1);
		if (gpa == NULL)
			return 1;
		/* The probe cudart makes first. */
		void *none = (void *)1;
		CUdriverProcAddressQueryResult st;
		if (gpa("", &none, 0, 0, &st) != CUDA_SUCCESS || none != NULL)
			FAIL("probe");
		/* The self-query: the 4- and 5-argument functions. */
		gpa_v1_t g1 = (gpa_v1_t)by_gpa("cuGetProcAddress", 11030, 0,
		    "cuGetProcAddress");
		gpa_v2_t g2 = (gpa_v2_t)by_gpa("cuGetProcAddress", 12000, 0,
		    "cuGetProcAddress_v2");
		if (g2 != NULL)
			gpa = g2; /* cudart uses the driver's own answer */
		void *x = NULL;
		if (g1 == NULL || g1("cuMemAlloc", &x, 3020, 0) != CUDA_SUCCESS ||
		    x == NULL || (hooked && x != shim_export("cuMemAlloc_v2")))
			FAIL("v1 lookup of cuMemAlloc");
		init = (CUresult (*)(unsigned int))by_gpa("cuInit", 2000, 0,
		    "cuInit");
		dev_get = (CUresult (*)(CUdevice *, int))by_gpa("cuDeviceGet",
		    2000, 0, "-cuDeviceGet");
		retain = (CUresult (*)(CUcontext *, CUdevice))by_gpa(
		    "cuDevicePrimaryCtxRetain", 7000, 0,
		    "cuDevicePrimaryCtxRetain");
		/* cudart asks for the v1 release/reset at 7000 */
		(void)by_gpa("cuDevicePrimaryCtxRelease", 7000, 0,
		    "cuDevicePrimaryCtxRelease");
		(void)by_gpa("cuDevicePrimaryCtxReset", 11000, 0,
		    "cuDevicePrimaryCtxReset_v2");
		set_current = (CUresult (*)(CUcontext))by_gpa(
		    "cuCtxSetCurrent", 4000, 0, "-cuCtxSetCurrent");
		mem_alloc = (CUresult (*)(CUdeviceptr *, size_t))by_gpa(
		    "cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
		mem_free = (CUresult (*)(CUdeviceptr))by_gpa("cuMemFree", 3020,
		    0, "cuMemFree_v2");
		alloc_async = (CUresult (*)(CUdeviceptr *, size_t, CUstream))
		    by_gpa("cuMemAllocAsync", 11020, 0, "cuMemAllocAsync");
		alloc_async_pt = (CUresult (*)(CUdeviceptr *, size_t,
		    CUstream))by_gpa("cuMemAllocAsync", 11020,
		    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		    "cuMemAllocAsync_ptsz");
		(void)by_gpa("cuMemFreeAsync", 11020,
		    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		    "cuMemFreeAsync_ptsz");
		/* Per-thread flag on a name with no _ptsz variant: legacy */
		managed = (CUresult (*)(CUdeviceptr *, size_t, unsigned int))
		    by_gpa("cuMemAllocManaged", 6000,
		    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		    "cuMemAllocManaged");
		stream_sync = (CUresult (*)(CUstream))by_gpa(
		    "cuStreamSynchronize", 2000, 0, "-cuStreamSynchronize");
	} else {
		fprintf(stderr, "usage: %s dlsym|gpa [hooked]\n", argv[0]);
		return 99;
	}
	if (errors || !init || !dev_get || !retain || !set_current ||
	    !mem_alloc || !mem_free || !alloc_async || !alloc_async_pt ||
	    !managed || !stream_sync) {
		fprintf(stderr, "%d errors\n", errors);
		return 1;
	}
	if (init(0) || dev_get(&dev, 0) || retain(&ctx, dev) ||
	    set_current(ctx))
		FAIL("init");
	if (mem_alloc(&p, 4096))
		FAIL("alloc");
	if (mem_alloc(&p, 100) || mem_free(p))
		FAIL("alloc/free");
	if (alloc_async(&p, 8192, NULL))
		FAIL("async");
	if (alloc_async_pt(&p, 16384, CU_STREAM_PER_THREAD))
		FAIL("async ptsz");
	if (managed(&p, 32768, CU_MEM_ATTACH_GLOBAL))
		FAIL("managed");
	if (stream_sync(NULL))
		FAIL("sync");
	if (strcmp(mode, "gpa") == 0) {
		/* The v1 release cudart asks for at 7000: the last one, so the
		 * primary context's memory goes with it (not the stream-ordered
		 * memory). */
		CUresult (*release)(CUdevice) = (CUresult (*)(CUdevice))by_gpa(
		    "cuDevicePrimaryCtxRelease", 7000, 0,
		    "cuDevicePrimaryCtxRelease");
		if (release == NULL || release(dev))
			FAIL("release");
	}
	printf("errors=%d\n", errors);
	return errors != 0;
}
