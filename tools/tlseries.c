/*
 * tlseries.c -- a timeline's memory over time (tlseries.h; doc/audit.md,
 * "Memory over time"): per device, live bytes downsampled to at most
 * TLS_POINTS points, broken down by owner and by the largest stacks, and
 * the stacks that grew steadily ("growing").
 *
 * Three passes of the reader (timeline.h), nothing held per event:
 *   1. the process's last allocation's time and each (device, stack)
 *      group's first (the group's growth samples' span);
 *   2. per group: its maximum live bytes, and its live bytes at
 *      TLS_SAMPLES evenly spaced moments of its span;
 *   3. the series: the run cut into TLS_POINTS / 2 equal intervals; each
 *      interval with events gives its maximum (the first moment of it: a
 *      peak is never lost) and, when it ended lower, its end.
 * Memory: per group TLS_SAMPLES + 4 words; per device the points, each
 * 2 + owners + stacks words (at most TLS_POINTS of them).
 */
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "ownerpats.h"
#include "path.h"
#include "timeline.h"
#include "tlseries.h"
#include "xalloc.h"

#define TLS_COLS_O (TLS_OWNERS + 1) /* + "other" */
#define TLS_COLS_S (TLS_STACKS + 1)
#define TLS_COLS (1 + TLS_COLS_O + TLS_COLS_S) /* total, owners, stacks */

/* A stack of the report's timeline.stacks. */
typedef struct stk_s {
	uint32_t id;
	int owner;          /* index into owners, -1 none */
	const json_t *frames;
	int out;            /* index in the document's "stacks", -1 not yet */
} stk_t;

/* Live bytes of one stack on one device. */
typedef struct grp_s {
	int dev;            /* index into devs */
	size_t stk;         /* index into stks */
	int64_t cur, max;
	int col_o, col_s;   /* its series columns (pass 3) */
	bool allocated;     /* t0 is its first allocation's time */
	uint64_t t0;
	size_t j;           /* samples taken */
	int64_t samples[TLS_SAMPLES];
} grp_t;

typedef struct dev_s {
	int dev;            /* -1 host */
	int64_t peak;
	uint64_t peak_t;
	/* Pass 3. */
	int owner_col[TLS_OWNERS]; /* owners index of each owner column */
	size_t nown;
	size_t stk_col[TLS_STACKS]; /* stks index of each stack column */
	size_t nstk;
	int64_t cur[TLS_COLS];
	int64_t max[TLS_COLS];
	uint64_t max_t, last_t;
	uint64_t bucket;    /* UINT64_MAX: none open */
	uint64_t *t;        /* the points: times, and TLS_COLS values each */
	int64_t *v;
	size_t n;
} dev_t_;

typedef struct ser_s {
	stk_t *stks;
	size_t nstks;
	size_t *idx;        /* stack id -> stks index + 1 (open addressing) */
	size_t idxcap;
	const char **owners;
	size_t nowners;
	grp_t *g;
	size_t ng, gcap;
	size_t *gidx;       /* (device, stack) -> g index + 1 */
	size_t gidxcap;
	dev_t_ *d;
	size_t nd;
	/* device + 1 -> d index + 1 (0: none yet): one look-up an event,
	 * however many devices (TL_MAX_DEVICE bounds them). */
	uint16_t dslot[TL_MAX_DEVICE + 2];
} ser_t;

static uint64_t
mix(uint64_t k)
{
	return k * 0x9e3779b97f4a7c15ull;
}

static size_t
stk_find(const ser_t *s, uint32_t id)
{
	size_t h;

	for (h = mix(id + 1ull) & (s->idxcap - 1); s->idx[h] != 0;
	    h = (h + 1) & (s->idxcap - 1))
		if (s->stks[s->idx[h] - 1].id == id)
			return s->idx[h] - 1;
	return SIZE_MAX;
}

/* The owner of a stack, as the shim names it: the module of its first
 * frame outside OWNER_CUDA_PATTERNS (CUWARDEN_OWNER_SKIP is not known
 * here); a module without a path is the executable. */
static const char *
owner_of(const json_t *frames, const json_t *report)
{
	static const char *const pats[] = { OWNER_CUDA_PATTERNS };
	const json_t *mods = json_object_get(report, "modules");

	for (size_t i = 0; i < json_array_size(frames); i++) {
		long long m = json_int(json_array_get(frames, i), "module", -1);
		const char *p;
		bool skip = false;

		if (m < 0 || (size_t)m >= json_array_size(mods))
			continue;
		p = json_str(json_array_get(mods, (size_t)m), "path", "");
		if (p[0] == '\0')
			return json_str(report, "exe", "");
		for (size_t k = 0; k < sizeof(pats) / sizeof(pats[0]) &&
		    !skip; k++)
			skip = fnmatch(pats[k], base_name(p), 0) == 0;
		if (!skip)
			return p;
	}
	return "";
}

static void
read_stacks(ser_t *s, const json_t *report)
{
	const json_t *a = json_object_get(json_object_get(report, "timeline"),
	    "stacks");
	size_t n = json_array_size(a);

	s->stks = xcalloc(n + 1, sizeof(*s->stks));
	for (s->idxcap = 16; s->idxcap < 2 * (n + 1); s->idxcap *= 2)
		;
	s->idx = xcalloc(s->idxcap, sizeof(*s->idx));
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(a, i);
		long long id = json_int(e, "id", -1);
		const char *o;
		stk_t *k;
		size_t h, j;

		if (id < 0 || id > UINT32_MAX || stk_find(s, (uint32_t)id) !=
		    SIZE_MAX)
			continue;
		k = &s->stks[s->nstks];
		k->id = (uint32_t)id;
		k->frames = json_object_get(e, "stack");
		k->out = -1;
		o = owner_of(k->frames, report);
		k->owner = -1;
		for (j = 0; o[0] != '\0' && j < s->nowners; j++)
			if (strcmp(s->owners[j], o) == 0)
				break;
		if (o[0] != '\0') {
			if (j == s->nowners) {
				s->owners = xrealloc(s->owners, (s->nowners +
				    1) * sizeof(*s->owners));
				s->owners[s->nowners++] = o;
			}
			k->owner = (int)j;
		}
		for (h = mix(id + 1ull) & (s->idxcap - 1); s->idx[h] != 0;
		    h = (h + 1) & (s->idxcap - 1))
			;
		s->idx[h] = ++s->nstks;
	}
}

/* The device line of r, added when new. */
static int
dev_find(ser_t *s, int dev)
{
	size_t k = s->dslot[dev + 1];

	if (k != 0)
		return (int)k - 1;
	k = s->nd;
	s->dslot[dev + 1] = (uint16_t)(k + 1);
	s->d = xrealloc(s->d, ++s->nd * sizeof(*s->d));
	memset(&s->d[k], 0, sizeof(*s->d));
	s->d[k].dev = dev;
	s->d[k].bucket = UINT64_MAX;
	return (int)k;
}

/* The group of r (its device and stack), added when new; stacks the
 * report does not list share one entry (stack id 0's). */
static grp_t *
grp_find(ser_t *s, const tlf_rec_t *r)
{
	int dev = dev_find(s, tl_device(r));
	size_t stk = stk_find(s, r->stack), h;
	uint64_t key;

	if (stk == SIZE_MAX) {
		stk = stk_find(s, 0);
		if (stk == SIZE_MAX) { /* an entry for "no stack" */
			stk_t *k = &s->stks[s->nstks];

			memset(k, 0, sizeof(*k));
			k->owner = -1;
			k->out = -1;
			for (h = mix(1) & (s->idxcap - 1); s->idx[h] != 0;
			    h = (h + 1) & (s->idxcap - 1))
				;
			s->idx[h] = ++s->nstks;
			stk = s->nstks - 1;
		}
	}
	key = ((uint64_t)stk << 16 | (uint64_t)dev) + 1;
	if (2 * (s->ng + 1) > s->gidxcap) {
		s->gidxcap = s->gidxcap ? 2 * s->gidxcap : 64;
		free(s->gidx);
		s->gidx = xcalloc(s->gidxcap, sizeof(*s->gidx));
		for (size_t i = 0; i < s->ng; i++) {
			uint64_t k = ((uint64_t)s->g[i].stk << 16 |
			    (uint64_t)s->g[i].dev) + 1;

			for (h = mix(k) & (s->gidxcap - 1); s->gidx[h] != 0;
			    h = (h + 1) & (s->gidxcap - 1))
				;
			s->gidx[h] = i + 1;
		}
	}
	for (h = mix(key) & (s->gidxcap - 1); s->gidx[h] != 0;
	    h = (h + 1) & (s->gidxcap - 1)) {
		grp_t *g = &s->g[s->gidx[h] - 1];

		if (g->stk == stk && g->dev == dev)
			return g;
	}
	if (s->ng == s->gcap) {
		s->gcap = s->gcap ? 2 * s->gcap : 64;
		s->g = xrealloc(s->g, s->gcap * sizeof(*s->g));
	}
	memset(&s->g[s->ng], 0, sizeof(s->g[0]));
	s->g[s->ng].dev = dev;
	s->g[s->ng].stk = stk;
	s->gidx[h] = ++s->ng;
	return &s->g[s->ng - 1];
}

/* ------------------------------------------------------- passes 1 and 2 */

/* Sample j of a span t0..t1: the moment t0 + (j + 1) (t1 - t0) / M. */
static uint64_t
sample_time(uint64_t t0, uint64_t t1, size_t j)
{
	uint64_t span = t1 - t0;

	return t0 + span / TLS_SAMPLES * (j + 1) +
	    span % TLS_SAMPLES * (j + 1) / TLS_SAMPLES;
}

/* Each group is sampled over its own span: from its first allocation to
 * the process's last (not its end: the frees at exit come after), so a
 * stack that starts to grow late in a long run (after a slow start-up)
 * is judged by its own life.  A group's value changes only at its own
 * records, so its samples are taken at them: O(1) a record. */
static void
pass_groups(ser_t *s, tl_t *t)
{
	const tlf_rec_t *r;
	uint64_t t1 = 0;

	tl_rewind(t);
	while ((r = tl_next(t)) != NULL)
		if (r->event == TLF_ALLOC && tl_counted(r->kind)) {
			grp_t *g = grp_find(s, r);

			if (!g->allocated) {
				g->allocated = true;
				g->t0 = r->t_ns;
			}
			t1 = r->t_ns;
		}
	tl_rewind(t);
	while ((r = tl_next(t)) != NULL) {
		grp_t *g;
		dev_t_ *d;

		if (!tl_counted(r->kind))
			continue;
		g = grp_find(s, r);
		while (g->allocated && g->j < TLS_SAMPLES && r->t_ns >
		    sample_time(g->t0, t1, g->j))
			g->samples[g->j++] = g->cur;
		g->cur += tl_delta(r);
		if (g->cur > g->max)
			g->max = g->cur;
		d = &s->d[g->dev];
		d->cur[0] += tl_delta(r);
		if (d->cur[0] > d->peak) {
			d->peak = d->cur[0];
			d->peak_t = r->t_ns;
		}
	}
	/* The rest: no record of the group after them, so its value then is
	 * its value now. */
	for (size_t i = 0; i < s->ng; i++)
		while (s->g[i].j < TLS_SAMPLES)
			s->g[i].samples[s->g[i].j++] = s->g[i].cur;
}

/* ----------------------------------------------------------- pass 3 */

static int
cmp_i64_desc(int64_t a, int64_t b)
{
	return a > b ? -1 : a < b;
}

/* Picks each device's owner and stack columns: the TLS_OWNERS owners
 * with the most bytes (the sum of their groups' maxima) and the
 * TLS_STACKS groups with the largest maxima. */
static void
pick_columns(ser_t *s)
{
	int64_t *ob = xcalloc(s->nowners + 1, sizeof(*ob));

	for (size_t di = 0; di < s->nd; di++) {
		dev_t_ *d = &s->d[di];

		memset(ob, 0, (s->nowners + 1) * sizeof(*ob));
		for (size_t i = 0; i < s->ng; i++)
			if (s->g[i].dev == (int)di && s->stks[s->g[i].stk].owner
			    >= 0)
				ob[s->stks[s->g[i].stk].owner] += s->g[i].max;
		/* Selection by repeated maximum: the columns are few. */
		for (d->nown = 0; d->nown < TLS_OWNERS; d->nown++) {
			size_t best = SIZE_MAX;

			for (size_t o = 0; o < s->nowners; o++)
				if (ob[o] > 0 && (best == SIZE_MAX ||
				    cmp_i64_desc(ob[o], ob[best]) < 0))
					best = o;
			if (best == SIZE_MAX)
				break;
			d->owner_col[d->nown] = (int)best;
			ob[best] = -1;
		}
		for (d->nstk = 0; d->nstk < TLS_STACKS; d->nstk++) {
			size_t best = SIZE_MAX;

			for (size_t i = 0; i < s->ng; i++)
				if (s->g[i].dev == (int)di && s->g[i].col_s ==
				    0 && s->g[i].max > 0 && (best == SIZE_MAX ||
				    s->g[i].max > s->g[best].max))
					best = i;
			if (best == SIZE_MAX)
				break;
			s->g[best].col_s = (int)d->nstk + 1;
			d->stk_col[d->nstk] = s->g[best].stk;
		}
	}
	for (size_t i = 0; i < s->ng; i++) {
		grp_t *g = &s->g[i];
		dev_t_ *d = &s->d[g->dev];
		int o = s->stks[g->stk].owner;
		size_t k;

		/* Columns: 0 total, 1.. owners, "other" owner, stacks,
		 * "other" stack. */
		for (k = 0; k < d->nown && d->owner_col[k] != o; k++)
			;
		g->col_o = 1 + (int)(o >= 0 && k < d->nown ? k : TLS_OWNERS);
		g->col_s = 1 + TLS_COLS_O + (g->col_s > 0 ? g->col_s - 1 :
		    TLS_STACKS);
		g->cur = 0;
	}
	for (size_t di = 0; di < s->nd; di++)
		memset(s->d[di].cur, 0, sizeof(s->d[di].cur));
	free(ob);
}

static void
point(dev_t_ *d, uint64_t t, const int64_t *v)
{
	if (d->n > 0 && d->t[d->n - 1] == t)
		d->n--; /* the same moment: its latest state */
	d->t = xrealloc(d->t, (d->n + 1) * sizeof(*d->t));
	d->v = xrealloc(d->v, (d->n + 1) * TLS_COLS * sizeof(*d->v));
	d->t[d->n] = t;
	memcpy(&d->v[d->n * TLS_COLS], v, TLS_COLS * sizeof(*v));
	d->n++;
}

/* The open interval's points: its maximum, then its end when lower. */
static void
close_bucket(dev_t_ *d)
{
	if (d->bucket == UINT64_MAX)
		return;
	point(d, d->max_t, d->max);
	if (d->last_t > d->max_t && d->cur[0] != d->max[0])
		point(d, d->last_t, d->cur);
	d->bucket = UINT64_MAX;
}

static void
pass_series(ser_t *s, tl_t *t)
{
	uint64_t width = tl_end_ns(t) / (TLS_POINTS / 2) + 1;
	const tlf_rec_t *r;

	tl_rewind(t);
	while ((r = tl_next(t)) != NULL) {
		grp_t *g;
		dev_t_ *d;
		int64_t dl = tl_delta(r);

		if (!tl_counted(r->kind))
			continue;
		g = grp_find(s, r);
		d = &s->d[g->dev];
		/* Intervals only open forward: a corrupt file whose thread's
		 * times go back (the reader merges, it does not sort) cannot
		 * make more than TLS_POINTS points. */
		if (d->bucket == UINT64_MAX || r->t_ns / width > d->bucket) {
			close_bucket(d);
			d->bucket = r->t_ns / width;
			d->max[0] = -1;
		}
		d->cur[0] += dl;
		d->cur[g->col_o] += dl;
		d->cur[g->col_s] += dl;
		d->last_t = r->t_ns;
		if (d->cur[0] > d->max[0]) {
			memcpy(d->max, d->cur, sizeof(d->max));
			d->max_t = r->t_ns;
		}
	}
	for (size_t di = 0; di < s->nd; di++)
		close_bucket(&s->d[di]);
}

/* ------------------------------------------------------- the document */

static int
out_stack(ser_t *s, json_t *stacks, size_t k)
{
	stk_t *st = &s->stks[k];

	if (st->out < 0) {
		json_t *e = json_object();

		json_object_set_new(e, "id", json_integer(st->id));
		json_object_set_new(e, "owner", json_utf8(st->owner >= 0 ?
		    s->owners[st->owner] : ""));
		json_object_set_new(e, "stack", st->frames != NULL ?
		    json_incref((json_t *)(uintptr_t)st->frames) :
		    json_array());
		st->out = (int)json_array_size(stacks);
		json_array_append_new(stacks, e);
	}
	return st->out;
}

static json_t *
column(const dev_t_ *d, size_t c)
{
	json_t *a = json_array();

	for (size_t i = 0; i < d->n; i++)
		json_array_append_new(a, json_integer(d->v[i * TLS_COLS + c]));
	return a;
}

/* Past CUWARDEN_TIMELINE_LIMIT: the report's sampled points of e's
 * device (timeline.after_limit.samples: [device, time_ns, bytes]) as its
 * "sampled" member, when it has any.  Returns e. */
static json_t *
sampled(json_t *e, const json_t *tl)
{
	const json_t *a = json_object_get(json_object_get(tl, "after_limit"),
	    "samples");
	long long dev = json_int(e, "device", -1);
	json_t *ts = json_array(), *bs = json_array(), *o;

	for (size_t i = 0; i < json_array_size(a); i++) {
		const json_t *x = json_array_get(a, i);

		if (json_array_size(x) != 3 ||
		    json_integer_value(json_array_get(x, 0)) != dev)
			continue;
		json_array_append_new(ts, json_count((uint64_t)
		    json_integer_value(json_array_get(x, 1))));
		json_array_append_new(bs, json_integer(json_integer_value(
		    json_array_get(x, 2))));
	}
	if (json_array_size(ts) == 0) {
		json_decref(ts);
		json_decref(bs);
		return e;
	}
	o = json_object();
	json_object_set_new(o, "time_ns", ts);
	json_object_set_new(o, "bytes", bs);
	json_object_set_new(e, "sampled", o);
	return e;
}

static json_t *
device_doc(ser_t *s, size_t di, json_t *stacks)
{
	dev_t_ *d = &s->d[di];
	json_t *e = json_object(), *ts = json_array(), *os = json_array(),
	    *ss = json_array();
	size_t k;

	json_object_set_new(e, "device", json_integer(d->dev));
	json_object_set_new(e, "host", json_boolean(d->dev < 0));
	json_object_set_new(e, "peak_bytes", json_count((uint64_t)d->peak));
	json_object_set_new(e, "peak_time_ns", json_count(d->peak_t));
	for (size_t i = 0; i < d->n; i++)
		json_array_append_new(ts, json_count(d->t[i]));
	json_object_set_new(e, "time_ns", ts);
	json_object_set_new(e, "bytes", column(d, 0));
	for (k = 0; k <= d->nown; k++) {
		json_t *o = json_object();
		bool other = k == d->nown;

		json_object_set_new(o, "owner", other ? json_null() :
		    json_utf8(s->owners[d->owner_col[k]]));
		json_object_set_new(o, "bytes", column(d, 1 + (other ?
		    TLS_OWNERS : k)));
		json_array_append_new(os, o);
	}
	json_object_set_new(e, "owners", os);
	for (k = 0; k <= d->nstk; k++) {
		json_t *o = json_object();
		bool other = k == d->nstk;

		json_object_set_new(o, "stack", other ? json_null() :
		    json_integer(out_stack(s, stacks, d->stk_col[k])));
		json_object_set_new(o, "bytes", column(d, 1 + TLS_COLS_O +
		    (other ? TLS_STACKS : k)));
		json_array_append_new(ss, o);
	}
	json_object_set_new(e, "stacks", ss);
	return e;
}

typedef struct grow_s {
	size_t g;
	int64_t growth;
	unsigned ups;
} grow_t;

static int
cmp_grow(const void *a, const void *b)
{
	const grow_t *x = a, *y = b;

	if (x->growth != y->growth)
		return x->growth > y->growth ? -1 : 1;
	return x->g < y->g ? -1 : x->g > y->g;
}

/* The groups that grew steadily (doc/audit.md, "Growing"). */
static json_t *
growing(ser_t *s, json_t *stacks)
{
	grow_t *v = xcalloc(s->ng + 1, sizeof(*v));
	json_t *a = json_array();
	size_t n = 0;

	for (size_t i = 0; i < s->ng; i++) {
		const int64_t *x = s->g[i].samples;
		unsigned ups = 0;

		for (size_t j = 1; j < TLS_SAMPLES; j++)
			ups += x[j] > x[j - 1];
		if (ups >= TLS_GROW_UPS && x[TLS_SAMPLES - 1] - x[0] >=
		    TLS_GROW_FLOOR) {
			v[n].g = i;
			v[n].growth = x[TLS_SAMPLES - 1] - x[0];
			v[n++].ups = ups;
		}
	}
	qsort(v, n, sizeof(*v), cmp_grow);
	for (size_t i = 0; i < n && i < TLS_GROWING; i++) {
		const grp_t *g = &s->g[v[i].g];
		json_t *e = json_object(), *b = json_array();
		int st = out_stack(s, stacks, g->stk);

		for (size_t j = 0; j < TLS_SAMPLES; j++)
			json_array_append_new(b, json_integer(g->samples[j]));
		json_object_set_new(e, "stack", json_integer(st));
		json_object_set_new(e, "device", json_integer(s->d[g->dev].dev));
		json_object_set_new(e, "host", json_boolean(s->d[g->dev].dev <
		    0));
		json_object_set_new(e, "first_bytes", json_integer(
		    g->samples[0]));
		json_object_set_new(e, "last_bytes", json_integer(
		    g->samples[TLS_SAMPLES - 1]));
		json_object_set_new(e, "growth_bytes", json_integer(
		    v[i].growth));
		json_object_set_new(e, "increases", json_integer(v[i].ups));
		json_object_set_new(e, "samples", b);
		json_array_append_new(a, e);
	}
	free(v);
	return a;
}

static int
cmp_dev(const void *a, const void *b)
{
	const dev_t_ *x = a, *y = b;

	return (x->dev < 0 ? 1 << 20 : x->dev) - (y->dev < 0 ? 1 << 20 :
	    y->dev);
}

json_t *
timeline_series(tl_t *t, const json_t *report, const char *report_path,
    const char *path)
{
	const json_t *tl = json_object_get(report, "timeline");
	ser_t s;
	json_t *doc = json_object(), *devs = json_array(),
	    *stacks = json_array(), *grow;
	size_t *order;

	memset(&s, 0, sizeof(s));
	read_stacks(&s, report);
	pass_groups(&s, t);
	pick_columns(&s);
	pass_series(&s, t);
	/* Devices in order, host last; groups keep their device's index. */
	order = xcalloc(s.nd + 1, sizeof(*order));
	for (size_t i = 0; i < s.nd; i++)
		order[i] = i;
	for (size_t i = 1; i < s.nd; i++)
		for (size_t j = i; j > 0 && cmp_dev(&s.d[order[j - 1]],
		    &s.d[order[j]]) > 0; j--) {
			size_t x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (size_t i = 0; i < s.nd; i++)
		if (s.d[order[i]].peak > 0)
			json_array_append_new(devs, sampled(device_doc(&s,
			    order[i], stacks), tl));
	grow = growing(&s, stacks);
	json_object_set_new(doc, "pid", json_integer(json_int(report, "pid",
	    -1)));
	json_object_set_new(doc, "exe", json_utf8(json_str(report, "exe",
	    "")));
	tl_doc_place(doc, report);
	json_object_set_new(doc, "report", json_utf8(report_path));
	json_object_set_new(doc, "timeline", json_utf8(path));
	json_object_set_new(doc, "start_real_ns", json_count(
	    tl_header(t)->start_real_ns));
	json_object_set_new(doc, "duration_ns", json_count(tl_end_ns(t)));
	json_object_set_new(doc, "exact", json_boolean(json_int(tl,
	    "dropped", 0) == 0));
	json_object_set_new(doc, "devices", devs);
	json_object_set_new(doc, "growing", grow);
	json_object_set(doc, "modules", json_object_get(report, "modules") ?
	    json_object_get(report, "modules") : json_array());
	json_object_set_new(doc, "stacks", stacks);
	for (size_t i = 0; i < s.nd; i++) {
		free(s.d[i].t);
		free(s.d[i].v);
	}
	free(order);
	free(s.d);
	free(s.g);
	free(s.gidx);
	free(s.idx);
	free(s.stks);
	free(s.owners);
	return doc;
}
