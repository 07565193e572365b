/*
 * render_text.c -- the text report, in the spirit of compute-sanitizer and
 * valgrind: every line starts with "== "; leak groups largest first, each
 * with its symbolized allocation stack; violation groups with their
 * violating, allocation and first-free stacks; then the LEAK SUMMARY,
 * suppressions used, ERROR SUMMARY and COVERAGE lines.
 */
#include "config.h"

#include <string.h>

#include "audit.h"

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
		    in->function ? in->function : "???");
		if (in->file != NULL && in->line > 0)
			fprintf(out, " (%s:%d)", base_name(in->file),
			    in->line);
		fputs(" [inlined]\n", out);
		word = "by";
	}
	fprintf(out, "==    %s 0x%llx: %s", word,
	    (unsigned long long)f->offset, f->function ? f->function : "???");
	if (f->file != NULL && f->line > 0)
		fprintf(out, " (%s:%d)", base_name(f->file), f->line);
	else if (f->module != NULL)
		fprintf(out, " (in %s%s%s)", f->module,
		    f->note ? ", " : "", f->note ? f->note : "");
	else
		fputs(" (unknown module)", out);
	fputc('\n', out);
}

static void
print_stack(FILE *out, const au_stack_t *s, int limit)
{
	size_t i;

	if (s->n == 0) {
		fputs("==    (no stack recorded)\n", out);
		return;
	}
	for (i = 0; i < s->n; i++) {
		if (limit > 0 && i == (size_t)limit) {
			fprintf(out, "==    ... %zu more frames\n", s->n - i);
			break;
		}
		print_frame(out, &s->frames[i], i == 0);
		/* Like valgrind: nothing below main (the C library's start
		 * code); the JSON keeps every frame. */
		if (s->frames[i].function != NULL &&
		    strcmp(s->frames[i].function, "main") == 0)
			break;
	}
}

static void
print_where(FILE *out, const au_finding_t *f, bool with_api)
{
	size_t i;

	if (f->ndevices == 1 && f->devices[0] >= 0)
		fprintf(out, "device %d", f->devices[0]);
	else if (f->ndevices > 1) {
		fputs("devices ", out);
		for (i = 0; i < f->ndevices; i++)
			fprintf(out, "%s%d", i ? "," : "", f->devices[i]);
	} else
		fputs("host", out);
	if (with_api && f->api[0] != '\0')
		fprintf(out, ", %s", f->api);
	if (f->npids > 0) {
		fprintf(out, ", pid%s ", f->npids > 1 ? "s" : "");
		for (i = 0; i < f->npids && i < 8; i++)
			fprintf(out, "%s%ld", i ? "," : "", f->pids[i]);
		if (f->npids > 8)
			fprintf(out, ",... (%zu processes)", f->npids);
	}
}

static void
print_leak(FILE *out, const au_finding_t *f, int limit)
{
	char b1[32], b2[32], b3[32];

	fprintf(out, "== %s bytes in %llu %s allocation%s",
	    fmt_commas(f->bytes, b1, sizeof(b1)),
	    (unsigned long long)f->count, f->kind, f->count == 1 ? "" : "s");
	if (f->count > 1 && f->min_size == f->max_size)
		fprintf(out, " (%s each)",
		    fmt_commas(f->size, b2, sizeof(b2)));
	else if (f->count > 1)
		fprintf(out, " (%s to %s each)",
		    fmt_commas(f->min_size, b2, sizeof(b2)),
		    fmt_commas(f->max_size, b3, sizeof(b3)));
	fprintf(out, " leaked by %s [", f->owner[0] ? f->owner :
	    "an unknown owner");
	print_where(out, f, true);
	fputs("]\n", out);
	print_stack(out, &f->stack, limit);
	fputs("==\n", out);
}

static void
print_violation(FILE *out, const au_finding_t *f, int limit)
{
	char b1[32];

	fprintf(out, "== %s: %s", f->type, f->api[0] ? f->api : "?");
	if (f->naddresses > 0)
		fprintf(out, " of %s", f->addresses[0]);
	if (f->kind[0] != '\0' || f->size > 0) {
		fputs(" (", out);
		if (f->kind[0] != '\0')
			fprintf(out, "%s ", f->kind);
		fputs("allocation", out);
		if (f->size > 0)
			fprintf(out, " of %s bytes",
			    fmt_commas(f->size, b1, sizeof(b1)));
		fputc(')', out);
	}
	if (f->cuda_error != NULL)
		fprintf(out, " -> %s", f->cuda_error);
	fprintf(out, ", %llu time%s [", (unsigned long long)f->count,
	    f->count == 1 ? "" : "s");
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
	char b1[32];

	fprintf(out, "==    %llu x, %s bytes: %s (%s)\n",
	    (unsigned long long)count, fmt_commas(bytes, b1, sizeof(b1)),
	    rule, origin);
}

void
render_text(const au_model_t *m, const au_render_opts_t *o, FILE *out)
{
	au_totals_t t;
	size_t i;

	model_totals(m, &t);
	for (i = 0; i < m->nleaks; i++)
		if (finding_reported(m->leaks[i]))
			print_leak(out, m->leaks[i], o->stack_limit);
	for (i = 0; i < m->nviols; i++)
		if (finding_reported(m->viols[i]))
			print_violation(out, m->viols[i], o->stack_limit);
	fprintf(out, "== LEAK SUMMARY: %llu bytes leaked in %llu "
	    "allocation%s (%llu group%s)\n",
	    (unsigned long long)t.leaked_bytes,
	    (unsigned long long)t.leaked_allocations,
	    t.leaked_allocations == 1 ? "" : "s",
	    (unsigned long long)t.leak_groups, t.leak_groups == 1 ? "" : "s");
	if (t.suppressed_leaks > 0 || t.suppressed_violations > 0) {
		fprintf(out, "== SUPPRESSED: %llu bytes in %llu allocation%s, "
		    "%llu violation%s\n",
		    (unsigned long long)t.suppressed_bytes,
		    (unsigned long long)t.suppressed_leaks,
		    t.suppressed_leaks == 1 ? "" : "s",
		    (unsigned long long)t.suppressed_violations,
		    t.suppressed_violations == 1 ? "" : "s");
		supp_foreach_used(o->supp, print_used, out);
	}
	if (o->baseline != NULL)
		fprintf(out, "== BASELINE: %llu leak group%s and %llu "
		    "violation group%s already in %s, not reported\n",
		    (unsigned long long)t.baseline_leaks,
		    t.baseline_leaks == 1 ? "" : "s",
		    (unsigned long long)t.baseline_violations,
		    t.baseline_violations == 1 ? "" : "s", o->baseline);
	fprintf(out, "== ERROR SUMMARY: %llu error%s (%llu leak%s, %llu "
	    "violation%s)\n",
	    (unsigned long long)(t.leaked_allocations + t.violations),
	    t.leaked_allocations + t.violations == 1 ? "" : "s",
	    (unsigned long long)t.leaked_allocations,
	    t.leaked_allocations == 1 ? "" : "s",
	    (unsigned long long)t.violations, t.violations == 1 ? "" : "s");
	fprintf(out, "== COVERAGE: %llu process%s audited, %llu allocation%s "
	    "seen, hooks active in %llu",
	    (unsigned long long)t.processes, t.processes == 1 ? "" : "es",
	    (unsigned long long)t.allocations,
	    t.allocations == 1 ? "" : "s", (unsigned long long)t.hooks_active);
	if (t.untracked_frees > 0)
		fprintf(out, ", %llu untracked free%s",
		    (unsigned long long)t.untracked_frees,
		    t.untracked_frees == 1 ? "" : "s");
	if (t.hooks_active == 0)
		fputs(": no CUDA activity seen", out);
	fputc('\n', out);
}
