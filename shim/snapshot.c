#include "preamble.h"
/*
 * snapshot.c -- snapshots on a signal (CUWARDEN_SNAPSHOT_SIGNAL) or a
 * request written to a control FIFO (CUWARDEN_CONTROL; doc/shim.md,
 * "Snapshots"): the report of a running process, its live allocations,
 * written to "<CUWARDEN_REPORT>.snap.N" (report.h: report_write_snapshot)
 * each time the program gets the signal or a "snapshot" line.
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
 * The control FIFO: made (0600) or taken over (a FIFO of ours, mode 0600,
 * that nobody reads: an earlier process's of the same name; one that has
 * a reader, or whose flock another process holds, is another process's,
 * refused) at the first hooked call, opened
 * for reading and, by the thread's own hand, for writing too, so that a
 * writer that comes and goes never leaves it hung up (poll would then
 * report POLLHUP at once, forever: a busy loop).  The same thread sleeps
 * in poll(2) on the eventfd and the FIFO; nothing runs on the program's
 * threads.  The FIFO is removed at exit by the process that made it.
 *
 * Fork: the thread does not exist in a child, and the engine is dead
 * there (no report of any kind) until exec: the child's handler gets the
 * default action back and the eventfd and the FIFO are closed
 * (shim_snapshot_postfork_child, from track_postfork_child), so a signal
 * to the child neither wakes the parent's thread nor is swallowed, and the
 * parent alone reads the FIFO.  After exec the shim loads
 * afresh and starts its own.
 *
 * Locking: none.  snap_fd is read atomically by the handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "outfile.h"
#include "signame.h"

static int snap_fd = -1;  /* the eventfd; -1: none (atomic) */
static int snap_sig;      /* the signal, 0: none */
static int snap_count;    /* snapshots taken (the thread's alone) */

/* The control FIFO: its read and write ends (-1: none; atomic), its
 * path, and the process that made it (removes it at exit). */
static int ctl_rfd = -1, ctl_wfd = -1;
static char ctl_path[PATH_MAX];
static pid_t ctl_pid;

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
	/* The timeline so far, copied before the live set is read: every
	 * event in it comes before the report's moment. */
	meta.timeline = shim_timeline_snapshot(meta.exit_status);
	if (report_write_snapshot(&meta))
		log_warn("snapshot %d could not be written (above)",
		    meta.exit_status);
}

/* What the control FIFO holds now, read to its end: true when a line
 * says "snapshot".  A line is one write of a writer (a write of up to
 * PIPE_BUF bytes to a FIFO is never split); a line of anything else is
 * left, and said the first BAD_LINES_SAID times only (a writer of junk
 * floods no program's standard error). */
#define BAD_LINES_SAID 3
static bool
control_read(int fd)
{
	static char line[64]; /* the thread's alone */
	static size_t len;
	static bool longer;   /* the line does not fit: not a request */
	static unsigned bad_lines; /* said, up to BAD_LINES_SAID */
	char buf[512];
	bool want = false;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 &&
	    errno == EINTR)) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];
				else
					longer = true;
				continue;
			}
			if (len > 0 && line[len - 1] == '\r')
				len--;
			line[len] = '\0';
			if (!longer && strcmp(line, "snapshot") == 0)
				want = true;
			else if ((len > 0 || longer) && ++bad_lines <=
			    BAD_LINES_SAID)
				log_warn("CUWARDEN_CONTROL: \"%s%s\" is no "
				    "request (the one there is: \"snapshot\"); "
				    "left%s", line, longer ? "..." : "",
				    bad_lines == BAD_LINES_SAID ? " (more such "
				    "lines are left unsaid)" : "");
			len = 0;
			longer = false;
		}
	}
	return want;
}

static void *
snapshot_main(void *arg)
{
	struct pollfd p[2] = {
		{ __atomic_load_n(&snap_fd, __ATOMIC_ACQUIRE), POLLIN, 0 },
		{ __atomic_load_n(&ctl_rfd, __ATOMIC_ACQUIRE), POLLIN, 0 },
	};
	uint64_t n;

	(void)arg;
	for (;;) {
		bool want = false;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* EAGAIN: taken already. */
		if ((p[0].revents & POLLIN) &&
		    read(p[0].fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
			want = true;
		if (p[1].revents & POLLIN)
			want |= control_read(p[1].fd);
		/* Never with our own writer open; were it so, watching on
		 * would spin. */
		if (p[1].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			log_warn("CUWARDEN_CONTROL: the FIFO failed (events "
			    "%#x); no more requests from it", p[1].revents);
			p[1].fd = -1;
		}
		if (want)
			snapshot_one();
	}
	log_warn("the snapshot thread stopped (errno %d): no more snapshots",
	    errno);
	return NULL;
}

/* At exit: the FIFO goes, if this process made it. */
static void
control_remove(void)
{
	if (ctl_pid != 0 && getpid() == ctl_pid)
		unlink(ctl_path);
}

/* Opens CUWARDEN_CONTROL (v), making the FIFO, or taking over one of
 * ours.  Returns true after a warning when there is none. */
static bool
control_open(const char *v)
{
	char pat[OUTFILE_PATTERN_MAX];
	char self[64];
	struct stat st;
	int rfd, wfd;

	if (outfile_absolute(v, pat, sizeof(pat)) ||
	    log_expand_path(pat, ctl_path, sizeof(ctl_path)) ||
	    outfile_std_fd(ctl_path) >= 0) {
		log_warn("CUWARDEN_CONTROL=%s: not a path the shim can make a "
		    "FIFO at (%%p and %%%% are the escapes); no control", v);
		return true;
	}
	if (mkfifo(ctl_path, 0600) != 0) {
		if (errno != EEXIST) {
			log_warn("CUWARDEN_CONTROL=%s: cannot make the FIFO %s "
			    "(errno %d); no control", v, ctl_path, errno);
			return true;
		}
		/* There already: a FIFO with a reader is another process's
		 * (one that inherited the same CUWARDEN_CONTROL without %p);
		 * one without is an earlier process's, ours to take. */
		if (lstat(ctl_path, &st) == 0 && S_ISFIFO(st.st_mode) &&
		    (wfd = open(ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC |
		    O_NOFOLLOW)) >= 0) {
			close(wfd);
			log_warn("CUWARDEN_CONTROL=%s: %s is read by another "
			    "process already (put %%p in the name); no "
			    "control", v, ctl_path);
			return true;
		}
	}
	/* O_NOFOLLOW: never through a link; O_NONBLOCK: the open does not
	 * wait for a writer. */
	rfd = open(ctl_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (rfd < 0) {
		log_warn("CUWARDEN_CONTROL=%s: cannot open %s (errno %d); no "
		    "control", v, ctl_path, errno);
		return true;
	}
	if (fstat(rfd, &st) != 0 || !S_ISFIFO(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		log_warn("CUWARDEN_CONTROL=%s: %s is there already and is not "
		    "a FIFO of this user's, mode 0600; left, no control", v,
		    ctl_path);
		close(rfd);
		return true;
	}
	/* One process serves a FIFO.  Two started at once with the same name
	 * (ranks of a job, no %p) can both find it without a reader above
	 * and both open it: the lock (held as long as the read end is, by
	 * whoever holds it, fork children included) says which one won. */
	if (flock(rfd, LOCK_EX | LOCK_NB) != 0) {
		log_warn("CUWARDEN_CONTROL=%s: %s is taken by another process "
		    "already (put %%p in the name); no control", v, ctl_path);
		close(rfd);
		return true;
	}
	/* The same FIFO for writing, whatever the name means by now. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", rfd);
	wfd = open(self, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (wfd < 0) {
		log_warn("CUWARDEN_CONTROL=%s: cannot hold %s open for writing "
		    "(errno %d); no control", v, ctl_path, errno);
		close(rfd);
		return true;
	}
	__atomic_store_n(&ctl_rfd, rfd, __ATOMIC_RELEASE);
	__atomic_store_n(&ctl_wfd, wfd, __ATOMIC_RELEASE);
	ctl_pid = getpid();
	if (atexit(control_remove) != 0)
		log_debug(1, "CUWARDEN_CONTROL: %s will stay after exit",
		    ctl_path);
	return false;
}

static void
control_close(void)
{
	int r = __atomic_exchange_n(&ctl_rfd, -1, __ATOMIC_ACQ_REL);
	int w = __atomic_exchange_n(&ctl_wfd, -1, __ATOMIC_ACQ_REL);

	if (r >= 0)
		close(r);
	if (w >= 0)
		close(w);
}

/* Starts the thread, every signal blocked in it.  Returns true on
 * error. */
static bool
thread_start(void)
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
	e = pthread_create(&tid, &attr, snapshot_main, NULL);
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

/* The signal of CUWARDEN_SNAPSHOT_SIGNAL (v), checked: 0 after a warning
 * when the shim does not take it. */
static int
signal_check(const char *v)
{
	struct sigaction old;
	const char *why;
	int sig = signame_parse(v);

	if (sig == 0) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL=%s: not a signal (a name "
		    "such as USR2, or a number); no snapshots", v);
		return 0;
	}
	if ((why = signame_refused(sig)) != NULL) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL=%s: refused (%s); no "
		    "snapshots", v, why);
		return 0;
	}
	if (!report_env_set()) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL=%s: CUWARDEN_REPORT is "
		    "unset, so a snapshot has nowhere to go; no snapshots", v);
		return 0;
	}
	if (sigaction(sig, NULL, &old) != 0 || !is_default(&old)) {
		log_warn("CUWARDEN_SNAPSHOT_SIGNAL=%s: the program has its own "
		    "disposition of signal %d (a handler, or ignored); not "
		    "replaced, no snapshots", v, sig);
		return 0;
	}
	return sig;
}

/* The handler of sig, once the thread runs. */
static void
signal_install(const char *v, int sig)
{
	struct sigaction sa, mid;

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
track_snapshot_start(void)
{
	static bool done; /* atomic exchange */
	const char *v = options_get_str(OPT_SNAPSHOT_SIGNAL);
	const char *c = options_get_str(OPT_CONTROL);
	pid_t owner = __atomic_load_n(&shim_pid, __ATOMIC_RELAXED);
	int sig = 0, fd;

	if ((v == NULL && c == NULL) || !track_alive() ||
	    (owner != 0 && getpid() != owner) ||
	    __atomic_exchange_n(&done, true, __ATOMIC_ACQ_REL))
		return;
	if (v != NULL && (sig = signal_check(v)) != 0) {
		fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (fd < 0) {
			log_warn("CUWARDEN_SNAPSHOT_SIGNAL: no eventfd (errno "
			    "%d); no snapshots", errno);
			sig = 0;
		} else {
			__atomic_store_n(&snap_fd, fd, __ATOMIC_RELEASE);
		}
	}
	if (c != NULL && !report_env_set()) {
		log_warn("CUWARDEN_CONTROL=%s: CUWARDEN_REPORT is unset, so a "
		    "snapshot has nowhere to go; no control", c);
		c = NULL;
	}
	if (c != NULL && control_open(c))
		c = NULL;
	if (sig == 0 && c == NULL)
		return;
	if (thread_start()) {
		log_warn("%s: the snapshot thread cannot start (errno %d); no "
		    "snapshots", sig != 0 ? "CUWARDEN_SNAPSHOT_SIGNAL" :
		    "CUWARDEN_CONTROL", errno);
		fd = __atomic_exchange_n(&snap_fd, -1, __ATOMIC_ACQ_REL);
		if (fd >= 0)
			close(fd);
		control_close();
		return;
	}
	if (sig != 0)
		signal_install(v, sig);
	if (c != NULL)
		log_debug(1, "snapshots on a request to %s (CUWARDEN_CONTROL=%s)",
		    ctl_path, c);
}

void
shim_snapshot_postfork_child(void)
{
	int fd = __atomic_exchange_n(&snap_fd, -1, __ATOMIC_ACQ_REL);
	int sig = __atomic_load_n(&snap_sig, __ATOMIC_RELAXED);
	struct sigaction cur;

	if (fd >= 0)
		close(fd);
	control_close();
	/* Ours still: the default action again (the child's engine is dead:
	 * no snapshot would come). */
	if (sig != 0 && sigaction(sig, NULL, &cur) == 0 &&
	    !(cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_handler == on_snapshot_signal)
		signal(sig, SIG_DFL);
	__atomic_store_n(&snap_sig, 0, __ATOMIC_RELAXED);
}
