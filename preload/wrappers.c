#include "preamble.h"
/*
 * wrappers.c -- the driver wrappers, generated from shim/hooks.def, and the
 * table they share with lookup.c: each hooked symbol's name, our wrapper,
 * and the driver's own entry point (resolved once, lazily: NULL when the
 * driver does not export it).  A wrapper guards against re-entry (a call
 * made while the thread is already inside one goes straight to the
 * driver), then the engine (shim/) does the work and returns the driver's
 * answer.  Locking: none of our own (pthread_once for the resolution).
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

const char *const preload_hook_names[HOOK_COUNT] = {
#define HOOK(sym, fam, params, args) #sym,
#define GPA(sym) #sym,
#include "hooks.def"
#undef HOOK
#undef GPA
};

/* The wrappers, declared under their exported names. */
#define HOOK(sym, fam, params, args) \
	CW_EXPORT CUresult hook_##sym params __asm__(#sym);
#define GPA(sym)
#include "hooks.def"
#undef HOOK
#undef GPA

void *const preload_hook_addrs[HOOK_COUNT] = {
#define HOOK(sym, fam, params, args) (void *)hook_##sym,
#define GPA(sym) (void *)hook_##sym,
#include "hooks.def"
#undef HOOK
#undef GPA
};

/* The driver's own entry point of each hooked symbol (NULL: not
 * exported by this driver, so not hooked). */
void *preload_reals[HOOK_COUNT];
bool preload_reals_ready;        /* acquire/release */
static pthread_once_t reals_once = PTHREAD_ONCE_INIT;

CW_TLS bool preload_in_hook;

/* A fatal signal sent while this thread was inside a wrapper (our locks
 * may be held): handled when the wrapper returns
 * (preload_signal_deferred). */
CW_TLS volatile sig_atomic_t preload_deferred_signal;

bool preload_signals_done; /* atomic */

/* CUWARDEN_VERBOSE >= 2: every hooked call is counted, and the counts are
 * printed at exit (which driver calls the program made through us). */
bool preload_count_calls;
uint64_t preload_hook_calls[HOOK_COUNT];

/* glibc's dlsym and _exit/_Exit, found at load (or earlier, by the
 * trampoline, when another library's constructor calls dlsym first). */
dlsym_fn cw_real_dlsym_ptr;
void (*preload_real_exit_fn)(int);
void (*preload_real_Exit_fn)(int);
uint64_t preload_gpa_unmatched;


CW_NO_SANITIZE void *
cw_dlsym_resolve(void)
{
	dlsym_fn f = __atomic_load_n(&cw_real_dlsym_ptr, __ATOMIC_ACQUIRE);

	if (f != NULL)
		return (void *)f;
	f = (dlsym_fn)driver_dlsym_fn();
	__atomic_store_n(&cw_real_dlsym_ptr, f, __ATOMIC_RELEASE);
	return (void *)f;
}

static void
resolve_all(void)
{
	uint64_t n = 0;

	/* Dead (setuid, fork child): the driver's entry points are still
	 * needed to pass calls through, but nothing of ours runs. */
	if (track_alive())
		track_init();
	void *h = driver_open();
	for (int i = 0; i < HOOK_COUNT; i++) {
		preload_reals[i] = h != NULL ? driver_real_dlsym(h, preload_hook_names[i]) :
		    NULL;
		if (preload_reals[i] != NULL)
			n++;
	}
	track_set_hooked_entry_points(n);
	__atomic_store_n(&preload_reals_ready, true, __ATOMIC_RELEASE);
}

static inline void *
real_of(int id)
{
	if (unlikely(!__atomic_load_n(&preload_reals_ready, __ATOMIC_ACQUIRE)))
		pthread_once(&reals_once, resolve_all);
	return preload_reals[id];
}

/* real_of, for lookup.c (not on a wrapper's path). */
void *
preload_real(int id)
{
	return real_of(id);
}

CUresult
preload_missing(const char *sym)
{
	log_error("%s called, but the driver does not export it", sym);
	return CUDA_ERROR_NOT_FOUND;
}

#define HOOK(sym, fam, params, args) \
	CUresult \
	hook_##sym params \
	{ \
		void *real = real_of(HOOK_ID_##sym); \
		CUresult r; \
		if (unlikely(real == NULL)) \
			return preload_missing(#sym); \
		if (unlikely(preload_in_hook) || unlikely(!track_alive())) \
			return ((CUresult (*) params)real) args; \
		preload_in_hook = true; \
		track_hook_ran(); \
		if (unlikely(!__atomic_load_n(&preload_signals_done, \
		    __ATOMIC_RELAXED))) \
			preload_signals_install(); \
		if (unlikely(preload_count_calls)) \
			__atomic_fetch_add(&preload_hook_calls[HOOK_ID_##sym], 1, \
			    __ATOMIC_RELAXED); \
		r = track_##fam(real, #sym, UNPAREN args); \
		HOOK_LEAVE(false); \
		return r; \
	}
#define GPA(sym)
#include "hooks.def"
#undef HOOK
#undef GPA
