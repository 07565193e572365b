/*
 * baseline.c -- fingerprints, and --baseline (a saved --json document:
 * the findings it holds, matched on their whole symbolized stack, are not
 * reported again; "baselines" below).
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
#include "ingest.h"
#include "input.h"
#include "json.h"
#include "model.h"
#include "path.h"
#include "xalloc.h"

static uint64_t
fnv(uint64_t h, const char *s)
{
	h = hash_fnv_str(h, s);
	/* A separator, so ("ab","c") and ("a","bc") differ. */
	return hash_fnv(h, "\xff", 1);
}

static uint64_t
fnv_offset(uint64_t h, uint64_t offset)
{
	char off[24];

	snprintf(off, sizeof(off), "%llx", (unsigned long long)offset);
	return fnv(h, off);
}

/* The fingerprint's hash (symbolic: the symbolic one's). */
static uint64_t
fp_hash(const au_finding_t *f, bool symbolic)
{
	uint64_t h = HASH_FNV_OFFSET;
	size_t i, k;

	if (symbolic)
		h = fnv(h, f->cls == AU_LEAK ? "leak/symbolic" :
		    "violation/symbolic");
	else
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

		if (fr->python) { /* its place is its identity */
			h = fnv(h, "py");
			h = fnv(h, fr->file ? fr->file : "?");
			h = fnv(h, fr->function ? fr->function : "?");
			h = fnv_offset(h, (uint64_t)fr->line);
			continue;
		}
		if (fr->module == NULL) {
			h = fnv(h, "?");
			continue;
		}
		h = fnv(h, base_name(fr->module));
		if (!symbolic) {
			h = fnv(h, fr->build_id ? fr->build_id : "");
			h = fnv_offset(h, fr->offset);
			continue;
		}
		if (fr->function == NULL) {
			h = fnv_offset(h, fr->offset);
			continue;
		}
		for (k = 0; k < fr->ninlined; k++)
			h = fnv(h, fr->inlined[k].function ?
			    fr->inlined[k].function : "?");
		h = fnv(h, fr->function);
	}
	return h;
}

void
fingerprint_compute(au_finding_t *f)
{
	f->fp = fp_hash(f, false);
	snprintf(f->fingerprint, sizeof(f->fingerprint), "%016llx",
	    (unsigned long long)f->fp);
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

		if ((x->module == NULL) != (y->module == NULL) ||
		    x->python != y->python)
			return false;
		if (x->python) {
			if (!same_str(x->file, y->file) ||
			    !same_str(x->function, y->function) ||
			    x->line != y->line)
				return false;
			continue;
		}
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
	snprintf(f->sym_fingerprint, sizeof(f->sym_fingerprint), "%016llx",
	    (unsigned long long)fp_hash(f, true));
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

/* ------------------------------------------------------------ baselines */

/*
 * A baseline holds the match key of every finding of a saved --json
 * document (leaks, violations, and those it kept as suppressed by
 * "baseline"), computed from the stacks it saved; a finding is in the
 * baseline when its own key is there.  The key hashes the class, the
 * category (leaks), the kind or violation type, the API and every frame:
 * a symbolized frame as its inlined calls and its function, each with
 * its source file's base name and (exact) its line; a frame without a
 * function as its module's base name and (exact) offset; an address in no
 * module as "?".  Names are hashed as a --json document holds them (bytes
 * that are not UTF-8 as U+FFFD), so a finding and its saved copy agree.
 */

struct au_baseline_s {
	uint64_t *keys; /* sorted */
	size_t n;
	au_bmatch_t how;
};

static uint64_t
fnv_name(uint64_t h, const char *s)
{
	const unsigned char *p;
	json_t *j;

	if (s == NULL)
		s = "";
	for (p = (const unsigned char *)s; *p != '\0' && *p < 0x80; p++)
		;
	if (*p == '\0')
		return fnv(h, s);
	j = json_utf8(s);
	h = fnv(h, json_string_value(j));
	json_decref(j);
	return h;
}

static uint64_t
fnv_place(uint64_t h, const char *tag, const char *fn, const char *file,
    int line, au_bmatch_t how)
{
	char buf[16];

	h = fnv(h, tag);
	h = fnv_name(h, fn);
	h = fnv_name(h, base_name(file));
	if (how == AU_BMATCH_EXACT) {
		snprintf(buf, sizeof(buf), "%d", line);
		h = fnv(h, buf);
	}
	return h;
}

static uint64_t
match_key(au_class_t cls, au_cat_t cat, const char *type, const char *api,
    const au_stack_t *s, au_bmatch_t how)
{
	uint64_t h = HASH_FNV_OFFSET;
	size_t i, k;

	h = fnv(h, cls == AU_LEAK ? "leak" : "violation");
	h = fnv(h, cls == AU_LEAK ? cat_name(cat) : "");
	h = fnv_name(h, type);
	h = fnv_name(h, api);
	for (i = 0; i < s->n; i++) {
		const au_frame_t *fr = &s->frames[i];
		char off[24];

		if (fr->function != NULL) {
			for (k = 0; k < fr->ninlined; k++)
				h = fnv_place(h, "i",
				    fr->inlined[k].function ?
				    fr->inlined[k].function : "?",
				    fr->inlined[k].file, fr->inlined[k].line,
				    how);
			h = fnv_place(h, "f", fr->function, fr->file,
			    fr->line, how);
		} else if (fr->module != NULL) {
			h = fnv(h, "@");
			h = fnv_name(h, base_name(fr->module));
			if (how == AU_BMATCH_EXACT) {
				snprintf(off, sizeof(off), "%llx",
				    (unsigned long long)fr->offset);
				h = fnv(h, off);
			}
		} else {
			h = fnv(h, "?");
		}
	}
	return h;
}

bool
baseline_match_parse(const char *name, au_bmatch_t *how)
{
	if (strcmp(name, "exact") == 0)
		*how = AU_BMATCH_EXACT;
	else if (strcmp(name, "function") == 0)
		*how = AU_BMATCH_FUNCTION;
	else
		return false;
	return true;
}

static int
cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Does the saved frame fr (w names it) hold what exact matching needs:
 * a line (and a file) wherever it names a function?  Writes the message
 * and returns true when not. */
static bool
lacks_lines(const json_t *fr, const char *path, const char *w, char *err,
    size_t errsize)
{
	const json_t *inl = json_object_get(fr, "inlined");
	const char *fn = json_str(fr, "function", "");
	size_t k;

	if (fn[0] != '\0' && (json_object_get(fr, "line") == NULL ||
	    json_object_get(fr, "file") == NULL))
		goto lacks;
	for (k = 0; k < json_array_size(inl); k++) {
		const json_t *in = json_array_get(inl, k);

		if (json_object_get(in, "line") == NULL ||
		    json_object_get(in, "file") == NULL)
			goto lacks;
	}
	return false;
lacks:
	snprintf(err, errsize, "%s: %s names a function but not its "
	    "\"file\" and \"line\": --baseline-match=exact matches every "
	    "frame's function, file and line, and this baseline does not "
	    "hold them (write it again with " AU_PROG " --json, or use "
	    "--baseline-match=function)", path, w);
	return true;
}

/* The match key of entry o (w names it) of a saved document into b.
 * Returns true on error (message in err). */
static bool
add_entry(au_baseline_t *b, const json_t *o, au_class_t cls,
    const char *path, const char *w, char *err, size_t errsize)
{
	const json_t *st = json_object_get(o, "stack");
	const char *type, *api, *cat;
	au_cat_t c = AU_CAT_LEAK;
	au_stack_t s;
	size_t i;
	bool bad;

	type = json_str(o, cls == AU_LEAK ? "kind" : "type", NULL);
	if (type == NULL) {
		snprintf(err, errsize, "%s: %s has no \"%s\"", path, w,
		    cls == AU_LEAK ? "kind" : "type");
		return true;
	}
	api = json_str(o, "api", "");
	if (cls == AU_LEAK) {
		/* As ingest_leak reads a report without categories. */
		cat = json_str(o, "category", strcmp(type, "va") == 0 ?
		    "address_range" : "leak");
		if (!cat_parse(cat, &c))
			c = AU_CAT_LEAK;
	}
	if (!json_is_array(st)) {
		snprintf(err, errsize, "%s: %s has no \"stack\" array: a "
		    "baseline is matched on each finding's whole stack, as "
		    AU_PROG " --json writes it", path, w);
		return true;
	}
	if (b->how == AU_BMATCH_EXACT)
		for (i = 0; i < json_array_size(st); i++) {
			char wf[96];

			snprintf(wf, sizeof(wf), "%s.stack[%zu]", w, i);
			if (lacks_lines(json_array_get(st, i), path, wf, err,
			    errsize))
				return true;
		}
	bad = ingest_doc_stack(path, o, w, "stack", &s, err, errsize);
	if (!bad) {
		b->keys = xrealloc(b->keys, (b->n + 1) * sizeof(*b->keys));
		b->keys[b->n++] = match_key(cls, c, type, api, &s, b->how);
	}
	stack_free(&s);
	return bad;
}

static bool
collect(au_baseline_t *b, const json_t *arr, const char *path,
    const char *what, char *err, size_t errsize)
{
	bool suppressed = strcmp(what, "suppressed") == 0;
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
		au_class_t cls = strcmp(what, "violations") == 0 ?
		    AU_VIOLATION : AU_LEAK;
		char w[64];

		snprintf(w, sizeof(w), "%s[%zu]", what, i);
		if (!json_is_object(o)) {
			snprintf(err, errsize, "%s: %s: expected an object",
			    path, w);
			return true;
		}
		/* What the baseline run itself left out as in its baseline
		 * is still the baseline's; what rules suppressed is not. */
		if (suppressed && strcmp(json_str(o, "suppressed_by", ""),
		    "baseline") != 0)
			continue;
		if (suppressed && strcmp(json_str(o, "class", ""),
		    "violation") == 0)
			cls = AU_VIOLATION;
		if (add_entry(b, o, cls, path, w, err, errsize))
			return true;
	}
	return false;
}

au_baseline_t *
baseline_load(const char *path, au_bmatch_t how, char *err, size_t errsize)
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
	b->how = how;
	if (collect(b, json_object_get(doc, "leaks"), path, "leaks", err,
	    errsize) ||
	    collect(b, json_object_get(doc, "violations"), path,
	    "violations", err, errsize) ||
	    collect(b, json_object_get(doc, "suppressed"), path,
	    "suppressed", err, errsize)) {
		json_decref(doc);
		baseline_free(b);
		return NULL;
	}
	json_decref(doc);
	if (b->n > 1)
		qsort(b->keys, b->n, sizeof(*b->keys), cmp_key);
	return b;
}

static bool
baseline_has(const au_baseline_t *b, const au_finding_t *f)
{
	uint64_t k = match_key(f->cls, f->cat, f->type, f->api, &f->stack,
	    b->how);

	return b->n > 0 && bsearch(&k, b->keys, b->n, sizeof(*b->keys),
	    cmp_key) != NULL;
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
	if (b == NULL)
		return;
	free(b->keys);
	free(b);
}
