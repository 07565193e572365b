/*
 * timeline.c -- the timeline a per-process report names (timeline.h;
 * the file's layout is lib/tlformat.h, doc/report-schema.md "The timeline
 * file"): read whole, checked (header, sizes, every chunk and record),
 * its events put in time order, and each device's peak of live bytes
 * computed exactly, with the live set at that moment grouped by stack.
 *
 * Invariants: a file that is not exactly what the header promises is an
 * error with its byte offset, never a peak from part of it.  Events at
 * the same nanosecond keep the order of their thread's buffer (a thread's
 * events are ordered; the shim makes an allocation's time come before
 * its free's on any thread).  The peak is the first moment the largest
 * sum is reached.  Counted: the memory kinds (device, managed, pinned,
 * registered, async, vmm, array, graph); not address ranges, mappings,
 * views nor IPC imports (another process's memory).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "input.h"
#include "json.h"
#include "kinds.h"
#include "path.h"
#include "timeline.h"
#include "tlformat.h"
#include "xalloc.h"

#define KIND_NAME(e, name, leaks, host, rule, text) name,
#define KIND_HOST(e, name, leaks, host, rule, text) host,
static const char *const kind_names[] = { KIND_LIST(KIND_NAME) };
static const unsigned char kind_host[] = { KIND_LIST(KIND_HOST) };
#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

/* Memory of the process's own (the peak's sum). */
static bool
counted(unsigned k)
{
	const char *n = k < NKINDS ? kind_names[k] : "";

	return k < NKINDS && strcmp(n, "va") != 0 &&
	    strcmp(n, "mapping") != 0 && strcmp(n, "view") != 0 &&
	    strcmp(n, "ipc") != 0;
}

typedef struct ev_s {
	tlf_rec_t r;
	uint64_t seq; /* file order: ties keep their thread's order */
} ev_t;

static int
cmp_ev(const void *a, const void *b)
{
	const ev_t *x = a, *y = b;

	if (x->r.t_ns != y->r.t_ns)
		return x->r.t_ns < y->r.t_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Host memory is its own line (-1), whatever device it names. */
static int
dev_of(const tlf_rec_t *r)
{
	return kind_host[r->kind] ? -1 : r->device;
}

/* Reads and checks path: its events into *out (*n), the header into
 * *h.  Returns true on error (err). */
static bool
read_file(const char *path, tlf_header_t *h, ev_t **out, size_t *n,
    char *err, size_t errsize)
{
	size_t len, off, k = 0, cap = 0;
	ev_t *v = NULL;
	char *buf;

	buf = input_read(path, AU_MAX_REPORT_BYTES, "the timeline", NULL,
	    &len, err, errsize);
	if (buf == NULL)
		return true;
	if (len < sizeof(*h) || memcmp(buf, TLF_MAGIC, 8) != 0) {
		snprintf(err, errsize, "%s: not a cuwarden timeline (%s)", path,
		    len < 8 ? "shorter than its header" : "no magic \""
		    TLF_MAGIC "\"");
		goto bad;
	}
	memcpy(h, buf, sizeof(*h));
	if (h->version != TLF_VERSION) {
		snprintf(err, errsize, "%s: timeline version %u is not "
		    "supported (this tool reads version %d)", path, h->version,
		    TLF_VERSION);
		goto bad;
	}
	if (h->header_size != sizeof(*h) || h->record_size !=
	    sizeof(tlf_rec_t) || h->chunk_size != sizeof(tlf_chunk_t)) {
		snprintf(err, errsize, "%s: corrupt timeline header: sizes "
		    "%u/%u/%u, expected %zu/%zu/%zu (header/record/chunk)",
		    path, h->header_size, h->record_size, h->chunk_size,
		    sizeof(*h), sizeof(tlf_rec_t), sizeof(tlf_chunk_t));
		goto bad;
	}
	for (off = sizeof(*h); off < len;) {
		tlf_chunk_t c;
		size_t need;

		if (len - off < sizeof(c)) {
			snprintf(err, errsize, "%s: truncated timeline: %zu "
			    "bytes at offset %zu, less than a chunk header",
			    path, len - off, off);
			goto bad;
		}
		memcpy(&c, buf + off, sizeof(c));
		if (c.magic != TLF_CHUNK_MAGIC) {
			snprintf(err, errsize, "%s: corrupt timeline: no chunk "
			    "header at offset %zu", path, off);
			goto bad;
		}
		off += sizeof(c);
		need = (size_t)c.count * sizeof(tlf_rec_t);
		if (len - off < need) {
			snprintf(err, errsize, "%s: truncated timeline: the "
			    "chunk at offset %zu holds %u records (%zu bytes), "
			    "%zu bytes are left", path, off - sizeof(c),
			    c.count, need, len - off);
			goto bad;
		}
		if (k + c.count > cap) {
			cap = (k + c.count) * 2;
			v = xrealloc(v, cap * sizeof(*v));
		}
		for (uint32_t i = 0; i < c.count; i++, off +=
		    sizeof(tlf_rec_t)) {
			memcpy(&v[k].r, buf + off, sizeof(tlf_rec_t));
			if (v[k].r.event < TLF_ALLOC ||
			    v[k].r.event > TLF_EVENT_MAX ||
			    v[k].r.kind >= NKINDS) {
				snprintf(err, errsize, "%s: corrupt timeline: "
				    "the record at offset %zu has event %u, "
				    "kind %u", path, off, v[k].r.event,
				    v[k].r.kind);
				goto bad;
			}
			v[k].seq = k;
			k++;
		}
	}
	free(buf);
	*out = v;
	*n = k;
	return false;
bad:
	free(buf);
	free(v);
	return true;
}

/* ------------------------------------------------------------ the peak */

typedef struct grp_s {
	uint64_t key; /* stack << 8 | kind, + 1 (0: empty) */
	int64_t bytes;
	int64_t count;
} grp_t;

typedef struct dev_s {
	int dev;
	int64_t cur, peak;
	size_t at;    /* index of the event that made the peak */
	uint64_t t;
} dev_t_;

static int
cmp_grp(const void *a, const void *b)
{
	const grp_t *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int
cmp_dev(const void *a, const void *b)
{
	const dev_t_ *x = a, *y = b;

	return (x->dev < 0 ? 1 << 20 : x->dev) - (y->dev < 0 ? 1 << 20 :
	    y->dev);
}

/* The live set of device d after event at: groups by (stack, kind). */
static json_t *
live_set(const ev_t *v, const dev_t_ *d, const json_t *stacks)
{
	size_t cap = 1024, ng = 0, i, j;
	grp_t *g = xcalloc(cap, sizeof(*g));
	int64_t kinds[NKINDS];
	json_t *o = json_object(), *top = json_array(), *kj = json_object();
	uint64_t allocs = 0, groups = 0;

	memset(kinds, 0, sizeof(kinds));
	for (i = 0; i <= d->at; i++) {
		const tlf_rec_t *r = &v[i].r;
		uint64_t key, h;
		int64_t sign = r->event == TLF_ALLOC ? 1 : -1;

		if (!counted(r->kind) || dev_of(r) != d->dev)
			continue;
		kinds[r->kind] += sign * (int64_t)r->size;
		key = ((uint64_t)r->stack << 8 | r->kind) + 1;
		if (2 * (ng + 1) > cap) { /* grow, rehash */
			grp_t *old = g;
			size_t oc = cap;

			cap *= 2;
			g = xcalloc(cap, sizeof(*g));
			for (j = 0; j < oc; j++) {
				if (old[j].key == 0)
					continue;
				h = old[j].key * 0x9e3779b97f4a7c15ull;
				for (h &= cap - 1; g[h].key != 0;
				    h = (h + 1) & (cap - 1))
					;
				g[h] = old[j];
			}
			free(old);
		}
		h = (key * 0x9e3779b97f4a7c15ull) & (cap - 1);
		while (g[h].key != 0 && g[h].key != key)
			h = (h + 1) & (cap - 1);
		if (g[h].key == 0) {
			g[h].key = key;
			ng++;
		}
		g[h].bytes += sign * (int64_t)r->size;
		g[h].count += sign;
	}
	qsort(g, cap, sizeof(*g), cmp_grp);
	for (i = 0; i < cap && g[i].bytes > 0; i++) {
		groups++;
		allocs += g[i].count > 0 ? (uint64_t)g[i].count : 0;
		if (i < AU_PEAK_GROUPS) {
			json_t *e = json_object();
			unsigned st = (unsigned)((g[i].key - 1) >> 8);
			char id[16];

			snprintf(id, sizeof(id), "%u", st);
			json_object_set_new(e, "bytes", json_count(
			    (uint64_t)g[i].bytes));
			json_object_set_new(e, "count", json_count(
			    g[i].count > 0 ? (uint64_t)g[i].count : 0));
			json_object_set_new(e, "kind", json_string(
			    kind_names[(g[i].key - 1) & 0xff]));
			json_object_set_new(e, "stack_id", json_integer(st));
			json_object_set(e, "stack", json_object_get(stacks, id) ?
			    json_object_get(stacks, id) : json_null());
			json_array_append_new(top, e);
		}
	}
	for (i = 0; i < NKINDS; i++)
		if (kinds[i] > 0)
			json_object_set_new(kj, kind_names[i],
			    json_count((uint64_t)kinds[i]));
	json_object_set_new(o, "allocations", json_count(allocs));
	json_object_set_new(o, "groups", json_count(groups));
	json_object_set_new(o, "kinds", kj);
	json_object_set_new(o, "top", top);
	free(g);
	return o;
}

/* The report's timeline.stacks as an object "id" -> frames. */
static json_t *
stack_table(const json_t *tl)
{
	const json_t *a = json_object_get(tl, "stacks");
	json_t *t = json_object();

	for (size_t i = 0; i < json_array_size(a); i++) {
		const json_t *e = json_array_get(a, i);
		char id[24];

		if (!json_is_integer(json_object_get(e, "id")))
			continue;
		snprintf(id, sizeof(id), "%lld", json_int(e, "id", 0));
		json_object_set(t, id, json_object_get(e, "stack"));
	}
	return t;
}

/* The file the report names: beside the report (a copy kept with
 * --keep-reports), else where the shim wrote it. */
static char *
locate(const char *file, const char *report_path)
{
	const char *slash = strrchr(report_path, '/');
	char *p = slash != NULL ? xasprintf("%.*s/%s",
	    (int)(slash - report_path), report_path, base_name(file)) :
	    xstrdup(base_name(file));
	FILE *f = fopen(p, "rb");

	if (f != NULL) {
		fclose(f);
		return p;
	}
	free(p);
	return xstrdup(file);
}

json_t *
timeline_peaks(const json_t *report, const char *report_path, char *err,
    size_t errsize)
{
	const json_t *tl = json_object_get(report, "timeline");
	const char *file = json_str(tl, "file", NULL);
	tlf_header_t h;
	ev_t *v = NULL;
	size_t n = 0, nd = 0, i;
	dev_t_ *d = NULL;
	json_t *doc, *devs, *stacks;
	char *path;

	err[0] = '\0';
	if (!json_is_object(tl) || file == NULL)
		return NULL;
	path = locate(file, report_path);
	if (read_file(path, &h, &v, &n, err, errsize)) {
		free(path);
		return NULL;
	}
	if (json_is_integer(json_object_get(tl, "events")) &&
	    (uint64_t)json_int(tl, "events", 0) != n) {
		snprintf(err, errsize, "%s: truncated or corrupt timeline: it "
		    "holds %zu events, its report (%s) says %lld", path, n,
		    report_path, json_int(tl, "events", 0));
		free(path);
		free(v);
		return NULL;
	}
	qsort(v, n, sizeof(*v), cmp_ev);
	for (i = 0; i < n; i++) {
		const tlf_rec_t *r = &v[i].r;
		size_t k;

		if (!counted(r->kind))
			continue;
		for (k = 0; k < nd && d[k].dev != dev_of(r); k++)
			;
		if (k == nd) {
			d = xrealloc(d, ++nd * sizeof(*d));
			memset(&d[k], 0, sizeof(*d));
			d[k].dev = dev_of(r);
		}
		d[k].cur += r->event == TLF_ALLOC ? (int64_t)r->size :
		    -(int64_t)r->size;
		if (d[k].cur > d[k].peak) {
			d[k].peak = d[k].cur;
			d[k].at = i;
			d[k].t = r->t_ns;
		}
	}
	if (nd > 1)
		qsort(d, nd, sizeof(*d), cmp_dev);
	stacks = stack_table(tl);
	devs = json_array();
	for (i = 0; i < nd; i++) {
		json_t *e;

		if (d[i].peak <= 0)
			continue;
		e = live_set(v, &d[i], stacks);
		json_object_set_new(e, "device", json_integer(d[i].dev));
		json_object_set_new(e, "host", json_boolean(d[i].dev < 0));
		json_object_set_new(e, "bytes", json_count((uint64_t)
		    d[i].peak));
		json_object_set_new(e, "time_ns", json_count(d[i].t));
		json_array_append_new(devs, e);
	}
	json_decref(stacks);
	doc = json_object();
	json_object_set_new(doc, "pid", json_integer(json_int(report, "pid",
	    -1)));
	json_object_set_new(doc, "exe", json_utf8(json_str(report, "exe",
	    "")));
	json_object_set_new(doc, "report", json_utf8(report_path));
	json_object_set_new(doc, "timeline", json_utf8(path));
	json_object_set_new(doc, "events", json_count(n));
	json_object_set_new(doc, "dropped", json_count((uint64_t)json_int(tl,
	    "dropped", 0)));
	json_object_set_new(doc, "limit_reached", json_boolean(json_is_true(
	    json_object_get(tl, "limit_reached"))));
	json_object_set_new(doc, "exact", json_boolean(json_int(tl,
	    "dropped", 0) == 0));
	json_object_set(doc, "modules", json_object_get(report, "modules") ?
	    json_object_get(report, "modules") : json_array());
	json_object_set_new(doc, "devices", devs);
	free(path);
	free(v);
	free(d);
	return doc;
}
