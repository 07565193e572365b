#include "preamble.h"
/*
 * lookup.c -- how programs that look the driver up reach our wrappers:
 * cuGetProcAddress[_v2] answers are swapped for our wrapper of that exact
 * export, and dlsym is an x86-64 trampoline that tail-jumps to glibc's
 * for anything but a hooked name (glibc sees the caller's return address:
 * RTLD_NEXT resolves relative to it); elsewhere a C fallback.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "driver.h"
#include "log.h"
#include "options.h"
#include "report.h"
#include "stats.h"
#include "track.h"


#include "preload.h"

/* Our wrapper for a driver pointer, or NULL when we hook no export at
 * that address. */
static void *
hook_for_real(void *p)
{
	for (int i = 0; i < HOOK_COUNT; i++)
		if (preload_reals[i] == p)
			return preload_hook_addrs[i];
	return NULL;
}

/* Swaps *pfn for our wrapper when the driver answered one of the
 * exports we hook. */
static void
gpa_redirect(CUresult r, void **pfn)
{
	if (!track_alive())
		return;
	track_hook_ran();
	STATS_INC(gpa_lookups);
	if (r != CUDA_SUCCESS || pfn == NULL || *pfn == NULL)
		return;
	void *hook = hook_for_real(*pfn);
	if (hook != NULL) {
		*pfn = hook;
		STATS_INC(gpa_redirects);
		return;
	}
	/* Not one of ours: is it an export at all?  (0 on driver 580; a
	 * future driver handing out internal pointers shows up here.) */
	Dl_info info;
	if (dladdr(*pfn, &info) == 0 || info.dli_saddr != *pfn) {
		__atomic_fetch_add(&preload_gpa_unmatched, 1, __ATOMIC_RELAXED);
		log_debug(2, "cuGetProcAddress answered %p, which is no "
		    "exported symbol", *pfn);
	}
}

CUresult
hook_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags)
{
	typedef CUresult (*fn_t)(const char *, void **, int, cuuint64_t);
	void *real = preload_real(HOOK_ID_cuGetProcAddress);

	if (unlikely(real == NULL))
		return preload_missing("cuGetProcAddress");
	/* Guarded: a driver that looks itself up with dlsym meanwhile gets
	 * its own pointers (HAMi-core PR #326). */
	bool was = preload_in_hook;
	preload_in_hook = true;
	CUresult r = ((fn_t)real)(symbol, pfn, cudaVersion, flags);
	HOOK_LEAVE(was);
	if (!was)
		gpa_redirect(r, pfn);
	return r;
}

CUresult
hook_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	typedef CUresult (*fn_t)(const char *, void **, int, cuuint64_t,
	    CUdriverProcAddressQueryResult *);
	void *real = preload_real(HOOK_ID_cuGetProcAddress_v2);

	if (unlikely(real == NULL))
		return preload_missing("cuGetProcAddress_v2");
	bool was = preload_in_hook;
	preload_in_hook = true;
	CUresult r = ((fn_t)real)(symbol, pfn, cudaVersion, flags,
	    symbolStatus);
	HOOK_LEAVE(was);
	if (!was)
		gpa_redirect(r, pfn);
	return r;
}

/* The index of a hooked name, or -1.  Called by the trampoline for names
 * starting with "cu" only. */
int
cw_dlsym_wants(const char *name)
{
	for (int i = 0; i < HOOK_COUNT; i++)
		if (strcmp(name, preload_hook_names[i]) == 0)
			return i;
	return -1;
}

/* True when p is the driver's export of hooked symbol id.  Before the
 * table is resolved (cudart's very first lookup), without initialising
 * anything: p must be the symbol itself in an object named libcuda.so*. */
static bool
is_driver_export(int id, void *p)
{
	if (__atomic_load_n(&preload_reals_ready, __ATOMIC_ACQUIRE))
		return preload_reals[id] == p;
	Dl_info info;
	if (dladdr(p, &info) == 0 || info.dli_saddr != p ||
	    info.dli_fname == NULL)
		return false;
	const char *base = strrchr(info.dli_fname, '/');
	base = base != NULL ? base + 1 : info.dli_fname;
	return strncmp(base, "libcuda.so", 10) == 0;
}

/* A lookup of a hooked name (never RTLD_NEXT): resolve with the real
 * dlsym, redirect by identity. */
void *
cw_dlsym_slow(void *handle, const char *name)
{
	dlsym_fn real = (dlsym_fn)cw_dlsym_resolve();

	if (real == NULL)
		return NULL;
	void *r = real(handle, name);
	if (r == NULL || preload_in_hook || !track_alive())
		return r;
	int id = cw_dlsym_wants(name);
	if (id < 0 || !is_driver_export(id, r))
		return r;
	STATS_INC(dlsym_redirects);
	return preload_hook_addrs[id];
}

#if defined(__x86_64__)
/* Around the stub's calls into C: handle and name (rdi, rsi) kept, the
 * stack 16-byte aligned, and unwind information that says so. */
#define SAVE_ARGS \
	"	pushq %rdi\n" \
	"	.cfi_adjust_cfa_offset 8\n" \
	"	pushq %rsi\n" \
	"	.cfi_adjust_cfa_offset 8\n" \
	"	subq $8, %rsp\n" \
	"	.cfi_adjust_cfa_offset 8\n"
#define RESTORE_ARGS \
	"	addq $8, %rsp\n" \
	"	.cfi_adjust_cfa_offset -8\n" \
	"	popq %rsi\n" \
	"	.cfi_adjust_cfa_offset -8\n" \
	"	popq %rdi\n" \
	"	.cfi_adjust_cfa_offset -8\n"

/*
 * dlsym(handle, name), exported as dlsym@@GLIBC_2.34 and
 * dlsym@GLIBC_2.2.5.  Tail-jumps to glibc's dlsym unless handle is not
 * RTLD_NEXT and name is one we hook.
 */
__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl cw_dlsym_234\n"
	"	.globl cw_dlsym_225\n"
	"	.type cw_dlsym_234, @function\n"
	"	.type cw_dlsym_225, @function\n"
	"cw_dlsym_234:\n"
	"cw_dlsym_225:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"                    /* an indirect-branch target (CET) */
	"	movq cw_real_dlsym_ptr(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 3f\n"
	"1:	cmpq $-1, %rdi\n"              /* RTLD_NEXT */
	"	je 2f\n"
	"	testq %rsi, %rsi\n"
	"	jz 2f\n"
	"	cmpb $0x63, (%rsi)\n"          /* 'c' */
	"	jne 2f\n"
	"	cmpb $0x75, 1(%rsi)\n"         /* 'u' */
	"	jne 2f\n"
	SAVE_ARGS
	"	movq %rsi, %rdi\n"
	"	call cw_dlsym_wants\n"
	RESTORE_ARGS
	"	testl %eax, %eax\n"
	"	js 4f\n"
	"	jmp cw_dlsym_slow\n"
	"4:	movq cw_real_dlsym_ptr(%rip), %rax\n"
	"2:	jmp *%rax\n"
	"3:\n"
	SAVE_ARGS
	"	call cw_dlsym_resolve\n"
	RESTORE_ARGS
	"	testq %rax, %rax\n"
	"	jnz 1b\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size cw_dlsym_234, .-cw_dlsym_234\n"
	"	.size cw_dlsym_225, .-cw_dlsym_225\n"
	"	.symver cw_dlsym_234, dlsym@@GLIBC_2.34\n"
	"	.symver cw_dlsym_225, dlsym@GLIBC_2.2.5\n");
#else
/* C fallback: the shim becomes the caller of glibc's dlsym. */
CW_EXPORT void *dlsym(void *handle, const char *name);

void *
dlsym(void *handle, const char *name)
{
	if (handle != RTLD_NEXT && name != NULL && name[0] == 'c' &&
	    name[1] == 'u' && cw_dlsym_wants(name) >= 0)
		return cw_dlsym_slow(handle, name);
	dlsym_fn real = (dlsym_fn)cw_dlsym_resolve();
	return real != NULL ? real(handle, name) : NULL;
}
#endif
