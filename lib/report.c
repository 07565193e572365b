#include "preamble.h"

/*
 * report.c -- the per-process report: JSON (doc/report-schema.md, the
 * source of truth) or text (valgrind/compute-sanitizer-like).
 *
 * Owns: collecting leaks (live registry records of the kinds that hold
 * memory), grouping them by (alloc_stack, kind, size, device, owner, api)
 * largest first, and writing the document; CUWARDEN_REPORT, made absolute
 * once (report_paths_init), and which file of outfile.h's a report goes to
 * (report_write_env: this process's own earlier report is replaced).
 *
 * What is a leak: every live record of a kind marked leaks in kinds.h
 * (all but views and mappings, which hold no memory of their own).
 *
 * Invariants: nothing here calls malloc, stdio or the driver.  Scratch
 * memory (the copied records, the groups, the violations) is mmap'd and
 * unmapped before returning; output goes through a fixed buffer with
 * write(2).  Byte sums saturate at UINT64_MAX (and say so) rather than
 * wrap; JSON integers stay within INT64_MAX, the range of the readers
 * (jansson, the tool).  Names the text report prints are escaped: a
 * newline or an escape sequence in a module path, an owner, an entry
 * point or an argument never starts a line or reaches a terminal.  The
 * registry walk only copies records (its callback runs
 * under a stripe lock); violations, the ledger, the stack depot and stats
 * are read without taking their locks (violation_foreach, the depot and
 * the counters are lock-free for readers), so a report can be written at
 * exit and from an _exit hook.
 *
 * Locking: none of its own.  report_write_env remembers the last path it
 * wrote (for "the same process replaces its own report") in statics,
 * written with the pid of the writer.  The resolved CUWARDEN_REPORT is an
 * outfile_path_t (atomic, resolved once).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "driver.h"
#include "fence.h"
#include "ledger.h"
#include "log.h"
#include "nowait.h"
#include "options.h"
#include "outfile.h"
#include "owner.h"
#include "registry.h"
#include "report.h"
#include "scratch.h"
#include "stackdepot.h"
#include "stats.h"
#include "violation.h"

#define REPORT_MAX_ADDRESSES 16

/* ----------------------------------------------------------------- names */


static const char *
kname(int kind)
{
	return kind_name((kind_t)kind);
}

/* True for the kinds whose live records are leaks (kinds.h's leaks). */
bool
report_kind_leaks(int kind)
{
	static const bool leaks[KIND_COUNT] = {
#define KIND_LEAKS(e, name, is_leak, rule, text) [KIND_##e] = is_leak,
		KIND_LIST(KIND_LEAKS)
#undef KIND_LEAKS
	};
	return kind >= 0 && kind < KIND_COUNT && leaks[kind];
}

/* ------------------------------------------------------------------ sort */

/* Sorting without malloc (glibc's qsort may call it): a stable bottom-up
 * merge sort of the elements themselves, runs of SORT_RUN sorted by
 * insertion first.  Always inlined, so that in each caller the element
 * size and the comparison are constants: the copies become moves and the
 * compares are inlined (doc/benchmarks.md, "The report"). */
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

typedef struct leak_s {
	uintptr_t base;
	size_t size;
	const char *api;
	stack_id_t stack;
	owner_id_t owner;
	int16_t device;
	uint8_t kind;
} leak_t;

typedef struct group_s {
	const leak_t *lead; /* its first leak_t (for ordering ties) */
	size_t first;    /* index of its first leak_t (sorted) */
	size_t count;
	uint64_t bytes;  /* saturated at UINT64_MAX */
	bool saturated;  /* bytes is a floor: the sum overflowed */
} group_t;
_Static_assert(sizeof(leak_t) <= SORT_MAX_SIZE &&
    sizeof(group_t) <= SORT_MAX_SIZE, "merge_sort's element buffer");

typedef struct collect_s {
	scratch_t *s;
	bool err;
} collect_t;

static int
collect_cb(reg_handle_t h, const reg_rec_t *rec, void *arg)
{
	collect_t *c = arg;
	leak_t *l;

	(void)h;
	if (!report_kind_leaks(rec->kind))
		return 0;
	if (scratch_reserve(c->s, sizeof(leak_t))) {
		c->err = true;
		return 1;
	}
	l = (leak_t *)(void *)(c->s->p + c->s->used);
	c->s->used += sizeof(leak_t);
	l->base = rec->base;
	l->size = rec->size;
	l->api = rec->api;
	l->stack = rec->alloc_stack;
	l->owner = rec->owner;
	l->device = rec->device;
	l->kind = rec->kind;
	return 0;
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

	if ((c = cmp_u64(a->stack, b->stack)) != 0 ||
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
	return a->stack == b->stack && a->kind == b->kind &&
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

typedef struct leaks_s {
	scratch_t ls;     /* leak_t[] */
	scratch_t gs;     /* group_t[] */
	size_t nleaks;
	size_t ngroups;
	uint64_t bytes;   /* saturated at UINT64_MAX */
	bool saturated;   /* bytes is a floor: the sum overflowed */
} leaks_t;

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

/* Collects and groups the leaks.  Returns true on error (errno set). */
static bool
leaks_collect(leaks_t *L)
{
	collect_t c = { &L->ls, false };
	leak_t *lv;

	memset(L, 0, sizeof(*L));
	if (scratch_reserve(&L->ls, (registry_live_count() + 64) *
	    sizeof(leak_t)))
		return true;
	registry_foreach(collect_cb, &c);
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
	for (size_t i = 0; i < L->nleaks; i++) {
		group_t *g;

		if (i == 0 || !same_group(&lv[i - 1], &lv[i])) {
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
		L->bytes = add_sat(L->bytes, lv[i].size, &L->saturated);
	}
	if (sort_by_value(L->gs.p, L->ngroups, sizeof(group_t), less_group)) {
		errno = ENOMEM;
		return true;
	}
	return false;
}

static void
leaks_free(leaks_t *L)
{
	scratch_free(&L->ls);
	scratch_free(&L->gs);
}

/* ------------------------------------------------------------ violations */

typedef struct vcollect_s {
	scratch_t s;
	size_t n;
	bool err;
} vcollect_t;

static int
vcollect_cb(const violation_t *v, void *arg)
{
	vcollect_t *c = arg;

	if (scratch_reserve(&c->s, sizeof(*v))) {
		c->err = true;
		return 1;
	}
	memcpy(c->s.p + c->s.used, v, sizeof(*v));
	c->s.used += sizeof(*v);
	c->n++;
	return 0;
}

/* ---------------------------------------------------------------- writer */

typedef struct wr_s {
	int fd;
	bool err;
	int saved_errno;
	size_t len;
	char buf[8192];
} wr_t;

/* outfile_write_all: a report to a standard error the program made
 * non-blocking waits for room rather than lose its middle. */
static void
w_flush(wr_t *w)
{
	if (!w->err && w->len > 0 &&
	    outfile_write_all(w->fd, w->buf, w->len)) {
		w->err = true;
		w->saved_errno = errno;
	}
	w->len = 0;
}

static void
w_raw(wr_t *w, const char *s, size_t n)
{
	while (n > 0) {
		size_t k = sizeof(w->buf) - w->len;

		if (k == 0) {
			w_flush(w);
			continue;
		}
		if (k > n)
			k = n;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
	}
}

static void
w_s(wr_t *w, const char *s)
{
	w_raw(w, s, strlen(s));
}

static void
w_fmt(wr_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
w_fmt(wr_t *w, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = log_vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	w_raw(w, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Length of a valid UTF-8 sequence at s (of at most n bytes), 0 if the
 * bytes there are not one. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A JSON string of n bytes (invalid UTF-8 becomes U+FFFD). */
static void
w_jstrn(wr_t *w, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	w_raw(w, "\"", 1);
	while (i < n) {
		unsigned char c = s[i];
		size_t k;

		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };

			w_raw(w, e, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': w_s(w, "\\n"); break;
			case '\t': w_s(w, "\\t"); break;
			case '\r': w_s(w, "\\r"); break;
			default: w_fmt(w, "\\u%04x", c); break;
			}
			i++;
		} else if ((k = utf8_len(s + i, n - i)) == 0) {
			w_s(w, "\\ufffd");
			i++;
		} else {
			w_raw(w, (const char *)s + i, k);
			i += k;
		}
	}
	w_raw(w, "\"", 1);
}

/* A name in the text report, of n bytes: control characters (C0, DEL
 * and the C1 range U+0080-U+009F), backslashes and bytes that are no
 * valid UTF-8 written as escapes (\n, \t, \r, \\, \xNN), so that a name
 * can neither start a line that looks like the report's own nor send a
 * terminal an escape sequence. */
static void
w_tstrn(wr_t *w, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t k = c < 0x80 ? 1 : utf8_len(s + i, n - i);

		if (c == '\\') {
			w_s(w, "\\\\");
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': w_s(w, "\\n"); break;
			case '\t': w_s(w, "\\t"); break;
			case '\r': w_s(w, "\\r"); break;
			default: w_fmt(w, "\\x%02x", c); break;
			}
		} else if (k == 0 || (k == 2 && c == 0xc2 && s[i + 1] < 0xa0)) {
			/* Not UTF-8, or a C1 control (CSI is U+009B):
			 * each byte as itself in hex. */
			size_t m = k == 0 ? 1 : k;

			for (size_t j = 0; j < m; j++)
				w_fmt(w, "\\x%02x", s[i + j]);
			i += m;
			continue;
		} else {
			w_raw(w, str + i, k);
			i += k;
			continue;
		}
		i++;
	}
}

static void
w_tstr(wr_t *w, const char *s)
{
	w_tstrn(w, s != NULL ? s : "?", strlen(s != NULL ? s : "?"));
}

/* A count or a byte sum as a JSON integer: readers (jansson, the tool)
 * take signed 64-bit integers, so a larger value is written as INT64_MAX
 * (a saturated sum also says so: "bytes_saturated"). */
static unsigned long long
jint(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? (unsigned long long)INT64_MAX :
	    (unsigned long long)v;
}

static void
w_jstr(wr_t *w, const char *s)
{
	if (s == NULL)
		w_s(w, "null");
	else
		w_jstrn(w, s, strlen(s));
}

static void
w_hex(wr_t *w, uintptr_t v)
{
	w_fmt(w, "\"0x%lx\"", (unsigned long)v);
}

/* ------------------------------------------------------- process facts */

typedef struct proc_s {
	char exe[PATH_MAX];
	scratch_t cmd;      /* /proc/self/cmdline: NUL-separated */
} proc_t;

static void
proc_read(proc_t *p)
{
	ssize_t n = readlink("/proc/self/exe", p->exe, sizeof(p->exe) - 1);
	int fd;

	p->exe[n > 0 ? n : 0] = '\0';
	memset(&p->cmd, 0, sizeof(p->cmd));
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		ssize_t r;

		if (p->cmd.used >= (1u << 20) || scratch_reserve(&p->cmd, 4096))
			break;
		r = read(fd, p->cmd.p + p->cmd.used, p->cmd.cap - p->cmd.used);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		p->cmd.used += (size_t)r;
	}
	close(fd);
}

/* Calls fn for each argument of the command line. */
static void
proc_args(const proc_t *p, void (*fn)(const char *a, size_t n, size_t i,
    void *arg), void *arg)
{
	size_t i = 0, k = 0;

	while (i < p->cmd.used) {
		size_t j = i;

		while (j < p->cmd.used && p->cmd.p[j] != '\0')
			j++;
		fn(p->cmd.p + i, j - i, k++, arg);
		i = j + 1;
	}
}

static void
json_arg(const char *a, size_t n, size_t i, void *arg)
{
	wr_t *w = arg;

	if (i > 0)
		w_s(w, ", ");
	w_jstrn(w, a, n);
}

static void
text_arg(const char *a, size_t n, size_t i, void *arg)
{
	wr_t *w = arg;

	if (i > 0)
		w_s(w, " ");
	w_tstrn(w, a, n);
}

static void
utc_now(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	log_snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec);
}

static const char *
owner_str(owner_id_t id)
{
	const char *n = id != 0 ? owner_name(id) : NULL;

	return n != NULL ? n : "";
}

static uint64_t
load(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

/* The shim's coverage counters (stats.h), each read atomically. */
static void
coverage_read(stats_coverage_t *c)
{
	const stats_coverage_t *s = &stats_coverage;

	c->hooks_active = load(&s->hooks_active);
	c->hooked_entry_points = load(&s->hooked_entry_points);
	c->allocations = load(&s->allocations);
	c->frees = load(&s->frees);
	c->untracked_frees = load(&s->untracked_frees);
	c->failed_calls = load(&s->failed_calls);
	c->gpa_lookups = load(&s->gpa_lookups);
	c->gpa_redirects = load(&s->gpa_redirects);
	c->dlsym_redirects = load(&s->dlsym_redirects);
	c->teardown_frees = load(&s->teardown_frees);
	c->captures = load(&s->captures);
	c->graph_alloc_nodes = load(&s->graph_alloc_nodes);
	c->graph_free_nodes = load(&s->graph_free_nodes);
	c->graph_instantiations = load(&s->graph_instantiations);
	c->graph_launches = load(&s->graph_launches);
	c->graph_made_live = load(&s->graph_made_live);
	c->graph_freed_by_graph = load(&s->graph_freed_by_graph);
}

/* ------------------------------------------------------------------ JSON */

static void
json_stack(wr_t *w, stack_id_t id)
{
	stack_frame_t fr[STACK_MAX_DEPTH];
	size_t n = stack_get(id, fr, STACK_MAX_DEPTH);

	w_s(w, "[");
	for (size_t i = 0; i < n; i++) {
		w_fmt(w, "%s{\"module\": %lld, \"offset\": \"0x%lx\"}",
		    i > 0 ? ", " : "",
		    fr[i].module == UINT32_MAX ? -1LL :
		    (long long)fr[i].module, (unsigned long)fr[i].offset);
	}
	w_s(w, "]");
}

static void
json_counter(wr_t *w, const char *name, uint64_t cur, uint64_t peak,
    uint64_t total, bool comma)
{
	w_fmt(w, "%s\"%s\": {\"current\": %llu, \"peak\": %llu, "
	    "\"total\": %llu}", comma ? ", " : "", name,
	    (unsigned long long)cur, (unsigned long long)peak,
	    (unsigned long long)total);
}

static void
json_coverage(wr_t *w)
{
	stats_coverage_t c;

	coverage_read(&c);
	w_fmt(w, "  \"coverage\": {\"hooks_active\": %s, "
	    "\"hooked_entry_points\": %llu, \"allocations\": %llu, "
	    "\"frees\": %llu, \"untracked_frees\": %llu, "
	    "\"failed_calls\": %llu, ", c.hooks_active ? "true" : "false",
	    (unsigned long long)c.hooked_entry_points,
	    (unsigned long long)c.allocations, (unsigned long long)c.frees,
	    (unsigned long long)c.untracked_frees,
	    (unsigned long long)c.failed_calls);
	w_fmt(w, "\"gpa_lookups\": %llu, \"gpa_redirects\": %llu, "
	    "\"dlsym_redirects\": %llu, \"teardown_frees\": %llu, ",
	    (unsigned long long)c.gpa_lookups,
	    (unsigned long long)c.gpa_redirects,
	    (unsigned long long)c.dlsym_redirects,
	    (unsigned long long)c.teardown_frees);
	w_fmt(w, "\"captures\": %llu, \"barriers_deferred\": %llu, "
	    "\"graphs\": {\"alloc_nodes\": %llu, \"free_nodes\": %llu, "
	    "\"instantiations\": %llu, \"launches\": %llu, "
	    "\"made_live\": %llu, \"freed_by_graph\": %llu}},\n",
	    (unsigned long long)c.captures,
	    (unsigned long long)fence_deferred(),
	    (unsigned long long)c.graph_alloc_nodes,
	    (unsigned long long)c.graph_free_nodes,
	    (unsigned long long)c.graph_instantiations,
	    (unsigned long long)c.graph_launches,
	    (unsigned long long)c.graph_made_live,
	    (unsigned long long)c.graph_freed_by_graph);
}

static void
json_stats(wr_t *w)
{
	cw_stats_t st;

	memset(&st, 0, sizeof(st));
	stats_fill(&st);
	w_s(w, "  \"stats\": {\"bytes\": {");
	for (int k = 0; k < KIND_COUNT; k++) {
		stats_counter_t c = stats_bytes((kind_t)k);

		json_counter(w, kname(k), c.current, c.peak, c.total, k > 0);
	}
	w_s(w, "},\n    \"allocations\": {");
	for (int k = 0; k < KIND_COUNT; k++) {
		stats_counter_t c = stats_allocations((kind_t)k);

		json_counter(w, kname(k), c.current, c.peak, c.total, k > 0);
	}
	w_s(w, "},\n    \"pools\": {");
	for (int k = 0; k < KIND_PUBLIC_COUNT; k++) {
		const cw_pool_stats_t *p = &st.pool[k];

		w_fmt(w, "%s\"%s\": {", k > 0 ? ",\n      " : "", kname(k));
		json_counter(w, "allocated", p->allocated.current,
		    p->allocated.peak, p->allocated.total, false);
		json_counter(w, "reserved", p->reserved.current,
		    p->reserved.peak, p->reserved.total, true);
		json_counter(w, "segments", p->segments.current,
		    p->segments.peak, p->segments.total, true);
		w_fmt(w, ", \"fence_waits\": %llu, \"driver_allocs\": %llu, "
		    "\"driver_frees\": %llu, \"trims\": %llu, "
		    "\"largest_free\": %llu, ",
		    (unsigned long long)p->fence_waits,
		    (unsigned long long)p->driver_allocs,
		    (unsigned long long)p->driver_frees,
		    (unsigned long long)p->trims,
		    (unsigned long long)p->largest_free);
		/* %f is not in log.h's subset: fragmentation in millionths. */
		{
			double f = p->fragmentation;
			long long m;

			if (!(f >= 0.0))
				f = 0.0;
			if (f > 1.0)
				f = 1.0;
			m = (long long)(f * 1000000.0 + 0.5);
			w_fmt(w, "\"fragmentation\": %lld.%06lld}",
			    m / 1000000, m % 1000000);
		}
	}
	w_fmt(w, "},\n    \"views_live\": %llu, \"stacks\": %llu, "
	    "\"stack_bytes\": %llu, \"stacks_dropped\": %llu, "
	    "\"log_lines_lost\": %llu}",
	    (unsigned long long)st.views_live,
	    (unsigned long long)stack_count(),
	    (unsigned long long)stack_bytes(),
	    (unsigned long long)stack_dropped(),
	    jint(log_lost_count()));
}

static void
json_violation(wr_t *w, const violation_t *v, bool comma)
{
	const char *ename = v->cuda_error != 0 ?
	    driver_error_name_builtin((CUresult)v->cuda_error) : NULL;

	w_s(w, comma ? ",\n    {\"type\": " : "\n    {\"type\": ");
	w_jstr(w, violation_name(v->type));
	w_s(w, ", \"api\": ");
	w_jstr(w, v->api != NULL ? v->api : "");
	w_s(w, ", \"address\": ");
	w_hex(w, v->address);
	w_fmt(w, ", \"size\": %llu, \"kind\": ", (unsigned long long)v->size);
	if (v->kind >= 0 && v->kind < KIND_COUNT)
		w_jstr(w, kname(v->kind));
	else
		w_s(w, "null");
	w_fmt(w, ", \"device\": %d, \"owner\": ", v->device);
	w_jstr(w, owner_str(v->owner));
	w_s(w, ", \"cuda_error\": ");
	if (v->cuda_error == 0) {
		w_s(w, "null");
	} else if (ename != NULL) {
		w_jstr(w, ename);
	} else {
		w_fmt(w, "\"CUDA_ERROR_%d\"", v->cuda_error);
	}
	w_fmt(w, ", \"cuda_error_code\": %d,\n     \"stack\": ", v->cuda_error);
	json_stack(w, v->stack);
	w_s(w, ",\n     \"alloc_stack\": ");
	json_stack(w, v->alloc_stack);
	w_s(w, ",\n     \"free_stack\": ");
	json_stack(w, v->free_stack);
	w_s(w, "}");
}

static void
write_json(wr_t *w, const report_meta_t *meta, const proc_t *p,
    const leaks_t *L, const vcollect_t *V)
{
	const leak_t *lv = (const leak_t *)(const void *)L->ls.p;
	const group_t *gv = (const group_t *)(const void *)L->gs.p;
	const violation_t *vv = (const violation_t *)(const void *)V->s.p;
	size_t na, nm;
	char now[32];

	utc_now(now, sizeof(now));
	w_s(w, "{\n  \"format\": \"cuwarden-report\",\n  \"version\": 1,\n"
	    "  \"tool\": \"cuwarden " PACKAGE_VERSION "\",\n");
	w_fmt(w, "  \"pid\": %d,\n  \"ppid\": %d,\n  \"command\": [",
	    (int)getpid(), (int)getppid());
	proc_args(p, json_arg, w);
	w_s(w, "],\n  \"exe\": ");
	w_jstr(w, p->exe);
	w_s(w, ",\n  \"mode\": ");
	w_jstr(w, meta->mode != NULL ? meta->mode : "library");
	w_fmt(w, ",\n  \"time\": \"%s\",\n  \"exit\": {\"how\": ", now);
	w_jstr(w, meta->exit_how != NULL ? meta->exit_how : "request");
	/* A status that is not known is null, never a number that could
	 * pass for one. */
	if (meta->exit_status >= 0)
		w_fmt(w, ", \"status\": %d},\n", meta->exit_status);
	else
		w_s(w, ", \"status\": null},\n");
	json_coverage(w);
	w_fmt(w, "  \"summary\": {\"leaked_bytes\": %llu, "
	    "\"bytes_saturated\": %s, \"leaked_allocations\": %llu, "
	    "\"violations\": %llu},\n", jint(L->bytes),
	    L->saturated || L->bytes > (uint64_t)INT64_MAX ? "true" : "false",
	    jint(L->nleaks), jint(violation_count()));

	w_fmt(w, "  \"failed_frees\": {\"count\": %llu, \"overflow\": %llu, "
	    "\"addresses\": [", (unsigned long long)ledger_failures(),
	    (unsigned long long)ledger_overflow());
	{
		scratch_t as = SCRATCH_INIT;

		if (!scratch_reserve(&as, LEDGER_MAX * sizeof(uintptr_t))) {
			const uintptr_t *all = (const uintptr_t *)(void *)as.p;

			na = ledger_addresses((uintptr_t *)(void *)as.p,
			    LEDGER_MAX);
			for (size_t k = 0; k < na; k++) {
				if (k > 0)
					w_s(w, ", ");
				w_hex(w, all[k]);
			}
			scratch_free(&as);
		}
	}
	w_s(w, "]},\n  \"modules\": [");
	nm = stack_module_count();
	for (uint32_t i = 0; i < nm; i++) {
		stack_module_t m;

		if (stack_module_get(i, &m))
			break;
		w_s(w, i > 0 ? ",\n    {\"path\": " : "\n    {\"path\": ");
		w_jstr(w, m.path);
		w_s(w, ", \"build_id\": ");
		w_jstr(w, m.build_id);
		w_s(w, ", \"base\": ");
		w_hex(w, m.base);
		w_s(w, "}");
	}
	w_s(w, "],\n  \"leaks\": [");
	for (size_t g = 0; g < L->ngroups; g++) {
		const leak_t *l = &lv[gv[g].first];

		w_s(w, g > 0 ? ",\n    {\"kind\": " : "\n    {\"kind\": ");
		w_jstr(w, kname(l->kind));
		w_fmt(w, ", \"size\": %llu, \"count\": %llu, \"bytes\": %llu, ",
		    jint(l->size), jint(gv[g].count), jint(gv[g].bytes));
		if (gv[g].saturated || gv[g].bytes > (uint64_t)INT64_MAX)
			w_s(w, "\"bytes_saturated\": true, ");
		w_fmt(w, "\"device\": %d, \"owner\": ", l->device);
		w_jstr(w, owner_str(l->owner));
		w_s(w, ", \"api\": ");
		w_jstr(w, l->api != NULL ? l->api : "");
		w_s(w, ",\n     \"addresses\": [");
		for (size_t k = 0; k < gv[g].count &&
		    k < REPORT_MAX_ADDRESSES; k++) {
			if (k > 0)
				w_s(w, ", ");
			w_hex(w, l[k].base);
		}
		w_s(w, "],\n     \"stack\": ");
		json_stack(w, l->stack);
		w_s(w, "}");
	}
	w_s(w, "],\n  \"violations\": [");
	for (size_t i = 0; i < V->n; i++)
		json_violation(w, &vv[i], i > 0);
	w_s(w, "],\n");
	json_stats(w);
	/* The exit report on a thread interrupted inside the shim
	 * (nowait.h): what it left out, after everything that could. */
	if (nowait_active() && nowait_skipped() != 0)
		w_fmt(w, ",\n  \"incomplete\": {\"parts_left_out\": %llu, "
		    "\"reason\": \"the program exited from a signal handler "
		    "that interrupted a CUDA call holding the shim's locks\"}",
		    (unsigned long long)nowait_skipped());
	w_s(w, "\n}\n");
}

/* ------------------------------------------------------------------ text */

/* Modules named by the text report's frames (for the module list). */
#define TEXT_MODULES 4096

typedef struct modset_s {
	uint64_t bits[TEXT_MODULES / 64];
} modset_t;

static void
text_stack(wr_t *w, stack_id_t id, const char *indent, modset_t *seen)
{
	stack_frame_t fr[STACK_MAX_DEPTH];
	size_t n = stack_get(id, fr, STACK_MAX_DEPTH);

	for (size_t i = 0; i < n; i++)
		if (fr[i].module < TEXT_MODULES)
			seen->bits[fr[i].module / 64] |=
			    1ULL << (fr[i].module % 64);

	if (n == 0) {
		w_fmt(w, "%s(no stack)\n", indent);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		stack_module_t m;
		const char *name = "?";

		if (fr[i].module != UINT32_MAX &&
		    !stack_module_get(fr[i].module, &m)) {
			const char *slash = strrchr(m.path, '/');

			name = slash != NULL ? slash + 1 : m.path;
			if (*name == '\0')
				name = "?";
		}
		if (fr[i].module == UINT32_MAX) {
			w_fmt(w, "%s#%-2zu 0x%lx\n", indent, i,
			    (unsigned long)fr[i].offset);
		} else {
			w_fmt(w, "%s#%-2zu ", indent, i);
			w_tstr(w, name);
			w_fmt(w, "+0x%lx\n", (unsigned long)fr[i].offset);
		}
	}
}

static void
write_text(wr_t *w, const report_meta_t *meta, const proc_t *p,
    const leaks_t *L, const vcollect_t *V)
{
	const leak_t *lv = (const leak_t *)(const void *)L->ls.p;
	const group_t *gv = (const group_t *)(const void *)L->gs.p;
	const violation_t *vv = (const violation_t *)(const void *)V->s.p;
	uint64_t nviol = violation_count();
	stats_coverage_t cov;
	modset_t seen;

	memset(&seen, 0, sizeof(seen));

	w_fmt(w, "cuwarden " PACKAGE_VERSION " report: pid %d (parent %d), "
	    "mode %s, ", (int)getpid(), (int)getppid(),
	    meta->mode != NULL ? meta->mode : "library");
	w_fmt(w, "%s", meta->exit_how != NULL ? meta->exit_how : "request");
	if (meta->exit_status >= 0)
		w_fmt(w, " status %d", meta->exit_status);
	w_s(w, "\ncommand: ");
	proc_args(p, text_arg, w);
	coverage_read(&cov);
	w_fmt(w, "\ncoverage: hooks %s, %llu allocations and %llu frees "
	    "seen, %llu untracked frees\n\n",
	    cov.hooks_active ? "active" : "inactive",
	    (unsigned long long)cov.allocations,
	    (unsigned long long)cov.frees,
	    (unsigned long long)cov.untracked_frees);

	for (size_t g = 0; g < L->ngroups; g++) {
		const leak_t *l = &lv[gv[g].first];
		const char *own = owner_str(l->owner);

		w_fmt(w, "%llu bytes%s in %llu %s allocation%s of %llu bytes "
		    "leaked", (unsigned long long)gv[g].bytes,
		    gv[g].saturated ? " (the sum overflowed)" : "",
		    (unsigned long long)gv[g].count, kname(l->kind),
		    gv[g].count == 1 ? "" : "s",
		    (unsigned long long)l->size);
		if (l->device >= 0)
			w_fmt(w, " on device %d", l->device);
		w_s(w, " (");
		w_tstr(w, l->api);
		if (*own != '\0') {
			w_s(w, ", owner ");
			w_tstr(w, own);
		}
		w_fmt(w, ", first at 0x%lx)\n", (unsigned long)l->base);
		text_stack(w, l->stack, "    ", &seen);
		w_s(w, "\n");
	}
	for (size_t i = 0; i < V->n; i++) {
		const violation_t *v = &vv[i];
		const char *en =
		    driver_error_name_builtin((CUresult)v->cuda_error);

		w_fmt(w, "%s: ", violation_name(v->type));
		w_tstr(w, v->api);
		w_fmt(w, "(0x%lx)", (unsigned long)v->address);
		if (v->kind >= 0 && v->kind < KIND_COUNT)
			w_fmt(w, " on %s memory of %llu bytes", kname(v->kind),
			    (unsigned long long)v->size);
		if (v->device >= 0)
			w_fmt(w, ", device %d", v->device);
		if (v->owner != 0) {
			w_s(w, ", owner ");
			w_tstr(w, owner_str(v->owner));
		}
		if (v->cuda_error != 0) {
			if (en != NULL)
				w_fmt(w, ", driver returned %s", en);
			else
				w_fmt(w, ", driver returned %d", v->cuda_error);
		}
		w_s(w, "\n");
		text_stack(w, v->stack, "    ", &seen);
		if (v->alloc_stack != 0) {
			w_s(w, "  allocated at:\n");
			text_stack(w, v->alloc_stack, "    ", &seen);
		}
		if (v->free_stack != 0) {
			w_s(w, "  freed at:\n");
			text_stack(w, v->free_stack, "    ", &seen);
		}
		w_s(w, "\n");
	}
	{
		bool any = false;

		/* Where the frames' modules are, for addr2line -e <path>
		 * <offset - 1> (offsets are return addresses). */
		for (uint32_t m = 0; m < TEXT_MODULES; m++) {
			stack_module_t mod;

			if (!(seen.bits[m / 64] & (1ULL << (m % 64))) ||
			    stack_module_get(m, &mod))
				continue;
			if (!any)
				w_s(w, "modules:\n");
			any = true;
			w_s(w, "    ");
			w_tstr(w, mod.path);
			if (mod.build_id[0] != '\0')
				w_fmt(w, " (build-id %s)", mod.build_id);
			w_s(w, "\n");
		}
		if (any)
			w_s(w, "\n");
	}
	if (nviol > V->n)
		w_fmt(w, "(%llu more violations not kept)\n\n",
		    (unsigned long long)(nviol - V->n));
	if (ledger_failures() > 0)
		w_fmt(w, "FAILED FREES: %llu (%llu addresses kept, %llu not "
		    "kept)\n", (unsigned long long)ledger_failures(),
		    (unsigned long long)ledger_size(),
		    (unsigned long long)ledger_overflow());
	if (stack_dropped() > 0)
		w_fmt(w, "STACKS NOT KEPT: %llu new stacks (the stack depot "
		    "is full; their records show no stack)\n",
		    (unsigned long long)stack_dropped());
	if (log_lost_count() > 0)
		w_fmt(w, "LOG LINES LOST: %llu (the log could not take them "
		    "at once; cuwarden never waits for it)\n",
		    log_lost_count());
	if (L->saturated)
		w_fmt(w, "LEAKED BYTES: the sum overflowed: at least %llu "
		    "bytes\n", (unsigned long long)L->bytes);
	if (nowait_active() && nowait_skipped() != 0)
		w_fmt(w, "INCOMPLETE: %llu part%s left out: the program exited "
		    "from a signal handler that interrupted a CUDA call "
		    "holding the shim's locks\n",
		    (unsigned long long)nowait_skipped(),
		    nowait_skipped() == 1 ? "" : "s");
	w_fmt(w, "LEAK SUMMARY: %llu bytes leaked in %llu allocations\n",
	    (unsigned long long)L->bytes, (unsigned long long)L->nleaks);
	w_fmt(w, "ERROR SUMMARY: %llu errors (%llu leaked allocations, "
	    "%llu violations)\n", (unsigned long long)(L->nleaks + nviol),
	    (unsigned long long)L->nleaks, (unsigned long long)nviol);
}

/* ----------------------------------------------------------------- entry */

bool
report_write(int fd, cw_format_t format, const report_meta_t *meta)
{
	static const report_meta_t none = { "library", "request", -1 };
	wr_t w;
	leaks_t L;
	vcollect_t V;
	proc_t *p;
	scratch_t ps = SCRATCH_INIT;
	bool err = false;
	int e = 0;

	if (meta == NULL)
		meta = &none;
	if (format != CW_FORMAT_JSON && format != CW_FORMAT_TEXT) {
		errno = EINVAL;
		return true;
	}
	/* proc_t holds PATH_MAX bytes: scratch, not the caller's stack. */
	if (scratch_reserve(&ps, sizeof(proc_t))) {
		errno = ENOMEM;
		return true;
	}
	p = (proc_t *)(void *)ps.p;
	proc_read(p);
	memset(&V, 0, sizeof(V));
	if (leaks_collect(&L)) {
		e = errno;
		err = true;
		goto out;
	}
	violation_foreach(vcollect_cb, &V);
	w.fd = fd;
	w.err = false;
	w.saved_errno = 0;
	w.len = 0;
	if (format == CW_FORMAT_JSON)
		write_json(&w, meta, p, &L, &V);
	else
		write_text(&w, meta, p, &L, &V);
	w_flush(&w);
	if (w.err) {
		err = true;
		e = w.saved_errno;
	}
out:
	leaks_free(&L);
	scratch_free(&V.s);
	scratch_free(&p->cmd);
	scratch_free(&ps);
	if (err)
		errno = e;
	return err;
}

/* ----------------------------------------------------------------- files */

bool
report_expand_path(const char *pattern, char *buf, size_t size)
{
	if (pattern == NULL || buf == NULL || size == 0)
		return true;
	return log_expand_path(pattern, buf, size);
}

/* CUWARDEN_REPORT, made absolute once. */
static outfile_path_t report_path = OUTFILE_PATH_INIT;

/* What this process (last_pid) last wrote: the expanded CUWARDEN_REPORT
 * (last_name) and the file that got the report (last_path: last_name or
 * its alternative name). */
static char last_name[PATH_MAX];
static char last_path[PATH_MAX];
static pid_t last_pid;

/* The resolved CUWARDEN_REPORT, NULL when unset. */
static const char *
report_pattern(void)
{
	bool first;
	const char *raw = options_get_str_quiet(OPT_REPORT);
	const char *pat = outfile_path_get(&report_path, raw, &first);

	if (first && report_path.err != 0)
		log_warn("CUWARDEN_REPORT=%s: cannot be made absolute (errno "
		    "%d): kept as it is, relative to the directory the process "
		    "is in when it writes the report", raw, report_path.err);
	return pat;
}

void
report_paths_init(void)
{
	log_path_init();
	(void)report_pattern();
}

void
report_paths_reset(void)
{
	outfile_path_reset(&report_path);
	last_pid = 0;
}

bool
report_write_env(const report_meta_t *meta)
{
	const char *pat, *what;
	char name[PATH_MAX];
	outfile_t *of;
	scratch_t os = SCRATCH_INIT;
	bool own, err;
	int e = 0;

	report_paths_init();
	pat = report_pattern();
	if (pat == NULL)
		return false;
	if (report_expand_path(pat, name, sizeof(name))) {
		log_error("CUWARDEN_REPORT=%s: not a usable path (too long, or "
		    "a '%%' other than %%p and %%%%); no report written", pat);
		errno = EINVAL;
		return true;
	}
	/* outfile_t holds two paths: scratch, not the caller's stack (this
	 * may run in a signal handler). */
	if (scratch_reserve(&os, sizeof(outfile_t))) {
		log_error("cannot write the report to %s (no memory)", name);
		errno = ENOMEM;
		return true;
	}
	of = (outfile_t *)(void *)os.p;
	/* This process wrote it before (a report on request, then the one
	 * at exit): it replaces its own report, wherever that went. */
	own = last_pid == getpid() && strcmp(last_name, name) == 0;
	if (outfile_begin(of, own ? last_path : name, own, &what)) {
		e = errno;
		if (what != NULL)
			log_error("not writing the report to %s: it is %s, not "
			    "a regular file (a report goes to a new file, to "
			    "standard error with \"-\", or to a terminal)",
			    name, what);
		else
			log_error("cannot write the report to %s (errno %d)",
			    name, e);
		goto out;
	}
	err = report_write(of->fd, (cw_format_t)options_get(OPT_REPORT_FORMAT),
	    meta);
	if (err) {
		e = errno;
		outfile_abort(of);
		log_error("writing the report to %s failed (errno %d)%s", name,
		    e, of->stream ? "" : "; nothing left there");
		goto out;
	}
	if (outfile_commit(of, name, sizeof(name))) {
		e = errno;
		log_error("cannot put the report in place at %s (errno %d); "
		    "nothing left there", of->target, e);
		goto out;
	}
	if (!of->stream) {
		if (report_expand_path(pat, last_name, sizeof(last_name)) ||
		    log_snprintf(last_path, sizeof(last_path), "%s", name) >=
		    (int)sizeof(last_path))
			last_pid = 0;
		else
			last_pid = getpid();
	}
	log_debug(1, "report written to %s", name);
	scratch_free(&os);
	return false;
out:
	scratch_free(&os);
	errno = e;
	return true;
}
