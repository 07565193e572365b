/*
 * baseline.h -- the fingerprints of findings, and --baseline: the
 * findings of a saved --json document left out (baseline.c).
 */
#ifndef CUWARDEN_TOOLS_BASELINE_H
#define CUWARDEN_TOOLS_BASELINE_H

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
typedef struct au_baseline_s au_baseline_t;
/* Reads a saved --json document.  Returns NULL on error (message in err). */
au_baseline_t *baseline_load(const char *path, char *err, size_t errsize);
void baseline_apply(const au_baseline_t *b, au_model_t *m);
void baseline_free(au_baseline_t *b);

#endif /* CUWARDEN_TOOLS_BASELINE_H */
