/*
 * tp_next1.c -- libtpnext1.so, loaded before libtpnext2.so.  Both define
 * tp_next_which and cuTpNextWhich; dlsym(RTLD_NEXT, ...) called from here
 * must find libtpnext2.so's definitions, never these (glibc resolves
 * RTLD_NEXT from the caller's return address: a dlsym wrapper that calls
 * the real one instead of tail-jumping would make the shim the caller).
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stddef.h>

int tp_next_which(void);
int cuTpNextWhich(void);
int tp_next_probe(void);

int
tp_next_which(void)
{
	return 1;
}

int
cuTpNextWhich(void)
{
	return 1;
}

/* Returns 2*10 + 2 when both lookups found libtpnext2.so's functions. */
int
tp_next_probe(void)
{
	int (*a)(void) = (int (*)(void))dlsym(RTLD_NEXT, "tp_next_which");
	int (*b)(void) = (int (*)(void))dlsym(RTLD_NEXT, "cuTpNextWhich");

	return (a != NULL ? a() : 0) * 10 + (b != NULL ? b() : 0);
}
