/*
 * chainprog.c -- a driver-API test program for cuwarden-audit's call-chain
 * suppressions (tests/tools/check_supp_chain.sh), linked against
 * tests/fakecuda/libcuda.so.1: findings that share their innermost
 * function but not their call chain.
 *
 * Usage: chainprog MODE
 *   leaks      leaks 1 MiB through path_a() -> alloc_buf() and 2 x 64 KiB
 *              through path_b() -> alloc_buf(): two groups
 *   badfree    frees a pointer never allocated, from main
 *   badfree2   the same from main, then again from free_elsewhere()
 *   double     frees one allocation twice, from main (as "cuprog
 *              violation" does, in another program)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define KIB ((size_t)1 << 10)
#define BOGUS ((CUdeviceptr)0x1234000)

static void
check(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "chainprog: %s failed: %d\n", what, (int)r);
		exit(99);
	}
}

static void
setup(void)
{
	CUdevice dev;
	CUcontext ctx;

	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

__attribute__((noinline)) static CUdeviceptr
alloc_buf(size_t size)
{
	CUdeviceptr p = 0;

	check(cuMemAlloc(&p, size), "cuMemAlloc");
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void
path_a(void)
{
	(void)alloc_buf(1024 * KIB);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void
path_b(void)
{
	for (int i = 0; i < 2; i++)
		(void)alloc_buf(64 * KIB);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void
free_elsewhere(void)
{
	if (cuMemFree(BOGUS) == CUDA_SUCCESS)
		fprintf(stderr, "chainprog: a bogus free succeeded?\n");
	__asm__ volatile("" ::: "memory");
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setup();
	if (strcmp(mode, "leaks") == 0) {
		path_a();
		path_b();
		return 0;
	}
	if (strcmp(mode, "badfree") == 0 || strcmp(mode, "badfree2") == 0) {
		if (cuMemFree(BOGUS) == CUDA_SUCCESS)
			fprintf(stderr, "chainprog: a bogus free succeeded?\n");
		if (mode[7] == '2')
			free_elsewhere();
		return 0;
	}
	if (strcmp(mode, "double") == 0) {
		CUdeviceptr p = alloc_buf(64 * KIB);

		check(cuMemFree(p), "cuMemFree");
		if (cuMemFree(p) == CUDA_SUCCESS)
			fprintf(stderr, "chainprog: second free succeeded?\n");
		return 0;
	}
	fprintf(stderr, "usage: chainprog leaks|badfree|badfree2|double\n");
	return 99;
}
