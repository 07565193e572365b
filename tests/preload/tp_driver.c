/*
 * tp_driver.c -- a driver-API program (linked with -lcuda, so it calls the
 * driver through its PLT) run under the shim by tests/preload/check_*.sh.
 *
 *   tp_driver SCENARIO [args]
 *
 * Each scenario does a known set of allocations, frees and mistakes, and
 * prints KEY=VALUE lines (addresses, sizes the driver chose) that the
 * script hands to check.py.  The program itself asserts what the driver
 * answered (the shim must return the driver's answers unchanged) and
 * exits 1 when one differs.  It runs without the shim as well.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "cuwarden_annotate.h"
#include "fakecuda.h"

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
init(void)
{
	OK(cuInit(0));
	OK(cuDeviceGet(&dev, 0));
	OK(cuDevicePrimaryCtxRetain(&pctx, dev));
	OK(cuCtxSetCurrent(pctx));
}

/* cuCtxCreate is cuCtxCreate_v4 (with parameters) in 13.0's cuda.h,
 * cuCtxCreate_v2 before. */
static CUresult
ctx_create(CUcontext *c, CUdevice d)
{
#if CUDA_VERSION >= 13000
	return cuCtxCreate(c, NULL, 0, d);
#else
	return cuCtxCreate(c, 0, d);
#endif
}

static void
var(const char *key, unsigned long long v)
{
	printf("%s=%llu\n", key, v);
}

static void
varx(const char *key, unsigned long long v)
{
	printf("%s=0x%llx\n", key, v);
}

/* The driver's own cuMemAlloc_v2, past the shim: every lookup by name is
 * redirected to the shim's wrapper, so the script hands us the distance
 * between cuMemAlloc_v2 and cuDeviceGet (not hooked) in libcuda's symbol
 * table (nm -D), and we add it to cuDeviceGet's address. */
static long long real_alloc_delta;

static CUresult
real_mem_alloc(CUdeviceptr *p, size_t n)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	char *base = h != NULL ? dlsym(h, "cuDeviceGet") : NULL;

	if (base == NULL || real_alloc_delta == 0)
		return CUDA_ERROR_NOT_FOUND;
	CUresult (*f)(CUdeviceptr *, size_t) =
	    (CUresult (*)(CUdeviceptr *, size_t))(void *)(base +
	    real_alloc_delta);
	return f(p, n);
}

/* ------------------------------------------------------------ families */

/* One leak per family from a known call site, one matched pair each. */
static void
leak_device(int n)
{
	CUdeviceptr p;

	for (int i = 0; i < n; i++)
		OK(cuMemAlloc(&p, 1 << 20));
}

static int
scenario_families(void)
{
	CUdeviceptr p, q;
	size_t pitch;
	void *h, *h2;
	CUstream s;
	CUmemoryPool pool;

	init();
	OK(cuStreamCreate(&s, 0));
	/* device: 3 leaks from one site, one pair */
	leak_device(3);
	OK(cuMemAlloc(&q, 4096));
	OK(cuMemFree(q));
	/* pitch */
	OK(cuMemAllocPitch(&p, &pitch, 1000, 10, 4));
	var("pitch_bytes", (unsigned long long)pitch * 10);
	OK(cuMemAllocPitch(&q, &pitch, 100, 2, 4));
	OK(cuMemFree(q));
	/* managed */
	OK(cuMemAllocManaged(&p, 65536, CU_MEM_ATTACH_GLOBAL));
	OK(cuMemAllocManaged(&q, 512, CU_MEM_ATTACH_GLOBAL));
	OK(cuMemFree(q));
	/* pinned, both entry points */
	OK(cuMemHostAlloc(&h, 8192, 0));
	OK(cuMemAllocHost(&h, 4096));
	OK(cuMemHostAlloc(&h2, 100, CU_MEMHOSTALLOC_PORTABLE));
	OK(cuMemFreeHost(h2));
	/* registered */
	void *buf = aligned_alloc(4096, 3 * 4096);
	void *buf2 = aligned_alloc(4096, 4096);
	OK(cuMemHostRegister(buf, 3 * 4096, 0));
	OK(cuMemHostRegister(buf2, 4096, 0));
	OK(cuMemHostUnregister(buf2));
	free(buf2);
	/* stream-ordered, and from a pool */
	OK(cuMemAllocAsync(&p, 2048, s));
	OK(cuMemAllocAsync(&q, 2048, s));
	OK(cuMemFreeAsync(q, s));
	OK(cuDeviceGetDefaultMemPool(&pool, dev));
	OK(cuMemAllocFromPoolAsync(&p, 6144, pool, s));
	OK(cuMemAllocFromPoolAsync(&q, 6144, pool, s));
	OK(cuMemFreeAsync(q, s));
	/* a pool of our own, destroyed with an allocation outstanding: the
	 * allocation lives on (cuda.h), so it stays a leak */
	CUmemPoolProps pp;
	CUmemoryPool own;
	memset(&pp, 0, sizeof(pp));
	pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	pp.location.id = dev;
	OK(cuMemPoolCreate(&own, &pp));
	OK(cuMemAllocFromPoolAsync(&p, 7168, own, s));
	OK(cuMemPoolDestroy(own));
	OK(cuStreamSynchronize(s));
	/* VMM: a handle, a reservation and a mapping, leaked; then a clean
	 * set (released while mapped, which is legal). */
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	size_t gran = 0;
	OK(cuMemGetAllocationGranularity(&gran, &prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	var("gran", gran);
	CUmemGenericAllocationHandle mh, mh2;
	CUdeviceptr va, va2;
	OK(cuMemCreate(&mh, gran, &prop, 0));
	OK(cuMemAddressReserve(&va, 2 * gran, 0, 0, 0));
	OK(cuMemMap(va, gran, 0, mh, 0));
	OK(cuMemCreate(&mh2, gran, &prop, 0));
	OK(cuMemAddressReserve(&va2, gran, 0, 0, 0));
	OK(cuMemMap(va2, gran, 0, mh2, 0));
	OK(cuMemRelease(mh2));
	OK(cuMemUnmap(va2, gran));
	OK(cuMemAddressFree(va2, gran));
	/* arrays */
	CUDA_ARRAY_DESCRIPTOR ad;
	memset(&ad, 0, sizeof(ad));
	ad.Width = 16;
	ad.Height = 16;
	ad.Format = CU_AD_FORMAT_FLOAT;
	ad.NumChannels = 1;
	CUarray arr, arr2;
	OK(cuArrayCreate(&arr, &ad));
	OK(cuArrayCreate(&arr2, &ad));
	OK(cuArrayDestroy(arr2));
	/* cuMemFree(0) succeeds and is no free; cuMemGetInfo with NULL */
	OK(cuMemFree(0));
	size_t total = 0;
	OK(cuMemGetInfo(NULL, &total));
	/* a failed allocation */
	EXPECT(cuMemAlloc(&q, 0), INVAL);
	return errors;
}

/* ------------------------------------------------------------ violations */

static int
scenario_violations(void)
{
	CUdeviceptr p, q, r;
	void *h;

	init();
	/* double free */
	OK(cuMemAlloc(&p, 4096));
	varx("dbl", p);
	OK(cuMemFree(p));
	EXPECT(cuMemFree(p), INVAL);
	/* interior free, then the right free */
	OK(cuMemAlloc(&q, 8192));
	varx("interior", q + 256);
	EXPECT(cuMemFree(q + 256), INVAL);
	OK(cuMemFree(q));
	/* mismatched: cuMemFreeHost of device memory, cuMemFree of pinned */
	OK(cuMemAlloc(&r, 12288));
	varx("mis_dev", r);
	EXPECT(cuMemFreeHost((void *)(uintptr_t)r), INVAL);
	OK(cuMemFree(r));
	OK(cuMemHostAlloc(&h, 4096, 0));
	varx("mis_host", (uintptr_t)h);
	EXPECT(cuMemFree((CUdeviceptr)(uintptr_t)h), INVAL);
	OK(cuMemFreeHost(h));
	/* invalid: never allocated */
	EXPECT(cuMemFree((CUdeviceptr)0xdead0000), INVAL);
	/* failed free: the driver refuses, the memory stays (a leak) */
	OK(cuMemAlloc(&p, 20480));
	varx("failed", p);
	fakecuda_inject("fail_free", 1);
	EXPECT(cuMemFree(p), CUDA_ERROR_ILLEGAL_ADDRESS);
	/* untracked: memory the shim never saw allocated */
	OK(real_mem_alloc(&q, 4096));
	OK(cuMemFree(q));
	/* annotations: free while referenced (the free still happens),
	 * transfer while shared, release without retain */
	OK(cuMemAlloc(&p, 24576));
	varx("fwr", p);
	if (CW_ANNOTATE_RETAIN(p) != 0)
		fprintf(stderr, "retain failed\n"), errors++;
	OK(cuMemFree(p));
	OK(cuMemAlloc(&q, 28672));
	varx("tws", q);
	if (CW_ANNOTATE_RETAIN(q) != 0)
		fprintf(stderr, "retain failed\n"), errors++;
	(void)CW_ANNOTATE_TRANSFER(q, "someone-else");
	(void)CW_ANNOTATE_RELEASE(q);
	(void)CW_ANNOTATE_RELEASE(q); /* one more than retained */
	OK(cuMemFree(q));
	/* VMM: double release, unmap of nothing */
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	size_t gran = 0;
	OK(cuMemGetAllocationGranularity(&gran, &prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CUmemGenericAllocationHandle mh;
	OK(cuMemCreate(&mh, gran, &prop, 0));
	varx("vmm", mh);
	OK(cuMemRelease(mh));
	EXPECT(cuMemRelease(mh), INVAL);
	/* array destroyed twice */
	CUDA_ARRAY_DESCRIPTOR ad;
	memset(&ad, 0, sizeof(ad));
	ad.Width = 8;
	ad.Height = 8;
	ad.Format = CU_AD_FORMAT_UNSIGNED_INT8;
	ad.NumChannels = 4;
	CUarray arr;
	OK(cuArrayCreate(&arr, &ad));
	varx("arr", (uintptr_t)arr);
	OK(cuArrayDestroy(arr));
	if (cuArrayDestroy(arr) == CUDA_SUCCESS)
		fprintf(stderr, "second cuArrayDestroy succeeded\n"), errors++;
	return errors;
}

/* Only a double free: for CUWARDEN_ON_VIOLATION=abort. */
static int
scenario_double(void)
{
	CUdeviceptr p;

	init();
	OK(cuMemAlloc(&p, 4096));
	OK(cuMemFree(p));
	EXPECT(cuMemFree(p), INVAL);
	printf("after=1\n");
	return errors;
}

/* Copies and sets past the end of an allocation (CUWARDEN_CHECK_BOUNDS=1
 * records them; the driver refuses them itself), and in-bounds ones. */
static int
scenario_bounds(void)
{
	CUdeviceptr p, q;
	char buf[8192];
	CUstream s;

	init();
	memset(buf, 1, sizeof(buf));
	OK(cuStreamCreate(&s, 0));
	OK(cuMemAlloc(&p, 4096));
	OK(cuMemAlloc(&q, 8192));
	varx("p", p);
	varx("q", q);
	/* in bounds: nothing to say */
	OK(cuMemcpyHtoD(p, buf, 4096));
	OK(cuMemcpyDtoH(buf, q + 4096, 4096));
	OK(cuMemsetD32(p, 7, 1024));
	OK(cuMemcpy(q, p, 4096));
	OK(cuMemcpyAsync(q + 4096, p, 4096, s));
	OK(cuMemsetD8Async(q, 0, 8192, s));
	OK(cuStreamSynchronize(s));
	/* past the end: the driver says invalid value, the shim records */
	EXPECT(cuMemcpyHtoD(p + 4000, buf, 200), INVAL);
	EXPECT(cuMemsetD32(p + 4092, 0, 2), INVAL);
	EXPECT(cuMemcpy(p, q, 5000), INVAL);
	EXPECT(cuMemsetD16Async(q + 8190, 0, 2, s), INVAL);
	OK(cuStreamSynchronize(s));
	OK(cuMemFree(p));
	OK(cuMemFree(q));
	return errors;
}

/* ------------------------------------------------------------ teardown */

static int
scenario_teardown(void)
{
	CUcontext c2;
	CUdeviceptr p;
	void *h;
	CUstream s;

	init();
	/* A context of our own: its device, managed and pinned memory goes
	 * with cuCtxDestroy; stream-ordered and VMM memory survive. */
	OK(ctx_create(&c2, dev));
	OK(cuMemAlloc(&p, 4096));
	OK(cuMemAllocManaged(&p, 4096, CU_MEM_ATTACH_GLOBAL));
	OK(cuMemHostAlloc(&h, 4096, 0));
	OK(cuStreamCreate(&s, 0));
	OK(cuMemAllocAsync(&p, 40960, s));
	OK(cuStreamSynchronize(s));
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	size_t gran = 0;
	OK(cuMemGetAllocationGranularity(&gran, &prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	var("gran", gran);
	CUmemGenericAllocationHandle mh;
	OK(cuMemCreate(&mh, gran, &prop, 0));
	OK(cuCtxDestroy(c2));
	/* The primary context: reset frees its memory. */
	OK(cuCtxSetCurrent(pctx));
	OK(cuMemAlloc(&p, 8192));
	OK(cuDevicePrimaryCtxReset(dev));
	/* After a reset the context is inactive until the next retain
	 * (driver 580); a release that is not the last frees nothing. */
	OK(cuDevicePrimaryCtxRetain(&pctx, dev));   /* count 2 */
	OK(cuCtxSetCurrent(pctx));
	OK(cuMemAlloc(&p, 16384));
	varx("before_last", p);
	OK(cuDevicePrimaryCtxRelease(dev));          /* count 1 */
	OK(cuMemFree(p)); /* still ours: a normal free */
	OK(cuMemAlloc(&p, 24576));
	/* The last release destroys it, with its memory. */
	OK(cuDevicePrimaryCtxRelease(dev));          /* count 0 */
	/* A new life: its memory is a leak. */
	OK(cuDevicePrimaryCtxRetain(&pctx, dev));
	OK(cuCtxSetCurrent(pctx));
	OK(cuMemAlloc(&p, 32768));
	return errors;
}

/* Two devices (FAKECUDA_DEVICES=2): a record's device is the one current
 * when it was made (or prop->location.id), never the one current when it
 * is freed. */
static int
scenario_devices(void)
{
	CUdevice d1;
	CUcontext c1;
	CUdeviceptr a0, a1, b1;

	init();
	OK(cuDeviceGet(&d1, 1));
	OK(cuDevicePrimaryCtxRetain(&c1, d1));
	OK(cuMemAlloc(&a0, 1000));          /* device 0 */
	OK(cuCtxSetCurrent(c1));
	OK(cuMemAlloc(&a1, 1001));          /* device 1, leaked */
	OK(cuMemAlloc(&b1, 1002));          /* device 1, freed from device 0 */
	OK(cuCtxSetCurrent(pctx));
	OK(cuMemFree(b1));
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = d1;
	size_t gran = 0;
	OK(cuMemGetAllocationGranularity(&gran, &prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CUmemGenericAllocationHandle mh;
	OK(cuMemCreate(&mh, gran, &prop, 0)); /* device 1, made from device 0 */
	(void)a0;
	return errors;
}

/* ------------------------------------------------------------ threads */

#define NTHREADS 8
#define PER_THREAD 500

static void *
thread_main(void *arg)
{
	CUdeviceptr p;
	CUstream s;

	(void)arg;
	OK(cuCtxSetCurrent(pctx));
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < PER_THREAD; i++) {
		OK(cuMemAlloc(&p, 256 + (size_t)i));
		OK(cuMemFree(p));
		OK(cuMemAllocAsync(&p, 512, s));
		OK(cuMemFreeAsync(p, s));
	}
	OK(cuStreamSynchronize(s));
	OK(cuMemAlloc(&p, 4096)); /* one leak per thread */
	return NULL;
}

/* A thread with no context: the driver refuses, the shim records
 * nothing and must not crash. */
static void *
thread_noctx(void *arg)
{
	CUdeviceptr p;

	(void)arg;
	EXPECT(cuMemAlloc(&p, 4096), CUDA_ERROR_INVALID_CONTEXT);
	size_t total;
	EXPECT(cuMemGetInfo(NULL, &total), CUDA_ERROR_INVALID_CONTEXT);
	return NULL;
}

/* 8 threads free the same pointer at once, 50 times: the driver frees it
 * for one, the others get CUDA_ERROR_INVALID_VALUE: double frees, never
 * failed frees. */
#define RACE_ROUNDS 50
static pthread_barrier_t race_barrier;
static CUdeviceptr race_ptr[RACE_ROUNDS];
static int race_ok;

static void *
thread_race(void *arg)
{
	(void)arg;
	OK(cuCtxSetCurrent(pctx));
	for (int i = 0; i < RACE_ROUNDS; i++) {
		pthread_barrier_wait(&race_barrier);
		CUresult r = cuMemFree(race_ptr[i]);
		if (r == CUDA_SUCCESS)
			__atomic_fetch_add(&race_ok, 1, __ATOMIC_RELAXED);
		else if (r != INVAL)
			fprintf(stderr, "race: %d\n", (int)r), errors++;
	}
	return NULL;
}

static int
scenario_race(void)
{
	pthread_t t[NTHREADS];

	init();
	for (int i = 0; i < RACE_ROUNDS; i++)
		OK(cuMemAlloc(&race_ptr[i], 4096));
	pthread_barrier_init(&race_barrier, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, thread_race, NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	if (race_ok != RACE_ROUNDS)
		fprintf(stderr, "race: %d frees succeeded\n", race_ok), errors++;
	return errors;
}

/* No lock of the shim's is held across a driver call: while one thread
 * sits in cuMemFree (the driver waits 300 ms for queued work), another
 * allocates and frees (stream-ordered) freely. */
static int nolock_done;
static CUdeviceptr nolock_p;

static void *
thread_slow_free(void *arg)
{
	(void)arg;
	OK(cuCtxSetCurrent(pctx));
	OK(cuMemFree(nolock_p));
	__atomic_store_n(&nolock_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int
scenario_nolock(void)
{
	CUstream s;
	pthread_t t;
	CUdeviceptr q;

	init();
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuMemAlloc(&nolock_p, 4096));
	OK(fakecuda_launch_busy(s, 300));
	pthread_create(&t, NULL, thread_slow_free, NULL);
	usleep(30000);
	/* (a synchronous free would wait for the device too: stream-ordered
	 * calls on a stream of their own do not) */
	CUstream s2;
	OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < 200; i++) {
		OK(cuMemAllocAsync(&q, 512, s2));
		OK(cuMemFreeAsync(q, s2));
	}
	int early = !__atomic_load_n(&nolock_done, __ATOMIC_ACQUIRE);
	pthread_join(t, NULL);
	var("ran_while_blocked", (unsigned long long)early);
	return errors;
}

static int
scenario_threads(void)
{
	pthread_t t[NTHREADS + 1];

	init();
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, thread_main, NULL);
	pthread_create(&t[NTHREADS], NULL, thread_noctx, NULL);
	for (int i = 0; i <= NTHREADS; i++)
		pthread_join(t[i], NULL);
	return errors;
}

/* ------------------------------------------------------------ processes */

static int
scenario_fork(void)
{
	CUdeviceptr p;

	init();
	OK(cuMemAlloc(&p, 65536));
	varx("leak", p);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		/* CUDA is unusable here: the driver says so, the shim passes
		 * it straight through and writes no report. */
		CUresult r = cuMemFree(p);
		CUdeviceptr q;
		CUresult r2 = cuMemAlloc(&q, 4096);
		exit(r == CUDA_SUCCESS || r2 == CUDA_SUCCESS ? 3 : 0);
	}
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "child: status %d\n", st), errors++;
	return errors;
}

static int
scenario_exec(const char *self)
{
	CUdeviceptr p;
	CUipcMemHandle ih;
	char hex[2 * sizeof(ih) + 1];

	init();
	OK(cuMemAlloc(&p, 98304));
	OK(cuIpcGetMemHandle(&ih, p));
	for (size_t i = 0; i < sizeof(ih); i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)ih.reserved[i]);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execl(self, self, "execchild", hex, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "exec child: status %d\n", st), errors++;
	return errors;
}

/* The exec'd child: the shim came with LD_PRELOAD.  Opens the parent's
 * IPC handle twice (one closed, one leaked) and leaks a device block. */
static int
scenario_execchild(const char *hex)
{
	CUipcMemHandle ih;
	CUdeviceptr p, a, b;

	for (size_t i = 0; i < sizeof(ih); i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		ih.reserved[i] = (char)v;
	}
	init();
	OK(cuMemAlloc(&p, 12345));
	OK(cuIpcOpenMemHandle(&a, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
	OK(cuIpcOpenMemHandle(&b, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
	OK(cuIpcCloseMemHandle(b));
	return errors;
}

/* A vfork child that _exits: the parent's report must still be written,
 * by the parent, at its own exit. */
static int
scenario_vfork(void)
{
	CUdeviceptr p;

	init();
	OK(cuMemAlloc(&p, 4096 * 5));
	fflush(stdout);
	pid_t pid = vfork();
	if (pid == 0)
		_exit(9);
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 9)
		fprintf(stderr, "vfork child: status %d\n", st), errors++;
	var("pid", (unsigned long long)getpid());
	return errors;
}

static void *
thread_exit_fn(void *arg)
{
	int how = (int)(intptr_t)arg;

	if (how == 0)
		_exit(5);
	exit(6);
}

static void
own_term(int sig)
{
	(void)sig;
	_exit(7);
}

static int
scenario_exit(const char *how)
{
	CUdeviceptr p;

	/* A handler of the program's own, installed before CUDA is used:
	 * the shim must leave it in place. */
	if (strcmp(how, "ownterm") == 0)
		signal(SIGTERM, own_term);
	init();
	OK(cuMemAlloc(&p, 4096 * 3));
	fflush(stdout);
	if (strcmp(how, "_exit") == 0)
		_exit(3);
	if (strcmp(how, "_Exit") == 0)
		_Exit(4);
	/* Fatal signals: the report is written, the process dies of the
	 * signal all the same. */
	if (strcmp(how, "abort") == 0)
		abort();
	if (strcmp(how, "term") == 0 || strcmp(how, "ownterm") == 0)
		raise(SIGTERM);
	if (strcmp(how, "segv") == 0) {
		volatile int *bad = (volatile int *)(uintptr_t)(getpid() & 8);
		*bad = 1; /* address 0 or 8: a fault the compiler cannot see */
	}
	if (strcmp(how, "killme") == 0) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	pthread_t t;
	pthread_create(&t, NULL, thread_exit_fn,
	    (void *)(intptr_t)(strcmp(how, "thread_exit") == 0 ? 0 : 1));
	for (;;)
		pause();
}

/* ------------------------------------------------------------ owner */

static int
scenario_owner(const char *dso)
{
	CUdeviceptr p;

	init();
	void *h = dlopen(dso, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	int (*leak)(size_t) = (int (*)(size_t))dlsym(h, "tp_owner_leak");
	if (leak == NULL || leak(77777) != 0)
		errors++;
	dlclose(h);
	OK(cuMemAlloc(&p, 55555)); /* the program's own */
	return errors;
}

/* ------------------------------------------------------------ pool */

static int
scenario_pool(bool audit)
{
	CUdeviceptr p, q, base;
	size_t size, fr0, fr1, total;
	void *h;
	struct fakecuda_counters c0, c1;

	init();
	fakecuda_counters(&c0);
	/* What the driver says to bad arguments, pooled or not. */
	EXPECT(cuMemAlloc(&p, 0), INVAL);
	EXPECT(cuMemAlloc(NULL, 16), INVAL);
	OK(cuMemAlloc(&p, 1000));
	OK(cuMemAlloc(&q, 1000));
	varx("q", q);
	/* Range queries answer the block, not the pool's segment. */
	OK(cuMemGetAddressRange(&base, &size, q + 10));
	if (base != q || size < 1000)
		fprintf(stderr, "range %#llx+%zu\n", base, size), errors++;
	OK(cuMemGetAddressRange(NULL, &size, q));
	CUdeviceptr start = 0;
	OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	    q + 10));
	if (start != q)
		fprintf(stderr, "start %#llx\n", start), errors++;
	unsigned long long id1 = 0, id2 = 0;
	OK(cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, p));
	OK(cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, q));
	if (id1 == id2)
		fprintf(stderr, "same buffer id\n"), errors++;
	CUpointer_attribute at[2] = { CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
	    CU_POINTER_ATTRIBUTE_RANGE_SIZE };
	CUdeviceptr st2 = 0;
	size_t sz2 = 0;
	void *data[2] = { &st2, &sz2 };
	OK(cuPointerGetAttributes(2, at, data, q + 1));
	if (st2 != q || sz2 != size)
		fprintf(stderr, "attributes %#llx %zu\n", st2, sz2), errors++;
	/* A sub-allocated block has no IPC handle of its own (pool mode);
	 * the driver gives one for its own allocation. */
	CUipcMemHandle ih;
	EXPECT(cuIpcGetMemHandle(&ih, q), audit ? CUDA_SUCCESS : INVAL);
	/* Freed blocks stay cached and count as free. */
	OK(cuMemGetInfo(&fr0, &total));
	OK(cuMemFree(p));
	OK(cuMemGetInfo(&fr1, &total));
	if (fr1 < fr0)
		fprintf(stderr, "free went down\n"), errors++;
	EXPECT(cuMemFree(p), INVAL);      /* double */
	EXPECT(cuMemFree(q + 8), INVAL);  /* interior */
	OK(cuMemFree(q));
	/* Many small blocks: far fewer driver allocations. */
	CUdeviceptr many[64];
	for (int i = 0; i < 64; i++)
		OK(cuMemAlloc(&many[i], 4096));
	for (int i = 0; i < 64; i++)
		OK(cuMemFree(many[i]));
	/* Managed and pinned through the pools; one pinned leak. */
	OK(cuMemAllocManaged(&p, 8192, CU_MEM_ATTACH_GLOBAL));
	OK(cuMemFree(p));
	OK(cuMemHostAlloc(&h, 3000, 0));
	OK(cuMemFreeHost(h));
	OK(cuMemAllocHost(&h, 5000));
	OK(cuMemAlloc(&p, 7000)); /* a device leak */
	fakecuda_counters(&c1);
	var("driver_allocs", c1.mem_alloc - c0.mem_alloc);
	/* A context of the program's own: the driver serves it. */
	CUcontext c2;
	OK(ctx_create(&c2, dev));
	OK(cuMemAlloc(&q, 1000));
	fakecuda_counters(&c0);
	var("own_ctx_driver_allocs", c0.mem_alloc - c1.mem_alloc);
	OK(cuMemFree(q));
	OK(cuCtxDestroy(c2));
	return errors;
}

/* More than the device has: the driver's answer, pooled or not. */
static int
scenario_oom(void)
{
	CUdeviceptr p;

	init();
	EXPECT(cuMemAlloc(&p, (size_t)1 << 30), CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemAlloc(&p, 4096));
	OK(cuMemFree(p));
	return errors;
}

int
main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";
	int r;

	if (strcmp(s, "families") == 0)
		r = scenario_families();
	else if (strcmp(s, "violations") == 0 && argc > 2) {
		real_alloc_delta = strtoll(argv[2], NULL, 0);
		r = scenario_violations();
	}
	else if (strcmp(s, "double") == 0)
		r = scenario_double();
	else if (strcmp(s, "teardown") == 0)
		r = scenario_teardown();
	else if (strcmp(s, "threads") == 0)
		r = scenario_threads();
	else if (strcmp(s, "bounds") == 0)
		r = scenario_bounds();
	else if (strcmp(s, "devices") == 0)
		r = scenario_devices();
	else if (strcmp(s, "nolock") == 0)
		r = scenario_nolock();
	else if (strcmp(s, "race") == 0)
		r = scenario_race();
	else if (strcmp(s, "fork") == 0)
		r = scenario_fork();
	else if (strcmp(s, "exec") == 0)
		r = scenario_exec(argv[0]);
	else if (strcmp(s, "execchild") == 0 && argc > 2)
		r = scenario_execchild(argv[2]);
	else if (strcmp(s, "exit") == 0 && argc > 2)
		r = scenario_exit(argv[2]);
	else if (strcmp(s, "owner") == 0 && argc > 2)
		r = scenario_owner(argv[2]);
	else if (strcmp(s, "pool") == 0)
		r = scenario_pool(argc > 2 && strcmp(argv[2], "audit") == 0);
	else if (strcmp(s, "vfork") == 0)
		r = scenario_vfork();
	else if (strcmp(s, "oom") == 0)
		r = scenario_oom();
	else {
		fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
		return 99;
	}
	printf("errors=%d\n", r);
	return r != 0;
}
