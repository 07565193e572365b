/*
 * diff.h -- `cuwarden-audit diff A B`: what grew between two reports of
 * one run (snapshots, per-process reports, merged --json documents), by
 * allocation stack (doc/audit.md, "Snapshots and diff"; diff.c).
 */
#ifndef CUWARDEN_TOOLS_DIFF_H
#define CUWARDEN_TOOLS_DIFF_H

#include <stdbool.h>
#include <stdio.h>

#include "suppress.h"

typedef struct au_diff_opts_s {
	au_supp_t *supp;      /* rules applied to both sides; may be NULL */
	bool demangle;
	int stack_limit;      /* frames printed per stack, 0 all */
	const char *json;     /* --json FILE, or NULL */
	long error_exitcode;  /* the status when a group grew; 0: none */
} au_diff_opts_t;

/* Reads a and b, groups the live memory of each by its whole symbolic
 * stack (kind, API and every frame's function: the symbolic
 * fingerprint), and writes to out the groups that grew from a to b,
 * largest growth first, then a line for those that shrank or went, and
 * the totals; the same as JSON to o->json.  Returns 0, o->error_exitcode
 * when a group grew and it is not 0, or AU_EXIT_AUDIT_FAILED after a
 * message (a file unreadable, an output not written). */
int diff_run(const char *a, const char *b, const au_diff_opts_t *o,
    FILE *out);

#endif /* CUWARDEN_TOOLS_DIFF_H */
