/*
 * render_peak.c -- the text report's PEAK sections (render.h), one per
 * device of each process whose timeline was read, after the OUT OF
 * MEMORY sections and before the leaks: the peak's bytes and time, then
 * the largest groups of what was live then, with their stacks (rt_stack:
 * symbolized, at most --num-callers frames).  Drawn from the peaks
 * document (timeline.c; doc/audit.md, "Peaks").  Every name goes through
 * rt_tx.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "num.h"
#include "render.h"
#include "render_text_int.h"

#define PEAK_GROUPS 5 /* groups shown per device */

/* A section's first words: "== <title>: host" or "device N". */
static void
head(FILE *out, const char *title, const json_t *d)
{
	fprintf(out, "== " RT_SUM "%s: ", title);
	if (json_is_true(json_object_get(d, "host")))
		fputs("host", out);
	else
		fprintf(out, "device %lld", json_int(d, "device", -1));
}

/* Among several processes: which one, " (rank R, pid P)" or " (pid P)". */
static void
who(FILE *out, const au_peak_t *p, bool many)
{
	if (many && json_is_integer(json_object_get(p->doc, "rank")))
		fprintf(out, " (rank %lld, pid %ld)", json_int(p->doc, "rank",
		    -1), p->pid);
	else if (many)
		fprintf(out, " (pid %ld)", p->pid);
}

static void
print_device(FILE *out, const au_peak_t *p, const json_t *d, size_t di,
    bool many, int limit)
{
	const json_t *top = json_object_get(d, "top");
	long long t = json_int(d, "time_ns", 0);
	char b1[64], b2[64], b3[64];
	size_t i;

	head(out, "PEAK", d);
	fprintf(out, ": %s bytes at %lld.%03lld s" RT_OFF,
	    rt_num(d, "bytes", b1, sizeof(b1)), t / 1000000000,
	    t / 1000000 % 1000);
	who(out, p, many);
	fprintf(out, "\n==    live then: %s allocation%s in %s group%s by "
	    "stack\n", rt_num(d, "allocations", b2, sizeof(b2)),
	    json_int(d, "allocations", 0) == 1 ? "" : "s",
	    rt_num(d, "groups", b3, sizeof(b3)),
	    json_int(d, "groups", 0) == 1 ? "" : "s");
	for (i = 0; i < json_array_size(top) && i < PEAK_GROUPS; i++) {
		const json_t *g = json_array_get(top, i);

		fprintf(out, "==    %s bytes in %s %s allocation%s from\n",
		    rt_num(g, "bytes", b1, sizeof(b1)),
		    rt_num(g, "count", b2, sizeof(b2)),
		    rt_tx(json_str(g, "kind", "?")),
		    json_int(g, "count", 0) == 1 ? "" : "s");
		if (di * AU_PEAK_GROUPS + i < p->nstacks)
			rt_stack(out, &p->stacks[di * AU_PEAK_GROUPS + i],
			    limit);
	}
	if (json_array_size(top) > PEAK_GROUPS ||
	    (uint64_t)json_int(d, "groups", 0) > json_array_size(top))
		fprintf(out, "==    ... %llu more groups\n",
		    (unsigned long long)json_int(d, "groups", 0) -
		    (json_array_size(top) < PEAK_GROUPS ?
		    json_array_size(top) : PEAK_GROUPS));
}

/* Device d past the limit (the peaks document's after_limit, its k-th
 * device, whose stacks follow the devices' in p->stacks): the sampled
 * maximum and the stacks that held most. */
static void
print_after_limit(FILE *out, const au_peak_t *p, const json_t *d, size_t k,
    bool many, int limit)
{
	const json_t *top = json_object_get(d, "top");
	size_t base = json_array_size(json_object_get(p->doc, "devices")) + k;
	long long t = json_int(d, "max_time_ns", 0);
	char b1[64], b2[64], b3[64];

	head(out, "PEAK PAST THE LIMIT (sampled)", d);
	fprintf(out, ": at most %s bytes, about %lld.%03lld s" RT_OFF,
	    rt_num(d, "max_bytes", b1, sizeof(b1)), t / 1000000000,
	    t / 1000000 % 1000);
	who(out, p, many);
	fprintf(out, "\n==    live %s bytes when the limit was reached, %s "
	    "at the last event\n", rt_num(d, "at_limit_bytes", b2,
	    sizeof(b2)), rt_num(d, "end_bytes", b3, sizeof(b3)));
	for (size_t i = 0; i < json_array_size(top) && i < PEAK_GROUPS; i++) {
		const json_t *g = json_array_get(top, i);

		fprintf(out, "==    at most %s bytes of %s allocations (%s at "
		    "the limit, %s at the end) from\n", rt_num(g, "bytes", b1,
		    sizeof(b1)), rt_tx(json_str(g, "kind", "?")),
		    rt_num(g, "at_limit_bytes", b2, sizeof(b2)),
		    rt_num(g, "end_bytes", b3, sizeof(b3)));
		if (base * AU_PEAK_GROUPS + i < p->nstacks)
			rt_stack(out, &p->stacks[base * AU_PEAK_GROUPS + i],
			    limit);
	}
}

void
render_peak_text(const au_model_t *m, int limit, FILE *out)
{
	for (size_t i = 0; i < m->npeaks; i++) {
		const au_peak_t *p = &m->peaks[i];
		const json_t *devs = json_object_get(p->doc, "devices");
		const json_t *al = json_object_get(p->doc, "after_limit");
		const json_t *aldevs = json_object_get(al, "devices");
		long long since = json_int(al, "since_ns", 0);
		char b1[64], b2[64];

		for (size_t k = 0; k < json_array_size(devs); k++)
			print_device(out, p, json_array_get(devs, k), k,
			    m->npeaks > 1, limit);
		for (size_t k = 0; k < json_array_size(aldevs); k++)
			print_after_limit(out, p, json_array_get(aldevs, k), k,
			    m->npeaks > 1, limit);
		if (al != NULL)
			fprintf(out, "==    " RT_NOTE "not exact" RT_OFF ": %s "
			    "events of pid %ld came past CUWARDEN_TIMELINE_LIMIT "
			    "(the file's last at %lld.%03lld s): summed, not "
			    "written; the figures past it are sampled%s%s%s\n",
			    rt_num(al, "events", b1, sizeof(b1)), p->pid,
			    since / 1000000000, since / 1000000 % 1000,
			    json_int(al, "lost", 0) > 0 ? "; " : "",
			    json_int(al, "lost", 0) > 0 ? rt_num(al, "lost", b2,
			    sizeof(b2)) : "", json_int(al, "lost", 0) > 0 ?
			    " more were dropped" : "");
		else if (json_int(p->doc, "dropped", 0) > 0)
			fprintf(out, "==    " RT_NOTE "not exact" RT_OFF ": %s "
			    "events of pid %ld were dropped (%s)\n",
			    rt_num(p->doc, "dropped", b1, sizeof(b1)), p->pid,
			    json_is_true(json_object_get(p->doc,
			    "limit_reached")) ? "CUWARDEN_TIMELINE_LIMIT "
			    "reached" : "the writer was behind");
		if (json_array_size(devs) > 0 || json_int(p->doc, "dropped",
		    0) > 0)
			fputs("\n", out);
	}
}
