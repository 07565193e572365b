/*
 * jemalloc_host.c -- a host program linked with -lcuwarden: its malloc
 * family must still be glibc's, and no jemalloc entry point may be
 * reachable, before and after the private jemalloc has started (a pinned
 * and a managed allocation through the pools, on the simulated driver).
 * Exit 0 pass, 1 fail, 99 harness error.  Run by check_jemalloc_private.sh.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuwarden.h"

static int failures;

static void
check_from_libc(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	Dl_info info;
	if (p == NULL || dladdr(p, &info) == 0 || info.dli_fname == NULL) {
		printf("FAIL: %s does not resolve\n", name);
		failures++;
		return;
	}
	if (strstr(info.dli_fname, "libc.so.6") == NULL) {
		printf("FAIL: %s resolves into %s, not libc.so.6\n", name,
		    info.dli_fname);
		failures++;
	}
}

static void
check_absent(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (p != NULL) {
		Dl_info info;
		dladdr(p, &info);
		printf("FAIL: %s is visible (from %s)\n", name,
		    info.dli_fname ? info.dli_fname : "?");
		failures++;
	}
}

static void
check_all(const char *when)
{
	static const char *const libc_names[] = { "malloc", "free", "calloc",
		"realloc", "posix_memalign", "aligned_alloc", "memalign",
		"valloc", "malloc_usable_size" };
	static const char *const absent[] = { "mallocx", "dallocx", "rallocx",
		"xallocx", "sallocx", "sdallocx", "nallocx", "mallctl",
		"mallctlnametomib", "mallctlbymib", "malloc_stats_print",
		"je_malloc", "je_mallocx", "cw_je_mallocx", "cw_je_malloc",
		"cw_je_mallctl", "malloc_conf", "cw_je_malloc_conf" };
	for (size_t i = 0; i < sizeof(libc_names) / sizeof(*libc_names); i++)
		check_from_libc(libc_names[i]);
	for (size_t i = 0; i < sizeof(absent) / sizeof(*absent); i++)
		check_absent(absent[i]);
	printf("%s: checked\n", when);
}

int
main(void)
{
	check_all("before the pools");
	/* The public API, looked up so that this program links (and shows
	 * the problem) even if the library exports nothing. */
	int (*alloc)(cw_buf_t *, size_t, cw_kind_t, int, cw_owner_t);
	int (*fr)(cw_buf_t);
	const cw_error_t *(*lasterr)(void);
	*(void **)&alloc = dlsym(RTLD_DEFAULT, "cw_alloc");
	*(void **)&fr = dlsym(RTLD_DEFAULT, "cw_free");
	*(void **)&lasterr = dlsym(RTLD_DEFAULT, "cw_last_error");
	if (alloc == NULL || fr == NULL || lasterr == NULL) {
		printf("ERROR: libcuwarden exports no cw_alloc/cw_free/"
		    "cw_last_error\n");
		return 99;
	}
	cw_buf_t pin = CW_BUF_NONE, man = CW_BUF_NONE;
	if (alloc(&pin, 5000, CW_PINNED, 0, 0) != CW_OK ||
	    alloc(&man, 70000, CW_MANAGED, 0, 0) != CW_OK) {
		printf("ERROR: cw_alloc failed: %s\n", lasterr()->message);
		return 99;
	}
	/* The host's own heap still works, and is glibc's. */
	char *p = malloc(100);
	if (p == NULL)
		return 99;
	memset(p, 1, 100);
	free(p);
	check_all("after the pools");
	if (fr(pin) != CW_OK || fr(man) != CW_OK) {
		printf("ERROR: cw_free failed\n");
		return 99;
	}
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
