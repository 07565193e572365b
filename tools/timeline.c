/*
 * timeline.c -- the timeline a per-process report names (timeline.h;
 * the file's layout is lib/tlformat.h, doc/report-schema.md "The timeline
 * file"): read whole, checked (header, sizes, every chunk and record),
 * its events handed out in time order, and each device's peak of live
 * bytes computed exactly, with the live set at that moment grouped by
 * stack.
 *
 * The reader sorts nothing: a thread's chunks are chained in file order
 * and the threads merged through a heap on (time, file offset), so the
 * order is the one a stable sort by time would give (a thread's times
 * never go back: the shim reads the clock as it appends) and the memory
 * is the file's and a cursor per thread.
 *
 * Invariants: a file that is not exactly what the header promises is an
 * error with its byte offset, never a peak from part of it.  Events at
 * the same nanosecond keep file order (a thread's events are ordered;
 * the shim makes an allocation's time come before its free's on any
 * thread).  The peak is the first moment the largest
 * sum is reached.  Counted: the memory kinds (device, managed, pinned,
 * registered, async, vmm, array, graph); not address ranges, mappings,
 * views nor IPC imports (another process's memory).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit.h"
#include "input.h"
#include "json.h"
#include "kinds.h"
#include "path.h"
#include "timeline.h"
#include "tlformat.h"
#include "xalloc.h"

#define KIND_NAME(e, name, leaks, host, line, rule, text) name,
#define KIND_HOST(e, name, leaks, host, line, rule, text) host,
#define KIND_LINE(e, name, leaks, host, line, rule, text) line,
static const char *const kind_names[] = { KIND_LIST(KIND_NAME) };
static const unsigned char kind_host[] = { KIND_LIST(KIND_HOST) };
static const unsigned char kind_line[] = { KIND_LIST(KIND_LINE) };
#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

bool
tl_counted(unsigned k)
{
	return k < NKINDS && kind_line[k];
}

int
tl_device(const tlf_rec_t *r)
{
	return kind_host[r->kind] ? -1 : r->device;
}

int64_t
tl_delta(const tlf_rec_t *r)
{
	return r->event == TLF_ALLOC ? (int64_t)r->size : -(int64_t)r->size;
}

void
tl_doc_place(json_t *doc, const json_t *report)
{
	const json_t *host = json_object_get(report, "host");
	const json_t *rank = json_object_get(json_object_get(report, "job"),
	    "rank");

	json_object_set_new(doc, "host", json_is_string(host) ?
	    json_utf8(json_string_value(host)) : json_null());
	json_object_set_new(doc, "rank", json_is_integer(rank) &&
	    json_integer_value(rank) >= 0 ? json_integer(json_integer_value(
	    rank)) : json_null());
}

/* ---------------------------------------------------------- the reader */

typedef struct chunk_s {
	size_t off;     /* its first record's offset in buf */
	uint32_t count;
	size_t next;    /* the next chunk of its thread; SIZE_MAX: none */
} chunk_t;

/* A thread's place in the merge: its next record. */
typedef struct cur_s {
	tlf_rec_t r;
	size_t chunk;   /* the chunk r is in */
	uint32_t i;     /* r's index there */
} cur_t;

struct tl_s {
	char *buf;      /* the file */
	tlf_header_t h;
	chunk_t *chunks;
	size_t nchunks;
	size_t *first;  /* each thread's first chunk */
	size_t nthreads;
	cur_t *heap;    /* the threads not yet done, the earliest on top */
	size_t nheap;
	tlf_rec_t out;  /* what tl_next returned */
	size_t events;
	uint64_t end_ns;
};

static size_t
rec_off(const tl_t *t, const cur_t *c)
{
	return t->chunks[c->chunk].off + (size_t)c->i * sizeof(tlf_rec_t);
}

/* Does a come before b?  Time, then file order. */
static bool
before(const tl_t *t, const cur_t *a, const cur_t *b)
{
	if (a->r.t_ns != b->r.t_ns)
		return a->r.t_ns < b->r.t_ns;
	return rec_off(t, a) < rec_off(t, b);
}

static void
sift_down(tl_t *t, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		cur_t tmp;

		if (l < t->nheap && before(t, &t->heap[l], &t->heap[m]))
			m = l;
		if (l + 1 < t->nheap && before(t, &t->heap[l + 1], &t->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = t->heap[i];
		t->heap[i] = t->heap[m];
		t->heap[m] = tmp;
		i = m;
	}
}

/* c's record read; false when its thread has no more. */
static bool
load(tl_t *t, cur_t *c)
{
	while (c->i >= t->chunks[c->chunk].count) {
		if (t->chunks[c->chunk].next == SIZE_MAX)
			return false;
		c->chunk = t->chunks[c->chunk].next;
		c->i = 0;
	}
	memcpy(&c->r, t->buf + rec_off(t, c), sizeof(c->r));
	return true;
}

void
tl_rewind(tl_t *t)
{
	t->nheap = 0;
	for (size_t k = 0; k < t->nthreads; k++) {
		cur_t *c = &t->heap[t->nheap];

		c->chunk = t->first[k];
		c->i = 0;
		if (load(t, c))
			t->nheap++;
	}
	for (size_t i = t->nheap / 2; i-- > 0;)
		sift_down(t, i);
}

const tlf_rec_t *
tl_next(tl_t *t)
{
	cur_t *c = &t->heap[0];

	if (t->nheap == 0)
		return NULL;
	t->out = c->r;
	c->i++;
	if (!load(t, c))
		*c = t->heap[--t->nheap];
	sift_down(t, 0);
	return &t->out;
}

size_t
tl_events(const tl_t *t)
{
	return t->events;
}

uint64_t
tl_end_ns(const tl_t *t)
{
	return t->end_ns;
}

const tlf_header_t *
tl_header(const tl_t *t)
{
	return &t->h;
}

void
tl_close(tl_t *t)
{
	if (t == NULL)
		return;
	free(t->buf);
	free(t->chunks);
	free(t->first);
	free(t->heap);
	free(t);
}

/* Chunks of one thread chained in file order: tid -> its last chunk
 * (open addressing; tids are never 0 in practice, a key of tid + 1). */
typedef struct tid_slot_s {
	uint64_t key;
	size_t last;
} tid_slot_t;

tl_t *
tl_open(const char *path, char *err, size_t errsize)
{
	size_t len, off, cap = 0, tcap = 64, ntid = 0;
	tid_slot_t *tids = xcalloc(tcap, sizeof(*tids));
	tl_t *t = xcalloc(1, sizeof(*t));
	tlf_header_t *h = &t->h;
	char *buf;

	buf = input_read(path, AU_MAX_REPORT_BYTES, "the timeline", NULL,
	    &len, err, errsize);
	if (buf == NULL)
		goto bad;
	t->buf = buf;
	if (len < sizeof(*h) || memcmp(buf, TLF_MAGIC, 8) != 0) {
		snprintf(err, errsize, "%s: not a cuwarden timeline (%s)", path,
		    len < 8 ? "shorter than its header" : "no magic \""
		    TLF_MAGIC "\"");
		goto bad;
	}
	memcpy(h, buf, sizeof(*h));
	/* Version 1: ns, its clock and ratio fields reserved. */
	if (h->version == 1) {
		h->clock = TLF_CLOCK_NS;
		h->tick_ns_num = h->tick_ns_den = 1;
	} else if (h->version != TLF_VERSION) {
		snprintf(err, errsize, "%s: timeline version %u is not "
		    "supported (this tool reads versions 1 to %d)", path,
		    h->version, TLF_VERSION);
		goto bad;
	}
	if (h->clock > TLF_CLOCK_TSC || (h->clock == TLF_CLOCK_TSC &&
	    (h->tick_ns_num == 0 || h->tick_ns_den == 0))) {
		snprintf(err, errsize, "%s: corrupt timeline header: clock %u, "
		    "ticks to ns %llu/%llu", path, h->clock,
		    (unsigned long long)h->tick_ns_num,
		    (unsigned long long)h->tick_ns_den);
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
		size_t need, s;
		chunk_t *ch;

		if (len - off < sizeof(c)) {
			snprintf(err, errsize, "%s: truncated timeline: %zu "
			    "bytes at offset %zu, less than a chunk header",
			    path, len - off, off);
			goto bad;
		}
		memcpy(&c, buf + off, sizeof(c));
		/* The shim never writes an empty chunk: one is made up (and
		 * would cost the merge a heap entry for nothing). */
		if (c.magic != TLF_CHUNK_MAGIC || c.count == 0) {
			snprintf(err, errsize, "%s: corrupt timeline: %s at "
			    "offset %zu", path, c.magic != TLF_CHUNK_MAGIC ?
			    "no chunk header" : "an empty chunk", off);
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
		for (uint32_t i = 0; i < c.count; i++, off +=
		    sizeof(tlf_rec_t)) {
			tlf_rec_t r;

			memcpy(&r, buf + off, sizeof(r));
			/* TSC ticks to ns, in place: one ratio for every
			 * record, so their order stays. */
			if (h->clock == TLF_CLOCK_TSC) {
				unsigned __int128 x = (unsigned __int128)r.t_ns *
				    h->tick_ns_num / h->tick_ns_den;

				r.t_ns = x > UINT64_MAX ? UINT64_MAX :
				    (uint64_t)x;
				memcpy(buf + off, &r, sizeof(r));
			}
			if (r.event < TLF_ALLOC || r.event > TLF_EVENT_MAX ||
			    r.kind >= NKINDS || r.device < -1 ||
			    r.device > TL_MAX_DEVICE) {
				snprintf(err, errsize, "%s: corrupt timeline: "
				    "the record at offset %zu has event %u, "
				    "kind %u, device %d", path, off, r.event,
				    r.kind, r.device);
				goto bad;
			}
			if (r.t_ns > t->end_ns)
				t->end_ns = r.t_ns;
		}
		t->events += c.count;
		if (t->nchunks == cap) {
			cap = cap ? 2 * cap : 64;
			t->chunks = xrealloc(t->chunks, cap * sizeof(*t->chunks));
		}
		ch = &t->chunks[t->nchunks];
		ch->off = off - need;
		ch->count = c.count;
		ch->next = SIZE_MAX;
		/* Chain it after its thread's last chunk. */
		if (2 * (ntid + 1) > tcap) {
			tid_slot_t *old = tids;
			size_t oc = tcap;

			tcap *= 2;
			tids = xcalloc(tcap, sizeof(*tids));
			for (size_t j = 0; j < oc; j++) {
				if (old[j].key == 0)
					continue;
				for (s = old[j].key * 0x9e3779b97f4a7c15ull &
				    (tcap - 1); tids[s].key != 0;
				    s = (s + 1) & (tcap - 1))
					;
				tids[s] = old[j];
			}
			free(old);
		}
		for (s = ((uint64_t)c.tid + 1) * 0x9e3779b97f4a7c15ull &
		    (tcap - 1); tids[s].key != 0 && tids[s].key !=
		    (uint64_t)c.tid + 1; s = (s + 1) & (tcap - 1))
			;
		if (tids[s].key == 0) {
			tids[s].key = (uint64_t)c.tid + 1;
			t->first = xrealloc(t->first, (ntid + 1) *
			    sizeof(*t->first));
			t->first[ntid++] = t->nchunks;
		} else
			t->chunks[tids[s].last].next = t->nchunks;
		tids[s].last = t->nchunks++;
	}
	free(tids);
	t->nthreads = ntid;
	t->heap = xcalloc(ntid + 1, sizeof(*t->heap));
	tl_rewind(t);
	return t;
bad:
	free(tids);
	tl_close(t);
	return NULL;
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

/* The live set of device d after its peak's event (t rewound and read
 * up to it): groups by (stack, kind). */
static json_t *
live_set(tl_t *t, const dev_t_ *d, const json_t *stacks)
{
	size_t cap = 1024, ng = 0, i, j;
	grp_t *g = xcalloc(cap, sizeof(*g));
	int64_t kinds[NKINDS];
	json_t *o = json_object(), *top = json_array(), *kj = json_object();
	uint64_t allocs = 0, groups = 0;

	memset(kinds, 0, sizeof(kinds));
	tl_rewind(t);
	for (i = 0; i <= d->at; i++) {
		const tlf_rec_t *r = tl_next(t);
		uint64_t key, h;
		int64_t sign = r->event == TLF_ALLOC ? 1 : -1;

		if (!tl_counted(r->kind) || tl_device(r) != d->dev)
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
	struct stat st;

	/* Looked at, not opened: opening a FIFO there would wait for a
	 * writer forever (input_read refuses what is not a file). */
	if (stat(p, &st) == 0)
		return p;
	free(p);
	return xstrdup(file);
}

tl_t *
tl_open_report(const json_t *report, const char *report_path, char **pathp,
    char *err, size_t errsize)
{
	const json_t *tl = json_object_get(report, "timeline");
	const char *file = json_str(tl, "file", NULL);
	char *path;
	tl_t *t;

	err[0] = '\0';
	if (pathp != NULL)
		*pathp = NULL;
	if (!json_is_object(tl) || file == NULL)
		return NULL;
	path = locate(file, report_path);
	t = tl_open(path, err, errsize);
	if (t != NULL && json_is_integer(json_object_get(tl, "events")) &&
	    (uint64_t)json_int(tl, "events", 0) != t->events) {
		snprintf(err, errsize, "%s: truncated or corrupt timeline: it "
		    "holds %zu events, its report (%s) says %lld", path,
		    t->events, report_path, json_int(tl, "events", 0));
		tl_close(t);
		t = NULL;
	}
	if (t != NULL && pathp != NULL)
		*pathp = path;
	else
		free(path);
	return t;
}

/* A live byte count of the report's, signed (a total may read below
 * zero where a free was summed before its allocation). */
static json_t *
json_signed(const json_t *o, const char *key)
{
	return json_integer(json_int(o, key, 0));
}

/* The report's timeline.after_limit as the peaks document's: per device
 * its totals and its largest stacks past the limit (at most
 * AU_PEAK_GROUPS, in the report's stack form).  NULL when there is
 * none. */
static json_t *
after_limit(const json_t *tl, const json_t *stacks)
{
	const json_t *a = json_object_get(tl, "after_limit");
	const json_t *ad = json_object_get(a, "devices");
	const json_t *as = json_object_get(a, "stacks");
	json_t *o, *devs;
	uint64_t events, dropped;

	if (!json_is_object(a))
		return NULL;
	events = (uint64_t)json_int(a, "events", 0);
	dropped = (uint64_t)json_int(tl, "dropped", 0);
	o = json_object();
	devs = json_array();
	json_object_set_new(o, "since_ns", json_count((uint64_t)json_int(a,
	    "since_ns", 0)));
	json_object_set_new(o, "events", json_count(events));
	json_object_set_new(o, "lost", json_count(dropped > events ?
	    dropped - events : 0));
	for (size_t i = 0; i < json_array_size(ad); i++) {
		const json_t *d = json_array_get(ad, i);
		json_t *e = json_object(), *top = json_array();
		long long dev = json_int(d, "device", -1);

		json_object_set_new(e, "device", json_integer(dev));
		json_object_set_new(e, "host", json_boolean(dev < 0));
		json_object_set_new(e, "at_limit_bytes", json_signed(d,
		    "at_limit_bytes"));
		json_object_set_new(e, "max_bytes", json_signed(d,
		    "max_bytes"));
		json_object_set_new(e, "max_time_ns", json_count((uint64_t)
		    json_int(d, "max_time_ns", 0)));
		json_object_set_new(e, "end_bytes", json_signed(d,
		    "end_bytes"));
		for (size_t k = 0; k < json_array_size(as) &&
		    json_array_size(top) < AU_PEAK_GROUPS; k++) {
			const json_t *g = json_array_get(as, k);
			json_t *x;
			char id[24];

			if (json_int(g, "device", -2) != dev)
				continue;
			snprintf(id, sizeof(id), "%lld", json_int(g, "id", 0));
			x = json_object();
			json_object_set_new(x, "bytes", json_signed(g,
			    "max_bytes"));
			json_object_set_new(x, "at_limit_bytes", json_signed(g,
			    "at_limit_bytes"));
			json_object_set_new(x, "end_bytes", json_signed(g,
			    "end_bytes"));
			json_object_set_new(x, "kind", json_utf8(json_str(g,
			    "kind", "?")));
			json_object_set_new(x, "stack_id", json_integer(
			    json_int(g, "id", 0)));
			json_object_set(x, "stack", json_object_get(stacks, id) ?
			    json_object_get(stacks, id) : json_null());
			json_array_append_new(top, x);
		}
		json_object_set_new(e, "top", top);
		json_array_append_new(devs, e);
	}
	json_object_set_new(o, "devices", devs);
	return o;
}

json_t *
timeline_peaks(tl_t *t, const json_t *report, const char *report_path,
    const char *path)
{
	const json_t *tl = json_object_get(report, "timeline");
	const tlf_rec_t *r;
	size_t nd = 0, i;
	dev_t_ *d = NULL;
	json_t *doc, *devs, *stacks, *al;
	/* device + 1 -> d index + 1: one look-up an event. */
	uint16_t slot[TL_MAX_DEVICE + 2];

	memset(slot, 0, sizeof(slot));
	tl_rewind(t);
	for (i = 0; (r = tl_next(t)) != NULL; i++) {
		size_t k;

		if (!tl_counted(r->kind))
			continue;
		k = slot[tl_device(r) + 1];
		if (k != 0) {
			k--;
		} else {
			k = nd;
			slot[tl_device(r) + 1] = (uint16_t)(k + 1);
			d = xrealloc(d, ++nd * sizeof(*d));
			memset(&d[k], 0, sizeof(*d));
			d[k].dev = tl_device(r);
		}
		d[k].cur += tl_delta(r);
		if (d[k].cur > d[k].peak) {
			d[k].peak = d[k].cur;
			d[k].at = i;
			d[k].t = r->t_ns;
		}
	}
	if (nd > 1)
		qsort(d, nd, sizeof(*d), cmp_dev);
	stacks = stack_table(tl);
	al = after_limit(tl, stacks);
	devs = json_array();
	for (i = 0; i < nd; i++) {
		json_t *e;

		if (d[i].peak <= 0)
			continue;
		e = live_set(t, &d[i], stacks);
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
	tl_doc_place(doc, report);
	json_object_set_new(doc, "report", json_utf8(report_path));
	json_object_set_new(doc, "timeline", json_utf8(path));
	json_object_set_new(doc, "events", json_count(t->events));
	json_object_set_new(doc, "dropped", json_count((uint64_t)json_int(tl,
	    "dropped", 0)));
	json_object_set_new(doc, "limit_reached", json_boolean(json_is_true(
	    json_object_get(tl, "limit_reached"))));
	json_object_set_new(doc, "exact", json_boolean(json_int(tl,
	    "dropped", 0) == 0));
	json_object_set(doc, "modules", json_object_get(report, "modules") ?
	    json_object_get(report, "modules") : json_array());
	json_object_set_new(doc, "devices", devs);
	if (al != NULL)
		json_object_set_new(doc, "after_limit", al);
	free(d);
	return doc;
}
