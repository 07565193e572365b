/*
 * suppress.h -- suppression rules, from files and built in, applied to
 * the findings (suppress.c, supp_chain.c); --gen-suppressions
 * (supp_gen.c).
 */
#ifndef CUWARDEN_TOOLS_SUPPRESS_H
#define CUWARDEN_TOOLS_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "audit.h"

typedef struct au_supp_s au_supp_t; /* the rule set */

au_supp_t *supp_new(void);
void supp_add_builtin(au_supp_t *s);
/* The same but the rules that hide a framework's cache (libc10_cuda.so,
 * XLA's), for --see-through.  Returns those left out, ", "-separated
 * (newly allocated). */
char *supp_add_builtin_but_caches(au_supp_t *s);
/* Reads FILE.  Returns true on error (message in err: "file:line: ..."). */
bool supp_load(au_supp_t *s, const char *path, char *err, size_t errsize);
/* Marks matching findings suppressed (f->suppressed_by = the rule). */
void supp_apply(au_supp_t *s, au_model_t *m);
/* Used-rule table: calls fn for each rule that matched something. */
void supp_foreach_used(const au_supp_t *s,
    void (*fn)(const char *rule, const char *origin, uint64_t count,
	uint64_t bytes, void *arg), void *arg);
void supp_free(au_supp_t *s);
/* Writes a call-chain rule for every reported finding group (identical
 * rules once), frames up to main, at most max_frames (0 = no limit),
 * between a header and a footer comment line. */
void supp_generate(const au_model_t *m, size_t max_frames, FILE *out);
/* The built-in rules, one "rule  # why" per line (for --help and docs). */
void supp_print_builtin(FILE *out);

#endif /* CUWARDEN_TOOLS_SUPPRESS_H */
