// tp_cudart.cu -- a CUDA runtime program (nvcc: static cudart by default;
// the check also builds it with -cudart shared and with
// --default-stream per-thread).  Against the simulated driver cudart stops
// at cuGetExportTable, after its whole cuGetProcAddress pass: the check
// asserts that the pass went through the shim (dlsym of
// cuGetProcAddress_v2 redirected, ~440 lookups, the hooked ones
// redirected) and that the program prints and exits the same with and
// without the shim.  On a GPU it allocates, leaks 1 MiB and frees 4 KiB.
#include <cuda_runtime.h>
#include <stdio.h>

int
main()
{
	void *p = 0, *q = 0;
	cudaError_t e = cudaMalloc(&p, 1 << 20);
	printf("cudaMalloc: %s\n", cudaGetErrorName(e));
	e = cudaMalloc(&q, 4096);
	if (e == cudaSuccess)
		e = cudaFree(q);
	printf("cudaFree: %s\n", cudaGetErrorName(e));
	return 0;
}
