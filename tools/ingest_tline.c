/*
 * ingest_tline.c -- the timeline a per-process report names, read once
 * (ingest_int.h): its peaks (timeline.c) and its memory over time
 * (tlseries.c) computed from one open file, which is closed before the
 * next report is read; and a timelines document, checked, into the
 * model.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest_int.h"
#include "json.h"
#include "model.h"
#include "timeline.h"
#include "tlseries.h"
#include "xalloc.h"

bool
ingest_tline(au_model_t *m, ingest_rd_t *r, json_t *doc)
{
	const json_t *st = json_object_get(doc, "stacks");
	au_tline_t *t;
	size_t i;
	bool bad = false;

	if (!json_is_object(doc) || !json_is_array(json_object_get(doc,
	    "devices")) || !json_is_array(st) ||
	    !json_is_integer(json_object_get(doc, "pid")))
		return ingest_fail(r, "a timelines document without its "
		    "\"pid\", \"devices\" or \"stacks\"");
	m->tlines = xrealloc(m->tlines, (m->ntlines + 1) *
	    sizeof(*m->tlines));
	t = &m->tlines[m->ntlines];
	memset(t, 0, sizeof(*t));
	t->stacks = xcalloc(json_array_size(st) + 1, sizeof(*t->stacks));
	for (i = 0; !bad && i < json_array_size(st); i++) {
		char w[48];

		snprintf(w, sizeof(w), "timelines.stacks[%zu]", i);
		t->nstacks = i + 1;
		bad = ingest_stack(r, json_array_get(st, i), w, "stack",
		    &t->stacks[i]);
	}
	if (bad) {
		for (i = 0; i < t->nstacks; i++)
			stack_free(&t->stacks[i]);
		free(t->stacks);
		return true;
	}
	m->ntlines++;
	t->doc = doc;
	t->path = xstrdup(r->path);
	t->pid = (long)json_integer_value(json_object_get(doc, "pid"));
	return false;
}

bool
ingest_timeline(au_model_t *m, ingest_rd_t *r, const json_t *report,
    const char *path, char *err, size_t errsize)
{
	json_t *peaks, *series;
	au_process_t self;
	ingest_rd_t sr;
	char *tpath;
	tl_t *t;

	t = tl_open_report(report, path, &tpath, err, errsize);
	if (t == NULL)
		return err[0] != '\0';
	peaks = timeline_peaks(t, report, path, tpath);
	series = timeline_series(t, report, path, tpath);
	tl_close(t);
	free(tpath);
	if (ingest_peaks(m, r, peaks)) {
		json_decref(peaks);
		json_decref(series);
		return true;
	}
	doc_reader(&sr, r, &self, series);
	if (ingest_tline(m, &sr, series)) {
		json_decref(series);
		return true;
	}
	return false;
}
