/*
 * tp_tlsnap.c -- threads that allocate and free while snapshots of the
 * timeline are taken (check_snapshot_timeline.sh).
 *
 *   tp_tlsnap READY GO [THREADS [PAIRS]]
 *
 * Starts THREADS (3) threads; each makes PAIRS (300000) cuMemAlloc +
 * cuMemFree pairs of its own (4 KiB .. 64 KiB) and keeps every 1000th
 * allocation until the end (a growth, freed before exit).  Once every
 * thread has made its first pair, writes "1\n" to READY (a FIFO) and the
 * threads go on; then waits for a line on GO, joins them, frees what they
 * kept and exits 0.  A thread frees only its own allocations, so each
 * thread's events alone never hold less than nothing.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 16
#define KEEP_EVERY 1000

static long pairs = 300000;
static pthread_barrier_t first;
static CUcontext ctx;

typedef struct kept_s {
	CUdeviceptr *p;
	long n;
	int failed;
} kept_t;

static void *
churn(void *arg)
{
	kept_t *k = arg;

	if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
		k->failed = 1;
		pthread_barrier_wait(&first);
		return NULL;
	}
	for (long i = 0; i < pairs; i++) {
		CUdeviceptr p;
		int ok = cuMemAlloc(&p, (size_t)4096 << (i % 5)) ==
		    CUDA_SUCCESS;

		if (ok && i % KEEP_EVERY == KEEP_EVERY - 1)
			k->p[k->n++] = p;
		else if (ok && cuMemFree(p) != CUDA_SUCCESS)
			ok = 0;
		if (i == 0)
			pthread_barrier_wait(&first);
		if (!ok) {
			k->failed = 1;
			break;
		}
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t tid[MAX_THREADS];
	kept_t kept[MAX_THREADS];
	int nthreads = argc > 3 ? atoi(argv[3]) : 3;
	CUdevice dev;
	char line[64];
	FILE *f;
	int rc = 0;

	if (argc > 4)
		pairs = atol(argv[4]);
	if (argc < 3 || nthreads < 1 || nthreads > MAX_THREADS || pairs < 1) {
		fprintf(stderr, "usage: tp_tlsnap READY GO [THREADS [PAIRS]]\n");
		return 2;
	}
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) {
		fprintf(stderr, "tp_tlsnap: no device\n");
		return 2;
	}
	pthread_barrier_init(&first, NULL, (unsigned)nthreads + 1);
	for (int i = 0; i < nthreads; i++) {
		kept[i].p = calloc((size_t)(pairs / KEEP_EVERY + 1),
		    sizeof(CUdeviceptr));
		kept[i].n = 0;
		kept[i].failed = 0;
		if (kept[i].p == NULL ||
		    pthread_create(&tid[i], NULL, churn, &kept[i]) != 0) {
			fprintf(stderr, "tp_tlsnap: no thread\n");
			return 2;
		}
	}
	pthread_barrier_wait(&first);
	f = fopen(argv[1], "w");
	if (f == NULL || fprintf(f, "1\n") < 0 || fclose(f) != 0)
		return 1;
	f = fopen(argv[2], "r");
	if (f == NULL || fgets(line, sizeof(line), f) == NULL)
		rc = 1;
	if (f != NULL)
		fclose(f);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(tid[i], NULL);
		for (long j = 0; j < kept[i].n; j++)
			cuMemFree(kept[i].p[j]);
		if (kept[i].failed) {
			fprintf(stderr, "tp_tlsnap: thread %d failed\n", i);
			rc = 1;
		}
		free(kept[i].p);
	}
	printf("done\n");
	return rc;
}
