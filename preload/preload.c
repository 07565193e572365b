#include "preamble.h"
/*
 * preload.c -- libcuwarden_preload.so: the wrappers, nothing else.
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
 * first hooked call (the report, then the default action).
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

#define UNPAREN(...) __VA_ARGS__

/* ------------------------------------------------------------ the table */

enum {
#define HOOK(sym, fam, params, args) HOOK_ID_##sym,
#define GPA(sym) HOOK_ID_##sym,
#include "hooks.def"
#undef HOOK
#undef GPA
	HOOK_COUNT
};

static const char *const hook_names[HOOK_COUNT] = {
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
CW_EXPORT CUresult hook_cuGetProcAddress(const char *symbol, void **pfn,
    int cudaVersion, cuuint64_t flags) __asm__("cuGetProcAddress");
CW_EXPORT CUresult hook_cuGetProcAddress_v2(const char *symbol, void **pfn,
    int cudaVersion, cuuint64_t flags,
    CUdriverProcAddressQueryResult *symbolStatus)
    __asm__("cuGetProcAddress_v2");

static void *const hook_addrs[HOOK_COUNT] = {
#define HOOK(sym, fam, params, args) (void *)hook_##sym,
#define GPA(sym) (void *)hook_##sym,
#include "hooks.def"
#undef HOOK
#undef GPA
};

/* The driver's own entry point of each hooked symbol (NULL: not
 * exported by this driver, so not hooked). */
static void *reals[HOOK_COUNT];
static bool reals_ready;        /* acquire/release */
static pthread_once_t reals_once = PTHREAD_ONCE_INIT;

static CW_TLS bool in_hook;

/* A fatal signal sent while this thread was inside a wrapper (our locks
 * may be held): handled when the wrapper returns (signal_deferred). */
static CW_TLS volatile sig_atomic_t deferred_signal;
static void signal_deferred(void);

/* Leaving a wrapper: in_hook cleared, then a deferred signal taken. */
#define HOOK_LEAVE(was) \
	do { \
		in_hook = (was); \
		__atomic_signal_fence(__ATOMIC_SEQ_CST); \
		if (unlikely(deferred_signal != 0) && !in_hook) \
			signal_deferred(); \
	} while (0)

static void signals_install(void);
static bool signals_done; /* atomic */

/* CUWARDEN_VERBOSE >= 2: every hooked call is counted, and the counts are
 * printed at exit (which driver calls the program made through us). */
static bool count_calls;
static uint64_t hook_calls[HOOK_COUNT];

/* glibc's dlsym and _exit/_Exit, found at load (or earlier, by the
 * trampoline, when another library's constructor calls dlsym first). */
typedef void *(*dlsym_fn)(void *, const char *);
extern dlsym_fn cw_real_dlsym_ptr; /* the trampoline reads it */
dlsym_fn cw_real_dlsym_ptr;
static void (*real_exit_fn)(int);
static void (*real_Exit_fn)(int);
static uint64_t gpa_unmatched;

/* Hidden helpers the trampoline reaches. */
void *cw_dlsym_resolve(void) __attribute__((visibility("hidden")));
int cw_dlsym_wants(const char *name) __attribute__((visibility("hidden")));
void *cw_dlsym_slow(void *handle, const char *name)
    __attribute__((visibility("hidden")));

void *
cw_dlsym_resolve(void)
{
	dlsym_fn f = __atomic_load_n(&cw_real_dlsym_ptr, __ATOMIC_ACQUIRE);

	if (f != NULL)
		return (void *)f;
	f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (f == NULL)
		f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	if (f == NULL)
		f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
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
	void *h = track_driver_handle();
	for (int i = 0; i < HOOK_COUNT; i++) {
		reals[i] = h != NULL ? driver_real_dlsym(h, hook_names[i]) :
		    NULL;
		if (reals[i] != NULL)
			n++;
	}
	track_set_hooked_entry_points(n);
	__atomic_store_n(&reals_ready, true, __ATOMIC_RELEASE);
}

static inline void *
real_of(int id)
{
	if (unlikely(!__atomic_load_n(&reals_ready, __ATOMIC_ACQUIRE)))
		pthread_once(&reals_once, resolve_all);
	return reals[id];
}

static CUresult
missing(const char *sym)
{
	log_error("%s called, but the driver does not export it", sym);
	return CUDA_ERROR_NOT_FOUND;
}

/* ------------------------------------------------------------ wrappers */

#define HOOK(sym, fam, params, args) \
	CUresult \
	hook_##sym params \
	{ \
		void *real = real_of(HOOK_ID_##sym); \
		CUresult r; \
		if (unlikely(real == NULL)) \
			return missing(#sym); \
		if (unlikely(in_hook) || unlikely(!track_alive())) \
			return ((CUresult (*) params)real) args; \
		in_hook = true; \
		track_hook_ran(); \
		if (unlikely(!__atomic_load_n(&signals_done, \
		    __ATOMIC_RELAXED))) \
			signals_install(); \
		if (unlikely(count_calls)) \
			__atomic_fetch_add(&hook_calls[HOOK_ID_##sym], 1, \
			    __ATOMIC_RELAXED); \
		r = track_##fam(real, #sym, UNPAREN args); \
		HOOK_LEAVE(false); \
		return r; \
	}
#define GPA(sym)
#include "hooks.def"
#undef HOOK
#undef GPA

/* ------------------------------------------------------------ lookups */

/* Our wrapper for a driver pointer, or NULL when we hook no export at
 * that address. */
static void *
hook_for_real(void *p)
{
	for (int i = 0; i < HOOK_COUNT; i++)
		if (reals[i] == p)
			return hook_addrs[i];
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
		__atomic_fetch_add(&gpa_unmatched, 1, __ATOMIC_RELAXED);
		log_debug(2, "cuGetProcAddress answered %p, which is no "
		    "exported symbol", *pfn);
	}
}

CUresult
hook_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
    cuuint64_t flags)
{
	typedef CUresult (*fn_t)(const char *, void **, int, cuuint64_t);
	void *real = real_of(HOOK_ID_cuGetProcAddress);

	if (unlikely(real == NULL))
		return missing("cuGetProcAddress");
	/* Guarded: a driver that looks itself up with dlsym meanwhile gets
	 * its own pointers (HAMi-core PR #326). */
	bool was = in_hook;
	in_hook = true;
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
	void *real = real_of(HOOK_ID_cuGetProcAddress_v2);

	if (unlikely(real == NULL))
		return missing("cuGetProcAddress_v2");
	bool was = in_hook;
	in_hook = true;
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
		if (strcmp(name, hook_names[i]) == 0)
			return i;
	return -1;
}

/* True when p is the driver's export of hooked symbol id.  Before the
 * table is resolved (cudart's very first lookup), without initialising
 * anything: p must be the symbol itself in an object named libcuda.so*. */
static bool
is_driver_export(int id, void *p)
{
	if (__atomic_load_n(&reals_ready, __ATOMIC_ACQUIRE))
		return reals[id] == p;
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
	if (r == NULL || in_hook || !track_alive())
		return r;
	int id = cw_dlsym_wants(name);
	if (id < 0 || !is_driver_export(id, r))
		return r;
	STATS_INC(dlsym_redirects);
	return hook_addrs[id];
}

#if defined(__x86_64__)
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
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	movq %rsi, %rdi\n"
	"	call cw_dlsym_wants\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testl %eax, %eax\n"
	"	js 4f\n"
	"	jmp cw_dlsym_slow\n"
	"4:	movq cw_real_dlsym_ptr(%rip), %rax\n"
	"2:	jmp *%rax\n"
	"3:	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call cw_dlsym_resolve\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
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

/* ------------------------------------------------------------ exit */

CW_EXPORT void hook__exit(int status) __asm__("_exit")
    __attribute__((noreturn));
CW_EXPORT void hook__Exit(int status) __asm__("_Exit")
    __attribute__((noreturn));

/* The report at exit, under a watchdog: a writer that cannot finish (a
 * descriptor that blocks after all, a lock another thread never lets go)
 * ends the process, with the status it was exiting with, after
 * EXIT_WATCHDOG_S seconds rather than hang it.  At exit() the watchdog is
 * a thread of ours, not alarm(): exit handlers may still run after ours,
 * and the program's SIGALRM disposition and interval timer stay its own.
 * At _exit() (often called from a signal handler or a child, where
 * pthread_create is no safe call) it is alarm(), whose disposition no
 * longer matters: nothing of the program runs after.  A thread inside a
 * wrapper (an exit from a signal handler that interrupted one) may hold
 * our locks: the report is written without waiting for them
 * (track_write_report's inside), and no thread is started there. */
#define EXIT_WATCHDOG_S 10

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool done;
	int status;
} wd = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0 };

static void *
watchdog_main(void *arg)
{
	struct timespec end;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += EXIT_WATCHDOG_S;
	pthread_mutex_lock(&wd.lock);
	while (!wd.done) {
		if (pthread_cond_clockwait(&wd.cv, &wd.lock, CLOCK_MONOTONIC,
		    &end) == ETIMEDOUT && !wd.done) {
			/* Said only if stderr takes it at once: it may be
			 * the very pipe the report is stuck on. */
			static const char msg[] = "cuwarden: the report could "
			    "not be written in time; the process ends\n";
			struct pollfd pfd = { STDERR_FILENO, POLLOUT, 0 };
			if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT))
				(void)!write(STDERR_FILENO, msg,
				    sizeof(msg) - 1);
			syscall(SYS_exit_group, wd.status);
		}
	}
	pthread_mutex_unlock(&wd.lock);
	return NULL;
}

static void
exit_report(const char *how, int status, bool by_thread)
{
	bool was = in_hook;
	bool watched = false;
	pthread_t t;

	if (!track_report_due())
		return;
	if (!by_thread) {
		signal(SIGALRM, SIG_DFL);
		alarm(EXIT_WATCHDOG_S);
	} else if (!was) {
		pthread_attr_t a;
		wd.status = status;
		if (pthread_attr_init(&a) == 0) {
			pthread_attr_setdetachstate(&a,
			    PTHREAD_CREATE_DETACHED);
			watched = pthread_create(&t, &a, watchdog_main,
			    NULL) == 0;
			pthread_attr_destroy(&a);
		}
	}
	in_hook = true; /* driver calls made now pass through */
	track_write_report(how, status, was);
	in_hook = was;
	if (watched) {
		pthread_mutex_lock(&wd.lock);
		wd.done = true;
		pthread_cond_signal(&wd.cv);
		pthread_mutex_unlock(&wd.lock);
	}
}

void
hook__exit(int status)
{
	exit_report("_exit", status, false);
	if (real_exit_fn != NULL)
		real_exit_fn(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

void
hook__Exit(int status)
{
	exit_report("_exit", status, false);
	if (real_Exit_fn != NULL)
		real_Exit_fn(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

/* ------------------------------------------------------------ signals */

/* Fatal signals: a process that dies of one still leaves its report.
 * Handlers go only where the disposition is still the default, at the
 * first hooked call (a process that never uses CUDA is not touched); a
 * handler the program installs later replaces ours. */
static const int fatal_signals[] = {
	SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT, SIGHUP,
	SIGQUIT,
};
/* Those sent by another process, blocked while a handler writes. */
static const int async_signals[] = {
	SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2,
};

/* The report, then the signal again (its default action, put back by
 * SA_RESETHAND): the process dies of it.  Another thread may hold a lock
 * the report needs: SIGALRM ends a writer that cannot finish (the process
 * was dying anyway). */
static void
report_and_die(int sig, bool reraise)
{
	in_hook = true; /* driver calls made now pass through */
	signal(SIGALRM, SIG_DFL);
	alarm(EXIT_WATCHDOG_S);
	track_write_report("signal", sig, false);
	alarm(0);
	in_hook = false;
	if (reraise) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

static void
signal_deferred(void)
{
	int sig = deferred_signal;
	deferred_signal = 0;
	report_and_die(sig, true);
}

static void
on_fatal_signal(int sig, siginfo_t *info, void *uc)
{
	int saved = errno;

	(void)uc;
	/* A fault returns to the faulting instruction, which faults again
	 * with its own context; a signal that was sent is raised again,
	 * and taken by its default action as the handler returns (it is
	 * blocked in here). */
	bool fault = info != NULL && info->si_code > 0 && (sig == SIGSEGV ||
	    sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
	if (in_hook) {
		/* Inside a wrapper our locks may be held.  A sent signal is
		 * taken when the wrapper returns (one driver call; SIGALRM
		 * ends the process if that call does not return within 5 s);
		 * a fault there gets no report. */
		if (!fault) {
			deferred_signal = sig;
			signal(SIGALRM, SIG_DFL);
			alarm(5);
		}
		errno = saved;
		return;
	}
	report_and_die(sig, false);
	errno = saved;
	if (!fault)
		raise(sig);
}

static void
signals_install(void)
{
	if (__atomic_exchange_n(&signals_done, true, __ATOMIC_ACQ_REL))
		return;
	count_calls = options_get(OPT_VERBOSE) >= 2;
	if (!options_get_bool(OPT_SIGNALS))
		return;
	for (size_t i = 0; i < CW_ARRAY_SIZE(fatal_signals); i++) {
		struct sigaction old, sa;
		int sig = fatal_signals[i];
		if (sigaction(sig, NULL, &old) != 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_fatal_signal;
		/* The signals a second sender sends (timeout(1) signals the
		 * whole group, cuwarden-audit forwards SIGTERM too) wait until
		 * the report is written: a second SIGTERM must not cut it.
		 * The signal itself is raised again at the end and taken when
		 * the handler returns (SA_RESETHAND: by its default action). */
		sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		for (size_t j = 0; j < CW_ARRAY_SIZE(async_signals); j++)
			sigaddset(&sa.sa_mask, async_signals[j]);
		/* Between the look and now the program may have installed
		 * its own: put it back if so (a race with a program that
		 * changes dispositions while CUDA starts; best effort). */
		struct sigaction mid;
		if (sigaction(sig, &sa, &mid) == 0 &&
		    ((mid.sa_flags & SA_SIGINFO) || mid.sa_handler != SIG_DFL))
			sigaction(sig, &mid, NULL);
	}
}

__attribute__((constructor)) static void
shim_load(void)
{
	dlsym_fn real = (dlsym_fn)cw_dlsym_resolve();

	track_loaded();
	/* Relative report and log paths mean the directory the program
	 * started in, whatever it chdir()s to later. */
	if (track_alive())
		report_paths_init();
	if (real != NULL) {
		real_exit_fn = (void (*)(int))real(RTLD_NEXT, "_exit");
		real_Exit_fn = (void (*)(int))real(RTLD_NEXT, "_Exit");
	}
}

/* exit's status reaches on_exit handlers (glibc passes it to every
 * handler of that kind); an on_exit handler belongs to no DSO, so no
 * object's __cxa_finalize runs it early. */
static void
late_report(int status, void *arg)
{
	(void)arg;
	exit_report("exit", status, true);
	if (count_calls)
		for (int i = 0; i < HOOK_COUNT; i++)
			if (hook_calls[i] != 0)
				log_printf("hooked calls: %s %llu", hook_names[i],
				    (unsigned long long)hook_calls[i]);
}

/*
 * glibc finalizes a preloaded object before the libraries the program
 * needs, whose ELF destructors and C++ static destructors (and atexit
 * handlers registered by their constructors) may still free CUDA memory.
 * So the report is not written here: a handler registered now, with no
 * DSO, runs after _dl_fini has finalized every object, last of all.
 */
__attribute__((destructor)) static void
shim_unload(void)
{
	if (gpa_unmatched != 0)
		log_debug(1, "%llu cuGetProcAddress answers were no exported "
		    "symbol", (unsigned long long)gpa_unmatched);
	if (on_exit(late_report, NULL) != 0)
		exit_report("exit", -1, true);
}
