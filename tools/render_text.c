/*
 * render_text.c -- the text report, in the spirit of compute-sanitizer and
 * valgrind: every line starts with "== "; leak groups largest first, each
 * with its symbolized allocation stack; violation groups with their
 * violating, allocation and first-free stacks; then the LEAK SUMMARY,
 * suppressions used, ERROR SUMMARY and COVERAGE lines.
 *
 * It goes to a terminal or a CI log, and its names come from report
 * files, which a corrupt or hostile one fills with any bytes: every name
 * is written through tx() (text_escape: a newline as \n, ESC as \x1b,
 * ...), so no name can end a line and start a forged one, and no escape
 * sequence reaches the terminal.  Behind that, the stream itself goes
 * through a filter (line_write) that escapes any control character but
 * the newline and starts every line with "==".
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "audit.h"
#include "json.h"
#include "kinds.h"
#include "model.h"
#include "num.h"
#include "path.h"
#include "render.h"
#include "run.h"
#include "suppress.h"
#include "text.h"
#include "xalloc.h"

/* The ring of tx()'s results: each lives until TX_RING more calls,
 * enough for the names of one fprintf. */
#define TX_RING 8
static char *tx_ring[TX_RING];
static size_t tx_next;

/* A name from a report, escaped for a text line. */
static const char *
tx(const char *s)
{
	char **slot = &tx_ring[tx_next++ % TX_RING];

	free(*slot);
	*slot = text_escape(s);
	return *slot;
}

static void
tx_done(void)
{
	size_t i;

	for (i = 0; i < TX_RING; i++) {
		free(tx_ring[i]);
		tx_ring[i] = NULL;
	}
}

static void
print_frame(FILE *out, const au_frame_t *f, bool first)
{
	const char *word = first ? "at" : "by";
	size_t i;

	/* Inlined calls first, innermost first: they share the pc. */
	for (i = 0; i < f->ninlined; i++) {
		const au_inline_t *in = &f->inlined[i];

		fprintf(out, "==    %s 0x%llx: %s", word,
		    (unsigned long long)f->offset,
		    in->function ? tx(in->function) : "???");
		if (in->file != NULL && in->line > 0)
			fprintf(out, " (%s:%d)", tx(base_name(in->file)),
			    in->line);
		fputs(" [inlined]\n", out);
		word = "by";
	}
	fprintf(out, "==    %s 0x%llx: %s", word,
	    (unsigned long long)f->offset, f->function ? tx(f->function) :
	    "???");
	if (f->file != NULL && f->line > 0)
		fprintf(out, " (%s:%d)", tx(base_name(f->file)), f->line);
	else if (f->module != NULL)
		fprintf(out, " (in %s%s%s)", tx(f->module),
		    f->note ? ", " : "", f->note ? f->note : "");
	else
		fputs(" (unknown module)", out);
	fputc('\n', out);
}

/* The static CUDA runtime's internal functions (nvcc links cudart into
 * every program, its symbols named libcudart_static_<hash>): noise in a
 * report, like compute-sanitizer's --backtrace-short hides them.  Only
 * leading ones are hidden, and the JSON keeps them. */
static bool
cudart_internal(const au_frame_t *f)
{
	return f->function != NULL &&
	    strncmp(f->function, "libcudart_static_", 17) == 0;
}

static void
print_stack(FILE *out, const au_stack_t *s, int limit)
{
	size_t i, first = 0;

	if (s->n == 0) {
		fputs("==    (no stack recorded)\n", out);
		return;
	}
	while (first < s->n && cudart_internal(&s->frames[first]))
		first++;
	if (first == s->n)
		first = 0;
	if (first > 0)
		fprintf(out, "==    (%zu frame%s inside the static CUDA "
		    "runtime not shown)\n", first, first == 1 ? "" : "s");
	/* Like valgrind: nothing below main (the C library's start code);
	 * the JSON keeps every frame.  end: past the last frame shown. */
	size_t end = first;
	while (end < s->n && !(s->frames[end].function != NULL &&
	    strcmp(s->frames[end].function, "main") == 0))
		end++;
	end = end < s->n ? end + 1 : s->n;
	for (i = first; i < end; i++) {
		if (limit > 0 && i - first == (size_t)limit) {
			/* What --num-callers hides of what would show. */
			fprintf(out, "==    ... %zu more frame%s\n", end - i,
			    end - i == 1 ? "" : "s");
			break;
		}
		print_frame(out, &s->frames[i], i == first);
	}
}

/* Whether memory of kind k (a report's kind name) is host memory
 * (kinds.h). */
static bool
host_kind(const char *k)
{
#define KIND_HOST(e, name, leaks, host, rule, text) \
	if (host && strcmp(k, name) == 0) \
		return true;
	KIND_LIST(KIND_HOST)
#undef KIND_HOST
	return false;
}

/* Where the memory is: its device(s), "host" for host memory, "device"
 * for device memory of an unknown device; for a violation of unknown
 * kind (an invalid free), the family of the call that freed it.  Then
 * the API (with_api) and the pids, comma-separated. */
static void
print_where(FILE *out, const au_finding_t *f, bool with_api)
{
	const char *k = f->kind[0] != '\0' ? f->kind :
	    f->family != NULL ? f->family : "";
	const char *sep = "";
	size_t i;

	/* A reservation belongs to no device until memory is mapped in. */
	if (f->cls == AU_LEAK && f->cat == AU_CAT_RANGE &&
	    !(f->ndevices >= 1 && f->devices[0] >= 0))
		fputs("address range", out);
	else if (f->ndevices == 1 && f->devices[0] >= 0)
		fprintf(out, "device %d", f->devices[0]);
	else if (f->ndevices > 1) {
		fputs("devices ", out);
		for (i = 0; i < f->ndevices; i++)
			fprintf(out, "%s%d", i ? "," : "", f->devices[i]);
	} else if (host_kind(k))
		fputs("host", out);
	else if (k[0] != '\0')
		fputs("device", out);
	else
		sep = NULL; /* nothing known of the memory: say nothing */
	sep = sep != NULL ? ", " : "";
	if (with_api && f->api[0] != '\0') {
		fprintf(out, "%s%s", sep, tx(f->api));
		sep = ", ";
	}
	if (f->npids > 0) {
		fprintf(out, "%spid%s ", sep, f->npids > 1 ? "s" : "");
		for (i = 0; i < f->npids && i < 8; i++)
			fprintf(out, "%s%ld", i ? "," : "", f->pids[i]);
		if (f->npids > 8)
			fprintf(out, ",... (%zu processes)", f->npids);
	}
}

/* v with its unit, singular or plural; "at least ..." for a saturated
 * sum (fmt_sum). */
static const char *
amount(uint64_t v, const char *one, const char *many, bool commas,
    char *buf, size_t size)
{
	return fmt_sum(v, v == 1 ? one : many, commas, buf, size);
}

static void
print_leak(FILE *out, const au_finding_t *f, int limit)
{
	static const char *const verb[] = {
		[AU_CAT_LEAK] = "leaked by",
		[AU_CAT_TEARDOWN] = "freed only by context teardown, made by",
		[AU_CAT_RANGE] = "never freed, reserved by",
	};
	char b1[96], b2[32], b3[32], b4[160];
	bool range = f->cat == AU_CAT_RANGE;
	char *one = range ? xstrdup("address range") :
	    xasprintf("%s allocation", tx(f->kind));
	char *many = range ? xstrdup("address ranges") :
	    xasprintf("%s allocations", tx(f->kind));

	fprintf(out, "== %s in %s", fmt_sum(f->bytes, "bytes", true, b1,
	    sizeof(b1)), amount(f->count, one, many, true, b4, sizeof(b4)));
	free(one);
	free(many);
	if (f->count > 1 && f->min_size == f->max_size)
		fprintf(out, " (%s each)",
		    fmt_commas(f->size, b2, sizeof(b2)));
	else if (f->count > 1)
		fprintf(out, " (%s to %s each)",
		    fmt_commas(f->min_size, b2, sizeof(b2)),
		    fmt_commas(f->max_size, b3, sizeof(b3)));
	fprintf(out, " %s %s [", verb[f->cat], f->owner[0] ? tx(f->owner) :
	    "an unknown owner");
	print_where(out, f, true);
	fputs("]\n", out);
	print_stack(out, &f->stack, limit);
	fputs("==\n", out);
}

static void
print_violation(FILE *out, const au_finding_t *f, int limit)
{
	char b1[32], b2[96];

	fprintf(out, "== %s: %s", tx(f->type), f->api[0] ? tx(f->api) : "?");
	if (f->naddresses > 0)
		fprintf(out, " of %s", tx(f->addresses[0]));
	if (f->has_range) /* the library's form, ungrouped */
		fprintf(out, " [%llu, %llu + %llu)",
		    (unsigned long long)f->range_off,
		    (unsigned long long)f->range_off,
		    (unsigned long long)f->range_len);
	if (f->kind[0] != '\0' || f->size > 0) {
		fputs(" (", out);
		if (f->kind[0] != '\0')
			fprintf(out, "%s ", tx(f->kind));
		fputs("allocation", out);
		if (f->size > 0)
			fprintf(out, " of %s bytes",
			    fmt_commas(f->size, b1, sizeof(b1)));
		fputc(')', out);
	}
	if (f->cuda_error != NULL)
		fprintf(out, " -> %s", tx(f->cuda_error));
	fprintf(out, ", %s [", amount(f->count, "time", "times", true, b2,
	    sizeof(b2)));
	print_where(out, f, false);
	fputs("]\n", out);
	print_stack(out, &f->stack, limit);
	if (f->alloc_stack.n > 0) {
		fputs("==  Allocated at:\n", out);
		print_stack(out, &f->alloc_stack, limit);
	}
	if (f->free_stack.n > 0) {
		fputs("==  First freed at:\n", out);
		print_stack(out, &f->free_stack, limit);
	}
	fputs("==\n", out);
}

static void
print_used(const char *rule, const char *origin, uint64_t count,
    uint64_t bytes, void *arg)
{
	FILE *out = arg;
	char b1[96], b2[96];

	fprintf(out, "==    %s, %s: %s (%s)\n",
	    fmt_sum(count, "x", true, b1, sizeof(b1)),
	    fmt_sum(bytes, "bytes", true, b2, sizeof(b2)), tx(rule),
	    tx(origin));
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
 * (at most 10 named). */
static void
print_owners(const au_model_t *m, FILE *out)
{
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
	if (n > 1) {
		qsort(v, n, sizeof(*v), cmp_owner);
		fputs("== BY OWNER:\n", out);
		for (i = 0; i < n && i < 10; i++)
			fprintf(out, "==    %s in %s: %s\n",
			    fmt_sum(v[i].bytes, "bytes", true, b1, sizeof(b1)),
			    amount(v[i].count, "allocation", "allocations",
			    true, b2, sizeof(b2)),
			    v[i].owner[0] ? tx(v[i].owner) :
			    "(unknown owner)");
		if (n > 10)
			fprintf(out, "==    ... %zu more owners\n", n - 10);
	}
	free(v);
}

/* One line per process, when there are several. */
static void
print_processes(const au_model_t *m, FILE *out)
{
	char b1[32];
	size_t i, k;

	if (m->nprocs < 2)
		return;
	fputs("== PROCESSES:\n", out);
	for (i = 0; i < m->nprocs; i++) {
		const au_process_t *p = &m->procs[i];
		const json_t *cmd = json_object_get(p->doc, "command");
		const json_t *sm = json_object_get(p->doc, "summary");
		const json_t *cov = json_object_get(p->doc, "coverage");

		fprintf(out, "==    pid %ld (parent %ld):", p->pid, p->ppid);
		for (k = 0; k < json_array_size(cmd) && k < 8; k++) {
			const char *arg = json_string_value(json_array_get(cmd,
			    k));

			fprintf(out, " %s", arg ? tx(arg) : "?");
		}
		if (json_array_size(cmd) > 8)
			fputs(" ...", out);
		if (json_array_size(cmd) == 0)
			fprintf(out, " %s", p->exe[0] ? tx(p->exe) : "?");
		/* Never "-1": a status nobody knows is said to be unknown. */
		if (p->exit_status >= 0)
			fprintf(out, " -- %s %ld", tx(p->exit_how),
			    p->exit_status);
		else if (strcmp(p->exit_how, "exit") == 0)
			fputs(" -- exit status unknown", out);
		else
			fprintf(out, " -- %s, exit status unknown",
			    tx(p->exit_how));
		fprintf(out, ", %lld allocation%s, %s bytes leaked, "
		    "%lld violation%s%s\n", json_int(cov, "allocations", 0),
		    json_int(cov, "allocations", 0) == 1 ? "" : "s",
		    fmt_commas((uint64_t)json_int(sm, "leaked_bytes", 0), b1,
		    sizeof(b1)), json_int(sm, "violations", 0),
		    json_int(sm, "violations", 0) == 1 ? "" : "s",
		    p->library ? " (libcuwarden)" : p->cuda_active ? "" :
		    " (no CUDA activity)");
	}
}

/* A report that left parts out (the shim's exit from a signal handler
 * inside the shim): said after the coverage, whatever the count of
 * processes, since what it lacks is not in the figures above. */
static void
print_incomplete(const au_model_t *m, FILE *out)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const au_process_t *p = &m->procs[i];
		const json_t *inc = json_object_get(p->doc, "incomplete");
		long long n = json_int(inc, "parts_left_out", 0);

		if (!json_is_object(inc))
			continue;
		fprintf(out, "== INCOMPLETE: the report of pid %ld left %lld "
		    "part%s out (%s)\n", p->pid, n, n == 1 ? "" : "s",
		    tx(json_str(inc, "reason", "no reason given")));
	}
}

/* The processes that used CUDA and left no report (run_lost.c), last:
 * what the figures above do not hold. */
static void
print_lost(const au_model_t *m, FILE *out)
{
	for (size_t i = 0; i < m->nlost; i++) {
		char *line = run_lost_line(&m->lost[i]);

		fprintf(out, "== LOST: %s\n", line);
		free(line);
	}
}

/* The filter between the renderer and the real stream (fopencookie):
 * every line starts with "==" ("== " is put in front of one that does
 * not), and every control character but the newline is written as \xNN.
 * Names are escaped before they get here (tx); this holds the line
 * format whatever the renderer writes. */
typedef struct line_filter_s {
	FILE *out;
	int col; /* bytes of the current line so far, counted up to 2 */
} line_filter_t;

static ssize_t
line_write(void *cookie, const char *buf, size_t n)
{
	line_filter_t *lf = cookie;
	char tmp[1024];
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (o + 8 > sizeof(tmp)) {
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

static void render_body(const au_model_t *m, const au_render_opts_t *o,
    FILE *out);

/* out behind the line filter (*lf), or NULL after a line on out (no
 * memory: nothing unfiltered, ever).  fclose() flushes it into out,
 * which stays open. */
static FILE *
filter_open(line_filter_t *lf, FILE *out)
{
	cookie_io_functions_t io = { .write = line_write };
	FILE *safe;

	lf->out = out;
	lf->col = 0;
	safe = fopencookie(lf, "w", io);
	if (safe == NULL)
		fputs("== the text report could not be written: out of memory\n",
		    out);
	return safe;
}

void
render_text(const au_model_t *m, const au_render_opts_t *o, FILE *out)
{
	line_filter_t lf;
	FILE *safe = filter_open(&lf, out);

	if (safe == NULL)
		return;
	render_body(m, o, safe);
	fclose(safe);
	fflush(out);
	tx_done();
}

void
render_text_finding(const au_finding_t *f, int stack_limit, FILE *out)
{
	line_filter_t lf;
	FILE *safe = filter_open(&lf, out);

	if (safe == NULL)
		return;
	if (f->cls == AU_LEAK)
		print_leak(safe, f, stack_limit);
	else
		print_violation(safe, f, stack_limit);
	fclose(safe);
	tx_done();
}

static void
render_body(const au_model_t *m, const au_render_opts_t *o, FILE *out)
{
	au_totals_t t;
	char b1[96], b2[96], b3[96];
	size_t i;

	/* Every number grouped (valgrind); the two summary lines as
	 * compute-sanitizer writes them with --plain-summary. */
	bool grouped = !o->plain_summary;

	model_totals(m, &t);
	/* Leaks, then those teardown freed, then the address ranges. */
	for (int cat = AU_CAT_LEAK; cat <= AU_CAT_RANGE; cat++)
		for (i = 0; i < m->nleaks; i++)
			if (finding_reported(m->leaks[i]) &&
			    (int)m->leaks[i]->cat == cat)
				print_leak(out, m->leaks[i], o->stack_limit);
	for (i = 0; i < m->nviols; i++)
		if (finding_reported(m->viols[i]))
			print_violation(out, m->viols[i], o->stack_limit);
	print_processes(m, out);
	print_owners(m, out);
	fprintf(out, "== LEAK SUMMARY: %s leaked in %s (%llu group%s)\n",
	    fmt_sum(t.leaked_bytes, "bytes", grouped, b1, sizeof(b1)),
	    amount(t.leaked_allocations, "allocation", "allocations", grouped,
	    b2, sizeof(b2)),
	    (unsigned long long)t.leak_groups, t.leak_groups == 1 ? "" : "s");
	if (t.teardown_groups > 0)
		fprintf(out, "==    of which freed only by context teardown: "
		    "%s in %s (%llu group%s; --accept-teardown to accept "
		    "them)\n",
		    fmt_sum(t.teardown_bytes, "bytes", true, b1, sizeof(b1)),
		    amount(t.teardown_allocations, "allocation",
		    "allocations", true, b2, sizeof(b2)),
		    (unsigned long long)t.teardown_groups,
		    t.teardown_groups == 1 ? "" : "s");
	if (t.accepted_groups > 0)
		fprintf(out, "== ACCEPTED: %s in %s freed only by context "
		    "teardown (--accept-teardown), not counted\n",
		    fmt_sum(t.accepted_bytes, "bytes", true, b1, sizeof(b1)),
		    amount(t.accepted_allocations, "allocation",
		    "allocations", true, b2, sizeof(b2)));
	if (t.range_groups > 0)
		fprintf(out, "== ADDRESS RANGES NEVER FREED: %s of address "
		    "space in %s (%llu group%s; not memory, not counted as "
		    "leaks)\n",
		    fmt_sum(t.range_bytes, "bytes", true, b1, sizeof(b1)),
		    amount(t.ranges, "range", "ranges", true, b2, sizeof(b2)),
		    (unsigned long long)t.range_groups,
		    t.range_groups == 1 ? "" : "s");
	if (t.suppressed_leaks > 0 || t.suppressed_violations > 0) {
		fprintf(out, "== SUPPRESSED: %s in %s, %s\n",
		    fmt_sum(t.suppressed_bytes, "bytes", true, b1,
		    sizeof(b1)),
		    amount(t.suppressed_leaks, "allocation", "allocations",
		    true, b2, sizeof(b2)),
		    amount(t.suppressed_violations, "violation", "violations",
		    true, b3, sizeof(b3)));
		supp_foreach_used(o->supp, print_used, out);
	}
	if (o->baseline != NULL)
		fprintf(out, "== BASELINE: %llu leak group%s and %llu "
		    "violation group%s already in %s, not reported\n",
		    (unsigned long long)t.baseline_leaks,
		    t.baseline_leaks == 1 ? "" : "s",
		    (unsigned long long)t.baseline_violations,
		    t.baseline_violations == 1 ? "" : "s", tx(o->baseline));
	fprintf(out, "== ERROR SUMMARY: %s (%s, %s)\n",
	    amount(t.errors, "error", "errors", grouped, b1, sizeof(b1)),
	    amount(t.leaked_allocations, "leak", "leaks", grouped, b2,
	    sizeof(b2)),
	    amount(t.violations, "violation", "violations", grouped, b3,
	    sizeof(b3)));
	fprintf(out, "== COVERAGE: %llu process%s audited",
	    (unsigned long long)t.processes, t.processes == 1 ? "" : "es");
	/* libcuwarden's reports have no shim counts: only theirs, nothing
	 * of the shim to say; with others, say whose the counts are. */
	if (t.library > 0 && t.library == t.processes) {
		fputs(", using CUDA through libcuwarden (no shim: no hook "
		    "counts)\n", out);
		print_incomplete(m, out);
		print_lost(m, out);
		return;
	}
	if (t.library > 0)
		fprintf(out, " (%llu through libcuwarden, not counted below)",
		    (unsigned long long)t.library);
	fprintf(out, ", %s seen%s, hooks active in %llu",
	    amount(t.allocations, "allocation", "allocations", true, b1,
	    sizeof(b1)), t.library > 0 ? " by the shim" : "",
	    (unsigned long long)t.hooks_active);
	if (t.untracked_frees > 0)
		fprintf(out, ", %s", amount(t.untracked_frees,
		    "untracked free", "untracked frees", true, b1,
		    sizeof(b1)));
	if (t.cuda_active == 0)
		fputs(": no CUDA activity seen", out);
	fputc('\n', out);
	print_incomplete(m, out);
	print_lost(m, out);
}
