/*
 * model.h -- the model (au_model_t, audit.h) as the reports are read
 * into it: findings added and merged by fingerprint, then sorted, summed
 * and freed.  Defined in model.c.
 */
#ifndef CUWARDEN_TOOLS_MODEL_H
#define CUWARDEN_TOOLS_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "audit.h"

/* Adds f to m (its fingerprint computed here), or merges it into the
 * finding with the same fingerprint and class.  Takes f. */
void model_add(au_model_t *m, au_finding_t *f);
/* Sorts leaks (bytes, largest first) and violations (first occurrence);
 * marks every finding show_hosts when the processes span several hosts. */
void model_sort(au_model_t *m);
void model_free(au_model_t *m);

/* A category's name ("leak", "teardown", "address_range": the reports'
 * and the merged document's "category"), and back: false when name is
 * none of them. */
const char *cat_name(au_cat_t cat);
bool cat_parse(const char *name, au_cat_t *cat);

/* The suppressed_by of the teardown leaks --accept-teardown accepted. */
extern const char model_accepted_teardown[];
/* Marks accepted every teardown leak still reported. */
void model_accept_teardown(au_model_t *m);

/* Sums over the model, each saturating (UINT64_MAX: at least that).
 * Leaked sums count the reported leaks of categories leak and teardown;
 * teardown_* the teardown ones again; ranges are apart. */
typedef struct au_totals_s {
	uint64_t leaked_bytes, leaked_allocations, leak_groups;
	uint64_t teardown_bytes, teardown_allocations, teardown_groups;
	uint64_t accepted_bytes, accepted_allocations, accepted_groups;
	uint64_t range_bytes, ranges, range_groups;
	uint64_t violations, violation_groups;
	uint64_t suppressed_leaks, suppressed_bytes, suppressed_leak_groups;
	uint64_t suppressed_violations;
	uint64_t baseline_leaks, baseline_violations; /* groups */
	uint64_t processes, hooks_active, allocations, frees;
	uint64_t cuda_active, library; /* processes */
	uint64_t untracked_frees, failed_calls;
	uint64_t errors; /* leaked_allocations + violations */
} au_totals_t;

void model_totals(const au_model_t *m, au_totals_t *t);

/* A finding's pids (each pid of a host once; host NULL or "": unknown)
 * and devices (each once, in order seen) and example addresses (the
 * first AU_MAX_ADDRESSES; a copy of a). */
void finding_add_pid(au_finding_t *f, long pid, const char *host);
/* Does f hold process p (its pid, on its host)? */
bool finding_has_process(const au_finding_t *f, const au_process_t *p);
/* Process p's label: "1234", or "host:1234" when m->show_hosts ("?" for
 * an unknown host).  Returns buf. */
const char *process_label(const au_model_t *m, const au_process_t *p,
    char *buf, size_t size);
/* Process p's name in text: "rank R" ("host:rank R" when m->show_hosts)
 * when it has a rank, else "pid " and its process_label.  Returns buf. */
const char *process_name(const au_model_t *m, const au_process_t *p,
    char *buf, size_t size);
void finding_add_device(au_finding_t *f, int dev);
void finding_add_address(au_finding_t *f, const char *a);
/* The label of f's i-th pid in text: "PID", or "HOST:PID" when
 * f->show_hosts ("?" for an unknown host).  Returns buf. */
const char *finding_pid_label(const au_finding_t *f, size_t i, char *buf,
    size_t size);
/* Frees f, its strings and stacks. */
void finding_free(au_finding_t *f);
/* Frees the frames of s and empties it. */
void stack_free(au_stack_t *s);

#endif /* CUWARDEN_TOOLS_MODEL_H */
