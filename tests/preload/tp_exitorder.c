/*
 * tp_exitorder.c -- linked with libtpdtor.so, which frees two blocks at
 * exit after the shim's destructor has run; leaks one block of its own
 * (33333 bytes), which the report must show, alone.
 */
#include <stdio.h>

#include <cuda.h>

int tp_dtor_alloc(void);

int
main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;

	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    tp_dtor_alloc() || cuMemAlloc(&p, 33333))
		return 1;
	printf("ok\n");
	return 0;
}
