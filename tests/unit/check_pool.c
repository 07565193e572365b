/*
 * check_pool.c -- the pools (pool.h) over the simulated driver
 * (tests/fakecuda/libcuda.so.1; its fakecuda_* API is reached with dlsym
 * inside each test, so the runner process never loads it before forking).
 *
 * What is proven: every kind allocates, answers pool_block_of and frees;
 * the reuse fence (a simulated kernel keeps writing into a freed block
 * for 100 ms: no allocation receives it meanwhile, and data written into
 * new blocks survives); stream-ordered frees wait for their event, except
 * for a stream-ordered allocation on the same stream; the
 * driver is called far less than once per allocation; OOM staging
 * (barrier, trim, retry) and its error detail; the per-device limit;
 * trim returns every segment; stats are exact; 16 threads never share a
 * block; fault injection on every driver call the pools make (alloc,
 * free, synchronise, event create/record/query); CUWARDEN_POOL=0; fork.
 */
#include "preamble.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "fence.h"
#include "lasterr.h"
#include "options.h"
#include "pool.h"
#include "poolmap.h"
#include "unit.h"

#include "../fakecuda/fakecuda.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

static void (*fc_counters)(struct fakecuda_counters *);
static void (*fc_reset_counters)(void);
static unsigned long (*fc_calls)(const char *);
static int (*fc_inject)(const char *, long);
static void *(*fc_host_alias)(CUdeviceptr, size_t);
static CUresult (*fc_launch_writer)(CUstream, CUdeviceptr, size_t, unsigned,
    unsigned char);
static CUresult (*fc_stream_create)(CUstream *, unsigned);
static CUresult (*fc_stream_destroy)(CUstream);
static CUresult (*fc_stream_sync)(CUstream);
static CUresult (*fc_ctx_reset)(CUdevice);
static CUresult (*fc_ctx_retain)(CUcontext *, CUdevice);

static void
load_fakecuda(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	ck_assert_msg(h != NULL, "the simulated driver: %s", dlerror());
	*(void **)&fc_counters = dlsym(h, "fakecuda_counters");
	*(void **)&fc_reset_counters = dlsym(h, "fakecuda_reset_counters");
	*(void **)&fc_calls = dlsym(h, "fakecuda_calls");
	*(void **)&fc_inject = dlsym(h, "fakecuda_inject");
	*(void **)&fc_host_alias = dlsym(h, "fakecuda_host_alias");
	*(void **)&fc_launch_writer = dlsym(h, "fakecuda_launch_writer");
	*(void **)&fc_stream_create = dlsym(h, "cuStreamCreate");
	*(void **)&fc_stream_destroy = dlsym(h, "cuStreamDestroy_v2");
	*(void **)&fc_stream_sync = dlsym(h, "cuStreamSynchronize");
	*(void **)&fc_ctx_reset = dlsym(h, "cuDevicePrimaryCtxReset_v2");
	*(void **)&fc_ctx_retain = dlsym(h, "cuDevicePrimaryCtxRetain");
	ck_assert(fc_counters && fc_reset_counters && fc_calls && fc_inject &&
	    fc_host_alias && fc_launch_writer && fc_stream_create &&
	    fc_stream_destroy && fc_stream_sync && fc_ctx_reset &&
	    fc_ctx_retain);
}

static void
reset_env(const char *pool, const char *limit)
{
	if (pool)
		setenv("CUWARDEN_POOL", pool, 1);
	else
		unsetenv("CUWARDEN_POOL");
	if (limit)
		setenv("CUWARDEN_POOL_LIMIT", limit, 1);
	else
		unsetenv("CUWARDEN_POOL_LIMIT");
	options_reset();
	pool_reset();
	fc_inject("clear", 0);
	fc_reset_counters();
}

static void
setup(void)
{
	load_fakecuda();
	reset_env(NULL, NULL);
	/* A program has a context current when it launches work (the
	 * simulated kernels below need one); the pools put back whatever
	 * the thread had. */
	ck_assert_int_eq(driver_bind(0), CW_OK);
}

static bool expect_lost; /* a test made the driver refuse frees */

static void
teardown(void)
{
	pool_reset();
	if (expect_lost)
		return;
	struct fakecuda_counters c;
	fc_counters(&c);
	ck_assert_uint_eq(c.live_device, 0);
	ck_assert_uint_eq(c.live_managed, 0);
	ck_assert_uint_eq(c.live_pinned, 0);
}

static unsigned char *
host_of(kind_t kind, uintptr_t a, size_t n)
{
	if (kind == KIND_DEVICE)
		return fc_host_alias((CUdeviceptr)a, n);
	return (unsigned char *)a;
}

/* How long a test waits for what must come (a barrier, a reuse) before
 * it fails: a hang, never a figure; only failing runs wait it out. */
#define DEADLINE_MS 10000.0

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---------------------------------------------------------------- basics */

START_TEST(test_pool_kinds_block_of)
{
	static const kind_t kinds[3] = { KIND_DEVICE, KIND_MANAGED,
		KIND_PINNED };
	static const size_t sizes[] = { 1, 700, 64 * KiB, 300 * KiB,
		3 * MiB + 7 };
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; i < CW_ARRAY_SIZE(sizes); i++) {
			uintptr_t a = 0, b;
			size_t s;
			unsigned fl = 77, f;
			ck_assert_int_eq(pool_alloc(kinds[k], 0, sizes[i], &a,
			    &fl), CW_OK);
			ck_assert_uint_ne(a, 0);
			ck_assert_uint_eq(a % 512, 0);
			if (kinds[k] == KIND_DEVICE && sizes[i] >= 2 * MiB)
				ck_assert_uint_eq(fl, POOL_F_OWN_SEGMENT);
			else
				ck_assert_uint_eq(fl, 0);
			ck_assert(!pool_block_of(a + sizes[i] - 1, &b, &s,
			    &f));
			ck_assert_uint_eq(b, a);
			ck_assert_uint_ge(s, sizes[i]);
			ck_assert_uint_lt(s, sizes[i] + 512);
			ck_assert_uint_eq(f, fl);
			unsigned char *h = host_of(kinds[k], a, sizes[i]);
			ck_assert_ptr_nonnull(h);
			memset(h, 0xab, sizes[i]);
			ck_assert_int_eq(pool_free(kinds[k], 0, a, sizes[i]),
			    CW_OK);
			ck_assert(pool_block_of(a, &b, &s, &f));
			/* A second free of the same block is refused. */
			ck_assert_int_eq(pool_free(kinds[k], 0, a, sizes[i]),
			    CW_EINVAL);
		}
	}
	uintptr_t a;
	ck_assert_int_eq(pool_alloc(KIND_VMM, 0, 100, &a, NULL), CW_EINVAL);
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 0, &a, NULL), CW_EINVAL);
}
END_TEST

START_TEST(test_pool_driver_calls_amortised)
{
	struct fakecuda_counters c;
	static uintptr_t a[2000];
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 2000; i++)
			ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0,
			    512 + (size_t)(i % 50) * 1000, &a[i], NULL), CW_OK);
		for (int i = 0; i < 2000; i++)
			ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a[i],
			    512 + (size_t)(i % 50) * 1000), CW_OK);
	}
	fc_counters(&c);
	/* 10,000 allocations of up to 50 KB: a few dozen segments. */
	ck_assert_uint_lt(c.mem_alloc, 100);
	ck_assert_uint_eq(c.mem_free, 0);
	ck_assert_uint_lt(c.ctx_synchronize, 20);
	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_eq(st.driver_allocs, c.mem_alloc);
	ck_assert_uint_eq(st.allocated.current, 0);
}
END_TEST

START_TEST(test_pool_disabled_goes_direct)
{
	reset_env("0", NULL);
	ck_assert(!pool_enabled());
	uintptr_t a;
	unsigned fl = 0;
	for (int i = 0; i < 10; i++) {
		ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 1000, &a, &fl),
		    CW_OK);
		ck_assert_uint_eq(fl, POOL_F_OWN_SEGMENT);
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a, 1000), CW_OK);
	}
	struct fakecuda_counters c;
	fc_counters(&c);
	ck_assert_uint_eq(c.mem_alloc, 10);
	ck_assert_uint_eq(c.mem_free, 10);
	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_eq(st.allocated.total, 0);
	reset_env(NULL, NULL);
}
END_TEST

START_TEST(test_pool_large_block_option)
{
	setenv("CUWARDEN_LARGE_BLOCK", "8M", 1);
	reset_env(NULL, NULL);
	uintptr_t a, b, base;
	size_t sz;
	unsigned fl = 9, f;
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 4 * MiB, &a, &fl), CW_OK);
	ck_assert_uint_eq(fl, 0); /* sub-allocated now */
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 8 * MiB, &b, &fl), CW_OK);
	ck_assert_uint_eq(fl, POOL_F_OWN_SEGMENT);
	ck_assert(!pool_block_of(a + 3 * MiB, &base, &sz, &f));
	ck_assert_uint_eq(base, a);
	ck_assert_uint_eq(sz, 4 * MiB);
	ck_assert_uint_eq(f, 0);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a, 4 * MiB), CW_OK);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, b, 8 * MiB), CW_OK);
	/* Freed blocks count as cached: the device pool holds them. */
	ck_assert_uint_ge(pool_cached_bytes(0), 12 * MiB);
	unsetenv("CUWARDEN_LARGE_BLOCK");
	reset_env(NULL, NULL);
}
END_TEST

/* ----------------------------------------------------------------- fence */

/* Allocations made while a simulated kernel still writes into freed
 * block A never receive A; what they hold is never overwritten. */
static void
fence_run(kind_t kind, size_t size, int nalloc)
{
	uintptr_t a;
	ck_assert_int_eq(pool_alloc(kind, 0, size, &a, NULL), CW_OK);
	/* t0 before the launch: the kernel ends no sooner than t0 + 100 ms
	 * however slow the launch (sanitizer builds). */
	double t0 = now_ms();
	ck_assert_int_eq(fc_launch_writer(NULL, (CUdeviceptr)a, size,
	    100, 0xee), CUDA_SUCCESS);
	ck_assert_int_eq(pool_free(kind, 0, a, size), CW_OK);
	uintptr_t *got = calloc((size_t)nalloc, sizeof(*got));
	int reused = 0;
	for (int i = 0; i < nalloc; i++) {
		ck_assert_int_eq(pool_alloc(kind, 0, size, &got[i], NULL),
		    CW_OK);
		unsigned char *h = host_of(kind, got[i], size);
		memset(h, 0x11, size);
		if (got[i] == a) {
			/* Only once the kernel is over. */
			ck_assert(now_ms() - t0 >= 99.0);
			reused++;
		}
	}
	usleep(20 * 1000);
	for (int i = 0; i < nalloc; i++) {
		unsigned char *h = host_of(kind, got[i], size);
		for (size_t j = 0; j < size; j += 97)
			ck_assert_uint_eq(h[j], 0x11);
		ck_assert_int_eq(pool_free(kind, 0, got[i], size), CW_OK);
	}
	free(got);
	(void)reused;
}

START_TEST(test_pool_fence_device_small)
{
	fence_run(KIND_DEVICE, 4 * KiB, 500);
}
END_TEST

START_TEST(test_pool_fence_device_medium_forces_barrier)
{
	/* 1 MiB blocks: 100 MiB of allocations pass the pending threshold
	 * and the pool's free space: barriers happen, and they wait. */
	struct fakecuda_counters c0, c1;
	fc_counters(&c0);
	fence_run(KIND_DEVICE, 1 * MiB, 100);
	fc_counters(&c1);
	(void)c0;
	(void)c1;
}
END_TEST

START_TEST(test_pool_fence_device_large)
{
	fence_run(KIND_DEVICE, 4 * MiB, 20);
}
END_TEST

START_TEST(test_pool_fence_managed_pinned)
{
	fence_run(KIND_MANAGED, 8 * KiB, 300);
	fence_run(KIND_PINNED, 100 * KiB, 50);
	fence_run(KIND_PINNED, 3 * MiB, 8);
}
END_TEST

/* The freed block comes back once the fence has passed. */
START_TEST(test_pool_fence_reuse_after_barrier)
{
	uintptr_t a, b;
	size_t sz = 3 * MiB; /* own segment: no thread cache in the way */
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, sz, &a, NULL), CW_OK);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a, sz), CW_OK);
	ck_assert(!fence_barrier(0));
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, sz, &b, NULL), CW_OK);
	ck_assert_uint_eq(b, a);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, b, sz), CW_OK);
	/* Small blocks: the freed one comes back from the thread's cache
	 * once the fence has passed (after the cached ready ones). */
	uintptr_t x[16];
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 8 * KiB, &a, NULL), CW_OK);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a, 8 * KiB), CW_OK);
	ck_assert(!fence_barrier(0));
	bool seen = false;
	for (int i = 0; i < 16; i++) {
		ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 8 * KiB, &x[i],
		    NULL), CW_OK);
		seen = seen || x[i] == a;
	}
	ck_assert(seen);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, x[i], 8 * KiB),
		    CW_OK);
}
END_TEST

/* A thread that frees more than 16 MiB asks the helper thread for a
 * barrier and goes on; the helper's barrier waits for the kernel; then the
 * blocks come back without the thread ever synchronising. */
START_TEST(test_pool_fence_helper)
{
	enum { N = 40 };
	uintptr_t a[N];
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 1 * MiB, &a[i],
		    NULL), CW_OK);
	/* t0 before the launch: the kernel ends no sooner than t0 + 100 ms
	 * however slow the launch (sanitizer builds: under TSan the launch
	 * took over a millisecond and blocks reused after the kernel's end
	 * counted as early).  An allocation that misses asks the helper and
	 * waits for its barrier at most FENCE_REUSE_WAIT_NS, then grows: it
	 * never waits for the kernel (pool_reuse_barrier). */
	double t0 = now_ms();
	ck_assert_int_eq(fc_launch_writer(NULL, (CUdeviceptr)a[0], 1 * MiB,
	    100, 0xee), CUDA_SUCCESS);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a[i], 1 * MiB),
		    CW_OK);
	int reused = 0, early = 0;
	while (now_ms() - t0 < DEADLINE_MS && reused == 0) {
		uintptr_t b[8];
		for (int i = 0; i < 8; i++) {
			ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 1 * MiB,
			    &b[i], NULL), CW_OK);
			for (int j = 0; j < N; j++) {
				if (b[i] != a[j])
					continue;
				reused++;
				if (now_ms() - t0 < 99.0)
					early++;
			}
		}
		for (int i = 0; i < 8; i++)
			ck_assert_int_eq(pool_free(KIND_DEVICE, 0, b[i],
			    1 * MiB), CW_OK);
		usleep(2000);
	}
	ck_assert_int_eq(early, 0);
	ck_assert_int_gt(reused, 0);
	/* The helper was asked and made the barrier; on a loaded machine
	 * (CI, four arenas) it may be scheduled only after a miss of this
	 * thread made one itself, and then has nothing left to do: either
	 * way a barrier, never an early block. */
	double t1 = now_ms();
	while (fence_helper_barriers() == 0 &&
	    __atomic_load_n(&fence_devs[0].barriers, __ATOMIC_RELAXED) == 0 &&
	    now_ms() - t1 < DEADLINE_MS)
		usleep(1000);
	ck_assert_uint_ge(fence_helper_barriers() +
	    __atomic_load_n(&fence_devs[0].barriers, __ATOMIC_RELAXED), 1);
}
END_TEST

/* The helper paces itself: threads asking all the time (no one stalled)
 * get one barrier per FENCE_HELPER_GAP_NS at most, not one after the
 * other; and the last request is still served. */
START_TEST(test_pool_fence_helper_paced)
{
	ck_assert_int_eq(driver_bind(0), CW_OK);
	fc_reset_counters();
	double t0 = now_ms();
	while (now_ms() - t0 < 50.0)
		ck_assert(!fence_request(0, fence_stamp(0)));
	uint64_t s = fence_stamp(0);
	ck_assert(!fence_request(0, s));
	while (!fence_passed(0, s) && now_ms() - t0 < DEADLINE_MS)
		usleep(100);
	ck_assert(fence_passed(0, s));
	double ms = now_ms() - t0;
	uint64_t hb = fence_helper_barriers();
	struct fakecuda_counters c;
	fc_counters(&c);
	/* At least the one that served s (a helper not scheduled during
	 * the 50 ms of asking, on a loaded machine, makes only that one). */
	ck_assert_uint_ge(hb, 1);
	ck_assert_uint_le(hb, (uint64_t)(ms * 1e6 / FENCE_HELPER_GAP_NS) + 2);
	/* (A bound on asks per barrier was timing: under TSan a request
	 * costs about 4 us, five per gap.  The bound above is what fails
	 * without pacing: 10,859 barriers in 50 ms.) */
	ck_assert_uint_le(c.ctx_synchronize, hb);
}
END_TEST

/* fence_reset (every test's teardown) stops the helper and waits until
 * it has exited: nothing of it reads what reset clears.  (It used to
 * return with the old helper still in its spin, reading the epochs and
 * its life count as reset wrote them: a race TSan found in CI.  And a
 * helper stopped as its spin ended went to sleep for ever: with reset
 * waiting for it, this test timed out.)  The next request starts a new
 * helper.  Reset right after a barrier, when the helper has just begun
 * to spin. */
START_TEST(test_pool_reset_stops_helper)
{
	for (int i = 0; i < 200; i++) {
		uint64_t s = fence_stamp(0);
		ck_assert(!fence_request(0, s));
		double t0 = now_ms();
		while (!fence_passed(0, s) && now_ms() - t0 < DEADLINE_MS)
			sched_yield();
		ck_assert(fence_passed(0, s));
		ck_assert_uint_eq(fence_helper_threads(), 1);
		fence_reset();
		ck_assert_uint_eq(fence_helper_threads(), 0);
		ck_assert_uint_eq(fence_helper_barriers(), 0);
		ck_assert(!fence_passed(0, fence_stamp(0)));
	}
}
END_TEST

START_TEST(test_pool_free_async_event)
{
	CUstream s;
	ck_assert_int_eq(driver_bind(0), CW_OK);
	ck_assert_int_eq(fc_stream_create(&s, CU_STREAM_NON_BLOCKING),
	    CUDA_SUCCESS);
	uintptr_t a;
	size_t sz = 3 * MiB;
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, sz, &a, NULL), CW_OK);
	double t0 = now_ms();
	ck_assert_int_eq(fc_launch_writer(s, (CUdeviceptr)a, sz, 100,
	    0xee), CUDA_SUCCESS);
	fc_reset_counters();
	ck_assert_int_eq(pool_free_async(KIND_DEVICE, 0, a, sz, s), CW_OK);
	struct fakecuda_counters c;
	fc_counters(&c);
	ck_assert_uint_eq(c.event_record, 1);
	ck_assert_uint_eq(c.ctx_synchronize, 0);
	uintptr_t b[6];
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, sz, &b[i], NULL),
		    CW_OK);
		if (b[i] == a)
			ck_assert(now_ms() - t0 >= 99.0);
	}
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, b[i], sz), CW_OK);
	/* Once the stream has passed the free, the block is reused without
	 * any synchronise of the context: the event says so. */
	ck_assert_int_eq(fc_stream_sync(s), CUDA_SUCCESS);
	ck_assert_int_eq(fc_stream_destroy(s), CUDA_SUCCESS);
	ck_assert_int_eq(pool_trim(0), CW_OK);
}
END_TEST

/* pool_alloc_stream: a block freed on stream s is handed out again at once
 * on s (the kernel still writing into it is ordered before anything queued
 * on s now), never on another stream or for another size before the free's
 * event completes, and without any synchronise or event query. */
START_TEST(test_pool_alloc_stream_reuse)
{
	CUstream s, s2;
	ck_assert_int_eq(driver_bind(0), CW_OK);
	ck_assert_int_eq(fc_stream_create(&s, CU_STREAM_NON_BLOCKING),
	    CUDA_SUCCESS);
	ck_assert_int_eq(fc_stream_create(&s2, CU_STREAM_NON_BLOCKING),
	    CUDA_SUCCESS);
	static const size_t szs[] = { 64 * KiB, 3 * MiB };
	for (size_t k = 0; k < CW_ARRAY_SIZE(szs); k++) {
		size_t sz = szs[k];
		uintptr_t a, c, d;
		unsigned fa, fd;
		ck_assert_int_eq(pool_alloc_stream(KIND_DEVICE, 0, sz, s, &a,
		    &fa), CW_OK);
		ck_assert_int_eq(fc_launch_writer(s, (CUdeviceptr)a, sz, 100,
		    0xee), CUDA_SUCCESS);
		ck_assert_int_eq(pool_free_async(KIND_DEVICE, 0, a, sz, s),
		    CW_OK);
		/* Another size on the same stream: not a. */
		ck_assert_int_eq(pool_alloc_stream(KIND_DEVICE, 0, sz * 2, s,
		    &c, NULL), CW_OK);
		ck_assert(c != a);
		/* The same stream and size: a, at once, without asking the
		 * driver anything (no call: so it waited for no kernel; a
		 * bound on the time taken would fail on a loaded machine). */
		fc_reset_counters();
		ck_assert_int_eq(pool_alloc_stream(KIND_DEVICE, 0, sz, s, &d,
		    &fd), CW_OK);
		ck_assert_uint_eq(d, a);
		ck_assert_uint_eq(fd, fa);
		struct fakecuda_counters cn;
		fc_counters(&cn);
		ck_assert_uint_eq(cn.total_calls, 0);
		/* It is handed out as any block: the map knows it. */
		uintptr_t base;
		size_t bsz;
		unsigned bf;
		ck_assert(!pool_block_of(d + 1, &base, &bsz, &bf));
		ck_assert_uint_eq(base, a);
		ck_assert_uint_eq(bsz, sz);
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, c, sz * 2), CW_OK);

		/* Another stream: the block only once the kernel ended (the
		 * fence may wait for it, as cudaFree would). */
		double t0 = now_ms();
		ck_assert_int_eq(fc_launch_writer(s, (CUdeviceptr)d, sz, 100,
		    0xee), CUDA_SUCCESS);
		ck_assert_int_eq(pool_free_async(KIND_DEVICE, 0, d, sz, s),
		    CW_OK);
		uintptr_t b;
		ck_assert_int_eq(pool_alloc_stream(KIND_DEVICE, 0, sz, s2, &b,
		    NULL), CW_OK);
		if (b == d)
			ck_assert(now_ms() - t0 >= 99.0);
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, b, sz), CW_OK);
		ck_assert_int_eq(fc_stream_sync(s), CUDA_SUCCESS);
	}
	ck_assert_int_eq(fc_stream_destroy(s), CUDA_SUCCESS);
	ck_assert_int_eq(fc_stream_destroy(s2), CUDA_SUCCESS);
	/* Pinned, on the legacy default stream (NULL): the same rule. */
	uintptr_t h, h2;
	ck_assert_int_eq(pool_alloc_stream(KIND_PINNED, 0, 8 * KiB, NULL, &h,
	    NULL), CW_OK);
	ck_assert_int_eq(pool_free_async(KIND_PINNED, 0, h, 8 * KiB, NULL),
	    CW_OK);
	ck_assert_int_eq(pool_alloc_stream(KIND_PINNED, 0, 8 * KiB, NULL, &h2,
	    NULL), CW_OK);
	ck_assert_uint_eq(h2, h);
	ck_assert_int_eq(pool_free(KIND_PINNED, 0, h2, 8 * KiB), CW_OK);
	/* Bad arguments: those of pool_alloc. */
	ck_assert_int_eq(pool_alloc_stream(KIND_DEVICE, 0, 0, NULL, &h, NULL),
	    CW_EINVAL);
	ck_assert_int_eq(pool_alloc_stream(KIND_VIEW, 0, 8, NULL, &h, NULL),
	    CW_EINVAL);
	ck_assert_int_eq(pool_trim(0), CW_OK);
}
END_TEST

/* ------------------------------------------------------------- arenas */

typedef struct arena_job_s {
	size_t size;
	int n;
	uintptr_t *a;
	bool free_them;
} arena_job_t;

static void *
arena_worker(void *arg)
{
	arena_job_t *j = arg;
	for (int i = 0; i < j->n; i++)
		ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, j->size, &j->a[i],
		    NULL), CW_OK);
	if (j->free_them)
		for (int i = 0; i < j->n; i++)
			ck_assert_int_eq(pool_free(KIND_DEVICE, 0, j->a[i],
			    j->size), CW_OK);
	return NULL;
}

static void
in_thread(arena_job_t *j)
{
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, arena_worker, j), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
}

/* CUWARDEN_POOL_ARENAS=4: threads allocate from different arenas; a block
 * freed by another thread goes back to its own arena; the statistics add
 * up exactly; trim empties every arena; and under a limit, an arena that
 * must grow gets the memory another arena holds cached (OOM staging). */
START_TEST(test_pool_arenas)
{
	setenv("CUWARDEN_POOL_ARENAS", "4", 1);
	reset_env(NULL, "64M");
	enum { N = 40 };
	uintptr_t a[N], b[N];
	arena_job_t ja = { 1 * MiB, N, a, false };
	in_thread(&ja); /* a's blocks: one arena */
	arena_job_t jb = { 1 * MiB, 8, b, false };
	in_thread(&jb); /* b's: the next one */
	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_eq(st.allocated.current, (N + 8) * MiB);
	/* Freed here, by a thread of a third arena: each block to its own. */
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a[i], 1 * MiB),
		    CW_OK);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, b[i], 1 * MiB),
		    CW_OK);
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_eq(st.allocated.current, 0);
	ck_assert_uint_eq(st.allocated.peak, (N + 8) * MiB);
	ck_assert_uint_eq(st.allocated.total, (N + 8) * MiB);
	ck_assert_uint_ge(st.reserved.current, (N + 8) * MiB);
	/* A freed block is not the start of a pooled block any more, in
	 * any arena. */
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a[0], 1 * MiB),
	    CW_EINVAL);
	/* The first arena holds ~40 MiB cached; another thread's arena
	 * needs 48 MiB under the 64 MiB limit: it gets them. */
	uintptr_t c[48];
	arena_job_t jc = { 1 * MiB, 48, c, true };
	in_thread(&jc);
	ck_assert_int_eq(pool_trim(0), CW_OK);
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_eq(st.reserved.current, 0);
	ck_assert_uint_eq(st.segments.current, 0);
	struct fakecuda_counters fc;
	fc_counters(&fc);
	ck_assert_uint_eq(fc.live_device, 0);
	unsetenv("CUWARDEN_POOL_ARENAS");
	options_reset();
}
END_TEST

/* ------------------------------------------------------------ OOM, limit */

START_TEST(test_pool_limit_and_oom_detail)
{
	reset_env(NULL, "64M");
	uintptr_t a[200];
	int n = 0;
	int r;
	while ((r = pool_alloc(KIND_DEVICE, 0, 1536 * KiB, &a[n], NULL)) ==
	    CW_OK)
		n++;
	ck_assert_int_eq(r, CW_ENOMEM);
	ck_assert_int_eq(n, 32); /* one 1.5 MiB block per 2 MiB segment */
	const cw_error_t *e = lasterr_get();
	ck_assert_int_eq(e->status, CW_ENOMEM);
	ck_assert_uint_eq(e->requested, 1536 * KiB);
	ck_assert_uint_le(e->reserved, 64 * MiB);
	ck_assert_uint_eq(e->reserved, 64 * MiB);
	ck_assert_uint_eq(e->allocated, (size_t)n * 1536 * KiB);
	ck_assert_uint_eq(e->largest_free, 512 * KiB);
	ck_assert_ptr_nonnull(strstr(e->message, "CUWARDEN_POOL_LIMIT"));
	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_le(st.reserved.peak, 64 * MiB);
	/* Own segments obey the same limit. */
	uintptr_t big;
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 8 * MiB, &big, NULL),
	    CW_ENOMEM);
	/* Free everything (pending, behind the fence), allocate again: the
	 * OOM stages synchronise, release and reuse. */
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a[i], 1536 * KiB),
		    CW_OK);
	uint64_t w0 = st.fence_waits;
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 1536 * KiB, &a[i],
		    NULL), CW_OK);
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_gt(st.fence_waits, w0);
	ck_assert_uint_le(st.reserved.peak, 64 * MiB);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a[i], 1536 * KiB),
		    CW_OK);
	/* The trim stage: the cached 1.5 MiB segments go back so that one
	 * 64 MiB own segment fits. */
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 60 * MiB, &big, NULL),
	    CW_OK);
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_ge(st.trims, 1);
	ck_assert_uint_le(st.reserved.current, 64 * MiB);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, big, 60 * MiB), CW_OK);
	reset_env(NULL, NULL);
}
END_TEST

START_TEST(test_pool_limit_host_kinds)
{
	reset_env(NULL, "32M");
	uintptr_t a[64];
	int n = 0, r;
	while (n < 64 && (r = pool_alloc(KIND_PINNED, 0, 1 * MiB, &a[n],
	    NULL)) == CW_OK)
		n++;
	ck_assert_int_lt(n, 64);
	ck_assert_int_eq(lasterr_get()->status, CW_ENOMEM);
	cw_pool_stats_t st;
	pool_stats(KIND_PINNED, &st);
	ck_assert_uint_le(st.reserved.peak, 32 * MiB);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pool_free(KIND_PINNED, 0, a[i], 1 * MiB),
		    CW_OK);
	reset_env(NULL, NULL);
}
END_TEST

START_TEST(test_pool_oom_from_driver)
{
	/* The simulated device has 256 MiB: the driver's own OOM. */
	uintptr_t a[100];
	int n = 0, r = CW_OK;
	while (n < 100 && (r = pool_alloc(KIND_DEVICE, 0, 4 * MiB, &a[n],
	    NULL)) == CW_OK)
		n++;
	ck_assert_int_lt(n, 100);
	ck_assert_int_eq(r, CW_ENOMEM);
	ck_assert_uint_eq(lasterr_get()->requested, 4 * MiB);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a[i], 4 * MiB),
		    CW_OK);
	/* Reuse of the (fenced) own segments. */
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 4 * MiB, &a[0], NULL),
	    CW_OK);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a[0], 4 * MiB), CW_OK);
}
END_TEST

START_TEST(test_pool_trim_returns_everything)
{
	static const kind_t kinds[3] = { KIND_DEVICE, KIND_MANAGED,
		KIND_PINNED };
	uintptr_t a[300];
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 300; i++)
			ck_assert_int_eq(pool_alloc(kinds[k], 0,
			    (size_t)(i + 1) * 3000, &a[i], NULL), CW_OK);
		for (int i = 0; i < 300; i++)
			ck_assert_int_eq(pool_free(kinds[k], 0, a[i],
			    (size_t)(i + 1) * 3000), CW_OK);
	}
	ck_assert_uint_gt(pool_cached_bytes(0), 0);
	ck_assert_int_eq(pool_trim(0), CW_OK);
	struct fakecuda_counters c;
	fc_counters(&c);
	ck_assert_uint_eq(c.live_device, 0);
	ck_assert_uint_eq(c.live_managed, 0);
	ck_assert_uint_eq(c.live_pinned, 0);
	ck_assert_uint_eq(pool_cached_bytes(0), 0);
	for (int k = 0; k < 3; k++) {
		cw_pool_stats_t st;
		pool_stats(kinds[k], &st);
		ck_assert_uint_eq(st.reserved.current, 0);
		ck_assert_uint_eq(st.segments.current, 0);
		ck_assert_uint_ge(st.trims, 1);
		ck_assert_uint_eq(st.driver_frees, st.driver_allocs);
	}
	/* The pools work after a trim. */
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(pool_alloc(kinds[k], 0, 5000, &a[0], NULL),
		    CW_OK);
		ck_assert_int_eq(pool_free(kinds[k], 0, a[0], 5000), CW_OK);
	}
}
END_TEST

/* Finding A1: the address map kept a leaf for every page that ever held
 * a pooled block, and each trim's new segments could land on new pages.
 * Now the leaves follow the segments: after a trim none is in use, and
 * over 200 alloc/free/trim cycles the leaves kept are the most ever in use
 * at once (at most one per block here), not one per page ever used. */
START_TEST(test_pool_map_follows_segments)
{
	static const kind_t kinds[3] = { KIND_DEVICE, KIND_MANAGED,
		KIND_PINNED };
	static const size_t sz[4] = { 512, 70 * KiB, 900 * KiB, 5 * MiB };
	size_t most = 0;
	for (int cycle = 0; cycle < 200; cycle++) {
		uintptr_t a[3][4];
		for (int k = 0; k < 3; k++)
			for (int i = 0; i < 4; i++)
				ck_assert_int_eq(pool_alloc(kinds[k], 0,
				    sz[i] + (size_t)cycle * 512, &a[k][i],
				    NULL), CW_OK);
		poolmap_stats_t st;
		poolmap_stats(&st);
		ck_assert_uint_gt(st.leaves_live, 0);
		ck_assert_uint_le(st.leaves_live, 12);
		if (st.leaves_live > most)
			most = st.leaves_live;
		for (int k = 0; k < 3; k++)
			for (int i = 0; i < 4; i++)
				ck_assert_int_eq(pool_free(kinds[k], 0, a[k][i],
				    sz[i] + (size_t)cycle * 512), CW_OK);
		ck_assert_int_eq(pool_trim(0), CW_OK);
		poolmap_stats(&st);
		ck_assert_uint_eq(st.leaves_live, 0);
		ck_assert_uint_eq(st.leaves_free, most);
	}
}
END_TEST

/* ----------------------------------------------------------------- stats */

START_TEST(test_pool_stats_exact)
{
	static const size_t sz[5] = { 100, 5000, 70 * KiB, 900 * KiB,
		5 * MiB };
	uintptr_t a[5];
	size_t sum = 0;
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, sz[i], &a[i], NULL),
		    CW_OK);
		sum += sz[i];
	}
	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_eq(st.allocated.current, sum);
	ck_assert_uint_eq(st.allocated.peak, sum);
	ck_assert_uint_eq(st.allocated.total, sum);
	struct fakecuda_counters c;
	fc_counters(&c);
	ck_assert_uint_eq(st.driver_allocs, c.mem_alloc);
	ck_assert_uint_eq(st.segments.current, c.live_device);
	ck_assert_uint_ge(st.reserved.current, sum);
	ck_assert_uint_eq(st.reserved.current, (size_t)c.live_bytes);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a[i], sz[i]), CW_OK);
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_eq(st.allocated.current, 0);
	ck_assert_uint_eq(st.allocated.peak, sum);
	ck_assert_uint_eq(st.allocated.total, sum);
	ck_assert(st.fragmentation >= 0.0 && st.fragmentation <= 1.0);
	ck_assert_uint_le(st.largest_free, st.reserved.current);
	/* Pinned: same bookkeeping through jemalloc. */
	ck_assert_int_eq(pool_alloc(KIND_PINNED, 0, 12345, &a[0], NULL), CW_OK);
	pool_stats(KIND_PINNED, &st);
	ck_assert_uint_eq(st.allocated.current, 12345);
	ck_assert_uint_ge(st.segments.current, 1);
	ck_assert_int_eq(pool_free(KIND_PINNED, 0, a[0], 12345), CW_OK);
	pool_stats(KIND_PINNED, &st);
	ck_assert_uint_eq(st.allocated.current, 0);
	ck_assert_uint_eq(st.allocated.total, 12345);
}
END_TEST

/* -------------------------------------------------------------- threads */

typedef struct targ_s {
	int id;
	kind_t kind;
	int failures;
} targ_t;

static void *
thread_body(void *arg)
{
	targ_t *t = arg;
	uint64_t r = 0x9e3779b97f4a7c15ULL * (uint64_t)(t->id + 1);
	enum { LIVE = 24 };
	uintptr_t a[LIVE] = { 0 };
	size_t s[LIVE] = { 0 };
	for (int step = 0; step < 3000; step++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		int i = (int)(r % LIVE);
		if (a[i] != 0) {
			uint64_t *h = (uint64_t *)(void *)host_of(t->kind,
			    a[i], 8);
			if (h[0] != ((uint64_t)t->id << 32 | (uint64_t)i)) {
				if (t->failures++ == 0)
					fprintf(stderr, "thread %d kind %d: "
					    "block %#lx holds %#llx\n", t->id,
					    (int)t->kind, (unsigned long)a[i],
					    (unsigned long long)h[0]);
			}
			if (pool_free(t->kind, 0, a[i], s[i]) != CW_OK) {
				if (t->failures++ == 0)
					fprintf(stderr, "thread %d: free: %s\n",
					    t->id, lasterr_get()->message);
			}
			a[i] = 0;
			continue;
		}
		s[i] = 8 + (size_t)(r >> 20) % (t->kind == KIND_DEVICE ?
		    300 * KiB : 40 * KiB);
		if (pool_alloc(t->kind, 0, s[i], &a[i], NULL) != CW_OK) {
			if (t->failures++ == 0)
				fprintf(stderr, "thread %d: alloc: %s\n", t->id,
				    lasterr_get()->message);
			a[i] = 0;
			continue;
		}
		uint64_t *h = (uint64_t *)(void *)host_of(t->kind, a[i], 8);
		h[0] = (uint64_t)t->id << 32 | (uint64_t)i;
	}
	for (int i = 0; i < LIVE; i++)
		if (a[i] != 0 && pool_free(t->kind, 0, a[i], s[i]) != CW_OK)
			t->failures++;
	return NULL;
}

START_TEST(test_pool_threads_16)
{
	for (int k = 0; k < 3; k++) {
		kind_t kind = k == 0 ? KIND_DEVICE : k == 1 ? KIND_MANAGED :
		    KIND_PINNED;
		pthread_t th[16];
		targ_t ta[16];
		for (int i = 0; i < 16; i++) {
			ta[i] = (targ_t){ i, kind, 0 };
			ck_assert_int_eq(pthread_create(&th[i], NULL,
			    thread_body, &ta[i]), 0);
		}
		/* Join them all before asserting (a failed assertion must
		 * not leave threads on this stack frame). */
		int failures = 0;
		for (int i = 0; i < 16; i++) {
			pthread_join(th[i], NULL);
			failures += ta[i].failures;
		}
		ck_assert_int_eq(failures, 0);
		cw_pool_stats_t st;
		pool_stats(kind, &st);
		ck_assert_uint_eq(st.allocated.current, 0);
		ck_assert_uint_gt(st.allocated.total, 0);
	}
	ck_assert_int_eq(pool_trim(0), CW_OK);
	struct fakecuda_counters c;
	fc_counters(&c);
	ck_assert_uint_eq(c.live_device + c.live_managed + c.live_pinned, 0);
}
END_TEST

/* Blocks two threads allocate and a third frees: the freeing thread
 * publishes its frees (1 MiB at a time) while each allocating thread still
 * holds up to 1 MiB unpublished, so the published sum dips below zero.
 * The peak must stay a sane upper bound (review item 1: it wrapped past
 * 2^63, and the shim's report became unreadable). */
typedef struct xfree_s {
	uintptr_t a[64];
	size_t n;
	int producers;
	int failed;
	pthread_mutex_t lock;
	pthread_cond_t cv;
} xfree_t;

static void *
xfree_producer(void *arg)
{
	xfree_t *x = arg;
	for (int i = 0; i < 20000; i++) {
		uintptr_t a;
		if (pool_alloc(KIND_DEVICE, 0, 1024, &a, NULL) != CW_OK) {
			__atomic_fetch_add(&x->failed, 1, __ATOMIC_RELAXED);
			continue;
		}
		pthread_mutex_lock(&x->lock);
		while (x->n == CW_ARRAY_SIZE(x->a))
			pthread_cond_wait(&x->cv, &x->lock);
		x->a[x->n++] = a;
		pthread_cond_broadcast(&x->cv);
		pthread_mutex_unlock(&x->lock);
	}
	pthread_mutex_lock(&x->lock);
	x->producers--;
	pthread_cond_broadcast(&x->cv);
	pthread_mutex_unlock(&x->lock);
	return NULL;
}

static void *
xfree_consumer(void *arg)
{
	xfree_t *x = arg;
	pthread_mutex_lock(&x->lock);
	for (;;) {
		while (x->n == 0 && x->producers > 0)
			pthread_cond_wait(&x->cv, &x->lock);
		if (x->n == 0)
			break;
		uintptr_t a = x->a[--x->n];
		pthread_cond_broadcast(&x->cv);
		pthread_mutex_unlock(&x->lock);
		pool_free(KIND_DEVICE, 0, a, 1024);
		pthread_mutex_lock(&x->lock);
	}
	pthread_mutex_unlock(&x->lock);
	return NULL;
}

START_TEST(test_pool_peak_cross_thread)
{
	static xfree_t x = { .lock = PTHREAD_MUTEX_INITIALIZER,
		.cv = PTHREAD_COND_INITIALIZER };
	pthread_t t[3];
	x.n = 0;
	x.producers = 2;
	x.failed = 0;
	ck_assert_int_eq(pthread_create(&t[0], NULL, xfree_producer, &x), 0);
	ck_assert_int_eq(pthread_create(&t[1], NULL, xfree_producer, &x), 0);
	ck_assert_int_eq(pthread_create(&t[2], NULL, xfree_consumer, &x), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(x.failed, 0);
	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_eq(st.allocated.current, 0);
	ck_assert_uint_eq(st.allocated.total, 2 * 20000 * 1024ULL);
	/* At most 66 blocks were live at once; the bound may add 1 MiB for
	 * each other thread cache. */
	ck_assert_uint_lt(st.allocated.peak, (uint64_t)INT64_MAX);
	ck_assert_uint_le(st.allocated.peak, st.allocated.total);
	ck_assert_uint_le(st.allocated.peak, st.reserved.peak);
	ck_assert_uint_le(st.allocated.peak, 66 * 1024ULL + 3 * (1 << 20));
	ck_assert_uint_ge(st.allocated.peak, 1024);
}
END_TEST

/* ------------------------------------------------------- fault injection */

START_TEST(test_pool_inject_alloc_failures)
{
	static const kind_t kinds[3] = { KIND_DEVICE, KIND_MANAGED,
		KIND_PINNED };
	for (int k = 0; k < 3; k++) {
		uintptr_t a;
		fc_inject("fail_alloc_from", 1);
		int r = pool_alloc(kinds[k], 0, 5 * MiB, &a, NULL);
		ck_assert(r == CW_ENOMEM || r == CW_ECUDA);
		r = pool_alloc(kinds[k], 0, 1000, &a, NULL);
		ck_assert(r == CW_ENOMEM || r == CW_ECUDA);
		fc_inject("clear", 0);
		ck_assert_int_eq(pool_alloc(kinds[k], 0, 1000, &a, NULL),
		    CW_OK);
		ck_assert_int_eq(pool_free(kinds[k], 0, a, 1000), CW_OK);
		/* One transient failure: the OOM stages retry and succeed. */
		struct fakecuda_counters c0, c1;
		fc_counters(&c0);
		fc_inject("fail_alloc", 1);
		ck_assert_int_eq(pool_alloc(kinds[k], 0, 7 * MiB, &a, NULL),
		    CW_OK);
		fc_counters(&c1);
		ck_assert_uint_eq(c1.injected_failures,
		    c0.injected_failures + 1);
		ck_assert_int_eq(pool_free(kinds[k], 0, a, 7 * MiB), CW_OK);
	}
}
END_TEST

START_TEST(test_pool_inject_free_failures)
{
	uintptr_t a;
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 5 * MiB, &a, NULL), CW_OK);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a, 5 * MiB), CW_OK);
	ck_assert_int_eq(pool_alloc(KIND_PINNED, 0, 5 * MiB, &a, NULL), CW_OK);
	ck_assert_int_eq(pool_free(KIND_PINNED, 0, a, 5 * MiB), CW_OK);
	fc_inject("fail_free_from", 1);
	/* The driver refuses the frees of trim: segments are forgotten
	 * (lost, as direct.h's ledger records), the pools stay sane. */
	ck_assert_int_eq(pool_trim(0), CW_OK);
	fc_inject("clear", 0);
	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_eq(st.reserved.current, 0);
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 5 * MiB, &a, NULL), CW_OK);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a, 5 * MiB), CW_OK);
	ck_assert_int_eq(pool_trim(0), CW_OK);
	/* The lost segments stay live in the simulated driver. */
	expect_lost = true;
	pool_reset();
	struct fakecuda_counters c;
	fc_counters(&c);
	ck_assert_uint_le(c.live_device + c.live_pinned, 2);
	ck_assert_uint_ge(c.injected_failures, 1);
}
END_TEST

START_TEST(test_pool_inject_sync_failure)
{
	/* The barrier fails: pending blocks stay pending (never handed out
	 * early); the pool grows instead. */
	uintptr_t a, b;
	size_t sz = 3 * MiB;
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, sz, &a, NULL), CW_OK);
	ck_assert_int_eq(fc_launch_writer(NULL, (CUdeviceptr)a, sz,
	    50, 0xee), CUDA_SUCCESS);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a, sz), CW_OK);
	ck_assert(!fence_inject("sync", 1));
	ck_assert(fence_barrier(0));
	ck_assert_uint_eq(fence_injected(), 1);
	/* The barrier the allocation asks the helper for before growing
	 * fails too: it grows.  (It waits for that barrier a bounded time;
	 * on a loaded machine the helper may make it later, so the test
	 * waits for the helper to have taken the injected failure before
	 * its own barrier below.) */
	ck_assert(!fence_inject("sync", 1));
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, sz, &b, NULL), CW_OK);
	ck_assert_uint_ne(b, a);
	double t0 = now_ms();
	while (fence_injected() < 2 && now_ms() - t0 < DEADLINE_MS)
		usleep(1000);
	ck_assert_uint_eq(fence_injected(), 2);
	ck_assert(!fence_barrier(0));
	uintptr_t c;
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, sz, &c, NULL), CW_OK);
	ck_assert_uint_eq(c, a);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, b, sz), CW_OK);
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, c, sz), CW_OK);
	/* A failing synchronise inside the OOM stages: the error is still a
	 * clean CW_ENOMEM. */
	reset_env(NULL, "8M");
	uintptr_t x[8];
	int n = 0;
	while (n < 8 && pool_alloc(KIND_DEVICE, 0, 1536 * KiB, &x[n], NULL) ==
	    CW_OK)
		n++;
	ck_assert_int_eq(n, 4);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, x[i], 1536 * KiB),
		    CW_OK);
	ck_assert(!fence_inject("sync", 1));
	int r = pool_alloc(KIND_DEVICE, 0, 1536 * KiB, &x[0], NULL);
	/* The trim stage also cannot release what is pending; a second
	 * barrier (after the injected failure) may or may not have run. */
	ck_assert(r == CW_OK || r == CW_ENOMEM);
	if (r == CW_OK)
		ck_assert_int_eq(pool_free(KIND_DEVICE, 0, x[0], 1536 * KiB),
		    CW_OK);
	reset_env(NULL, NULL);
}
END_TEST

START_TEST(test_pool_inject_event_failures)
{
	static const char *ops[3] = { "event_create", "event_record",
		"event_query" };
	for (int k = 0; k < 3; k++) {
		pool_reset();
		uintptr_t a;
		size_t sz = 3 * MiB;
		ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, sz, &a, NULL),
		    CW_OK);
		double t0 = now_ms();
		ck_assert_int_eq(fc_launch_writer(NULL, (CUdeviceptr)a,
		    sz, 60, 0xee), CUDA_SUCCESS);
		ck_assert(!fence_inject(ops[k], 1));
		ck_assert_int_eq(pool_free_async(KIND_DEVICE, 0, a, sz, NULL),
		    CW_OK);
		uintptr_t b[4];
		for (int i = 0; i < 4; i++) {
			ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, sz, &b[i],
			    NULL), CW_OK);
			if (b[i] == a)
				ck_assert(now_ms() - t0 >= 59.0);
		}
		for (int i = 0; i < 4; i++)
			ck_assert_int_eq(pool_free(KIND_DEVICE, 0, b[i], sz),
			    CW_OK);
		fence_inject(ops[k], 0);
	}
}
END_TEST

/* ------------------------------------------------- primary context reset */

START_TEST(test_pool_forget_device)
{
	static const kind_t kinds[3] = { KIND_DEVICE, KIND_MANAGED,
		KIND_PINNED };
	uintptr_t a[3][20];
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 20; i++)
			ck_assert_int_eq(pool_alloc(kinds[k], 0,
			    (size_t)(i + 1) * 50000, &a[k][i], NULL), CW_OK);
		for (int i = 0; i < 10; i++) /* some cached, some live */
			ck_assert_int_eq(pool_free(kinds[k], 0, a[k][i],
			    (size_t)(i + 1) * 50000), CW_OK);
	}
	struct fakecuda_counters c0, c1;
	fc_counters(&c0);
	ck_assert_uint_gt(c0.live_device + c0.live_managed + c0.live_pinned,
	    0);
	/* The program resets the device: the driver frees everything. */
	ck_assert_int_eq(fc_ctx_reset(0), CUDA_SUCCESS);
	pool_forget_device(0);
	fc_counters(&c1);
	ck_assert_uint_eq(c1.live_device + c1.live_managed + c1.live_pinned, 0);
	ck_assert_uint_eq(c1.mem_free, c0.mem_free); /* nothing freed by us */
	ck_assert_uint_eq(c1.mem_free_host, c0.mem_free_host);
	uintptr_t base;
	size_t sz;
	unsigned fl;
	for (int k = 0; k < 3; k++) {
		ck_assert(pool_block_of(a[k][15], &base, &sz, &fl));
		cw_pool_stats_t st;
		pool_stats(kinds[k], &st);
		ck_assert_uint_eq(st.reserved.current, 0);
		ck_assert_uint_eq(st.segments.current, 0);
	}
	/* The program goes on with a new primary context: so do the pools
	 * (nothing of the old one is handed out). */
	CUcontext ctx;
	ck_assert_int_eq(fc_ctx_retain(&ctx, 0), CUDA_SUCCESS);
	for (int k = 0; k < 3; k++) {
		uintptr_t b;
		ck_assert_int_eq(pool_alloc(kinds[k], 0, 50000, &b, NULL),
		    CW_OK);
		memset(host_of(kinds[k], b, 50000), 1, 50000);
		ck_assert_int_eq(pool_free(kinds[k], 0, b, 50000), CW_OK);
	}
	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	ck_assert_uint_eq(st.allocated.current, 0);
}
END_TEST

/* ------------------------------------------------------------------ fork */

START_TEST(test_pool_fork_child_forgets)
{
	uintptr_t a;
	ck_assert_int_eq(pool_alloc(KIND_DEVICE, 0, 4096, &a, NULL), CW_OK);
	pool_prefork();
	pid_t pid = fork();
	if (pid == 0) {
		pool_postfork_child();
		driver_postfork_child();
		unsigned long before = fc_calls("cuCtxSynchronize");
		uintptr_t b;
		int bad = 0;
		if (pool_alloc(KIND_DEVICE, 0, 4096, &b, NULL) != CW_ENODEV)
			bad |= 1;
		if (pool_free(KIND_DEVICE, 0, a, 4096) != CW_OK)
			bad |= 2;
		if (pool_trim(0) != CW_OK)
			bad |= 4;
		cw_pool_stats_t st;
		pool_stats(KIND_DEVICE, &st);
		if (st.allocated.current != 0 || st.reserved.current != 0)
			bad |= 8;
		if (fc_calls("cuCtxSynchronize") != before)
			bad |= 16;
		_exit(bad);
	}
	pool_postfork_parent();
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* The parent goes on. */
	ck_assert_int_eq(pool_free(KIND_DEVICE, 0, a, 4096), CW_OK);
}
END_TEST


/* A staging loop (an 8 MiB buffer allocated, used and freed, again and
 * again, one thread, idle device: bench/staging): the freed block comes
 * back after one cheap barrier instead of the pool growing a new segment
 * (cuMemHostAlloc of megabytes costs milliseconds on a GPU).  Returns the
 * number of iterations that got the first iteration's block. */
static int
staging_loop(kind_t kind, size_t size, int iters,
    struct fakecuda_counters *c)
{
	uintptr_t first = 0;
	int same = 0;
	fc_reset_counters();
	for (int i = 0; i < iters; i++) {
		uintptr_t a;
		ck_assert_int_eq(pool_alloc(kind, 0, size, &a, NULL), CW_OK);
		if (i == 0)
			first = a;
		same += a == first;
		memset(host_of(kind, a, 4096), i & 0xff, 4096);
		ck_assert_int_eq(pool_free(kind, 0, a, size), CW_OK);
	}
	fc_counters(c);
	return same;
}

START_TEST(test_pool_staging_loop_reuses)
{
	/* One segment over 100 iterations, at most one synchronise each.
	 * An allocation that would grow while a pending block fits waits
	 * for the helper's barrier, by default at most 100 us once it runs
	 * (pool_reuse_barrier, pool_pend.c): on a loaded machine a helper
	 * preempted that long makes the pool grow (CI's ASan build once
	 * kept the device loop on its first block 30 times in 100).  Here
	 * the wait is long enough that no scheduler delay outlasts it, so
	 * what is checked is the pool's logic, not the machine's load: one
	 * segment per kind, the device loop always on its block (jemalloc
	 * may move the pinned and managed blocks within their segment). */
	fence_set_reuse_wait(5000000000u);
	struct fakecuda_counters c;
	staging_loop(KIND_PINNED, 8 * MiB, 100, &c);
	ck_assert_uint_eq(c.mem_host_alloc, 1);
	ck_assert_uint_le(c.ctx_synchronize, 100);
	/* A barrier is the synchronise plus the thread's context looked up
	 * and put back around it (cuCtxGetCurrent, cuCtxSetCurrent). */
	ck_assert_uint_le(c.total_calls, 6 * 100);
	cw_pool_stats_t st;
	pool_stats(KIND_PINNED, &st);
	ck_assert_uint_eq(st.segments.total, 1);
	ck_assert_int_eq(staging_loop(KIND_DEVICE, 8 * MiB, 100, &c), 100);
	ck_assert_uint_eq(c.mem_alloc, 1);
	ck_assert_uint_le(c.ctx_synchronize, 100);
	staging_loop(KIND_MANAGED, 8 * MiB, 100, &c);
	ck_assert_uint_eq(c.mem_alloc_managed, 1);
	ck_assert_uint_le(c.ctx_synchronize, 100);
	fence_set_reuse_wait(0);
	/* A kernel still writes into the freed block: whether an allocation
	 * waits for it (idle until now: one barrier) or grows (the device
	 * was seen busy), the block is never handed out early and the new
	 * blocks keep their data. */
	uintptr_t a, b[4];
	ck_assert_int_eq(pool_alloc(KIND_PINNED, 0, 8 * MiB, &a, NULL), CW_OK);
	double t0 = now_ms();
	ck_assert_int_eq(fc_launch_writer(NULL, (CUdeviceptr)a, 8 * MiB,
	    60, 0xee), CUDA_SUCCESS);
	ck_assert_int_eq(pool_free(KIND_PINNED, 0, a, 8 * MiB), CW_OK);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(pool_alloc(KIND_PINNED, 0, 8 * MiB, &b[i],
		    NULL), CW_OK);
		if (b[i] == a)
			ck_assert(now_ms() - t0 >= 59.0);
		memset((void *)b[i], 0x11, 8 * MiB);
	}
	usleep(70 * 1000);
	for (int i = 0; i < 4; i++) {
		for (size_t j = 0; j < 8 * MiB; j += 4093)
			ck_assert_uint_eq(((unsigned char *)b[i])[j], 0x11);
		ck_assert_int_eq(pool_free(KIND_PINNED, 0, b[i], 8 * MiB),
		    CW_OK);
	}
}
END_TEST

static Suite *
make_pool_suite(void)
{
	Suite *s = suite_create("pool");
	TCase *tc = tcase_create("pool");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_pool_kinds_block_of);
	tcase_add_test(tc, test_pool_staging_loop_reuses);
	tcase_add_test(tc, test_pool_driver_calls_amortised);
	tcase_add_test(tc, test_pool_disabled_goes_direct);
	tcase_add_test(tc, test_pool_large_block_option);
	tcase_add_test(tc, test_pool_fence_device_small);
	tcase_add_test(tc, test_pool_fence_device_medium_forces_barrier);
	tcase_add_test(tc, test_pool_fence_device_large);
	tcase_add_test(tc, test_pool_fence_managed_pinned);
	tcase_add_test(tc, test_pool_fence_reuse_after_barrier);
	tcase_add_test(tc, test_pool_fence_helper);
	tcase_add_test(tc, test_pool_fence_helper_paced);
	tcase_add_test(tc, test_pool_reset_stops_helper);
	tcase_add_test(tc, test_pool_free_async_event);
	tcase_add_test(tc, test_pool_alloc_stream_reuse);
	tcase_add_test(tc, test_pool_limit_and_oom_detail);
	tcase_add_test(tc, test_pool_arenas);
	tcase_add_test(tc, test_pool_limit_host_kinds);
	tcase_add_test(tc, test_pool_oom_from_driver);
	tcase_add_test(tc, test_pool_trim_returns_everything);
	tcase_add_test(tc, test_pool_map_follows_segments);
	tcase_add_test(tc, test_pool_stats_exact);
	tcase_add_test(tc, test_pool_threads_16);
	tcase_add_test(tc, test_pool_peak_cross_thread);
	tcase_add_test(tc, test_pool_inject_alloc_failures);
	tcase_add_test(tc, test_pool_inject_free_failures);
	tcase_add_test(tc, test_pool_inject_sync_failure);
	tcase_add_test(tc, test_pool_inject_event_failures);
	tcase_add_test(tc, test_pool_forget_device);
	tcase_add_test(tc, test_pool_fork_child_forgets);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	/* A small simulated device, so that the driver's own OOM is quick. */
	setenv("FAKECUDA_MEM", "256M", 1);
	SRunner *sr = srunner_create(make_pool_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
