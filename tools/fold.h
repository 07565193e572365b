/*
 * fold.h -- a distributed job's processes (doc/audit.md, "Auditing a
 * distributed job"): each finding's ranks and whether every rank had the
 * same share of it, the job's world size and the ranks that left no
 * report.  Defined in fold.c.
 */
#ifndef CUWARDEN_TOOLS_FOLD_H
#define CUWARDEN_TOOLS_FOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"

/* Sets m's job members (ranked, world_size, missing_ranks) and each
 * finding's ranks (audit.h).  After model_sort.  one_rank: the tool
 * audits one rank of the job (a launcher started it: fold_tool_is_rank),
 * so the others' reports are elsewhere: none is missing. */
void fold_model(au_model_t *m, bool one_rank);
/* Was the tool itself started as a rank of a job (its own environment,
 * lib/jobenv.h)? */
bool fold_tool_is_rank(void);
/* Sorts ranks (n of them) and drops repeats.  Returns how many are left. */
size_t fold_rank_sort(long *ranks, size_t n);
/* ranks (n of them, sorted, distinct) as a compact list: "0-7", "1,3",
 * "0-3,5".  Returns a string to free. */
char *fold_rank_list(const long *ranks, size_t n);
/* The ranks m is missing as one line, "1 of 8 left no report: 5" (the
 * text report's MISSING RANKS, JUnit's and SARIF's); NULL when none.
 * Returns a string to free. */
char *fold_missing_line(const au_model_t *m);

#endif /* CUWARDEN_TOOLS_FOLD_H */
