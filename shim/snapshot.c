#include "preamble.h"
/*
 * snapshot.c -- snapshots on a signal (CUWARDEN_SNAPSHOT_SIGNAL;
 * doc/shim.md, "Snapshots"): the report of a running process, its live
 * allocations, written to "<CUWARDEN_REPORT>.snap.N" (report.h:
 * report_write_snapshot) each time the program gets the signal.
 *
 * Invariants: the signal handler only wakes the snapshot thread (one
 * write(2) to an eventfd, async-signal-safe); the thread, ours, started
 * at the first hooked call when the option is set, with every signal
 * blocked, writes the snapshot, never the handler.  Snapshots never touch
 * the report at exit (another file; shim_report_done untouched).  The
 * handler goes only where the signal's disposition is still the default
 * when the shim would install it: a program's own handler (or SIG_IGN)
 * is never replaced; one the program installs later replaces ours.
 * Requests that come while a snapshot is written make one more snapshot,
 * not one each (the eventfd counts them; one read takes them all).
 *
 * Fork: the thread does not exist in a child, and the engine is dead
 * there (no report of any kind) until exec: the child's handler gets the
 * default action back and the eventfd is closed (shim_snapshot_postfork_
 * child, from track_postfork_child), so a signal to the child neither
 * wakes the parent's thread nor is swallowed.  After exec the shim loads
 * afresh and starts its own.
 *
 * Locking: none.  snap_fd is read atomically by the handler.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine.h"
#include "signame.h"

static int snap_fd = -1;  /* the eventfd; -1: none (atomic) */
static int snap_sig;      /* the signal, 0: none */
static int snap_count;    /* snapshots taken (the thread's alone) */

static void
on_snapshot_signal(int sig)
{
	int saved = errno;
	int fd = __atomic_load_n(&snap_fd, __ATOMIC_RELAXED);
	uint64_t one = 1;

	(void)sig;
	if (fd >= 0)
		(void)!write(fd, &one, sizeof(one));
	errno = saved;
}

static void
snapshot_one(void)
{
	report_meta_t meta;
	pid_t owner = __atomic_load_n(&shim_pid, __ATOMIC_RELAXED);

	if (!track_alive() || (owner != 0 && getpid() != owner) ||
	    __atomic_load_n(&shim_report_done, __ATOMIC_ACQUIRE))
		return;
	meta.mode = shim_mode_name();
	meta.exit_how = "snapshot";
	meta.exit_status = ++snap_count;
	meta.timeline = NULL;
	if (report_write_snapshot(&meta))
		log_warn("snapshot %d could not be written (above)",
		    meta.exit_status);
}

static void *
snapshot_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	uint64_t n;

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
			continue; /* EAGAIN: taken already */
		snapshot_one();
	}
	log_warn("the snapshot thread stopped (errno %d): no more snapshots",
	    errno);
	return NULL;
}

/* Starts the thread, every signal blocked in it.  Returns true on
 * error. */
static bool
thread_start(int fd)
{
	pthread_attr_t attr;
	pthread_t tid;
	sigset_t all, old;
	int e;

	sigfillset(&all);
	if (pthread_attr_init(&attr) != 0)
		return true;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&tid, &attr, snapshot_main, (void *)(intptr_t)fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	errno = e;
	return e != 0;
}

static bool
is_default(const struct sigaction *sa)
{
	return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL;
}

void
track_snapshot_start(void)
{
	static bool done; /* atomic exchange */
	const char *v = options_get_str(OPT_SNAPSHOT_SIGNAL);
	pid_t owner = __atomic_load_n(&shim_pid, __ATOMIC_RELAXED);
	struct sigaction old, sa, mid;
	const char *why;
	int sig, fd;

	if (v == NULL || !track_alive() || (owner != 0 && getpid() != owner) ||
	    __atomic_exchange_n(&done, true, __ATOMIC_ACQ_REL))
		return;
	sig = signame_parse(v);
	if (sig == 0) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL=%s: not a signal (a name "
		    "such as USR2, or a number); no snapshots", v);
		return;
	}
	if ((why = signame_refused(sig)) != NULL) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL=%s: refused (%s); no "
		    "snapshots", v, why);
		return;
	}
	if (!report_env_set()) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL=%s: CUWARDEN_REPORT is "
		    "unset, so a snapshot has nowhere to go; no snapshots", v);
		return;
	}
	if (sigaction(sig, NULL, &old) != 0 || !is_default(&old)) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL=%s: the program has its own "
		    "disposition of signal %d (a handler, or ignored); not "
		    "replaced, no snapshots", v, sig);
		return;
	}
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL: no eventfd (errno %d); no "
		    "snapshots", errno);
		return;
	}
	if (thread_start(fd)) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL: the snapshot thread cannot "
		    "start (errno %d); no snapshots", errno);
		close(fd);
		return;
	}
	__atomic_store_n(&snap_fd, fd, __ATOMIC_RELEASE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_snapshot_signal;
	/* The program's system calls go on as if nothing came. */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &mid) != 0) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL=%s: no handler (errno %d); "
		    "no snapshots", v, errno);
		return;
	}
	/* The program installed its own meanwhile: it stays. */
	if (!is_default(&mid)) {
		sigaction(sig, &mid, NULL);
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL=%s: the program installed "
		    "its own handler meanwhile; not replaced, no snapshots", v);
		return;
	}
	__atomic_store_n(&snap_sig, sig, __ATOMIC_RELAXED);
	log_debug(1, "snapshots on signal %d (CUWARDEN_SNAPSHOT_SIGNAL=%s)",
	    sig, v);
}

void
shim_snapshot_postfork_child(void)
{
	int fd = __atomic_exchange_n(&snap_fd, -1, __ATOMIC_ACQ_REL);
	int sig = __atomic_load_n(&snap_sig, __ATOMIC_RELAXED);
	struct sigaction cur;

	if (fd >= 0)
		close(fd);
	/* Ours still: the default action again (the child's engine is dead:
	 * no snapshot would come). */
	if (sig != 0 && sigaction(sig, NULL, &cur) == 0 &&
	    !(cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_handler == on_snapshot_signal)
		signal(sig, SIG_DFL);
	__atomic_store_n(&snap_sig, 0, __ATOMIC_RELAXED);
}
