#include "preamble.h"

/*
 * report_json.c -- the report as JSON (report_int.h; the schema, the
 * source of truth, is doc/report-schema.md).
 *
 * Invariants: strings are valid JSON whatever the bytes (control
 * characters escaped, invalid UTF-8 as U+FFFD); integers stay within
 * INT64_MAX, the range of the readers (jansson, the tool); addresses are
 * lowercase hex strings.  Reads the ledger, the stack depot and stats
 * without their locks (lock-free for readers).
 */

#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "driver.h"
#include "fence.h"
#include "fmt.h"
#include "jobinfo.h"
#include "ledger.h"
#include "log.h"
#include "nowait.h"
#include "report_int.h"
#include "stackdepot.h"
#include "stats.h"
#include "teardown.h"
#include "tlformat.h"
#include "violation.h"

#define REPORT_MAX_ADDRESSES 16

void
report_json_strn(wr_t *w, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	report_putn(w, "\"", 1);
	while (i < n) {
		unsigned char c = s[i];
		size_t k;

		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };

			report_putn(w, e, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': report_puts(w, "\\n"); break;
			case '\t': report_puts(w, "\\t"); break;
			case '\r': report_puts(w, "\\r"); break;
			default: report_printf(w, "\\u%04x", c); break;
			}
			i++;
		} else if ((k = report_utf8_len(s + i, n - i)) == 0) {
			report_puts(w, "\\ufffd");
			i++;
		} else {
			report_putn(w, (const char *)s + i, k);
			i += k;
		}
	}
	report_putn(w, "\"", 1);
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

/* Did category cat's byte sum overflow, or not fit a JSON integer? */
static bool
saturated(const leaks_t *L, int cat)
{
	return L->saturated[cat] || L->bytes[cat] > (uint64_t)INT64_MAX;
}

void
report_json_str(wr_t *w, const char *s)
{
	if (s == NULL)
		report_puts(w, "null");
	else
		report_json_strn(w, s, strlen(s));
}

static void
w_hex(wr_t *w, uintptr_t v)
{
	report_printf(w, "\"0x%lx\"", (unsigned long)v);
}

void
report_json_modules(wr_t *w)
{
	uint32_t nm = stack_module_count();

	report_puts(w, "[");
	for (uint32_t i = 0; i < nm; i++) {
		stack_module_t m;

		if (stack_module_get(i, &m))
			break;
		report_puts(w, i > 0 ? ",\n    {\"path\": " :
		    "\n    {\"path\": ");
		report_json_str(w, m.path);
		report_puts(w, ", \"build_id\": ");
		report_json_str(w, m.build_id);
		report_puts(w, ", \"base\": ");
		w_hex(w, m.base);
		report_puts(w, "}");
	}
	report_puts(w, "]");
}

void
report_json_arg(const char *a, size_t n, size_t i, void *arg)
{
	wr_t *w = arg;

	if (i > 0)
		report_puts(w, ", ");
	report_json_strn(w, a, n);
}

/* The time of day in UTC by arithmetic, not gmtime_r: glibc's gmtime_r
 * takes the time-zone lock and may call malloc (tzset reads TZ and
 * /etc/localtime), and the report is written from a signal handler or an
 * exit() that interrupted glibc's malloc (seen: a hang at exit, the
 * main arena's lock held by the interrupted realloc).  Days to a civil
 * date in the proleptic Gregorian calendar, by 400-year eras. */
void
report_utc_format(int64_t secs, char *buf, size_t size)
{
	int64_t days, era, doe, yoe, doy, mp, y, m, d;

	days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
	secs -= days * 86400;
	days += 719468; /* from 1970-01-01 to 0000-03-01 */
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = days - era * 146097;                       /* [0, 146096] */
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);   /* [0, 365] */
	mp = (5 * doy + 2) / 153;                        /* March = 0 */
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = yoe + era * 400 + (m <= 2);
	fmt_snprintf(buf, size, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
	    (long long)y, (long long)m, (long long)d,
	    (long long)(secs / 3600), (long long)(secs / 60 % 60),
	    (long long)(secs % 60));
}

void
report_utc_now(char *buf, size_t size)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	report_utc_format((int64_t)ts.tv_sec, buf, size);
}

/* A number, null when unknown (-1). */
static void
json_num_or_null(wr_t *w, long v)
{
	if (v >= 0)
		report_printf(w, "%ld", v);
	else
		report_puts(w, "null");
}

/* The "job" and "gpus" members (doc/report-schema.md, "The job"), each
 * on its line with its comma. */
static void
json_job(wr_t *w)
{
	const jobinfo_t *j = jobinfo_get();
	uint64_t seen = __atomic_load_n(&jobinfo_seen, __ATOMIC_ACQUIRE);
	bool first = true;

	report_puts(w, "  \"job\": {\"launcher\": ");
	report_json_str(w, j->launcher);
	report_puts(w, ", \"id\": ");
	report_json_str(w, j->id[0] != '\0' ? j->id : NULL);
	report_puts(w, ", \"step\": ");
	report_json_str(w, j->step[0] != '\0' ? j->step : NULL);
	report_puts(w, ", \"rank\": ");
	json_num_or_null(w, j->rank);
	report_puts(w, ", \"local_rank\": ");
	json_num_or_null(w, j->local_rank);
	report_puts(w, ", \"world_size\": ");
	json_num_or_null(w, j->world_size);
	report_puts(w, "},\n  \"gpus\": {\"cuda_visible_devices\": ");
	report_json_str(w, j->has_visible ? j->visible : NULL);
	report_puts(w, ", \"used\": [");
	for (int d = 0; d < JOBINFO_MAX_GPUS; d++) {
		char uuid[48];

		if (!(seen & (1ULL << d)))
			continue;
		report_printf(w, "%s{\"device\": %d, \"uuid\": ",
		    first ? "" : ", ", d);
		report_json_str(w, jobinfo_uuid(d, uuid, sizeof(uuid)) ?
		    uuid : NULL);
		report_puts(w, "}");
		first = false;
	}
	report_puts(w, "]},\n");
}

void
report_json_head(wr_t *w, const char *format, const proc_t *p,
    const char *mode)
{
	char now[32];

	report_utc_now(now, sizeof(now));
	report_puts(w, "{\n  \"format\": ");
	report_json_str(w, format);
	report_puts(w, ",\n  \"version\": 1,\n"
	    "  \"tool\": \"cuwarden " PACKAGE_VERSION "\",\n");
	report_printf(w, "  \"pid\": %d,\n  \"ppid\": %d,\n  \"command\": [",
	    (int)getpid(), (int)getppid());
	report_proc_args(p, report_json_arg, w);
	report_puts(w, "],\n  \"exe\": ");
	report_json_str(w, p->exe);
	report_puts(w, ",\n  \"host\": ");
	report_json_str(w, p->host);
	report_puts(w, ",\n  \"boot_id\": ");
	report_json_str(w, p->boot_id);
	report_puts(w, ",\n");
	json_job(w);
	report_puts(w, "  \"mode\": ");
	report_json_str(w, mode);
	report_printf(w, ",\n  \"time\": \"%s\",", now);
}

void
report_json_stack(wr_t *w, stack_id_t id)
{
	stack_frame_t fr[STACK_MAX_DEPTH];
	size_t n = stack_get(id, fr, STACK_MAX_DEPTH);

	report_puts(w, "[");
	for (size_t i = 0; i < n; i++) {
		const char *file, *func;
		int line;

		if (fr[i].module == STACK_MODULE_PYTHON) {
			/* A Python frame (doc/report-schema.md). */
			if (stack_pyloc_get((uint32_t)fr[i].offset, &file,
			    &func, &line)) {
				file = "?";
				func = "?";
				line = 0;
			}
			report_puts(w, i > 0 ? ", {\"python\": {\"file\": " :
			    "{\"python\": {\"file\": ");
			report_json_str(w, file);
			report_puts(w, ", \"function\": ");
			report_json_str(w, func);
			report_printf(w, ", \"line\": %d}}", line);
			continue;
		}
		report_printf(w, "%s{\"module\": %lld, \"offset\": \"0x%lx\"}",
		    i > 0 ? ", " : "",
		    fr[i].module == UINT32_MAX ? -1LL :
		    (long long)fr[i].module, (unsigned long)fr[i].offset);
	}
	report_puts(w, "]");
}

/* The "python" member, when the process has an interpreter: whether its
 * frames are in the stacks, and why not. */
static void
report_json_python(wr_t *w)
{
	const char *version, *reason;
	bool on = stack_python_status(&version, &reason);

	if (!stack_python_present())
		return;
	report_printf(w, ",\n  \"python\": {\"frames\": %s, \"version\": ",
	    on ? "true" : "false");
	report_json_str(w, version);
	if (!on) {
		report_puts(w, ", \"reason\": ");
		report_json_str(w, reason);
	}
	report_puts(w, "}");
}

static void
json_counter(wr_t *w, const char *name, uint64_t cur, uint64_t peak,
    uint64_t total, bool comma)
{
	report_printf(w, "%s\"%s\": {\"current\": %llu, \"peak\": %llu, "
	    "\"total\": %llu}", comma ? ", " : "", name,
	    (unsigned long long)cur, (unsigned long long)peak,
	    (unsigned long long)total);
}

static void
json_coverage(wr_t *w)
{
	stats_coverage_t c;

	report_coverage_read(&c);
	report_printf(w, "  \"coverage\": {\"hooks_active\": %s, "
	    "\"hooked_entry_points\": %llu, \"allocations\": %llu, "
	    "\"frees\": %llu, \"untracked_frees\": %llu, "
	    "\"failed_calls\": %llu, ", c.hooks_active ? "true" : "false",
	    (unsigned long long)c.hooked_entry_points,
	    (unsigned long long)c.allocations, (unsigned long long)c.frees,
	    (unsigned long long)c.untracked_frees,
	    (unsigned long long)c.failed_calls);
	report_printf(w, "\"gpa_lookups\": %llu, \"gpa_redirects\": %llu, "
	    "\"dlsym_redirects\": %llu, \"teardown_frees\": %llu, ",
	    (unsigned long long)c.gpa_lookups,
	    (unsigned long long)c.gpa_redirects,
	    (unsigned long long)c.dlsym_redirects,
	    (unsigned long long)c.teardown_frees);
	report_printf(w, "\"captures\": %llu, \"barriers_deferred\": %llu, "
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
	report_puts(w, "  \"stats\": {\"bytes\": {");
	for (int k = 0; k < KIND_COUNT; k++) {
		stats_counter_t c = stats_bytes((kind_t)k);

		json_counter(w, report_kname(k), c.current, c.peak, c.total,
		    k > 0);
	}
	report_puts(w, "},\n    \"allocations\": {");
	for (int k = 0; k < KIND_COUNT; k++) {
		stats_counter_t c = stats_allocations((kind_t)k);

		json_counter(w, report_kname(k), c.current, c.peak, c.total,
		    k > 0);
	}
	report_puts(w, "},\n    \"pools\": {");
	for (int k = 0; k < KIND_PUBLIC_COUNT; k++) {
		const cw_pool_stats_t *p = &st.pool[k];

		report_printf(w, "%s\"%s\": {", k > 0 ? ",\n      " : "",
		    report_kname(k));
		json_counter(w, "allocated", p->allocated.current,
		    p->allocated.peak, p->allocated.total, false);
		json_counter(w, "reserved", p->reserved.current,
		    p->reserved.peak, p->reserved.total, true);
		json_counter(w, "segments", p->segments.current,
		    p->segments.peak, p->segments.total, true);
		report_printf(w, ", \"fence_waits\": %llu, "
		    "\"driver_allocs\": %llu, "
		    "\"driver_frees\": %llu, \"trims\": %llu, "
		    "\"largest_free\": %llu, ",
		    (unsigned long long)p->fence_waits,
		    (unsigned long long)p->driver_allocs,
		    (unsigned long long)p->driver_frees,
		    (unsigned long long)p->trims,
		    (unsigned long long)p->largest_free);
		/* %f is not in fmt.h's subset: fragmentation in millionths. */
		{
			double f = p->fragmentation;
			long long m;

			if (!(f >= 0.0))
				f = 0.0;
			if (f > 1.0)
				f = 1.0;
			m = (long long)(f * 1000000.0 + 0.5);
			report_printf(w, "\"fragmentation\": %lld.%06lld}",
			    m / 1000000, m % 1000000);
		}
	}
	report_printf(w, "},\n    \"views_live\": %llu, \"stacks\": %llu, "
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

	report_puts(w, comma ? ",\n    {\"type\": " : "\n    {\"type\": ");
	report_json_str(w, violation_name(v->type));
	report_puts(w, ", \"api\": ");
	report_json_str(w, v->api != NULL ? v->api : "");
	report_puts(w, ", \"address\": ");
	w_hex(w, v->address);
	report_printf(w, ", \"size\": %llu, \"kind\": ",
	    (unsigned long long)v->size);
	if (v->kind >= 0 && v->kind < KIND_COUNT)
		report_json_str(w, report_kname(v->kind));
	else
		report_puts(w, "null");
	report_puts(w, ", \"family\": ");
	if ((v->kind < 0 || v->kind >= KIND_COUNT) &&
	    violation_family(v) >= 0)
		report_json_str(w, report_kname(violation_family(v)));
	else
		report_puts(w, "null");
	report_printf(w, ", \"device\": %d, \"owner\": ", v->device);
	report_json_str(w, report_owner_str(v->owner));
	if (v->type == V_OUT_OF_BOUNDS)
		report_printf(w, ", \"range\": {\"offset\": %llu, "
		    "\"length\": %llu}", (unsigned long long)v->off,
		    (unsigned long long)v->len);
	else
		report_puts(w, ", \"range\": null");
	report_puts(w, ", \"cuda_error\": ");
	if (v->cuda_error == 0) {
		report_puts(w, "null");
	} else if (ename != NULL) {
		report_json_str(w, ename);
	} else {
		report_printf(w, "\"CUDA_ERROR_%d\"", v->cuda_error);
	}
	report_printf(w, ", \"cuda_error_code\": %d,\n     \"stack\": ",
	    v->cuda_error);
	report_json_stack(w, v->stack);
	report_puts(w, ",\n     \"alloc_stack\": ");
	report_json_stack(w, v->alloc_stack);
	report_puts(w, ",\n     \"free_stack\": ");
	report_json_stack(w, v->free_stack);
	report_puts(w, "}");
}

/* A time of the timeline's clock in ns since its start. */
static unsigned long long
tl_ns(const report_timeline_t *t, uint64_t v)
{
	unsigned __int128 x = (unsigned __int128)v * t->tick_ns_num;

	if (t->tick_ns_den > 1)
		x /= t->tick_ns_den;
	return jint(x > UINT64_MAX ? UINT64_MAX : (uint64_t)x);
}

/* Live bytes, signed: a total that a free seen before its allocation took
 * below zero stays as it is. */
static long long
sbytes(int64_t v)
{
	return (long long)v;
}

/* The "after_limit" member: the running totals past the limit. */
static void
json_after_limit(wr_t *w, const report_timeline_t *t)
{
	const report_tlsum_t *a = t->after_limit;

	report_printf(w, ",\n    \"after_limit\": {\"since_ns\": %llu, "
	    "\"events\": %llu, \"devices\": [", tl_ns(t, a->since),
	    jint(a->events));
	for (size_t i = 0; i < a->ndevs; i++) {
		const report_tl_dev_t *d = &a->devs[i];

		report_printf(w, "%s\n     {\"device\": %d, \"host\": %s, "
		    "\"at_limit_bytes\": %lld, \"max_bytes\": %lld, "
		    "\"max_time_ns\": %llu, \"end_bytes\": %lld}",
		    i ? "," : "", d->device, d->device < 0 ? "true" : "false",
		    sbytes(d->at_limit), sbytes(d->max), tl_ns(t, d->max_t),
		    sbytes(d->end));
	}
	report_puts(w, "],\n     \"samples\": [");
	for (size_t i = 0; i < a->nsamples; i++)
		report_printf(w, "%s[%d, %llu, %lld]", i == 0 ? "" : i % 4 ?
		    ", " : ",\n      ", a->samples[i].device,
		    tl_ns(t, a->samples[i].t), sbytes(a->samples[i].bytes));
	report_puts(w, "],\n     \"stacks\": [");
	for (size_t i = 0; i < a->nstacks; i++) {
		const report_tl_stack_t *s = &a->stacks[i];

		report_printf(w, "%s\n      {\"id\": %u, \"device\": %d, "
		    "\"kind\": \"%s\", \"at_limit_bytes\": %lld, "
		    "\"max_bytes\": %lld, \"end_bytes\": %lld}", i ? "," : "",
		    s->stack, s->device, report_kname(s->kind),
		    sbytes(s->at_limit), sbytes(s->max), sbytes(s->end));
	}
	report_puts(w, "]}");
}

/* The "timeline" member: the file, its counts, and the stacks its records
 * name (ids into the stack depot, each with its frames). */
static void
json_timeline(wr_t *w, const report_timeline_t *t)
{
	bool first = true;

	report_puts(w, "  \"timeline\": {\"file\": ");
	if (t->file != NULL)
		report_json_str(w, t->file);
	else
		report_puts(w, "null");
	report_printf(w, ", \"version\": %d, \"clock\": ", TLF_VERSION);
	if (t->clock != NULL)
		report_json_str(w, t->clock);
	else
		report_puts(w, "null");
	report_printf(w, ", \"events\": %llu, "
	    "\"dropped\": %llu, \"bytes\": %llu, \"limit\": %llu, "
	    "\"limit_reached\": %s, \"error\": ", jint(t->events),
	    jint(t->dropped), jint(t->bytes), jint(t->limit),
	    t->limit_reached ? "true" : "false");
	if (t->error != NULL)
		report_json_str(w, t->error);
	else
		report_puts(w, "null");
	report_puts(w, ",\n    \"stacks\": [");
	for (size_t i = 1; t->stack_bits != NULL && i < t->nstack_bits; i++) {
		if (t->stack_bits[i / 64] == 0) {
			i |= 63;
			continue;
		}
		if (!(t->stack_bits[i / 64] >> (i % 64) & 1))
			continue;
		report_printf(w, "%s\n     {\"id\": %llu, \"stack\": ",
		    first ? "" : ",", (unsigned long long)i);
		report_json_stack(w, (stack_id_t)i);
		report_puts(w, "}");
		first = false;
	}
	report_puts(w, "]");
	if (t->after_limit != NULL)
		json_after_limit(w, t);
	report_puts(w, "},\n");
}

void
report_write_json(wr_t *w, const report_meta_t *meta, const proc_t *p,
    const leaks_t *L, const vcollect_t *V)
{
	const leak_t *lv = (const leak_t *)(const void *)L->ls.p;
	const group_t *gv = (const group_t *)(const void *)L->gs.p;
	const violation_t *vv = (const violation_t *)(const void *)V->s.p;
	size_t na;

	report_json_head(w, "cuwarden-report", p, meta->mode != NULL ?
	    meta->mode : "library");
	report_puts(w, "\n  \"exit\": {\"how\": ");
	report_json_str(w, meta->exit_how != NULL ? meta->exit_how : "request");
	/* A status that is not known is null, never a number that could
	 * pass for one; a snapshot's number is its own member. */
	if (report_is_snapshot(meta))
		report_printf(w, ", \"status\": null, \"snapshot\": %d},\n",
		    meta->exit_status);
	else if (meta->exit_status >= 0)
		report_printf(w, ", \"status\": %d},\n", meta->exit_status);
	else
		report_puts(w, ", \"status\": null},\n");
	json_coverage(w);
	report_printf(w, "  \"summary\": {\"leaked_bytes\": %llu, "
	    "\"bytes_saturated\": %s, \"leaked_allocations\": %llu, "
	    "\"violations\": %llu, ", jint(L->bytes[REPORT_CAT_LEAK]),
	    saturated(L, REPORT_CAT_LEAK) ? "true" : "false",
	    jint(L->count[REPORT_CAT_LEAK]), jint(violation_count()));
	report_printf(w, "\"teardown_bytes\": %llu, "
	    "\"teardown_bytes_saturated\": %s, "
	    "\"teardown_allocations\": %llu, \"teardown_not_kept\": %llu, ",
	    jint(L->bytes[REPORT_CAT_TEARDOWN]),
	    saturated(L, REPORT_CAT_TEARDOWN) ? "true" : "false",
	    jint(L->count[REPORT_CAT_TEARDOWN]), jint(teardown_dropped()));
	report_printf(w, "\"address_range_bytes\": %llu, "
	    "\"address_ranges\": %llu},\n",
	    jint(L->bytes[REPORT_CAT_RANGE]),
	    jint(L->count[REPORT_CAT_RANGE]));

	report_printf(w, "  \"failed_frees\": {\"count\": %llu, "
	    "\"overflow\": %llu, \"addresses\": [",
	    (unsigned long long)ledger_failures(),
	    (unsigned long long)ledger_overflow());
	{
		scratch_t as = SCRATCH_INIT;

		if (!scratch_reserve(&as, LEDGER_MAX * sizeof(uintptr_t))) {
			const uintptr_t *all = (const uintptr_t *)(void *)as.p;

			na = ledger_addresses((uintptr_t *)(void *)as.p,
			    LEDGER_MAX);
			for (size_t k = 0; k < na; k++) {
				if (k > 0)
					report_puts(w, ", ");
				w_hex(w, all[k]);
			}
			scratch_free(&as);
		}
	}
	report_puts(w, "]},\n  \"modules\": ");
	report_json_modules(w);
	report_json_python(w);
	report_puts(w, ",\n  \"leaks\": [");
	for (size_t g = 0; g < L->ngroups; g++) {
		const leak_t *l = &lv[gv[g].first];

		report_puts(w, g > 0 ? ",\n    {\"kind\": " :
		    "\n    {\"kind\": ");
		report_json_str(w, report_kname(l->kind));
		report_printf(w, ", \"size\": %llu, \"count\": %llu, "
		    "\"bytes\": %llu, ", jint(l->size), jint(gv[g].count),
		    jint(gv[g].bytes));
		if (gv[g].saturated || gv[g].bytes > (uint64_t)INT64_MAX)
			report_puts(w, "\"bytes_saturated\": true, ");
		report_printf(w, "\"device\": %d, \"owner\": ", l->device);
		report_json_str(w, report_owner_str(l->owner));
		report_puts(w, ", \"api\": ");
		report_json_str(w, l->api != NULL ? l->api : "");
		report_puts(w, ", \"category\": ");
		report_json_str(w, report_cat_name(l->cat));
		report_puts(w, ",\n     \"addresses\": [");
		for (size_t k = 0; k < gv[g].count &&
		    k < REPORT_MAX_ADDRESSES; k++) {
			if (k > 0)
				report_puts(w, ", ");
			w_hex(w, l[k].base);
		}
		report_puts(w, "],\n     \"stack\": ");
		report_json_stack(w, l->stack);
		report_puts(w, "}");
	}
	report_puts(w, "],\n  \"violations\": [");
	for (size_t i = 0; i < V->n; i++)
		json_violation(w, &vv[i], i > 0);
	report_puts(w, "],\n");
	if (meta->timeline != NULL)
		json_timeline(w, meta->timeline);
	json_stats(w);
	/* The exit report on a thread interrupted inside the shim
	 * (nowait.h): what it left out, after everything that could. */
	if (nowait_active() && nowait_skipped() != 0)
		report_printf(w, ",\n  \"incomplete\": "
		    "{\"parts_left_out\": %llu, "
		    "\"reason\": \"the program exited from a signal handler "
		    "that interrupted a CUDA call holding the shim's locks\"}",
		    (unsigned long long)nowait_skipped());
	report_puts(w, "\n}\n");
}
