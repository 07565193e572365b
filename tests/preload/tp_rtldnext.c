/*
 * tp_rtldnext.c -- RTLD_NEXT caller preservation: libtpnext1.so asks
 * dlsym(RTLD_NEXT, ...) and must get libtpnext2.so's symbols (22), with
 * or without the shim.  Also RTLD_DEFAULT from the program finds
 * libtpnext1.so's (the first) definitions (11).
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>

int tp_next_probe(void);

int
main(void)
{
	int (*a)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "tp_next_which");
	int (*b)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cuTpNextWhich");
	int def = (a != NULL ? a() : 0) * 10 + (b != NULL ? b() : 0);
	int next = tp_next_probe();

	printf("default=%d next=%d\n", def, next);
	return def == 11 && next == 22 ? 0 : 1;
}
