/*
 * bench_shim.c -- what the shim adds to a driver call.
 *
 * A driver-API program linked with -lcuda (so it calls cuMemAlloc_v2
 * through its PLT, the way the shim catches it).  Times pairs of
 * allocation + free per size, and prints one line per (pair, size):
 *
 *   <pair> <size> <ns per pair> <pairs>
 *
 * bench/run-bench-shim.sh runs it plain, under the shim in audit mode
 * (CUWARDEN_STACK_DEPTH=24), in audit mode with CUWARDEN_TIMELINE=1 and
 * in pool mode, and prints them side by side.  Meant for the GPU machine
 * (real driver); against the simulated driver it measures only the
 * shim's own cost.
 *
 * With -t N, then the cuMemAlloc_v2 + cuMemFree_v2 pair again on N threads
 * at once, each making as many pairs as the one thread did, one line per
 * size named "cuMemAlloc_v2+cuMemFree_v2/Nt": its ns per pair is one
 * thread's (the run's wall time x N / all pairs), so that it reads beside
 * the one-thread figure (equal: perfect scaling; N times: serialized).
 *
 * Then one line "clock_gettime(MONOTONIC) 0 <ns per read> <reads>": the
 * clock every timeline event reads, for the +timeline column.
 *
 *   bench_shim [-q] [-a] [-t N]    -q: fewer iterations (a smoke run);
 *                                 -a: the stream-ordered pairs only
 *                                 (five times as many), for an A/B of
 *                                 the shim's own nanoseconds
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int
check(CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return 0;
	const char *name = NULL;
	cuGetErrorName(r, &name);
	fprintf(stderr, "bench_shim: %s: %s\n", what, name ? name : "?");
	return 1;
}

/* One thread of a -t run: its context current, then n pairs once every
 * thread is ready. */
typedef struct worker_s {
	CUcontext ctx;
	size_t size;
	int n;
	pthread_barrier_t *start;
	int failed;
} worker_t;

static void *
worker(void *arg)
{
	worker_t *w = arg;
	CUdeviceptr p;

	if (check(cuCtxSetCurrent(w->ctx), "cuCtxSetCurrent (thread)"))
		w->failed = 1;
	pthread_barrier_wait(w->start);
	for (int k = 0; k < w->n && !w->failed; k++)
		if (cuMemAlloc(&p, w->size) != CUDA_SUCCESS ||
		    cuMemFree(p) != CUDA_SUCCESS)
			w->failed = check(CUDA_ERROR_UNKNOWN, "pair (thread)");
	pthread_barrier_wait(w->start);
	return NULL;
}

/* nthreads threads making n pairs of size each; prints the line.
 * Returns 1 on error. */
static int
threaded(CUcontext ctx, size_t size, int n, int nthreads)
{
	pthread_t *tids = calloc((size_t)nthreads, sizeof(*tids));
	worker_t *ws = calloc((size_t)nthreads, sizeof(*ws));
	pthread_barrier_t start;
	int bad = 0, made = 0;
	double t0, t1;

	if (tids == NULL || ws == NULL ||
	    pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1) != 0) {
		fprintf(stderr, "bench_shim: no memory for %d threads\n",
		    nthreads);
		free(tids);
		free(ws);
		return 1;
	}
	for (int i = 0; i < nthreads; i++) {
		ws[i] = (worker_t){ ctx, size, n, &start, 0 };
		if (pthread_create(&tids[i], NULL, worker, &ws[i]) != 0) {
			fprintf(stderr, "bench_shim: cannot start thread %d\n",
			    i);
			/* The barrier counts nthreads + 1: the rest would
			 * wait forever. */
			exit(1);
		}
		made++;
	}
	pthread_barrier_wait(&start); /* all ready: go */
	t0 = now_ns();
	pthread_barrier_wait(&start); /* all done */
	t1 = now_ns();
	for (int i = 0; i < made; i++) {
		pthread_join(tids[i], NULL);
		bad |= ws[i].failed;
	}
	if (!bad)
		printf("cuMemAlloc_v2+cuMemFree_v2/%dt %zu %.1f %d\n", nthreads,
		    size, (t1 - t0) / n,
		    n * nthreads);
	fflush(stdout);
	pthread_barrier_destroy(&start);
	free(tids);
	free(ws);
	return bad;
}

/* Iterations for a size: fewer for big blocks (the driver's cost grows). */
static int
iters_for(size_t size, int quick)
{
	int n = size <= (64 << 10) ? 20000 : size <= (2 << 20) ? 5000 : 500;
	return quick ? n / 20 : n;
}

int
main(int argc, char **argv)
{
	static const size_t sizes[] = { 512, 64 << 10, 2 << 20, 64 << 20 };
	int quick = 0, nthreads = 0, async_only = 0;
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CUdeviceptr p;

	for (int a = 1; a < argc; a++) {
		if (strcmp(argv[a], "-q") == 0) {
			quick = 1;
		} else if (strcmp(argv[a], "-a") == 0) {
			async_only = 1;
		} else if (strcmp(argv[a], "-t") == 0 && a + 1 < argc &&
		    (nthreads = atoi(argv[a + 1])) >= 0 && nthreads <= 1024) {
			a++;
		} else {
			fprintf(stderr, "usage: bench_shim [-q] [-a] [-t N]\n");
			return 2;
		}
	}
	if (cuInit(0) != CUDA_SUCCESS) {
		fprintf(stderr, "bench_shim: no CUDA device\n");
		return 77;
	}
	if (check(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
	    check(cuDevicePrimaryCtxRetain(&ctx, dev), "retain") ||
	    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
	    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "stream"))
		return 1;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i];
		int n = iters_for(size, quick);
		double t0, t1;

		if (!async_only) {
			/* warm up: the driver's first allocations are slower */
			for (int k = 0; k < 16; k++)
				if (check(cuMemAlloc(&p, size), "cuMemAlloc") ||
				    check(cuMemFree(p), "cuMemFree"))
					return 1;
			t0 = now_ns();
			for (int k = 0; k < n; k++) {
				if (cuMemAlloc(&p, size) != CUDA_SUCCESS ||
				    cuMemFree(p) != CUDA_SUCCESS)
					return check(CUDA_ERROR_UNKNOWN, "pair");
			}
			t1 = now_ns();
			printf("cuMemAlloc_v2+cuMemFree_v2 %zu %.1f %d\n", size,
			    (t1 - t0) / n, n);
		} else {
			n *= 5; /* -a: cheap pairs only, more of them */
		}
		for (int k = 0; k < 16; k++)
			if (check(cuMemAllocAsync(&p, size, s), "async") ||
			    check(cuMemFreeAsync(p, s), "free async"))
				return 1;
		cuStreamSynchronize(s);
		t0 = now_ns();
		for (int k = 0; k < n; k++) {
			if (cuMemAllocAsync(&p, size, s) != CUDA_SUCCESS ||
			    cuMemFreeAsync(p, s) != CUDA_SUCCESS)
				return check(CUDA_ERROR_UNKNOWN, "async pair");
		}
		cuStreamSynchronize(s);
		t1 = now_ns();
		printf("cuMemAllocAsync+cuMemFreeAsync %zu %.1f %d\n", size,
		    (t1 - t0) / n, n);
		fflush(stdout);
	}
	/* What one read of the clock costs on this machine (each timeline
	 * event reads it once): beside the pairs, to read their +timeline
	 * column against.  Not a pair: "clock_gettime(MONOTONIC) 0". */
	{
		struct timespec ts;
		int n = quick ? 100000 : 2000000;
		long sink = 0;
		double t0 = now_ns();

		for (int k = 0; k < n; k++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += ts.tv_nsec;
		}
		double t1 = now_ns();
		printf("clock_gettime(MONOTONIC) 0 %.1f %d\n", (t1 - t0) / n,
		    n + (int)(sink & 0));
	}
	for (size_t i = 0; nthreads > 0 && i < sizeof(sizes) / sizeof(sizes[0]);
	    i++)
		if (threaded(ctx, sizes[i], iters_for(sizes[i], quick),
		    nthreads))
			return 1;
	cuStreamDestroy(s);
	return 0;
}
