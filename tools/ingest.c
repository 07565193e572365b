/*
 * ingest.c -- ingest_file (ingest.h): a report file read
 * (input_read) and parsed; a merged document goes to ingest_merged.c; a
 * per-process report ("cuwarden-report" version 1, doc/report-schema.md)
 * has its header and modules checked, its process added once
 * (ingest_proc.c), then its leaks and violations (ingest_finding.c), then
 * the peaks of the timeline it names (timeline.c; ingest_peaks); an OOM
 * report ("cuwarden-oom" version 1) is checked and kept whole.  A file
 * named "*.timeline" is skipped: it is read through its report.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"
#include "ingest.h"
#include "ingest_int.h"
#include "input.h"
#include "json.h"
#include "model.h"
#include "xalloc.h"

static bool
check_header(ingest_rd_t *r, const json_t *doc)
{
	const char *format;
	const json_t *v;
	const json_t *cov;

	if (!json_is_object(doc))
		return ingest_fail(r, "not a cuwarden report: the document "
		    "is not a JSON object");
	format = json_str(doc, "format", NULL);
	if (format == NULL)
		return ingest_fail(r, "not a cuwarden report: no \"format\" "
		    "member");
	if (strcmp(format, "cuwarden-report") != 0)
		return ingest_fail(r, "not a cuwarden report: format is "
		    "\"%s\", expected \"cuwarden-report\"", format);
	v = json_object_get(doc, "version");
	if (!json_is_integer(v))
		return ingest_fail(r, "\"version\" is missing or not an "
		    "integer");
	if (json_integer_value(v) != 1)
		return ingest_fail(r, "report version %lld is not supported "
		    "(this tool reads version 1)",
		    (long long)json_integer_value(v));
	if (!json_is_integer(json_object_get(doc, "pid")))
		return ingest_fail(r, "\"pid\" is missing or not an "
		    "integer");
	cov = json_object_get(doc, "coverage");
	if (!json_is_object(cov))
		return ingest_fail(r, "\"coverage\" is missing or not an "
		    "object");
	v = json_object_get(cov, "hooks_active");
	if (v != NULL && !json_is_boolean(v))
		return ingest_fail(r, "coverage.hooks_active: expected true "
		    "or false");
	if (ingest_proc_check(r, doc, ""))
		return true;
	v = json_object_get(doc, "modules");
	if (v != NULL && !json_is_array(v))
		return ingest_fail(r, "\"modules\" is not an array");
	v = json_object_get(doc, "leaks");
	if (v != NULL && !json_is_array(v))
		return ingest_fail(r, "\"leaks\" is not an array");
	v = json_object_get(doc, "violations");
	if (v != NULL && !json_is_array(v))
		return ingest_fail(r, "\"violations\" is not an array");
	return false;
}

/* (ingest_int.h) Whether doc came alone or inside a merged document. */
void
doc_reader(ingest_rd_t *sr, const ingest_rd_t *r, au_process_t *self,
    const json_t *doc)
{
	memset(self, 0, sizeof(*self));
	self->exe = (char *)(uintptr_t)json_str(doc, "exe", "");
	*sr = *r;
	sr->proc = self;
	sr->modules = json_object_get(doc, "modules");
	sr->merged = false;
}

bool
ingest_oom(au_model_t *m, ingest_rd_t *r, json_t *doc)
{
	const json_t *v = json_object_get(doc, "version");
	const json_t *q = json_object_get(doc, "request");
	const json_t *top;
	au_process_t self;
	ingest_rd_t sr;
	au_oom_t *o;
	size_t i;
	bool bad;

	if (!json_is_integer(v) || json_integer_value(v) != 1)
		return ingest_fail(r, "OOM report version is missing or not 1 "
		    "(this tool reads version 1)");
	if (!json_is_integer(json_object_get(doc, "pid")))
		return ingest_fail(r, "\"pid\" is missing or not an "
		    "integer");
	if (!json_is_object(q) || json_str(q, "api", NULL) == NULL ||
	    !json_is_integer(json_object_get(q, "size")))
		return ingest_fail(r, "\"request\" is missing, or lacks its "
		    "\"api\" or \"size\"");
	if (!json_is_object(json_object_get(doc, "live")) ||
	    !json_is_array(json_object_get(doc, "modules")))
		return ingest_fail(r, "\"live\" or \"modules\" is missing");
	m->ooms = xrealloc(m->ooms, (m->nooms + 1) * sizeof(*m->ooms));
	o = &m->ooms[m->nooms];
	memset(o, 0, sizeof(*o));
	doc_reader(&sr, r, &self, doc);
	top = json_object_get(json_object_get(doc, "live"), "top");
	bad = ingest_stack(&sr, q, "request", "stack", &o->request);
	for (i = 0; !bad && i < json_array_size(top) && i < AU_OOM_GROUPS;
	    i++) {
		char w[32];

		snprintf(w, sizeof(w), "live.top[%zu]", i);
		o->ngroups = i + 1;
		bad = ingest_stack(&sr, json_array_get(top, i), w, "stack",
		    &o->groups[i]);
	}
	if (bad) {
		stack_free(&o->request);
		for (i = 0; i < o->ngroups; i++)
			stack_free(&o->groups[i]);
		return true;
	}
	m->nooms++;
	o->doc = doc;
	o->path = xstrdup(r->path);
	o->pid = (long)json_integer_value(json_object_get(doc, "pid"));
	return false;
}

bool
ingest_peaks(au_model_t *m, ingest_rd_t *r, json_t *doc)
{
	const json_t *devs = json_object_get(doc, "devices");
	const json_t *al = json_object_get(doc, "after_limit");
	const json_t *aldevs = json_object_get(al, "devices");
	au_process_t self;
	ingest_rd_t sr;
	au_peak_t *p;
	size_t i, k, nd;
	bool bad = false;

	if (!json_is_object(doc) || !json_is_array(devs) ||
	    !json_is_integer(json_object_get(doc, "pid")))
		return ingest_fail(r, "a peaks document without its \"pid\" "
		    "or \"devices\"");
	if (al != NULL && (!json_is_object(al) || !json_is_array(aldevs)))
		return ingest_fail(r, "a peaks document whose \"after_limit\" "
		    "is not an object with \"devices\"");
	nd = json_array_size(devs) + json_array_size(aldevs);
	m->peaks = xrealloc(m->peaks, (m->npeaks + 1) * sizeof(*m->peaks));
	p = &m->peaks[m->npeaks];
	memset(p, 0, sizeof(*p));
	p->stacks = xcalloc(nd * AU_PEAK_GROUPS + 1, sizeof(*p->stacks));
	doc_reader(&sr, r, &self, doc);
	/* The devices' groups, then those past the limit (au_peak_t). */
	for (i = 0; !bad && i < nd; i++) {
		bool past = i >= json_array_size(devs);
		size_t j = past ? i - json_array_size(devs) : i;
		const json_t *top = json_object_get(json_array_get(past ?
		    aldevs : devs, j), "top");

		for (k = 0; !bad && k < json_array_size(top) &&
		    k < AU_PEAK_GROUPS; k++) {
			char w[64];

			snprintf(w, sizeof(w), "%sdevices[%zu].top[%zu]",
			    past ? "after_limit." : "", j, k);
			bad = ingest_stack(&sr, json_array_get(top, k), w,
			    "stack", &p->stacks[i * AU_PEAK_GROUPS + k]);
		}
	}
	p->nstacks = nd * AU_PEAK_GROUPS;
	if (bad) {
		for (k = 0; k < p->nstacks; k++)
			stack_free(&p->stacks[k]);
		free(p->stacks);
		return true;
	}
	m->npeaks++;
	p->doc = doc;
	p->path = xstrdup(r->path);
	p->pid = (long)json_integer_value(json_object_get(doc, "pid"));
	return false;
}

/* Does path name a timeline (read through the report that names it)? */
static bool
is_timeline(const char *path)
{
	size_t n = strlen(path);

	return n > 9 && strcmp(path + n - 9, ".timeline") == 0;
}

bool
ingest_file(au_model_t *m, const char *path, char *err, size_t errsize)
{
	json_error_t jerr;
	json_t *doc, *a;
	au_process_t *p;
	ingest_rd_t r = { path, err, errsize, NULL, NULL, false };
	const au_process_t *seen;
	size_t i, nmod, len, first;
	struct stat st;
	uint64_t key;
	long pid;
	char *buf;

	if (is_timeline(path))
		return false;
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
		return ingest_merged(m, &r, doc);
	if (json_is_object(doc) && strcmp(json_str(doc, "format", ""),
	    "cuwarden-oom") == 0) {
		if (ingest_oom(m, &r, doc)) {
			json_decref(doc);
			return true;
		}
		return false;
	}
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
			ingest_fail(&r, "%s: expected an object", w);
			json_decref(doc);
			return true;
		}
		if (ingest_get_str(&r, mo, w, "path", NULL, &s) ||
		    ingest_get_str(&r, mo, w, "build_id", "", &s)) {
			json_decref(doc);
			return true;
		}
	}
	pid = (long)json_integer_value(json_object_get(doc, "pid"));
	key = ingest_proc_key(doc, pid);
	seen = ingest_proc_seen(m, key, m->group, st.st_dev, st.st_ino);
	if (seen != NULL) {
		au_warn("%s: the same report as %s, read already: counted once",
		    path, seen->path);
		json_decref(doc);
		return false;
	}
	p = ingest_proc_add(m, doc, path, pid, key, m->group);
	p->doc = doc;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	r.proc = p;

	a = json_object_get(doc, "leaks");
	for (i = 0; i < json_array_size(a); i++)
		if (ingest_leak(&r, m, json_array_get(a, i), i))
			return true;
	a = json_object_get(doc, "violations");
	for (i = 0; i < json_array_size(a); i++)
		if (ingest_violation(&r, m, json_array_get(a, i), i))
			return true;
	/* Its timeline, when it names one: the peaks. */
	return ingest_timeline(m, &r, doc, path, err, errsize);
}
