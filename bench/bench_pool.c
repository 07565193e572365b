/*
 * bench_pool.c -- the pools beside the driver's own calls, in one run.
 *
 * Prints, per pair, median and p99 in nanoseconds:
 *   device   pool_alloc+pool_free (random 512 B - 1 MiB, one thread)
 *            cuMemAlloc_v2+cuMemFree_v2 (what cudaMalloc/cudaFree do)
 *            cuMemAllocAsync+cuMemFreeAsync on one stream, warm (the
 *            driver's pool; the stream is synchronised outside the loop)
 *   pinned   pool pair  vs  cuMemHostAlloc+cuMemFreeHost
 *   managed  pool pair  vs  cuMemAllocManaged+cuMemFree_v2
 * then 16 threads against one (throughput ratio), RMM-style random
 * allocations (10,000, up to 64 MiB) and a many-holes run, each with
 * reserved/allocated.
 *
 * Runs against whatever libcuda.so.1 the loader finds: the simulated one
 * here (LD_LIBRARY_PATH=tests/fakecuda: figures that say nothing about a
 * GPU), the real one on a GPU machine.  Targets on the H200 (read, not
 * asserted): device pair median <= 250 ns, pinned/managed <= 300 ns,
 * 16 threads >= 10x one, reserved/allocated <= 1.3.
 * Options: -q (quick: fewer iterations), -t N (threads, default 16),
 * -S (scaling sweep: 1, 2, 4, ... N threads, each with its counters; then
 * exits).
 */
#include "preamble.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "fence.h"
#include "lasterr.h"
#include "pool.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

static bool quick;

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

typedef struct res_s {
	double median, p99;
	int n;
	bool ok;
} res_t;

static res_t
summarise(uint64_t *t, int n, uint64_t overhead)
{
	res_t r = { 0, 0, n, n > 0 };
	if (n == 0)
		return r;
	qsort(t, (size_t)n, sizeof(*t), cmp_u64);
	double m = (double)t[n / 2], p = (double)t[(size_t)n * 99 / 100];
	r.median = m > overhead ? m - (double)overhead : 0;
	r.p99 = p > overhead ? p - (double)overhead : 0;
	return r;
}

static uint64_t timer_overhead;

static void
measure_overhead(void)
{
	enum { N = 20000 };
	static uint64_t t[N];
	for (int i = 0; i < N; i++) {
		uint64_t a = now_ns();
		t[i] = now_ns() - a;
	}
	qsort(t, N, sizeof(*t), cmp_u64);
	timer_overhead = t[N / 2];
}

#define NSIZES 4096
static size_t sizes[NSIZES];     /* 512 B - 1 MiB */
static size_t sizes_mgd[NSIZES]; /* 512 B - 256 KiB: managed stays small */

static void
make_sizes(void)
{
	for (int i = 0; i < NSIZES; i++) {
		sizes[i] = 512 + (size_t)(rnd() % (MiB - 512 + 1));
		sizes_mgd[i] = 512 + (size_t)(rnd() % (256 * KiB - 512 + 1));
	}
}

/* ------------------------------------------------------------ the pairs */

static const size_t *
sizes_all(void)
{
	return sizes;
}

static res_t
pool_pair(kind_t kind, int iters)
{
	const size_t *sz = kind == KIND_MANAGED ? sizes_mgd : sizes_all();
	uint64_t *t = malloc(sizeof(*t) * (size_t)iters);
	int n = 0;
	/* Warm: the segments and thread caches exist before timing. */
	for (int i = 0; i < iters / 4 + 1000; i++) {
		uintptr_t a;
		size_t s = sz[i % NSIZES];
		if (pool_alloc(kind, 0, s, &a, NULL) != CW_OK)
			break;
		pool_free(kind, 0, a, s);
	}
	for (int i = 0; i < iters; i++) {
		uintptr_t a;
		size_t s = sz[i % NSIZES];
		uint64_t t0 = now_ns();
		int r = pool_alloc(kind, 0, s, &a, NULL);
		if (r == CW_OK)
			pool_free(kind, 0, a, s);
		uint64_t t1 = now_ns();
		if (r != CW_OK) {
			printf("  pool_alloc failed: %s\n",
			    lasterr_get()->message);
			break;
		}
		t[n++] = t1 - t0;
	}
	res_t r = summarise(t, n, timer_overhead);
	free(t);
	cw_pool_stats_t st;
	pool_stats(kind, &st);
	printf("  (%s pool: reserved %llu MiB, peak %llu MiB)\n",
	    kind == KIND_DEVICE ? "device" : kind == KIND_MANAGED ? "managed" :
	    "pinned", (unsigned long long)(st.reserved.current >> 20),
	    (unsigned long long)(st.reserved.peak >> 20));
	return r;
}

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);

static res_t
driver_device_pair(int iters)
{
	const driver_fns_t *d = driver_get();
	uint64_t *t = malloc(sizeof(*t) * (size_t)iters);
	int n = 0;
	for (int i = 0; i < iters; i++) {
		CUdeviceptr p;
		size_t s = sizes[(i * 7) % NSIZES];
		uint64_t t0 = now_ns();
		CUresult r = d->cuMemAlloc_v2(&p, s);
		if (r == CUDA_SUCCESS)
			d->cuMemFree_v2(p);
		uint64_t t1 = now_ns();
		if (r != CUDA_SUCCESS)
			break;
		t[n++] = t1 - t0;
	}
	res_t r = summarise(t, n, timer_overhead);
	free(t);
	return r;
}

static res_t
driver_async_pair(int iters)
{
	void *h = driver_handle();
	CUresult (*stream_create)(CUstream *, unsigned);
	CUresult (*stream_destroy)(CUstream);
	CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream);
	CUresult (*free_async)(CUdeviceptr, CUstream);
	*(void **)&stream_create = driver_real_dlsym(h, "cuStreamCreate");
	*(void **)&stream_destroy = driver_real_dlsym(h, "cuStreamDestroy_v2");
	*(void **)&alloc_async = driver_real_dlsym(h, "cuMemAllocAsync");
	*(void **)&free_async = driver_real_dlsym(h, "cuMemFreeAsync");
	res_t none = { 0, 0, 0, false };
	if (!stream_create || !stream_destroy || !alloc_async || !free_async)
		return none;
	CUstream s;
	if (stream_create(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		return none;
	const driver_fns_t *d = driver_get();
	uint64_t *t = malloc(sizeof(*t) * (size_t)iters);
	int n = 0;
	/* Warm the driver's pool. */
	for (int i = 0; i < 200; i++) {
		CUdeviceptr p;
		if (alloc_async(&p, sizes[i % NSIZES], s) != CUDA_SUCCESS)
			break;
		free_async(p, s);
	}
	d->cuStreamSynchronize(s);
	for (int i = 0; i < iters; i++) {
		CUdeviceptr p;
		size_t sz = sizes[i % NSIZES];
		uint64_t t0 = now_ns();
		CUresult r = alloc_async(&p, sz, s);
		if (r == CUDA_SUCCESS)
			free_async(p, s);
		uint64_t t1 = now_ns();
		if (r != CUDA_SUCCESS)
			break;
		t[n++] = t1 - t0;
	}
	d->cuStreamSynchronize(s);
	stream_destroy(s);
	res_t r = summarise(t, n, timer_overhead);
	free(t);
	return r;
}

static res_t
driver_pinned_pair(int iters)
{
	const driver_fns_t *d = driver_get();
	uint64_t *t = malloc(sizeof(*t) * (size_t)iters);
	int n = 0;
	for (int i = 0; i < iters; i++) {
		void *p;
		size_t s = sizes[(i * 13) % NSIZES];
		uint64_t t0 = now_ns();
		CUresult r = d->cuMemHostAlloc(&p, s,
		    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
		if (r == CUDA_SUCCESS)
			d->cuMemFreeHost(p);
		uint64_t t1 = now_ns();
		if (r != CUDA_SUCCESS)
			break;
		t[n++] = t1 - t0;
	}
	res_t r = summarise(t, n, timer_overhead);
	free(t);
	return r;
}

static res_t
driver_managed_pair(int iters)
{
	const driver_fns_t *d = driver_get();
	uint64_t *t = malloc(sizeof(*t) * (size_t)iters);
	int n = 0;
	for (int i = 0; i < iters; i++) {
		CUdeviceptr p;
		size_t s = sizes_mgd[(i * 11) % NSIZES];
		uint64_t t0 = now_ns();
		CUresult r = d->cuMemAllocManaged(&p, s, CU_MEM_ATTACH_GLOBAL);
		if (r == CUDA_SUCCESS)
			d->cuMemFree_v2(p);
		uint64_t t1 = now_ns();
		if (r != CUDA_SUCCESS)
			break;
		t[n++] = t1 - t0;
	}
	res_t r = summarise(t, n, timer_overhead);
	free(t);
	return r;
}

static void
row(const char *what, res_t r)
{
	if (!r.ok)
		printf("  %-44s %12s\n", what, "n/a");
	else
		printf("  %-44s %10.0f ns %10.0f ns %8d\n", what, r.median,
		    r.p99, r.n);
}

/* -------------------------------------------------------------- threads */

typedef struct targ_s {
	int iters;
	int seed;
	int failures;
	pthread_barrier_t *bar;
} targ_t;

static void *
tbody(void *arg)
{
	targ_t *t = arg;
	/* Warm this thread's cache. */
	for (int i = 0; i < 2000; i++) {
		uintptr_t a;
		size_t s = sizes[(i * 31 + t->seed * 97) % NSIZES];
		if (pool_alloc(KIND_DEVICE, 0, s, &a, NULL) == CW_OK)
			pool_free(KIND_DEVICE, 0, a, s);
	}
	pthread_barrier_wait(t->bar);
	for (int i = 0; i < t->iters; i++) {
		uintptr_t a;
		size_t s = sizes[(i * 31 + t->seed * 97) % NSIZES];
		if (pool_alloc(KIND_DEVICE, 0, s, &a, NULL) != CW_OK) {
			t->failures++;
			continue;
		}
		pool_free(KIND_DEVICE, 0, a, s);
	}
	pthread_barrier_wait(t->bar);
	return NULL;
}

static double
throughput(int nthreads, int iters)
{
	uint64_t h0, m0, h1, m1;
	pool_cache_counters(KIND_DEVICE, &h0, &m0);
	pool_slow_t w0, w1;
	pool_slow_counters(KIND_DEVICE, &w0);
	cw_pool_stats_t s0, s1;
	pool_stats(KIND_DEVICE, &s0);
	uint64_t b0 = __atomic_load_n(&fence_devs[0].barriers,
	    __ATOMIC_RELAXED);
	uint64_t hb0 = fence_helper_barriers();
	pthread_t th[64];
	targ_t ta[64];
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1);
	for (int i = 0; i < nthreads; i++) {
		ta[i] = (targ_t){ iters, i, 0, &bar };
		pthread_create(&th[i], NULL, tbody, &ta[i]);
	}
	pthread_barrier_wait(&bar);
	uint64_t t0 = now_ns();
	pthread_barrier_wait(&bar);
	uint64_t t1 = now_ns();
	int fails = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		fails += ta[i].failures;
	}
	pthread_barrier_destroy(&bar);
	pool_cache_counters(KIND_DEVICE, &h1, &m1);
	pool_slow_counters(KIND_DEVICE, &w1);
	pool_stats(KIND_DEVICE, &s1);
	uint64_t b1 = __atomic_load_n(&fence_devs[0].barriers,
	    __ATOMIC_RELAXED);
	uint64_t hb1 = fence_helper_barriers();
	double rate = (double)nthreads * iters / ((double)(t1 - t0) / 1e9);
	printf("  %2d thread(s): %6.2f M pairs/s, thread cache hits %.1f%%, "
	    "%llu fence waits, %llu synchronises (helper %llu, last %llu ns)\n",
	    nthreads, rate / 1e6,
	    100.0 * (double)(h1 - h0) /
	    (double)(h1 - h0 + m1 - m0 + (h1 - h0 + m1 - m0 == 0)),
	    (unsigned long long)(s1.fence_waits - s0.fence_waits),
	    (unsigned long long)(b1 - b0), (unsigned long long)(hb1 - hb0),
	    (unsigned long long)__atomic_load_n(&fence_devs[0].last_ns,
	    __ATOMIC_RELAXED));
	/* Where the threads' time went: the slow paths, as a share of
	 * nthreads x the run's time. */
	double all = (double)nthreads * (double)(t1 - t0) / 100.0;
	printf("      slow paths (share of thread time): %llu stalls %.1f%%, "
	    "%llu waits for a running barrier %.1f%%, "
	    "%llu refills %.1f%%, %llu frees to the shared list %.1f%%\n",
	    (unsigned long long)(w1.stalls - w0.stalls),
	    (double)(w1.stall_ns - w0.stall_ns) / all,
	    (unsigned long long)(w1.miss_waits - w0.miss_waits),
	    (double)(w1.miss_wait_ns - w0.miss_wait_ns) / all,
	    (unsigned long long)(w1.refills - w0.refills),
	    (double)(w1.refill_ns - w0.refill_ns) / all,
	    (unsigned long long)(w1.shared_frees - w0.shared_frees),
	    (double)(w1.shared_free_ns - w0.shared_free_ns) / all);
	if (fails)
		printf("  %d allocations failed\n", fails);
	return rate;
}

/* The best of `runs` runs of throughput: the one-thread figure varies by
 * 2x between runs on the GPU machine (scheduling), and the best run is
 * the one that says what the code can do. */
static double
best_of(int nthreads, int iters, int runs)
{
	double best = 0;
	for (int i = 0; i < runs; i++) {
		double r = throughput(nthreads, iters);
		if (r > best)
			best = r;
	}
	return best;
}

/* A control for the scaling figures: each thread works on a table of its
 * own (64 KiB, random updates), nothing shared.  Its ratio is what the
 * machine itself gives at that thread count. */
typedef struct carg_s {
	pthread_barrier_t *bar;
	uint64_t sink;
} carg_t;

static void *
cbody(void *arg)
{
	carg_t *c = arg;
	uint64_t tab[8192] = { 0 };
	uint64_t x = 0x9E3779B97F4A7C15ULL ^ (uintptr_t)c;
	pthread_barrier_wait(c->bar);
	for (int i = 0; i < 4000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		tab[x & 8191] += x;
	}
	pthread_barrier_wait(c->bar);
	for (int i = 0; i < 8192; i++)
		c->sink += tab[i];
	return NULL;
}

static double
control(int nthreads)
{
	double best = 0;
	for (int run = 0; run < 3; run++) {
		pthread_t th[64];
		carg_t ca[64];
		pthread_barrier_t bar;
		pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1);
		for (int i = 0; i < nthreads; i++) {
			ca[i] = (carg_t){ &bar, 0 };
			pthread_create(&th[i], NULL, cbody, &ca[i]);
		}
		pthread_barrier_wait(&bar);
		uint64_t t0 = now_ns();
		pthread_barrier_wait(&bar);
		uint64_t t1 = now_ns();
		for (int i = 0; i < nthreads; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&bar);
		double r = (double)nthreads * 4e6 / ((double)(t1 - t0) / 1e9);
		if (r > best)
			best = r;
	}
	return best;
}

/* ---------------------------------------------------------- fragmentation */

static void
rmm_random(int n, size_t max, size_t cap)
{
	uintptr_t *a = calloc((size_t)n, sizeof(*a));
	size_t *req = calloc((size_t)n, sizeof(*req));
	int *idx = calloc((size_t)n, sizeof(*idx));
	int nlive = 0;
	size_t live = 0, peak_live = 0;
	double worst = 0;
	uint64_t t0 = now_ns();
	int failed = 0;
	for (int i = 0; i < n; i++) {
		size_t sz = 1 + (size_t)(rnd() % max);
		while (nlive > 0 && (live + sz > cap || rnd() % 2 == 0)) {
			int k = (int)(rnd() % (uint64_t)nlive);
			int j = idx[k];
			pool_free(KIND_DEVICE, 0, a[j], req[j]);
			live -= req[j];
			idx[k] = idx[--nlive];
		}
		if (pool_alloc(KIND_DEVICE, 0, sz, &a[i], NULL) != CW_OK) {
			failed++;
			continue;
		}
		req[i] = sz;
		live += sz;
		idx[nlive++] = i;
		if (live > peak_live)
			peak_live = live;
		if (live >= cap / 8) {
			cw_pool_stats_t st;
			pool_stats(KIND_DEVICE, &st);
			double r = (double)st.reserved.current / (double)live;
			if (r > worst)
				worst = r;
		}
	}
	uint64_t t1 = now_ns();
	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	printf("  rmm random: %d allocations up to %zu MiB in %.2f s (%.1f us "
	    "per op), %d failed\n", n, max >> 20, (double)(t1 - t0) / 1e9,
	    (double)(t1 - t0) / 1e3 / n, failed);
	printf("    live %zu MiB, reserved %zu MiB: reserved/allocated %.3f "
	    "(worst while live >= %zu MiB: %.3f; peak reserved/peak live "
	    "%.3f), driver allocs %llu\n", live >> 20,
	    (size_t)(st.reserved.current >> 20),
	    live ? (double)st.reserved.current / (double)live : 0.0,
	    cap >> 23, worst, (double)st.reserved.peak / (double)peak_live,
	    (unsigned long long)st.driver_allocs);
	for (int k = 0; k < nlive; k++)
		pool_free(KIND_DEVICE, 0, a[idx[k]], req[idx[k]]);
	free(a);
	free(req);
	free(idx);
}

static void
many_holes(int n)
{
	uintptr_t *a = calloc((size_t)n, sizeof(*a));
	size_t *req = calloc((size_t)n, sizeof(*req));
	size_t live = 0;
	for (int i = 0; i < n; i++) {
		req[i] = 65 * KiB + (size_t)(rnd() % (960 * KiB));
		if (pool_alloc(KIND_DEVICE, 0, req[i], &a[i], NULL) != CW_OK) {
			printf("  many holes: allocation failed\n");
			n = i;
			break;
		}
		live += req[i];
	}
	for (int i = 0; i < n; i += 2) {
		pool_free(KIND_DEVICE, 0, a[i], req[i]);
		live -= req[i];
	}
	cw_pool_stats_t st0;
	pool_stats(KIND_DEVICE, &st0);
	uint64_t t0 = now_ns();
	for (int i = 0; i < n; i += 2) {
		req[i] = 65 * KiB + (size_t)(rnd() % (960 * KiB));
		if (pool_alloc(KIND_DEVICE, 0, req[i], &a[i], NULL) != CW_OK)
			req[i] = 0;
		else
			live += req[i];
	}
	uint64_t t1 = now_ns();
	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	printf("  many holes: %d blocks 65 KiB-1 MiB, every other freed and "
	    "refilled (%.0f ns per refill)\n", n,
	    (double)(t1 - t0) / (n / 2));
	printf("    reserved %llu -> %llu MiB, live %zu MiB: "
	    "reserved/allocated %.3f, fragmentation with holes %.3f\n",
	    (unsigned long long)(st0.reserved.current >> 20),
	    (unsigned long long)(st.reserved.current >> 20), live >> 20,
	    (double)st.reserved.current / (double)live, st0.fragmentation);
	for (int i = 0; i < n; i++)
		if (req[i] != 0)
			pool_free(KIND_DEVICE, 0, a[i], req[i]);
	free(a);
	free(req);
}

/* ------------------------------------------------------------------ main */

int
main(int argc, char **argv)
{
	int nthreads = 16;
	bool sweep = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-q") == 0)
			quick = true;
		else if (strcmp(argv[i], "-S") == 0)
			sweep = true;
		else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
			nthreads = atoi(argv[++i]);
	}
	if (nthreads < 1 || nthreads > 64)
		nthreads = 16;
	if (driver_bind(0) != CW_OK) {
		printf("bench_pool: no device: %s\n", lasterr_get()->message);
		return 77;
	}
	if (!pool_enabled()) {
		printf("bench_pool: CUWARDEN_POOL=0; nothing to measure\n");
		return 0;
	}
	int dv = 0;
	driver_get()->cuDriverGetVersion(&dv);
	printf("bench_pool: driver %d.%d%s\n", dv / 1000, dv % 1000 / 10,
	    quick ? " (quick)" : "");
	measure_overhead();
	printf("  timer overhead %llu ns (subtracted)\n",
	    (unsigned long long)timer_overhead);
	make_sizes();
	int it = quick ? 20000 : 200000;
	uint64_t t_start = now_ns();
	if (sweep) {
		int tit = quick ? 20000 : 200000;
		printf("\nscaling sweep, device pool, random 512 B - 1 MiB "
		    "(%ld cores online; best of 3 runs each)\n",
		    sysconf(_SC_NPROCESSORS_ONLN));
		double one = best_of(1, tit, 3), cone = control(1);
		for (int n = 2; n <= nthreads; n *= 2) {
			double r = best_of(n, tit, 3);
			printf("  -> %d threads: ratio %.1fx; the machine's own "
			    "(independent loops, no shared data) %.1fx\n", n,
			    r / one, control(n) / cone);
		}
		return 0;
	}

	printf("\nalloc+free pairs, random 512 B - 1 MiB, one thread"
	    "                 median        p99    count\n");
	row("device   pool (cw pools)", pool_pair(KIND_DEVICE, it));
	row("device   cuMemAlloc_v2+cuMemFree_v2", driver_device_pair(
	    quick ? 100 : 300));
	row("device   cuMemAllocAsync+cuMemFreeAsync (warm)",
	    driver_async_pair(quick ? 2000 : 20000));
	pool_trim(0);
	row("pinned   pool (cw pools)", pool_pair(KIND_PINNED, it));
	row("pinned   cuMemHostAlloc+cuMemFreeHost", driver_pinned_pair(
	    quick ? 10 : 30));
	pool_trim(0);
	printf("  managed: random 512 B - 256 KiB (kept small)\n");
	row("managed  pool (cw pools)", pool_pair(KIND_MANAGED, it));
	row("managed  cuMemAllocManaged+cuMemFree_v2", driver_managed_pair(
	    quick ? 30 : 100));
	pool_trim(0);

	int tit = quick ? 20000 : 200000;
	double one = best_of(1, tit, 3);
	double many = best_of(nthreads, tit, 3);
	printf("\nthreads (best of 3 runs): device pool alloc+free pairs per "
	    "second: 1 thread "
	    "%.2f M/s, %d threads %.2f M/s: ratio %.1fx (%ld cores online)\n",
	    one / 1e6, nthreads, many / 1e6, many / one,
	    sysconf(_SC_NPROCESSORS_ONLN));
	pool_trim(0);

	printf("\nfragmentation (device pool):\n");
	rmm_random(quick ? 2000 : 10000, 64 * MiB, (size_t)8 << 30);
	pool_trim(0);
	many_holes(quick ? 2000 : 8000);
	pool_trim(0);

	cw_pool_stats_t st;
	pool_stats(KIND_DEVICE, &st);
	printf("\ndevice pool totals: %llu driver allocs, %llu driver frees, "
	    "%llu fence waits, %llu trims\n",
	    (unsigned long long)st.driver_allocs,
	    (unsigned long long)st.driver_frees,
	    (unsigned long long)st.fence_waits, (unsigned long long)st.trims);
	printf("bench_pool: done in %.1f s\n",
	    (double)(now_ns() - t_start) / 1e9);
	return 0;
}
