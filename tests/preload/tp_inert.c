/*
 * tp_inert.c -- a program that never uses CUDA.  Under the shim it must
 * not see libcuda loaded (/proc/self/maps), and no report is written.
 * It calls dlsym for a few names (one starting with "cu") to show that
 * the dlsym hook alone loads nothing.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int
main(void)
{
	char line[4096];
	int found = 0;

	(void)dlsym(RTLD_DEFAULT, "printf");
	(void)dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
	(void)dlsym(RTLD_DEFAULT, "cudnnCreate");
	FILE *f = fopen("/proc/self/maps", "r");
	if (f == NULL)
		return 99;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "libcuda") != NULL)
			found = 1;
	fclose(f);
	printf("libcuda_loaded=%d\n", found);
	return found;
}
