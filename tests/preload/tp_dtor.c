/*
 * tp_dtor.c -- libtpdtor.so: a library that frees its CUDA memory at exit,
 * late: one block from its ELF destructor, one from an atexit handler its
 * constructor registered (as C++ static destructors are), both run by
 * glibc after the preloaded shim's own destructor.  The shim's report,
 * written after them, must not call them leaks.
 */
#include <stdlib.h>

#include <cuda.h>

int tp_dtor_alloc(void);

static CUdeviceptr a, b;

static void
free_b(void)
{
	if (b != 0)
		cuMemFree(b);
}

__attribute__((constructor)) static void
setup(void)
{
	atexit(free_b);
}

__attribute__((destructor)) static void
free_a(void)
{
	if (a != 0)
		cuMemFree(a);
}

int
tp_dtor_alloc(void)
{
	return cuMemAlloc(&a, 11111) != CUDA_SUCCESS ||
	    cuMemAlloc(&b, 22222) != CUDA_SUCCESS;
}
