/*
 * tp_snapshot.c -- a program in two phases with a planted growth
 * (check_snapshot.sh: snapshots of a running process, and their diff).
 *   phase 1: site_a 2 x 1 MiB, site_b 1 x 2 MiB          (live 4 MiB)
 *   phase 2: site_a 3 x 1 MiB more, site_b's freed, site_c 1 x 512 KiB
 *                                                        (live 5.5 MiB)
 *   at exit: site_c's freed; site_a's 5 MiB leak.
 * With two arguments READY GO (FIFOs), after each phase it writes
 * "N\n" to READY and waits for a line on GO, so that the test takes its
 * snapshot while the program holds still; without them it runs through.
 * TP_OWN_HANDLER=1: the program catches SIGUSR2 itself, before any CUDA
 * call (the shim must leave that handler alone).  Exits 0.
 */
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

static CUdeviceptr a[5], b, c;
static int na;

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
	CUresult r = cuMemAlloc(p, 2 * MIB);

	__asm__ volatile("" ::: "memory");
	return r;
}

static __attribute__((noinline)) CUresult
site_c(CUdeviceptr *p)
{
	CUresult r = cuMemAlloc(p, MIB / 2);

	__asm__ volatile("" ::: "memory");
	return r;
}

/* One call site of each site_*: one stack per site, whatever the
 * phase. */
static __attribute__((noinline)) int
do_phase(int k)
{
	int i, n = k == 1 ? 2 : 3;

	for (i = 0; i < n; i++)
		if (site_a(&a[na++]) != CUDA_SUCCESS)
			return 1;
	if (k == 1)
		return site_b(&b) != CUDA_SUCCESS;
	if (cuMemFree(b) != CUDA_SUCCESS)
		return 1;
	return site_c(&c) != CUDA_SUCCESS;
}

/* "k\n" to ready, then a line from go. */
static int
sync_with(const char *ready, const char *go, int k)
{
	char line[64];
	FILE *f = fopen(ready, "w");

	if (f == NULL || fprintf(f, "%d\n", k) < 0 || fclose(f) != 0)
		return 1;
	f = fopen(go, "r");
	if (f == NULL || fgets(line, sizeof(line), f) == NULL) {
		if (f != NULL)
			fclose(f);
		return 1;
	}
	fclose(f);
	return 0;
}

static void
own_handler(int sig)
{
	(void)sig;
}

int
main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;
	const char *own = getenv("TP_OWN_HANDLER");

	if (own != NULL && strcmp(own, "1") == 0)
		signal(SIGUSR2, own_handler);
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
		fprintf(stderr, "tp_snapshot: no device\n");
		return 2;
	}
	for (int k = 1; k <= 2; k++) {
		if (do_phase(k)) {
			fprintf(stderr, "tp_snapshot: phase %d failed\n", k);
			return 1;
		}
		if (argc == 3 && sync_with(argv[1], argv[2], k)) {
			fprintf(stderr, "tp_snapshot: no go after phase %d\n",
			    k);
			return 1;
		}
	}
	cuMemFree(c);
	printf("done\n");
	return 0;
}
