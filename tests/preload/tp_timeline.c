/*
 * tp_timeline.c -- a known allocation history (check_timeline.sh: the
 * timeline and the peak):
 *   site_a 3 x 1 MiB, site_b 2 x 4 MiB  -> the peak: 11 MiB on device 0
 *   site_b's freed, site_c 1 x 2 MiB    (live 5 MiB)
 *   then two threads, each 1000 x (alloc 4 KiB from site_t, free)
 *   at exit: site_a's 3 MiB and site_c's 2 MiB leak.
 * With an argument N > 0: N more pairs on the main thread (a timeline
 * past a small CUWARDEN_TIMELINE_LIMIT).  Exits 0.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MIB ((size_t)1 << 20)
#define PAIRS 1000

static __attribute__((noinline)) CUresult
site_a(CUdeviceptr *p)
{
	CUresult r = cuMemAlloc(p, MIB);

	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r;
}

static __attribute__((noinline)) CUresult
site_b(CUdeviceptr *p)
{
	CUresult r = cuMemAlloc(p, 4 * MIB);

	__asm__ volatile("" ::: "memory");
	return r;
}

static __attribute__((noinline)) CUresult
site_c(CUdeviceptr *p)
{
	CUresult r = cuMemAlloc(p, 2 * MIB);

	__asm__ volatile("" ::: "memory");
	return r;
}

static __attribute__((noinline)) CUresult
site_t(CUdeviceptr *p)
{
	CUresult r = cuMemAlloc(p, 4096);

	__asm__ volatile("" ::: "memory");
	return r;
}

static CUcontext ctx;
static volatile int three = 3, two = 2; /* loops kept: one stack per site */

static void *
pairs(void *arg)
{
	long n = (long)arg;
	CUdeviceptr p;

	if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		exit(2);
	for (long i = 0; i < n; i++) {
		if (site_t(&p) != CUDA_SUCCESS || cuMemFree(p) != CUDA_SUCCESS)
			exit(2);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	CUdeviceptr a[3], b[2], c;
	pthread_t t[2];
	CUdevice dev;
	int i;

	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		return 2;
	for (i = 0; i < three; i++)
		if (site_a(&a[i]) != CUDA_SUCCESS)
			return 2;
	for (i = 0; i < two; i++)
		if (site_b(&b[i]) != CUDA_SUCCESS)
			return 2;
	for (i = 0; i < 2; i++)
		if (cuMemFree(b[i]) != CUDA_SUCCESS)
			return 2;
	if (site_c(&c) != CUDA_SUCCESS)
		return 2;
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, pairs, (void *)(long)PAIRS) != 0)
			return 2;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (argc > 1)
		pairs((void *)atol(argv[1]));
	printf("done\n");
	return 0;
}
