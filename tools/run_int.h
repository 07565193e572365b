/*
 * run_int.h -- the internals of running a program, shared by the run_*.c
 * files and nobody else; the contract is run.h.
 *
 *   run.c          run_program: the steps of a run, the reports read, the
 *                  verdict when there are none
 *   run_shim.c     the shim: where it is, the environment that loads it
 *   run_see.c      --see-through: the frameworks' caches off
 *   run_spawn.c    fork and exec, signals passed on, the processes reaped
 *   run_exec.c     why the program could not be started
 *   run_reports.c  the private report directory, --keep-reports
 *   run_lost.c     the shim's markers paired with the reports: the
 *                  processes that left none
 */
#ifndef CUWARDEN_TOOLS_RUN_INT_H
#define CUWARDEN_TOOLS_RUN_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "run.h"

/* ---------------------------------------------------------- run_shim.c */

/* The shim to preload: --preload checked, else ours found (run_shim.c
 * says where it looks).  Returns a newly allocated absolute path, or
 * NULL after a message. */
char *run_shim_path(const au_run_opts_t *o);
/* Sets, in the child about to exec, what loads the shim and tells it
 * where to write: LD_PRELOAD (shim first), CUWARDEN_REPORT (report),
 * CUWARDEN_MARKER (marker), CUWARDEN_LOG_FILE (log, unless NULL), the
 * JSON format, and o->env. */
void run_shim_env(const char *shim, const char *report, const char *marker,
    const char *log, const au_run_opts_t *o);

/* ----------------------------------------------------------- run_see.c */

/* --see-through: o->env followed by the variables of lib/seethrough.h
 * that neither o->env nor the environment gives, and PYTHONPATH with the
 * CuPy hook's directory beside shim first; each setting (and each one
 * kept) said on stderr unless o->quiet.  Returns the new array (*n
 * entries); run_see_free frees it. */
char **run_see_env(const au_run_opts_t *o, const char *shim, size_t *n);
void run_see_free(const au_run_opts_t *o, char **env, size_t n);

/* --------------------------------------------------------- run_spawn.c */

/* A process the tool reaped: the program, and orphans re-parented to it
 * (it is a child subreaper). */
typedef struct run_reaped_s {
	long pid;
	int status; /* waitpid's */
} run_reaped_t;

typedef struct run_child_s {
	long pid;             /* the program's own process */
	int status;           /* its waitpid status */
	run_reaped_t *reaped; /* it first, then the orphans; caller frees */
	size_t nreaped;
} run_child_t;

/* Starts argv under shim (report, marker, log: as run_shim_env) with the
 * signals sent to the tool passed on, and waits for it and, when
 * o->wait_descendants, every process it leaves behind.  Returns 0 (*c
 * filled), or the tool's exit status after a message: 125 (no pipe, no
 * fork), 126 or 127 (exec failed). */
int run_spawn(const au_run_opts_t *o, char **argv, const char *shim,
    const char *report, const char *marker, const char *log,
    run_child_t *c);

/* ---------------------------------------------------------- run_exec.c */

/* Says why execvp(prog) failed with errno e.  Returns 127 (not found) or
 * 126. */
int run_exec_failed(const char *prog, int e);

/* ------------------------------------------------------- run_reports.c */

/* Empties and removes our private directory: the reports, and whatever
 * a process killed while writing left (its ".name" files). */
void run_remove_dir(const char *dir);
/* Opens --keep-reports DIR (run_reports.c says what is refused).  Returns
 * the directory's descriptor, or -1 after a message. */
int run_keep_open(const char *dir);
/* Copies the reports into the --keep-reports directory dirfd (named dir
 * in messages); each files[i] kept names its copy afterwards. */
void run_keep_reports(int dirfd, const char *dir, char **files, size_t n);
/* The name of the shim's log in the private directory: a dot file, so
 * never read as a report. */
#define RUN_SHIM_LOG ".shim.log"
/* Copies the shim's log (path; absent: nothing logged) to out, each line
 * starting with the shim's "cuwarden: " (put in front of one that does
 * not) and its control characters but the tab escaped (\xNN), so that
 * no line of it passes for one of the text report's. */
void run_copy_log(const char *path, FILE *out);

/* ---------------------------------------------------------- run_lost.c */

/* The name a marker's file starts with in the report directory
 * (CUWARDEN_MARKER is "DIR/" RUN_MARKER_PREFIX "%p.json"). */
#define RUN_MARKER_PREFIX "loaded."

/* Whether path (a file of the report directory) is a marker. */
bool run_is_marker(const char *path);
/* Reads the markers (n files) and adds to m->lost each process whose pid
 * no report of m has, with what r (the nr processes the tool reaped) says
 * of its end.  A marker that cannot be read is warned about. */
void run_lost_collect(au_model_t *m, char **markers, size_t n,
    const run_reaped_t *r, size_t nr);

#endif /* CUWARDEN_TOOLS_RUN_INT_H */
