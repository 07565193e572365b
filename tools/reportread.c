/*
 * reportread.c -- reads the per-process reports the shim writes (format
 * "cuwarden-report", version 1, doc/report-schema.md) and merges their
 * findings into one model.
 *
 * Invariants: a report is checked member by member before anything is
 * taken from it, so a bad file is refused whole, with its name, the
 * member ("leaks[2].stack[0].module") and what is wrong; JSON syntax
 * errors carry line:column.  Unknown members are ignored (forward
 * compatibility).  Findings with the same fingerprint are one finding,
 * whatever process they came from: counts and bytes add up, pids,
 * devices and example addresses are collected.
 *
 * A merged document written by --json ("cuwarden-audit" version 1) is read
 * too: its processes, and its findings (reported and suppressed alike,
 * suppressions are applied again) with their symbolized frames, so saved
 * audits can be rendered again and merged with each other.
 *
 * Each process is counted once (proc_seen): a process is known by a hash
 * of its pid, ppid, command, exe, mode, time, coverage and summary (what
 * a merged document keeps of it), and a report file by its device and
 * inode.  Within one input (a run's directory, a DIR, a merged document)
 * every report is a process of its own -- the shim names each report
 * uniquely, so two with one identity there are two processes that got the
 * same pid -- while across inputs the same identity is the same process
 * read twice.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "diag.h"
#include "input.h"
#include "json.h"
#include "num.h"
#include "xalloc.h"

/* ------------------------------------------------------------ the index */

struct au_index_s {
	size_t cap; /* power of two */
	size_t n;
	au_finding_t **slots;
};

static au_finding_t **
index_slot(au_model_t *m, uint64_t fp, au_class_t cls)
{
	struct au_index_s *ix = m->index;
	size_t i;

	if (ix == NULL) {
		ix = m->index = xcalloc(1, sizeof(*ix));
		ix->cap = 256;
		ix->slots = xcalloc(ix->cap, sizeof(*ix->slots));
	}
	if (2 * (ix->n + 1) > ix->cap) {
		struct au_index_s old = *ix;

		ix->cap *= 2;
		ix->slots = xcalloc(ix->cap, sizeof(*ix->slots));
		for (i = 0; i < old.cap; i++) {
			au_finding_t *f = old.slots[i];
			size_t j;

			if (f == NULL)
				continue;
			j = (size_t)(f->fp ^ f->cls) & (ix->cap - 1);
			while (ix->slots[j] != NULL)
				j = (j + 1) & (ix->cap - 1);
			ix->slots[j] = f;
		}
		free(old.slots);
	}
	i = (size_t)(fp ^ cls) & (ix->cap - 1);
	while (ix->slots[i] != NULL &&
	    !(ix->slots[i]->fp == fp && ix->slots[i]->cls == cls))
		i = (i + 1) & (ix->cap - 1);
	return &ix->slots[i];
}

/* ------------------------------------------------------------ checking */

typedef struct rd_s {
	const char *path;
	char *err;
	size_t errsize;
	const au_process_t *proc; /* NULL for a merged document */
	json_t *modules;
	bool merged; /* a "cuwarden-audit" document: symbolized frames */
} rd_t;

static bool
fail(rd_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool
fail(rd_t *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, r->errsize, "%s: ", r->path);
	if (n < 0 || (size_t)n >= r->errsize)
		return true;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->errsize - (size_t)n, fmt, ap);
	va_end(ap);
	return true;
}

/* Member `key` of o as a string; absent is allowed when dflt != NULL. */
static bool
get_str(rd_t *r, const json_t *o, const char *where, const char *key,
    const char *dflt, const char **out)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL || (json_is_null(v) && dflt != NULL)) {
		if (dflt == NULL)
			return fail(r, "%s: the member \"%s\" is missing",
			    where, key);
		*out = dflt;
		return false;
	}
	if (!json_is_string(v))
		return fail(r, "%s.%s: expected a string", where, key);
	*out = json_string_value(v);
	return false;
}

static bool
get_uint(rd_t *r, const json_t *o, const char *where, const char *key,
    bool required, uint64_t dflt, uint64_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL) {
		if (required)
			return fail(r, "%s: the member \"%s\" is missing",
			    where, key);
		*out = dflt;
		return false;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return fail(r, "%s.%s: expected a non-negative integer", where,
		    key);
	*out = (uint64_t)json_integer_value(v);
	return false;
}

static bool
get_int(rd_t *r, const json_t *o, const char *where, const char *key,
    long long dflt, long long *out)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL || json_is_null(v)) {
		*out = dflt;
		return false;
	}
	if (!json_is_integer(v))
		return fail(r, "%s.%s: expected an integer", where, key);
	*out = (long long)json_integer_value(v);
	return false;
}

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

/* ------------------------------------------------------------ stacks */

void
stack_free(au_stack_t *s)
{
	size_t i, j;

	for (i = 0; i < s->n; i++) {
		au_frame_t *f = &s->frames[i];

		free(f->module);
		free(f->build_id);
		free(f->function);
		free(f->file);
		for (j = 0; j < f->ninlined; j++) {
			free(f->inlined[j].function);
			free(f->inlined[j].file);
		}
		free(f->inlined);
	}
	free(s->frames);
	s->frames = NULL;
	s->n = 0;
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
read_merged_frame(rd_t *r, const json_t *fr, const char *w, au_frame_t *f)
{
	const json_t *mod = json_object_get(fr, "module"), *inl;
	const char *fn = NULL, *file = NULL, *bid = "", *note = NULL;
	long long line = 0;
	size_t k;

	if (mod != NULL && !json_is_null(mod) && !json_is_string(mod))
		return fail(r, "%s.module: expected a path or null", w);
	if (get_str(r, fr, w, "build_id", "", &bid) ||
	    get_str(r, fr, w, "function", "", &fn) ||
	    get_str(r, fr, w, "file", "", &file) ||
	    get_str(r, fr, w, "note", "", &note) ||
	    get_int(r, fr, w, "line", 0, &line))
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
		return fail(r, "%s.inlined: expected an array", w);
	if (json_array_size(inl) > 0)
		f->inlined = xcalloc(json_array_size(inl), sizeof(*f->inlined));
	for (k = 0; k < json_array_size(inl); k++) {
		const json_t *in = json_array_get(inl, k);
		const char *ifn = "", *ifile = "";
		long long iline = 0;
		char wi[200];

		snprintf(wi, sizeof(wi), "%s.inlined[%zu]", w, k);
		if (!json_is_object(in))
			return fail(r, "%s: expected an object", wi);
		if (get_str(r, in, wi, "function", "", &ifn) ||
		    get_str(r, in, wi, "file", "", &ifile) ||
		    get_int(r, in, wi, "line", 0, &iline))
			return true;
		f->inlined[k].function = ifn[0] ? xstrdup(ifn) : NULL;
		f->inlined[k].file = ifile[0] ? xstrdup(ifile) : NULL;
		f->inlined[k].line = iline > 0 && iline < 1 << 30 ?
		    (int)iline : 0;
		f->ninlined++;
	}
	return false;
}

static bool
read_stack(rd_t *r, const json_t *o, const char *where, const char *key,
    au_stack_t *out)
{
	const json_t *a = json_object_get(o, key);
	size_t i, nmod = json_array_size(r->modules);

	out->frames = NULL;
	out->n = 0;
	if (a == NULL || json_is_null(a))
		return false;
	if (!json_is_array(a))
		return fail(r, "%s.%s: expected an array of frames", where,
		    key);
	out->frames = xcalloc(json_array_size(a) + 1, sizeof(au_frame_t));
	for (i = 0; i < json_array_size(a); i++) {
		const json_t *fr = json_array_get(a, i);
		au_frame_t *f = &out->frames[out->n];
		const char *off = "";
		long long mod = -1;
		char w[160];

		snprintf(w, sizeof(w), "%s.%s[%zu]", where, key, i);
		if (!json_is_object(fr))
			return fail(r, "%s: expected an object", w);
		if (r->merged) {
			if (get_str(r, fr, w, "offset", NULL, &off))
				return true;
			if (parse_hex(off, &f->offset))
				return fail(r, "%s.offset: \"%s\" is not a hex "
				    "number \"0x...\"", w, off);
			out->n++; /* owned now, freed on error too */
			if (read_merged_frame(r, fr, w, f))
				return true;
			continue;
		}
		if (get_int(r, fr, w, "module", -1, &mod) ||
		    get_str(r, fr, w, "offset", NULL, &off))
			return true;
		if (parse_hex(off, &f->offset))
			return fail(r, "%s.offset: \"%s\" is not a hex number "
			    "\"0x...\"", w, off);
		if (mod >= 0) {
			const json_t *mo;
			const char *path, *bid;

			if ((size_t)mod >= nmod)
				return fail(r, "%s.module: index %lld out of "
				    "range (%zu modules)", w, mod, nmod);
			mo = json_array_get(r->modules, (size_t)mod);
			path = json_str(mo, "path", "");
			bid = json_str(mo, "build_id", "");
			if (path[0] == '\0')
				path = r->proc->exe;
			f->module = xstrdup(path);
			f->build_id = xstrdup(bid);
		} else if (mod != -1) {
			return fail(r, "%s.module: %lld is neither a module "
			    "index nor -1", w, mod);
		} else {
			f->build_id = xstrdup("");
		}
		out->n++;
	}
	return false;
}

/* ------------------------------------------------------------ findings */

static void
add_pid(au_finding_t *f, long pid)
{
	size_t i;

	for (i = 0; i < f->npids; i++)
		if (f->pids[i] == pid)
			return;
	f->pids = xrealloc(f->pids, (f->npids + 1) * sizeof(*f->pids));
	f->pids[f->npids++] = pid;
}

static void
add_device(au_finding_t *f, int dev)
{
	size_t i;

	for (i = 0; i < f->ndevices; i++)
		if (f->devices[i] == dev)
			return;
	f->devices = xrealloc(f->devices,
	    (f->ndevices + 1) * sizeof(*f->devices));
	f->devices[f->ndevices++] = dev;
}

static void
add_address(au_finding_t *f, const char *a)
{
	if (a == NULL || f->naddresses >= AU_MAX_ADDRESSES)
		return;
	if (f->addresses == NULL)
		f->addresses = xcalloc(AU_MAX_ADDRESSES,
		    sizeof(*f->addresses));
	f->addresses[f->naddresses++] = xstrdup(a);
}

static void
finding_free(au_finding_t *f)
{
	size_t i;

	free(f->type);
	free(f->kind);
	free(f->api);
	free(f->owner);
	free(f->cuda_error);
	free(f->devices);
	for (i = 0; i < f->naddresses; i++)
		free(f->addresses[i]);
	free(f->addresses);
	stack_free(&f->stack);
	stack_free(&f->alloc_stack);
	stack_free(&f->free_stack);
	free(f->pids);
	free(f);
}

/* Adds f (fingerprint computed) to m, or merges it into the finding with
 * the same fingerprint.  Takes f. */
static void
model_add(au_model_t *m, au_finding_t *f)
{
	au_finding_t **slot, *g;
	size_t i;

	fingerprint_compute(f);
	slot = index_slot(m, f->fp, f->cls);
	g = *slot;
	if (g == NULL) {
		f->seq = m->seq++;
		*slot = f;
		m->index->n++;
		if (f->cls == AU_LEAK) {
			m->leaks = xrealloc(m->leaks,
			    (m->nleaks + 1) * sizeof(*m->leaks));
			m->leaks[m->nleaks++] = f;
		} else {
			m->viols = xrealloc(m->viols,
			    (m->nviols + 1) * sizeof(*m->viols));
			m->viols[m->nviols++] = f;
		}
		return;
	}
	g->count = sat_add(g->count, f->count);
	g->bytes = sat_add(g->bytes, f->bytes);
	if (f->min_size < g->min_size)
		g->min_size = f->min_size;
	if (f->max_size > g->max_size)
		g->max_size = f->max_size;
	for (i = 0; i < f->npids; i++)
		add_pid(g, f->pids[i]);
	for (i = 0; i < f->ndevices; i++)
		add_device(g, f->devices[i]);
	for (i = 0; i < f->naddresses; i++)
		add_address(g, f->addresses[i]);
	if (g->owner[0] == '\0' && f->owner[0] != '\0') {
		free(g->owner);
		g->owner = xstrdup(f->owner);
	}
	finding_free(f);
}

/* What a merged document adds to a finding: every pid and device, the
 * size range, the count of a violation group. */
static bool
read_merged_extras(rd_t *r, const json_t *o, const char *w, au_finding_t *f)
{
	const json_t *pids = json_object_get(o, "pids");
	const json_t *devs = json_object_get(o, "devices");
	const json_t *sat;
	uint64_t v;
	size_t i;

	if (!json_is_array(pids) || json_array_size(pids) == 0)
		return fail(r, "%s.pids: expected a non-empty array", w);
	for (i = 0; i < json_array_size(pids); i++) {
		if (!json_is_integer(json_array_get(pids, i)))
			return fail(r, "%s.pids[%zu]: expected an integer", w,
			    i);
		add_pid(f, (long)json_integer_value(json_array_get(pids, i)));
	}
	if (devs != NULL && !json_is_array(devs))
		return fail(r, "%s.devices: expected an array", w);
	for (i = 0; i < json_array_size(devs); i++)
		if (json_is_integer(json_array_get(devs, i)))
			add_device(f, (int)json_integer_value(
			    json_array_get(devs, i)));
	if (get_uint(r, o, w, "min_size", false, f->min_size, &v))
		return true;
	f->min_size = v;
	if (get_uint(r, o, w, "max_size", false, f->max_size, &v))
		return true;
	f->max_size = v;
	/* Sums the writer could not hold: lower bounds, saturated again. */
	sat = json_object_get(o, "saturated");
	for (i = 0; i < json_array_size(sat); i++) {
		const char *k = json_string_value(json_array_get(sat, i));

		if (k != NULL && strcmp(k, "bytes") == 0)
			f->bytes = UINT64_MAX;
		else if (k != NULL && strcmp(k, "count") == 0)
			f->count = UINT64_MAX;
	}
	if (f->cls == AU_VIOLATION) {
		const json_t *addrs = json_object_get(o, "addresses");

		if (get_uint(r, o, w, "count", false, 1, &v))
			return true;
		if (f->count != UINT64_MAX)
			f->count = v > 0 ? v : 1;
		if (json_is_array(addrs) && json_array_size(addrs) > 0) {
			for (i = 0; i < f->naddresses; i++)
				free(f->addresses[i]);
			f->naddresses = 0;
			for (i = 0; i < json_array_size(addrs); i++)
				if (json_is_string(json_array_get(addrs, i)))
					add_address(f, json_string_value(
					    json_array_get(addrs, i)));
		}
	}
	return false;
}

static bool
read_leak(rd_t *r, au_model_t *m, const json_t *o, size_t idx)
{
	au_finding_t *f;
	const char *kind = "", *api = "", *owner = "";
	uint64_t size = 0, count = 0, bytes = 0;
	long long dev = -1;
	const json_t *addrs;
	char w[64];
	size_t i;

	snprintf(w, sizeof(w), "leaks[%zu]", idx);
	if (!json_is_object(o))
		return fail(r, "%s: expected an object", w);
	if (get_str(r, o, w, "kind", NULL, &kind) ||
	    get_str(r, o, w, "api", "", &api) ||
	    get_str(r, o, w, "owner", "", &owner) ||
	    get_uint(r, o, w, "count", true, 0, &count) ||
	    get_uint(r, o, w, "size", false, 0, &size) ||
	    get_uint(r, o, w, "bytes", false, sat_mul(size, count), &bytes) ||
	    get_int(r, o, w, "device", -1, &dev))
		return true;
	if (dev < -1 || dev > 65535)
		return fail(r, "%s.device: %lld is not a device ordinal", w,
		    dev);
	if (size == 0 && count > 0)
		size = bytes / count;
	addrs = json_object_get(o, "addresses");
	if (addrs != NULL && !json_is_array(addrs))
		return fail(r, "%s.addresses: expected an array", w);
	f = xcalloc(1, sizeof(*f));
	f->cls = AU_LEAK;
	f->type = xstrdup(kind);
	f->kind = xstrdup(kind);
	f->api = xstrdup(api);
	f->owner = xstrdup(owner);
	f->device = (int)dev;
	add_device(f, (int)dev);
	f->size = f->min_size = f->max_size = size;
	f->count = count;
	f->bytes = bytes;
	for (i = 0; i < json_array_size(addrs); i++) {
		const json_t *a = json_array_get(addrs, i);

		if (!json_is_string(a)) {
			finding_free(f);
			return fail(r, "%s.addresses[%zu]: expected a string "
			    "\"0x...\"", w, i);
		}
		add_address(f, json_string_value(a));
	}
	if (r->merged ? read_merged_extras(r, o, w, f) :
	    (add_pid(f, r->proc->pid), false)) {
		finding_free(f);
		return true;
	}
	if (read_stack(r, o, w, "stack", &f->stack)) {
		finding_free(f);
		return true;
	}
	model_add(m, f);
	return false;
}

static bool
read_violation(rd_t *r, au_model_t *m, const json_t *o, size_t idx)
{
	au_finding_t *f;
	const char *type = "", *api = "", *addr = "", *kind = "";
	const char *owner = "", *cerr = "";
	uint64_t size = 0;
	long long dev = -1;
	char w[64];

	snprintf(w, sizeof(w), "violations[%zu]", idx);
	if (!json_is_object(o))
		return fail(r, "%s: expected an object", w);
	if (get_str(r, o, w, "type", NULL, &type) ||
	    get_str(r, o, w, "api", "", &api) ||
	    get_str(r, o, w, "address", "", &addr) ||
	    get_str(r, o, w, "kind", "", &kind) ||
	    get_str(r, o, w, "owner", "", &owner) ||
	    get_str(r, o, w, "cuda_error", "", &cerr) ||
	    get_uint(r, o, w, "size", false, 0, &size) ||
	    get_int(r, o, w, "device", -1, &dev))
		return true;
	f = xcalloc(1, sizeof(*f));
	f->cls = AU_VIOLATION;
	f->type = xstrdup(type);
	f->kind = xstrdup(kind);
	f->api = xstrdup(api);
	f->owner = xstrdup(owner);
	f->cuda_error = cerr[0] ? xstrdup(cerr) : NULL;
	f->device = (int)dev;
	add_device(f, (int)dev);
	f->size = f->min_size = f->max_size = size;
	f->count = 1;
	if (addr[0])
		add_address(f, addr);
	if (r->merged ? read_merged_extras(r, o, w, f) :
	    (add_pid(f, r->proc->pid), false)) {
		finding_free(f);
		return true;
	}
	if (read_stack(r, o, w, "stack", &f->stack) ||
	    read_stack(r, o, w, "alloc_stack", &f->alloc_stack) ||
	    read_stack(r, o, w, "free_stack", &f->free_stack)) {
		finding_free(f);
		return true;
	}
	model_add(m, f);
	return false;
}

/* ------------------------------------------------------------ a report */

static bool
check_header(rd_t *r, const json_t *doc)
{
	const char *format;
	const json_t *v;
	const json_t *cov;

	if (!json_is_object(doc))
		return fail(r, "not a cuwarden report: the document is not a "
		    "JSON object");
	format = json_str(doc, "format", NULL);
	if (format == NULL)
		return fail(r, "not a cuwarden report: no \"format\" member");
	if (strcmp(format, "cuwarden-report") != 0)
		return fail(r, "not a cuwarden report: format is \"%s\", "
		    "expected \"cuwarden-report\"", format);
	v = json_object_get(doc, "version");
	if (!json_is_integer(v))
		return fail(r, "\"version\" is missing or not an integer");
	if (json_integer_value(v) != 1)
		return fail(r, "report version %lld is not supported (this "
		    "tool reads version 1)",
		    (long long)json_integer_value(v));
	if (!json_is_integer(json_object_get(doc, "pid")))
		return fail(r, "\"pid\" is missing or not an integer");
	cov = json_object_get(doc, "coverage");
	if (!json_is_object(cov))
		return fail(r, "\"coverage\" is missing or not an object");
	v = json_object_get(cov, "hooks_active");
	if (v != NULL && !json_is_boolean(v))
		return fail(r, "coverage.hooks_active: expected true or false");
	v = json_object_get(doc, "modules");
	if (v != NULL && !json_is_array(v))
		return fail(r, "\"modules\" is not an array");
	v = json_object_get(doc, "leaks");
	if (v != NULL && !json_is_array(v))
		return fail(r, "\"leaks\" is not an array");
	v = json_object_get(doc, "violations");
	if (v != NULL && !json_is_array(v))
		return fail(r, "\"violations\" is not an array");
	return false;
}

/* ------------------------------------------------------------ processes */

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* The identity of the process a report (or a merged document's process
 * entry) describes.  "exit" is left out: the tool may complete it (the
 * status it saw), so a merged document would not match its reports. */
static uint64_t
proc_key(const json_t *o, long pid)
{
	static const char *const keys[] = { "command", "exe", "mode", "time",
		"coverage", "summary" };
	json_t *k = json_object();
	uint64_t h = FNV_OFFSET;
	const unsigned char *p;
	size_t i;
	char *s;

	json_object_set_new(k, "pid", json_integer(pid));
	json_object_set_new(k, "ppid", json_integer(json_int(o, "ppid", 0)));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(o, keys[i]);

		if (v == NULL && strcmp(keys[i], "command") == 0)
			v = json_array(); /* merged documents write [] */
		else if (v != NULL)
			json_incref(v);
		if (v != NULL)
			json_object_set_new(k, keys[i], v);
	}
	s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(k);
	for (p = (const unsigned char *)(s ? s : ""); *p; p++) {
		h ^= *p;
		h *= FNV_PRIME;
	}
	free(s);
	return h;
}

/* The process already read that this one (key, from group g; its file
 * dev/ino, 0 for none) is, or NULL: the same file read from another
 * group; or the same identity from another group that holds more such
 * processes than g does yet.  Within g nothing is a duplicate: one input
 * never names a report twice, so two of one identity there are two
 * processes (tests/fuzz/fuzz_report.c reads one file twice into one
 * group and wants both counted, as pid reuse must be). */
static const au_process_t *
proc_seen(const au_model_t *m, uint64_t key, unsigned g, dev_t dev,
    ino_t ino)
{
	size_t i, j, in_g = 0;

	for (i = 0; i < m->nprocs; i++) {
		const au_process_t *p = &m->procs[i];

		if (ino != 0 && p->ino == ino && p->dev == dev &&
		    p->group != g)
			return p;
		if (p->key == key && p->group == g)
			in_g++;
	}
	for (i = 0; i < m->nprocs; i++) {
		const au_process_t *p = &m->procs[i];
		size_t n = 0;

		if (p->key != key || p->group == g)
			continue;
		for (j = 0; j < m->nprocs; j++)
			if (m->procs[j].key == key &&
			    m->procs[j].group == p->group)
				n++;
		if (n > in_g)
			return p;
	}
	return NULL;
}

/* Did the process use CUDA?  Hooks that saw a call, or a report of a
 * program that uses libcuwarden (mode "library": the shim's coverage
 * counts are all zero there), or any finding at all. */
static void
proc_set_activity(au_process_t *p, const json_t *o)
{
	const json_t *sm = json_object_get(o, "summary");

	p->library = strcmp(json_str(o, "mode", ""), "library") == 0;
	p->cuda_active = p->hooks_active || p->library ||
	    json_array_size(json_object_get(o, "leaks")) > 0 ||
	    json_array_size(json_object_get(o, "violations")) > 0 ||
	    json_int(sm, "leaked_allocations", 0) > 0 ||
	    json_int(sm, "violations", 0) > 0;
}

/* How a process ended, as its "exit" says: a status below 0 (the shim
 * writes -1 when it does not know) or out of range is unknown. */
static void
proc_set_exit(au_process_t *p, const json_t *ex)
{
	long long st = json_int(ex, "status", -1);

	p->exit_how = json_str(ex, "how", "exit");
	p->exit_status = st >= 0 && st <= 255 ? (long)st : -1;
}

/* A merged document ("cuwarden-audit", version 1): its processes (each
 * once: proc_seen), its findings reported or not.  Takes doc. */
static bool
read_merged(au_model_t *m, rd_t *r, json_t *doc)
{
	const json_t *v = json_object_get(doc, "version"), *a;
	size_t i, ndup = 0;
	unsigned g = ++m->ngroups;
	bool bad = false;

	r->merged = true;
	if (!json_is_integer(v) || json_integer_value(v) != 1) {
		/* v belongs to doc: say what it was before freeing doc
		 * (found by tests/fuzz/fuzz_report). */
		const char *what = json_is_integer(v) ? "other than 1" :
		    v == NULL ? "missing" : "not an integer";
		json_decref(doc);
		return fail(r, "cuwarden-audit document version %s is not "
		    "supported (this tool reads version 1)", what);
	}
	a = json_object_get(doc, "processes");
	if (!json_is_array(a)) {
		json_decref(doc);
		return fail(r, "\"processes\" is missing or not an array");
	}
	for (i = 0; i < json_array_size(a); i++) {
		json_t *pr = json_array_get(a, i);
		const char *rep = json_str(pr, "report", r->path);
		uint64_t key;
		long pid;
		au_process_t *p;

		if (!json_is_object(pr) ||
		    !json_is_integer(json_object_get(pr, "pid"))) {
			json_decref(doc);
			return fail(r, "processes[%zu]: expected an object "
			    "with a pid", i);
		}
		pid = (long)json_integer_value(json_object_get(pr, "pid"));
		key = proc_key(pr, pid);
		if (proc_seen(m, key, g, 0, 0) != NULL) {
			ndup++;
			continue;
		}
		m->procs = xrealloc(m->procs,
		    (m->nprocs + 1) * sizeof(*m->procs));
		p = &m->procs[m->nprocs++];
		memset(p, 0, sizeof(*p));
		p->path = xstrdup(rep);
		p->doc = json_incref(pr);
		p->pid = pid;
		p->ppid = (long)json_int(pr, "ppid", 0);
		p->hooks_active = json_is_true(json_object_get(
		    json_object_get(pr, "coverage"), "hooks_active"));
		p->exe = xstrdup(json_str(pr, "exe", ""));
		proc_set_exit(p, json_object_get(pr, "exit"));
		proc_set_activity(p, pr);
		p->key = key;
		p->group = g;
	}
	if (ndup > 0 && ndup == json_array_size(json_object_get(doc,
	    "processes"))) {
		au_warn("%s: every process in it was read already: its "
		    "findings are not counted again", r->path);
		json_decref(doc);
		return false;
	}
	if (ndup > 0)
		au_warn("%s: %zu of its processes were read already: their "
		    "findings are counted twice", r->path, ndup);
	a = json_object_get(doc, "leaks");
	for (i = 0; !bad && i < json_array_size(a); i++)
		bad = read_leak(r, m, json_array_get(a, i), i);
	a = json_object_get(doc, "violations");
	for (i = 0; !bad && i < json_array_size(a); i++)
		bad = read_violation(r, m, json_array_get(a, i), i);
	a = json_object_get(doc, "suppressed");
	for (i = 0; !bad && i < json_array_size(a); i++) {
		json_t *s = json_array_get(a, i);

		if (strcmp(json_str(s, "class", ""), "violation") == 0)
			bad = read_violation(r, m, s, i);
		else
			bad = read_leak(r, m, s, i);
	}
	json_decref(doc);
	return bad;
}

bool
report_read_file(au_model_t *m, const char *path, char *err, size_t errsize)
{
	json_error_t jerr;
	json_t *doc, *a;
	au_process_t *p;
	rd_t r = { path, err, errsize, NULL, NULL, false };
	const au_process_t *seen;
	size_t i, nmod, len, first;
	struct stat st;
	uint64_t key;
	long pid;
	char *buf;

	buf = input_read(path, AU_MAX_REPORT_BYTES, NULL, &st, &len, err,
	    errsize);
	if (buf == NULL)
		return true;
	doc = json_loadb(buf, len, 0, &jerr);
	if (doc == NULL) {
		for (first = 0; first < len && (buf[first] == ' ' ||
		    buf[first] == '\t' || buf[first] == '\n' ||
		    buf[first] == '\r'); first++)
			;
		if (first == len)
			snprintf(err, errsize, "%s: empty file (the process "
			    "may have died while writing it)", path);
		else if (jerr.line == 1 && buf[first] != '{' &&
		    buf[first] != '[')
			snprintf(err, errsize, "%s: not JSON (a text report? "
			    "this tool reads JSON reports: "
			    "CUWARDEN_REPORT_FORMAT=json)", path);
		else
			snprintf(err, errsize, "%s:%d:%d: invalid JSON: %s",
			    path, jerr.line, jerr.column, jerr.text);
		free(buf);
		return true;
	}
	free(buf);
	if (json_is_object(doc) && strcmp(json_str(doc, "format", ""),
	    "cuwarden-audit") == 0)
		return read_merged(m, &r, doc);
	if (check_header(&r, doc)) {
		json_decref(doc);
		return true;
	}
	r.modules = json_object_get(doc, "modules");
	nmod = json_array_size(r.modules);
	for (i = 0; i < nmod; i++) {
		const json_t *mo = json_array_get(r.modules, i);
		char w[48];
		const char *s;

		snprintf(w, sizeof(w), "modules[%zu]", i);
		if (!json_is_object(mo)) {
			fail(&r, "%s: expected an object", w);
			json_decref(doc);
			return true;
		}
		if (get_str(&r, mo, w, "path", NULL, &s) ||
		    get_str(&r, mo, w, "build_id", "", &s)) {
			json_decref(doc);
			return true;
		}
	}
	pid = (long)json_integer_value(json_object_get(doc, "pid"));
	key = proc_key(doc, pid);
	if ((seen = proc_seen(m, key, m->group, st.st_dev, st.st_ino)) !=
	    NULL) {
		au_warn("%s: the same report as %s, read already: counted once",
		    path, seen->path);
		json_decref(doc);
		return false;
	}
	m->procs = xrealloc(m->procs, (m->nprocs + 1) * sizeof(*m->procs));
	p = &m->procs[m->nprocs];
	memset(p, 0, sizeof(*p));
	p->path = xstrdup(path);
	p->doc = doc;
	p->pid = pid;
	p->key = key;
	p->group = m->group;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	p->ppid = (long)json_int(doc, "ppid", 0);
	p->hooks_active = json_is_true(json_object_get(
	    json_object_get(doc, "coverage"), "hooks_active"));
	p->exe = xstrdup(json_str(doc, "exe", ""));
	proc_set_exit(p, json_object_get(doc, "exit"));
	proc_set_activity(p, doc);
	r.proc = p;
	m->nprocs++;

	a = json_object_get(doc, "leaks");
	for (i = 0; i < json_array_size(a); i++)
		if (read_leak(&r, m, json_array_get(a, i), i))
			return true;
	a = json_object_get(doc, "violations");
	for (i = 0; i < json_array_size(a); i++)
		if (read_violation(&r, m, json_array_get(a, i), i))
			return true;
	return false;
}

/* ------------------------------------------------------------ order */

static int
cmp_leak(const void *a, const void *b)
{
	const au_finding_t *x = *(au_finding_t *const *)a;
	const au_finding_t *y = *(au_finding_t *const *)b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
cmp_seq(const void *a, const void *b)
{
	const au_finding_t *x = *(au_finding_t *const *)a;
	const au_finding_t *y = *(au_finding_t *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
cmp_proc(const void *a, const void *b)
{
	const au_process_t *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void
model_sort(au_model_t *m)
{
	if (m->nleaks > 1)
		qsort(m->leaks, m->nleaks, sizeof(*m->leaks), cmp_leak);
	if (m->nviols > 1)
		qsort(m->viols, m->nviols, sizeof(*m->viols), cmp_seq);
	if (m->nprocs > 1)
		qsort(m->procs, m->nprocs, sizeof(*m->procs), cmp_proc);
}

void
model_totals(const au_model_t *m, au_totals_t *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < m->nleaks; i++) {
		const au_finding_t *f = m->leaks[i];

		if (finding_reported(f)) {
			t->leaked_bytes = sat_add(t->leaked_bytes, f->bytes);
			t->leaked_allocations = sat_add(t->leaked_allocations,
			    f->count);
			t->leak_groups++;
		} else if (f->suppressed_by != NULL) {
			t->suppressed_leaks = sat_add(t->suppressed_leaks,
			    f->count);
			t->suppressed_bytes = sat_add(t->suppressed_bytes,
			    f->bytes);
			t->suppressed_leak_groups++;
		} else {
			t->baseline_leaks++;
		}
	}
	for (i = 0; i < m->nviols; i++) {
		const au_finding_t *f = m->viols[i];

		if (finding_reported(f)) {
			t->violations = sat_add(t->violations, f->count);
			t->violation_groups++;
		} else if (f->suppressed_by != NULL) {
			t->suppressed_violations = sat_add(
			    t->suppressed_violations, f->count);
		} else {
			t->baseline_violations++;
		}
	}
	t->processes = m->nprocs;
	for (i = 0; i < m->nprocs; i++) {
		const json_t *cov = json_object_get(m->procs[i].doc,
		    "coverage");
		long long v;

		if (m->procs[i].hooks_active)
			t->hooks_active++;
		if (m->procs[i].cuda_active)
			t->cuda_active++;
		if (m->procs[i].library)
			t->library++;
		if ((v = json_int(cov, "allocations", 0)) > 0)
			t->allocations = sat_add(t->allocations, (uint64_t)v);
		if ((v = json_int(cov, "frees", 0)) > 0)
			t->frees = sat_add(t->frees, (uint64_t)v);
		if ((v = json_int(cov, "untracked_frees", 0)) > 0)
			t->untracked_frees = sat_add(t->untracked_frees,
			    (uint64_t)v);
		if ((v = json_int(cov, "failed_calls", 0)) > 0)
			t->failed_calls = sat_add(t->failed_calls, (uint64_t)v);
	}
	t->errors = sat_add(t->leaked_allocations, t->violations);
}

void
model_free(au_model_t *m)
{
	size_t i;

	for (i = 0; i < m->nleaks; i++)
		finding_free(m->leaks[i]);
	for (i = 0; i < m->nviols; i++)
		finding_free(m->viols[i]);
	for (i = 0; i < m->nprocs; i++) {
		free(m->procs[i].path);
		free(m->procs[i].exe);
		json_decref(m->procs[i].doc);
	}
	free(m->leaks);
	free(m->viols);
	free(m->procs);
	if (m->index != NULL)
		free(m->index->slots);
	free(m->index);
	json_decref(m->command);
	memset(m, 0, sizeof(*m));
}
