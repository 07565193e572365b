#include "preamble.h"

/*
 * report.c -- the per-process report (report.h): JSON (the source of
 * truth, doc/report-schema.md) or text (valgrind/compute-sanitizer-like),
 * written by report_write from what the files report_int.h lists gather
 * and format; which file it goes to is report_file.c's.
 *
 * Invariants: nothing in the report's files calls malloc, stdio or the
 * driver.  Scratch memory (the process's facts, the copied records, the
 * groups, the violations) is mmap'd and unmapped before report_write
 * returns; output goes through a fixed buffer with write(2).  The
 * registry walk only copies records; violations, the ledger, the stack
 * depot and stats are read without taking their locks (lock-free for
 * readers), so a report can be written at exit, from an _exit hook and
 * from a signal handler.
 *
 * Locking: none of its own.
 */

#include <errno.h>
#include <string.h>

#include "kinds.h"
#include "report.h"
#include "report_int.h"
#include "stats.h"
#include "violation.h"

bool
report_kind_leaks(int kind)
{
	static const bool leaks[KIND_COUNT] = {
#define KIND_LEAKS(e, name, is_leak, host, line, rule, text) [KIND_##e] = is_leak,
		KIND_LIST(KIND_LEAKS)
#undef KIND_LEAKS
	};
	return kind >= 0 && kind < KIND_COUNT && leaks[kind];
}

static uint64_t
load(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

void
report_coverage_read(stats_coverage_t *c)
{
	const stats_coverage_t *s = &stats_coverage;

	c->hooks_active = load(&s->hooks_active);
	c->hooked_entry_points = load(&s->hooked_entry_points);
	c->allocations = load(&s->allocations);
	c->frees = load(&s->frees);
	c->untracked_frees = load(&s->untracked_frees);
	c->failed_calls = load(&s->failed_calls);
	c->gpa_lookups = load(&s->gpa_lookups);
	c->gpa_redirects = load(&s->gpa_redirects);
	c->dlsym_redirects = load(&s->dlsym_redirects);
	c->teardown_frees = load(&s->teardown_frees);
	c->captures = load(&s->captures);
	c->graph_alloc_nodes = load(&s->graph_alloc_nodes);
	c->graph_free_nodes = load(&s->graph_free_nodes);
	c->graph_instantiations = load(&s->graph_instantiations);
	c->graph_launches = load(&s->graph_launches);
	c->graph_made_live = load(&s->graph_made_live);
	c->graph_freed_by_graph = load(&s->graph_freed_by_graph);
}

/* A leak of any category (address ranges too) or a violation. */
static bool
has_findings(const leaks_t *L, const vcollect_t *V)
{
	return L->nleaks > 0 || V->n > 0 || violation_count() > 0;
}

/* report_write, or with only_found nothing at all when the report holds
 * no finding (*wrote says which). */
static bool
write_report(int fd, cw_format_t format, const report_meta_t *meta,
    bool only_found, bool *wrote)
{
	static const report_meta_t none = { "library", "request", -1, NULL };
	wr_t w;
	leaks_t L;
	vcollect_t V;
	proc_t *p;
	scratch_t ps = SCRATCH_INIT;
	bool err = false;
	int e = 0;

	if (meta == NULL)
		meta = &none;
	if (format != CW_FORMAT_JSON && format != CW_FORMAT_TEXT) {
		errno = EINVAL;
		return true;
	}
	/* proc_t holds PATH_MAX bytes: scratch, not the caller's stack. */
	if (scratch_reserve(&ps, sizeof(proc_t))) {
		errno = ENOMEM;
		return true;
	}
	p = (proc_t *)(void *)ps.p;
	report_proc_read(p);
	memset(&V, 0, sizeof(V));
	if (report_leaks_collect(&L)) {
		e = errno;
		err = true;
		goto out;
	}
	report_violations_collect(&V);
	if (only_found && !has_findings(&L, &V))
		goto out;
	*wrote = true;
	w.fd = fd;
	w.err = false;
	w.saved_errno = 0;
	w.len = 0;
	if (format == CW_FORMAT_JSON)
		report_write_json(&w, meta, p, &L, &V);
	else
		report_write_text(&w, meta, p, &L, &V);
	report_flush(&w);
	if (w.err) {
		err = true;
		e = w.saved_errno;
	}
out:
	report_leaks_free(&L);
	scratch_free(&V.s);
	scratch_free(&p->cmd);
	scratch_free(&ps);
	if (err)
		errno = e;
	return err;
}

bool
report_write(int fd, cw_format_t format, const report_meta_t *meta)
{
	bool wrote = false;

	return write_report(fd, format, meta, false, &wrote);
}

bool
report_write_found(int fd, cw_format_t format, const report_meta_t *meta,
    bool *wrote)
{
	*wrote = false;
	return write_report(fd, format, meta, true, wrote);
}
