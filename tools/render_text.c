/*
 * render_text.c -- the text report, in the spirit of compute-sanitizer and
 * valgrind: every line starts with "== "; leak groups largest first, each
 * with its symbolized allocation stack; violation groups with their
 * violating, allocation and first-free stacks (render_finding.c); then the
 * LEAK SUMMARY, suppressions used, ERROR SUMMARY and COVERAGE lines.
 *
 * What is shown: -q (verbosity -1) only what counts (leaks, teardown
 * leaks, violations, lost processes) and, when something does, the
 * summary lines; -v (verbosity 1) every process and owner and more
 * coverage counts; --show-leak-kinds the leak categories; --print-limit
 * the finding groups, in the order printed.  A line says what the last
 * two left out; the summary lines always count everything.
 *
 * It goes to a terminal or a CI log, and its names come from report
 * files, which a corrupt or hostile one fills with any bytes: every name
 * is escaped (rt_tx).  Behind that, the stream itself goes through a
 * filter (line_write) that escapes any control character but the newline
 * and the colour marks (render_text_int.h), and starts every line with
 * "==".
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "audit.h"
#include "json.h"
#include "fold.h"
#include "model.h"
#include "num.h"
#include "render.h"
#include "render_text_int.h"
#include "run.h"
#include "suppress.h"
#include "xalloc.h"

static void
print_used(const char *rule, const char *origin, uint64_t count,
    uint64_t bytes, void *arg)
{
	FILE *out = arg;
	char b1[96], b2[96];

	fprintf(out, "==    %s, %s: %s (%s)\n",
	    fmt_sum(count, "x", true, b1, sizeof(b1)),
	    fmt_sum(bytes, "bytes", true, b2, sizeof(b2)), rt_tx(rule),
	    rt_tx(origin));
}

typedef struct owner_sum_s {
	const char *owner;
	uint64_t bytes, count;
} owner_sum_t;

static int
cmp_owner(const void *a, const void *b)
{
	const owner_sum_t *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->owner, y->owner);
}

/* Leaked bytes per owner, largest first, when there are several owners
 * (at most 10 named); with -v, whatever their number, all named. */
static void
print_owners(const au_model_t *m, bool verbose, FILE *out)
{
	size_t most = verbose ? SIZE_MAX : 10;
	owner_sum_t *v = xcalloc(m->nleaks + 1, sizeof(*v));
	size_t i, j, n = 0;
	char b1[96], b2[96];

	for (i = 0; i < m->nleaks; i++) {
		const au_finding_t *f = m->leaks[i];

		if (!finding_reported(f) || f->cat == AU_CAT_RANGE)
			continue;
		for (j = 0; j < n && strcmp(v[j].owner, f->owner) != 0; j++)
			;
		if (j == n)
			v[n++].owner = f->owner;
		v[j].bytes = sat_add(v[j].bytes, f->bytes);
		v[j].count = sat_add(v[j].count, f->count);
	}
	if (n > (verbose ? 0 : 1)) {
		qsort(v, n, sizeof(*v), cmp_owner);
		fputs("== BY OWNER:\n", out);
		for (i = 0; i < n && i < most; i++)
			fprintf(out, "==    %s in %s: %s\n",
			    fmt_sum(v[i].bytes, "bytes", true, b1, sizeof(b1)),
			    rt_amount(v[i].count, "allocation", "allocations",
			    true, b2, sizeof(b2)),
			    v[i].owner[0] ? rt_tx(v[i].owner) :
			    "(unknown owner)");
		if (n > most)
			fprintf(out, "==    ... %zu more owners\n", n - most);
	}
	free(v);
}

/* A process whose stacks have no Python frames though it ran Python (the
 * report's "python" member, doc/stacks.md): said once, under its line. */
static void
python_off_line(FILE *out, const au_process_t *p)
{
	const json_t *py = json_object_get(p->doc, "python");
	const char *why = json_str(py, "reason", "");

	if (py == NULL || json_is_true(json_object_get(py, "frames")) ||
	    why[0] == '\0')
		return;
	fprintf(out, "==      native frames only, no Python frames: %s\n",
	    rt_tx(why));
}

/* What a process ran and how it ended, as PROCESSES prints it after its
 * name: " CMD ARGS -- exit 0".  Returns a string to free. */
static char *
process_tail(const au_process_t *p)
{
	const json_t *cmd = json_object_get(p->doc, "command");
	char *buf = NULL;
	size_t len = 0, k;
	FILE *o = open_memstream(&buf, &len);

	if (o == NULL)
		return xstrdup(" ?");
	for (k = 0; k < json_array_size(cmd) && k < 8; k++) {
		const char *arg = json_string_value(json_array_get(cmd, k));

		fprintf(o, " %s", arg ? rt_tx(arg) : "?");
	}
	if (json_array_size(cmd) > 8)
		fputs(" ...", o);
	if (json_array_size(cmd) == 0)
		fprintf(o, " %s", p->exe[0] ? rt_tx(p->exe) : "?");
	/* Never "-1": a status nobody knows is said to be unknown. */
	if (strcmp(p->exit_how, "snapshot") == 0)
		fprintf(o, " -- snapshot %lld (running)",
		    json_int(json_object_get(p->doc, "exit"), "snapshot", 0));
	else if (p->exit_status >= 0)
		fprintf(o, " -- %s %ld", rt_tx(p->exit_how), p->exit_status);
	else if (strcmp(p->exit_how, "exit") == 0)
		fputs(" -- exit status unknown", o);
	else
		fprintf(o, " -- %s, exit status unknown", rt_tx(p->exit_how));
	if (fclose(o) != 0 || buf == NULL) {
		free(buf);
		return xstrdup(" ?");
	}
	return buf;
}

static const char *
process_flag(const au_process_t *p)
{
	return p->library ? " (libcuwarden)" : p->cuda_active ? "" :
	    " (no CUDA activity)";
}

/* Past this many processes, PROCESSES folds them (without -v). */
#define PROCESS_LINES_MAX 16

/* PROCESSES for a big job: one line per group of processes that ran the
 * same command, ended the same way and did (or did not) leak and break
 * contracts alike; a group's ranks listed compactly, its figures summed
 * (doc/audit.md, "PROCESSES"). */
static void
print_processes_folded(const au_model_t *m, FILE *out)
{
	size_t n = m->nprocs, ng = 0, i, j;
	char **tail = xcalloc(n, sizeof(*tail));
	size_t *grp = xcalloc(n, sizeof(*grp)), *first = xcalloc(n,
	    sizeof(*first));
	char b1[32], b2[32], b3[32];

	for (i = 0; i < n; i++) {
		const au_process_t *p = &m->procs[i];
		const json_t *sm = json_object_get(p->doc, "summary");
		char *t = process_tail(p);

		tail[i] = xasprintf("%s%s|%d%d", t, process_flag(p),
		    json_int(sm, "leaked_bytes", 0) > 0,
		    json_int(sm, "violations", 0) > 0);
		free(t);
		for (j = 0; j < ng; j++)
			if (strcmp(tail[first[j]], tail[i]) == 0)
				break;
		if (j == ng)
			first[ng++] = i;
		grp[i] = j;
	}
	fprintf(out, "== PROCESSES: %s, in %zu group%s by command and end "
	    "(-v lists each):\n", fmt_commas(n, b1, sizeof(b1)), ng,
	    ng == 1 ? "" : "s");
	for (j = 0; j < ng; j++) {
		long *ranks = xcalloc(n, sizeof(*ranks));
		const char **hosts = xcalloc(n, sizeof(*hosts));
		size_t nr = 0, nh = 0, np = 0, nun = 0, h;
		uint64_t allocs = 0, leaked = 0, viol = 0;
		const au_process_t *p0 = &m->procs[first[j]];

		for (i = 0; i < n; i++) {
			const au_process_t *p = &m->procs[i];
			const json_t *sm = json_object_get(p->doc, "summary");
			const json_t *cov = json_object_get(p->doc, "coverage");

			if (grp[i] != j)
				continue;
			np++;
			if (p->rank >= 0)
				ranks[nr++] = p->rank;
			else
				nun++;
			for (h = 0; h < nh; h++)
				if (strcmp(hosts[h], p->host) == 0)
					break;
			if (h == nh)
				hosts[nh++] = p->host;
			allocs += (uint64_t)json_int(cov, "allocations", 0);
			leaked += (uint64_t)json_int(sm, "leaked_bytes", 0);
			viol += (uint64_t)json_int(sm, "violations", 0);
		}
		nr = fold_rank_sort(ranks, nr);
		fputs("==    ", out);
		if (nr > 0) {
			char *list = fold_rank_list(ranks, nr);

			fprintf(out, "rank%s %s", nr == 1 ? "" : "s", list);
			free(list);
			if (nun > 0)
				fprintf(out, " and %zu process%s without a "
				    "rank", nun, nun == 1 ? "" : "es");
		} else {
			fprintf(out, "pid %ld", p0->pid);
		}
		if (np > 1)
			fprintf(out, " (%s processes", fmt_commas(np, b1,
			    sizeof(b1)));
		if (np > 1 && nh > 1)
			fprintf(out, " on %s hosts", fmt_commas(nh, b1,
			    sizeof(b1)));
		if (np > 1)
			fputc(')', out);
		char *t = process_tail(p0);
		fprintf(out, ":%s, %s allocation%s, %s bytes leaked, %s "
		    "violation%s%s%s\n", t, fmt_commas(allocs, b1, sizeof(b1)),
		    allocs == 1 ? "" : "s", fmt_commas(leaked, b2, sizeof(b2)),
		    fmt_commas(viol, b3, sizeof(b3)), viol == 1 ? "" : "s",
		    np > 1 ? " in all" : "", process_flag(p0));
		free(t);
		free(ranks);
		free(hosts);
	}
	for (i = 0; i < n; i++)
		free(tail[i]);
	free(tail);
	free(grp);
	free(first);
}

/* One line per process, when there are several (with -v, always); past
 * PROCESS_LINES_MAX, folded. */
static void
print_processes(const au_model_t *m, bool verbose, FILE *out)
{
	char b1[32], lab[320];
	size_t i;

	if (m->nprocs < (verbose ? 1 : 2))
		return;
	if (!verbose && m->nprocs > PROCESS_LINES_MAX) {
		print_processes_folded(m, out);
		return;
	}
	fputs("== PROCESSES:\n", out);
	for (i = 0; i < m->nprocs; i++) {
		const au_process_t *p = &m->procs[i];
		const json_t *sm = json_object_get(p->doc, "summary");
		const json_t *cov = json_object_get(p->doc, "coverage");
		char *t = process_tail(p);

		if (p->rank >= 0)
			fprintf(out, "==    %s (pid %ld, parent %ld):",
			    rt_tx(process_name(m, p, lab, sizeof(lab))),
			    p->pid, p->ppid);
		else
			fprintf(out, "==    pid %s (parent %ld):",
			    rt_tx(process_label(m, p, lab, sizeof(lab))),
			    p->ppid);
		fprintf(out, "%s, %lld allocation%s, %s bytes leaked, "
		    "%lld violation%s%s\n", t, json_int(cov, "allocations", 0),
		    json_int(cov, "allocations", 0) == 1 ? "" : "s",
		    fmt_commas((uint64_t)json_int(sm, "leaked_bytes", 0), b1,
		    sizeof(b1)), json_int(sm, "violations", 0),
		    json_int(sm, "violations", 0) == 1 ? "" : "s",
		    process_flag(p));
		free(t);
		python_off_line(out, p);
	}
}

/* A snapshot (doc/report-schema.md, "exit"): its live allocations are
 * listed as leaks would be; said first, so that nobody takes them for
 * leaks at exit. */
static void
print_snapshots(const au_model_t *m, FILE *out)
{
	char lab[320];

	for (size_t i = 0; i < m->nprocs; i++) {
		const au_process_t *p = &m->procs[i];

		if (strcmp(p->exit_how, "snapshot") != 0)
			continue;
		fprintf(out, "== SNAPSHOT %lld of %s, a running process "
		    "(%s): its live allocations, listed as leaks would be; "
		    "not an exit\n", json_int(json_object_get(p->doc, "exit"),
		    "snapshot", 0), rt_tx(process_name(m, p, lab,
		    sizeof(lab))), rt_tx(json_str(p->doc, "time", "time "
		    "unknown")));
	}
}

/* A report that left parts out (the shim's exit from a signal handler
 * inside the shim): said after the coverage, whatever the count of
 * processes, since what it lacks is not in the figures above. */
static void
print_incomplete(const au_model_t *m, FILE *out)
{
	char lab[320];

	for (size_t i = 0; i < m->nprocs; i++) {
		const au_process_t *p = &m->procs[i];
		const json_t *inc = json_object_get(p->doc, "incomplete");
		long long n = json_int(inc, "parts_left_out", 0);

		if (!json_is_object(inc))
			continue;
		fprintf(out, "== INCOMPLETE: the report of %s left %lld "
		    "part%s out (%s)\n", rt_tx(process_name(m, p, lab,
		    sizeof(lab))), n, n == 1 ? "" : "s",
		    rt_tx(json_str(inc, "reason", "no reason given")));
	}
}

/* The processes that used CUDA and left no report (run_lost.c), last:
 * what the figures above do not hold. */
static void
print_lost(const au_model_t *m, FILE *out)
{
	for (size_t i = 0; i < m->nlost; i++) {
		char *line = run_lost_line(&m->lost[i]);

		fprintf(out, "== " RT_ERR "LOST: %s" RT_OFF "\n", line);
		free(line);
	}
}

/* The filter between the renderer and the real stream (fopencookie):
 * every line starts with "==" ("== " is put in front of one that does
 * not), and every control character but the newline is written as \xNN,
 * but the colour marks: SGR sequences with colour on, nothing with it
 * off.  Names are escaped before they get here (rt_tx); this holds the
 * line format whatever the renderer writes. */
typedef struct line_filter_s {
	FILE *out;
	int col; /* bytes of the current line so far, counted up to 2 */
	bool color;
} line_filter_t;

static const char *const sgr[] = {
	[1] = "\033[1;31m", /* RT_ERR */
	[2] = "\033[33m",   /* RT_NOTE */
	[3] = "\033[1m",    /* RT_SUM */
	[4] = "\033[0m",    /* RT_OFF */
};

static ssize_t
line_write(void *cookie, const char *buf, size_t n)
{
	line_filter_t *lf = cookie;
	char tmp[1024];
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (o + 16 > sizeof(tmp)) {
			if (fwrite(tmp, 1, o, lf->out) != o)
				return -1;
			o = 0;
		}
		if (lf->col == 0 && c != '=') {
			memcpy(tmp + o, c == '\n' ? "==" : "== ", 3);
			o += c == '\n' ? 2 : 3;
			lf->col = 2;
		} else if (lf->col == 1 && c != '=') {
			memcpy(tmp + o, c == '\n' ? "=" : "= ", 2);
			o += c == '\n' ? 1 : 2;
			lf->col = 2;
		}
		if (c == '\n') {
			tmp[o++] = '\n';
			lf->col = 0;
			continue;
		}
		if (c >= 1 && c <= 4) { /* a colour mark */
			if (lf->color) {
				memcpy(tmp + o, sgr[c], strlen(sgr[c]));
				o += strlen(sgr[c]);
			}
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(tmp + o, 5, "\\x%02x", c);
		else
			tmp[o++] = (char)c;
		if (lf->col < 2)
			lf->col++;
	}
	if (o > 0 && fwrite(tmp, 1, o, lf->out) != o)
		return -1;
	return (ssize_t)n;
}

/* out behind the filter lf, or NULL (no memory: a line says so on out,
 * and nothing unfiltered is ever written). */
static FILE *
filter_open(line_filter_t *lf, FILE *out, bool color)
{
	cookie_io_functions_t io = { .write = line_write };
	FILE *safe;

	lf->out = out;
	lf->col = 0;
	lf->color = color;
	if ((safe = fopencookie(lf, "w", io)) == NULL)
		fputs("== the text report could not be written: out of memory\n",
		    out);
	return safe;
}

/* ----------------------------------------------------------- findings */

/* What the text report left out of what it would show: groups, and
 * their bytes, allocations, address ranges and violations. */
typedef struct hidden_s {
	uint64_t leak_groups, bytes, allocations, ranges;
	uint64_t viol_groups, violations;
} hidden_t;

static void
hide(hidden_t *h, const au_finding_t *f)
{
	if (f->cls == AU_VIOLATION) {
		h->viol_groups++;
		h->violations = sat_add(h->violations, f->count);
		return;
	}
	h->leak_groups++;
	h->bytes = sat_add(h->bytes, f->bytes);
	if (f->cat == AU_CAT_RANGE)
		h->ranges = sat_add(h->ranges, f->count);
	else
		h->allocations = sat_add(h->allocations, f->count);
}

/* "== NOT SHOWN: 2 leak groups (3,072 bytes in 2 allocations) and 1
 * violation group (1 violation), WHY; counted in the summary" */
static void
print_hidden(FILE *out, const hidden_t *h, const char *why)
{
	char b1[96], b2[96], b3[96];

	if (h->leak_groups == 0 && h->viol_groups == 0)
		return;
	fputs("== NOT SHOWN: ", out);
	if (h->leak_groups > 0) {
		fprintf(out, "%s (%s in ", rt_amount(h->leak_groups,
		    "leak group", "leak groups", true, b1, sizeof(b1)),
		    fmt_sum(h->bytes, "bytes", true, b2, sizeof(b2)));
		if (h->allocations > 0)
			fputs(rt_amount(h->allocations, "allocation",
			    "allocations", true, b3, sizeof(b3)), out);
		if (h->allocations > 0 && h->ranges > 0)
			fputs(" and ", out);
		if (h->ranges > 0)
			fputs(rt_amount(h->ranges, "address range",
			    "address ranges", true, b3, sizeof(b3)), out);
		fprintf(out, ")%s", h->viol_groups > 0 ? " and " : "");
	}
	if (h->viol_groups > 0)
		fprintf(out, "%s (%s)", rt_amount(h->viol_groups,
		    "violation group", "violation groups", true, b1,
		    sizeof(b1)), rt_amount(h->violations, "violation",
		    "violations", true, b2, sizeof(b2)));
	fprintf(out, ", %s; counted in the summary lines, all in --json\n", why);
}

/* The leak groups in the order shown: pass 0..2 the reported ones of
 * category pass (AU_CAT_LEAK, AU_CAT_TEARDOWN, AU_CAT_RANGE: 0, 1, 2),
 * pass 3 those not reported (--show-leak-kinds=suppressed). */
static bool
in_pass(const au_finding_t *f, int pass)
{
	return pass < 3 ? finding_reported(f) && (int)f->cat == pass :
	    !finding_reported(f);
}

static void
print_findings(const au_model_t *m, const au_render_opts_t *o, FILE *out)
{
	unsigned kinds = o->show_kinds ? o->show_kinds : AU_SHOW_DEFAULT;
	bool quiet = o->verbosity < 0;
	hidden_t by_kind = { 0 }, by_limit = { 0 };
	size_t i, shown = 0;
	char why[64];

	for (int pass = 0; pass < 4; pass++) {
		unsigned bit = pass < 3 ? AU_SHOW_CAT(pass) :
		    AU_SHOW_SUPPRESSED;

		/* -q: only what counts (never address ranges, nor what was
		 * not reported). */
		if (quiet && pass >= AU_CAT_RANGE)
			break;
		for (i = 0; i < m->nleaks; i++) {
			const au_finding_t *f = m->leaks[i];

			if (!in_pass(f, pass))
				continue;
			if (!(kinds & bit)) {
				if (pass < 3) /* SUPPRESSED says the rest */
					hide(&by_kind, f);
			} else if (o->print_limit > 0 &&
			    shown >= o->print_limit) {
				hide(&by_limit, f);
			} else {
				rt_leak(out, f, o->stack_limit);
				shown++;
			}
		}
	}
	for (i = 0; i < m->nviols; i++) {
		const au_finding_t *f = m->viols[i];

		if (!finding_reported(f))
			continue;
		if (o->print_limit > 0 && shown >= o->print_limit) {
			hide(&by_limit, f);
		} else {
			rt_violation(out, f, o->stack_limit);
			shown++;
		}
	}
	print_hidden(out, &by_kind, "of categories --show-leak-kinds "
	    "leaves out");
	snprintf(why, sizeof(why), "past --print-limit %zu",
	    o->print_limit);
	print_hidden(out, &by_limit, why);
}

/* ------------------------------------------------------------ summary */

static void
print_coverage(const au_render_opts_t *o, const au_totals_t *t, FILE *out)
{
	char b1[96];

	fprintf(out, "== COVERAGE: %llu process%s audited",
	    (unsigned long long)t->processes, t->processes == 1 ? "" : "es");
	/* libcuwarden's reports have no shim counts: only theirs, nothing
	 * of the shim to say; with others, say whose the counts are. */
	if (t->library > 0 && t->library == t->processes) {
		fputs(", using CUDA through libcuwarden (no shim: no hook "
		    "counts)\n", out);
		return;
	}
	if (t->library > 0)
		fprintf(out, " (%llu through libcuwarden, not counted below)",
		    (unsigned long long)t->library);
	fprintf(out, ", %s", rt_amount(t->allocations, "allocation",
	    "allocations", true, b1, sizeof(b1)));
	if (o->verbosity > 0)
		fprintf(out, " and %s", rt_amount(t->frees, "free", "frees",
		    true, b1, sizeof(b1)));
	fprintf(out, " seen%s, hooks active in %llu", t->library > 0 ?
	    " by the shim" : "", (unsigned long long)t->hooks_active);
	if (t->untracked_frees > 0 || o->verbosity > 0)
		fprintf(out, ", %s", rt_amount(t->untracked_frees,
		    "untracked free", "untracked frees", true, b1,
		    sizeof(b1)));
	if (o->verbosity > 0)
		fprintf(out, ", %s", rt_amount(t->failed_calls,
		    "failed call", "failed calls", true, b1, sizeof(b1)));
	if (t->cuda_active == 0)
		fputs(": no CUDA activity seen", out);
	fputc('\n', out);
}

/* What was not reported: accepted, address ranges, suppressed, in the
 * baseline. */
static void
print_unreported(const au_render_opts_t *o, const au_totals_t *t,
    FILE *out)
{
	char b1[96], b2[96], b3[96];

	if (t->accepted_groups > 0)
		fprintf(out, "== ACCEPTED: %s in %s freed only by context "
		    "teardown (--accept-teardown), not counted\n",
		    fmt_sum(t->accepted_bytes, "bytes", true, b1, sizeof(b1)),
		    rt_amount(t->accepted_allocations, "allocation",
		    "allocations", true, b2, sizeof(b2)));
	if (t->range_groups > 0)
		fprintf(out, "== ADDRESS RANGES NEVER FREED: %s of address "
		    "space in %s (%s; not memory, not counted as leaks)\n",
		    fmt_sum(t->range_bytes, "bytes", true, b1, sizeof(b1)),
		    rt_amount(t->ranges, "range", "ranges", true, b2,
		    sizeof(b2)), rt_amount(t->range_groups, "group",
		    "groups", true, b3, sizeof(b3)));
	if (t->suppressed_leaks > 0 || t->suppressed_violations > 0) {
		fprintf(out, "== SUPPRESSED: %s in %s, %s\n",
		    fmt_sum(t->suppressed_bytes, "bytes", true, b1,
		    sizeof(b1)),
		    rt_amount(t->suppressed_leaks, "allocation", "allocations",
		    true, b2, sizeof(b2)),
		    rt_amount(t->suppressed_violations, "violation",
		    "violations", true, b3, sizeof(b3)));
		supp_foreach_used(o->supp, print_used, out);
	}
	if (o->baseline != NULL)
		fprintf(out, "== BASELINE: %llu leak group%s and %llu "
		    "violation group%s already in %s, not reported\n",
		    (unsigned long long)t->baseline_leaks,
		    t->baseline_leaks == 1 ? "" : "s",
		    (unsigned long long)t->baseline_violations,
		    t->baseline_violations == 1 ? "" : "s",
		    rt_tx(o->baseline));
}

/* A distributed job (fold.c): the ranks that reported, and those that
 * did not, last, as the lost processes are. */
static void
print_ranks(const au_model_t *m, FILE *out)
{
	char *list;

	if (!m->ranked || m->one_rank)
		return;
	fprintf(out, "== RANKS: %zu of %ld reported\n", m->nranks_found,
	    m->world_size);
	if (m->nmissing_ranks == 0)
		return;
	list = fold_missing_line(m);
	fprintf(out, "== " RT_ERR "MISSING RANKS: %s" RT_OFF "\n", list);
	free(list);
}

static void
render_body(const au_model_t *m, const au_render_opts_t *o, FILE *out)
{
	au_totals_t t;
	char b1[96], b2[96], b3[96];
	bool quiet = o->verbosity < 0;

	/* Every number grouped (valgrind); the two summary lines as
	 * compute-sanitizer writes them with --plain-summary. */
	bool grouped = !o->plain_summary;

	model_totals(m, &t);
	/* An OOM first: what the process was doing when it ran out. */
	render_oom_text(m, o->stack_limit, out);
	/* Then the peaks: what the process held at its most. */
	render_peak_text(m, o->stack_limit, out);
	/* And what grew steadily while it ran. */
	render_growth_text(m, o->stack_limit, out);
	print_snapshots(m, out);
	print_findings(m, o, out);
	if (!quiet) {
		print_processes(m, o->verbosity > 0, out);
		print_owners(m, o->verbosity > 0, out);
	}
	/* -q: the summary only when something counts. */
	if (!quiet || t.errors > 0) {
		fprintf(out, "== " RT_SUM "LEAK SUMMARY: %s leaked in %s "
		    "(%s)" RT_OFF "\n",
		    fmt_sum(t.leaked_bytes, "bytes", grouped, b1, sizeof(b1)),
		    rt_amount(t.leaked_allocations, "allocation",
		    "allocations", grouped, b2, sizeof(b2)),
		    rt_amount(t.leak_groups, "group", "groups", grouped, b3,
		    sizeof(b3)));
		if (t.teardown_groups > 0)
			fprintf(out, "==    of which freed only by context "
			    "teardown: %s in %s (%s; --accept-teardown to "
			    "accept them)\n",
			    fmt_sum(t.teardown_bytes, "bytes", true, b1,
			    sizeof(b1)),
			    rt_amount(t.teardown_allocations, "allocation",
			    "allocations", true, b2, sizeof(b2)),
			    rt_amount(t.teardown_groups, "group", "groups",
			    true, b3, sizeof(b3)));
	}
	if (!quiet)
		print_unreported(o, &t, out);
	if (!quiet || t.errors > 0)
		fprintf(out, "== " RT_SUM "ERROR SUMMARY: %s (%s, %s)" RT_OFF
		    "\n", rt_amount(t.errors, "error", "errors", grouped, b1,
		    sizeof(b1)),
		    rt_amount(t.leaked_allocations, "leak", "leaks", grouped,
		    b2, sizeof(b2)),
		    rt_amount(t.violations, "violation", "violations",
		    grouped, b3, sizeof(b3)));
	if (!quiet)
		print_coverage(o, &t, out);
	print_incomplete(m, out);
	print_lost(m, out);
	print_ranks(m, out);
}

void
render_text(const au_model_t *m, const au_render_opts_t *o, FILE *out)
{
	line_filter_t lf;
	FILE *safe = filter_open(&lf, out, o->color);

	if (safe == NULL)
		return;
	render_body(m, o, safe);
	fclose(safe);        /* flushes into out, which stays open */
	fflush(out);
	rt_tx_done();
}

void
render_text_status(const au_model_t *m, const au_render_opts_t *o,
    int status, uint64_t errors, FILE *out)
{
	line_filter_t lf;
	FILE *safe = filter_open(&lf, out, o->color);
	char b1[96];

	if (safe == NULL)
		return;
	/* Why the job failed, where CI shows it: the last line. */
	fprintf(safe, "== " RT_ERR "EXIT STATUS: %d (%s reported", status,
	    fmt_sum(errors, errors == 1 ? "error" : "errors", true, b1,
	    sizeof(b1)));
	if (m->ran && m->exit_status >= 0)
		fprintf(safe, "; the program exited with %d", m->exit_status);
	fputs(")" RT_OFF "\n", safe);
	fclose(safe); /* into out: its owner flushes it, checking errors */
}

void
render_text_stack(const au_stack_t *s, int stack_limit, FILE *out)
{
	line_filter_t lf;
	FILE *safe = filter_open(&lf, out, false);

	if (safe == NULL)
		return;
	rt_stack(safe, s, stack_limit);
	fclose(safe);
	rt_tx_done();
}

void
render_text_finding(const au_finding_t *f, int stack_limit, FILE *out)
{
	line_filter_t lf;
	FILE *safe = filter_open(&lf, out, false);

	if (safe == NULL)
		return;
	if (f->cls == AU_LEAK)
		rt_leak(safe, f, stack_limit);
	else
		rt_violation(safe, f, stack_limit);
	fclose(safe);
	rt_tx_done();
}

void
render_text_oom(const au_oom_t *oom, int stack_limit, FILE *out)
{
	line_filter_t lf;
	FILE *safe = filter_open(&lf, out, false);

	if (safe == NULL)
		return;
	rt_oom(safe, oom, stack_limit);
	fclose(safe);
	rt_tx_done();
}
