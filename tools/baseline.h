/*
 * baseline.h -- the fingerprints of findings, and --baseline: the
 * findings of a saved --json document left out (baseline.c).
 */
#ifndef CUWARDEN_TOOLS_BASELINE_H
#define CUWARDEN_TOOLS_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"

/* The fingerprint of a finding, from class, kind/type, api and every
 * frame of its stack (module base name, build-id, offset). */
void fingerprint_compute(au_finding_t *f);
/* Are a and b one group: the same class, category, kind/type and api, and
 * the same stack, frame for frame (module base name, build-id, offset; an
 * address in no module matches any other)?  What equal fingerprints
 * stand for. */
bool fingerprint_same(const au_finding_t *a, const au_finding_t *b);
/* The symbolic fingerprint of every finding (after symbolization): kind or
 * type, api and every frame as (module base name, function) -- (module,
 * offset) for a frame without a function -- so it survives a rebuild that
 * moves code. */
void fingerprint_symbolic(au_model_t *m);

/* What a finding shares with a baseline's to be in it (--baseline-match,
 * doc/audit.md): class, category, kind or type, API and every frame, a
 * frame as its function (and inlined calls) with file and line, or, with
 * no function, its module and offset (EXACT); the same without lines and
 * offsets (FUNCTION). */
typedef enum au_bmatch_e { AU_BMATCH_EXACT, AU_BMATCH_FUNCTION } au_bmatch_t;
/* The --baseline-match word name as *how; false when it is not one. */
bool baseline_match_parse(const char *name, au_bmatch_t *how);

typedef struct au_baseline_s au_baseline_t;
/* Reads a saved --json document, to be matched how.  Returns NULL on
 * error (message in err): not such a document, a finding without its
 * stack, or (EXACT) frames without their lines. */
au_baseline_t *baseline_load(const char *path, au_bmatch_t how, char *err,
    size_t errsize);
/* Marks in_baseline every finding not suppressed that b holds (after
 * symbolization). */
void baseline_apply(const au_baseline_t *b, au_model_t *m);
void baseline_free(au_baseline_t *b);

#endif /* CUWARDEN_TOOLS_BASELINE_H */
