/*
 * tp_exact.c -- pool mode must answer every call exactly as the driver
 * does (check_pool_exact.sh runs this plain, in audit mode and in pool
 * mode and compares the three transcripts line by line).
 *
 * Each line is a call and its CUresult, or a value the program would look
 * at, written relative to the allocation it concerns (absolute addresses
 * differ between the modes).  The calls are the ones whose answers depend
 * on what the driver knows of an allocation: its range and attributes
 * (inside, one past the end, beyond, after the free), host flags, sets
 * and copies that run past the end or touch freed memory, the same from
 * a thread with no context, and frees after a primary context reset.
 *
 * "late DOUBLE": a block freed twice with its tombstone gone
 * (CUWARDEN_TOMBSTONES=0 in the test): the second free must be refused
 * and must not take the block's segment (its live neighbour) with it.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAY(what, call) \
	printf("%-40s -> %d\n", (what), (int)(call))

static CUdeviceptr shared;

/* An address relative to base, or "-" where the driver left it alone. */
static void
rel(const char *what, CUdeviceptr v, CUdeviceptr base)
{
	if (v == 0)
		printf("  %-38s -\n", what);
	else
		printf("  %-38s %lld\n", what, (long long)(v - base));
}

static void
range(const char *what, CUdeviceptr p, CUdeviceptr base)
{
	CUdeviceptr b = 0;
	size_t s = 0;

	SAY(what, cuMemGetAddressRange(&b, &s, p));
	rel("base", b, base);
	printf("  %-38s %zu\n", "size", s);
}

static void
attrs(const char *what, CUdeviceptr p, CUdeviceptr base)
{
	CUdeviceptr start = 0;
	size_t size = 0;
	unsigned int type = 0;
	int ord = -7;
	void *host = NULL;
	CUpointer_attribute as[5] = { CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
		CU_POINTER_ATTRIBUTE_RANGE_SIZE,
		CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
		CU_POINTER_ATTRIBUTE_HOST_POINTER };
	void *ds[5] = { &start, &size, &type, &ord, &host };
	char name[64];

	snprintf(name, sizeof(name), "%s: RANGE_START_ADDR", what);
	SAY(name, cuPointerGetAttribute(&start, as[0], p));
	rel("start", start, base);
	snprintf(name, sizeof(name), "%s: RANGE_SIZE", what);
	SAY(name, cuPointerGetAttribute(&size, as[1], p));
	printf("  %-38s %zu\n", "size", size);
	snprintf(name, sizeof(name), "%s: MEMORY_TYPE", what);
	SAY(name, cuPointerGetAttribute(&type, as[2], p));
	printf("  %-38s %u\n", "type", type);
	start = 0;
	size = 0;
	type = 0;
	snprintf(name, sizeof(name), "%s: attributes x5", what);
	SAY(name, cuPointerGetAttributes(5, as, ds, p));
	rel("start", start, base);
	printf("  %-38s %zu %u %d %s\n", "size type ordinal host", size, type,
	    ord, host == NULL ? "NULL" : host == (void *)(uintptr_t)p ?
	    "the pointer" : "other");
}

static void *
no_context(void *arg)
{
	CUdeviceptr b = 0, q = 0;
	size_t s = 0;
	unsigned int type = 0;

	(void)arg;
	SAY("no context: address range", cuMemGetAddressRange(&b, &s, shared));
	rel("base", b, shared);
	SAY("no context: MEMORY_TYPE", cuPointerGetAttribute(&type,
	    CU_POINTER_ATTRIBUTE_MEMORY_TYPE, shared));
	printf("  %-38s %u\n", "type", type);
	SAY("no context: memset", cuMemsetD8(shared, 1, 16));
	SAY("no context: alloc", cuMemAlloc(&q, 4096));
	SAY("no context: free", cuMemFree(shared + 16));
	return NULL;
}

int
main(void)
{
	CUdevice d;
	CUcontext c;
	CUdeviceptr p = 0, nb = 0, m = 0;
	void *h = NULL, *h2 = NULL;
	unsigned int fl = 0;
	char buf[8192];
	pthread_t t;

	memset(buf, 0x5a, sizeof(buf));
	SAY("cuInit", cuInit(0));
	SAY("cuDeviceGet", cuDeviceGet(&d, 0));
	SAY("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&c, d));
	SAY("cuCtxSetCurrent", cuCtxSetCurrent(c));

	/* Device memory: a 1000-byte allocation and a live neighbour. */
	SAY("alloc p 1000", cuMemAlloc(&p, 1000));
	SAY("alloc nb 1000", cuMemAlloc(&nb, 1000));
	range("range p+10", p + 10, p);
	range("range p+1000 (one past)", p + 1000, p);
	range("range p+3000 (beyond)", p + 3000, p);
	SAY("range p, NULL outs", cuMemGetAddressRange(NULL, NULL, p));
	attrs("p+10", p + 10, p);
	attrs("p+1000", p + 1000, p);
	SAY("memset p 1000", cuMemsetD8(p, 7, 1000));
	SAY("memset p 1001 (past end)", cuMemsetD8(p, 7, 1001));
	SAY("memset32 p 250", cuMemsetD32(p, 7, 250));
	SAY("memset32 p 251 (past end)", cuMemsetD32(p, 7, 251));
	SAY("copy to p 1000", cuMemcpyHtoD(p, buf, 1000));
	SAY("copy to p 2000 (past end)", cuMemcpyHtoD(p, buf, 2000));
	SAY("copy from p+500 600 (past end)", cuMemcpyDtoH(buf, p + 500, 600));
	SAY("copy p to nb 1000", cuMemcpyDtoD(nb, p, 1000));
	SAY("copy p to nb 1024 (past end)", cuMemcpyDtoD(nb, p, 1024));
	shared = p;
	pthread_create(&t, NULL, no_context, NULL);
	pthread_join(t, NULL);
	SAY("free p", cuMemFree(p));
	range("freed: range p", p, p);
	attrs("freed p", p, p);
	SAY("freed: memset p", cuMemsetD8(p, 1, 16));
	SAY("freed: copy to p", cuMemcpyHtoD(p, buf, 16));
	SAY("freed: free p (double)", cuMemFree(p));
	SAY("freed: free host p", cuMemFreeHost((void *)(uintptr_t)p));

	/* Pinned: flags as asked, then freed. */
	SAY("alloc host h 1000", cuMemAllocHost(&h, 1000));
	SAY("host flags h", cuMemHostGetFlags(&fl, h));
	printf("  %-38s %u\n", "flags", fl);
	/* (The flags of a second small pinned allocation are not shown:
	 * driver 580 answers those of the chunk it carved it from, which
	 * depend on what was allocated before.) */
	SAY("host alloc h2 1000 PORTABLE", cuMemHostAlloc(&h2, 1000,
	    CU_MEMHOSTALLOC_PORTABLE));
	SAY("free host h", cuMemFreeHost(h));
	fl = 99;
	SAY("freed: host flags h", cuMemHostGetFlags(&fl, h));
	printf("  %-38s %u\n", "flags", fl);
	SAY("freed: free host h (double)", cuMemFreeHost(h));
	SAY("free host h2", cuMemFreeHost(h2));

	/* Managed. */
	SAY("alloc managed m 1000", cuMemAllocManaged(&m, 1000,
	    CU_MEM_ATTACH_GLOBAL));
	range("range m+999", m + 999, m);
	range("range m+1000 (one past)", m + 1000, m);
	SAY("memset m 1001 (past end)", cuMemsetD8(m, 7, 1001));
	SAY("free m", cuMemFree(m));
	range("freed: range m", m, m);
	SAY("freed: free m (double)", cuMemFree(m));

	/* The neighbour kept its data through all of it. */
	char out[1000];
	SAY("read nb", cuMemcpyDtoH(out, nb, sizeof(out)));
	printf("  %-38s %s\n", "nb intact", memcmp(out, buf, sizeof(out)) ?
	    "NO" : "yes");
	SAY("free nb", cuMemFree(nb));

	/* A reset with memory in it, then frees. */
	CUdeviceptr r1 = 0, n1 = 0;
	void *rh = NULL;
	SAY("alloc r1 before reset", cuMemAlloc(&r1, 4096));
	SAY("alloc host rh before reset", cuMemAllocHost(&rh, 4096));
	SAY("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset(d));
	SAY("free r1 after reset", cuMemFree(r1));
	SAY("cuDevicePrimaryCtxRetain again", cuDevicePrimaryCtxRetain(&c, d));
	SAY("cuCtxSetCurrent", cuCtxSetCurrent(c));
	SAY("free r1 after reset+retain", cuMemFree(r1));
	SAY("free host rh after reset+retain", cuMemFreeHost(rh));
	SAY("alloc n1 after reset", cuMemAlloc(&n1, 4096));
	SAY("memset n1 after reset", cuMemsetD8(n1, 1, 4096));
	SAY("free n1", cuMemFree(n1));

	/* late DOUBLE: with no tombstones, a free of a block freed long
	 * ago, at the base of its segment, its neighbour live. */
	CUdeviceptr a = 0, b = 0;
	SAY("late: alloc a 4096", cuMemAlloc(&a, 4096));
	SAY("late: alloc b 4096", cuMemAlloc(&b, 4096));
	SAY("late: copy to b", cuMemcpyHtoD(b, buf, 4096));
	SAY("late: free a", cuMemFree(a));
	SAY("late: free a again (DOUBLE)", cuMemFree(a));
	SAY("late: read b", cuMemcpyDtoH(buf + 4096, b, 4096));
	printf("  %-38s %s\n", "b intact", memcmp(buf, buf + 4096, 4096) ?
	    "NO" : "yes");
	SAY("late: free b", cuMemFree(b));
	return 0;
}
