/*
 * run.h -- running a program under the shim and collecting its reports
 * (run_*.c, run_int.h).
 */
#ifndef CUWARDEN_TOOLS_RUN_H
#define CUWARDEN_TOOLS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "audit.h"

typedef struct au_run_opts_s {
	const char *preload;      /* --preload, or NULL: find our own */
	const char *keep_reports; /* --keep-reports DIR or NULL */
	char **env;               /* "NAME=value" to set in the program */
	size_t nenv;
	bool wait_descendants;
	bool allow_missing;       /* --allow-missing-reports */
	bool stdout_to_stderr;    /* an output is "-": the program's stdout
	                           * goes to stderr, ours stays parseable */
	bool quiet;               /* -q: no notes, errors only */
	bool see_through;         /* --see-through (run_see.c) */
	/* The built-in rules of the caches, left out (said by run_see.c);
	 * freed by cli_free. */
	char *see_unsuppressed;
	/* --log-file: the shim's messages, gathered in the private
	 * directory, are copied here once every process has ended (unless
	 * --shim-log-file or CUWARDEN_LOG_FILE sends them elsewhere); NULL:
	 * they go to the program's stderr. */
	FILE *shim_lines;
} au_run_opts_t;

/* Runs argv under the shim, waits for it and every process it started,
 * reads every report into m.  Returns the tool's exit status on failure
 * (125, 126, 127, or 128+n when the program died of signal n leaving no
 * report), 0 on success; m->exit_status is the program's. */
int run_program(const au_run_opts_t *o, char **argv, au_model_t *m);
/* The regular files of dir whose names do not start with '.' (the shim's
 * files still being written), sorted by name; any other entry is warned
 * about ("DIR/x: is a directory, not read"). */
size_t run_list_files(const char *dir, char ***out);
void run_free_list(char **v, size_t n);

/* The processes of m->lost that count as lost (all but those still
 * running when the audit ended, --no-wait-descendants). */
size_t run_lost_count(const au_model_t *m);
/* The line that lists l (newly allocated, escaped for a text line):
 * "process PID (COMMAND) used CUDA under the shim and left no report: "
 * and what is known of its end ("killed by SIGKILL", "exited with 3",
 * "end unknown", "still running when the audit ended (...)"). */
char *run_lost_line(const au_lost_t *l);
/* A process's command line for a text line (newly allocated, escaped):
 * its first 8 arguments (" ..." after them when there are more), else
 * exe, else "?". */
char *run_command_line(const json_t *command, const char *exe);

#endif /* CUWARDEN_TOOLS_RUN_H */
