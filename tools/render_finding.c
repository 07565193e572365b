/*
 * render_finding.c -- one finding group of the text report
 * (render_text_int.h): the header line (bytes, count, owner, where, API,
 * pids; a violation's address, range, allocation and the driver's
 * answer) and the stacks, frames as valgrind prints them.
 *
 * Every name comes from a report file, which a corrupt or hostile one
 * fills with any bytes: each is written through rt_tx() (text_escape: a
 * newline as \n, ESC as \x1b, ...), so no name can end a line and start
 * a forged one, and no escape sequence reaches the terminal.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "kinds.h"
#include "fold.h"
#include "model.h"
#include "num.h"
#include "path.h"
#include "render_text_int.h"
#include "text.h"
#include "xalloc.h"

/* The ring of rt_tx()'s results: each lives until TX_RING more calls,
 * enough for the names of one fprintf. */
#define TX_RING 8
static char *tx_ring[TX_RING];
static size_t tx_next;

const char *
rt_tx(const char *s)
{
	char **slot = &tx_ring[tx_next++ % TX_RING];

	free(*slot);
	*slot = text_escape(s);
	return *slot;
}

const char *
rt_num(const json_t *o, const char *key, char *buf, size_t size)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return "?";
	return fmt_commas((uint64_t)json_integer_value(v), buf, size);
}

void
rt_tx_done(void)
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

	if (f->python) {
		/* file:line function, as Python's tracebacks name them. */
		fprintf(out, "==    %s %s:%d %s [python]\n", word,
		    f->file ? rt_tx(f->file) : "?", f->line,
		    f->function ? rt_tx(f->function) : "???");
		return;
	}

	/* Inlined calls first, innermost first: they share the pc. */
	for (i = 0; i < f->ninlined; i++) {
		const au_inline_t *in = &f->inlined[i];

		fprintf(out, "==    %s 0x%llx: %s", word,
		    (unsigned long long)f->offset,
		    in->function ? rt_tx(in->function) : "???");
		if (in->file != NULL && in->line > 0)
			fprintf(out, " (%s:%d)", rt_tx(base_name(in->file)),
			    in->line);
		fputs(" [inlined]\n", out);
		word = "by";
	}
	fprintf(out, "==    %s 0x%llx: %s", word,
	    (unsigned long long)f->offset, f->function ? rt_tx(f->function) :
	    "???");
	if (f->file != NULL && f->line > 0)
		fprintf(out, " (%s:%d)", rt_tx(base_name(f->file)), f->line);
	else if (f->module != NULL)
		fprintf(out, " (in %s%s%s)", rt_tx(f->module),
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

void
rt_stack(FILE *out, const au_stack_t *s, int limit)
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
#define KIND_HOST(e, name, leaks, host, line, rule, text) \
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
		fprintf(out, "%s%s", sep, rt_tx(f->api));
		sep = ", ";
	}
	if (f->nranks > 0) {
		char *list = fold_rank_list(f->ranks, f->nranks);

		fprintf(out, "%srank%s %s", sep, f->nranks > 1 ? "s" : "",
		    list);
		free(list);
		sep = ", ";
	}
	if (f->nranks > 0 && f->unranked == 0)
		return; /* every pid has its rank */
	if (f->npids > 0) {
		size_t shown = 0;

		fprintf(out, "%spid%s ", sep, (f->nranks > 0 ? f->unranked :
		    f->npids) > 1 ? "s" : "");
		for (i = 0; i < f->npids && shown < 8; i++) {
			char lb[96];

			if (f->pid_ranks != NULL && f->pid_ranks[i] >= 0)
				continue;
			fprintf(out, "%s%s", shown++ ? "," : "", rt_tx(
			    finding_pid_label(f, i, lb, sizeof(lb))));
		}
		if (f->npids > 8 && f->nranks == 0)
			fprintf(out, ",... (%zu processes)", f->npids);
	}
}

/* A finding of a distributed job, folded (fold.c): on how many of the
 * job's ranks it was, and each rank's share when all were the same. */
static void
print_fold(FILE *out, const au_finding_t *f)
{
	char b1[96], b2[96];

	if (f->nranks == 0 || f->job_size <= 0)
		return;
	fprintf(out, "==    on %zu of %ld rank%s", f->nranks, f->job_size,
	    f->job_size == 1 ? "" : "s");
	if (f->each_same && f->cls == AU_LEAK)
		fprintf(out, ": %s in %s each", fmt_sum(f->each_bytes, "bytes",
		    true, b1, sizeof(b1)), rt_amount(f->each_count,
		    "allocation", "allocations", true, b2, sizeof(b2)));
	else if (f->each_same)
		fprintf(out, ": %s each", rt_amount(f->each_count, "time",
		    "times", true, b1, sizeof(b1)));
	fputc('\n', out);
}

const char *
rt_amount(uint64_t v, const char *one, const char *many, bool commas,
    char *buf, size_t size)
{
	return fmt_sum(v, v == 1 ? one : many, commas, buf, size);
}

void
rt_leak(FILE *out, const au_finding_t *f, int limit)
{
	static const char *const verb[] = {
		[AU_CAT_LEAK] = "leaked by",
		[AU_CAT_TEARDOWN] = "freed only by context teardown, made by",
		[AU_CAT_RANGE] = "never freed, reserved by",
	};
	char b1[96], b2[32], b3[32], b4[160];
	bool range = f->cat == AU_CAT_RANGE;
	char *one = range ? xstrdup("address range") :
	    xasprintf("%s allocation", rt_tx(f->kind));
	char *many = range ? xstrdup("address ranges") :
	    xasprintf("%s allocations", rt_tx(f->kind));

	/* Red what counts; yellow what does not. */
	fprintf(out, "== %s%s in %s", finding_reported(f) && !range ?
	    RT_ERR : RT_NOTE, fmt_sum(f->bytes, "bytes", true, b1,
	    sizeof(b1)), rt_amount(f->count, one, many, true, b4, sizeof(b4)));
	free(one);
	free(many);
	if (f->count > 1 && f->min_size == f->max_size)
		fprintf(out, " (%s each)",
		    fmt_commas(f->size, b2, sizeof(b2)));
	else if (f->count > 1)
		fprintf(out, " (%s to %s each)",
		    fmt_commas(f->min_size, b2, sizeof(b2)),
		    fmt_commas(f->max_size, b3, sizeof(b3)));
	fprintf(out, " %s %s [", verb[f->cat], f->owner[0] ? rt_tx(f->owner) :
	    "an unknown owner");
	print_where(out, f, true);
	fputc(']', out);
	/* Shown though not reported (--show-leak-kinds=suppressed): why. */
	if (f->in_baseline)
		fputs(" (in the baseline)", out);
	else if (f->suppressed_by == model_accepted_teardown)
		fputs(" (accepted: --accept-teardown)", out);
	else if (f->suppressed_by != NULL)
		fprintf(out, " (suppressed by %s)", rt_tx(f->suppressed_by));
	fputs(RT_OFF "\n", out);
	print_fold(out, f);
	rt_stack(out, &f->stack, limit);
	fputs("==\n", out);
}

void
rt_violation(FILE *out, const au_finding_t *f, int limit)
{
	char b1[32], b2[96];

	fprintf(out, "== " RT_ERR "%s: %s", rt_tx(f->type),
	    f->api[0] ? rt_tx(f->api) : "?");
	if (f->naddresses > 0)
		fprintf(out, " of %s", rt_tx(f->addresses[0]));
	if (f->has_range) /* the library's form, ungrouped */
		fprintf(out, " [%llu, %llu + %llu)",
		    (unsigned long long)f->range_off,
		    (unsigned long long)f->range_off,
		    (unsigned long long)f->range_len);
	if (f->kind[0] != '\0' || f->size > 0) {
		fputs(" (", out);
		if (f->kind[0] != '\0')
			fprintf(out, "%s ", rt_tx(f->kind));
		fputs("allocation", out);
		if (f->size > 0)
			fprintf(out, " of %s bytes",
			    fmt_commas(f->size, b1, sizeof(b1)));
		fputc(')', out);
	}
	if (f->cuda_error != NULL)
		fprintf(out, " -> %s", rt_tx(f->cuda_error));
	fprintf(out, ", %s [", rt_amount(f->count, "time", "times", true, b2,
	    sizeof(b2)));
	print_where(out, f, false);
	fputs("]" RT_OFF "\n", out);
	print_fold(out, f);
	rt_stack(out, &f->stack, limit);
	if (f->alloc_stack.n > 0) {
		fputs("==  Allocated at:\n", out);
		rt_stack(out, &f->alloc_stack, limit);
	}
	if (f->free_stack.n > 0) {
		fputs("==  First freed at:\n", out);
		rt_stack(out, &f->free_stack, limit);
	}
	fputs("==\n", out);
}

