/* probe.c: prints, one fact a line, how a CUDA driver answers the calls and
 * edge cases cuwarden depends on, so the simulated driver (tests/fakecuda)
 * can be compared line by line with the real one.
 *
 * It reaches the driver three ways: (1) direct calls (linked with -lcuda),
 * (2) dlopen("libcuda.so.1") + dlsym of versioned names, (3) dlsym of
 * cuGetProcAddress_v2 and lookups by base name and version, flags 0 and 2,
 * as cudart does. Lines never contain addresses; lines whose values differ
 * legitimately between drivers start with "info:" (diff with grep -v '^info:').
 *
 * Self-contained on purpose. On a GPU machine:
 *   gcc -I/usr/local/cuda/include probe.c -o probe -lcuda -ldl && ./probe > real.txt
 * Against the fixture (from the build tree):
 *   LD_LIBRARY_PATH=tests/fakecuda tests/fakecuda/probe > fake.txt
 *   diff <(grep -v '^info:' real.txt) <(grep -v '^info:' fake.txt)
 * `probe fault` instead checks, in a forked child, that dereferencing a device
 * pointer on the host faults ("host deref of device pointer: SIGSEGV").
 * Allocations stay small (a few MiB). Exit status: 0, or 99 when the driver
 * cannot even be initialised.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *
en(CUresult r)
{
	const char *s = NULL;

	if (r == (CUresult)-1)
		return "not run";
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) {
		static char buf[32];

		snprintf(buf, sizeof(buf), "CUresult(%d)", (int)r);
		return buf;
	}
	return s;
}

#define SAY(label, call) printf("%s: %s\n", label, en(call))

static CUcontext primary;
static CUdevice dev0;

/* ============================================================ part 1 */

static const struct {
	const char *name;
	CUdevice_attribute a;
	int info;     /* value legitimately differs between devices */
} attrs[] = {
	{ "CONCURRENT_MANAGED_ACCESS", CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0 },
	{ "MANAGED_MEMORY", CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0 },
	{ "COMPUTE_CAPABILITY_MAJOR", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0 },
	{ "COMPUTE_CAPABILITY_MINOR", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0 },
	{ "MULTIPROCESSOR_COUNT", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1 },
	{ "UNIFIED_ADDRESSING", CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0 },
	{ "MEMORY_POOLS_SUPPORTED", CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0 },
	{ "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED",
	    CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0 },
	{ "PAGEABLE_MEMORY_ACCESS", CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 0 },
	{ "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM",
	    CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, 0 },
	{ "CAN_MAP_HOST_MEMORY", CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 0 },
	{ "INTEGRATED", CU_DEVICE_ATTRIBUTE_INTEGRATED, 0 },
	{ "WARP_SIZE", CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0 },
	{ "HOST_REGISTER_SUPPORTED", CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, 0 },
	{ "DIRECT_MANAGED_MEM_ACCESS_FROM_HOST",
	    CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST, 0 },
	{ "MEMPOOL_SUPPORTED_HANDLE_TYPES", CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 1 },
	{ "TEXTURE_ALIGNMENT", CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 0 },
	{ "STREAM_PRIORITIES_SUPPORTED", CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, 0 },
};

static void
print_attributes(void)
{
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		int v = -12345;
		CUresult r = cuDeviceGetAttribute(&v, attrs[i].a, dev0);

		printf("%sattribute %s: %s %d\n", attrs[i].info ? "info: " : "",
		    attrs[i].name, en(r), v);
	}
	{
		int v = 0;

		SAY("attribute MAX (out of range)",
		    cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, dev0));
		SAY("attribute 0", cuDeviceGetAttribute(&v, (CUdevice_attribute)0, dev0));
		SAY("attribute NULL out", cuDeviceGetAttribute(NULL,
		    CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev0));
		SAY("attribute bad device", cuDeviceGetAttribute(&v,
		    CU_DEVICE_ATTRIBUTE_WARP_SIZE, 9999));
	}
}

static const char *
memtype(unsigned t)
{
	switch (t) {
	case CU_MEMORYTYPE_HOST: return "HOST";
	case CU_MEMORYTYPE_DEVICE: return "DEVICE";
	case CU_MEMORYTYPE_ARRAY: return "ARRAY";
	case CU_MEMORYTYPE_UNIFIED: return "UNIFIED";
	case 0: return "0";
	default: return "?";
	}
}

/* How many of the 16 bytes at buf differ from the 0xAB fill. */
static int
written(const unsigned char *buf)
{
	int last = 0;

	for (int i = 0; i < 16; i++)
		if (buf[i] != 0xAB)
			last = i + 1;
	return last;
}

/* One pointer's attributes; values are described relative to the
 * allocation, never printed as addresses. */
static void
print_pointer(const char *kind, CUdeviceptr p, CUdeviceptr base, CUcontext ctx)
{
	static const struct {
		const char *name;
		CUpointer_attribute a;
	} pa[] = {
		{ "CONTEXT", CU_POINTER_ATTRIBUTE_CONTEXT },
		{ "MEMORY_TYPE", CU_POINTER_ATTRIBUTE_MEMORY_TYPE },
		{ "DEVICE_POINTER", CU_POINTER_ATTRIBUTE_DEVICE_POINTER },
		{ "HOST_POINTER", CU_POINTER_ATTRIBUTE_HOST_POINTER },
		{ "IS_MANAGED", CU_POINTER_ATTRIBUTE_IS_MANAGED },
		{ "DEVICE_ORDINAL", CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL },
		{ "RANGE_START_ADDR", CU_POINTER_ATTRIBUTE_RANGE_START_ADDR },
		{ "RANGE_SIZE", CU_POINTER_ATTRIBUTE_RANGE_SIZE },
		{ "BUFFER_ID", CU_POINTER_ATTRIBUTE_BUFFER_ID },
		{ "MAPPED", CU_POINTER_ATTRIBUTE_MAPPED },
		{ "IS_LEGACY_CUDA_IPC_CAPABLE", CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE },
		{ "MEMPOOL_HANDLE", CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE },
	};

	for (size_t i = 0; i < sizeof(pa) / sizeof(pa[0]); i++) {
		unsigned char buf[16];
		CUresult r;
		char val[64] = "-";
		uint64_t u;

		memset(buf, 0xAB, sizeof(buf));
		r = cuPointerGetAttribute(buf, pa[i].a, p);
		if (r == CUDA_SUCCESS) {
			int w = written(buf);

			u = 0;
			memcpy(&u, buf, w > 8 ? 8 : (size_t)w);
			switch (pa[i].a) {
			case CU_POINTER_ATTRIBUTE_CONTEXT:
				snprintf(val, sizeof(val), "%s", u == 0 ? "NULL" :
				    (CUcontext)(uintptr_t)u == ctx ? "ctx" : "other");
				break;
			case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
				snprintf(val, sizeof(val), "%s", memtype((unsigned)u));
				break;
			case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
			case CU_POINTER_ATTRIBUTE_HOST_POINTER:
				snprintf(val, sizeof(val), "%s", u == 0 ? "NULL" :
				    u == p ? "same" : "other");
				break;
			case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
				snprintf(val, sizeof(val), "%s", u == base ? "base" :
				    u == p ? "ptr" : "other");
				break;
			case CU_POINTER_ATTRIBUTE_BUFFER_ID:
				snprintf(val, sizeof(val), "%s", u ? "nonzero" : "0");
				break;
			case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
				snprintf(val, sizeof(val), "%s", u ? "pool" : "NULL");
				break;
			case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
				snprintf(val, sizeof(val), "%d", (int)(uint32_t)u);
				break;
			default:
				snprintf(val, sizeof(val), "%llu", (unsigned long long)u);
				break;
			}
			printf("ptrattr %s %s: %s %s width=%d\n", kind, pa[i].name, en(r), val, w);
		} else {
			printf("ptrattr %s %s: %s\n", kind, pa[i].name, en(r));
		}
	}
}

/* cuPointerGetAttributes with one attribute at a time: status and how many
 * bytes it wrote (0: left alone). */
static void
print_pointer_each(const char *kind, CUdeviceptr p)
{
	static const struct {
		const char *name;
		CUpointer_attribute a;
	} pa[] = {
		{ "CONTEXT", CU_POINTER_ATTRIBUTE_CONTEXT },
		{ "MEMORY_TYPE", CU_POINTER_ATTRIBUTE_MEMORY_TYPE },
		{ "DEVICE_POINTER", CU_POINTER_ATTRIBUTE_DEVICE_POINTER },
		{ "HOST_POINTER", CU_POINTER_ATTRIBUTE_HOST_POINTER },
		{ "IS_MANAGED", CU_POINTER_ATTRIBUTE_IS_MANAGED },
		{ "DEVICE_ORDINAL", CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL },
		{ "RANGE_START_ADDR", CU_POINTER_ATTRIBUTE_RANGE_START_ADDR },
		{ "RANGE_SIZE", CU_POINTER_ATTRIBUTE_RANGE_SIZE },
		{ "BUFFER_ID", CU_POINTER_ATTRIBUTE_BUFFER_ID },
		{ "MAPPED", CU_POINTER_ATTRIBUTE_MAPPED },
		{ "IS_LEGACY_CUDA_IPC_CAPABLE", CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE },
		{ "MEMPOOL_HANDLE", CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE },
	};

	for (size_t i = 0; i < sizeof(pa) / sizeof(pa[0]); i++) {
		unsigned char buf[16];
		CUpointer_attribute a = pa[i].a;
		void *data[1] = { buf };
		CUresult r;
		uint64_t u = 0;
		int w;

		memset(buf, 0xAB, sizeof(buf));
		r = cuPointerGetAttributes(1, &a, data, p);
		w = written(buf);
		memcpy(&u, buf, w > 8 ? 8 : (size_t)w);
		printf("ptrattrs %s %s: %s width=%d %s\n", kind, pa[i].name, en(r), w,
		    w == 0 ? "-" : u == 0 ? "0" : u == p ? "ptr" : "other");
	}
}

/* cuPointerGetAttributes on one pointer: status and the memory type. */
static void
print_pointer_multi(const char *kind, CUdeviceptr p)
{
	CUpointer_attribute a[3] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	    CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_RANGE_SIZE };
	unsigned type = 77;
	CUcontext c = (CUcontext)(uintptr_t)1;
	size_t size = 77;
	void *data[3] = { &type, &c, &size };
	CUresult r = cuPointerGetAttributes(3, a, data, p);

	printf("ptrattrs %s: %s type=%s ctx=%s size=%zu\n", kind, en(r), memtype(type),
	    c == NULL ? "NULL" : c == primary ? "ctx" : "other", size);
}

static void
part_edges(void)
{
	CUdeviceptr d = 0, d2 = 0, base = 0;
	void *h = NULL, *h2 = NULL;
	size_t f = 0, t = 0, sz = 0, pitch = 0;
	char *plain;

	/* zero sizes and NULL out-pointers */
	SAY("cuMemAlloc zero", cuMemAlloc(&d, 0));
	SAY("cuMemAlloc NULL out", cuMemAlloc(NULL, 4096));
	SAY("cuMemAllocManaged zero", cuMemAllocManaged(&d, 0, CU_MEM_ATTACH_GLOBAL));
	SAY("cuMemAllocManaged bad flags", cuMemAllocManaged(&d, 4096, 0));
	h = (void *)(uintptr_t)1;
	SAY("cuMemHostAlloc zero", cuMemHostAlloc(&h, 0, 0));
	printf("cuMemHostAlloc zero pointer: %s\n", h == NULL ? "NULL" :
	    h == (void *)(uintptr_t)1 ? "unchanged" : "set");
	if (h && h != (void *)(uintptr_t)1)
		SAY("cuMemFreeHost of zero-size", cuMemFreeHost(h));
	h = (void *)(uintptr_t)1;
	SAY("cuMemAllocHost zero", cuMemAllocHost(&h, 0));
	printf("cuMemAllocHost zero pointer: %s\n", h == NULL ? "NULL" :
	    h == (void *)(uintptr_t)1 ? "unchanged" : "set");
	h = NULL;
	SAY("cuMemAllocPitch zero width", cuMemAllocPitch(&d, &pitch, 0, 4, 4));
	d = 1;
	SAY("cuMemAllocAsync zero", cuMemAllocAsync(&d, 0, NULL));
	printf("cuMemAllocAsync zero pointer: %s\n", d == 0 ? "0" : d == 1 ? "unchanged" : "set");
	if (d > 1)
		SAY("cuMemFreeAsync of zero-size", cuMemFreeAsync(d, NULL));
	cuStreamSynchronize(NULL);
	d = 0;

	/* device frees */
	SAY("cuMemAlloc 1000", cuMemAlloc(&d, 1000));
	SAY("cuMemGetAddressRange interior", cuMemGetAddressRange(&base, &sz, d + 100));
	printf("cuMemGetAddressRange interior base: %s\n", base == d ? "base" : "other");
	printf("cuMemGetAddressRange size of 1000: %zu\n", sz);
	SAY("cuMemGetAddressRange NULL outs", cuMemGetAddressRange(NULL, NULL, d));
	print_pointer("device", d + 8, d, primary);
	print_pointer_multi("device", d);
	SAY("cuMemFree interior", cuMemFree(d + 256));
	SAY("cuMemFree", cuMemFree(d));
	SAY("cuMemFree double", cuMemFree(d));
	SAY("cuMemGetAddressRange freed", cuMemGetAddressRange(&base, &sz, d));
	SAY("cuMemFree(0)", cuMemFree(0));
	SAY("cuMemFree unknown", cuMemFree((CUdeviceptr)0x7f0000001000ULL));
	plain = malloc(8192);
	SAY("cuMemFree of malloc pointer", cuMemFree((CUdeviceptr)(uintptr_t)plain));
	SAY("cuMemFreeHost of malloc pointer", cuMemFreeHost(plain));
	SAY("ptrattr malloc MEMORY_TYPE", cuPointerGetAttribute(&f,
	    CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)plain));
	print_pointer_multi("malloc", (CUdeviceptr)(uintptr_t)plain);
	print_pointer_each("malloc", (CUdeviceptr)(uintptr_t)plain);

	/* pitch */
	SAY("cuMemAllocPitch", cuMemAllocPitch(&d, &pitch, 100, 10, 4));
	printf("info: pitch of 100: %zu\n", pitch);
	SAY("cuMemFree pitch", cuMemFree(d));

	/* pinned */
	SAY("cuMemHostAlloc 4096", cuMemHostAlloc(&h, 4096, 0));
	SAY("cuMemAlloc 4096", cuMemAlloc(&d, 4096));
	print_pointer("pinned", (CUdeviceptr)(uintptr_t)h, (CUdeviceptr)(uintptr_t)h, primary);
	print_pointer_multi("pinned", (CUdeviceptr)(uintptr_t)h);
	{
		CUdeviceptr dp = 0;

		SAY("cuMemHostGetDevicePointer pinned",
		    cuMemHostGetDevicePointer(&dp, h, 0));
		printf("cuMemHostGetDevicePointer pinned same: %s\n",
		    dp == (CUdeviceptr)(uintptr_t)h ? "yes" : "no");
		SAY("cuMemHostGetDevicePointer malloc", cuMemHostGetDevicePointer(&dp, plain, 0));
	}
	SAY("cuMemFree of pinned", cuMemFree((CUdeviceptr)(uintptr_t)h));
	SAY("cuMemFreeHost of device", cuMemFreeHost((void *)(uintptr_t)d));
	SAY("cuMemFreeHost interior", cuMemFreeHost((char *)h + 64));
	SAY("cuMemFreeHost", cuMemFreeHost(h));
	SAY("cuMemFreeHost double", cuMemFreeHost(h));
	SAY("cuMemFreeHost(NULL)", cuMemFreeHost(NULL));
	SAY("cuMemFree 4096", cuMemFree(d));
	SAY("cuMemAllocHost 4096", cuMemAllocHost(&h2, 4096));
	SAY("cuMemFreeHost AllocHost", cuMemFreeHost(h2));

	/* registered */
	{
		void *buf = NULL;

		if (posix_memalign(&buf, 4096, 65536) == 0) {
			SAY("cuMemHostRegister", cuMemHostRegister(buf, 65536, 0));
			SAY("cuMemHostRegister again", cuMemHostRegister(buf, 65536, 0));
			SAY("cuMemHostRegister overlap", cuMemHostRegister((char *)buf + 4096, 4096, 0));
			print_pointer("registered", (CUdeviceptr)(uintptr_t)buf + 16,
			    (CUdeviceptr)(uintptr_t)buf, primary);
			SAY("cuMemFree of registered", cuMemFree((CUdeviceptr)(uintptr_t)buf));
			SAY("cuMemFreeHost of registered", cuMemFreeHost(buf));
			SAY("cuMemHostUnregister interior", cuMemHostUnregister((char *)buf + 4096));
			SAY("cuMemHostUnregister", cuMemHostUnregister(buf));
			SAY("cuMemHostUnregister double", cuMemHostUnregister(buf));
			free(buf);
		}
		SAY("cuMemHostRegister zero", cuMemHostRegister(plain, 0, 0));
		SAY("cuMemHostUnregister never registered", cuMemHostUnregister(plain));
	}

	/* managed */
	SAY("cuMemAllocManaged 65536", cuMemAllocManaged(&d2, 65536, CU_MEM_ATTACH_GLOBAL));
	print_pointer("managed", d2 + 8, d2, primary);
	print_pointer_multi("managed", d2);
	{
		CUmemLocation loc = { CU_MEM_LOCATION_TYPE_DEVICE, 0 };
		CUmemLocation host = { CU_MEM_LOCATION_TYPE_HOST, 0 };

		SAY("cuMemAdvise managed read-mostly", cuMemAdvise(d2, 65536,
		    CU_MEM_ADVISE_SET_READ_MOSTLY, loc));
		SAY("cuMemAdvise managed preferred device", cuMemAdvise(d2, 65536,
		    CU_MEM_ADVISE_SET_PREFERRED_LOCATION, loc));
		SAY("cuMemPrefetchAsync managed to device", cuMemPrefetchAsync(d2, 65536, loc, 0, NULL));
		SAY("cuMemPrefetchAsync managed to host", cuMemPrefetchAsync(d2, 65536, host, 0, NULL));
		SAY("cuCtxSynchronize", cuCtxSynchronize());
		SAY("cuMemAlloc 4096", cuMemAlloc(&d, 4096));
		SAY("cuMemAdvise device memory", cuMemAdvise(d, 4096,
		    CU_MEM_ADVISE_SET_READ_MOSTLY, loc));
		SAY("cuMemPrefetchAsync device memory", cuMemPrefetchAsync(d, 4096, loc, 0, NULL));
		SAY("cuMemFree 4096", cuMemFree(d));
	}
	((volatile char *)(uintptr_t)d2)[0] = 1;
	printf("managed host write: ok\n");
	SAY("cuMemFree managed", cuMemFree(d2));
	SAY("cuMemFree managed double", cuMemFree(d2));

	/* cuMemGetInfo */
	SAY("cuMemGetInfo", cuMemGetInfo(&f, &t));
	printf("info: cuMemGetInfo total: %zu\n", t);
	SAY("cuMemGetInfo NULL free", cuMemGetInfo(NULL, &t));
	SAY("cuMemGetInfo NULL total", cuMemGetInfo(&f, NULL));
	SAY("cuMemGetInfo NULL both", cuMemGetInfo(NULL, NULL));
	{
		size_t f1 = 0, f2 = 0;

		cuMemGetInfo(&f1, NULL);
		cuMemAlloc(&d, 64 << 20);
		cuMemGetInfo(&f2, NULL);
		printf("cuMemGetInfo free drops by 64 MiB alloc: %s\n",
		    f1 - f2 >= (64u << 20) && f1 - f2 < (80u << 20) ? "yes" : "no");
		cuMemFree(d);
	}
	free(plain);
}

static void
part_copies(void)
{
	CUdeviceptr d = 0, d2 = 0;
	unsigned char in[4096], out[4096];
	int ok;

	for (int i = 0; i < 4096; i++)
		in[i] = (unsigned char)(i * 7);
	cuMemAlloc(&d, 4096);
	cuMemAlloc(&d2, 4096);
	SAY("cuMemcpyHtoD", cuMemcpyHtoD(d, in, 4096));
	SAY("cuMemcpyDtoD", cuMemcpyDtoD(d2, d, 4096));
	memset(out, 0, sizeof(out));
	SAY("cuMemcpyDtoH", cuMemcpyDtoH(out, d2, 4096));
	printf("memcpy roundtrip: %s\n", memcmp(in, out, 4096) == 0 ? "ok" : "MISMATCH");
	SAY("cuMemsetD8", cuMemsetD8(d, 0x5a, 4096));
	SAY("cuMemsetD32", cuMemsetD32(d + 64, 0x01020304u, 16));
	SAY("cuMemsetD32 misaligned", cuMemsetD32(d + 1, 0, 4));
	SAY("cuMemsetD16 misaligned", cuMemsetD16(d + 1, 0, 4));
	cuMemcpyDtoH(out, d, 4096);
	ok = out[0] == 0x5a && out[63] == 0x5a && out[64] == 0x04 && out[67] == 0x01 &&
	    out[128] == 0x5a;
	printf("memset values: %s\n", ok ? "ok" : "MISMATCH");
	SAY("cuMemcpy unified", cuMemcpy((CUdeviceptr)(uintptr_t)out, d2, 4096));
	SAY("cuMemcpyAsync", cuMemcpyAsync(d, d2, 4096, NULL));
	SAY("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync(d, in, 4096, NULL));
	SAY("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync(out, d, 4096, NULL));
	SAY("cuMemsetD8Async", cuMemsetD8Async(d, 1, 4096, NULL));
	SAY("cuStreamSynchronize NULL", cuStreamSynchronize(NULL));
	SAY("cuMemcpyHtoD past end", cuMemcpyHtoD(d + 4000, in, 4096));
	SAY("cuMemcpyHtoD zero bytes", cuMemcpyHtoD(d, in, 0));
	cuMemFree(d2);
	SAY("cuMemcpyHtoD to freed", cuMemcpyHtoD(d2, in, 16));
	SAY("cuMemcpyDtoH from freed", cuMemcpyDtoH(out, d2, 16));
	cuMemFree(d);
}

static void
part_streams(void)
{
	CUstream s = NULL, nb = NULL;
	CUevent e1 = NULL, e2 = NULL, en1 = NULL;
	float ms = -1;

	SAY("cuStreamCreate", cuStreamCreate(&s, 0));
	SAY("cuStreamCreate bad flags", cuStreamCreate(&nb, 0x100));
	SAY("cuStreamCreateWithPriority", cuStreamCreateWithPriority(&nb, CU_STREAM_NON_BLOCKING, -1));
	SAY("cuStreamQuery idle", cuStreamQuery(s));
	SAY("cuStreamQuery NULL", cuStreamQuery(NULL));
	SAY("cuStreamQuery legacy", cuStreamQuery(CU_STREAM_LEGACY));
	SAY("cuStreamQuery per-thread", cuStreamQuery(CU_STREAM_PER_THREAD));
	SAY("cuEventCreate", cuEventCreate(&e1, 0));
	SAY("cuEventCreate 2", cuEventCreate(&e2, 0));
	SAY("cuEventCreate disable timing", cuEventCreate(&en1, CU_EVENT_DISABLE_TIMING));
	SAY("cuEventQuery unrecorded", cuEventQuery(e1));
	SAY("cuEventElapsedTime unrecorded", cuEventElapsedTime(&ms, e1, e2));
	SAY("cuEventRecord", cuEventRecord(e1, s));
	SAY("cuEventRecord 2", cuEventRecord(e2, s));
	SAY("cuEventRecord no-timing", cuEventRecord(en1, s));
	SAY("cuEventSynchronize", cuEventSynchronize(e2));
	SAY("cuEventQuery recorded", cuEventQuery(e2));
	SAY("cuEventElapsedTime", cuEventElapsedTime(&ms, e1, e2));
	SAY("cuEventElapsedTime no-timing", cuEventElapsedTime(&ms, e1, en1));
	SAY("cuStreamWaitEvent", cuStreamWaitEvent(nb, e1, 0));
	SAY("cuStreamSynchronize", cuStreamSynchronize(s));
	SAY("cuStreamSynchronize per-thread", cuStreamSynchronize(CU_STREAM_PER_THREAD));
	SAY("cuEventDestroy", cuEventDestroy(e1));
	cuEventDestroy(e2);
	cuEventDestroy(en1);
	SAY("cuStreamDestroy", cuStreamDestroy(s));
	SAY("cuStreamDestroy NULL stream", cuStreamDestroy(NULL));
	cuStreamDestroy(nb);
}

static void
part_async(void)
{
	CUdeviceptr a = 0, b = 0, d = 0;
	CUmemoryPool def = NULL, pool = NULL, cur = NULL;
	CUmemPoolProps props;
	CUstream s = NULL;
	cuuint64_t v = 0;

	cuStreamCreate(&s, 0);
	SAY("cuMemAllocAsync", cuMemAllocAsync(&a, 1 << 20, s));
	print_pointer("async", a + 8, a, primary);
	SAY("cuMemFreeAsync", cuMemFreeAsync(a, s));
	SAY("cuStreamSynchronize after free", cuStreamSynchronize(s));
	SAY("cuMemFreeAsync double", cuMemFreeAsync(a, s));
	SAY("cuMemAllocAsync NULL stream", cuMemAllocAsync(&b, 4096, NULL));
	SAY("cuMemFree of async", cuMemFree(b));
	SAY("cuMemFree of async double", cuMemFree(b));
	SAY("cuMemAlloc 4096", cuMemAlloc(&d, 4096));
	SAY("cuMemFreeAsync of cuMemAlloc", cuMemFreeAsync(d, s));
	cuStreamSynchronize(s);
	SAY("cuMemFree after cuMemFreeAsync of cuMemAlloc", cuMemFree(d));
	SAY("cuMemFreeAsync unknown", cuMemFreeAsync((CUdeviceptr)0x7f0000001000ULL, s));
	SAY("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool(&def, dev0));
	SAY("cuDeviceGetMemPool", cuDeviceGetMemPool(&cur, dev0));
	printf("current pool is default: %s\n", cur == def ? "yes" : "no");
	memset(&props, 0, sizeof(props));
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = dev0;
	SAY("cuMemPoolCreate", cuMemPoolCreate(&pool, &props));
	SAY("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync(&a, 4096, pool, s));
	SAY("cuMemPoolGetAttribute USED_MEM_CURRENT",
	    cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
	printf("pool used after 4096: %s\n", v >= 4096 ? ">=4096" : "less");
	v = 0;
	SAY("cuMemPoolSetAttribute RELEASE_THRESHOLD",
	    cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	SAY("cuMemFreeAsync pool", cuMemFreeAsync(a, s));
	cuStreamSynchronize(s);
	SAY("cuMemPoolTrimTo", cuMemPoolTrimTo(pool, 0));
	SAY("cuMemPoolDestroy", cuMemPoolDestroy(pool));
	SAY("cuMemPoolDestroy default", cuMemPoolDestroy(def));
	cuStreamDestroy(s);
}

static void
part_vmm(void)
{
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle hdl = 0, hdl2 = 0;
	CUmemAccessDesc acc;
	CUdeviceptr va = 0, base = 0;
	size_t g = 0, gr = 0, sz = 0;
	unsigned char in[256], out[256];

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev0;
	SAY("cuMemGetAllocationGranularity", cuMemGetAllocationGranularity(&g, &prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	cuMemGetAllocationGranularity(&gr, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	printf("granularity minimum: %zu\n", g);
	printf("granularity recommended: %zu\n", gr);
	SAY("cuMemCreate not multiple", cuMemCreate(&hdl, g + 4096, &prop, 0));
	SAY("cuMemCreate", cuMemCreate(&hdl, g, &prop, 0));
	SAY("cuMemAddressReserve", cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
	SAY("cuMemMap", cuMemMap(va, g, 0, hdl, 0));
	SAY("cuMemMap overlap", cuMemMap(va, g, 0, hdl, 0));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	SAY("cuMemSetAccess", cuMemSetAccess(va, g, &acc, 1));
	print_pointer("vmm", va + 8, va, primary);
	SAY("cuMemGetAddressRange vmm", cuMemGetAddressRange(&base, &sz, va + 100));
	printf("cuMemGetAddressRange vmm: %s %s\n", base == va ? "base" : "other",
	    sz == g ? "granule" : sz == 2 * g ? "reservation" : "other");
	SAY("cuMemRetainAllocationHandle", cuMemRetainAllocationHandle(&hdl2, (void *)(uintptr_t)va));
	printf("retained handle same: %s\n", hdl2 == hdl ? "yes" : "no");
	SAY("cuMemRelease retained", cuMemRelease(hdl2));
	memset(in, 0x3c, sizeof(in));
	SAY("cuMemcpyHtoD vmm", cuMemcpyHtoD(va, in, sizeof(in)));
	SAY("cuMemFree of vmm", cuMemFree(va));
	SAY("cuMemRelease while mapped", cuMemRelease(hdl));
	memset(out, 0, sizeof(out));
	SAY("cuMemcpyDtoH vmm after release", cuMemcpyDtoH(out, va, sizeof(out)));
	printf("vmm data after release: %s\n", memcmp(in, out, sizeof(in)) == 0 ? "ok" : "MISMATCH");
	SAY("cuMemAddressFree while mapped", cuMemAddressFree(va, 2 * g));
	SAY("cuMemUnmap", cuMemUnmap(va, g));
	SAY("cuMemUnmap again", cuMemUnmap(va, g));
	SAY("cuMemUnmap never mapped half", cuMemUnmap(va + g, g));
	SAY("cuMemUnmap outside any reservation", cuMemUnmap((CUdeviceptr)0x7f0000000000ULL, g));
	SAY("cuMemRelease after unmap", cuMemRelease(hdl));
	SAY("cuMemcpyHtoD unmapped", cuMemcpyHtoD(va, in, sizeof(in)));
	SAY("cuMemAddressFree", cuMemAddressFree(va, 2 * g));
	SAY("cuMemAddressFree double", cuMemAddressFree(va, 2 * g));
}

/* What pool mode answers in the driver's place (shim/poolmode.c): ranges past
 * an allocation's end, sets and copies past it, host flags, whether a VMM
 * address is still mapped. */
static void
part_exact(void)
{
	CUdeviceptr d = 0, m = 0, base = 0, r = 0;
	size_t sz = 0, g = 0;
	unsigned int fl = 99;
	void *h = NULL;
	int ord = -7;
	static char buf[8192];

	SAY("exact: cuMemAlloc 1000", cuMemAlloc(&d, 1000));
	SAY("exact: range one past the end", cuMemGetAddressRange(&base, &sz,
	    d + 1000));
	SAY("exact: memset D8 1000", cuMemsetD8(d, 1, 1000));
	SAY("exact: memset D8 past the end", cuMemsetD8(d, 1, 1001));
	SAY("exact: memset D32 past the end", cuMemsetD32(d, 1, 251));
	SAY("exact: memset D8 async past the end", cuMemsetD8Async(d, 1, 1001,
	    NULL));
	SAY("exact: copy HtoD past the end", cuMemcpyHtoD(d, buf, 2000));
	SAY("exact: copy DtoH past the end", cuMemcpyDtoH(buf, d + 500, 600));
	cuCtxSynchronize();
	SAY("exact: cuMemFree", cuMemFree(d));
	SAY("exact: memset D8 freed", cuMemsetD8(d, 1, 16));
	SAY("exact: copy HtoD freed", cuMemcpyHtoD(d, buf, 16));
	SAY("exact: cuMemAllocManaged 1000", cuMemAllocManaged(&m, 1000,
	    CU_MEM_ATTACH_GLOBAL));
	SAY("exact: managed range one past the end", cuMemGetAddressRange(&base,
	    &sz, m + 1000));
	SAY("exact: managed memset past the end", cuMemsetD8(m, 1, 1001));
	cuCtxSynchronize();
	SAY("exact: managed cuMemFree", cuMemFree(m));
	SAY("exact: cuMemAllocHost 1000", cuMemAllocHost(&h, 1000));
	SAY("exact: host flags of AllocHost", cuMemHostGetFlags(&fl, h));
	printf("exact: host flags value of AllocHost: %u\n", fl);
	SAY("exact: cuMemFreeHost", cuMemFreeHost(h));
	SAY("exact: host flags freed", cuMemHostGetFlags(&fl, h));
	h = NULL;
	SAY("exact: cuMemHostAlloc PORTABLE", cuMemHostAlloc(&h, 1000,
	    CU_MEMHOSTALLOC_PORTABLE));
	fl = 99;
	SAY("exact: host flags of PORTABLE", cuMemHostGetFlags(&fl, h));
	printf("exact: host flags value of PORTABLE: %u\n", fl);
	cuMemFreeHost(h);
	h = NULL;
	SAY("exact: cuMemHostAlloc DEVICEMAP", cuMemHostAlloc(&h, 1000,
	    CU_MEMHOSTALLOC_DEVICEMAP));
	fl = 99;
	SAY("exact: host flags of DEVICEMAP", cuMemHostGetFlags(&fl, h));
	printf("exact: host flags value of DEVICEMAP: %u\n", fl);
	cuMemFreeHost(h);

	/* VMM: an address mapped, then only reserved. */
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle mh;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	if (cuMemGetAllocationGranularity(&g, &prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || g == 0)
		return;
	SAY("exact: vmm create", cuMemCreate(&mh, 2 * g, &prop, 0));
	SAY("exact: vmm reserve", cuMemAddressReserve(&r, 2 * g, 0, 0, 0));
	SAY("exact: vmm map", cuMemMap(r, 2 * g, 0, mh, 0));
	SAY("exact: vmm ordinal of mapped", cuPointerGetAttribute(&ord,
	    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, r + g));
	SAY("info: exact: vmm mapping base of mapped", cuPointerGetAttribute(&base,
	    CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, r + g));
	printf("info: exact: vmm mapping base is the reservation: %s\n",
	    base == r ? "yes" : "no");
	SAY("exact: vmm partial unmap", cuMemUnmap(r, g));
	SAY("exact: vmm ordinal after a refused unmap", cuPointerGetAttribute(
	    &ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, r));
	SAY("exact: vmm unmap", cuMemUnmap(r, 2 * g));
	SAY("info: exact: vmm ordinal of unmapped", cuPointerGetAttribute(&ord,
	    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, r));
	SAY("info: exact: vmm mapping base of unmapped", cuPointerGetAttribute(
	    &base, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, r));
	SAY("exact: vmm handle props live", ({ CUmemAllocationProp p2;
	    cuMemGetAllocationPropertiesFromHandle(&p2, mh); }));
	SAY("exact: vmm release", cuMemRelease(mh));
	SAY("info: exact: vmm handle props released", ({ CUmemAllocationProp p2;
	    cuMemGetAllocationPropertiesFromHandle(&p2, mh); }));
	SAY("exact: vmm address free wrong size", cuMemAddressFree(r, g));
	SAY("exact: vmm address free", cuMemAddressFree(r, 2 * g));
	/* (A stream-ordered free on a destroyed stream crashes driver 580
	 * itself, SIGSEGV: not probed.) */
}

/* ================================================== capture and graphs */

/* Stream capture, CUDA graphs with memory nodes and cuStreamAttachMemAsync:
 * what the pools' fence may do during another thread's capture, and the
 * model of graph memory a leak checker needs.  These entry points are
 * looked up at run time, so that the probe builds and runs against a driver
 * that lacks them: each missing one says "info: NAME not exported" and the
 * parts that need it are left out. */
static struct {
	CUresult (*begin)(CUstream, CUstreamCaptureMode);
	CUresult (*begin_v1)(CUstream);
	CUresult (*end)(CUstream, CUgraph *);
	CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *);
	CUresult (*info_v2)(CUstream, CUstreamCaptureStatus *, cuuint64_t *,
	    CUgraph *, const CUgraphNode **, size_t *);
	CUresult (*info_v3)(CUstream, CUstreamCaptureStatus *, cuuint64_t *,
	    CUgraph *, const CUgraphNode **, const CUgraphEdgeData **, size_t *);
	CUresult (*xmode)(CUstreamCaptureMode *);
	CUresult (*attach)(CUstream, CUdeviceptr, size_t, unsigned int);
	CUresult (*create)(CUgraph *, unsigned int);
	CUresult (*destroy)(CUgraph);
	CUresult (*clone)(CUgraph *, CUgraph);
	CUresult (*add_alloc)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    size_t, CUDA_MEM_ALLOC_NODE_PARAMS *);
	CUresult (*alloc_params)(CUgraphNode, CUDA_MEM_ALLOC_NODE_PARAMS *);
	CUresult (*add_free)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    size_t, CUdeviceptr);
	CUresult (*free_params)(CUgraphNode, CUdeviceptr *);
	CUresult (*add_memset)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    size_t, const CUDA_MEMSET_NODE_PARAMS *, CUcontext);
	CUresult (*add_child)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    size_t, CUgraph);
	CUresult (*add_node)(CUgraphNode *, CUgraph, const CUgraphNode *,
	    const CUgraphEdgeData *, size_t, CUgraphNodeParams *);
	CUresult (*get_nodes)(CUgraph, CUgraphNode *, size_t *);
	CUresult (*node_type)(CUgraphNode, CUgraphNodeType *);
	CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
	CUresult (*launch)(CUgraphExec, CUstream);
	CUresult (*exec_destroy)(CUgraphExec);
	CUresult (*trim)(CUdevice);
	CUresult (*mem_attr)(CUdevice, CUgraphMem_attribute, void *);
	int loaded, quiet, have_capture, have_graph;
} G;

static int
g_sym(void *h, const char *name, void *slot)
{
	void *p = h ? dlsym(h, name) : NULL;

	memcpy(slot, &p, sizeof(p));
	if (!p && !G.quiet)
		printf("info: %s not exported\n", name);
	return p != NULL;
}

static void
g_load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	int c = 1, g = 1;

	if (G.loaded)
		return;
	G.loaded = 1;
	c &= g_sym(h, "cuStreamBeginCapture_v2", &G.begin);
	g_sym(h, "cuStreamBeginCapture", &G.begin_v1);
	c &= g_sym(h, "cuStreamEndCapture", &G.end);
	c &= g_sym(h, "cuStreamIsCapturing", &G.is_capturing);
	g_sym(h, "cuStreamGetCaptureInfo_v2", &G.info_v2);
	g_sym(h, "cuStreamGetCaptureInfo_v3", &G.info_v3);
	c &= g_sym(h, "cuThreadExchangeStreamCaptureMode", &G.xmode);
	g_sym(h, "cuStreamAttachMemAsync", &G.attach);
	g &= g_sym(h, "cuGraphCreate", &G.create);
	g &= g_sym(h, "cuGraphDestroy", &G.destroy);
	g &= g_sym(h, "cuGraphClone", &G.clone);
	g &= g_sym(h, "cuGraphAddMemAllocNode", &G.add_alloc);
	g &= g_sym(h, "cuGraphMemAllocNodeGetParams", &G.alloc_params);
	g &= g_sym(h, "cuGraphAddMemFreeNode", &G.add_free);
	g &= g_sym(h, "cuGraphMemFreeNodeGetParams", &G.free_params);
	g &= g_sym(h, "cuGraphAddMemsetNode", &G.add_memset);
	g &= g_sym(h, "cuGraphAddChildGraphNode", &G.add_child);
	g &= g_sym(h, "cuGraphAddNode_v2", &G.add_node);
	g &= g_sym(h, "cuGraphGetNodes", &G.get_nodes);
	g &= g_sym(h, "cuGraphNodeGetType", &G.node_type);
	g &= g_sym(h, "cuGraphInstantiateWithFlags", &G.instantiate);
	g &= g_sym(h, "cuGraphLaunch", &G.launch);
	g &= g_sym(h, "cuGraphExecDestroy", &G.exec_destroy);
	g &= g_sym(h, "cuDeviceGraphMemTrim", &G.trim);
	g &= g_sym(h, "cuDeviceGetGraphMemAttribute", &G.mem_attr);
	G.have_capture = c;
	G.have_graph = c && g;
}

static const char *
cap_status(CUstreamCaptureStatus s)
{
	switch (s) {
	case CU_STREAM_CAPTURE_STATUS_NONE: return "NONE";
	case CU_STREAM_CAPTURE_STATUS_ACTIVE: return "ACTIVE";
	case CU_STREAM_CAPTURE_STATUS_INVALIDATED: return "INVALIDATED";
	default: return "?";
	}
}

static const char *
node_type_name(CUgraphNodeType t)
{
	switch (t) {
	case CU_GRAPH_NODE_TYPE_KERNEL: return "KERNEL";
	case CU_GRAPH_NODE_TYPE_MEMCPY: return "MEMCPY";
	case CU_GRAPH_NODE_TYPE_MEMSET: return "MEMSET";
	case CU_GRAPH_NODE_TYPE_HOST: return "HOST";
	case CU_GRAPH_NODE_TYPE_GRAPH: return "GRAPH";
	case CU_GRAPH_NODE_TYPE_EMPTY: return "EMPTY";
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "WAIT_EVENT";
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "EVENT_RECORD";
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "MEM_ALLOC";
	case CU_GRAPH_NODE_TYPE_MEM_FREE: return "MEM_FREE";
	default: return "OTHER";
	}
}

/* ------------------------------------------------------------ capture */

/* One case: a fresh capture of a fresh stream in a mode, one operation by
 * one thread, then the capture's status and cuStreamEndCapture's answer,
 * so that no line measures a capture an earlier case invalidated. */
enum cap_who { WHO_SAME, WHO_OTHER, WHO_OTHER_RELAXED, WHO_SAME_RELAXED, WHO_N };
static const char *const cap_who_name[] = { "same thread", "other thread",
	"other thread relaxed", "same thread relaxed" };

enum cap_op {
	OP_CTX_SYNC, OP_STREAM_SYNC, OP_EVENT_QUERY, OP_EVENT_SYNC, OP_ALLOC,
	OP_FREE, OP_FREE0, OP_FREE_INTERIOR, OP_HOST, OP_MANAGED, OP_GETINFO,
	OP_ASYNC_OTHER, OP_ASYNC_CAPTURED, OP_RECORD, OP_QUERY_CAPTURING,
	OP_SYNC_CAPTURING, OP_MEMSET_SYNC, OP_N
};
static const char *const cap_op_name[] = {
	"cuCtxSynchronize", "cuStreamSynchronize of another stream",
	"cuEventQuery of another stream's event",
	"cuEventSynchronize of another stream's event", "cuMemAlloc",
	"cuMemFree of an earlier allocation", "cuMemFree(0)",
	"cuMemFree of an interior pointer", "cuMemAllocHost", "cuMemAllocManaged",
	"cuMemGetInfo", "cuMemAllocAsync on another stream",
	"cuMemAllocAsync on the capturing stream",
	"cuEventRecord on the capturing stream",
	"cuStreamQuery of the capturing stream",
	"cuStreamSynchronize of the capturing stream", "cuMemsetD8 (synchronous)",
};
/* modes 0-2 are CUstreamCaptureMode; 3 is cuStreamBeginCapture (v1) */
static const char *const cap_mode_name[] = { "global", "thread_local",
	"relaxed", "v1 begin" };

#define NOT_RUN ((CUresult)-1)
/* a graph that did not instantiate is not launched (a NULL exec could
 * crash a driver) */
#define LAUNCH(e, s) ((e) ? G.launch(e, s) : NOT_RUN)

static CUresult
g_destroy(CUgraph g)
{
	return g ? G.destroy(g) : NOT_RUN;
}

static CUresult
gx_destroy(CUgraphExec e)
{
	return e ? G.exec_destroy(e) : NOT_RUN;
}

struct cap_case {
	enum cap_op op;
	int relax;
	CUstream s, other;
	CUevent ev_other, ev_cap;
	CUdeviceptr pre, dev, managed, async_other;
	void *host;
	int same_addr;
	CUresult r[4];
};

static void
cap_op_run(struct cap_case *c)
{
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
	CUdeviceptr a = 0, b = 0, dp = 0;
	size_t sz = 0, fr = 0, tot = 0;

	if (c->relax)
		G.xmode(&m);
	switch (c->op) {
	case OP_CTX_SYNC: c->r[0] = cuCtxSynchronize(); break;
	case OP_STREAM_SYNC: c->r[0] = cuStreamSynchronize(c->other); break;
	case OP_EVENT_QUERY: c->r[0] = cuEventQuery(c->ev_other); break;
	case OP_EVENT_SYNC: c->r[0] = cuEventSynchronize(c->ev_other); break;
	case OP_ALLOC: c->r[0] = cuMemAlloc(&c->dev, 4096); break;
	case OP_FREE:
		c->r[0] = cuMemFree(c->pre);
		if (c->r[0] == CUDA_SUCCESS)
			c->pre = 0;
		break;
	case OP_FREE0: c->r[0] = cuMemFree(0); break;
	case OP_FREE_INTERIOR: c->r[0] = cuMemFree(c->pre + 256); break;
	case OP_HOST:
		c->r[0] = cuMemAllocHost(&c->host, 4096);
		if (c->r[0] == CUDA_SUCCESS) {
			c->r[1] = cuMemFreeHost(c->host);
			if (c->r[1] == CUDA_SUCCESS)
				c->host = NULL;
		}
		break;
	case OP_MANAGED:
		c->r[0] = cuMemAllocManaged(&c->managed, 4096, CU_MEM_ATTACH_GLOBAL);
		break;
	case OP_GETINFO: c->r[0] = cuMemGetInfo(&fr, &tot); break;
	case OP_ASYNC_OTHER:
		c->r[0] = cuMemAllocAsync(&c->async_other, 4096, c->other);
		break;
	case OP_ASYNC_CAPTURED:
		c->r[0] = cuMemAllocAsync(&a, 4096, c->s);
		if (c->r[0] != CUDA_SUCCESS)
			break;
		c->r[1] = cuPointerGetAttribute(&dp,
		    CU_POINTER_ATTRIBUTE_DEVICE_POINTER, a);
		c->same_addr = dp == a;
		c->r[2] = cuMemGetAddressRange(&b, &sz, a);
		c->r[3] = cuMemFreeAsync(a, c->s);
		break;
	case OP_RECORD:
		c->r[0] = cuEventRecord(c->ev_cap, c->s);
		if (c->r[0] == CUDA_SUCCESS)
			c->r[1] = cuEventQuery(c->ev_cap);
		break;
	case OP_QUERY_CAPTURING: c->r[0] = cuStreamQuery(c->s); break;
	case OP_SYNC_CAPTURING: c->r[0] = cuStreamSynchronize(c->s); break;
	case OP_MEMSET_SYNC: c->r[0] = cuMemsetD8(c->pre, 7, 4096); break;
	default: break;
	}
	if (c->relax)
		G.xmode(&m);    /* back to the mode it had */
}

static void *
cap_thread(void *arg)
{
	cuCtxSetCurrent(primary);
	cap_op_run(arg);
	return NULL;
}

static CUresult
cap_begin(CUstream s, int mode)
{
	return mode == 3 ? G.begin_v1(s) : G.begin(s, (CUstreamCaptureMode)mode);
}

static void
cap_case(int mode, enum cap_who who, enum cap_op op)
{
	struct cap_case c;
	char key[200];
	CUstreamCaptureStatus st = (CUstreamCaptureStatus)99;
	CUgraph g = NULL;
	CUresult r;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.relax = who == WHO_OTHER_RELAXED || who == WHO_SAME_RELAXED;
	for (int i = 0; i < 4; i++)
		c.r[i] = NOT_RUN;
	snprintf(key, sizeof(key), "capture %s, %s, %s", cap_mode_name[mode],
	    cap_who_name[who], cap_op_name[op]);
	cuStreamCreate(&c.s, CU_STREAM_NON_BLOCKING);
	cuStreamCreate(&c.other, CU_STREAM_NON_BLOCKING);
	cuEventCreate(&c.ev_other, CU_EVENT_DISABLE_TIMING);
	cuEventCreate(&c.ev_cap, CU_EVENT_DISABLE_TIMING);
	cuMemAlloc(&c.pre, 1 << 16);
	cuEventRecord(c.ev_other, c.other);
	cuStreamSynchronize(c.other);
	r = cap_begin(c.s, mode);
	if (r != CUDA_SUCCESS) {
		printf("%s, begin: %s\n", key, en(r));
		goto out;
	}
	if (who == WHO_SAME || who == WHO_SAME_RELAXED) {
		cap_op_run(&c);
	} else {
		pthread_t th;

		if (pthread_create(&th, NULL, cap_thread, &c) == 0)
			pthread_join(th, NULL);
	}
	printf("%s: %s\n", key, en(c.r[0]));
	if (op == OP_HOST && c.r[1] != NOT_RUN)
		printf("%s, then cuMemFreeHost: %s\n", key, en(c.r[1]));
	if (op == OP_ASYNC_CAPTURED && c.r[0] == CUDA_SUCCESS) {
		printf("%s, DEVICE_POINTER of it: %s%s\n", key, en(c.r[1]),
		    c.r[1] != CUDA_SUCCESS ? "" : c.same_addr ? " the address" :
		    " another address");
		printf("%s, cuMemGetAddressRange of it: %s\n", key, en(c.r[2]));
		printf("%s, then cuMemFreeAsync: %s\n", key, en(c.r[3]));
	}
	if (op == OP_RECORD && c.r[1] != NOT_RUN)
		printf("%s, then cuEventQuery of it: %s\n", key, en(c.r[1]));
	r = G.is_capturing(c.s, &st);
	printf("%s, status: %s %s\n", key, en(r), cap_status(st));
	printf("%s, end: %s\n", key, en(G.end(c.s, &g)));
	if (g != NULL)
		g_destroy(g);
out:
	cuStreamSynchronize(c.s);
	cuStreamSynchronize(c.other);
	if (c.dev)
		cuMemFree(c.dev);
	if (c.managed)
		cuMemFree(c.managed);
	if (c.host)
		cuMemFreeHost(c.host);
	if (c.async_other) {
		cuMemFreeAsync(c.async_other, c.other);
		cuStreamSynchronize(c.other);
	}
	if (c.pre)
		cuMemFree(c.pre);
	cuEventDestroy(c.ev_other);
	cuEventDestroy(c.ev_cap);
	cuStreamDestroy(c.s);
	cuStreamDestroy(c.other);
}

/* End a capture from another thread than the one that began it. */
struct cap_end_s {
	CUstream s;
	CUgraph g;
	CUresult r;
};

static void *
cap_end_thread(void *arg)
{
	struct cap_end_s *e = arg;

	cuCtxSetCurrent(primary);
	e->r = G.end(e->s, &e->g);
	return NULL;
}

static void
capture_misc(void)
{
	CUstream s, b;
	CUdeviceptr d = 0;
	CUgraph g = NULL, gi = NULL;
	CUstreamCaptureStatus st = (CUstreamCaptureStatus)99;
	cuuint64_t id = 0;
	const CUgraphNode *deps = NULL;
	const CUgraphEdgeData *edges = NULL;
	size_t nd = 99;
	unsigned char byte = 0xff;

	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	cuMemAlloc(&d, 1 << 16);
	cuMemsetD8(d, 0, 1 << 16);
	/* the graph during the capture, and what the capture did not run */
	SAY("capture info, stream not capturing", G.info_v3(s, &st, &id, &gi,
	    &deps, &edges, &nd));
	printf("capture info, stream not capturing, status: %s\n", cap_status(st));
	SAY("capture begin global", G.begin(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	SAY("capture cuMemsetD8Async on the capturing stream",
	    cuMemsetD8Async(d, 0x5a, 4096, s));
	SAY("capture info_v3 during capture", G.info_v3(s, &st, &id, &gi, &deps,
	    &edges, &nd));
	printf("capture info_v3 during capture, status: %s\n", cap_status(st));
	printf("capture info_v3 during capture, dependencies: %zu\n", nd);
	printf("capture info_v3 during capture, id: %s\n", id ? "nonzero" : "0");
	printf("capture info_v3 during capture, graph: %s\n", gi ? "set" : "NULL");
	{
		CUgraph g2 = NULL;
		cuuint64_t id2 = 0;

		SAY("capture info_v2 during capture", G.info_v2(s, &st, &id2, &g2,
		    &deps, &nd));
		printf("capture info_v2 during capture: same graph and id as v3: %s\n",
		    g2 == gi && id2 == id ? "yes" : "no");
	}
	SAY("capture end", G.end(s, &g));
	printf("capture graph from info is the ended one: %s\n", g && g == gi ?
	    "same" : "different");
	cuCtxSynchronize();
	cuMemcpyDtoH(&byte, d, 1);
	printf("capture captured memset ran: %s\n", byte == 0x5a ? "yes" : "no");
	if (g) {
		CUgraphNode n[4];
		size_t nn = 4;
		CUgraphNodeType t = (CUgraphNodeType)99;

		SAY("capture captured graph cuGraphGetNodes", G.get_nodes(g, n, &nn));
		printf("capture captured graph nodes: %zu\n", nn);
		if (nn >= 1 && G.node_type(n[0], &t) == CUDA_SUCCESS)
			printf("capture captured graph node type: %s\n",
			    node_type_name(t));
		g_destroy(g);
		g = NULL;
	}
	SAY("capture end, stream not capturing", G.end(s, &g));
	G.begin(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	SAY("capture begin on a capturing stream", G.begin(s,
	    CU_STREAM_CAPTURE_MODE_GLOBAL));
	G.is_capturing(s, &st);
	printf("capture begin on a capturing stream, status: %s\n", cap_status(st));
	SAY("capture begin on a capturing stream, end", G.end(s, &g));
	if (g)
		g_destroy(g);
	g = NULL;
	SAY("capture begin on the NULL stream", G.begin(NULL,
	    CU_STREAM_CAPTURE_MODE_RELAXED));
	if (G.is_capturing(NULL, &st) == CUDA_SUCCESS &&
	    st != CU_STREAM_CAPTURE_STATUS_NONE) {
		G.end(NULL, &g);
		if (g)
			g_destroy(g);
		g = NULL;
	}
	/* cuStreamEndCapture from another thread, per mode */
	for (int mode = 0; mode < 3; mode++) {
		struct cap_end_s e = { s, NULL, NOT_RUN };
		pthread_t th;
		char key[120];

		G.begin(s, (CUstreamCaptureMode)mode);
		if (pthread_create(&th, NULL, cap_end_thread, &e) == 0)
			pthread_join(th, NULL);
		snprintf(key, sizeof(key), "capture %s, end from another thread",
		    cap_mode_name[mode]);
		SAY(key, e.r);
		if (e.g)
			g_destroy(e.g);
		if (G.is_capturing(s, &st) == CUDA_SUCCESS &&
		    st != CU_STREAM_CAPTURE_STATUS_NONE) {
			printf("capture %s, after it: %s\n", cap_mode_name[mode],
			    cap_status(st));
			snprintf(key, sizeof(key), "capture %s, end by the capturing thread after it",
			    cap_mode_name[mode]);
			SAY(key, G.end(s, &g));
			if (g)
				g_destroy(g);
			g = NULL;
		} else {
			printf("capture %s, after it: NONE\n", cap_mode_name[mode]);
		}
	}
	/* the legacy stream while a blocking or a non-blocking stream captures */
	cuStreamCreate(&b, 0);
	for (int blocking = 0; blocking < 2; blocking++) {
		CUstream c = blocking ? b : s;
		const char *k = blocking ? "blocking" : "non-blocking";
		char key[160];

		G.begin(c, CU_STREAM_CAPTURE_MODE_RELAXED);
		snprintf(key, sizeof(key), "capture relaxed, %s stream, cuMemsetD8Async on the legacy stream", k);
		SAY(key, cuMemsetD8Async(d, 1, 16, CU_STREAM_LEGACY));
		snprintf(key, sizeof(key), "capture relaxed, %s stream, cuMemsetD8Async on the NULL stream", k);
		SAY(key, cuMemsetD8Async(d, 1, 16, NULL));
		/* beside a non-blocking capture the legacy stream's sets may
		 * or may not have ended: info */
		snprintf(key, sizeof(key), "%scapture relaxed, %s stream, cuStreamQuery of the legacy stream",
		    blocking ? "" : "info: ", k);
		SAY(key, cuStreamQuery(CU_STREAM_LEGACY));
		G.is_capturing(c, &st);
		printf("capture relaxed, %s stream, legacy work, status: %s\n", k,
		    cap_status(st));
		snprintf(key, sizeof(key), "capture relaxed, %s stream, legacy work, end", k);
		SAY(key, G.end(c, &g));
		if (g)
			g_destroy(g);
		g = NULL;
		cuCtxSynchronize();
	}
	cuStreamDestroy(b);
	cuMemFree(d);
	cuStreamDestroy(s);
}

static void
part_capture(void)
{
	CUstream s;
	CUdeviceptr m = 0, d = 0;
	void *h = NULL;

	g_load();
	if (!G.have_capture) {
		printf("info: capture: not measured (entry points missing)\n");
		return;
	}
	for (int mode = 0; mode < 3; mode++)
		for (int who = 0; who < WHO_N; who++)
			for (int op = 0; op < OP_N; op++)
				cap_case(mode, (enum cap_who)who, (enum cap_op)op);
	/* the mode cuStreamBeginCapture (v1) captures in */
	if (G.begin_v1) {
		cap_case(3, WHO_SAME, OP_ALLOC);
		cap_case(3, WHO_OTHER, OP_ALLOC);
	}
	if (G.info_v2 && G.info_v3)
		capture_misc();
	if (!G.attach)
		return;

	/* cuStreamAttachMemAsync */
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	cuMemAllocManaged(&m, 1 << 20, CU_MEM_ATTACH_GLOBAL);
	cuMemAlloc(&d, 1 << 20);
	cuMemAllocHost(&h, 4096);
#define ATTACH(label, p, len, fl) do { \
		SAY("attach " label, G.attach(s, p, len, fl)); \
		cuStreamSynchronize(s); \
	} while (0)
	ATTACH("managed base, length 0", m, 0, CU_MEM_ATTACH_SINGLE);
	ATTACH("managed interior, length 0", m + 4096, 0, CU_MEM_ATTACH_SINGLE);
	ATTACH("managed base, length the allocation's size", m, 1 << 20,
	    CU_MEM_ATTACH_SINGLE);
	ATTACH("managed base, a partial length", m, 4096, CU_MEM_ATTACH_SINGLE);
	ATTACH("managed interior with a length", m + 4096, 4096,
	    CU_MEM_ATTACH_SINGLE);
	ATTACH("managed base, longer than the allocation", m, 2 << 20,
	    CU_MEM_ATTACH_SINGLE);
	ATTACH("managed base, CU_MEM_ATTACH_HOST", m, 0, CU_MEM_ATTACH_HOST);
	ATTACH("managed base, CU_MEM_ATTACH_GLOBAL", m, 0, CU_MEM_ATTACH_GLOBAL);
	ATTACH("managed base, bad flags", m, 0, 8);
	ATTACH("device memory (cuMemAlloc), length 0", d, 0, CU_MEM_ATTACH_SINGLE);
	ATTACH("device memory (cuMemAlloc), whole length", d, 1 << 20,
	    CU_MEM_ATTACH_SINGLE);
	ATTACH("pinned host memory", (CUdeviceptr)(uintptr_t)h, 0,
	    CU_MEM_ATTACH_SINGLE);
#undef ATTACH
	cuStreamSynchronize(s);
	cuMemFreeHost(h);
	cuMemFree(d);
	cuMemFree(m);
	cuStreamDestroy(s);
}

/* -------------------------------------------------------------- graphs */

static void
gmem(const char *when)
{
	cuuint64_t u = 0, r = 0;
	CUresult ru = G.mem_attr(dev0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &u);
	CUresult rr = G.mem_attr(dev0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &r);

	printf("graph mem %s, USED_MEM_CURRENT: %s %llu\n", when, en(ru),
	    (unsigned long long)u);
	printf("graph mem %s, RESERVED_MEM_CURRENT: %s %llu\n", when, en(rr),
	    (unsigned long long)r);
}

/* Host-side questions about a graph allocation's address: no access. */
static void
gptr(const char *when, CUdeviceptr p, size_t size)
{
	CUdeviceptr dp = 0, base = 0;
	size_t sz = 0;
	CUresult r = cuPointerGetAttribute(&dp,
	    CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p);

	printf("graph %s, DEVICE_POINTER: %s%s\n", when, en(r),
	    r != CUDA_SUCCESS ? "" : dp == p ? " the address" : " another address");
	r = cuMemGetAddressRange(&base, &sz, p);
	printf("graph %s, cuMemGetAddressRange: %s%s\n", when, en(r),
	    r != CUDA_SUCCESS ? "" : base == p && sz == size ? " base, size" :
	    base == p ? " base, another size" : " another base");
}

static CUresult
galloc(CUgraphNode *n, CUgraph g, const CUgraphNode *dep, size_t ndep,
    size_t bytes, CUdeviceptr *out)
{
	CUDA_MEM_ALLOC_NODE_PARAMS p;
	CUresult r;

	memset(&p, 0, sizeof(p));
	p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.poolProps.location.id = 0;
	p.bytesize = bytes;
	r = G.add_alloc(n, g, dep, ndep, &p);
	*out = r == CUDA_SUCCESS ? p.dptr : 0;
	return r;
}

static void
gtypes(const char *label, CUgraph g)
{
	CUgraphNode n[16];
	size_t nn = 16;
	CUresult r = G.get_nodes(g, n, &nn);

	printf("%s: %s %zu", label, en(r), r == CUDA_SUCCESS ? nn : 0);
	for (size_t i = 0; r == CUDA_SUCCESS && i < nn && i < 16; i++) {
		CUgraphNodeType t = (CUgraphNodeType)99;

		G.node_type(n[i], &t);
		printf(" %s", node_type_name(t));
	}
	printf("\n");
}

/* The graph-memory lifecycle, step by step. */
static void
part_graph(void)
{
	CUstream s;
	CUgraph g1 = NULL, gtmp = NULL;
	CUgraphExec e1 = NULL, etmp = NULL;
	CUgraphNode a1 = NULL, a2 = NULL, ms = NULL, f1 = NULL, ntmp = NULL;
	CUdeviceptr p1 = 0, p2 = 0, ptmp = 0;
	const size_t s1 = 1 << 20, s2 = (3 << 20) + 4096;
	CUresult r;

	g_load();
	if (!G.have_graph) {
		printf("info: graph: not measured (entry points missing)\n");
		return;
	}
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	SAY("graph cuDeviceGraphMemTrim at start", G.trim(dev0));
	gmem("at start");
	SAY("graph cuGraphCreate", G.create(&g1, 0));
	r = galloc(&a1, g1, NULL, 0, s1, &p1);
	printf("graph alloc node 1 MiB: %s\n", en(r));
	printf("graph alloc node 1 MiB, dptr: %s\n", p1 ? "set" : "0");
	r = galloc(&a2, g1, &a1, 1, s2, &p2);
	printf("graph alloc node 3 MiB+4096: %s\n", en(r));
	printf("graph alloc node 3 MiB+4096, dptr: %s\n", p2 ? "set" : "0");
	printf("graph alloc nodes' ranges: %s\n", p1 + s1 <= p2 || p2 + s2 <= p1 ?
	    "disjoint" : "overlap");
	{
		CUDA_MEM_ALLOC_NODE_PARAMS q;

		memset(&q, 0, sizeof(q));
		SAY("graph cuGraphMemAllocNodeGetParams", G.alloc_params(a1, &q));
		printf("graph cuGraphMemAllocNodeGetParams, dptr: %s\n", q.dptr == p1 ?
		    "the node's" : "another");
		printf("graph cuGraphMemAllocNodeGetParams, bytesize: %zu\n", q.bytesize);
		printf("graph cuGraphMemAllocNodeGetParams, location: %d %d\n",
		    (int)q.poolProps.location.type, q.poolProps.location.id);
	}
	gptr("before launch, 1 MiB", p1, s1);
	gmem("after adding alloc nodes");
	{
		CUDA_MEMSET_NODE_PARAMS mp;

		memset(&mp, 0, sizeof(mp));
		mp.dst = p1;
		mp.value = 0x5a;
		mp.elementSize = 1;
		mp.width = s1;
		mp.height = 1;
		SAY("graph memset node on the allocation", G.add_memset(&ms, g1, &a2,
		    1, &mp, primary));
	}
	SAY("graph free node", G.add_free(&f1, g1, &ms, 1, p1));
	{
		CUdeviceptr q = 0;

		SAY("graph cuGraphMemFreeNodeGetParams", G.free_params(f1, &q));
		printf("graph cuGraphMemFreeNodeGetParams, dptr: %s\n", q == p1 ?
		    "the allocation's" : "another");
	}
	gtypes("graph nodes", g1);
	{
		CUdeviceptr d = 0;

		cuMemAlloc(&d, 4096);
		CUgraphNode x = NULL, y = NULL, z = NULL;

		G.create(&gtmp, 0);
		galloc(&x, gtmp, NULL, 0, s1, &ptmp);
		G.add_free(&y, gtmp, &x, 1, ptmp);
		SAY("graph second free node of the same allocation", G.add_free(&z,
		    gtmp, &y, 1, ptmp));
		g_destroy(gtmp);
		G.create(&gtmp, 0);
		SAY("graph free node of a cuMemAlloc pointer", G.add_free(&ntmp,
		    gtmp, NULL, 0, d));
		SAY("graph free node of an unknown address", G.add_free(&ntmp,
		    gtmp, NULL, 0, (CUdeviceptr)4096));
		g_destroy(gtmp);
		gtmp = NULL;
		cuMemFree(d);
	}
	SAY("graph cuGraphInstantiateWithFlags", G.instantiate(&e1, g1, 0));
	gmem("after instantiate");
	r = G.instantiate(&etmp, g1, 0);
	printf("graph second instantiate while the first exec exists: %s\n", en(r));
	if (r == CUDA_SUCCESS)
		gx_destroy(etmp);
	etmp = NULL;
	SAY("graph cuGraphLaunch", LAUNCH(e1, s));
	SAY("graph cuStreamSynchronize after launch", cuStreamSynchronize(s));
	gmem("after launch");
	gptr("after launch, 1 MiB (freed by its node)", p1, s1);
	gptr("after launch, 3 MiB+4096 (no free node)", p2, s2);
	{
		unsigned char b[2] = { 0, 0 };

		SAY("graph after launch, cuMemsetD8 of the live allocation",
		    cuMemsetD8(p2, 0x33, s2));
		cuMemcpyDtoH(&b[0], p2, 1);
		cuMemcpyDtoH(&b[1], p2 + s2 - 1, 1);
		printf("graph after launch, the live allocation reads back: %s\n",
		    b[0] == 0x33 && b[1] == 0x33 ? "ok" : "wrong");
	}
	SAY("graph relaunch while an allocation is live", LAUNCH(e1, s));
	SAY("graph cuStreamSynchronize after the refused relaunch",
	    cuStreamSynchronize(s));
	gmem("after the refused relaunch");
	SAY("graph cuMemFree of a live graph allocation", cuMemFree(p2));
	SAY("graph cuMemFree of it again", cuMemFree(p2));
	gptr("after cuMemFree", p2, s2);
	gmem("after cuMemFree");
	SAY("graph relaunch after cuMemFree", LAUNCH(e1, s));
	cuStreamSynchronize(s);
	gptr("after the second launch", p2, s2);
	gmem("after the second launch");
	SAY("graph cuMemFreeAsync of a live graph allocation", cuMemFreeAsync(p2, s));
	SAY("graph cuStreamSynchronize after cuMemFreeAsync", cuStreamSynchronize(s));
	gptr("after cuMemFreeAsync", p2, s2);
	gmem("after cuMemFreeAsync");
	SAY("graph cuDeviceGraphMemTrim", G.trim(dev0));
	gmem("after trim");

	/* cuGraphClone, and a second exec of the clone */
	{
		CUgraph c = NULL;
		CUgraphExec ec = NULL;

		r = G.clone(&c, g1);
		printf("graph cuGraphClone of a graph with memory nodes: %s\n", en(r));
		if (r == CUDA_SUCCESS) {
			CUgraphNode n[16];
			size_t nn = 16;
			CUdeviceptr cp = 0;

			gtypes("graph clone's nodes", c);
			if (G.get_nodes(c, n, &nn) == CUDA_SUCCESS) {
				for (size_t i = 0; i < nn && i < 16; i++) {
					CUgraphNodeType t;
					CUDA_MEM_ALLOC_NODE_PARAMS q;

					if (G.node_type(n[i], &t) == CUDA_SUCCESS &&
					    t == CU_GRAPH_NODE_TYPE_MEM_ALLOC &&
					    G.alloc_params(n[i], &q) == CUDA_SUCCESS &&
					    cp == 0)
						cp = q.dptr;
				}
			}
			printf("graph clone's first alloc node dptr: %s\n", cp == p1 ?
			    "the original's" : cp == p2 ? "the original's second" :
			    cp ? "another" : "none");
			r = G.instantiate(&ec, c, 0);
			printf("graph instantiate the clone while the original's exec exists: %s\n",
			    en(r));
			if (r == CUDA_SUCCESS)
				gx_destroy(ec);
			g_destroy(c);
		}
	}
	SAY("graph cuGraphExecDestroy", gx_destroy(e1));
	e1 = NULL;
	r = G.instantiate(&e1, g1, 0);
	printf("graph instantiate again after cuGraphExecDestroy: %s\n", en(r));
	if (r == CUDA_SUCCESS)
		gx_destroy(e1);
	e1 = NULL;

	/* AUTO_FREE_ON_LAUNCH; then exec and graph destroyed while live */
	G.create(&gtmp, 0);
	galloc(&ntmp, gtmp, NULL, 0, s1, &ptmp);
	r = G.instantiate(&etmp, gtmp, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
	printf("graph instantiate AUTO_FREE_ON_LAUNCH: %s\n", en(r));
	if (r == CUDA_SUCCESS) {
		SAY("graph auto-free launch", LAUNCH(etmp, s));
		cuStreamSynchronize(s);
		gptr("auto-free, after launch", ptmp, s1);
		SAY("graph auto-free relaunch while an allocation is live",
		    LAUNCH(etmp, s));
		SAY("graph auto-free cuStreamSynchronize after relaunch",
		    cuStreamSynchronize(s));
		gptr("auto-free, after relaunch", ptmp, s1);
		gmem("auto-free, after relaunch");
		SAY("graph cuGraphExecDestroy while an allocation is live",
		    gx_destroy(etmp));
		gptr("after cuGraphExecDestroy while live", ptmp, s1);
		gmem("after cuGraphExecDestroy while live");
	}
	etmp = NULL;
	SAY("graph cuGraphDestroy while an allocation is live", g_destroy(gtmp));
	gtmp = NULL;
	gptr("after cuGraphDestroy while live", ptmp, s1);
	{
		unsigned char b = 0;

		CUdeviceptr base = 0;
		size_t sz = 0;

		/* only live memory is touched (see graphrisk) */
		if (cuMemGetAddressRange(&base, &sz, ptmp) == CUDA_SUCCESS) {
			SAY("graph after exec and graph destroyed, cuMemsetD8",
			    cuMemsetD8(ptmp, 0x44, s1));
			cuMemcpyDtoH(&b, ptmp, 1);
			printf("graph after exec and graph destroyed, reads back: %s\n",
			    b == 0x44 ? "ok" : "wrong");
		} else {
			printf("graph after exec and graph destroyed, cuMemsetD8: not live\n");
		}
	}
	SAY("graph cuMemFree after exec and graph destroyed", cuMemFree(ptmp));
	gmem("after that cuMemFree");
	ptmp = 0;

	/* an alloc node's address never launched */
	G.create(&gtmp, 0);
	galloc(&ntmp, gtmp, NULL, 0, s1, &ptmp);
	SAY("graph cuMemFree of an alloc node's address before instantiate",
	    cuMemFree(ptmp));
	G.instantiate(&etmp, gtmp, 0);
	gptr("never launched", ptmp, s1);
	SAY("graph cuMemFree of an alloc node's address never launched",
	    cuMemFree(ptmp));
	SAY("graph launch after those frees", LAUNCH(etmp, s));
	cuStreamSynchronize(s);
	gptr("never launched, then launched", ptmp, s1);
	cuMemFree(ptmp);
	gx_destroy(etmp);
	g_destroy(gtmp);
	etmp = NULL;
	gtmp = NULL;
	ptmp = 0;

	/* a graph whose free node frees another graph's allocation */
	{
		CUgraph ga = NULL, gb = NULL;
		CUgraphExec ea = NULL, eb = NULL;
		CUgraphNode na, nb;
		CUdeviceptr pa = 0;

		G.create(&ga, 0);
		galloc(&na, ga, NULL, 0, s1, &pa);
		G.create(&gb, 0);
		SAY("graph free node of another graph's allocation", G.add_free(&nb,
		    gb, NULL, 0, pa));
		SAY("graph instantiate the allocating graph", G.instantiate(&ea, ga, 0));
		SAY("graph instantiate the freeing graph", G.instantiate(&eb, gb, 0));
		SAY("graph launch the allocating graph", LAUNCH(ea, s));
		cuStreamSynchronize(s);
		gptr("cross-graph, after the allocating launch", pa, s1);
		SAY("graph launch the freeing graph", LAUNCH(eb, s));
		SAY("graph cuStreamSynchronize after the freeing launch",
		    cuStreamSynchronize(s));
		gptr("cross-graph, after the freeing launch", pa, s1);
		SAY("graph relaunch the allocating graph after the other freed it",
		    LAUNCH(ea, s));
		cuStreamSynchronize(s);
		gptr("cross-graph, after the relaunch", pa, s1);
		cuMemFree(pa);
		if (ea)
			gx_destroy(ea);
		if (eb)
			gx_destroy(eb);
		g_destroy(ga);
		g_destroy(gb);
	}

	/* a graph with memory nodes as a child graph node */
	{
		CUgraph child = NULL, parent = NULL;
		CUgraphExec ep = NULL;
		CUgraphNode nc, np;
		CUdeviceptr pc = 0;

		G.create(&child, 0);
		galloc(&nc, child, NULL, 0, s1, &pc);
		G.create(&parent, 0);
		r = G.add_child(&np, parent, NULL, 0, child);
		printf("graph child graph node with an alloc node: %s\n", en(r));
		if (r == CUDA_SUCCESS) {
			r = G.instantiate(&ep, parent, 0);
			printf("graph instantiate a parent of memory nodes: %s\n", en(r));
			if (r == CUDA_SUCCESS) {
				SAY("graph launch a parent of memory nodes", LAUNCH(ep, s));
				cuStreamSynchronize(s);
				gptr("child graph's allocation after the launch", pc, s1);
				cuMemFree(pc);
				gx_destroy(ep);
			}
		}
		g_destroy(parent);
		g_destroy(child);
	}

	/* captured cuMemAllocAsync + cuMemFreeAsync, and an alloc alone */
	for (int withfree = 1; withfree >= 0; withfree--) {
		CUgraph gc = NULL;
		CUgraphExec ec = NULL;
		CUdeviceptr a = 0;
		const char *k = withfree ? "captured alloc and free" :
		    "captured alloc alone";
		char key[160];

		G.begin(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
		snprintf(key, sizeof(key), "graph %s, cuMemAllocAsync", k);
		SAY(key, cuMemAllocAsync(&a, s1, s));
		snprintf(key, sizeof(key), "graph %s, cuMemsetD8Async", k);
		SAY(key, cuMemsetD8Async(a, 0x66, s1, s));
		if (withfree) {
			snprintf(key, sizeof(key), "graph %s, cuMemFreeAsync", k);
			SAY(key, cuMemFreeAsync(a, s));
		}
		snprintf(key, sizeof(key), "graph %s, end", k);
		SAY(key, G.end(s, &gc));
		if (!gc)
			continue;
		snprintf(key, sizeof(key), "graph %s, nodes", k);
		gtypes(key, gc);
		{
			CUgraphNode n[16];
			size_t nn = 16;
			const char *rel = "none";

			if (G.get_nodes(gc, n, &nn) == CUDA_SUCCESS)
				for (size_t i = 0; i < nn && i < 16; i++) {
					CUgraphNodeType t;
					CUDA_MEM_ALLOC_NODE_PARAMS q;

					if (G.node_type(n[i], &t) == CUDA_SUCCESS &&
					    t == CU_GRAPH_NODE_TYPE_MEM_ALLOC &&
					    G.alloc_params(n[i], &q) == CUDA_SUCCESS)
						rel = q.dptr == a ? "the captured address" :
						    "another";
				}
			printf("graph %s, alloc node dptr: %s\n", k, rel);
		}
		snprintf(key, sizeof(key), "graph %s, before launch", k);
		gptr(key, a, s1);
		snprintf(key, sizeof(key), "graph %s, instantiate", k);
		SAY(key, G.instantiate(&ec, gc, 0));
		snprintf(key, sizeof(key), "graph %s, launch", k);
		SAY(key, LAUNCH(ec, s));
		cuStreamSynchronize(s);
		snprintf(key, sizeof(key), "graph %s, after launch", k);
		gptr(key, a, s1);
		gmem(key);
		if (!withfree) {
			unsigned char b = 0;

			cuMemcpyDtoH(&b, a, 1);
			printf("graph %s, after launch, reads the captured memset: %s\n",
			    k, b == 0x66 ? "yes" : "no");
			snprintf(key, sizeof(key), "graph %s, cuMemFree after launch", k);
			SAY(key, cuMemFree(a));
		}
		gx_destroy(ec);
		g_destroy(gc);
	}

	/* cuGraphAddNode_v2 with a CU_GRAPH_NODE_TYPE_MEM_ALLOC node */
	{
		CUgraphNodeParams np;
		CUgraphNode n;
		CUDA_MEM_ALLOC_NODE_PARAMS q;

		G.create(&gtmp, 0);
		memset(&np, 0, sizeof(np));
		np.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
		np.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
		np.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		np.alloc.poolProps.location.id = 0;
		np.alloc.bytesize = s1;
		r = G.add_node(&n, gtmp, NULL, NULL, 0, &np);
		printf("graph cuGraphAddNode_v2 MEM_ALLOC: %s\n", en(r));
		printf("graph cuGraphAddNode_v2 MEM_ALLOC, dptr: %s\n",
		    np.alloc.dptr ? "set" : "0");
		if (r == CUDA_SUCCESS) {
			memset(&q, 0, sizeof(q));
			G.alloc_params(n, &q);
			printf("graph cuGraphAddNode_v2 MEM_ALLOC, GetParams dptr: %s\n",
			    q.dptr == np.alloc.dptr ? "the node's" : "another");
			memset(&np, 0, sizeof(np));
			np.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
			np.free.dptr = q.dptr;
			SAY("graph cuGraphAddNode_v2 MEM_FREE", G.add_node(&ntmp,
			    gtmp, &n, NULL, 1, &np));
			gtypes("graph cuGraphAddNode_v2 nodes", gtmp);
		}
		g_destroy(gtmp);
		gtmp = NULL;
	}
	SAY("graph cuDeviceGraphMemTrim at the end", G.trim(dev0));
	gmem("at the end");
	g_destroy(g1);
	cuStreamDestroy(s);

	/* Device accesses to a graph address that is not live could fault the
	 * context on a real GPU: measured in a child, this program again. */
	for (int which = 1; which <= 7; which++) {
		char arg[8];
		pid_t pid;
		int st = 0;

		snprintf(arg, sizeof(arg), "%d", which);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			unsetenv("FAKECUDA_CALL_LOG");
			unsetenv("FAKECUDA_FAIL_CALL");
			execl("/proc/self/exe", "probe", "graphrisk", arg, (char *)NULL);
			_exit(127);
		}
		if (pid > 0 && waitpid(pid, &st, 0) == pid)
			printf("graph risky %d, child: %s\n", which, WIFEXITED(st) ?
			    (WEXITSTATUS(st) == 0 ? "exit 0" : "exit nonzero") :
			    "killed by a signal");
	}
}

/* probe graphrisk N: one access to a graph allocation that is not live,
 * each in a process of its own (a fault is sticky: it would spoil the
 * cases after it); then whether the context still works. */
static int
graph_risk_child(int which)
{
	CUdevice dv;
	CUcontext c;
	CUgraph g = NULL;
	CUgraphExec e = NULL;
	CUgraphNode a = NULL, f = NULL;
	CUstream s;
	CUdeviceptr p = 0, d = 0;
	char key[160];

	if (cuInit(0) || cuDeviceGet(&dv, 0) ||
	    cuDevicePrimaryCtxRetain(&c, dv) || cuCtxSetCurrent(c))
		return 99;
	primary = c;
	dev0 = dv;
	G.quiet = 1;     /* the parent reported the lookups */
	g_load();
	if (!G.have_graph)
		return 0;
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	G.create(&g, 0);
	galloc(&a, g, NULL, 0, 1 << 20, &p);
	if (which != 5 && which != 6)
		G.add_free(&f, g, &a, 1, p);
	G.instantiate(&e, g, 0);
	switch (which) {
	case 1:
		SAY("graph risky 1: cuMemFreeAsync of an alloc node's address never launched",
		    cuMemFreeAsync(p, s));
		SAY("graph risky 1: cuStreamSynchronize after it", cuStreamSynchronize(s));
		break;
	case 2:
		SAY("graph risky 2: cuMemsetD8 before any launch", cuMemsetD8(p, 1, 4096));
		SAY("graph risky 2: cuCtxSynchronize after it", cuCtxSynchronize());
		break;
	case 3:
		SAY("graph risky 3: cuMemsetD8Async before any launch",
		    cuMemsetD8Async(p, 1, 4096, s));
		SAY("graph risky 3: cuStreamSynchronize after it", cuStreamSynchronize(s));
		break;
	case 4:
		SAY("graph risky 4: launch", LAUNCH(e, s));
		cuStreamSynchronize(s);
		SAY("graph risky 4: cuMemsetD8 after the free node ran",
		    cuMemsetD8(p, 1, 4096));
		SAY("graph risky 4: cuCtxSynchronize after it", cuCtxSynchronize());
		break;
	case 5:
		SAY("graph risky 5: launch", LAUNCH(e, s));
		cuStreamSynchronize(s);
		SAY("graph risky 5: cuMemFreeAsync of the live allocation",
		    cuMemFreeAsync(p, s));
		SAY("graph risky 5: cuStreamSynchronize after it", cuStreamSynchronize(s));
		SAY("graph risky 5: cuMemFreeAsync of it again", cuMemFreeAsync(p, s));
		SAY("graph risky 5: cuStreamSynchronize after that",
		    cuStreamSynchronize(s));
		break;
	case 6: {
		/* Graph memory and the primary context's reset. */
		CUdeviceptr start = 0;
		SAY("graph risky 6: launch", LAUNCH(e, s));
		cuStreamSynchronize(s);
		SAY("graph risky 6: cuDevicePrimaryCtxReset with graph memory live",
		    cuDevicePrimaryCtxReset(dv));
		SAY("graph risky 6: retain", cuDevicePrimaryCtxRetain(&c, dv));
		cuCtxSetCurrent(c);
		CUresult r = cuPointerGetAttribute(&start,
		    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p);
		printf("graph risky 6: after the reset, RANGE_START_ADDR: %s %s\n",
		    en(r), r == CUDA_SUCCESS && start == p ? "the allocation's" :
		    "-");
		SAY("graph risky 6: cuMemFree of it after the reset", cuMemFree(p));
		e = NULL; /* the reset took the exec */
		g = NULL;
		cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
		break;
	}
	case 7: {
		/* A captured cuMemFreeAsync of cuMemAlloc memory (a free node
		 * can free graph memory only). */
		CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
		CUdeviceptr x = 0;
		CUgraph cg = NULL;
		cuMemAlloc(&x, 65536);
		G.begin(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
		SAY("graph risky 7: captured cuMemFreeAsync of a cuMemAlloc pointer",
		    cuMemFreeAsync(x, s));
		G.is_capturing(s, &cs);
		printf("graph risky 7: the capture after it: %s\n",
		    cs == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "ACTIVE" :
		    cs == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? "INVALIDATED" :
		    "NONE");
		SAY("graph risky 7: end", G.end(s, &cg));
		if (cg != NULL)
			g_destroy(cg);
		SAY("graph risky 7: cuMemFree of it after the capture", cuMemFree(x));
		break;
	}
	default:
		break;
	}
	snprintf(key, sizeof(key), "graph risky %d: cuMemAlloc afterwards", which);
	SAY(key, cuMemAlloc(&d, 4096));
	if (d)
		cuMemFree(d);
	gx_destroy(e);
	g_destroy(g);
	return 0;
}

static void
part_ipc(void)
{
	CUipcMemHandle ih;
	CUdeviceptr d = 0, a = 0, o = 0;

	cuMemAlloc(&d, 1 << 20);
	SAY("cuIpcGetMemHandle", cuIpcGetMemHandle(&ih, d));
	SAY("cuIpcGetMemHandle interior", cuIpcGetMemHandle(&ih, d + 4096));
	SAY("cuIpcOpenMemHandle own process", cuIpcOpenMemHandle(&o, ih,
	    CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
	SAY("cuIpcCloseMemHandle not opened", cuIpcCloseMemHandle(d));
	cuMemAllocAsync(&a, 4096, NULL);
	cuStreamSynchronize(NULL);
	SAY("cuIpcGetMemHandle of async (default pool)", cuIpcGetMemHandle(&ih, a));
	cuMemFreeAsync(a, NULL);
	cuStreamSynchronize(NULL);
	/* What another process opens from a handle of an interior pointer:
	 * the allocation's base, or the pointer given (pool mode would
	 * forward an interior pointer of its segment).  The child is this
	 * program again (CUDA is unusable in a forked child until exec). */
	{
		CUipcMemHandle hb, hi;
		cuMemsetD8(d, 0x11, 4096);
		cuMemsetD8(d + 4096, 0x22, 4096);
		cuCtxSynchronize();
		if (cuIpcGetMemHandle(&hb, d) == CUDA_SUCCESS &&
		    cuIpcGetMemHandle(&hi, d + 4096) == CUDA_SUCCESS) {
			printf("info: ipc interior handle equals the base's: %s\n",
			    memcmp(&hb, &hi, sizeof(hb)) == 0 ? "yes" : "no");
			char hex[2 * sizeof(hi) + 1];
			for (size_t i = 0; i < sizeof(hi); i++)
				snprintf(hex + 2 * i, 3, "%02x",
				    (unsigned char)hi.reserved[i]);
			fflush(stdout);
			pid_t pid = fork();
			if (pid == 0) {
				/* The child's calls are its own: not logged or
				 * failed as the parent's. */
				unsetenv("FAKECUDA_CALL_LOG");
				unsetenv("FAKECUDA_FAIL_CALL");
				execl("/proc/self/exe", "probe", "ipcopen", hex,
				    (char *)NULL);
				_exit(127);
			}
			int st;
			if (pid > 0)
				waitpid(pid, &st, 0);
		}
	}
	cuMemFree(d);
}

/* probe ipcopen HEX: opens the handle and says which pattern it sees. */
static int
ipc_open_child(const char *hex)
{
	CUipcMemHandle h;
	CUdevice dv;
	CUcontext c;
	CUdeviceptr p = 0;
	unsigned char b = 0;

	memset(&h, 0, sizeof(h));
	for (size_t i = 0; i < sizeof(h) && hex[2 * i] && hex[2 * i + 1]; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		h.reserved[i] = (char)v;
	}
	if (cuInit(0) || cuDeviceGet(&dv, 0) ||
	    cuDevicePrimaryCtxRetain(&c, dv) || cuCtxSetCurrent(c))
		return 99;
	CUresult r = cuIpcOpenMemHandle(&p, h,
	    CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
	if (r == CUDA_SUCCESS)
		cuMemcpyDtoH(&b, p, 1);
	printf("info: ipc interior handle, other process: open %s, sees %s\n",
	    en(r), r != CUDA_SUCCESS ? "-" : b == 0x22 ? "the interior" :
	    b == 0x11 ? "the base" : "other");
	return 0;
}

/* Frees of valid memory from a thread that has no current context. */
struct noctx_s {
	CUdeviceptr d, m;
	void *h, *reg;
};

static void *
noctx_thread(void *arg)
{
	struct noctx_s *n = arg;
	CUdeviceptr base = 0;
	size_t sz = 0;
	unsigned t = 0;

	SAY("other thread: cuMemGetAddressRange no context", cuMemGetAddressRange(&base, &sz, n->d));
	SAY("other thread: cuPointerGetAttribute no context",
	    cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, n->d));
	SAY("other thread: cuMemFree no context", cuMemFree(n->d));
	SAY("other thread: cuMemFree managed no context", cuMemFree(n->m));
	SAY("other thread: cuMemFreeHost no context", cuMemFreeHost(n->h));
	SAY("other thread: cuMemHostUnregister no context", cuMemHostUnregister(n->reg));
	return NULL;
}

static void
part_other_thread(void)
{
	struct noctx_s n;
	pthread_t th;

	memset(&n, 0, sizeof(n));
	cuMemAlloc(&n.d, 4096);
	cuMemAllocManaged(&n.m, 4096, CU_MEM_ATTACH_GLOBAL);
	cuMemHostAlloc(&n.h, 4096, 0);
	if (posix_memalign(&n.reg, 4096, 8192) != 0)
		return;
	cuMemHostRegister(n.reg, 8192, 0);
	if (pthread_create(&th, NULL, noctx_thread, &n) == 0)
		pthread_join(th, NULL);
	SAY("cuMemFree after other thread freed it", cuMemFree(n.d));
	free(n.reg);
}

static void
part_contexts(void)
{
	CUcontext c = NULL, cur = NULL, popped = NULL;
	CUdeviceptr d = 0, m = 0, a = 0;
	void *h = NULL;
	unsigned flags = 0;
	int active = -1;
	CUdevice dd = -1;

	SAY("cuCtxCreate", cuCtxCreate(&c, NULL, 0, dev0));
	cuCtxGetCurrent(&cur);
	printf("cuCtxCreate makes it current: %s\n", cur == c ? "yes" : "no");
	SAY("cuCtxGetDevice", cuCtxGetDevice(&dd));
	SAY("cuCtxGetDevice_v2 NULL ctx", cuCtxGetDevice_v2(&dd, NULL));
	SAY("cuCtxSynchronize_v2 primary", cuCtxSynchronize_v2(primary));
	SAY("cuMemAlloc in ctx", cuMemAlloc(&d, 4096));
	SAY("cuMemAllocManaged in ctx", cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
	SAY("cuMemHostAlloc in ctx", cuMemHostAlloc(&h, 4096, 0));
	SAY("cuMemAllocAsync in ctx", cuMemAllocAsync(&a, 4096, NULL));
	cuStreamSynchronize(NULL);
	SAY("cuCtxDestroy", cuCtxDestroy(c));
	cuCtxGetCurrent(&cur);
	printf("after cuCtxDestroy current is: %s\n", cur == NULL ? "NULL" :
	    cur == primary ? "primary" : "other");
	SAY("cuCtxSetCurrent primary", cuCtxSetCurrent(primary));
	SAY("cuMemFree after cuCtxDestroy", cuMemFree(d));
	SAY("cuMemFree managed after cuCtxDestroy", cuMemFree(m));
	SAY("cuMemFreeHost after cuCtxDestroy", cuMemFreeHost(h));
	SAY("cuMemFree async after cuCtxDestroy", cuMemFree(a));
	SAY("info: cuCtxDestroy double (varies run to run)", cuCtxDestroy(c));

	SAY("cuCtxPushCurrent", cuCtxPushCurrent(primary));
	SAY("cuCtxPopCurrent", cuCtxPopCurrent(&popped));
	printf("popped is primary: %s\n", popped == primary ? "yes" : "no");

	/* primary context reset: memory goes, the context stays retained */
	cuMemAlloc(&d, 4096);
	cuMemAllocAsync(&a, 4096, NULL);
	cuStreamSynchronize(NULL);
	SAY("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset(dev0));
	SAY("cuDevicePrimaryCtxGetState after reset", cuDevicePrimaryCtxGetState(dev0, &flags,
	    &active));
	printf("primary active after reset: %d\n", active);
	SAY("cuMemFree after reset", cuMemFree(d));
	SAY("cuMemFree async after reset", cuMemFree(a));
	SAY("cuMemAlloc after reset", cuMemAlloc(&d, 4096));
	if (d)
		cuMemFree(d);

	/* release to zero destroys the primary context's memory */
	{
		CUcontext p2 = NULL;

		cuDevicePrimaryCtxRetain(&p2, dev0);
		printf("retain returns same handle: %s\n", p2 == primary ? "yes" : "no");
		cuDevicePrimaryCtxRelease(dev0);
	}
	cuDevicePrimaryCtxGetState(dev0, &flags, &active);
	printf("primary active before release: %d\n", active);
	d = 0;
	cuMemAlloc(&d, 4096);
	SAY("cuDevicePrimaryCtxRelease to zero", cuDevicePrimaryCtxRelease(dev0));
	cuDevicePrimaryCtxGetState(dev0, &flags, &active);
	printf("primary active after release: %d\n", active);
	SAY("cuMemAlloc on released primary", cuMemAlloc(&m, 4096));
	SAY("cuDevicePrimaryCtxRelease below zero", cuDevicePrimaryCtxRelease(dev0));
	SAY("cuDevicePrimaryCtxRetain again", cuDevicePrimaryCtxRetain(&primary, dev0));
	cuCtxSetCurrent(primary);
	SAY("cuMemFree after release to zero", cuMemFree(d));
	SAY("cuDevicePrimaryCtxSetFlags_v2", cuDevicePrimaryCtxSetFlags(dev0,
	    CU_CTX_SCHED_BLOCKING_SYNC));
	cuDevicePrimaryCtxGetState(dev0, &flags, &active);
	printf("primary flags after set: %u\n", flags);
}

static void
part_no_context(void)
{
	CUdeviceptr d = 0;
	size_t f = 0;
	CUcontext cur = (CUcontext)(uintptr_t)1;
	CUdevice dd;

	SAY("cuCtxGetCurrent no context", cuCtxGetCurrent(&cur));
	printf("current without context: %s\n", cur == NULL ? "NULL" : "set");
	SAY("cuMemAlloc no context", cuMemAlloc(&d, 4096));
	SAY("cuMemFree(0) no context", cuMemFree(0));
	SAY("cuMemFree unknown no context", cuMemFree((CUdeviceptr)0x7f0000001000ULL));
	SAY("cuMemFreeHost(NULL) no context", cuMemFreeHost(NULL));
	SAY("cuMemGetInfo NULL both no context", cuMemGetInfo(NULL, NULL));
	SAY("cuPointerGetAttribute no context", cuPointerGetAttribute(&f,
	    CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)0x7f0000001000ULL));
	SAY("cuMemGetInfo no context", cuMemGetInfo(&f, NULL));
	SAY("cuCtxGetDevice no context", cuCtxGetDevice(&dd));
	SAY("cuCtxSynchronize no context", cuCtxSynchronize());
	SAY("cuCtxPopCurrent no context", cuCtxPopCurrent(&cur));
	SAY("cuStreamSynchronize NULL no context", cuStreamSynchronize(NULL));
}

/* ============================================================ part 2, 3 */

/* Every exported name the fixture provides (keep in step with
 * fakecuda_exports.h; check_fakecuda.sh compares the counts). */
static const char *const exported[] = {
	"cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString",
	"cuGetProcAddress", "cuGetProcAddress_v2", "cuGetExportTable", "cuDeviceGet",
	"cuDeviceGetCount", "cuDeviceGetName", "cuDeviceGetUuid", "cuDeviceGetUuid_v2",
	"cuDeviceGetPCIBusId", "cuDeviceGetAttribute", "cuDeviceTotalMem_v2",
	"cuDeviceGetDefaultMemPool", "cuDeviceGetMemPool", "cuDeviceSetMemPool",
	"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2",
	"cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxSetFlags",
	"cuDevicePrimaryCtxSetFlags_v2", "cuDevicePrimaryCtxGetState", "cuCtxCreate",
	"cuCtxCreate_v2", "cuCtxCreate_v3", "cuCtxCreate_v4", "cuCtxDestroy", "cuCtxDestroy_v2",
	"cuCtxPushCurrent", "cuCtxPushCurrent_v2", "cuCtxPopCurrent", "cuCtxPopCurrent_v2",
	"cuCtxGetCurrent", "cuCtxSetCurrent", "cuCtxGetDevice", "cuCtxGetDevice_v2",
	"cuCtxGetFlags", "cuCtxGetApiVersion", "cuCtxSynchronize", "cuCtxSynchronize_v2",
	"cuStreamCreate", "cuStreamCreateWithPriority", "cuStreamDestroy", "cuStreamDestroy_v2",
	"cuStreamSynchronize", "cuStreamSynchronize_ptsz", "cuStreamQuery", "cuStreamQuery_ptsz",
	"cuStreamWaitEvent", "cuStreamWaitEvent_ptsz", "cuStreamGetPriority",
	"cuStreamGetPriority_ptsz", "cuStreamGetFlags", "cuStreamGetFlags_ptsz", "cuStreamGetCtx",
	"cuStreamGetCtx_ptsz", "cuStreamGetCtx_v2", "cuStreamGetCtx_v2_ptsz", "cuEventCreate",
	"cuEventRecord", "cuEventRecord_ptsz",
	"cuEventRecordWithFlags", "cuEventRecordWithFlags_ptsz", "cuEventQuery",
	"cuEventSynchronize", "cuEventDestroy", "cuEventDestroy_v2", "cuEventElapsedTime",
	"cuEventElapsedTime_v2", "cuMemGetInfo_v2", "cuMemAlloc_v2", "cuMemAllocPitch_v2",
	"cuMemFree_v2", "cuMemGetAddressRange_v2", "cuMemAllocHost_v2", "cuMemFreeHost",
	"cuMemHostAlloc", "cuMemHostGetDevicePointer_v2", "cuMemHostGetFlags", "cuMemAllocManaged",
	"cuMemHostRegister", "cuMemHostRegister_v2", "cuMemHostUnregister", "cuMemcpy",
	"cuMemcpy_ptds", "cuMemcpyAsync", "cuMemcpyAsync_ptsz", "cuMemcpyHtoD_v2",
	"cuMemcpyHtoD_v2_ptds", "cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2_ptds", "cuMemcpyDtoD_v2",
	"cuMemcpyDtoD_v2_ptds", "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2_ptsz",
	"cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync_v2_ptsz", "cuMemcpyDtoDAsync_v2",
	"cuMemcpyDtoDAsync_v2_ptsz", "cuMemsetD8_v2", "cuMemsetD8_v2_ptds", "cuMemsetD16_v2",
	"cuMemsetD16_v2_ptds", "cuMemsetD32_v2", "cuMemsetD32_v2_ptds", "cuMemsetD8Async",
	"cuMemsetD8Async_ptsz", "cuMemsetD16Async", "cuMemsetD16Async_ptsz", "cuMemsetD32Async",
	"cuMemsetD32Async_ptsz", "cuMemAdvise", "cuMemAdvise_v2", "cuMemPrefetchAsync",
	"cuMemPrefetchAsync_ptsz", "cuMemPrefetchAsync_v2", "cuMemPrefetchAsync_v2_ptsz",
	"cuMemAllocAsync", "cuMemAllocAsync_ptsz", "cuMemAllocFromPoolAsync",
	"cuMemAllocFromPoolAsync_ptsz", "cuMemFreeAsync", "cuMemFreeAsync_ptsz", "cuMemPoolCreate",
	"cuMemPoolDestroy", "cuMemPoolTrimTo", "cuMemPoolSetAttribute", "cuMemPoolGetAttribute",
	"cuMemCreate", "cuMemRelease", "cuMemAddressReserve", "cuMemAddressFree", "cuMemMap",
	"cuMemUnmap", "cuMemSetAccess", "cuMemGetAccess", "cuMemGetAllocationGranularity",
	"cuMemGetAllocationPropertiesFromHandle", "cuMemRetainAllocationHandle",
	"cuPointerGetAttribute", "cuPointerGetAttributes", "cuPointerSetAttribute",
	"cuIpcGetMemHandle", "cuIpcOpenMemHandle", "cuIpcOpenMemHandle_v2", "cuIpcCloseMemHandle",
	"cuArrayCreate_v2", "cuArrayDestroy",
};
#define NEXPORTED (sizeof(exported) / sizeof(exported[0]))

/* Exports added after probe-h200-driver580.txt was recorded: counted on a
 * line of their own, so the recorded count above still compares (the sum of
 * both must be the length of fakecuda_exports.h). */
static const char *const exported_later[] = {
	"cuMemPoolExportToShareableHandle", "cuMemPoolImportFromShareableHandle",
	"cuMemPoolExportPointer", "cuMemPoolImportPointer", "cuMemExportToShareableHandle",
	"cuMemImportFromShareableHandle", "cuArray3DCreate_v2", "cuMipmappedArrayCreate",
	"cuMipmappedArrayDestroy",
};
#define NEXPORTED_LATER (sizeof(exported_later) / sizeof(exported_later[0]))

/* Stream capture, graphs and cuStreamAttachMemAsync, as cuda.h declares
 * them: each is reported found or missing (a driver without them still
 * runs the probe), and the base names are scanned through cuGetProcAddress
 * over every version (which ABI each version gets). */
static const char *const exported_graph[] = {
	"cuStreamBeginCapture", "cuStreamBeginCapture_ptsz", "cuStreamBeginCapture_v2",
	"cuStreamBeginCapture_v2_ptsz", "cuStreamBeginCaptureToGraph",
	"cuStreamBeginCaptureToGraph_ptsz", "cuStreamEndCapture", "cuStreamEndCapture_ptsz",
	"cuStreamIsCapturing", "cuStreamIsCapturing_ptsz", "cuStreamGetCaptureInfo",
	"cuStreamGetCaptureInfo_ptsz", "cuStreamGetCaptureInfo_v2",
	"cuStreamGetCaptureInfo_v2_ptsz", "cuStreamGetCaptureInfo_v3",
	"cuStreamGetCaptureInfo_v3_ptsz", "cuThreadExchangeStreamCaptureMode",
	"cuGraphCreate", "cuGraphDestroy", "cuGraphClone", "cuGraphAddMemAllocNode",
	"cuGraphAddMemFreeNode", "cuGraphMemAllocNodeGetParams",
	"cuGraphMemFreeNodeGetParams", "cuGraphAddKernelNode", "cuGraphAddKernelNode_v2",
	"cuGraphAddMemsetNode", "cuGraphAddMemcpyNode", "cuGraphAddEmptyNode",
	"cuGraphAddChildGraphNode", "cuGraphAddNode", "cuGraphAddNode_v2",
	"cuGraphGetNodes", "cuGraphNodeGetType", "cuGraphDestroyNode",
	"cuGraphInstantiate", "cuGraphInstantiate_v2", "cuGraphInstantiateWithFlags",
	"cuGraphInstantiateWithParams", "cuGraphInstantiateWithParams_ptsz",
	"cuGraphLaunch", "cuGraphLaunch_ptsz", "cuGraphUpload", "cuGraphUpload_ptsz",
	"cuGraphExecDestroy", "cuDeviceGraphMemTrim", "cuDeviceGetGraphMemAttribute",
	"cuStreamAttachMemAsync", "cuStreamAttachMemAsync_ptsz",
};
#define NEXPORTED_GRAPH (sizeof(exported_graph) / sizeof(exported_graph[0]))

static const char *const scanned_graph[] = {
	"cuStreamBeginCapture", "cuStreamBeginCaptureToGraph", "cuStreamEndCapture",
	"cuStreamIsCapturing", "cuStreamGetCaptureInfo", "cuThreadExchangeStreamCaptureMode",
	"cuGraphCreate", "cuGraphDestroy", "cuGraphClone", "cuGraphAddMemAllocNode",
	"cuGraphAddMemFreeNode", "cuGraphMemAllocNodeGetParams", "cuGraphMemFreeNodeGetParams",
	"cuGraphAddKernelNode", "cuGraphAddMemsetNode", "cuGraphAddMemcpyNode",
	"cuGraphAddEmptyNode", "cuGraphAddChildGraphNode", "cuGraphAddNode",
	"cuGraphGetNodes", "cuGraphNodeGetType", "cuGraphDestroyNode", "cuGraphInstantiate",
	"cuGraphInstantiateWithFlags", "cuGraphInstantiateWithParams", "cuGraphLaunch",
	"cuGraphUpload", "cuGraphExecDestroy", "cuDeviceGraphMemTrim",
	"cuDeviceGetGraphMemAttribute", "cuStreamAttachMemAsync",
};

/* Lookups to compare, as cudart makes them: base name, version, flags. */
static const struct {
	const char *base;
	int version;
} lookups[] = {
	{ "cuInit", 2000 }, { "cuDriverGetVersion", 2020 }, { "cuGetErrorName", 6000 },
	{ "cuGetProcAddress", 11030 }, { "cuGetProcAddress", 12000 },
	{ "cuDeviceGet", 2000 }, { "cuDeviceGetCount", 2000 }, { "cuDeviceGetAttribute", 2000 },
	{ "cuDeviceTotalMem", 3020 }, { "cuDeviceGetUuid", 9020 }, { "cuDeviceGetUuid", 11040 },
	{ "cuDeviceGetDefaultMemPool", 11020 },
	{ "cuDevicePrimaryCtxRetain", 7000 }, { "cuDevicePrimaryCtxRelease", 7000 },
	{ "cuDevicePrimaryCtxRelease", 11000 }, { "cuDevicePrimaryCtxReset", 7000 },
	{ "cuDevicePrimaryCtxReset", 11000 }, { "cuDevicePrimaryCtxSetFlags", 7000 },
	{ "cuDevicePrimaryCtxSetFlags", 11000 }, { "cuDevicePrimaryCtxGetState", 7000 },
	{ "cuCtxCreate", 3020 }, { "cuCtxCreate", 11040 }, { "cuCtxCreate", 12050 },
	{ "cuCtxDestroy", 4000 }, { "cuCtxPushCurrent", 4000 }, { "cuCtxPopCurrent", 4000 },
	{ "cuCtxGetCurrent", 4000 }, { "cuCtxSetCurrent", 4000 },
	{ "cuCtxGetDevice", 2000 }, { "cuCtxGetDevice", 13000 },
	{ "cuCtxSynchronize", 2000 }, { "cuCtxSynchronize", 13000 },
	{ "cuStreamCreate", 2000 }, { "cuStreamCreateWithPriority", 5050 },
	{ "cuStreamDestroy", 4000 }, { "cuStreamSynchronize", 2000 }, { "cuStreamQuery", 2000 },
	{ "cuStreamWaitEvent", 3020 }, { "cuStreamGetCtx", 9020 },
	{ "cuEventCreate", 2000 }, { "cuEventRecord", 2000 }, { "cuEventRecordWithFlags", 11010 },
	{ "cuEventQuery", 2000 }, { "cuEventSynchronize", 2000 }, { "cuEventDestroy", 4000 },
	{ "cuEventElapsedTime", 2000 }, { "cuEventElapsedTime", 12080 },
	{ "cuMemGetInfo", 3020 }, { "cuMemAlloc", 3020 }, { "cuMemAllocPitch", 3020 },
	{ "cuMemFree", 3020 }, { "cuMemGetAddressRange", 3020 }, { "cuMemAllocHost", 3020 },
	{ "cuMemFreeHost", 2000 }, { "cuMemHostAlloc", 2020 }, { "cuMemHostGetDevicePointer", 3020 },
	{ "cuMemHostGetFlags", 2030 }, { "cuMemAllocManaged", 6000 },
	{ "cuMemHostRegister", 4000 }, { "cuMemHostRegister", 6050 }, { "cuMemHostUnregister", 4000 },
	{ "cuMemcpy", 4000 }, { "cuMemcpyAsync", 4000 }, { "cuMemcpyHtoD", 3020 },
	{ "cuMemcpyDtoH", 3020 }, { "cuMemcpyDtoD", 3020 }, { "cuMemcpyHtoDAsync", 3020 },
	{ "cuMemcpyDtoHAsync", 3020 }, { "cuMemcpyDtoDAsync", 3020 },
	{ "cuMemsetD8", 3020 }, { "cuMemsetD16", 3020 }, { "cuMemsetD32", 3020 },
	{ "cuMemsetD8Async", 3020 }, { "cuMemsetD16Async", 3020 }, { "cuMemsetD32Async", 3020 },
	{ "cuMemAdvise", 8000 }, { "cuMemAdvise", 12020 },
	{ "cuMemPrefetchAsync", 8000 }, { "cuMemPrefetchAsync", 12020 },
	{ "cuMemAllocAsync", 11020 }, { "cuMemFreeAsync", 11020 },
	{ "cuMemAllocFromPoolAsync", 11020 }, { "cuMemPoolCreate", 11020 },
	{ "cuMemPoolDestroy", 11020 }, { "cuMemPoolTrimTo", 11020 },
	{ "cuMemCreate", 10020 }, { "cuMemRelease", 10020 }, { "cuMemAddressReserve", 10020 },
	{ "cuMemAddressFree", 10020 }, { "cuMemMap", 10020 }, { "cuMemUnmap", 10020 },
	{ "cuMemSetAccess", 10020 }, { "cuMemGetAllocationGranularity", 10020 },
	{ "cuMemRetainAllocationHandle", 11000 },
	{ "cuPointerGetAttribute", 4000 }, { "cuPointerGetAttributes", 7000 },
	{ "cuIpcGetMemHandle", 4010 }, { "cuIpcOpenMemHandle", 4010 },
	{ "cuIpcOpenMemHandle", 11000 }, { "cuIpcCloseMemHandle", 4010 },
	{ "cuArrayCreate", 3020 }, { "cuArrayDestroy", 2000 },
	/* added after the recording */
	{ "cuMemPoolExportToShareableHandle", 11020 }, { "cuMemPoolImportFromShareableHandle", 11020 },
	{ "cuMemPoolExportPointer", 11020 }, { "cuMemPoolImportPointer", 11020 },
	{ "cuMemExportToShareableHandle", 10020 }, { "cuMemImportFromShareableHandle", 10020 },
	{ "cuArray3DCreate", 3020 }, { "cuMipmappedArrayCreate", 5000 },
	{ "cuMipmappedArrayDestroy", 5000 },
};

static void *lib;

/* The exported name whose address p is: tries the base name with every
 * version and per-thread suffix, then the list above. */
static const char *
name_of(const char *base, void *p)
{
	static const char *const ver[] = { "", "_v2", "_v3", "_v4" };
	static const char *const pt[] = { "", "_ptsz", "_ptds" };
	static char buf[160];

	if (!p)
		return "NULL";
	for (size_t v = 0; v < 4; v++) {
		for (size_t t = 0; t < 3; t++) {
			snprintf(buf, sizeof(buf), "%s%s%s", base, ver[v], pt[t]);
			if (dlsym(lib, buf) == p)
				return buf;
		}
	}
	for (size_t i = 0; i < NEXPORTED; i++)
		if (dlsym(lib, exported[i]) == p)
			return exported[i];
	for (size_t i = 0; i < NEXPORTED_LATER; i++)
		if (dlsym(lib, exported_later[i]) == p)
			return exported_later[i];
	for (size_t i = 0; i < NEXPORTED_GRAPH; i++)
		if (dlsym(lib, exported_graph[i]) == p)
			return exported_graph[i];
	return "unexported";
}

static const char *
status_name(CUdriverProcAddressQueryResult s)
{
	switch (s) {
	case CU_GET_PROC_ADDRESS_SUCCESS: return "SUCCESS";
	case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: return "SYMBOL_NOT_FOUND";
	case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: return "VERSION_NOT_SUFFICIENT";
	default: return "?";
	}
}

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t,
    CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);

static void
gpa_line(gpa2_t gpa, const char *label, const char *sym, int ver, cuuint64_t flags)
{
	void *p = (void *)(uintptr_t)1;
	CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)99;
	CUresult r = gpa(sym, &p, ver, flags, &st);

	printf("%s: %s %s %s\n", label, en(r), status_name(st),
	    p == (void *)(uintptr_t)1 ? "unchanged" : name_of(sym, p));
}

static void
part_dlsym_gpa(void)
{
	gpa2_t gpa;
	gpa1_t gpa1;
	size_t missing = 0;
	char label[200];

	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		printf("dlopen libcuda.so.1: failed\n");
		return;
	}
	for (size_t i = 0; i < NEXPORTED; i++) {
		if (!dlsym(lib, exported[i])) {
			printf("dlsym %s: missing\n", exported[i]);
			missing++;
		}
	}
	printf("dlsym exports found: %zu of %zu\n", NEXPORTED - missing, NEXPORTED);
	missing = 0;
	for (size_t i = 0; i < NEXPORTED_LATER; i++) {
		if (!dlsym(lib, exported_later[i])) {
			printf("dlsym %s: missing\n", exported_later[i]);
			missing++;
		}
	}
	printf("dlsym later exports found: %zu of %zu\n", NEXPORTED_LATER - missing,
	    NEXPORTED_LATER);
	missing = 0;
	for (size_t i = 0; i < NEXPORTED_GRAPH; i++) {
		printf("dlsym %s: %s\n", exported_graph[i],
		    dlsym(lib, exported_graph[i]) ? "found" : "missing");
		missing += !dlsym(lib, exported_graph[i]);
	}
	printf("dlsym capture and graph exports found: %zu of %zu\n",
	    NEXPORTED_GRAPH - missing, NEXPORTED_GRAPH);
	{
		static const char *const v1[] = { "cuMemAlloc", "cuMemFree", "cuMemAllocPitch",
		    "cuMemGetInfo", "cuMemAllocHost", "cuMemGetAddressRange",
		    "cuMemHostGetDevicePointer", "cuDeviceTotalMem", "cuMemcpyHtoD",
		    "cuMemcpyDtoH", "cuMemcpyDtoD", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync",
		    "cuMemcpyDtoDAsync", "cuMemsetD8", "cuMemsetD16", "cuMemsetD32",
		    "cuArrayCreate", "cuIpcOpenMemHandle",
		    "cuMemcpy2D_v2", "cuMemHostRegister", "cuEventElapsedTime",
		    "cuMemAllocAsync_ptds", "cuMemsetD8Async_ptds", "cuMemcpyAsync_ptds" };

		/* The fixture exports none of these (README: not imitated). */
		for (size_t i = 0; i < sizeof(v1) / sizeof(v1[0]); i++)
			printf("info: dlsym %s: %s\n", v1[i], dlsym(lib, v1[i]) ? "found" : "missing");
	}
	printf("dlsym equals direct cuMemAlloc_v2: %s\n",
	    dlsym(lib, "cuMemAlloc_v2") == (void *)cuMemAlloc_v2 ? "yes" : "no");
	{
		CUresult (*alloc)(CUdeviceptr *, size_t) =
		    (CUresult (*)(CUdeviceptr *, size_t))dlsym(lib, "cuMemAlloc_v2");
		CUresult (*fr)(CUdeviceptr) = (CUresult (*)(CUdeviceptr))dlsym(lib, "cuMemFree_v2");
		CUdeviceptr d = 0;

		if (alloc && fr) {
			SAY("dlsym cuMemAlloc_v2 call", alloc(&d, 4096));
			SAY("dlsym cuMemFree_v2 call", fr(d));
			SAY("dlsym cuMemFree_v2 double", fr(d));
		}
	}

	gpa = (gpa2_t)dlsym(lib, "cuGetProcAddress_v2");
	gpa1 = (gpa1_t)dlsym(lib, "cuGetProcAddress");
	if (!gpa || !gpa1) {
		printf("dlsym cuGetProcAddress_v2: missing\n");
		return;
	}
	gpa_line(gpa, "gpa empty probe", "", 0, 0);
	gpa_line(gpa, "gpa unknown name", "cuNoSuchFunction", 12000, 0);
	gpa_line(gpa, "gpa too new version", "cuMemAlloc", 99000, 0);
	gpa_line(gpa, "gpa one minor newer than 13.0", "cuMemAlloc", 13010, 0);
	gpa_line(gpa, "gpa older than first ABI", "cuMemAllocAsync", 11000, 0);
	gpa_line(gpa, "info: gpa cuMemAlloc@2000 (v1 ABI)", "cuMemAlloc", 2000, 0);
	gpa_line(gpa, "gpa versioned name as symbol", "cuMemAlloc_v2", 12000, 0);
	gpa_line(gpa, "gpa legacy flag on ptsz name", "cuMemAllocAsync", 11020,
	    CU_GET_PROC_ADDRESS_LEGACY_STREAM);
	gpa_line(gpa, "gpa bad flags", "cuMemAlloc", 12000, 8);
	{
		void *p = (void *)(uintptr_t)1;

		/* NULL symbol or pfn: the real driver crashes; not probed. */
		printf("gpa NULL status: %s\n", en(gpa("cuMemAlloc", &p, 12000, 0, NULL)));
		p = NULL;
		gpa("cuMemAllocAsync", &p, 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL);
		printf("gpa cuMemAllocAsync flags=2 is dlsym cuMemAllocAsync_ptsz: %s\n",
		    p && p == dlsym(lib, "cuMemAllocAsync_ptsz") ? "yes" : "no");
		p = NULL;
		gpa("cuDevicePrimaryCtxReset", &p, 7000, 0, NULL);
		printf("gpa cuDevicePrimaryCtxReset@7000 is dlsym cuDevicePrimaryCtxReset: %s\n",
		    p && p == dlsym(lib, "cuDevicePrimaryCtxReset") ? "yes" : "no");
		p = NULL;
		gpa("cuGetProcAddress", &p, 12000, 0, NULL);
		printf("gpa self-query 12000 is cuGetProcAddress_v2: %s\n",
		    p && p == (void *)gpa ? "yes" : "no");
		p = NULL;
		printf("gpa1 cuMemFree@3020: %s ", en(gpa1("cuMemFree", &p, 3020, 0)));
		printf("%s\n", name_of("cuMemFree", p));
		p = NULL;
		printf("gpa1 unknown: %s %s\n", en(gpa1("cuNoSuchFunction", &p, 12000, 0)),
		    p ? "set" : "NULL");
	}
	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
		snprintf(label, sizeof(label), "gpa %s@%d f0", lookups[i].base, lookups[i].version);
		gpa_line(gpa, label, lookups[i].base, lookups[i].version, 0);
		snprintf(label, sizeof(label), "gpa %s@%d f2", lookups[i].base, lookups[i].version);
		gpa_line(gpa, label, lookups[i].base, lookups[i].version,
		    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
		snprintf(label, sizeof(label), "gpa %s@13000 f2", lookups[i].base);
		gpa_line(gpa, label, lookups[i].base, 13000,
		    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	}
	/* capture and graphs: every version where the answer changes */
	for (size_t i = 0; i < sizeof(scanned_graph) / sizeof(scanned_graph[0]); i++) {
		for (cuuint64_t f = 0; f <= 2; f += 2) {
			void *prev = NULL;
			int any = 0;

			printf("gpa scan %s f%d:", scanned_graph[i], (int)f);
			for (int major = 2; major <= 13; major++)
				for (int minor = 0; minor <= 9; minor++) {
					void *q = NULL;
					int v = 1000 * major + 10 * minor;

					gpa(scanned_graph[i], &q, v, f, NULL);
					if (q != prev) {
						printf(" %d %s", v, name_of(scanned_graph[i], q));
						prev = q;
						any = 1;
					}
				}
			printf("%s\n", any ? "" : " none");
		}
	}
	/* every answer at 13000, flags 0 and 2, is an export: identity holds */
	{
		size_t same = 0, total = 0;

		for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
			for (cuuint64_t f = 0; f <= 2; f += 2) {
				void *p = NULL;
				const char *n;

				gpa(lookups[i].base, &p, 13000, f, NULL);
				if (!p)
					continue;
				total++;
				n = name_of(lookups[i].base, p);
				if (strcmp(n, "unexported") != 0)
					same++;
			}
		}
		printf("gpa answers that are exports: %s\n", same == total ? "all" : "NOT ALL");
	}
}


/* ================================================================ sim */

/* `probe sim`: exercises the simulated driver's test-only API (streams that
 * take time, writers, counters, run-time fault injection, threads). On a real
 * driver there is no fakecuda_* symbol and it says so. Lines: "sim ok: ...",
 * "sim FAIL: ...", and "sim: done" at the end. */

#if defined(__has_include)
#if __has_include("fakecuda.h")
#define PROBE_SIM 1
#endif
#endif

#ifdef PROBE_SIM
#include "fakecuda.h"
#include <time.h>

#define sim_counters_s fakecuda_counters

static CUresult (*sim_busy)(CUstream, unsigned);
static CUresult (*sim_writer)(CUstream, CUdeviceptr, size_t, unsigned, unsigned char);
static void *(*sim_alias)(CUdeviceptr, size_t);
static int (*sim_inject)(const char *, long);
static unsigned long (*sim_calls)(const char *);
static void (*sim_counters)(struct sim_counters_s *);
static void (*sim_reset)(void);
static int sim_failed;

#define SIM_CHECK(cond, what) do { \
	if (cond) \
		printf("sim ok: %s\n", what); \
	else { \
		printf("sim FAIL: %s (line %d)\n", what, __LINE__); \
		sim_failed = 1; \
	} \
} while (0)

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *
sim_thread(void *arg)
{
	CUdeviceptr d;
	long bad = 0;

	(void)arg;
	if (cuMemAlloc(&d, 4096) != CUDA_ERROR_INVALID_CONTEXT)
		bad++;
	cuCtxSetCurrent(primary);
	for (int i = 0; i < 500; i++) {
		if (cuMemAlloc(&d, 4096 + (size_t)i) != CUDA_SUCCESS || cuMemFree(d) != CUDA_SUCCESS)
			bad++;
	}
	return (void *)bad;
}

/* Captured work runs when the graph is launched; graph memory is host-backed
 * memory from the launch until a free (no timing is asserted). */
static void
sim_graph(void)
{
	void *self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	int (*inject_call)(const char *, const char *, int);
	struct sim_counters_s c;
	CUstream gs = NULL;
	CUgraph g = NULL;
	CUgraphExec e = NULL;
	CUdeviceptr a = 0;
	const size_t n = 1 << 20;
	unsigned char *al;

	G.quiet = 1;
	g_load();
	*(void **)&inject_call = self ? dlsym(self, "fakecuda_inject_call") : NULL;
	if (!G.have_graph || !inject_call) {
		SIM_CHECK(0, "capture and graph entry points exported");
		return;
	}
	cuStreamCreate(&gs, CU_STREAM_NON_BLOCKING);
	SIM_CHECK(G.begin(gs, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS, "begin capture");
	SIM_CHECK(cuMemAllocAsync(&a, n, gs) == CUDA_SUCCESS && a != 0,
	    "captured cuMemAllocAsync gives an address");
	SIM_CHECK(sim_alias(a, 16) == NULL, "that address is no memory before a launch");
	SIM_CHECK(cuMemsetD8Async(a, 0x77, n, gs) == CUDA_SUCCESS, "captured set");
	SIM_CHECK(sim_writer(gs, a, 4096, 20, 0x99) == CUDA_SUCCESS, "captured writer");
	SIM_CHECK(G.end(gs, &g) == CUDA_SUCCESS && g != NULL, "end capture");
	SIM_CHECK(G.instantiate(&e, g, 0) == CUDA_SUCCESS, "instantiate");
	sim_counters(&c);
	SIM_CHECK(c.live_graph == 0, "nothing live before the launch");
	SIM_CHECK(G.launch(e, gs) == CUDA_SUCCESS, "launch");
	cuStreamSynchronize(gs);
	al = sim_alias(a, n);
	SIM_CHECK(al != NULL, "the allocation is memory after the launch");
	/* (the writer's window may pass before its thread writes: either byte) */
	SIM_CHECK(al && (al[0] == 0x99 || al[0] == 0x77) && al[4096] == 0x77 &&
	    al[n - 1] == 0x77, "the captured set ran at the launch");
	sim_counters(&c);
	SIM_CHECK(c.live_graph == 1, "one live graph allocation");
	SIM_CHECK(G.launch(e, gs) == CUDA_ERROR_INVALID_VALUE,
	    "relaunch while it is live: CUDA_ERROR_INVALID_VALUE");
	SIM_CHECK(cuMemFree(a) == CUDA_SUCCESS, "cuMemFree of the graph allocation");
	sim_counters(&c);
	SIM_CHECK(c.live_graph == 0 && sim_alias(a, 16) == NULL, "freed");
	SIM_CHECK(G.launch(e, gs) == CUDA_SUCCESS, "relaunch after the free");
	cuStreamSynchronize(gs);
	SIM_CHECK(sim_alias(a, 16) != NULL, "the same address is live again");
	SIM_CHECK(cuMemFreeAsync(a, gs) == CUDA_SUCCESS, "cuMemFreeAsync of it");
	cuStreamSynchronize(gs);
	sim_counters(&c);
	SIM_CHECK(c.live_graph == 0, "freed in stream order");
	SIM_CHECK(inject_call("cuGraphLaunch", "1", CUDA_ERROR_LAUNCH_FAILED) == 0,
	    "inject a cuGraphLaunch failure");
	SIM_CHECK(G.launch(e, gs) == CUDA_ERROR_LAUNCH_FAILED, "injected launch fails");
	cuStreamSynchronize(gs);
	SIM_CHECK(sim_alias(a, 16) == NULL, "and allocates nothing");
	SIM_CHECK(G.launch(e, gs) == CUDA_SUCCESS, "the next launch runs");
	cuStreamSynchronize(gs);
	SIM_CHECK(G.exec_destroy(e) == CUDA_SUCCESS && G.destroy(g) == CUDA_SUCCESS,
	    "exec and graph destroyed while the allocation is live");
	SIM_CHECK(sim_alias(a, 16) != NULL, "it stays live");
	SIM_CHECK(cuMemFree(a) == CUDA_SUCCESS, "and is freed afterwards");
	cuStreamDestroy(gs);
}

static int
sim(void)
{
	CUstream s = NULL, nb = NULL;
	CUevent e1 = NULL, e2 = NULL;
	CUdeviceptr p = 0, q = 0, a = 0;
	struct sim_counters_s c0, c1;
	double t0;
	float ms = 0;
	void *self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	CUresult (*query_ptsz)(CUstream);

	*(void **)&sim_busy = self ? dlsym(self, "fakecuda_launch_busy") : NULL;
	if (!sim_busy) {
		printf("sim: skipped (not the simulated driver)\n");
		return 0;
	}
	*(void **)&sim_writer = dlsym(self, "fakecuda_launch_writer");
	*(void **)&sim_alias = dlsym(self, "fakecuda_host_alias");
	*(void **)&sim_inject = dlsym(self, "fakecuda_inject");
	*(void **)&sim_calls = dlsym(self, "fakecuda_calls");
	*(void **)&sim_counters = dlsym(self, "fakecuda_counters");
	*(void **)&sim_reset = dlsym(self, "fakecuda_reset_counters");
	*(void **)&query_ptsz = dlsym(self, "cuStreamQuery_ptsz");
	if (!sim_writer || !sim_alias || !sim_inject || !sim_calls || !sim_counters ||
	    !sim_reset || !query_ptsz || cuInit(0) || cuDevicePrimaryCtxRetain(&primary, 0))
		return 99;
	SIM_CHECK(sim_busy(NULL, 10) == CUDA_ERROR_INVALID_CONTEXT, "busy without context");
	cuCtxSetCurrent(primary);
	cuStreamCreate(&s, 0);
	cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING);

	/* busy work: query, synchronise */
	SIM_CHECK(sim_busy(s, 300) == CUDA_SUCCESS, "launch busy");
	SIM_CHECK(cuStreamQuery(s) == CUDA_ERROR_NOT_READY, "query busy stream: not ready");
	SIM_CHECK(cuStreamQuery(nb) == CUDA_SUCCESS, "query other non-blocking stream: ready");
	t0 = now_ms();
	cuStreamSynchronize(s);
	SIM_CHECK(now_ms() - t0 >= 100, "stream synchronize waits for busy work");
	SIM_CHECK(cuStreamQuery(s) == CUDA_SUCCESS, "query after synchronize: ready");
	SIM_CHECK(sim_busy((CUstream)(uintptr_t)0x1234, 1) == CUDA_ERROR_INVALID_HANDLE,
	    "busy on a bad stream handle");

	/* legacy stream ordering */
	cuEventCreate(&e1, 0);
	cuEventCreate(&e2, 0);
	sim_busy(s, 300);
	cuEventRecord(e1, NULL);
	SIM_CHECK(cuEventQuery(e1) == CUDA_ERROR_NOT_READY,
	    "NULL stream waits for a blocking stream");
	cuEventRecord(e2, nb);
	SIM_CHECK(cuEventQuery(e2) == CUDA_SUCCESS, "non-blocking stream does not");
	cuEventSynchronize(e1);
	SIM_CHECK(cuStreamQuery(s) == CUDA_SUCCESS, "event synchronize covers the work");

	/* per-thread default stream */
	sim_busy(CU_STREAM_PER_THREAD, 300);
	SIM_CHECK(cuStreamQuery(CU_STREAM_PER_THREAD) == CUDA_ERROR_NOT_READY,
	    "per-thread stream busy");
	SIM_CHECK(query_ptsz(NULL) == CUDA_ERROR_NOT_READY, "_ptsz NULL is the per-thread stream");
	cuStreamSynchronize(CU_STREAM_PER_THREAD);

	/* event timing */
	cuEventRecord(e1, s);
	sim_busy(s, 300);
	cuEventRecord(e2, s);
	SIM_CHECK(cuEventElapsedTime(&ms, e1, e2) == CUDA_ERROR_NOT_READY, "elapsed not ready");
	cuEventSynchronize(e2);
	SIM_CHECK(cuEventElapsedTime(&ms, e1, e2) == CUDA_SUCCESS && ms >= 295 && ms < 2000,
	    "elapsed time of 300 ms work");

	/* cuCtxSynchronize waits for every stream */
	t0 = now_ms();
	sim_busy(nb, 200);
	cuCtxSynchronize();
	SIM_CHECK(now_ms() - t0 >= 195, "context synchronize waits");

	/* a synchronous free waits for all work on the device */
	sim_counters(&c0);
	cuMemAlloc(&p, 1 << 20);
	t0 = now_ms();
	sim_busy(nb, 200);
	SIM_CHECK(cuMemFree(p) == CUDA_SUCCESS, "free with pending work");
	SIM_CHECK(now_ms() - t0 >= 195, "cuMemFree waited for unrelated non-blocking work");
	sim_counters(&c1);
	SIM_CHECK(c1.free_waits == c0.free_waits + 1, "free_waits counted");

	/* writer: writes while running, never after a wait covering it */
	cuMemAlloc(&p, 1 << 20);
	{
		unsigned char *al = sim_alias(p, 1 << 20);
		int ok = 1;

		SIM_CHECK(al != NULL, "host alias of device memory");
		SIM_CHECK(sim_alias(p + (1 << 20), 1) == NULL, "no alias past the end");
		t0 = now_ms();
		SIM_CHECK(sim_writer(s, p, 1 << 20, 300, 0xEE) == CUDA_SUCCESS, "launch writer");
		SIM_CHECK(sim_writer(s, p, 2 << 20, 10, 0xEE) == CUDA_ERROR_INVALID_VALUE,
		    "writer past the end refused");
		/* poll: a loaded machine may start the writer thread late */
		while (al && !(al[0] == 0xEE && al[(1 << 20) - 1] == 0xEE) && now_ms() - t0 < 250)
			sleep_ms(2);
		SIM_CHECK(al && al[0] == 0xEE && al[(1 << 20) - 1] == 0xEE, "writer writes");
		cuMemFree(p);
		SIM_CHECK(now_ms() - t0 >= 290, "cuMemFree waited for the writer");
		if (al) {
			memset(al, 0, 1 << 20);
			sleep_ms(20);
			for (int i = 0; i < (1 << 20); i += 4096)
				ok &= al[i] == 0;
		}
		SIM_CHECK(ok, "no write after the free returned");
	}

	/* reuse before the writer ended is visible */
	cuMemAllocAsync(&p, 1 << 20, nb);
	t0 = now_ms();
	sim_writer(s, p, 1 << 20, 300, 0xAA);
	cuMemFreeAsync(p, nb);
	cuMemAlloc(&q, 1 << 20);
	if (q == p) {
		unsigned char *al = sim_alias(q, 1 << 20);

		while (al && al[0] != 0xAA && now_ms() - t0 < 250)
			sleep_ms(2);
		SIM_CHECK(al && al[0] == 0xAA, "reuse while a writer runs is detectable");
	} else {
		printf("sim ok: reuse while a writer runs is detectable (address not reused)\n");
	}
	cuMemFree(q);

	/* stream-ordered free happens when the stream gets there */
	sim_busy(s, 300);
	cuMemAllocAsync(&a, 4096, s);
	sim_counters(&c0);
	cuMemFreeAsync(a, s);
	sim_counters(&c1);
	SIM_CHECK(c1.live_async == c0.live_async, "cuMemFreeAsync pending: still live");
	cuStreamSynchronize(s);
	sim_counters(&c1);
	SIM_CHECK(c1.live_async + 1 == c0.live_async, "freed once the stream reached it");

	/* counters and run-time injection */
	sim_reset();
	cuMemAlloc(&p, 4096);
	SIM_CHECK(sim_calls("cuMemAlloc_v2") == 1, "fakecuda_calls counts");
	sim_counters(&c1);
	SIM_CHECK(c1.mem_alloc == 1 && c1.live_device >= 1, "fakecuda_counters mem_alloc and live");
	SIM_CHECK(sim_inject("fail_alloc", 2) == 0, "inject fail_alloc 2");
	SIM_CHECK(cuMemAlloc(&q, 4096) == CUDA_SUCCESS, "first alloc after inject succeeds");
	SIM_CHECK(cuMemAllocManaged(&a, 4096, CU_MEM_ATTACH_GLOBAL) == CUDA_ERROR_OUT_OF_MEMORY,
	    "second alloc (any family) fails");
	SIM_CHECK(cuMemAlloc(&a, 4096) == CUDA_SUCCESS, "third succeeds");
	SIM_CHECK(sim_inject("fail_free", 1) == 0, "inject fail_free 1");
	SIM_CHECK(cuMemFree(p) == CUDA_ERROR_ILLEGAL_ADDRESS, "injected free fails");
	SIM_CHECK(cuMemFree(p) == CUDA_SUCCESS, "memory stayed allocated");
	cuMemFree(q);
	cuMemFree(a);
	SIM_CHECK(sim_inject("no_such_thing", 1) == -1, "unknown injection refused");

	/* threads: each has its own current context */
	{
		pthread_t th[8];
		long bad = 0;

		sim_counters(&c0);
		for (int i = 0; i < 8; i++)
			pthread_create(&th[i], NULL, sim_thread, NULL);
		for (int i = 0; i < 8; i++) {
			void *r;

			pthread_join(th[i], &r);
			bad += (long)r;
		}
		sim_counters(&c1);
		SIM_CHECK(bad == 0, "8 threads x 500 alloc/free, own contexts");
		SIM_CHECK(c1.live_allocations == c0.live_allocations, "live count back after threads");
	}
	sim_graph();
	cuEventDestroy(e1);
	cuEventDestroy(e2);
	cuStreamDestroy(s);
	cuStreamDestroy(nb);
	printf("sim: done\n");
	return sim_failed;
}
#else
static int
sim(void)
{
	printf("sim: skipped (built without fakecuda.h)\n");
	return 0;
}
#endif

/* ============================================================== fault */

static int
fault(void)
{
	CUdeviceptr d = 0;
	int status = 0;
	pid_t pid;

	if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&primary, 0) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(primary) != CUDA_SUCCESS || cuMemAlloc(&d, 4096) != CUDA_SUCCESS) {
		printf("fault: setup failed\n");
		return 99;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		volatile unsigned char c = *(volatile unsigned char *)(uintptr_t)d;

		(void)c;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		printf("fault: fork failed\n");
		return 99;
	}
	if (WIFSIGNALED(status))
		printf("host deref of device pointer: %s\n", WTERMSIG(status) == SIGSEGV ?
		    "SIGSEGV" : WTERMSIG(status) == SIGBUS ? "SIGBUS" : "other signal");
	else
		printf("host deref of device pointer: no fault\n");
	cuMemFree(d);
	return 0;
}

int
main(int argc, char **argv)
{
	CUdeviceptr d = 0;
	int v = 0, n = 0;
	char name[256];
	size_t total = 0;
	CUresult r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "fault") == 0)
		return fault();
	if (argc > 1 && strcmp(argv[1], "sim") == 0)
		return sim();
	if (argc > 2 && strcmp(argv[1], "ipcopen") == 0)
		return ipc_open_child(argv[2]);
	if (argc > 2 && strcmp(argv[1], "graphrisk") == 0)
		return graph_risk_child(atoi(argv[2]));

	SAY("cuMemAlloc before cuInit", cuMemAlloc(&d, 4096));
	SAY("cuDeviceGetCount before cuInit", cuDeviceGetCount(&n));
	SAY("cuInit bad flags", cuInit(1));
	r = cuInit(0);
	SAY("cuInit", r);
	if (r != CUDA_SUCCESS)
		return 99;
	SAY("cuInit again", cuInit(0));
	cuDriverGetVersion(&v);
	printf("info: driver version: %d\n", v);
	SAY("cuDeviceGetCount", cuDeviceGetCount(&n));
	printf("info: device count: %d\n", n);
	SAY("cuDeviceGet", cuDeviceGet(&dev0, 0));
	SAY("cuDeviceGet out of range", cuDeviceGet(&dev0, 999));
	cuDeviceGet(&dev0, 0);
	cuDeviceGetName(name, sizeof(name), dev0);
	printf("info: device name: %s\n", name);
	cuDeviceTotalMem(&total, dev0);
	printf("info: total memory: %zu\n", total);
	{
		const char *s = NULL;

		printf("cuGetErrorName 9999: %s\n", cuGetErrorName((CUresult)9999, &s) ==
		    CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : "other");
		cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s);
		printf("cuGetErrorString INVALID_VALUE: %s\n", s ? s : "NULL");
	}
	print_attributes();
	part_no_context();

	SAY("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&primary, dev0));
	SAY("cuCtxSetCurrent", cuCtxSetCurrent(primary));
	part_edges();
	part_copies();
	part_streams();
	part_async();
	part_vmm();
	part_exact();
	part_capture();
	part_graph();
	part_ipc();
	part_other_thread();
	part_contexts();
	part_dlsym_gpa();
	printf("done\n");
	return 0;
}
