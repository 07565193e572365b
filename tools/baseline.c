/*
 * baseline.c -- fingerprints, and --baseline (a saved --json document:
 * findings whose fingerprint it lists are not reported again).
 *
 * A fingerprint names a group (valgrind's loss record): FNV-1a (64 bits)
 * over the class ("leak"/"violation"), the kind or violation type, the
 * API, and every frame of the allocation (leak) or violating (violation)
 * stack, each as (module base name, build-id, offset); fingerprint_same
 * is the exact test the hash stands for.  Stable across runs, machines
 * with the same binaries and ASLR: never absolute addresses, never line
 * numbers, never pids.  A frame of an unknown module (an absolute
 * address) contributes only the word "?".
 *
 * The symbolic fingerprint hashes the same but with each frame as (module
 * base name, function name, and the inlined functions at that pc): it
 * survives rebuilds that move code (SARIF's partialFingerprints).  A frame
 * without a function name falls back to its offset.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "baseline.h"
#include "hash.h"
#include "input.h"
#include "json.h"
#include "path.h"
#include "xalloc.h"

static uint64_t
fnv(uint64_t h, const char *s)
{
	h = hash_fnv_str(h, s);
	/* A separator, so ("ab","c") and ("a","bc") differ. */
	return hash_fnv(h, "\xff", 1);
}

void
fingerprint_compute(au_finding_t *f)
{
	uint64_t h = HASH_FNV_OFFSET;
	size_t i;

	h = fnv(h, f->cls == AU_LEAK ? "leak" : "violation");
	/* Teardown leaks are findings of their own; the other categories
	 * keep the fingerprints they had before categories (kind va is the
	 * address ranges). */
	if (f->cat == AU_CAT_TEARDOWN)
		h = fnv(h, "teardown");
	h = fnv(h, f->type);
	h = fnv(h, f->api);
	for (i = 0; i < f->stack.n; i++) {
		const au_frame_t *fr = &f->stack.frames[i];
		char off[24];

		if (fr->module == NULL) {
			h = fnv(h, "?");
			continue;
		}
		h = fnv(h, base_name(fr->module));
		h = fnv(h, fr->build_id ? fr->build_id : "");
		snprintf(off, sizeof(off), "%llx",
		    (unsigned long long)fr->offset);
		h = fnv(h, off);
	}
	f->fp = h;
	snprintf(f->fingerprint, sizeof(f->fingerprint), "%016llx",
	    (unsigned long long)h);
}

static bool
same_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

bool
fingerprint_same(const au_finding_t *a, const au_finding_t *b)
{
	size_t i;

	if (a->cls != b->cls || a->cat != b->cat ||
	    !same_str(a->type, b->type) || !same_str(a->api, b->api) ||
	    a->stack.n != b->stack.n)
		return false;
	for (i = 0; i < a->stack.n; i++) {
		const au_frame_t *x = &a->stack.frames[i];
		const au_frame_t *y = &b->stack.frames[i];

		if ((x->module == NULL) != (y->module == NULL))
			return false;
		if (x->module == NULL)
			continue;
		if (strcmp(base_name(x->module), base_name(y->module)) != 0 ||
		    !same_str(x->build_id, y->build_id) ||
		    x->offset != y->offset)
			return false;
	}
	return true;
}

static void
symbolic_one(au_finding_t *f)
{
	uint64_t h = HASH_FNV_OFFSET;
	size_t i, k;

	h = fnv(h, f->cls == AU_LEAK ? "leak/symbolic" : "violation/symbolic");
	if (f->cat == AU_CAT_TEARDOWN)
		h = fnv(h, "teardown");
	h = fnv(h, f->type);
	h = fnv(h, f->api);
	for (i = 0; i < f->stack.n; i++) {
		const au_frame_t *fr = &f->stack.frames[i];
		char off[24];

		if (fr->module == NULL) {
			h = fnv(h, "?");
			continue;
		}
		h = fnv(h, base_name(fr->module));
		if (fr->function == NULL) {
			snprintf(off, sizeof(off), "%llx",
			    (unsigned long long)fr->offset);
			h = fnv(h, off);
			continue;
		}
		for (k = 0; k < fr->ninlined; k++)
			h = fnv(h, fr->inlined[k].function ?
			    fr->inlined[k].function : "?");
		h = fnv(h, fr->function);
	}
	snprintf(f->sym_fingerprint, sizeof(f->sym_fingerprint), "%016llx",
	    (unsigned long long)h);
}

void
fingerprint_symbolic(au_model_t *m)
{
	size_t i;

	for (i = 0; i < m->nleaks; i++)
		symbolic_one(m->leaks[i]);
	for (i = 0; i < m->nviols; i++)
		symbolic_one(m->viols[i]);
}

struct au_baseline_s {
	char **fps;
	size_t n;
};

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool
collect(au_baseline_t *b, const json_t *arr, const char *path,
    const char *what, bool only_baseline, char *err, size_t errsize)
{
	size_t i;

	if (arr == NULL)
		return false;
	if (!json_is_array(arr)) {
		snprintf(err, errsize, "%s: \"%s\" is not an array", path,
		    what);
		return true;
	}
	for (i = 0; i < json_array_size(arr); i++) {
		const json_t *o = json_array_get(arr, i);
		const char *fp = json_str(o, "fingerprint", NULL);
		const char *sfp = json_str(o, "symbolic_fingerprint", NULL);

		if (fp == NULL) {
			snprintf(err, errsize, "%s: %s[%zu] has no "
			    "\"fingerprint\"", path, what, i);
			return true;
		}
		if (only_baseline && strcmp(json_str(o, "suppressed_by", ""),
		    "baseline") != 0)
			continue;
		b->fps = xrealloc(b->fps, (b->n + 2) * sizeof(*b->fps));
		b->fps[b->n++] = xstrdup(fp);
		/* Prefixed, so the two kinds never match each other. */
		if (sfp != NULL)
			b->fps[b->n++] = xasprintf("s:%s", sfp);
	}
	return false;
}

au_baseline_t *
baseline_load(const char *path, char *err, size_t errsize)
{
	json_error_t jerr;
	json_t *doc;
	au_baseline_t *b;
	const char *format;
	size_t len;
	char *buf;

	buf = input_read(path, AU_MAX_REPORT_BYTES, NULL, NULL, &len, err,
	    errsize);
	if (buf == NULL)
		return NULL;
	doc = json_loadb(buf, len, 0, &jerr);
	free(buf);
	if (doc == NULL) {
		snprintf(err, errsize, "%s:%d:%d: invalid JSON: %s", path,
		    jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	format = json_str(doc, "format", "");
	if (strcmp(format, "cuwarden-audit") != 0 ||
	    json_int(doc, "version", 0) != 1) {
		snprintf(err, errsize, "%s: not a baseline: expected a "
		    "document written by " AU_PROG " --json (format "
		    "\"cuwarden-audit\", version 1)", path);
		json_decref(doc);
		return NULL;
	}
	b = xcalloc(1, sizeof(*b));
	if (collect(b, json_object_get(doc, "leaks"), path, "leaks", false,
	    err, errsize) ||
	    collect(b, json_object_get(doc, "violations"), path,
	    "violations", false, err, errsize) ||
	    collect(b, json_object_get(doc, "suppressed"), path,
	    "suppressed", true, err, errsize)) {
		json_decref(doc);
		baseline_free(b);
		return NULL;
	}
	json_decref(doc);
	if (b->n > 1)
		qsort(b->fps, b->n, sizeof(*b->fps), cmp_str);
	return b;
}

static bool
baseline_has1(const au_baseline_t *b, const char *fp)
{
	return b->n > 0 && bsearch(&fp, b->fps, b->n, sizeof(*b->fps),
	    cmp_str) != NULL;
}

static bool
baseline_has(const au_baseline_t *b, const au_finding_t *f)
{
	char sfp[24];

	if (baseline_has1(b, f->fingerprint))
		return true;
	if (f->sym_fingerprint[0] == '\0')
		return false;
	snprintf(sfp, sizeof(sfp), "s:%s", f->sym_fingerprint);
	return baseline_has1(b, sfp);
}

void
baseline_apply(const au_baseline_t *b, au_model_t *m)
{
	size_t i;

	for (i = 0; i < m->nleaks; i++)
		if (m->leaks[i]->suppressed_by == NULL &&
		    baseline_has(b, m->leaks[i]))
			m->leaks[i]->in_baseline = true;
	for (i = 0; i < m->nviols; i++)
		if (m->viols[i]->suppressed_by == NULL &&
		    baseline_has(b, m->viols[i]))
			m->viols[i]->in_baseline = true;
}

void
baseline_free(au_baseline_t *b)
{
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++)
		free(b->fps[i]);
	free(b->fps);
	free(b);
}
