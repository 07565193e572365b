#include "preamble.h"
/*
 * end.c -- the process's end: the report at exit (a destructor, and
 * on_exit for the status), at _exit/_Exit (exported under glibc's
 * version), and on fatal signals still at their default, each under a
 * watchdog; and the shim's constructor (glibc's dlsym and _exit, the
 * engine's pid, absolute report paths).
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
#include <ucontext.h>
#include <unistd.h>

#include <cuda.h>

#include "driver.h"
#include "fork.h"
#include "log.h"
#include "mutex.h"
#include "options.h"
#include "report.h"
#include "signame.h"
#include "stats.h"
#include "track.h"


#include "preload.h"

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
	cw_mutex_t lock;
	pthread_cond_t cv;
	bool done;
	int status;
} wd = { CW_MUTEX_INITIALIZER(LOCK_RANK_EXIT_WATCH), PTHREAD_COND_INITIALIZER,
	false, 0 };

static void
wd_prefork(void)
{
	cw_mutex_prefork(&wd.lock);
}

static void
wd_postfork_parent(void)
{
	cw_mutex_postfork_parent(&wd.lock);
}

static void
wd_postfork_child(void)
{
	cw_mutex_postfork_child(&wd.lock);
}

static const fork_hooks_t wd_fork = { LOCK_RANK_EXIT_WATCH, wd_prefork,
	wd_postfork_parent, wd_postfork_child };

static void *
watchdog_main(void *arg)
{
	struct timespec end;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += EXIT_WATCHDOG_S;
	cw_mutex_lock(&wd.lock);
	while (!wd.done) {
		if (pthread_cond_clockwait(&wd.cv, &wd.lock.m, CLOCK_MONOTONIC,
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
	cw_mutex_unlock(&wd.lock);
	return NULL;
}

static void
exit_report(const char *how, int status, bool by_thread)
{
	bool was = preload_in_hook;
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
	preload_in_hook = true; /* driver calls made now pass through */
	track_write_report(how, status, was);
	preload_in_hook = was;
	if (watched) {
		cw_mutex_lock(&wd.lock);
		wd.done = true;
		pthread_cond_signal(&wd.cv);
		cw_mutex_unlock(&wd.lock);
	}
}

/* _exit and _Exit: the report, then the real call, which never returns
 * (the exit_group system call where there is none). */
static __attribute__((noreturn)) void
end_now(void (*real)(int), int status)
{
	exit_report("_exit", status, false);
	if (real != NULL)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

void
hook__exit(int status)
{
	end_now(preload_real_exit_fn, status);
}

void
hook__Exit(int status)
{
	end_now(preload_real_Exit_fn, status);
}

/* Fatal signals: a process that dies of one still leaves its report.
 * Handlers go only where the disposition is still the default, at the
 * first hooked call (a process that never uses CUDA is not touched); a
 * handler the program installs later replaces ours. */
static const int fatal_signals[] = { SIGNAME_FATAL };
/* Those sent by another process, blocked while a handler writes. */
static const int async_signals[] = {
	SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2,
};

/* The report, then the signal again by its default action: the process
 * dies of it.  Another thread may hold a lock the report needs: SIGALRM
 * ends a writer that cannot finish (the process was dying anyway). */
static void
report_and_die(int sig, bool reraise)
{
	preload_in_hook = true; /* driver calls made now pass through */
	signal(SIGALRM, SIG_DFL);
	alarm(EXIT_WATCHDOG_S);
	track_write_report("signal", sig, false);
	alarm(0);
	preload_in_hook = false;
	if (reraise) {
		/* From a wrapper's return: the async signals were kept blocked
		 * since the handler (on_fatal_signal), so that a second one
		 * could not cut the report; now they may come. */
		sigset_t set;
		sigemptyset(&set);
		for (size_t j = 0; j < CW_ARRAY_SIZE(async_signals); j++)
			sigaddset(&set, async_signals[j]);
		signal(sig, SIG_DFL);
		raise(sig);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	}
}

void
preload_signal_deferred(void)
{
	int sig = preload_deferred_signal;
	preload_deferred_signal = 0;
	report_and_die(sig, true);
}

static void
on_fatal_signal(int sig, siginfo_t *info, void *uc)
{
	int saved = errno;

	/* A fault returns to the faulting instruction, which faults again
	 * with its own context; a signal that was sent is raised again,
	 * and taken by its default action as the handler returns (it is
	 * blocked in here). */
	bool fault = info != NULL && info->si_code > 0 && (sig == SIGSEGV ||
	    sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
	/* A fault is taken again as the handler returns: by the default
	 * action from here on. */
	if (fault)
		signal(sig, SIG_DFL);
	if (preload_in_hook) {
		/* Inside a wrapper our locks may be held.  A sent signal is
		 * taken when the wrapper returns (one driver call; SIGALRM
		 * ends the process if that call does not return within 5 s);
		 * a fault there gets no report. */
		if (!fault) {
			preload_deferred_signal = sig;
			signal(SIGALRM, SIG_DFL);
			alarm(5);
			/* The handler's mask goes as it returns: keep the
			 * async signals blocked until the report is written
			 * (report_and_die), so that a second one waits. */
			if (uc != NULL) {
				sigset_t *m = &((ucontext_t *)uc)->uc_sigmask;
				for (size_t j = 0; j < CW_ARRAY_SIZE(async_signals);
				    j++)
					sigaddset(m, async_signals[j]);
			}
		}
		errno = saved;
		return;
	}
	report_and_die(sig, false);
	errno = saved;
	if (!fault) {
		/* Pending (it is blocked in here) until the handler returns,
		 * then taken by the default action, like a second one sent
		 * meanwhile. */
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

void
preload_signals_install(void)
{
	if (__atomic_exchange_n(&preload_signals_done, true, __ATOMIC_ACQ_REL))
		return;
	preload_count_calls = options_get(OPT_VERBOSE) >= 2;
	track_snapshot_start();
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
		 * No SA_RESETHAND: the kernel puts the default action back
		 * when it takes the signal but blocks it only once the
		 * handler's frame is built, and a second SIGTERM sent in
		 * between found the default action and killed the process
		 * before the handler ran (check_exit.sh's two SIGTERMs: 3% of
		 * runs under load).  The handler puts the default back itself
		 * once the report is written, and raises the signal again. */
		sa.sa_flags = SA_SIGINFO;
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
	track_see_through();
	(void)fork_add(&wd_fork); /* the first of eight: always fits */
	/* Relative report and log paths mean the directory the program
	 * started in, whatever it chdir()s to later. */
	if (track_alive())
		report_paths_init();
	if (real != NULL) {
		preload_real_exit_fn = (void (*)(int))real(RTLD_NEXT, "_exit");
		preload_real_Exit_fn = (void (*)(int))real(RTLD_NEXT, "_Exit");
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
	if (preload_count_calls)
		for (int i = 0; i < HOOK_COUNT; i++)
			if (preload_hook_calls[i] != 0)
				log_printf("hooked calls: %s %llu", preload_hook_names[i],
				    (unsigned long long)preload_hook_calls[i]);
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
	if (preload_gpa_unmatched != 0)
		log_debug(1, "%llu cuGetProcAddress answers were no exported "
		    "symbol", (unsigned long long)preload_gpa_unmatched);
	if (on_exit(late_report, NULL) != 0)
		exit_report("exit", -1, true);
}
