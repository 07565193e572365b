/*
 * render.h -- the outputs of the model: text, the merged JSON document,
 * SARIF, HTML and JUnit XML (render_*.c).
 */
#ifndef CUWARDEN_TOOLS_RENDER_H
#define CUWARDEN_TOOLS_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "audit.h"
#include "suppress.h"

typedef struct au_render_opts_s {
	const au_supp_t *supp;    /* for the used-rule table; may be NULL */
	const char *baseline;     /* --baseline path or NULL */
	int stack_limit;          /* frames printed per stack in text, 0 all */
	bool plain_summary;       /* LEAK and ERROR SUMMARY ungrouped
	                           * (compute-sanitizer's numbers) */
	int exit_status;          /* the audit's own (the HTML page's
	                           * banner) */
	bool audit_failed;        /* incomplete: lost reports, missing
	                           * ranks, no CUDA with --require-cuda */
	/* The text report only; zero is the default of each. */
	int verbosity;            /* -1 -q: errors only; 1 -v: more */
	size_t print_limit;       /* finding groups printed; 0 all */
	unsigned show_kinds;      /* AU_SHOW_* below; 0 AU_SHOW_DEFAULT */
	bool color;               /* SGR colours on headers, summaries */
} au_render_opts_t;

/* The leak groups the text report shows (--show-leak-kinds): those of
 * a category (au_cat_t), and those not reported (suppressed, accepted
 * teardown, in the baseline). */
#define AU_SHOW_CAT(cat) (1u << (cat))
#define AU_SHOW_SUPPRESSED (1u << 8)
#define AU_SHOW_DEFAULT (AU_SHOW_CAT(AU_CAT_LEAK) | \
	AU_SHOW_CAT(AU_CAT_TEARDOWN) | AU_SHOW_CAT(AU_CAT_RANGE))
#define AU_SHOW_ALL (AU_SHOW_DEFAULT | AU_SHOW_SUPPRESSED)
#define AU_SHOW_NONE (1u << 9) /* nothing: not 0, the default */

void render_text(const au_model_t *m, const au_render_opts_t *o, FILE *out);
/* The OUT OF MEMORY sections of the OOM reports read (render_oom.c),
 * written first by render_text. */
void render_oom_text(const au_model_t *m, int limit, FILE *out);
/* The PEAK sections of the timelines read (render_peak.c): per process
 * and device, the peak's bytes and time and its largest groups with
 * their stacks (at most limit frames). */
void render_peak_text(const au_model_t *m, int limit, FILE *out);
/* The GROWING sections of the timelines read (render_growth.c): per
 * process, the stacks whose live bytes grew steadily, with their stacks
 * (at most limit frames). */
void render_growth_text(const au_model_t *m, int limit, FILE *out);
/* The text report's last line when findings decide the exit status:
 * "EXIT STATUS: status (N errors reported; the program exited with
 * M)". */
void render_text_status(const au_model_t *m, const au_render_opts_t *o,
    int status, uint64_t errors, FILE *out);
/* One finding group as the text report shows it: its header line, its
 * stacks (at most stack_limit frames each, 0 all), a closing "==" line. */
void render_text_finding(const au_finding_t *f, int stack_limit, FILE *out);
/* One OOM report's OUT OF MEMORY section as the text report shows it,
 * without colour (JUnit's system-out). */
void render_text_oom(const au_oom_t *oom, int stack_limit, FILE *out);
/* A stack alone, as a finding's is shown ("==    at ..." lines), at most
 * stack_limit frames (0 all). */
void render_text_stack(const au_stack_t *s, int stack_limit, FILE *out);
/* A stack as the merged document's array of frames (new reference). */
json_t *render_stack_json(const au_stack_t *s);
/* A timelines document as the merged document's "timelines" entry: its
 * stacks symbolized, in the merged form (new reference). */
json_t *render_tline_json(const au_tline_t *t);
/* The merged document.  Caller owns the result. */
json_t *render_json_doc(const au_model_t *m, const au_render_opts_t *o);
/* Each returns true on error (message printed). */
bool render_json(const au_model_t *m, const au_render_opts_t *o,
    const char *path);
bool render_sarif(const au_model_t *m, const au_render_opts_t *o,
    const char *path);
bool render_html(const au_model_t *m, const au_render_opts_t *o,
    const char *path);
bool render_junit(const au_model_t *m, const au_render_opts_t *o,
    const char *path);
/* --trace: the timelines' memory over time as a Chrome trace
 * (render_trace.c); the document alone (new reference). */
bool render_trace(const au_model_t *m, const char *path);
json_t *render_trace_doc(const au_model_t *m);
/* f's SARIF rule id, newly allocated: cuwarden.leak.KIND,
 * cuwarden.violation.TYPE, cuwarden.teardown or cuwarden.address_range
 * (also the type of its JUnit failure). */
char *sarif_rule_id(const au_finding_t *f);
/* Writes doc to path through out_open.  Returns true on error (message
 * printed). */
bool render_json_write(const json_t *doc, size_t flags, const char *path);

#endif /* CUWARDEN_TOOLS_RENDER_H */
