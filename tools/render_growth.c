/*
 * render_growth.c -- the text report's GROWING sections (render.h), after
 * the PEAK sections: per process, the stacks whose live bytes grew
 * steadily over the run, with their stacks (rt_stack: symbolized, at most
 * --num-callers frames).  Drawn from the timelines document (tlseries.c;
 * doc/audit.md, "Growing").  Every name goes through rt_tx.
 */
#include "config.h"

#include <stdio.h>

#include "json.h"
#include "render.h"
#include "render_text_int.h"

#define GROWING_SHOWN 5 /* stacks shown per process */

void
render_growth_text(const au_model_t *m, int limit, FILE *out)
{
	for (size_t i = 0; i < m->ntlines; i++) {
		const au_tline_t *t = &m->tlines[i];
		const json_t *g = json_object_get(t->doc, "growing");
		size_t k;

		for (k = 0; k < json_array_size(g) && k < GROWING_SHOWN; k++) {
			const json_t *e = json_array_get(g, k);
			long long st = json_int(e, "stack", -1);
			size_t ns = json_array_size(json_object_get(e,
			    "samples"));
			char b1[64], b2[64], b3[64];

			fprintf(out, "== " RT_SUM "GROWING: %s bytes more on ",
			    rt_num(e, "growth_bytes", b1, sizeof(b1)));
			if (json_is_true(json_object_get(e, "host")))
				fputs("host", out);
			else
				fprintf(out, "device %lld", json_int(e,
				    "device", -1));
			fprintf(out, " (%s -> %s), rose in %lld of %zu "
			    "intervals" RT_OFF, rt_num(e, "first_bytes", b2,
			    sizeof(b2)), rt_num(e, "last_bytes", b3,
			    sizeof(b3)), json_int(e, "increases", 0),
			    ns > 0 ? ns - 1 : 0); /* a document read back */
			if (m->ntlines > 1)
				fprintf(out, " (pid %ld)", t->pid);
			fputs("\n", out);
			if (st >= 0 && (size_t)st < t->nstacks)
				rt_stack(out, &t->stacks[st], limit);
		}
		if (json_array_size(g) > GROWING_SHOWN)
			fprintf(out, "==    ... %zu more growing stacks\n",
			    json_array_size(g) - GROWING_SHOWN);
		if (json_array_size(g) > 0)
			fputs("\n", out);
	}
}
