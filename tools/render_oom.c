/*
 * render_oom.c -- the text report's OUT OF MEMORY sections (render.h),
 * one per OOM report read, before the leaks: the request and its stack,
 * the device's free and total memory, the pools' cache, the largest live
 * groups by owner and stack, and the last allocations and frees.  Drawn
 * from the shim's document as it is (doc/report-schema.md, "The OOM
 * report"); stacks as the findings' (rt_stack: symbolized, at most
 * --num-callers frames).  Every name goes through rt_tx.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "num.h"
#include "render.h"
#include "render_text_int.h"

#define OOM_GROUPS 5  /* live groups shown */

void
rt_oom(FILE *out, const au_oom_t *oom, int limit)
{
	const json_t *doc = oom->doc;
	const json_t *q = json_object_get(doc, "request");
	const json_t *mem = json_object_get(doc, "device_memory");
	const json_t *live = json_object_get(doc, "live");
	const json_t *top = json_object_get(live, "top");
	const json_t *recent = json_object_get(doc, "recent");
	const json_t *cached = json_object_get(doc, "pool_cached_bytes");
	char b1[64], b2[64], b3[64];
	size_t i;

	fprintf(out, "== " RT_ERR "OUT OF MEMORY in pid %lld: %s of %s bytes",
	    json_int(doc, "pid", -1), rt_tx(json_str(q, "api", "?")),
	    rt_num(q, "size", b1, sizeof(b1)));
	if (json_int(q, "device", -1) >= 0)
		fprintf(out, " on device %lld", json_int(q, "device", -1));
	fprintf(out, " failed (%s)" RT_OFF "\n",
	    rt_tx(json_str(q, "cuda_error", "?")));
	if (json_is_integer(json_object_get(mem, "free")))
		fprintf(out, "==    device free %s of %s bytes",
		    rt_num(mem, "free", b1, sizeof(b1)),
		    rt_num(mem, "total", b2, sizeof(b2)));
	else
		fprintf(out, "==    device free unknown (%s)",
		    rt_tx(json_str(mem, "error", "?")));
	if (json_is_integer(cached))
		fprintf(out, "; pools' cache %s bytes",
		    rt_num(doc, "pool_cached_bytes", b1, sizeof(b1)));
	fprintf(out, "; live: %s bytes in %s allocation%s (%s group%s by "
	    "owner and stack)\n", rt_num(live, "bytes", b1, sizeof(b1)),
	    rt_num(live, "allocations", b2, sizeof(b2)),
	    json_int(live, "allocations", 0) == 1 ? "" : "s",
	    rt_num(live, "groups", b3, sizeof(b3)),
	    json_int(live, "groups", 0) == 1 ? "" : "s");
	fputs("==    requested at:\n", out);
	rt_stack(out, &oom->request, limit);
	for (i = 0; i < json_array_size(top) && i < OOM_GROUPS; i++) {
		const json_t *g = json_array_get(top, i);

		fprintf(out, "==    live: %s bytes in %s %s allocations (%s",
		    rt_num(g, "bytes", b1, sizeof(b1)),
		    rt_num(g, "count", b2, sizeof(b2)),
		    rt_tx(json_str(g, "kind", "?")),
		    rt_tx(json_str(g, "api", "?")));
		if (*json_str(g, "owner", "") != '\0')
			fprintf(out, ", owner %s", rt_tx(json_str(g, "owner",
			    "")));
		fputs(")\n", out);
		if (i < oom->ngroups)
			rt_stack(out, &oom->groups[i], limit);
	}
	if (json_array_size(top) > OOM_GROUPS)
		fprintf(out, "==    ... %zu more live groups in %s\n",
		    json_array_size(top) - OOM_GROUPS, "the OOM report");
	if (json_array_size(recent) > 0)
		fputs("==    last allocations and frees (oldest first):\n", out);
	for (i = 0; i < json_array_size(recent); i++) {
		const json_t *e = json_array_get(recent, i);

		fprintf(out, "==      %-5s %s %s %s bytes at %s\n",
		    rt_tx(json_str(e, "event", "?")),
		    rt_tx(json_str(e, "api", "?")),
		    rt_tx(json_str(e, "kind", "?")),
		    rt_num(e, "size", b1, sizeof(b1)),
		    rt_tx(json_str(e, "address", "?")));
	}
	fputs("\n", out);
}

void
render_oom_text(const au_model_t *m, int limit, FILE *out)
{
	for (size_t i = 0; i < m->nooms; i++)
		rt_oom(out, &m->ooms[i], limit);
}
