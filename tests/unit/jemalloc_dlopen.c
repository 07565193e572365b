/*
 * jemalloc_dlopen.c -- loads libcuwarden.so late, with dlopen, the way
 * Python's ctypes does.  jemalloc's initial-exec TLS needs room in the
 * static TLS block; prints "loaded" or "refused: <dlerror>" and exits 0
 * either way (1 only when it was loaded but does not work).  The script
 * decides what each outcome means.
 */
#include <dlfcn.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
	if (argc != 2)
		return 99;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		printf("refused: %s\n", dlerror());
		return 0;
	}
	int (*stats)(void *) = (int (*)(void *))dlsym(h, "cw_stats");
	if (stats == NULL) {
		printf("loaded, but cw_stats is missing\n");
		return 1;
	}
	printf("loaded\n");
	return 0;
}
