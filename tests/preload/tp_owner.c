/*
 * tp_owner.c -- libtpowner.so: a library that allocates device memory
 * and never frees it.  tp_driver dlopens it, calls tp_owner_leak, and
 * dlcloses it before exit: the leak's owner must still name this file.
 */
#include <stddef.h>

#include <cuda.h>

int tp_owner_leak(size_t n);

int
tp_owner_leak(size_t n)
{
	CUdeviceptr p;

	return cuMemAlloc(&p, n) == CUDA_SUCCESS ? 0 : 1;
}
