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

/* valgrind's --error-limit=yes: finding groups printed (--print-limit's
 * default). */
#define CLI_ERROR_LIMIT 1000

typedef enum au_color_e {
	AU_COLOR_AUTO,   /* on a terminal, unless NO_COLOR (main.c) */
	AU_COLOR_ALWAYS,
	AU_COLOR_NEVER,
} au_color_t;

typedef struct au_cfg_s {
	au_run_opts_t run; /* run.env: the CUWARDEN_* of the shim options */
	const char *json, *sarif, *html, *log_file, *baseline;
	const char *junit; /* --junit FILE */
	const char *trace; /* --trace FILE */
	const char **supp_files;
	size_t nsupp;
	bool builtin, gen_supp, require_cuda;
	const char *gen_supp_file; /* --gen-suppressions=FILE (gen_supp set) */
	bool accept_teardown; /* teardown leaks accepted, not counted */
	bool allow_missing_ranks; /* a job's ranks without a report: listed */
	au_bmatch_t baseline_match; /* --baseline-match (exact) */
	bool baseline_match_set;
	bool plain_summary;   /* the summary lines' numbers ungrouped */
	long error_exitcode;
	long num_callers;
	char *log_file_buf; /* --log-file, its %-patterns expanded */
	char *out_bufs[5];  /* --json, --sarif, --html, --junit, --trace: the same */
	int verbosity;      /* -1 -q, 0 default, 1.. -v (render.h) */
	int shim_verbose;   /* CUWARDEN_VERBOSE (-v, --verbose=N); -1 unset */
	long print_limit;   /* --print-limit, --error-limit; 0 all */
	bool demangle;      /* --demangle (yes) */
	unsigned show_kinds; /* --show-leak-kinds: AU_SHOW_*; 0 default */
	au_color_t color;   /* --color */
	bool shim_opts;  /* a shim option was given */
	bool report_cmd; /* `report FILE|DIR...`, not a program to run */
	bool snapshot_cmd; /* `snapshot PID` (then report_cmd, of its file) */
	long snap_pid;
	long snap_wait;    /* --wait SECONDS */
	bool diff_cmd;     /* `diff A B` (args: the two files) */
	bool error_exitcode_set; /* --error-exitcode given */
	char **args;     /* the program and its arguments, or the files */
	bool args_owned; /* args allocated (diff's), freed by cli_free */
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
