/*
 * cli_int.h -- the internals of the command line, shared by the cli*.c
 * files and nobody else; the contract is cli.h.
 *
 *   cli.c          the option table, each option's checks, the command
 *   cli_help.c     --help (short), --help-all, report --help
 *   cli_value.c    the values options take: yes|no, --log-file's
 *                  %-patterns, --show-leak-kinds' lists
 */
#ifndef CUWARDEN_TOOLS_CLI_INT_H
#define CUWARDEN_TOOLS_CLI_INT_H

#include <stdbool.h>
#include <stdio.h>

/* ---------------------------------------------------------- cli_help.c */

/* The common options, grouped (--help, -h). */
void cli_help_short(FILE *out);
/* Every option, grouped, then the built-in suppressions (--help-all). */
void cli_help_all(FILE *out);
/* The report command's usage (report --help). */
void cli_help_report(FILE *out);
/* The snapshot and diff commands' usages (snapshot --help, diff
 * --help). */
void cli_help_snapshot(FILE *out);
void cli_help_diff(FILE *out);

/* --------------------------------------------------------- cli_value.c */

/* "yes" or "no" into *v.  Returns true when arg is neither. */
bool cli_yesno(const char *arg, bool *v);
/* --log-file's pattern expanded, as valgrind does: %p the tool's pid,
 * %q{VAR} the value of the environment variable VAR, %% a percent.
 * Returns the path (newly allocated), or NULL with *why (newly
 * allocated) saying what is wrong: another %-letter, a %q without {VAR},
 * a VAR that is not set. */
char *cli_log_pattern(const char *pat, char **why);
/* --show-leak-kinds' value (all, none, or a comma-separated list of
 * leak or definite, teardown, address_range, suppressed) into *set
 * (render.h's AU_SHOW_*).  Returns NULL, or the item that is none of
 * these (newly allocated). */
char *cli_leak_kinds(const char *arg, unsigned *set);

#endif /* CUWARDEN_TOOLS_CLI_INT_H */
