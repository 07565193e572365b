#include "preamble.h"
/*
 * tlsummary.c -- the timeline past CUWARDEN_TIMELINE_LIMIT (doc/shim.md,
 * "The timeline"): the events the file has no room for, kept as running
 * totals of live bytes per (stack, device, kind) and per device, with
 * each one's maximum since the limit, and a sampled series of each
 * device's live bytes; the report's timeline.after_limit.
 *
 * Invariants: the writer thread's alone (timeline.c calls it), so no
 * lock.  The totals start from the file itself, read back once when the
 * limit is reached (a sum needs no order); from then on each buffer the
 * writer takes is folded in as it comes.  Buffers of several threads come
 * in the order they filled, not in time order, so a running total (and a
 * sample, and a maximum) counts every event of the buffers taken so far:
 * it lags the true one by at most one buffer per thread.  Bounded: the
 * table grows by doubling (mmap'd, never malloc'd) and gives up, said,
 * when it cannot; the series keeps at most SAMPLES points, halved (two
 * neighbours of a device become their larger) and sampled half as often
 * when full.
 */
#include <string.h>
#include <sys/mman.h>

#include "engine.h"
#include "kinds.h"
#include "log.h"

#define TABLE0 4096     /* entries at first */
#define SAMPLES 4096    /* points of the series, all devices */
#define TOP 64          /* stacks exported, the largest maximum first */
#define NDEV 257        /* device + 1: -1 (host) .. 255 */

typedef struct ent_s {
	uint64_t key;   /* 0: empty; else KEY() */
	int64_t live, at_limit, max;
} ent_t;

typedef struct dev_s {
	int64_t live, at_limit, max, pend;
	uint64_t max_t, last_emit;
	bool seen, touched;
} dev_t_;

static ent_t *tab;
static size_t cap, used;
static dev_t_ devs[NDEV];
static report_tl_sample_t samples[SAMPLES];
static size_t nsamples;
static uint64_t every;  /* a device's samples at least this far apart */
static uint64_t since, events, last_t;
static bool on, failed;

/* Exported copies: at exit (0), and for a snapshot (1). */
static report_tlsum_t out[2];
static report_tl_dev_t out_devs[2][NDEV];
static report_tl_sample_t out_samples[2][SAMPLES];
static report_tl_stack_t out_stacks[2][TOP];

/* A line's memory as the tool counts it (tools/timeline.c): kinds.h's
 * line column, host memory on the line of device -1. */
#define KIND_HOST(e, name, leaks, host, line, rule, text) host,
#define KIND_LINE(e, name, leaks, host, line, rule, text) line,
static const unsigned char kind_host[] = { KIND_LIST(KIND_HOST) };
static const unsigned char kind_line[] = { KIND_LIST(KIND_LINE) };
#define NKINDS (sizeof(kind_line) / sizeof(kind_line[0]))

#define KEY(r, dev) ((uint64_t)1 << 63 | (uint64_t)(r)->kind << 48 | \
	(uint64_t)(uint16_t)(dev) << 32 | (r)->stack)

static size_t
dev_index(int device)
{
	return device < -1 ? 0 : device > NDEV - 2 ? NDEV - 1 :
	    (size_t)(device + 1);
}

static size_t
slot_of(uint64_t key, size_t c)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (c - 1);
}

/* The table twice as large (or first made).  Returns true when no memory
 * is left for it. */
static bool
grow(void)
{
	size_t nc = cap ? 2 * cap : TABLE0;
	ent_t *nt = mmap(NULL, nc * sizeof(*nt), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (nt == MAP_FAILED)
		return true;
	for (size_t i = 0; i < cap; i++) {
		size_t j;

		if (tab[i].key == 0)
			continue;
		for (j = slot_of(tab[i].key, nc); nt[j].key != 0;
		    j = (j + 1) & (nc - 1))
			;
		nt[j] = tab[i];
	}
	if (tab != NULL)
		munmap(tab, cap * sizeof(*tab));
	tab = nt;
	cap = nc;
	return false;
}

static ent_t *
entry(uint64_t key)
{
	size_t j;

	if (2 * (used + 1) > cap && grow())
		return NULL;
	for (j = slot_of(key, cap); tab[j].key != 0 && tab[j].key != key;
	    j = (j + 1) & (cap - 1))
		;
	if (tab[j].key == 0) {
		tab[j].key = key;
		used++;
	}
	return &tab[j];
}

static int64_t
delta(const tlf_rec_t *r)
{
	return r->event == TLF_ALLOC ? (int64_t)r->size : -(int64_t)r->size;
}

/* Two neighbouring points of each device become one, their larger: the
 * series half as long, each device's points still in time order. */
static void
halve(void)
{
	size_t pend[NDEV], k = 0;

	for (size_t i = 0; i < NDEV; i++)
		pend[i] = SIZE_MAX;
	for (size_t i = 0; i < nsamples; i++) {
		size_t d = dev_index(samples[i].device);

		if (pend[d] == SIZE_MAX) {
			pend[d] = k;
			samples[k++] = samples[i];
		} else {
			if (samples[i].bytes > samples[pend[d]].bytes)
				samples[pend[d]] = samples[i];
			pend[d] = SIZE_MAX;
		}
	}
	nsamples = k;
	every = every ? 2 * every : 1;
}

static bool
fold(const tlf_rec_t *r, size_t n, bool after)
{
	for (size_t i = 0; i < n; i++) {
		int dv;
		ent_t *e;
		dev_t_ *d;
		int64_t x = delta(&r[i]);

		if (r[i].kind >= NKINDS || !kind_line[r[i].kind])
			continue;
		dv = kind_host[r[i].kind] ? -1 : r[i].device;
		if ((e = entry(KEY(&r[i], dv))) == NULL)
			return true;
		d = &devs[dev_index(dv)];
		e->live += x;
		d->live += x;
		d->seen = true;
		if (r[i].t_ns > last_t)
			last_t = r[i].t_ns;
		if (!after)
			continue;
		if (e->live > e->max)
			e->max = e->live;
		if (d->live > d->max) {
			d->max = d->live;
			d->max_t = r[i].t_ns;
		}
		if (!d->touched || d->live > d->pend)
			d->pend = d->live;
		d->touched = true;
	}
	return false;
}

/* After a buffer: a point for each device it touched, when its last point
 * is at least `every' old: the most live bytes since that point, at the
 * newest event's time so far (the buffers come out of time order: a
 * point's time says when the writer had seen that much, so the series
 * keeps its order). */
static void
sample(void)
{
	for (size_t i = 0; i < NDEV; i++) {
		dev_t_ *d = &devs[i];

		if (!d->touched || (d->last_emit != 0 &&
		    last_t - d->last_emit < every))
			continue;
		if (nsamples == SAMPLES)
			halve();
		samples[nsamples].t = last_t;
		samples[nsamples].bytes = d->pend;
		samples[nsamples].device = (int16_t)(i - 1);
		nsamples++;
		d->last_emit = last_t;
		d->touched = false;
	}
}

static bool
give_up(void)
{
	log_warn("CUWARDEN_TIMELINE_LIMIT: no memory for the running totals "
	    "past the limit: later events are dropped");
	failed = true;
	return true;
}

bool
shim_tls_begin(const tlf_rec_t *r, size_t n, bool last)
{
	if (failed)
		return true;
	if (fold(r, n, false))
		return give_up();
	if (!last)
		return false;
	since = last_t;
	for (size_t i = 0; i < cap; i++)
		tab[i].at_limit = tab[i].max = tab[i].live;
	for (size_t i = 0; i < NDEV; i++) {
		devs[i].at_limit = devs[i].max = devs[i].live;
		devs[i].max_t = since;
	}
	on = true;
	return false;
}

bool
shim_tls_fold(const tlf_rec_t *r, size_t n)
{
	if (!on || failed)
		return true;
	if (fold(r, n, true))
		return give_up();
	events += n;
	sample();
	return false;
}

/* The TOP entries of the largest max (ties: the first found), into o. */
static size_t
top_stacks(report_tl_stack_t *o)
{
	size_t k = 0;

	for (size_t i = 0; i < cap; i++) {
		const ent_t *e = &tab[i];
		size_t j;

		if (e->key == 0 || e->max <= 0 || (k == TOP &&
		    e->max <= o[TOP - 1].max))
			continue;
		j = k < TOP ? k++ : TOP - 1;
		for (; j > 0 && o[j - 1].max < e->max; j--)
			o[j] = o[j - 1];
		o[j].stack = (uint32_t)(e->key & 0xffffffffu);
		o[j].device = (int16_t)(uint16_t)(e->key >> 32);
		o[j].kind = (uint8_t)(e->key >> 48);
		o[j].at_limit = e->at_limit;
		o[j].max = e->max;
		o[j].end = e->live;
	}
	return k;
}

const report_tlsum_t *
shim_tls_export(int which)
{
	report_tlsum_t *o = &out[which];
	size_t nd = 0;

	if (!on)
		return NULL;
	for (size_t i = 0; i < NDEV; i++) {
		report_tl_dev_t *d = &out_devs[which][nd];

		if (!devs[i].seen)
			continue;
		d->device = (int16_t)(i - 1);
		d->at_limit = devs[i].at_limit;
		d->max = devs[i].max;
		d->max_t = devs[i].max_t;
		d->end = devs[i].live;
		nd++;
	}
	memcpy(out_samples[which], samples, nsamples * sizeof(samples[0]));
	o->since = since;
	o->events = events;
	o->devs = out_devs[which];
	o->ndevs = nd;
	o->samples = out_samples[which];
	o->nsamples = nsamples;
	o->stacks = out_stacks[which];
	o->nstacks = top_stacks(out_stacks[which]);
	return o;
}
