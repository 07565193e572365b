/*
 * preload.h -- what the files of preload/ share.  preload/ is
 * interposition only: wrappers.c (the generated wrappers and their table),
 * lookup.c (dlsym and cuGetProcAddress redirection), end.c (exit, _exit,
 * fatal signals, load and unload).  Everything here is hidden; preload_*
 * names cross files.
 *
 * Three ways reach the driver, and each reaches a wrapper here:
 *   - a program linked with -lcuda calls the exported names (cuMemAlloc_v2,
 *     ...) through its PLT: the wrappers are exported under those names;
 *   - dlsym(libcuda, name): our dlsym resolves with the real one and, only
 *     when the answer IS the driver's export of a symbol we hook, returns
 *     our wrapper of that exact symbol (identity, never by name alone);
 *   - cuGetProcAddress[_v2] (cudart, PyTorch, CuPy, JAX): our wrappers
 *     call the driver's with unchanged arguments and swap the pointer it
 *     answers for our wrapper of that exact export (a reverse map built
 *     from the driver's own exports; no version tables of our own).  The
 *     self-query "cuGetProcAddress" answers our wrappers the same way.
 * Plus _exit/_Exit (the report is written first), a destructor that
 * has the report written at exit, after every library's destructors, and
 * handlers for fatal signals still at their default, installed at the
 * first hooked call (the report, then the default action); the same call
 * starts the engine's snapshots (track_snapshot_start, shim/snapshot.c).
 *
 * Every driver wrapper is generated from hooks.def: lazy resolution of
 * the real entry points, a thread-local re-entrancy guard (a call made
 * while the thread is already inside a wrapper goes straight to the
 * driver), then the engine (shim/) does the work and returns the driver's
 * answer.
 *
 * dlsym is an x86-64 trampoline: anything but a hooked name (and every
 * RTLD_NEXT lookup) is a tail jump to glibc's dlsym, so glibc sees the
 * caller's return address (RTLD_NEXT and RTLD_DEFAULT resolve relative to
 * it).  Elsewhere a C fallback (caller not preserved).
 *
 * At load: glibc's dlsym and _exit are found, the engine records its pid
 * (track_loaded: a vfork child is told apart by it; a setuid or setgid
 * process turns the engine off) and relative report and log paths are
 * made absolute (report_paths_init).  Nothing else: a process that never
 * uses CUDA gets no report and never loads libcuda.
 *
 * Locking: none of our own (pthread_once for the resolution).
 */
#ifndef CUWARDEN_PRELOAD_H
#define CUWARDEN_PRELOAD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#define UNPAREN(...) __VA_ARGS__

enum {
#define HOOK(sym, fam, params, args) HOOK_ID_##sym,
#define GPA(sym) HOOK_ID_##sym,
#include "hooks.def"
#undef HOOK
#undef GPA
	HOOK_COUNT
};

extern const char *const preload_hook_names[HOOK_COUNT];
extern void *const preload_hook_addrs[HOOK_COUNT];
/* The driver's own entry point of each hooked symbol (NULL: not exported
 * by this driver, so not hooked); valid once preload_reals_ready. */
extern void *preload_reals[HOOK_COUNT];
extern bool preload_reals_ready; /* acquire/release */
void *preload_real(int id);
CUresult preload_missing(const char *sym);

extern CW_TLS bool preload_in_hook;
/* A fatal signal sent while this thread was inside a wrapper (our locks
 * may be held): handled when the wrapper returns. */
extern CW_TLS volatile sig_atomic_t preload_deferred_signal;
void preload_signal_deferred(void);
void preload_signals_install(void);
extern bool preload_signals_done; /* atomic */
/* Leaving a wrapper: preload_in_hook cleared, then a deferred signal
 * taken (preload_signal_deferred). */
#define HOOK_LEAVE(was) \
	do { \
		preload_in_hook = (was); \
		__atomic_signal_fence(__ATOMIC_SEQ_CST); \
		if (unlikely(preload_deferred_signal != 0) && !preload_in_hook) \
			preload_signal_deferred(); \
	} while (0)

/* CUWARDEN_VERBOSE >= 2: every hooked call counted, printed at exit. */
extern bool preload_count_calls;
extern uint64_t preload_hook_calls[HOOK_COUNT];
extern uint64_t preload_gpa_unmatched;

/* glibc's dlsym and _exit/_Exit, found at load (or earlier, by the
 * trampoline, when another library's constructor calls dlsym first). */
typedef void *(*dlsym_fn)(void *, const char *);
extern dlsym_fn cw_real_dlsym_ptr; /* the trampoline reads it */
extern void (*preload_real_exit_fn)(int);
extern void (*preload_real_Exit_fn)(int);

/* Hidden helpers the trampoline reaches. */
void *cw_dlsym_resolve(void) __attribute__((visibility("hidden")));
int cw_dlsym_wants(const char *name) __attribute__((visibility("hidden")));
void *cw_dlsym_slow(void *handle, const char *name)
    __attribute__((visibility("hidden")));

/* The cuGetProcAddress wrappers (lookup.c), in the table (wrappers.c). */
CW_EXPORT CUresult hook_cuGetProcAddress(const char *symbol, void **pfn,
    int cudaVersion, cuuint64_t flags) __asm__("cuGetProcAddress");
CW_EXPORT CUresult hook_cuGetProcAddress_v2(const char *symbol, void **pfn,
    int cudaVersion, cuuint64_t flags,
    CUdriverProcAddressQueryResult *symbolStatus)
    __asm__("cuGetProcAddress_v2");

#endif /* CUWARDEN_PRELOAD_H */
