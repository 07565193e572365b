/*
 * tp_olddlsym.c -- a program as built against glibc < 2.34 (manylinux
 * wheels: PyTorch's libcudart, CuPy): it references dlsym@GLIBC_2.2.5.
 * Under the shim that reference must bind to the shim's dlsym too, and
 * redirect dlsym(libcuda, "cuMemAlloc_v2").  Prints redirected=0|1;
 * exits 77 where the version does not exist (not x86-64).
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>

#if defined(__x86_64__)
void *old_dlsym(void *handle, const char *name);
__asm__(".symver old_dlsym, dlsym@GLIBC_2.2.5");

int
main(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (lib == NULL)
		return 99;
	void *p = old_dlsym(lib, "cuMemAlloc_v2");
	void *mine = dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
	if (p == NULL)
		return 1;
	printf("redirected=%d\n", mine != NULL && p == mine);
	return 0;
}
#else
int
main(void)
{
	return 77;
}
#endif
