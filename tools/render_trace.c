/*
 * render_trace.c -- --trace: the memory over time as a Chrome trace
 * (render.h; doc/audit.md, "Memory over time"), the JSON that Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: per process a
 * "process_name" metadata event, and counter events ("ph": "C") on one
 * track per device ("device 0", "host") and one per owner of each device
 * ("device 0: libtorch_cuda.so"), at the points of the timelines document
 * (tlseries.c: its downsampling keeps every peak).  Processes share one
 * time axis: each one's start_real_ns places it; "ts" is in
 * microseconds.  Written whole through out_open, like every output.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "path.h"
#include "render.h"
#include "xalloc.h"

/* The device's track name into buf. */
static void
track(const json_t *d, char *buf, size_t size)
{
	if (json_is_true(json_object_get(d, "host")))
		snprintf(buf, size, "host");
	else
		snprintf(buf, size, "device %lld", json_int(d, "device", -1));
}

static json_t *
counter(long pid, const char *name, double ts, json_int_t v)
{
	return json_pack("{s:s,s:s,s:I,s:i,s:f,s:{s:I}}", "name", name, "ph",
	    "C", "pid", (json_int_t)pid, "tid", 0, "ts", ts, "args", "bytes",
	    v);
}

/* Past CUWARDEN_TIMELINE_LIMIT: the device's sampled points (its
 * "sampled") on a track of their own, "<device> past the limit
 * (sampled)". */
static void
past(json_t *ev, long pid, const char *device, const json_t *sm, double t0)
{
	const json_t *ts = json_object_get(sm, "time_ns");
	const json_t *bs = json_object_get(sm, "bytes");
	char *name;

	if (json_array_size(ts) == 0)
		return;
	name = xasprintf("%s past the limit (sampled)", device);
	for (size_t i = 0; i < json_array_size(ts) && i < json_array_size(bs);
	    i++)
		json_array_append_new(ev, counter(pid, name, t0 +
		    (double)json_integer_value(json_array_get(ts, i)) / 1000.0,
		    json_integer_value(json_array_get(bs, i))));
	free(name);
}

/* One counter track: the values of vals at the device's times, from 0 at
 * its start; none when they are all 0 (an "other" with nothing). */
static void
series(json_t *ev, long pid, const char *name, const json_t *times,
    const json_t *vals, double t0)
{
	size_t i;

	for (i = 0; i < json_array_size(vals) &&
	    json_integer_value(json_array_get(vals, i)) == 0; i++)
		;
	if (i == json_array_size(vals))
		return;
	json_array_append_new(ev, counter(pid, name, t0, 0));
	for (i = 0; i < json_array_size(times) &&
	    i < json_array_size(vals); i++)
		json_array_append_new(ev, counter(pid, name, t0 +
		    (double)json_integer_value(json_array_get(times, i)) /
		    1000.0, json_integer_value(json_array_get(vals, i))));
}

/* The trace's pid of timeline i: its own, unless an earlier timeline
 * has it (two hosts, or two containers, of a distributed job): then one
 * above every pid, so that their tracks stay apart (the name says the
 * real pid). */
static long
trace_pid(const au_model_t *m, size_t i, long *next)
{
	for (size_t j = 0; j < i; j++)
		if (m->tlines[j].pid == m->tlines[i].pid)
			return (*next)++;
	return m->tlines[i].pid;
}

json_t *
render_trace_doc(const au_model_t *m)
{
	json_t *doc = json_object(), *ev = json_array();
	uint64_t start = UINT64_MAX;
	long next = 1;
	size_t i;

	for (i = 0; i < m->ntlines; i++) {
		uint64_t s = (uint64_t)json_int(m->tlines[i].doc,
		    "start_real_ns", 0);

		if (s < start)
			start = s;
		if (m->tlines[i].pid >= next)
			next = m->tlines[i].pid + 1;
	}
	for (i = 0; i < m->ntlines; i++) {
		const json_t *t = m->tlines[i].doc;
		const json_t *devs = json_object_get(t, "devices");
		long pid = trace_pid(m, i, &next);
		double t0 = (double)((uint64_t)json_int(t, "start_real_ns", 0) -
		    start) / 1000.0;
		const json_t *rank = json_object_get(t, "rank");
		char *pname = json_is_integer(rank) ? xasprintf("%s (rank %lld, "
		    "pid %ld)", base_name(json_str(t, "exe", "?")),
		    (long long)json_integer_value(rank), m->tlines[i].pid) :
		    xasprintf("%s (pid %ld)", base_name(json_str(t, "exe",
		    "?")), m->tlines[i].pid);

		json_array_append_new(ev, json_pack("{s:s,s:s,s:I,s:i,s:{s:s}}",
		    "name", "process_name", "ph", "M", "pid", (json_int_t)pid,
		    "tid", 0, "args", "name", pname));
		free(pname);
		for (size_t k = 0; k < json_array_size(devs); k++) {
			const json_t *d = json_array_get(devs, k);
			const json_t *ts = json_object_get(d, "time_ns");
			const json_t *os = json_object_get(d, "owners");
			char name[64];

			track(d, name, sizeof(name));
			series(ev, pid, name, ts, json_object_get(d, "bytes"),
			    t0);
			past(ev, pid, name, json_object_get(d, "sampled"), t0);
			for (size_t o = 0; o < json_array_size(os); o++) {
				const json_t *e = json_array_get(os, o);
				const char *ow = json_str(e, "owner", NULL);
				char *n = xasprintf("%s: %s", name, ow != NULL ?
				    (ow[0] != '\0' ? base_name(ow) : "(none)") :
				    "other");

				series(ev, pid, n, ts, json_object_get(e,
				    "bytes"), t0);
				free(n);
			}
		}
	}
	json_object_set_new(doc, "traceEvents", ev);
	json_object_set_new(doc, "displayTimeUnit", json_string("ms"));
	return doc;
}

bool
render_trace(const au_model_t *m, const char *path)
{
	json_t *doc = render_trace_doc(m);
	bool bad = render_json_write(doc, JSON_COMPACT | JSON_PRESERVE_ORDER,
	    path);

	json_decref(doc);
	return bad;
}
