/*
 * model.c -- the model the reports are read into (model.h): findings
 * kept by fingerprint, added or merged, sorted, summed and freed.
 *
 * Findings of one group -- the same class, category, kind/type, api and
 * whole stack (fingerprint_same, baseline.c) -- are one finding, whatever
 * process they came from: counts and bytes add up (saturating), pids,
 * devices and example addresses are collected.  The index is an
 * open-addressing table of the findings by fingerprint, kept at most half
 * full; equal fingerprints are checked with fingerprint_same, so a hash
 * collision never merges two groups.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "baseline.h"
#include "json.h"
#include "model.h"
#include "num.h"
#include "xalloc.h"

/* ------------------------------------------------------------ the index */

struct au_index_s {
	size_t cap; /* power of two */
	size_t n;
	au_finding_t **slots;
};

static au_finding_t **
index_slot(au_model_t *m, const au_finding_t *f)
{
	uint64_t fp = f->fp;
	au_class_t cls = f->cls;
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
			au_finding_t *g = old.slots[i];
			size_t j;

			if (g == NULL)
				continue;
			j = (size_t)(g->fp ^ g->cls) & (ix->cap - 1);
			while (ix->slots[j] != NULL)
				j = (j + 1) & (ix->cap - 1);
			ix->slots[j] = g;
		}
		free(old.slots);
	}
	i = (size_t)(fp ^ cls) & (ix->cap - 1);
	while (ix->slots[i] != NULL && !(ix->slots[i]->fp == fp &&
	    fingerprint_same(ix->slots[i], f)))
		i = (i + 1) & (ix->cap - 1);
	return &ix->slots[i];
}

/* ------------------------------------------------------------ findings */

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

void
finding_add_pid(au_finding_t *f, long pid, const char *host)
{
	size_t i;

	if (host == NULL)
		host = "";
	for (i = 0; i < f->npids; i++)
		if (f->pids[i] == pid && strcmp(f->hosts[i], host) == 0)
			return;
	f->pids = xrealloc(f->pids, (f->npids + 1) * sizeof(*f->pids));
	f->hosts = xrealloc(f->hosts, (f->npids + 1) * sizeof(*f->hosts));
	if (f->pid_count != NULL) {
		f->pid_count = xrealloc(f->pid_count,
		    (f->npids + 1) * sizeof(*f->pid_count));
		f->pid_bytes = xrealloc(f->pid_bytes,
		    (f->npids + 1) * sizeof(*f->pid_bytes));
		f->pid_count[f->npids] = f->pid_bytes[f->npids] = 0;
	}
	f->pids[f->npids] = pid;
	f->hosts[f->npids++] = xstrdup(host);
}

/* Adds the share (count, bytes) of f's i-th pid to g's slot of that pid
 * (finding_add_pid has made it). */
static void
add_share(au_finding_t *g, const au_finding_t *f, size_t i)
{
	for (size_t k = 0; k < g->npids; k++) {
		if (g->pids[k] != f->pids[i] ||
		    strcmp(g->hosts[k], f->hosts[i]) != 0)
			continue;
		g->pid_count[k] = sat_add(g->pid_count[k], f->pid_count[i]);
		g->pid_bytes[k] = sat_add(g->pid_bytes[k], f->pid_bytes[i]);
		return;
	}
}

/* A finding read from one process's report is that process's share. */
static void
own_share(au_finding_t *f)
{
	if (f->pid_count != NULL || f->npids != 1)
		return;
	f->pid_count = xmalloc(sizeof(*f->pid_count));
	f->pid_bytes = xmalloc(sizeof(*f->pid_bytes));
	f->pid_count[0] = f->count;
	f->pid_bytes[0] = f->bytes;
}

static void
drop_shares(au_finding_t *f)
{
	free(f->pid_count);
	free(f->pid_bytes);
	f->pid_count = f->pid_bytes = NULL;
}

bool
finding_has_process(const au_finding_t *f, const au_process_t *p)
{
	for (size_t i = 0; i < f->npids; i++)
		if (f->pids[i] == p->pid && strcmp(f->hosts[i], p->host) == 0)
			return true;
	return false;
}

const char *
process_label(const au_model_t *m, const au_process_t *p, char *buf,
    size_t size)
{
	if (m->show_hosts)
		snprintf(buf, size, "%s:%ld", p->host[0] != '\0' ? p->host :
		    "?", p->pid);
	else
		snprintf(buf, size, "%ld", p->pid);
	return buf;
}

const char *
process_name(const au_model_t *m, const au_process_t *p, char *buf,
    size_t size)
{
	char lab[300];

	if (p->rank >= 0 && m->show_hosts)
		snprintf(buf, size, "%s:rank %ld", p->host[0] != '\0' ?
		    p->host : "?", p->rank);
	else if (p->rank >= 0)
		snprintf(buf, size, "rank %ld", p->rank);
	else
		snprintf(buf, size, "pid %s", process_label(m, p, lab,
		    sizeof(lab)));
	return buf;
}

const char *
finding_pid_label(const au_finding_t *f, size_t i, char *buf, size_t size)
{
	if (f->show_hosts)
		snprintf(buf, size, "%s:%ld", f->hosts[i][0] != '\0' ?
		    f->hosts[i] : "?", f->pids[i]);
	else
		snprintf(buf, size, "%ld", f->pids[i]);
	return buf;
}

void
finding_add_device(au_finding_t *f, int dev)
{
	size_t i;

	for (i = 0; i < f->ndevices; i++)
		if (f->devices[i] == dev)
			return;
	f->devices = xrealloc(f->devices,
	    (f->ndevices + 1) * sizeof(*f->devices));
	f->devices[f->ndevices++] = dev;
}

void
finding_add_address(au_finding_t *f, const char *a)
{
	if (a == NULL || f->naddresses >= AU_MAX_ADDRESSES)
		return;
	if (f->addresses == NULL)
		f->addresses = xcalloc(AU_MAX_ADDRESSES,
		    sizeof(*f->addresses));
	f->addresses[f->naddresses++] = xstrdup(a);
}

void
finding_free(au_finding_t *f)
{
	size_t i;

	free(f->type);
	free(f->kind);
	free(f->family);
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
	for (i = 0; i < f->npids; i++)
		free(f->hosts[i]);
	free(f->hosts);
	free(f->pids);
	drop_shares(f);
	free(f->ranks);
	free(f->pid_ranks);
	free(f);
}

void
model_add(au_model_t *m, au_finding_t *f)
{
	au_finding_t **slot, *g;
	size_t i;

	fingerprint_compute(f);
	own_share(f);
	slot = index_slot(m, f);
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
	if (f->pid_count == NULL)
		drop_shares(g);
	for (i = 0; i < f->npids; i++) {
		finding_add_pid(g, f->pids[i], f->hosts[i]);
		if (g->pid_count != NULL)
			add_share(g, f, i);
	}
	for (i = 0; i < f->ndevices; i++)
		finding_add_device(g, f->devices[i]);
	for (i = 0; i < f->naddresses; i++)
		finding_add_address(g, f->addresses[i]);
	if (g->owner[0] == '\0' && f->owner[0] != '\0') {
		free(g->owner);
		g->owner = xstrdup(f->owner);
	}
	finding_free(f);
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
	int c;

	/* A job's processes by host and rank, before any without a rank
	 * (a launcher), which keep the order of their pids. */
	if ((x->rank >= 0) != (y->rank >= 0))
		return x->rank >= 0 ? -1 : 1;
	if (x->rank >= 0) {
		if ((c = strcmp(x->host, y->host)) != 0)
			return c;
		if (x->rank != y->rank)
			return x->rank < y->rank ? -1 : 1;
	}
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Do the processes span more than one host ("" is a host of its own:
 * a report that does not say)? */
static bool
several_hosts(const au_model_t *m)
{
	for (size_t i = 1; i < m->nprocs; i++)
		if (strcmp(m->procs[i].host, m->procs[0].host) != 0)
			return true;
	return false;
}

void
model_sort(au_model_t *m)
{
	bool hosts = several_hosts(m);

	m->show_hosts = hosts;
	for (size_t i = 0; i < m->nleaks; i++)
		m->leaks[i]->show_hosts = hosts;
	for (size_t i = 0; i < m->nviols; i++)
		m->viols[i]->show_hosts = hosts;
	if (m->nleaks > 1)
		qsort(m->leaks, m->nleaks, sizeof(*m->leaks), cmp_leak);
	if (m->nviols > 1)
		qsort(m->viols, m->nviols, sizeof(*m->viols), cmp_seq);
	if (m->nprocs > 1)
		qsort(m->procs, m->nprocs, sizeof(*m->procs), cmp_proc);
}

/* -------------------------------------------------------- categories */

const char model_accepted_teardown[] = "--accept-teardown";

static const char *const cat_names[] = {
	[AU_CAT_LEAK] = "leak",
	[AU_CAT_TEARDOWN] = "teardown",
	[AU_CAT_RANGE] = "address_range",
};

const char *
cat_name(au_cat_t cat)
{
	return (size_t)cat < sizeof(cat_names) / sizeof(cat_names[0]) ?
	    cat_names[cat] : "leak";
}

bool
cat_parse(const char *name, au_cat_t *cat)
{
	for (size_t i = 0; i < sizeof(cat_names) / sizeof(cat_names[0]);
	    i++)
		if (strcmp(name, cat_names[i]) == 0) {
			*cat = (au_cat_t)i;
			return true;
		}
	return false;
}

void
model_accept_teardown(au_model_t *m)
{
	for (size_t i = 0; i < m->nleaks; i++)
		if (m->leaks[i]->cat == AU_CAT_TEARDOWN &&
		    finding_reported(m->leaks[i]))
			m->leaks[i]->suppressed_by = model_accepted_teardown;
}

/* ------------------------------------------------------------ totals */

void
model_totals(const au_model_t *m, au_totals_t *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < m->nleaks; i++) {
		const au_finding_t *f = m->leaks[i];

		if (finding_reported(f) && f->cat == AU_CAT_RANGE) {
			t->range_bytes = sat_add(t->range_bytes, f->bytes);
			t->ranges = sat_add(t->ranges, f->count);
			t->range_groups++;
		} else if (finding_reported(f)) {
			t->leaked_bytes = sat_add(t->leaked_bytes, f->bytes);
			t->leaked_allocations = sat_add(t->leaked_allocations,
			    f->count);
			t->leak_groups++;
			if (f->cat != AU_CAT_TEARDOWN)
				continue;
			t->teardown_bytes = sat_add(t->teardown_bytes,
			    f->bytes);
			t->teardown_allocations = sat_add(
			    t->teardown_allocations, f->count);
			t->teardown_groups++;
		} else if (f->suppressed_by == model_accepted_teardown) {
			t->accepted_bytes = sat_add(t->accepted_bytes,
			    f->bytes);
			t->accepted_allocations = sat_add(
			    t->accepted_allocations, f->count);
			t->accepted_groups++;
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
		free(m->procs[i].host);
		free(m->procs[i].boot_id);
		free(m->procs[i].job_id);
		free(m->procs[i].launcher);
		json_decref(m->procs[i].doc);
	}
	for (i = 0; i < m->nlost; i++) {
		json_decref(m->lost[i].command);
		free(m->lost[i].exe);
	}
	for (i = 0; i < m->nooms; i++) {
		stack_free(&m->ooms[i].request);
		for (size_t k = 0; k < m->ooms[i].ngroups; k++)
			stack_free(&m->ooms[i].groups[k]);
		json_decref(m->ooms[i].doc);
		free(m->ooms[i].path);
	}
	free(m->ooms);
	for (i = 0; i < m->npeaks; i++) {
		for (size_t k = 0; k < m->peaks[i].nstacks; k++)
			stack_free(&m->peaks[i].stacks[k]);
		free(m->peaks[i].stacks);
		json_decref(m->peaks[i].doc);
		free(m->peaks[i].path);
	}
	free(m->peaks);
	for (i = 0; i < m->ntlines; i++) {
		for (size_t k = 0; k < m->tlines[i].nstacks; k++)
			stack_free(&m->tlines[i].stacks[k]);
		free(m->tlines[i].stacks);
		json_decref(m->tlines[i].doc);
		free(m->tlines[i].path);
	}
	free(m->tlines);
	free(m->lost);
	free(m->missing_ranks);
	free(m->leaks);
	free(m->viols);
	free(m->procs);
	if (m->index != NULL)
		free(m->index->slots);
	free(m->index);
	json_decref(m->command);
	memset(m, 0, sizeof(*m));
}
