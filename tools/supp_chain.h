/*
 * supp_chain.h -- call-chain suppression rules, the "{ ... }" blocks of a
 * suppressions file (doc/audit.md, "Call-chain rules"): read line by line
 * by supp_load, matched against a finding's frames; and the frames as
 * such rules see them (what --gen-suppressions writes).  Defined in
 * supp_chain.c.
 */
#ifndef CUWARDEN_TOOLS_SUPP_CHAIN_H
#define CUWARDEN_TOOLS_SUPP_CHAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"

/* The most frame lines a rule may have. */
#define SUPP_CHAIN_MAX_FRAMES 256

typedef struct supp_chain_s supp_chain_t;

/* A rule just opened by its "{" line. */
supp_chain_t *chain_new(void);
/* Takes the next line inside the block (trimmed, its comment removed,
 * not empty, neither "{" nor "}"): the name first, then the finding line,
 * then the frames.  Returns NULL, or what is wrong with the line. */
const char *chain_add_line(supp_chain_t *c, const char *line);
/* At the "}" line.  Returns NULL, or what the rule lacks. */
const char *chain_finish(const supp_chain_t *c);
/* The rule's name; NULL before its first line. */
const char *chain_name(const supp_chain_t *c);
/* Does the rule match finding f (class, category, kind or type, API,
 * and its frames against the innermost frames of f's stack)? */
bool chain_matches(const supp_chain_t *c, const au_finding_t *f);
void chain_free(supp_chain_t *c);

/* One frame as rules see it: each function inlined at a pc is a frame of
 * its own, innermost first, then the function the pc is in, all of the
 * pc's module.  NULL when unknown. */
typedef struct chain_frame_s {
	const char *function;
	const char *module;
} chain_frame_t;

/* The frames of st, newly allocated (n in *n; never NULL). */
chain_frame_t *chain_frames(const au_stack_t *st, size_t *n);

#endif /* CUWARDEN_TOOLS_SUPP_CHAIN_H */
