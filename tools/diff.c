/*
 * diff.c -- `cuwarden-audit diff A B` (diff.h): each file read into a
 * model of its own (ingest_file), symbolized, the suppressions applied;
 * the reported leak groups of category leak (live memory: a snapshot's
 * live set, an exit report's leaks) summed per symbolic fingerprint on
 * each side; the groups whose bytes grew listed, largest growth first
 * (ties: more allocations, then the fingerprint), with B's stack; those
 * that shrank or went summed in one line; the totals.  Text to the log,
 * JSON ("cuwarden-diff" version 1, doc/report-schema.md) to --json.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "baseline.h"
#include "diag.h"
#include "diff.h"
#include "ingest.h"
#include "json.h"
#include "model.h"
#include "num.h"
#include "render.h"
#include "symbolize.h"
#include "xalloc.h"

/* One group: a symbolic fingerprint and its sums on each side. */
typedef struct entry_s {
	const au_finding_t *f;   /* B's finding (A's when none in B) */
	uint64_t bytes[2], count[2];
} entry_t;

typedef struct table_s {
	entry_t *v;
	size_t n, cap;
} table_t;

static void
table_add(table_t *t, const au_finding_t *f, int side)
{
	entry_t *e = NULL;

	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].f->sym_fingerprint, f->sym_fingerprint) ==
		    0) {
			e = &t->v[i];
			break;
		}
	if (e == NULL) {
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 16;
			t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
		}
		e = &t->v[t->n++];
		memset(e, 0, sizeof(*e));
		e->f = f;
	} else if (side == 1 && e->bytes[1] == 0 && e->count[1] == 0) {
		e->f = f; /* B's stack, once B has the group */
	}
	e->bytes[side] = sat_add(e->bytes[side], f->bytes);
	e->count[side] = sat_add(e->count[side], f->count);
}

/* Reads path into m, symbolized, suppressions applied.  Returns true
 * after a message. */
static bool
load(au_model_t *m, const char *path, const au_diff_opts_t *o)
{
	char err[4096];

	memset(m, 0, sizeof(*m));
	m->exit_status = -1;
	m->group = ++m->ngroups;
	if (ingest_file(m, path, err, sizeof(err))) {
		au_error("diff: %s", err);
		return true;
	}
	if (m->nprocs == 0) {
		au_error("diff: %s: no report in it", path);
		return true;
	}
	symbolize_model(m, o->demangle);
	fingerprint_symbolic(m);
	if (o->supp != NULL)
		supp_apply(o->supp, m);
	return false;
}

/* The bytes' change, signed ("+X" or "-X"), into buf. */
static const char *
delta(uint64_t from, uint64_t to, char *buf, size_t size)
{
	char b[48];

	if (to >= from)
		snprintf(buf, size, "+%s", fmt_commas(to - from, b, sizeof(b)));
	else
		snprintf(buf, size, "-%s", fmt_commas(from - to, b, sizeof(b)));
	return buf;
}

static int
by_growth(const void *x, const void *y)
{
	const entry_t *a = x, *b = y;
	uint64_t ga = a->bytes[1] - a->bytes[0], gb = b->bytes[1] -
	    b->bytes[0];

	if (ga != gb)
		return ga > gb ? -1 : 1;
	if (a->count[1] != b->count[1])
		return a->count[1] > b->count[1] ? -1 : 1;
	return strcmp(a->f->sym_fingerprint, b->f->sym_fingerprint);
}

static json_t *
entry_json(const entry_t *e)
{
	json_t *o = json_object();
	int64_t db = e->bytes[1] >= e->bytes[0] ?
	    (int64_t)(e->bytes[1] - e->bytes[0]) :
	    -(int64_t)(e->bytes[0] - e->bytes[1]);

	json_object_set_new(o, "bytes", json_integer(db));
	json_object_set_new(o, "allocations", json_integer(
	    (json_int_t)e->count[1] - (json_int_t)e->count[0]));
	json_object_set_new(o, "a_bytes", json_count(e->bytes[0]));
	json_object_set_new(o, "b_bytes", json_count(e->bytes[1]));
	json_object_set_new(o, "a_allocations", json_count(e->count[0]));
	json_object_set_new(o, "b_allocations", json_count(e->count[1]));
	json_object_set_new(o, "kind", json_utf8(e->f->kind));
	json_object_set_new(o, "api", json_utf8(e->f->api));
	json_object_set_new(o, "sym_fingerprint",
	    json_string(e->f->sym_fingerprint));
	json_object_set_new(o, "stack", render_stack_json(&e->f->stack));
	return o;
}

int
diff_run(const char *a, const char *b, const au_diff_opts_t *o, FILE *out)
{
	au_model_t m[2];
	table_t t = { NULL, 0, 0 };
	uint64_t tot[2] = { 0, 0 }, cnt[2] = { 0, 0 };
	uint64_t grew = 0, shrank = 0;
	size_t ngrew = 0, nshrank = 0, i, j;
	char b1[48], b2[48], b3[48];
	json_t *doc = NULL, *ja, *js;
	int rc = AU_EXIT_AUDIT_FAILED;

	memset(m, 0, sizeof(m));
	if (load(&m[0], a, o) || load(&m[1], b, o))
		goto out;
	for (int side = 0; side < 2; side++)
		for (j = 0; j < m[side].nleaks; j++) {
			const au_finding_t *f = m[side].leaks[j];

			if (f->cat != AU_CAT_LEAK || !finding_reported(f))
				continue;
			table_add(&t, f, side);
			tot[side] = sat_add(tot[side], f->bytes);
			cnt[side] = sat_add(cnt[side], f->count);
		}
	/* Grown first (largest growth first), then the rest as they
	 * came. */
	for (i = j = 0; i < t.n; i++)
		if (t.v[i].bytes[1] > t.v[i].bytes[0]) {
			entry_t e = t.v[i];

			t.v[i] = t.v[j];
			t.v[j++] = e;
		}
	ngrew = j;
	qsort(t.v, ngrew, sizeof(*t.v), by_growth);

	fprintf(out, "== DIFF %s -> %s: live memory by allocation stack\n",
	    a, b);
	for (i = 0; i < ngrew; i++) {
		const entry_t *e = &t.v[i];

		grew = sat_add(grew, e->bytes[1] - e->bytes[0]);
		int64_t dn = (int64_t)e->count[1] - (int64_t)e->count[0];

		fprintf(out, "== GREW: +%s bytes (%+" PRId64 " allocation%s) "
		    "from %s to %s bytes, %s %s\n",
		    fmt_commas(e->bytes[1] - e->bytes[0], b1, sizeof(b1)), dn,
		    dn == 1 || dn == -1 ? "" : "s",
		    fmt_commas(e->bytes[0], b2, sizeof(b2)),
		    fmt_commas(e->bytes[1], b3, sizeof(b3)),
		    e->f->kind && e->f->kind[0] ? e->f->kind : "?",
		    e->f->api ? e->f->api : "?");
		fflush(out);
		render_text_stack(&e->f->stack, o->stack_limit, out);
	}
	for (i = ngrew; i < t.n; i++)
		if (t.v[i].bytes[1] < t.v[i].bytes[0]) {
			shrank = sat_add(shrank, t.v[i].bytes[0] -
			    t.v[i].bytes[1]);
			nshrank++;
		}
	if (ngrew == 0)
		fputs("== nothing grew\n", out);
	if (nshrank > 0)
		fprintf(out, "== SHRANK OR FREED: -%s bytes in %zu group%s\n",
		    fmt_commas(shrank, b1, sizeof(b1)), nshrank,
		    nshrank == 1 ? "" : "s");
	fprintf(out, "== DIFF SUMMARY: %s bytes (%+" PRId64 " allocation%s); "
	    "live %s bytes in %s, %s bytes in %s; %zu group%s grew, %zu "
	    "shrank or went\n", delta(tot[0], tot[1], b1, sizeof(b1)),
	    (int64_t)cnt[1] - (int64_t)cnt[0],
	    cnt[1] - cnt[0] == 1 || cnt[0] - cnt[1] == 1 ? "" : "s",
	    fmt_commas(tot[0], b2, sizeof(b2)), a,
	    fmt_commas(tot[1], b3, sizeof(b3)), b, ngrew,
	    ngrew == 1 ? "" : "s", nshrank);
	fflush(out);

	if (o->json != NULL) {
		doc = json_object();
		ja = json_array();
		js = json_array();
		for (i = 0; i < t.n; i++) {
			if (i < ngrew)
				json_array_append_new(ja, entry_json(&t.v[i]));
			else if (t.v[i].bytes[1] < t.v[i].bytes[0])
				json_array_append_new(js, entry_json(&t.v[i]));
		}
		json_object_set_new(doc, "format", json_string(
		    "cuwarden-diff"));
		json_object_set_new(doc, "version", json_integer(1));
		json_object_set_new(doc, "a", json_utf8(a));
		json_object_set_new(doc, "b", json_utf8(b));
		json_object_set_new(doc, "totals", json_pack("{s:o,s:o,s:o,"
		    "s:o,s:o,s:i,s:o,s:i}",
		    "a_bytes", json_count(tot[0]),
		    "a_allocations", json_count(cnt[0]),
		    "b_bytes", json_count(tot[1]),
		    "b_allocations", json_count(cnt[1]),
		    "grew_bytes", json_count(grew), "grew_groups", (int)ngrew,
		    "shrank_bytes", json_count(shrank),
		    "shrank_groups", (int)nshrank));
		json_object_set_new(doc, "grew", ja);
		json_object_set_new(doc, "shrank", js);
		if (render_json_write(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER,
		    o->json))
			goto out;
	}
	rc = ngrew > 0 && o->error_exitcode != 0 ? (int)o->error_exitcode :
	    0;
out:
	json_decref(doc);
	free(t.v);
	model_free(&m[0]);
	model_free(&m[1]);
	return rc;
}
