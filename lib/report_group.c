#include "preamble.h"

/*
 * report_group.c -- what a report holds (report_int.h): the leaks,
 * copied from the registry and grouped by (alloc_stack, kind, size,
 * device, owner, api), largest group first, and the kept violations,
 * copied.
 *
 * What is a leak: every live record of a kind marked leaks in kinds.h
 * (all but views and mappings, which hold no memory of their own), and
 * every record a context's teardown freed (teardown.h); a live address
 * range (kind va) is a leak of its own category, address space.
 *
 * Invariants: the copies live in scratch memory (scratch.h), never
 * malloc; they are sorted by the one merge sort below, not qsort.  Byte
 * sums saturate at UINT64_MAX (and say so) rather than wrap.
 *
 * Locking: the registry walk only copies records (its callback runs under
 * a stripe lock); violation_foreach is lock-free for readers.
 */

#include <errno.h>
#include <string.h>

#include "registry.h"
#include "report.h"
#include "report_int.h"
#include "teardown.h"
#include "violation.h"

/* ------------------------------------------------------------------ sort */

/* Sorting without malloc (glibc's qsort may call it): a stable bottom-up
 * merge sort of the elements themselves, runs of SORT_RUN sorted by
 * insertion first.  Always inlined, so that in each caller the element
 * size and the comparison are constants: the copies become moves and the
 * compares are inlined (doc/benchmarks.md, "The report's sort"). */
#define SORT_RUN 16
#define SORT_MAX_SIZE 64 /* bytes of the largest element sorted */

typedef bool (*less_fn)(const void *a, const void *b);

/* Sorts the n elements of size bytes at v by less, using tmp (room for n
 * of them). */
static inline __attribute__((always_inline)) void
merge_sort(char *v, char *tmp, size_t n, size_t size, less_fn less)
{
	char *src = v, *dst = tmp, *t;
	char e[SORT_MAX_SIZE];

	for (size_t lo = 0; lo < n; lo += SORT_RUN) {
		size_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;

		for (size_t i = lo + 1; i < hi; i++) {
			size_t j = i;

			memcpy(e, src + i * size, size);
			while (j > lo && less(e, src + (j - 1) * size)) {
				memcpy(src + j * size, src + (j - 1) * size,
				    size);
				j--;
			}
			memcpy(src + j * size, e, size);
		}
	}
	for (size_t w = SORT_RUN; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi) {
				if (less(src + j * size, src + i * size))
					memcpy(dst + k * size, src + j++ * size,
					    size);
				else
					memcpy(dst + k * size, src + i++ * size,
					    size);
				k++;
			}
			memcpy(dst + k * size, src + i * size,
			    (mid - i) * size);
			k += mid - i;
			memcpy(dst + k * size, src + j * size, (hi - j) * size);
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * size);
}

/* Sorts the n elements of size bytes at v by less.  Returns true on
 * error (no memory for the merges): v is then unchanged. */
static inline __attribute__((always_inline)) bool
sort_by_value(void *v, size_t n, size_t size, less_fn less)
{
	scratch_t tmp = SCRATCH_INIT;

	if (n < 2)
		return false;
	if (scratch_reserve(&tmp, n * size))
		return true;
	merge_sort(v, tmp.p, n, size, less);
	scratch_free(&tmp);
	return false;
}

/* ----------------------------------------------------------------- leaks */

_Static_assert(sizeof(leak_t) <= SORT_MAX_SIZE &&
    sizeof(group_t) <= SORT_MAX_SIZE, "merge_sort's element buffer");

typedef struct collect_s {
	scratch_t *s;
	bool err;
} collect_t;

/* Appends *l to c.  Returns non-zero (and sets c->err) out of memory. */
static int
collect_one(collect_t *c, const leak_t *l)
{
	if (scratch_reserve(c->s, sizeof(leak_t))) {
		c->err = true;
		return 1;
	}
	memcpy(c->s->p + c->s->used, l, sizeof(*l));
	c->s->used += sizeof(leak_t);
	return 0;
}

static int
collect_cb(reg_handle_t h, const reg_rec_t *rec, void *arg)
{
	leak_t l = { rec->base, rec->size, rec->api, rec->alloc_stack,
	    rec->owner, rec->device, rec->kind,
	    rec->kind == KIND_VA ? REPORT_CAT_RANGE : REPORT_CAT_LEAK };

	(void)h;
	if (!report_kind_leaks(rec->kind))
		return 0;
	return collect_one(arg, &l);
}

static int
collect_teardown_cb(const teardown_rec_t *r, void *arg)
{
	leak_t l = { r->base, r->size, r->api, r->stack, r->owner,
	    r->device, r->kind, REPORT_CAT_TEARDOWN };

	return collect_one(arg, &l);
}

const char *
report_cat_name(int cat)
{
	static const char *const names[REPORT_CAT_COUNT] = {
		[REPORT_CAT_LEAK] = "leak",
		[REPORT_CAT_TEARDOWN] = "teardown",
		[REPORT_CAT_RANGE] = "address_range",
	};

	return cat >= 0 && cat < REPORT_CAT_COUNT ? names[cat] : "leak";
}

static int
cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (a == NULL)
		return -1;
	if (b == NULL)
		return 1;
	return strcmp(a, b);
}

/* -1, 0 or 1 as a is less than, equal to or greater than b. */
static inline int
cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static inline int
cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* Group key, then address (so each group's addresses come out sorted). */
static inline int
cmp_leak(const leak_t *a, const leak_t *b)
{
	int c;

	if ((c = cmp_u64(a->cat, b->cat)) != 0 ||
	    (c = cmp_u64(a->stack, b->stack)) != 0 ||
	    (c = cmp_u64(a->kind, b->kind)) != 0 ||
	    (c = cmp_u64(a->size, b->size)) != 0 ||
	    (c = cmp_i64(a->device, b->device)) != 0 ||
	    (c = cmp_u64(a->owner, b->owner)) != 0 ||
	    (c = cmp_str(a->api, b->api)) != 0)
		return c;
	return cmp_u64(a->base, b->base);
}

static bool
less_leak(const void *a, const void *b)
{
	return cmp_leak(a, b) < 0;
}

static bool
same_group(const leak_t *a, const leak_t *b)
{
	return a->cat == b->cat && a->stack == b->stack &&
	    a->kind == b->kind &&
	    a->size == b->size && a->device == b->device &&
	    a->owner == b->owner && cmp_str(a->api, b->api) == 0;
}

/* Largest first; ties: more allocations first, then the group key
 * (stable output for identical runs). */
static bool
less_group(const void *pa, const void *pb)
{
	const group_t *a = pa, *b = pb;
	int c;

	if ((c = cmp_u64(b->bytes, a->bytes)) != 0 ||
	    (c = cmp_u64(b->count, a->count)) != 0)
		return c < 0;
	return cmp_leak(a->lead, b->lead) < 0;
}

/* a + b, or UINT64_MAX (and *sat set) when the sum does not fit: a sum
 * that wrapped would report a few bytes for an exabyte of leaks. */
static uint64_t
add_sat(uint64_t a, uint64_t b, bool *sat)
{
	uint64_t s;

	if (__builtin_add_overflow(a, b, &s)) {
		*sat = true;
		return UINT64_MAX;
	}
	return s;
}

/* Groups the sorted leak_t of *L: one group_t per run of leaks that
 * same() puts together, and the sums.  Returns true out of memory. */
static bool
make_groups(leaks_t *L, bool (*same)(const leak_t *, const leak_t *))
{
	leak_t *lv = (leak_t *)(void *)L->ls.p;

	for (size_t i = 0; i < L->nleaks; i++) {
		group_t *g;

		if (i == 0 || !same(&lv[i - 1], &lv[i])) {
			if (scratch_reserve(&L->gs, sizeof(group_t)))
				return true;
			g = (group_t *)(void *)(L->gs.p + L->gs.used);
			L->gs.used += sizeof(group_t);
			g->first = i;
			g->lead = &lv[i];
			g->count = 0;
			g->bytes = 0;
			g->saturated = false;
			L->ngroups++;
		}
		g = (group_t *)(void *)(L->gs.p + L->gs.used) - 1;
		g->count++;
		g->bytes = add_sat(g->bytes, lv[i].size, &g->saturated);
		L->count[lv[i].cat]++;
		L->bytes[lv[i].cat] = add_sat(L->bytes[lv[i].cat],
		    lv[i].size, &L->saturated[lv[i].cat]);
	}
	return false;
}

bool
report_leaks_collect(leaks_t *L)
{
	collect_t c = { &L->ls, false };
	leak_t *lv;

	memset(L, 0, sizeof(*L));
	if (scratch_reserve(&L->ls, (registry_live_count() +
	    teardown_kept() + 64) * sizeof(leak_t)))
		return true;
	registry_foreach(collect_cb, &c);
	if (!c.err)
		teardown_foreach(collect_teardown_cb, &c);
	if (c.err) {
		errno = ENOMEM;
		return true;
	}
	L->nleaks = L->ls.used / sizeof(leak_t);
	lv = (leak_t *)(void *)L->ls.p;
	if (sort_by_value(lv, L->nleaks, sizeof(leak_t), less_leak)) {
		errno = ENOMEM;
		return true;
	}
	if (make_groups(L, same_group))
		return true;
	if (sort_by_value(L->gs.p, L->ngroups, sizeof(group_t), less_group)) {
		errno = ENOMEM;
		return true;
	}
	return false;
}

/* ------------------------------------------------------------- live set */

/* The live set of the OOM report: what holds memory now. */
static int
live_cb(reg_handle_t h, const reg_rec_t *rec, void *arg)
{
	leak_t l = { rec->base, rec->size, rec->api, rec->alloc_stack,
	    rec->owner, rec->device, rec->kind, REPORT_CAT_LEAK };

	(void)h;
	if (!report_kind_leaks(rec->kind) || rec->kind == KIND_VA)
		return 0;
	return collect_one(arg, &l);
}

/* Owner and stack first (the OOM report's groups), then address. */
static inline int
cmp_live(const leak_t *a, const leak_t *b)
{
	int c;

	if ((c = cmp_u64(a->owner, b->owner)) != 0 ||
	    (c = cmp_u64(a->stack, b->stack)) != 0 ||
	    (c = cmp_u64(a->kind, b->kind)) != 0 ||
	    (c = cmp_i64(a->device, b->device)) != 0)
		return c;
	return cmp_u64(a->base, b->base);
}

static bool
less_live(const void *a, const void *b)
{
	return cmp_live(a, b) < 0;
}

static bool
same_live(const leak_t *a, const leak_t *b)
{
	return a->owner == b->owner && a->stack == b->stack &&
	    a->kind == b->kind && a->device == b->device;
}

/* Largest first; ties: more allocations, then the key. */
static bool
less_live_group(const void *pa, const void *pb)
{
	const group_t *a = pa, *b = pb;
	int c;

	if ((c = cmp_u64(b->bytes, a->bytes)) != 0 ||
	    (c = cmp_u64(b->count, a->count)) != 0)
		return c < 0;
	return cmp_live(a->lead, b->lead) < 0;
}

bool
report_live_collect(leaks_t *L)
{
	collect_t c = { &L->ls, false };

	memset(L, 0, sizeof(*L));
	if (scratch_reserve(&L->ls, (registry_live_count() + 64) *
	    sizeof(leak_t)))
		return true;
	registry_foreach(live_cb, &c);
	if (c.err) {
		errno = ENOMEM;
		return true;
	}
	L->nleaks = L->ls.used / sizeof(leak_t);
	if (sort_by_value(L->ls.p, L->nleaks, sizeof(leak_t), less_live) ||
	    make_groups(L, same_live) ||
	    sort_by_value(L->gs.p, L->ngroups, sizeof(group_t),
	    less_live_group)) {
		errno = ENOMEM;
		return true;
	}
	return false;
}

void
report_leaks_free(leaks_t *L)
{
	scratch_free(&L->ls);
	scratch_free(&L->gs);
}

/* ------------------------------------------------------------ violations */

static int
vcollect_cb(const violation_t *v, void *arg)
{
	vcollect_t *c = arg;

	if (scratch_reserve(&c->s, sizeof(*v)))
		return 1;
	memcpy(c->s.p + c->s.used, v, sizeof(*v));
	c->s.used += sizeof(*v);
	c->n++;
	return 0;
}

void
report_violations_collect(vcollect_t *V)
{
	violation_foreach(vcollect_cb, V);
}
