/*
 * ingest_merged.c -- a merged document written by --json ("cuwarden-audit"
 * version 1) read back (ingest_int.h): its processes (each once:
 * ingest_proc_seen), and its findings (reported and suppressed alike,
 * suppressions are applied again) with their symbolized frames, so saved
 * audits can be rendered again and merged with each other.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "ingest_int.h"
#include "json.h"

bool
ingest_merged(au_model_t *m, ingest_rd_t *r, json_t *doc)
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
		return ingest_fail(r, "cuwarden-audit document version %s is "
		    "not supported (this tool reads version 1)", what);
	}
	a = json_object_get(doc, "processes");
	if (!json_is_array(a)) {
		json_decref(doc);
		return ingest_fail(r, "\"processes\" is missing or not an "
		    "array");
	}
	for (i = 0; i < json_array_size(a); i++) {
		json_t *pr = json_array_get(a, i);
		const char *rep = json_str(pr, "report", r->path);
		uint64_t key;
		long pid;
		au_process_t *p;
		char w[48];

		if (!json_is_object(pr) ||
		    !json_is_integer(json_object_get(pr, "pid"))) {
			json_decref(doc);
			return ingest_fail(r, "processes[%zu]: expected an "
			    "object with a pid", i);
		}
		snprintf(w, sizeof(w), "processes[%zu]: ", i);
		if (ingest_proc_check(r, pr, w)) {
			json_decref(doc);
			return true;
		}
		pid = (long)json_integer_value(json_object_get(pr, "pid"));
		key = ingest_proc_key(pr, pid);
		if (ingest_proc_seen(m, key, g, 0, 0) != NULL) {
			ndup++;
			continue;
		}
		p = ingest_proc_add(m, pr, rep, pid, key, g);
		p->doc = json_incref(pr);
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
		bad = ingest_leak(r, m, json_array_get(a, i), i);
	a = json_object_get(doc, "violations");
	for (i = 0; !bad && i < json_array_size(a); i++)
		bad = ingest_violation(r, m, json_array_get(a, i), i);
	a = json_object_get(doc, "suppressed");
	for (i = 0; !bad && i < json_array_size(a); i++) {
		json_t *s = json_array_get(a, i);

		if (strcmp(json_str(s, "class", ""), "violation") == 0)
			bad = ingest_violation(r, m, s, i);
		else
			bad = ingest_leak(r, m, s, i);
	}
	/* The OOM reports it carries, as they were read. */
	a = json_object_get(doc, "oom");
	for (i = 0; !bad && i < json_array_size(a); i++) {
		json_t *o = json_array_get(a, i);

		if ((bad = ingest_oom(m, r, json_incref(o))))
			json_decref(o);
	}
	a = json_object_get(doc, "peaks");
	for (i = 0; !bad && i < json_array_size(a); i++) {
		json_t *o = json_array_get(a, i);

		if ((bad = ingest_peaks(m, r, json_incref(o))))
			json_decref(o);
	}
	a = json_object_get(doc, "timelines");
	for (i = 0; !bad && i < json_array_size(a); i++) {
		json_t *o = json_array_get(a, i);

		if ((bad = ingest_tline(m, r, json_incref(o))))
			json_decref(o);
	}
	json_decref(doc);
	return bad;
}
