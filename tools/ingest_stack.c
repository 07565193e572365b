/*
 * ingest_stack.c -- the stacks of a report's findings (ingest_int.h): a
 * per-process report's frames name a module by its index in "modules"
 * (-1: none) and an offset; a merged document's frames carry the module
 * path and build-id and what the symbolizer found then (also read for
 * --baseline: ingest_doc_stack, ingest.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest.h"
#include "ingest_int.h"
#include "json.h"
#include "xalloc.h"

static bool
parse_hex(const char *s, uint64_t *out)
{
	char *end;

	if (s == NULL || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') ||
	    s[2] == '\0')
		return true;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return errno != 0 || *end != '\0';
}

/* Notes are static text in a frame: the known ones, else a generic one. */
static const char *
static_note(const char *s)
{
	static const char *const known[] = { "build-id mismatch",
		"module file not found", "no debug info", "not an ELF file",
		"unknown module", "module path unknown", "cannot start libdwfl",
		"cannot read the ELF file", "not a regular file",
		"module file too large" };
	size_t i;

	if (s == NULL)
		return NULL;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(s, known[i]) == 0)
			return known[i];
	return "not symbolized";
}

/* A frame of a merged document: module path, build-id, offset and what
 * the symbolizer found then. */
static bool
read_merged_frame(ingest_rd_t *r, const json_t *fr, const char *w,
    au_frame_t *f)
{
	const json_t *mod = json_object_get(fr, "module"), *inl;
	const char *fn = NULL, *file = NULL, *bid = "", *note = NULL;
	long long line = 0;
	size_t k;

	if (mod != NULL && !json_is_null(mod) && !json_is_string(mod))
		return ingest_fail(r, "%s.module: expected a path or null",
		    w);
	if (ingest_get_str(r, fr, w, "build_id", "", &bid) ||
	    ingest_get_str(r, fr, w, "function", "", &fn) ||
	    ingest_get_str(r, fr, w, "file", "", &file) ||
	    ingest_get_str(r, fr, w, "note", "", &note) ||
	    ingest_get_int(r, fr, w, "line", 0, &line))
		return true;
	f->module = json_is_string(mod) ? xstrdup(json_string_value(mod)) :
	    NULL;
	f->build_id = xstrdup(bid);
	f->function = fn[0] ? xstrdup(fn) : NULL;
	f->file = file[0] ? xstrdup(file) : NULL;
	f->line = line > 0 && line < 1 << 30 ? (int)line : 0;
	f->note = note[0] ? static_note(note) : NULL;
	f->symbolized = true;
	inl = json_object_get(fr, "inlined");
	if (inl != NULL && !json_is_array(inl))
		return ingest_fail(r, "%s.inlined: expected an array", w);
	if (json_array_size(inl) > 0)
		f->inlined = xcalloc(json_array_size(inl), sizeof(*f->inlined));
	for (k = 0; k < json_array_size(inl); k++) {
		const json_t *in = json_array_get(inl, k);
		const char *ifn = "", *ifile = "";
		long long iline = 0;
		char wi[200];

		snprintf(wi, sizeof(wi), "%s.inlined[%zu]", w, k);
		if (!json_is_object(in))
			return ingest_fail(r, "%s: expected an object", wi);
		if (ingest_get_str(r, in, wi, "function", "", &ifn) ||
		    ingest_get_str(r, in, wi, "file", "", &ifile) ||
		    ingest_get_int(r, in, wi, "line", 0, &iline))
			return true;
		f->inlined[k].function = ifn[0] ? xstrdup(ifn) : NULL;
		f->inlined[k].file = ifile[0] ? xstrdup(ifile) : NULL;
		f->inlined[k].line = iline > 0 && iline < 1 << 30 ?
		    (int)iline : 0;
		f->ninlined++;
	}
	return false;
}

/* A Python frame (doc/report-schema.md): {"python": {"file", "function",
 * "line"}}, in a per-process report and a merged document alike. */
static bool
read_python_frame(ingest_rd_t *r, const json_t *fr, const char *w,
    au_frame_t *f)
{
	const json_t *py = json_object_get(fr, "python");
	const char *fn = "", *file = "";
	long long line = 0;
	char wp[200];

	snprintf(wp, sizeof(wp), "%s.python", w);
	if (!json_is_object(py))
		return ingest_fail(r, "%s: expected an object", wp);
	if (ingest_get_str(r, py, wp, "file", "", &file) ||
	    ingest_get_str(r, py, wp, "function", "", &fn) ||
	    ingest_get_int(r, py, wp, "line", 0, &line))
		return true;
	f->build_id = xstrdup("");
	f->function = fn[0] ? xstrdup(fn) : NULL;
	f->file = file[0] ? xstrdup(file) : NULL;
	f->line = line > 0 && line < 1 << 30 ? (int)line : 0;
	f->python = true;
	f->symbolized = true; /* nothing for the symbolizer to do */
	return false;
}

bool
ingest_stack(ingest_rd_t *r, const json_t *o, const char *where,
    const char *key, au_stack_t *out)
{
	const json_t *a = json_object_get(o, key);
	size_t i, nmod = json_array_size(r->modules);

	out->frames = NULL;
	out->n = 0;
	if (a == NULL || json_is_null(a))
		return false;
	if (!json_is_array(a))
		return ingest_fail(r, "%s.%s: expected an array of frames",
		    where, key);
	out->frames = xcalloc(json_array_size(a) + 1, sizeof(au_frame_t));
	for (i = 0; i < json_array_size(a); i++) {
		const json_t *fr = json_array_get(a, i);
		au_frame_t *f = &out->frames[out->n];
		const char *off = "";
		long long mod = -1;
		char w[160];

		snprintf(w, sizeof(w), "%s.%s[%zu]", where, key, i);
		if (!json_is_object(fr))
			return ingest_fail(r, "%s: expected an object", w);
		if (json_object_get(fr, "python") != NULL) {
			out->n++; /* owned now, freed on error too */
			if (read_python_frame(r, fr, w, f))
				return true;
			continue;
		}
		if (r->merged) {
			if (ingest_get_str(r, fr, w, "offset", NULL, &off))
				return true;
			if (parse_hex(off, &f->offset))
				return ingest_fail(r, "%s.offset: \"%s\" is "
				    "not a hex number \"0x...\"", w, off);
			out->n++; /* owned now, freed on error too */
			if (read_merged_frame(r, fr, w, f))
				return true;
			continue;
		}
		if (ingest_get_int(r, fr, w, "module", -1, &mod) ||
		    ingest_get_str(r, fr, w, "offset", NULL, &off))
			return true;
		if (parse_hex(off, &f->offset))
			return ingest_fail(r, "%s.offset: \"%s\" is not a "
			    "hex number \"0x...\"", w, off);
		if (mod >= 0) {
			const json_t *mo;
			const char *path, *bid;

			if ((size_t)mod >= nmod)
				return ingest_fail(r, "%s.module: index %lld "
				    "out of range (%zu modules)", w, mod,
				    nmod);
			mo = json_array_get(r->modules, (size_t)mod);
			path = json_str(mo, "path", "");
			bid = json_str(mo, "build_id", "");
			if (path[0] == '\0')
				path = r->proc->exe;
			f->module = xstrdup(path);
			f->build_id = xstrdup(bid);
		} else if (mod != -1) {
			return ingest_fail(r, "%s.module: %lld is neither a "
			    "module index nor -1", w, mod);
		} else {
			f->build_id = xstrdup("");
		}
		out->n++;
	}
	return false;
}

bool
ingest_doc_stack(const char *path, const json_t *o, const char *where,
    const char *key, au_stack_t *out, char *err, size_t errsize)
{
	ingest_rd_t r;

	memset(&r, 0, sizeof(r));
	r.path = path;
	r.err = err;
	r.errsize = errsize;
	r.merged = true;
	return ingest_stack(&r, o, where, key, out);
}
