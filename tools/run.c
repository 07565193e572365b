/*
 * run.c -- run_program (run.h): a run's steps.  The shim found
 * (run_shim.c), a private temporary directory made for the reports
 * (CUWARDEN_REPORT, and CUWARDEN_MARKER for the markers), the program
 * run and waited for (run_spawn.c), the shim's messages copied to the
 * --log-file (run_reports.c), every report read, every marker without a
 * report listed as a lost process (run_lost.c), the directory removed (or
 * its reports copied for --keep-reports, run_reports.c).
 *
 * Invariants: the tool never returns 0 for a run that audited nothing: no
 * report at all is an audit failure (125) unless the program died of a
 * signal (then its 128+n, and nothing is rendered) or could not start
 * (126 or 127: exec failed, run_exec.c; or the dynamic loader or a shell
 * said so before the shim loaded).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "ingest.h"
#include "run_int.h"
#include "xalloc.h"

/* Completes the exit of each process whose report does not know it
 * (status -1: the shim could not tell) from what waitpid said, when the
 * pid was reaped once and reported once (with pid reuse the pairing
 * would be a guess). */
static void
fill_exits(au_model_t *m, const run_reaped_t *r, size_t nr)
{
	size_t i, j, k, hit = 0, same;

	for (i = 0; i < m->nprocs; i++) {
		au_process_t *p = &m->procs[i];

		if (p->exit_status >= 0)
			continue;
		for (j = 0, k = 0; j < nr; j++)
			if (r[j].pid == p->pid) {
				hit = j;
				k++;
			}
		for (j = 0, same = 0; j < m->nprocs; j++)
			same += m->procs[j].pid == p->pid;
		if (k != 1 || same != 1)
			continue;
		if (WIFEXITED(r[hit].status)) {
			p->exit_status = WEXITSTATUS(r[hit].status);
		} else if (WIFSIGNALED(r[hit].status)) {
			p->exit_how = "signal";
			p->exit_status = WTERMSIG(r[hit].status);
		}
	}
}

/* Where the shim's messages go for the --log-file (o->shim_lines): a file
 * of the private directory dir, copied once every process has ended.
 * NULL when there is no --log-file, or when --shim-log-file or a
 * CUWARDEN_LOG_FILE of the environment says where they go. */
static char *
shim_log_path(const au_run_opts_t *o, const char *dir)
{
	static const char name[] = "CUWARDEN_LOG_FILE=";
	const char *env = getenv("CUWARDEN_LOG_FILE");

	if (o->shim_lines == NULL || (env != NULL && env[0] != '\0'))
		return NULL;
	for (size_t i = 0; i < o->nenv; i++)
		if (strncmp(o->env[i], name, sizeof(name) - 1) == 0)
			return NULL;
	return xasprintf("%s/" RUN_SHIM_LOG, dir);
}

/* Puts the reports of files before the markers (each part in its
 * order).  Returns the number of reports. */
static size_t
reports_first(char **files, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (!run_is_marker(files[i])) {
			char *f = files[i];

			memmove(files + k + 1, files + k, (i - k) *
			    sizeof(*files));
			files[k++] = f;
		}
	return k;
}

int
run_program(const au_run_opts_t *o, char **argv, au_model_t *m)
{
	char err[4096], tmpl[PATH_MAX], *shim, *report, *marker, **files, *dir;
	char *log = NULL;
	const char *tmp = getenv("TMPDIR");
	int status, rc = 0;
	bool main_reported = false;
	run_child_t c;
	size_t i, n, nr;
	int keep_fd = -1;
	au_run_opts_t see;
	const au_run_opts_t *run = o;

	memset(&c, 0, sizeof(c));
	if ((shim = run_shim_path(o)) == NULL)
		return AU_EXIT_AUDIT_FAILED;
	if (o->keep_reports != NULL &&
	    (keep_fd = run_keep_open(o->keep_reports)) < 0) {
		free(shim);
		return AU_EXIT_AUDIT_FAILED;
	}
	snprintf(tmpl, sizeof(tmpl), "%s/cuwarden-audit.XXXXXX",
	    tmp && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(tmpl) == NULL) {
		au_error("cannot create a temporary directory %s: %s", tmpl,
		    strerror(errno));
		if (keep_fd >= 0)
			close(keep_fd);
		free(shim);
		return AU_EXIT_AUDIT_FAILED;
	}
	/* Absolute, whatever TMPDIR is: a program that changes directory
	 * must still write where we read. */
	dir = realpath(tmpl, NULL);
	if (dir == NULL) {
		au_error("%s: %s", tmpl, strerror(errno));
		rmdir(tmpl);
		if (keep_fd >= 0)
			close(keep_fd);
		free(shim);
		return AU_EXIT_AUDIT_FAILED;
	}
	report = xasprintf("%s/report.%%p.json", dir);
	marker = xasprintf("%s/" RUN_MARKER_PREFIX "%%p.json", dir);
	log = shim_log_path(o, dir);
	if (o->see_through) {
		/* The program's environment with the caches off. */
		see = *o;
		see.env = run_see_env(o, shim, &see.nenv);
		run = &see;
	}
	if ((rc = run_spawn(run, argv, shim, report, marker, log, &c)) != 0)
		goto out;
	if (log != NULL)
		run_copy_log(log, o->shim_lines);
	status = c.status;
	if (WIFEXITED(status)) {
		m->exit_status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		m->exit_status = 128 + WTERMSIG(status);
		m->term_signal = WTERMSIG(status);
		au_warn("the program was killed by signal %d (%s)%s",
		    WTERMSIG(status), strsignal(WTERMSIG(status)),
		    WCOREDUMP(status) ? ", core dumped" : "");
	}
	m->ran = true;

	m->group = ++m->ngroups;
	n = run_list_files(dir, &files);
	nr = reports_first(files, n);
	if (keep_fd >= 0)
		run_keep_reports(keep_fd, o->keep_reports, files, nr);
	/* (the originals are removed with the directory below) */
	for (i = 0; i < nr; i++) {
		if (ingest_file(m, files[i], err, sizeof(err))) {
			au_error("unreadable report: %s", err);
			if (o->keep_reports == NULL)
				au_error("(run with --keep-reports DIR to keep "
				    "the reports)");
			rc = AU_EXIT_AUDIT_FAILED;
			break;
		}
	}
	if (rc == 0) {
		fill_exits(m, c.reaped, c.nreaped);
		run_lost_collect(m, files + nr, n - nr, c.reaped, c.nreaped);
	}
	for (i = 0; rc == 0 && i < m->nprocs; i++)
		if (m->procs[i].pid == c.pid)
			main_reported = true;
	for (i = 0; rc == 0 && i < m->nlost; i++)
		if (m->lost[i].pid == c.pid)
			main_reported = true; /* its line says it */
	if (rc == 0 && nr == 0) {
		/* Nothing is rendered: the lost processes are said here. */
		for (i = 0; i < m->nlost; i++) {
			char *line = run_lost_line(&m->lost[i]);

			au_error("%s", line);
			free(line);
		}
		if (WIFSIGNALED(status)) {
			au_error("the program was killed by signal %d before "
			    "any report was written: nothing was audited",
			    WTERMSIG(status));
			rc = m->exit_status;
		} else if (WIFEXITED(status) && (WEXITSTATUS(status) ==
		    AU_EXIT_NOT_FOUND || WEXITSTATUS(status) ==
		    AU_EXIT_CANNOT_EXEC)) {
			/* The dynamic loader's "error while loading shared
			 * libraries" (127), or a shell's "cannot execute"
			 * (126): before the shim could load.  The program's
			 * own stderr said why; its status is passed on. */
			au_error("%s could not start: it exited with %d before "
			    "any report was written (its own message above "
			    "says why: a shared library or an interpreter "
			    "missing?)", argv[0], WEXITSTATUS(status));
			rc = m->exit_status;
		} else if (m->nlost > 0) {
			au_error("no process wrote a report: nothing was "
			    "audited");
			rc = AU_EXIT_AUDIT_FAILED;
		} else {
			au_error("the shim was not loaded, or no process used "
			    "CUDA: no process wrote a report (is %s statically "
			    "linked or setuid, or does it clear LD_PRELOAD? "
			    "shim: %s)", argv[0], shim);
			rc = AU_EXIT_AUDIT_FAILED;
		}
	} else if (rc == 0 && !main_reported && !WIFSIGNALED(status) &&
	    !o->quiet) {
		fprintf(stderr, AU_PROG ": note: the program's own process "
		    "(pid %ld) wrote no report (it used no CUDA, or the shim "
		    "was not loaded into it); %zu process%s it started %s "
		    "audited\n", c.pid, nr, nr == 1 ? "" : "es",
		    nr == 1 ? "was" : "were");
	}
	run_free_list(files, n);
out:
	if (run != o)
		run_see_free(o, see.env, see.nenv);
	if (keep_fd >= 0)
		close(keep_fd);
	run_remove_dir(dir);
	free(dir);
	free(c.reaped);
	free(log);
	free(marker);
	free(report);
	free(shim);
	return rc;
}
