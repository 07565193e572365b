/*
 * run_spawn.c -- the program's processes (run_int.h): fork + execvp
 * under the shim's environment, the signals SIGINT/SIGTERM/SIGHUP/SIGQUIT
 * sent to the tool passed on to the program, and the waits: for the
 * program, then for every process it started (the tool is a child
 * subreaper, so orphans come back to it).  exec failures come back
 * through a close-on-exec pipe.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "run_int.h"
#include "xalloc.h"

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t interrupted;
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void
forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	interrupted = sig;
	/* A terminal's ^C already reached the whole process group: only
	 * signals sent to the tool by a process are passed on. */
	if (child_pid > 0 && (si == NULL || si->si_code != SI_KERNEL))
		kill((pid_t)child_pid, sig);
}

static void
signals_install(struct sigaction *old)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, &old[i]);
}

static void
signals_restore(const struct sigaction *old)
{
	size_t i;

	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &old[i], NULL);
}

static void
child_exec(int errfd, const char *shim, const char *report,
    const char *marker, const char *log, const au_run_opts_t *o,
    char **argv)
{
	int e;

	run_shim_env(shim, report, marker, log, o);
	if (o->stdout_to_stderr)
		(void)dup2(STDERR_FILENO, STDOUT_FILENO);
	execvp(argv[0], argv);
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(AU_EXIT_NOT_FOUND);
	_exit(e == ENOENT ? AU_EXIT_NOT_FOUND : AU_EXIT_CANNOT_EXEC);
}

int
run_spawn(const au_run_opts_t *o, char **argv, const char *shim,
    const char *report, const char *marker, const char *log,
    run_child_t *c)
{
	struct sigaction old[4];
	int pfd[2], status = 0, e;
	ssize_t r;
	pid_t pid;

	memset(c, 0, sizeof(*c));
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		au_error("pipe: %s", strerror(errno));
		return AU_EXIT_AUDIT_FAILED;
	}
	if (o->wait_descendants)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fflush(NULL);
	signals_install(old);
	pid = fork();
	if (pid < 0) {
		au_error("fork: %s", strerror(errno));
		signals_restore(old);
		close(pfd[0]);
		close(pfd[1]);
		return AU_EXIT_AUDIT_FAILED;
	}
	if (pid == 0) {
		signals_restore(old);
		close(pfd[0]);
		child_exec(pfd[1], shim, report, marker, log, o, argv);
	}
	c->pid = pid;
	child_pid = pid;
	close(pfd[1]);
	do
		r = read(pfd[0], &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	child_pid = 0;
	if (r == (ssize_t)sizeof(e)) {
		signals_restore(old);
		return run_exec_failed(argv[0], e);
	}
	c->status = status;
	c->reaped = xmalloc(sizeof(*c->reaped));
	c->reaped[0] = (run_reaped_t){ (long)c->pid, status };
	c->nreaped = 1;
	/* Orphaned descendants were re-parented to us: wait for them too,
	 * unless the user interrupts the wait (or already asked the program
	 * to stop: then its leftovers are not waited for). */
	while (o->wait_descendants && !interrupted) {
		int st;
		pid_t w = waitpid(-1, &st, 0);

		if (w < 0 && errno != EINTR)
			break;
		if (w > 0) {
			c->reaped = xrealloc(c->reaped, (c->nreaped + 1) *
			    sizeof(*c->reaped));
			c->reaped[c->nreaped++] = (run_reaped_t){ (long)w, st };
		}
	}
	signals_restore(old);
	return 0;
}
