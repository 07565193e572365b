/*
 * tp_pyunload.c -- a C program that embeds Python the way a plug-in host
 * does: dlopen(LIBPYTHON), Py_Initialize, some Python, a CUDA allocation
 * (the shim's first capture finds the interpreter then), Py_FinalizeEx,
 * dlclose -- then allocates again (check_python.sh).
 *
 *   tp_pyunload LIBPYTHON
 *
 * Prints "unloaded" when the library is gone after dlclose, "kept" when
 * it stays (under the shim it must: every capture calls into it).  Leaks
 * 4096 (while the interpreter is there) and 8192 (after dlclose).  Exit
 * 0; 77 when LIBPYTHON cannot be loaded.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>

#include <cuda.h>

int
main(int argc, char **argv)
{
	void *py;
	void (*init)(void);
	int (*run)(const char *), (*fini)(void);
	CUdeviceptr d;
	CUcontext c;
	CUdevice dev;

	if (argc != 2 || (py = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fprintf(stderr, "tp_pyunload: cannot load %s\n",
		    argc == 2 ? argv[1] : "(none)");
		return 77;
	}
	init = (void (*)(void))dlsym(py, "Py_Initialize");
	run = (int (*)(const char *))dlsym(py, "PyRun_SimpleString");
	fini = (int (*)(void))dlsym(py, "Py_FinalizeEx");
	if (init == NULL || run == NULL || fini == NULL)
		return 77;
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&c, dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(c) != CUDA_SUCCESS)
		return 2;
	init();
	if (run("x = sum(range(10))\n") != 0)
		return 3;
	if (cuMemAlloc(&d, 4096) != CUDA_SUCCESS)
		return 4;
	if (fini() != 0)
		return 5;
	dlclose(py);
	printf("%s\n", dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) == NULL ?
	    "unloaded" : "kept");
	fflush(stdout);
	if (cuMemAlloc(&d, 8192) != CUDA_SUCCESS)
		return 6;
	return 0;
}
