/*
 * bench_api.c -- what the public API costs, beside the driver's own calls
 * in the same run.
 *
 *   - cw_alloc + cw_free pairs for device, managed and pinned memory, random
 *     sizes 512 B .. 1 MiB, and the driver's cuMemAlloc_v2 + cuMemFree_v2
 *     (cuMemAllocManaged + cuMemFree_v2, cuMemHostAlloc + cuMemFreeHost) on
 *     the same sizes, through driver_get();
 *   - the device pair from 1 and from 16 threads at once (or as many as
 *     there are CPUs), 512 B .. 64 KiB;
 *   - cw_lookup (interior pointers) and cw_retain + cw_release at 10^3 and
 *     10^6 live allocations.
 *
 * One line per figure: median and p99 in ns per operation (each operation
 * timed alone with CLOCK_MONOTONIC; the timer's own median cost, printed
 * first, is subtracted).  LD_LIBRARY_PATH decides which libcuda.so.1 runs:
 * the simulated driver here (figures that say nothing about a GPU), the
 * real one on a GPU machine.  CUWARDEN_POOL is honoured as set.
 *
 * Usage: bench_api [scale]   scale 0.01..1 shrinks the iteration counts
 * (default 1).  Exit 77 when no driver can be loaded.
 *
 * Measured 2026-12-02 on one H200 (driver 580, CUDA 13.0), pools on,
 * median / p99 ns:
 *   cw_alloc+cw_free     device    722 / 20754   driver pair  56519 / 77392
 *                        managed  1045 / 25253   driver pair   9346 / 16927
 *                        pinned   1123 / 26547   driver pair 655172 / 826191
 *   cw_lookup            10^3 live  158 / 237     10^6 live  960 / 2000
 *   cw_retain+release    10^3 live   70 / 80      10^6 live  202 / 383
 * A second run (the machine busier: pairs 987 / 1458 / 1526 ns): device
 * pair 512 B .. 64 KiB, 1 thread 467 / 2121, 16 threads 2047 / 38995 --
 * contention in the pools and the registry, not in the core's counters
 * (16 threads with the stats calls removed: 6.5 vs 6.7 us per pair in a
 * 16-deep alloc/free loop).
 */
#include "preamble.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include "driver.h"
#include "log.h"
#include "types.h"

static double scale = 1.0;
static uint64_t timer_cost;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 0x243f6a8885a308d3ULL;

static uint64_t
next(void)
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

static void
report(const char *what, uint64_t *t, size_t n)
{
	if (n == 0) {
		printf("bench_api: %-52s skipped\n", what);
		return;
	}
	qsort(t, n, sizeof(*t), cmp_u64);
	uint64_t med = t[n / 2], p99 = t[(n * 99) / 100];
	med = med > timer_cost ? med - timer_cost : 0;
	p99 = p99 > timer_cost ? p99 - timer_cost : 0;
	printf("bench_api: %-52s median %8llu ns  p99 %9llu ns  (n=%zu)\n",
	    what, (unsigned long long)med, (unsigned long long)p99, n);
	fflush(stdout);
}

static size_t
iters(size_t n)
{
	size_t k = (size_t)((double)n * scale);

	return k < 10 ? 10 : k;
}

static void
measure_timer(void)
{
	enum { N = 100000 };
	static uint64_t t[N];

	for (size_t i = 0; i < N; i++) {
		uint64_t a = now_ns();
		t[i] = now_ns() - a;
	}
	qsort(t, N, sizeof(*t), cmp_u64);
	timer_cost = t[N / 2];
	printf("bench_api: %-52s median %8llu ns\n", "timer (subtracted below)",
	    (unsigned long long)timer_cost);
}

/* cw_alloc + cw_free, random sizes 512 B .. 1 MiB. */
static void
bench_cw_pair(cw_kind_t kind, size_t n)
{
	uint64_t *t = calloc(n, sizeof(*t));
	char what[64];
	size_t done = 0;

	/* Warm the pool (and the driver) up first. */
	for (size_t i = 0; i < n / 10 + 1; i++) {
		cw_buf_t b;
		if (cw_alloc(&b, 512 + next() % (1 << 20), kind, 0, 0) ==
		    CW_OK)
			cw_free(b);
	}
	for (size_t i = 0; i < n; i++) {
		size_t size = 512 + next() % ((1 << 20) - 511);
		cw_buf_t b;
		uint64_t a = now_ns();
		int r = cw_alloc(&b, size, kind, 0, 0);
		if (r == CW_OK)
			r = cw_free(b);
		uint64_t e = now_ns();
		if (r != CW_OK) {
			fprintf(stderr, "bench_api: %s: %s\n",
			    kind_name((kind_t)kind), cw_last_error()->message);
			break;
		}
		t[done++] = e - a;
	}
	snprintf(what, sizeof(what), "cw_alloc+cw_free %s 512B-1MiB",
	    kind_name((kind_t)kind));
	report(what, t, done);
	free(t);
}

/* The driver's own pair on the same sizes. */
static void
bench_driver_pair(cw_kind_t kind, size_t n)
{
	const driver_fns_t *d = driver_get();
	uint64_t *t = calloc(n, sizeof(*t));
	char what[64];
	size_t done = 0;
	CUresult r = CUDA_SUCCESS;

	driver_bind(0);
	for (size_t i = 0; i < n + 1; i++) {
		size_t size = 512 + next() % ((1 << 20) - 511);
		CUdeviceptr p = 0;
		void *h = NULL;
		uint64_t a = now_ns();
		switch (kind) {
		case CW_DEVICE:
			r = d->cuMemAlloc_v2(&p, size);
			if (r == CUDA_SUCCESS)
				r = d->cuMemFree_v2(p);
			break;
		case CW_MANAGED:
			r = d->cuMemAllocManaged(&p, size,
			    CU_MEM_ATTACH_GLOBAL);
			if (r == CUDA_SUCCESS)
				r = d->cuMemFree_v2(p);
			break;
		default:
			r = d->cuMemHostAlloc(&h, size,
			    CU_MEMHOSTALLOC_PORTABLE |
			    CU_MEMHOSTALLOC_DEVICEMAP);
			if (r == CUDA_SUCCESS)
				r = d->cuMemFreeHost(h);
			break;
		}
		uint64_t e = now_ns();
		if (r != CUDA_SUCCESS) {
			fprintf(stderr, "bench_api: driver %s: %s\n",
			    kind_name((kind_t)kind), driver_error_name(r));
			break;
		}
		if (i > 0) /* the first call pays for the context */
			t[done++] = e - a;
	}
	snprintf(what, sizeof(what), "%s %s 512B-1MiB",
	    kind == CW_DEVICE ? "cuMemAlloc_v2+cuMemFree_v2" :
	    kind == CW_MANAGED ? "cuMemAllocManaged+cuMemFree_v2" :
	    "cuMemHostAlloc+cuMemFreeHost", kind_name((kind_t)kind));
	report(what, t, done);
	free(t);
}

/* cw_lookup and cw_retain + cw_release with live allocations around. */
static void
bench_live(size_t live)
{
	cw_buf_t *bufs = calloc(live, sizeof(*bufs));
	size_t n = iters(200000), made = 0;
	uint64_t *t = calloc(n, sizeof(*t));
	char what[64];

	for (; made < live; made++)
		if (cw_alloc(&bufs[made], 256, CW_DEVICE, 0, 0) != CW_OK) {
			fprintf(stderr, "bench_api: %zu live allocations: %s\n",
			    made, cw_last_error()->message);
			break;
		}
	if (made == live) {
		for (size_t i = 0; i < n; i++) {
			cw_buf_t b = bufs[next() % live], f;
			const char *p = (const char *)cw_ptr(b) + next() % 256;
			uint64_t a = now_ns();
			int r = cw_lookup(p, &f);
			t[i] = now_ns() - a;
			if (r != CW_OK || f != b) {
				fprintf(stderr, "bench_api: lookup wrong\n");
				exit(1);
			}
		}
		snprintf(what, sizeof(what), "cw_lookup, %zu live", live);
		report(what, t, n);
		for (size_t i = 0; i < n; i++) {
			cw_buf_t b = bufs[next() % live];
			uint64_t a = now_ns();
			int r = cw_retain(b);
			if (r == CW_OK)
				r = cw_release(b);
			t[i] = now_ns() - a;
			if (r != CW_OK) {
				fprintf(stderr, "bench_api: retain failed\n");
				exit(1);
			}
		}
		snprintf(what, sizeof(what), "cw_retain+cw_release, %zu live",
		    live);
		report(what, t, n);
	}
	for (size_t i = 0; i < made; i++)
		cw_free(bufs[i]);
	free(bufs);
	free(t);
}

/* The same pair from many threads at once (small sizes, the common case
 * of a multi-threaded program): median and p99 per pair per thread. */
typedef struct mt_arg_s {
	size_t n;
	uint64_t *t;
	int failed;
} mt_arg_t;

static void *
mt_worker(void *p)
{
	mt_arg_t *a = p;
	uint64_t s = (uint64_t)(uintptr_t)p | 1;

	for (size_t i = 0; i < a->n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		cw_buf_t b;
		uint64_t t0 = now_ns();
		int r = cw_alloc(&b, 512 + s % 65536, CW_DEVICE, 0, 0);
		if (r == CW_OK)
			r = cw_free(b);
		a->t[i] = now_ns() - t0;
		if (r != CW_OK) {
			a->failed = 1;
			break;
		}
	}
	return NULL;
}

static void
bench_threads(int nthreads)
{
	size_t n = iters(20000);
	pthread_t th[64];
	mt_arg_t args[64];
	uint64_t *all = calloc(n * (size_t)nthreads, sizeof(*all));
	char what[64];

	for (int i = 0; i < nthreads; i++) {
		args[i].n = n;
		args[i].t = all + (size_t)i * n;
		args[i].failed = 0;
		pthread_create(&th[i], NULL, mt_worker, &args[i]);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < nthreads; i++)
		if (args[i].failed) {
			fprintf(stderr, "bench_api: threads: %s\n",
			    cw_last_error()->message);
			free(all);
			return;
		}
	snprintf(what, sizeof(what), "cw_alloc+cw_free device 512B-64KiB, %d "
	    "threads", nthreads);
	report(what, all, n * (size_t)nthreads);
	free(all);
}

int
main(int argc, char **argv)
{
	if (argc > 1) {
		scale = atof(argv[1]);
		if (!(scale > 0.0 && scale <= 1.0)) {
			fprintf(stderr, "usage: bench_api [scale 0..1]\n");
			return 99;
		}
	}
	if (driver_get() == NULL || driver_device_count() <= 0) {
		printf("bench_api: no CUDA driver or device; skipped\n");
		return 77;
	}
	int version = 0;
	driver_get()->cuDriverGetVersion(&version);
	printf("bench_api: driver version %d, CUWARDEN_POOL=%s\n", version,
	    getenv("CUWARDEN_POOL") ? getenv("CUWARDEN_POOL") : "(default)");
	measure_timer();

	const size_t pair_n[3] = { 20000, 5000, 2000 };
	const size_t drv_n[3] = { 2000, 1000, 100 };
	for (int k = 0; k < 3; k++) {
		bench_cw_pair((cw_kind_t)k, iters(pair_n[k]));
		bench_driver_pair((cw_kind_t)k, iters(drv_n[k]));
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	bench_threads(1);
	bench_threads(cpus >= 16 ? 16 : cpus < 2 ? 2 : (int)cpus);
	bench_live(1000);
	bench_live(scale >= 1.0 ? 1000000 : (size_t)(1000000 * scale));
	return 0;
}
