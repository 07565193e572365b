/*
 * render_json.c -- the merged document, format "cuwarden-audit" version 1
 * (doc/audit.md; tests/tools/audit.schema.json checks it).  Every other
 * output is derived from the same model; this one keeps everything:
 * reported findings, suppressed and baseline ones (under "suppressed",
 * with the rule), every process with its own coverage and summary.
 *
 * Strings from outside (paths, arguments, rules, names from debug info)
 * go through json_utf8: json_string returns NULL for bytes that are not
 * UTF-8, and the member would silently vanish.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "diag.h"
#include "json.h"
#include "model.h"
#include "out.h"
#include "render.h"
#include "suppress.h"

static json_t *
str_or_null(const char *s)
{
	return json_utf8(s);
}

static json_t *
frame_json(const au_frame_t *f)
{
	json_t *o = json_object();
	char off[24];
	size_t i;

	if (f->python) {
		json_object_set_new(o, "python", json_pack("{s:o,s:o,s:i}",
		    "file", str_or_null(f->file), "function",
		    str_or_null(f->function), "line", f->line));
		return o;
	}
	snprintf(off, sizeof(off), "0x%llx", (unsigned long long)f->offset);
	json_object_set_new(o, "module", str_or_null(f->module));
	json_object_set_new(o, "build_id", json_utf8(f->build_id ?
	    f->build_id : ""));
	json_object_set_new(o, "offset", json_string(off));
	json_object_set_new(o, "function", str_or_null(f->function));
	json_object_set_new(o, "file", str_or_null(f->file));
	json_object_set_new(o, "line", json_integer(f->line));
	if (f->ninlined > 0) {
		json_t *a = json_array();

		for (i = 0; i < f->ninlined; i++)
			json_array_append_new(a, json_pack("{s:o,s:o,s:i}",
			    "function", str_or_null(f->inlined[i].function),
			    "file", str_or_null(f->inlined[i].file),
			    "line", f->inlined[i].line));
		json_object_set_new(o, "inlined", a);
	}
	if (f->note != NULL)
		json_object_set_new(o, "note", json_string(f->note));
	return o;
}

json_t *
render_stack_json(const au_stack_t *s)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < s->n; i++)
		json_array_append_new(a, frame_json(&s->frames[i]));
	return a;
}

/* Sets o.key to v.  A value JSON cannot hold -- a saturated sum
 * (UINT64_MAX) or one past 2^63 - 1 -- is written as 2^63 - 1 and its
 * name added to sat: the value is a lower bound (doc/audit.md). */
static void
set_count(json_t *o, const char *key, uint64_t v, json_t *sat)
{
	json_object_set_new(o, key, json_count(v));
	if (v > (uint64_t)AU_JSON_INT_MAX)
		json_array_append_new(sat, json_string(key));
}

/* Adds sat to o as "saturated" when it names anything; takes sat. */
static void
set_saturated(json_t *o, json_t *sat)
{
	if (json_array_size(sat) > 0)
		json_object_set_new(o, "saturated", sat);
	else
		json_decref(sat);
}

static json_t *
finding_json(const au_finding_t *f)
{
	json_t *o = json_object(), *a, *sat = json_array();
	size_t i;

	if (f->cls == AU_LEAK) {
		json_object_set_new(o, "kind", json_utf8(f->kind));
		json_object_set_new(o, "category",
		    json_string(cat_name(f->cat)));
	} else {
		json_object_set_new(o, "type", json_utf8(f->type));
		json_object_set_new(o, "kind", json_utf8(f->kind));
		if (f->family != NULL)
			json_object_set_new(o, "family", json_utf8(f->family));
		if (f->has_range)
			json_object_set_new(o, "range", json_pack("{s:I,s:I}",
			    "offset", (json_int_t)(f->range_off > INT64_MAX ?
			    INT64_MAX : f->range_off), "length",
			    (json_int_t)(f->range_len > INT64_MAX ? INT64_MAX :
			    f->range_len)));
	}
	json_object_set_new(o, "api", json_utf8(f->api));
	json_object_set_new(o, "owner", json_utf8(f->owner));
	json_object_set_new(o, "device", json_integer(f->device));
	a = json_array();
	for (i = 0; i < f->ndevices; i++)
		json_array_append_new(a, json_integer(f->devices[i]));
	json_object_set_new(o, "devices", a);
	set_count(o, "size", f->min_size == f->max_size ? f->size : 0, sat);
	set_count(o, "min_size", f->min_size, sat);
	set_count(o, "max_size", f->max_size, sat);
	set_count(o, "count", f->count, sat);
	if (f->cls == AU_LEAK) {
		set_count(o, "bytes", f->bytes, sat);
	} else {
		json_object_set_new(o, "address", json_utf8(
		    f->naddresses ? f->addresses[0] : ""));
		json_object_set_new(o, "cuda_error",
		    str_or_null(f->cuda_error));
		json_object_set_new(o, "pid", json_integer(f->npids ?
		    f->pids[0] : 0));
	}
	a = json_array();
	for (i = 0; i < f->naddresses; i++)
		json_array_append_new(a, json_utf8(f->addresses[i]));
	json_object_set_new(o, "addresses", a);
	a = json_array();
	for (i = 0; i < f->npids; i++)
		json_array_append_new(a, json_integer(f->pids[i]));
	json_object_set_new(o, "pids", a);
	a = json_array();
	for (i = 0; i < f->npids; i++)
		json_array_append_new(a, json_utf8(f->hosts[i]));
	json_object_set_new(o, "hosts", a);
	/* A distributed job (fold.c): its ranks, and each pid's share. */
	a = json_array();
	for (i = 0; i < f->nranks; i++)
		json_array_append_new(a, json_integer(f->ranks[i]));
	json_object_set_new(o, "ranks", a);
	if (f->pid_count != NULL) {
		a = json_array();
		for (i = 0; i < f->npids; i++)
			json_array_append_new(a, json_pack("{s:o,s:o}",
			    "count", json_count(f->pid_count[i]), "bytes",
			    json_count(f->pid_bytes[i])));
		json_object_set_new(o, "per_process", a);
	}
	json_object_set_new(o, "fingerprint", json_string(f->fingerprint));
	json_object_set_new(o, "symbolic_fingerprint",
	    json_string(f->sym_fingerprint));
	json_object_set_new(o, "stack", render_stack_json(&f->stack));
	if (f->cls == AU_VIOLATION) {
		json_object_set_new(o, "alloc_stack",
		    render_stack_json(&f->alloc_stack));
		json_object_set_new(o, "free_stack",
		    render_stack_json(&f->free_stack));
	}
	set_saturated(o, sat);
	return o;
}

static void
used_json(const char *rule, const char *origin, uint64_t count,
    uint64_t bytes, void *arg)
{
	json_t *o = json_pack("{s:o,s:o}", "rule", json_utf8(rule), "origin",
	    json_utf8(origin));
	json_t *sat = json_array();

	set_count(o, "count", count, sat);
	set_count(o, "bytes", bytes, sat);
	set_saturated(o, sat);
	json_array_append_new(arg, o);
}

static json_t *
process_json(const au_process_t *p)
{
	json_t *o = json_object(), *v;
	static const char *const keep[] = { "command", "exe", "mode", "exit",
		"coverage", "summary", "time", "incomplete", "job", "gpus",
		"python" };
	size_t i;

	json_object_set_new(o, "pid", json_integer(p->pid));
	json_object_set_new(o, "host", json_utf8(p->host));
	json_object_set_new(o, "boot_id", json_utf8(p->boot_id));
	json_object_set_new(o, "ppid", json_integer(p->ppid));
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if ((v = json_object_get(p->doc, keep[i])) != NULL)
			json_object_set(o, keep[i], v);
	/* The status the tool saw reaping it, when the report had none. */
	if (p->exit_status >= 0 && json_int(json_object_get(p->doc, "exit"),
	    "status", -1) != p->exit_status)
		json_object_set_new(o, "exit", json_pack("{s:s,s:i}", "how",
		    p->exit_how, "status", (int)p->exit_status));
	if (json_object_get(o, "command") == NULL)
		json_object_set_new(o, "command", json_array());
	json_object_set_new(o, "cuda_active", json_boolean(p->cuda_active));
	json_object_set_new(o, "report", json_utf8(p->path));
	return o;
}

/* The job (fold.c): its world size, the ranks reported and missing. */
static json_t *
job_json(const au_model_t *m)
{
	json_t *a = json_array();

	for (size_t i = 0; i < m->nmissing_ranks; i++)
		json_array_append_new(a, json_integer(m->missing_ranks[i]));
	return json_pack("{s:o,s:I,s:o}", "world_size", m->ranked ?
	    json_integer(m->world_size) : json_null(), "ranks_reported",
	    (json_int_t)m->nranks_found, "missing_ranks", a);
}

/* The processes that left no report (doc/audit.md, "Lost processes"). */
static json_t *
lost_json(const au_model_t *m)
{
	json_t *a = json_array();

	for (size_t i = 0; i < m->nlost; i++) {
		const au_lost_t *l = &m->lost[i];

		json_array_append_new(a, json_pack("{s:I,s:I,s:o,s:O,s:o,"
		    "s:{s:s,s:o}}", "pid", (json_int_t)l->pid, "ppid",
		    (json_int_t)l->ppid, "rank", l->rank >= 0 ?
		    json_integer(l->rank) : json_null(), "command",
		    l->command, "exe",
		    json_utf8(l->exe), "end", "how", l->end_how != NULL ?
		    l->end_how : "unknown", "status", l->end_how != NULL &&
		    strcmp(l->end_how, "running") != 0 ?
		    json_integer(l->end_status) : json_null()));
	}
	return a;
}

json_t *
render_json_doc(const au_model_t *m, const au_render_opts_t *o)
{
	json_t *doc = json_object(), *a, *sup, *used, *o2, *sat;
	au_totals_t t;
	size_t i;

	model_totals(m, &t);
	json_object_set_new(doc, "format", json_string("cuwarden-audit"));
	json_object_set_new(doc, "version", json_integer(1));
	json_object_set_new(doc, "tool", json_string(AU_PROG " "
	    PACKAGE_VERSION));
	json_object_set_new(doc, "command", m->command ?
	    json_incref(m->command) : json_array());
	json_object_set_new(doc, "exit_status", m->ran && m->exit_status >= 0 ?
	    json_integer(m->exit_status) : json_null());
	a = json_array();
	for (i = 0; i < m->nprocs; i++)
		json_array_append_new(a, process_json(&m->procs[i]));
	json_object_set_new(doc, "processes", a);
	json_object_set_new(doc, "lost_processes", lost_json(m));
	json_object_set_new(doc, "job", job_json(m));
	o2 = json_object();
	sat = json_array();
	set_count(o2, "processes", t.processes, sat);
	set_count(o2, "hooks_active_processes", t.hooks_active, sat);
	json_object_set_new(o2, "hooks_active", json_boolean(t.hooks_active >
	    0));
	set_count(o2, "cuda_active_processes", t.cuda_active, sat);
	json_object_set_new(o2, "cuda_active", json_boolean(t.cuda_active >
	    0));
	set_count(o2, "library_processes", t.library, sat);
	set_count(o2, "allocations", t.allocations, sat);
	set_count(o2, "frees", t.frees, sat);
	set_count(o2, "untracked_frees", t.untracked_frees, sat);
	set_count(o2, "failed_calls", t.failed_calls, sat);
	set_saturated(o2, sat);
	json_object_set_new(doc, "coverage", o2);
	o2 = json_object();
	sat = json_array();
	set_count(o2, "leaked_bytes", t.leaked_bytes, sat);
	set_count(o2, "leaked_allocations", t.leaked_allocations, sat);
	set_count(o2, "leak_groups", t.leak_groups, sat);
	set_count(o2, "teardown_bytes", t.teardown_bytes, sat);
	set_count(o2, "teardown_allocations", t.teardown_allocations, sat);
	set_count(o2, "teardown_groups", t.teardown_groups, sat);
	set_count(o2, "accepted_teardown_bytes", t.accepted_bytes, sat);
	set_count(o2, "accepted_teardown_allocations",
	    t.accepted_allocations, sat);
	set_count(o2, "address_range_bytes", t.range_bytes, sat);
	set_count(o2, "address_ranges", t.ranges, sat);
	set_count(o2, "address_range_groups", t.range_groups, sat);
	set_count(o2, "violations", t.violations, sat);
	set_count(o2, "violation_groups", t.violation_groups, sat);
	set_count(o2, "errors", t.errors, sat);
	set_count(o2, "suppressed_leaks", t.suppressed_leaks, sat);
	set_count(o2, "suppressed_bytes", t.suppressed_bytes, sat);
	set_count(o2, "suppressed_violations", t.suppressed_violations, sat);
	set_count(o2, "baseline_leak_groups", t.baseline_leaks, sat);
	set_count(o2, "baseline_violation_groups", t.baseline_violations,
	    sat);
	set_saturated(o2, sat);
	json_object_set_new(doc, "summary", o2);
	a = json_array();
	sup = json_array();
	for (i = 0; i < m->nleaks; i++) {
		json_t *f = finding_json(m->leaks[i]);

		if (finding_reported(m->leaks[i])) {
			json_array_append_new(a, f);
			continue;
		}
		json_object_set_new(f, "class", json_string("leak"));
		json_object_set_new(f, "suppressed_by", json_utf8(
		    m->leaks[i]->suppressed_by ? m->leaks[i]->suppressed_by :
		    "baseline"));
		json_array_append_new(sup, f);
	}
	json_object_set_new(doc, "leaks", a);
	a = json_array();
	for (i = 0; i < m->nviols; i++) {
		json_t *f = finding_json(m->viols[i]);

		if (finding_reported(m->viols[i])) {
			json_array_append_new(a, f);
			continue;
		}
		json_object_set_new(f, "class", json_string("violation"));
		json_object_set_new(f, "suppressed_by", json_utf8(
		    m->viols[i]->suppressed_by ? m->viols[i]->suppressed_by :
		    "baseline"));
		json_array_append_new(sup, f);
	}
	json_object_set_new(doc, "violations", a);
	json_object_set_new(doc, "suppressed", sup);
	used = json_array();
	supp_foreach_used(o->supp, used_json, used);
	json_object_set_new(doc, "suppressions_used", used);
	json_object_set_new(doc, "baseline", str_or_null(o->baseline));
	/* Only when a process ran out of memory: the documents as the shim
	 * wrote them (doc/audit.md, "Out of memory"). */
	if (m->nooms > 0) {
		a = json_array();
		for (i = 0; i < m->nooms; i++)
			json_array_append(a, m->ooms[i].doc);
		json_object_set_new(doc, "oom", a);
	}
	/* Only with timelines: each process's peaks (doc/audit.md,
	 * "Peaks"). */
	if (m->npeaks > 0) {
		a = json_array();
		for (i = 0; i < m->npeaks; i++)
			json_array_append(a, m->peaks[i].doc);
		json_object_set_new(doc, "peaks", a);
	}
	/* And their memory over time (doc/audit.md, "Memory over time"). */
	if (m->ntlines > 0) {
		a = json_array();
		for (i = 0; i < m->ntlines; i++)
			json_array_append_new(a, render_tline_json(
			    &m->tlines[i]));
		json_object_set_new(doc, "timelines", a);
	}
	return doc;
}

json_t *
render_tline_json(const au_tline_t *t)
{
	json_t *d = json_copy(t->doc), *st = json_array();

	json_object_del(d, "modules");
	for (size_t i = 0; i < t->nstacks; i++) {
		json_t *e = json_copy(json_array_get(json_object_get(t->doc,
		    "stacks"), i));

		json_object_set_new(e, "stack", render_stack_json(
		    &t->stacks[i]));
		json_array_append_new(st, e);
	}
	json_object_set_new(d, "stacks", st);
	return d;
}

bool
render_json_write(const json_t *doc, size_t flags, const char *path)
{
	char err[PATH_MAX + 256];
	au_out_t out;

	if (out_open(&out, path, err, sizeof(err))) {
		au_error("cannot write %s", err);
		return true;
	}
	if (json_dumpf(doc, out.fp, flags) != 0) {
		au_error("cannot write %s: %s", path, strerror(errno ? errno :
		    EIO));
		out_abort(&out);
		return true;
	}
	if (out_is_stdout(path))
		fputc('\n', out.fp); /* a shell's next prompt on a line */
	if (out_commit(&out, err, sizeof(err))) {
		au_error("cannot write %s", err);
		return true;
	}
	return false;
}

bool
render_json(const au_model_t *m, const au_render_opts_t *o, const char *path)
{
	json_t *doc = render_json_doc(m, o);
	bool bad;

	bad = render_json_write(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER,
	    path);
	json_decref(doc);
	return bad;
}
