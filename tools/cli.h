/*
 * cli.h -- cuwarden-audit's command line: the options, --help and
 * --version, and the configuration they fill (cli.c).
 */
#ifndef CUWARDEN_TOOLS_CLI_H
#define CUWARDEN_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"
#include "baseline.h"
#include "run.h"

typedef struct au_cfg_s {
	au_run_opts_t run; /* run.env: the CUWARDEN_* of the shim options */
	const char *json, *sarif, *html, *log_file, *baseline;
	const char *junit; /* --junit FILE */
	const char **supp_files;
	size_t nsupp;
	bool builtin, gen_supp, require_cuda;
	const char *gen_supp_file; /* --gen-suppressions=FILE (gen_supp set) */
	bool accept_teardown; /* teardown leaks accepted, not counted */
	au_bmatch_t baseline_match; /* --baseline-match (exact) */
	bool baseline_match_set;
	bool plain_summary;   /* the summary lines' numbers ungrouped */
	long error_exitcode;
	long num_callers;
	int verbose;
	bool shim_opts;  /* a shim option was given */
	bool report_cmd; /* `report FILE|DIR...`, not a program to run */
	char **args;     /* the program and its arguments, or the files */
	int nargs;       /* >= 1 once cli_parse goes on */
} au_cfg_t;

/* Fills *c from argv (the defaults first): the options, then the
 * command (a program, or `report` and its files), then the outputs
 * checked to name distinct files.  Returns -1 to go on, else the exit
 * status: 0 after --help, --version or --print-builtin-suppressions,
 * AU_EXIT_USAGE after a message on stderr.  cli_free(c) in every case. */
int cli_parse(au_cfg_t *c, int argc, char **argv);
/* Frees what cli_parse allocated in *c. */
void cli_free(au_cfg_t *c);

#endif /* CUWARDEN_TOOLS_CLI_H */
