/*
 * tp_graph.c -- stream capture and graph memory under the shim
 * (check_graph.sh runs it plain, in audit mode and in pool mode; the
 * transcripts must be identical and the reports exact).
 *
 *   tp_graph memory   graph memory, every way it lives and dies:
 *       A  an allocation node (3 MiB + 4096), launched, never freed: leak
 *       B  cuMemAllocAsync captured (1 MiB + 8192), launched, never
 *          freed: leak
 *       C  an allocation freed by a free node of its graph, launched twice
 *       D  launched, freed by cuMemFree, freed again: one double free
 *       E  never launched, cuMemFree of its address: one invalid free
 *       F  cuMemAllocAsync and cuMemFreeAsync captured together
 *       G  one graph allocates, another frees
 *       H  CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH: relaunched
 *          while live, then freed by cuMemFreeAsync
 *       I  relaunch while live (refused), then freed
 *       J  exec and graph destroyed while live, then freed
 *       K  live across cuDevicePrimaryCtxReset (graph memory belongs to
 *          no context: H200), then freed
 *       L  cuMemFreeAsync of cuMemAlloc memory on a capturing stream:
 *          refused (a free node frees graph memory only), the capture
 *          goes on; then freed (pool mode: a pooled block, never shown
 *          to the driver)
 *   tp_graph capture  calls during a capture in each mode, from the
 *                     capturing thread, another thread, and another
 *                     thread in relaxed mode: what the driver answers,
 *                     whether the capture survives, how it ends.
 *   tp_graph fence M  pool mode's fence during a capture: a capture in
 *                     mode M (global, thread_local, relaxed) on one
 *                     thread while another (relaxed) frees and allocates
 *                     many blocks; the capture must end whole, and its
 *                     graph must run.
 *   tp_graph attach   cuStreamAttachMemAsync of managed memory: the base,
 *                     an interior pointer, lengths.
 *
 * Lines are calls and their CUresults, or values; never addresses.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAY(what, call) printf("%-52s -> %d\n", (what), (int)(call))
#define MIB (1u << 20)

static CUdevice dev;
static CUcontext ctx;
static CUstream s;

static void
init(void)
{
	SAY("cuInit", cuInit(0));
	SAY("cuDeviceGet", cuDeviceGet(&dev, 0));
	SAY("retain", cuDevicePrimaryCtxRetain(&ctx, dev));
	SAY("cuCtxSetCurrent", cuCtxSetCurrent(ctx));
	SAY("cuStreamCreate", cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
}

/* An allocation node of size in g; *d gets its address. */
static CUresult
alloc_node(CUgraph g, size_t size, CUdeviceptr *d, CUgraphNode *n)
{
	CUDA_MEM_ALLOC_NODE_PARAMS p;

	memset(&p, 0, sizeof(p));
	p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.poolProps.location.id = (int)dev;
	p.bytesize = size;
	CUresult r = cuGraphAddMemAllocNode(n, g, NULL, 0, &p);
	*d = p.dptr;
	return r;
}

/* A graph with one allocation node (and a free node of it when freed). */
static CUresult
one_alloc(const char *what, size_t size, bool freed, CUgraph *g,
    CUgraphExec *e, CUdeviceptr *d, unsigned long long flags)
{
	CUgraphNode n, f;
	char buf[96];

	SAY("cuGraphCreate", cuGraphCreate(g, 0));
	snprintf(buf, sizeof(buf), "%s: alloc node", what);
	SAY(buf, alloc_node(*g, size, d, &n));
	if (freed) {
		snprintf(buf, sizeof(buf), "%s: free node", what);
		SAY(buf, cuGraphAddMemFreeNode(&f, *g, &n, 1, *d));
	}
	snprintf(buf, sizeof(buf), "%s: instantiate", what);
	CUresult r = cuGraphInstantiate(e, *g, flags);
	SAY(buf, r);
	return r;
}

static void
launch(const char *what, CUgraphExec e)
{
	char buf[96];

	snprintf(buf, sizeof(buf), "%s: launch", what);
	SAY(buf, cuGraphLaunch(e, s));
	snprintf(buf, sizeof(buf), "%s: sync", what);
	SAY(buf, cuStreamSynchronize(s));
}

static void
live(const char *what, CUdeviceptr d)
{
	CUdeviceptr start = 0;
	CUresult r = cuPointerGetAttribute(&start,
	    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d);
	printf("  %-50s %s\n", what, r == CUDA_SUCCESS && start == d ?
	    "live" : "not live");
}

static int
memory(void)
{
	CUgraph g, g2;
	CUgraphExec e, e2;
	CUdeviceptr a, b, c, d, x, y;
	CUstream cs;

	init();
	/* A */
	one_alloc("A", 3 * MIB + 4096, false, &g, &e, &a, 0);
	live("A before its launch", a);
	launch("A", e);
	live("A after its launch", a);
	SAY("A: memset", cuMemsetD8(a, 0xa, 3 * MIB + 4096));
	/* B: captured */
	SAY("cuStreamCreate", cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING));
	SAY("B: begin capture", cuStreamBeginCapture(cs,
	    CU_STREAM_CAPTURE_MODE_GLOBAL));
	SAY("B: cuMemAllocAsync", cuMemAllocAsync(&b, MIB + 8192, cs));
	SAY("B: cuMemsetD8Async", cuMemsetD8Async(b, 0xb, MIB + 8192, cs));
	SAY("B: end capture", cuStreamEndCapture(cs, &g2));
	live("B after its capture", b);
	SAY("B: instantiate", cuGraphInstantiate(&e2, g2, 0));
	launch("B", e2);
	live("B after its launch", b);
	/* C */
	one_alloc("C", 2 * MIB, true, &g, &e, &c, 0);
	launch("C", e);
	launch("C again", e);
	live("C after its launches", c);
	/* D */
	one_alloc("D", 512 * 1024, false, &g, &e, &d, 0);
	launch("D", e);
	SAY("D: cuMemFree", cuMemFree(d));
	SAY("D: cuMemFree again", cuMemFree(d));
	SAY("D: cuGraphExecDestroy", cuGraphExecDestroy(e));
	SAY("D: cuGraphDestroy", cuGraphDestroy(g));
	/* E */
	one_alloc("E", 768 * 1024, false, &g, &e, &x, 0);
	SAY("E: cuMemFree, never launched", cuMemFree(x));
	SAY("E: cuGraphExecDestroy", cuGraphExecDestroy(e));
	SAY("E: cuGraphDestroy", cuGraphDestroy(g));
	/* F */
	SAY("F: begin capture", cuStreamBeginCapture(cs,
	    CU_STREAM_CAPTURE_MODE_GLOBAL));
	SAY("F: cuMemAllocAsync", cuMemAllocAsync(&y, 640 * 1024, cs));
	SAY("F: cuMemsetD8Async", cuMemsetD8Async(y, 0xf, 640 * 1024, cs));
	SAY("F: cuMemFreeAsync", cuMemFreeAsync(y, cs));
	SAY("F: end capture", cuStreamEndCapture(cs, &g));
	SAY("F: instantiate", cuGraphInstantiate(&e, g, 0));
	launch("F", e);
	launch("F again", e);
	live("F after its launches", y);
	/* G */
	CUgraph ga, gf;
	CUgraphExec ea, ef;
	CUgraphNode n, fn;
	SAY("G: cuGraphCreate", cuGraphCreate(&ga, 0));
	SAY("G: alloc node", alloc_node(ga, 256 * 1024, &x, &n));
	SAY("G: cuGraphCreate", cuGraphCreate(&gf, 0));
	SAY("G: free node in another graph", cuGraphAddMemFreeNode(&fn, gf,
	    NULL, 0, x));
	SAY("G: instantiate the allocating graph", cuGraphInstantiate(&ea,
	    ga, 0));
	SAY("G: instantiate the freeing graph", cuGraphInstantiate(&ef, gf,
	    0));
	launch("G allocating", ea);
	live("G after the allocating launch", x);
	launch("G freeing", ef);
	live("G after the freeing launch", x);
	/* H */
	one_alloc("H", 384 * 1024, false, &g, &e, &x,
	    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
	launch("H", e);
	launch("H again (auto free)", e);
	live("H after its relaunch", x);
	SAY("H: cuMemFreeAsync", cuMemFreeAsync(x, s));
	SAY("H: sync", cuStreamSynchronize(s));
	/* I */
	one_alloc("I", 320 * 1024, false, &g, &e, &x, 0);
	launch("I", e);
	SAY("I: relaunch while live", cuGraphLaunch(e, s));
	SAY("I: sync", cuStreamSynchronize(s));
	SAY("I: cuMemFree", cuMemFree(x));
	/* J */
	one_alloc("J", 448 * 1024, false, &g, &e, &x, 0);
	launch("J", e);
	SAY("J: cuGraphExecDestroy while live", cuGraphExecDestroy(e));
	SAY("J: cuGraphDestroy while live", cuGraphDestroy(g));
	live("J after both", x);
	SAY("J: cuMemFree", cuMemFree(x));
	/* K */
	one_alloc("K", 576 * 1024, false, &g, &e, &x, 0);
	launch("K", e);
	SAY("K: cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset(dev));
	SAY("K: retain", cuDevicePrimaryCtxRetain(&ctx, dev));
	SAY("K: cuCtxSetCurrent", cuCtxSetCurrent(ctx));
	live("K after the reset", x);
	SAY("K: cuMemFree", cuMemFree(x));
	/* L */
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	SAY("L: cuStreamCreate", cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING));
	SAY("L: cuMemAlloc", cuMemAlloc(&x, 8192));
	SAY("L: begin capture", cuStreamBeginCapture(cs,
	    CU_STREAM_CAPTURE_MODE_GLOBAL));
	SAY("L: captured cuMemFreeAsync of it", cuMemFreeAsync(x, cs));
	SAY("L: cuStreamIsCapturing", cuStreamIsCapturing(cs, &st));
	printf("  %-50s %d\n", "status", (int)st);
	SAY("L: end capture", cuStreamEndCapture(cs, &g));
	SAY("L: cuMemFree", cuMemFree(x));
	return 0;
}

/* ------------------------------------------------------------ capture */

static void capture_wrong_thread(void);

static const char *const mname[3] = { "global", "thread_local", "relaxed" };
static struct {
	int relaxed;
	CUresult alloc, freed, host, hfree;
	CUdeviceptr old;
	void *hold;
} other;

/* The calls, on this thread; results into o. */
static void
calls(int relaxed, CUresult *alloc, CUresult *freed, CUresult *host,
    CUresult *hfree, CUdeviceptr old, void *hold)
{
	CUdeviceptr d = 0;
	void *h = NULL;
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;

	if (relaxed)
		cuThreadExchangeStreamCaptureMode(&m);
	*alloc = cuMemAlloc(&d, 4096);
	*freed = cuMemFree(old);
	*host = cuMemAllocHost(&h, 4096);
	*hfree = cuMemFreeHost(hold);
	if (*alloc == CUDA_SUCCESS)
		cuMemFree(d);
	if (*host == CUDA_SUCCESS)
		cuMemFreeHost(h);
	if (relaxed)
		cuThreadExchangeStreamCaptureMode(&m);
}

static void *
other_main(void *arg)
{
	(void)arg;
	cuCtxSetCurrent(ctx);
	calls(other.relaxed, &other.alloc, &other.freed, &other.host,
	    &other.hfree, other.old, other.hold);
	return NULL;
}

static int
capture(void)
{
	init();
	for (int mode = 0; mode < 3; mode++) {
		for (int who = 0; who < 4; who++) {
			static const char *const wname[4] = { "same thread",
				"same thread relaxed", "other thread",
				"other thread relaxed" };
			CUstream cs;
			CUgraph g = NULL;
			CUdeviceptr old = 0, m = 0;
			void *hold = NULL;
			CUresult alloc, freed, host, hfree;
			CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

			cuMemAlloc(&old, 8192);
			cuMemAllocHost(&hold, 8192);
			cuMemAllocManaged(&m, 8192, CU_MEM_ATTACH_GLOBAL);
			cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING);
			printf("%s, %s:\n", mname[mode], wname[who]);
			SAY("  begin", cuStreamBeginCapture(cs,
			    (CUstreamCaptureMode)mode));
			SAY("  captured memset of a live block",
			    cuMemsetD8Async(old, 1, 8192, cs));
			if (who < 2) {
				calls(who == 1, &alloc, &freed, &host, &hfree,
				    old, hold);
			} else {
				pthread_t t;
				other.relaxed = who == 3;
				other.old = old;
				other.hold = hold;
				pthread_create(&t, NULL, other_main, NULL);
				pthread_join(t, NULL);
				alloc = other.alloc;
				freed = other.freed;
				host = other.host;
				hfree = other.hfree;
			}
			SAY("  cuMemAlloc", alloc);
			SAY("  cuMemFree of a block made before", freed);
			SAY("  cuMemAllocHost", host);
			SAY("  cuMemFreeHost of a block made before", hfree);
			SAY("  cuStreamIsCapturing", cuStreamIsCapturing(cs,
			    &st));
			printf("  %-50s %d\n", "status", (int)st);
			SAY("  end", cuStreamEndCapture(cs, &g));
			if (g != NULL)
				cuGraphDestroy(g);
			if (freed != CUDA_SUCCESS)
				SAY("  cuMemFree after the capture",
				    cuMemFree(old));
			if (hfree != CUDA_SUCCESS)
				SAY("  cuMemFreeHost after the capture",
				    cuMemFreeHost(hold));
			cuMemFree(m);
			cuStreamDestroy(cs);
		}
	}
	capture_wrong_thread();
	return 0;
}

/* A strict capture ended from another thread: the driver refuses
 * (WRONG_THREAD) and the capture is over all the same (H200). */
static CUstream wt_stream;
static CUresult wt_end;

static void *
wrong_thread_end(void *arg)
{
	CUgraph g = NULL;

	(void)arg;
	cuCtxSetCurrent(ctx);
	wt_end = cuStreamEndCapture(wt_stream, &g);
	return NULL;
}

static void
capture_wrong_thread(void)
{
	CUdeviceptr d = 0, d2 = 0;
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	pthread_t t;

	printf("global, ended by another thread:\n");
	SAY("  cuMemAlloc before", cuMemAlloc(&d, 4096));
	SAY("  cuStreamCreate", cuStreamCreate(&wt_stream,
	    CU_STREAM_NON_BLOCKING));
	SAY("  begin", cuStreamBeginCapture(wt_stream,
	    CU_STREAM_CAPTURE_MODE_GLOBAL));
	pthread_create(&t, NULL, wrong_thread_end, NULL);
	pthread_join(t, NULL);
	SAY("  end from another thread", wt_end);
	SAY("  cuStreamIsCapturing", cuStreamIsCapturing(wt_stream, &st));
	printf("  %-50s %d\n", "status", (int)st);
	/* No capture is in progress: allowed again. */
	SAY("  cuMemFree of the block made before", cuMemFree(d));
	SAY("  cuMemAlloc after", cuMemAlloc(&d2, 4096));
	SAY("  cuMemFree of it", cuMemFree(d2));
	SAY("  cuCtxSynchronize", cuCtxSynchronize());
}

/* -------------------------------------------------------------- fence */

static volatile int capturing, churned;

static void *
churn(void *arg)
{
	CUdeviceptr d[64];
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;

	(void)arg;
	cuCtxSetCurrent(ctx);
	cuThreadExchangeStreamCaptureMode(&m);
	while (!__atomic_load_n(&capturing, __ATOMIC_ACQUIRE))
		;
	/* Many frees ask the pools' helper for barriers; allocations that
	 * find pending blocks want one too.  None may be taken now. */
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 64; i++)
			if (cuMemAlloc(&d[i], 4096 * (1 + i % 8)) !=
			    CUDA_SUCCESS)
				return (void *)1;
		for (int i = 0; i < 64; i++)
			if (cuMemFree(d[i]) != CUDA_SUCCESS)
				return (void *)1;
	}
	__atomic_store_n(&churned, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int
fence(const char *mode)
{
	int m = strcmp(mode, "relaxed") == 0 ? CU_STREAM_CAPTURE_MODE_RELAXED :
	    strcmp(mode, "thread_local") == 0 ?
	    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL : CU_STREAM_CAPTURE_MODE_GLOBAL;
	CUdeviceptr blk, pend[32];
	CUgraph g = NULL;
	CUgraphExec e;
	pthread_t t;
	void *tr = NULL;
	unsigned char buf[4096];

	init();
	/* Blocks pending in the pools, the helper running. */
	for (int i = 0; i < 32; i++)
		cuMemAlloc(&pend[i], 4096);
	for (int i = 0; i < 32; i++)
		cuMemFree(pend[i]);
	SAY("cuMemAlloc the captured block", cuMemAlloc(&blk, 4096));
	pthread_create(&t, NULL, churn, NULL);
	SAY("begin capture", cuStreamBeginCapture(s, (CUstreamCaptureMode)m));
	__atomic_store_n(&capturing, 1, __ATOMIC_RELEASE);
	SAY("captured memset", cuMemsetD8Async(blk, 0x5a, 4096, s));
	pthread_join(t, &tr);
	printf("  %-50s %s\n", "the other thread's calls", tr == NULL &&
	    churned ? "all succeeded" : "one failed");
	SAY("captured memset again", cuMemsetD8Async(blk, 0x5b, 4096, s));
	SAY("end capture", cuStreamEndCapture(s, &g));
	SAY("instantiate", cuGraphInstantiate(&e, g, 0));
	SAY("cuMemsetD8 before the launch", cuMemsetD8(blk, 0, 4096));
	SAY("launch", cuGraphLaunch(e, s));
	SAY("sync", cuStreamSynchronize(s));
	SAY("read back", cuMemcpyDtoH(buf, blk, sizeof(buf)));
	int ok = 1;
	for (size_t i = 0; i < sizeof(buf); i++)
		ok &= buf[i] == 0x5b;
	printf("  %-50s %s\n", "the graph's memsets ran", ok ? "yes" : "no");
	SAY("cuMemFree", cuMemFree(blk));
	SAY("cuCtxSynchronize after the capture", cuCtxSynchronize());
	return 0;
}

/* ------------------------------------------------------------- attach */

static int
attach(void)
{
	CUdeviceptr m, m2;

	init();
	SAY("cuMemAllocManaged 64 KiB", cuMemAllocManaged(&m, 65536,
	    CU_MEM_ATTACH_GLOBAL));
	SAY("cuMemAllocManaged 4 KiB", cuMemAllocManaged(&m2, 4096,
	    CU_MEM_ATTACH_GLOBAL));
	SAY("attach base, length 0", cuStreamAttachMemAsync(s, m, 0,
	    CU_MEM_ATTACH_SINGLE));
	SAY("attach base, whole length", cuStreamAttachMemAsync(s, m, 65536,
	    CU_MEM_ATTACH_SINGLE));
	SAY("attach interior", cuStreamAttachMemAsync(s, m + 4096, 0,
	    CU_MEM_ATTACH_SINGLE));
	SAY("attach interior with a length", cuStreamAttachMemAsync(s,
	    m + 4096, 4096, CU_MEM_ATTACH_SINGLE));
	SAY("attach host", cuStreamAttachMemAsync(s, m2, 0,
	    CU_MEM_ATTACH_HOST));
	SAY("attach global", cuStreamAttachMemAsync(s, m2, 0,
	    CU_MEM_ATTACH_GLOBAL));
	SAY("sync", cuStreamSynchronize(s));
	SAY("cuMemsetD8 of it", cuMemsetD8(m, 3, 65536));
	SAY("host reads it", ((volatile unsigned char *)(uintptr_t)m)[65535]
	    == 3 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
	SAY("cuMemFree", cuMemFree(m));
	SAY("attach after the free", cuStreamAttachMemAsync(s, m, 0,
	    CU_MEM_ATTACH_SINGLE));
	SAY("cuMemFree", cuMemFree(m2));
	return 0;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *w = argc > 1 ? argv[1] : "";
	if (strcmp(w, "memory") == 0)
		return memory();
	if (strcmp(w, "capture") == 0)
		return capture();
	if (strcmp(w, "fence") == 0 && argc > 2)
		return fence(argv[2]);
	if (strcmp(w, "attach") == 0)
		return attach();
	fprintf(stderr, "usage: tp_graph memory|capture|fence MODE|attach\n");
	return 2;
}
