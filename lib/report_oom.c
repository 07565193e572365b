#include "preamble.h"

/*
 * report_oom.c -- the OOM report (report.h: report_write_oom): what an
 * allocation refused for want of memory asked for, what the device had
 * left, what the process holds (the live set by owner and stack, largest
 * first, REPORT_OOM_GROUPS of them listed) and what it did just before
 * (the events the shim kept).  JSON ("cuwarden-oom" version 1,
 * doc/report-schema.md) or text, the same facts.
 *
 * Invariants: as the other report files (report.c): no malloc, stdio or
 * driver call; the live set is copied from the registry into scratch
 * memory and sorted there; output through report_out.c's fixed buffer.
 * The caller asked the driver (cuMemGetInfo) before, with no lock held.
 *
 * Locking: none of its own (the registry walk copies under its stripe
 * locks).
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "driver.h"
#include "log.h"
#include "options.h"
#include "report.h"
#include "report_int.h"

static const char *
error_name(int e)
{
	const char *n = driver_error_name_builtin((CUresult)e);

	return n != NULL ? n : "CUDA_ERROR_UNRECOGNIZED";
}

/* ------------------------------------------------------------------ JSON */

static void
json_event(wr_t *w, const report_event_t *e, bool comma)
{
	report_puts(w, comma ? ",\n    {\"event\": " : "\n    {\"event\": ");
	report_json_str(w, e->is_free ? "free" : "alloc");
	report_printf(w, ", \"seq\": %llu, \"api\": ",
	    (unsigned long long)e->seq);
	report_json_str(w, e->api != NULL ? e->api : "");
	report_puts(w, ", \"kind\": ");
	report_json_str(w, report_kname(e->kind));
	report_printf(w, ", \"size\": %llu, \"device\": %d, "
	    "\"address\": \"0x%lx\",\n     \"stack\": ",
	    (unsigned long long)e->size, e->device, (unsigned long)e->base);
	report_json_stack(w, e->stack);
	report_puts(w, "}");
}

static void
oom_json(wr_t *w, const report_oom_t *o, const proc_t *p, const leaks_t *L,
    bool live_ok)
{
	const leak_t *lv = (const leak_t *)(const void *)L->ls.p;
	const group_t *gv = (const group_t *)(const void *)L->gs.p;

	report_json_head(w, "cuwarden-oom", p, o->mode);
	report_puts(w, "\n  \"request\": {\"api\": ");
	report_json_str(w, o->api);
	report_puts(w, ", \"kind\": ");
	report_json_str(w, report_kname(o->kind));
	report_printf(w, ", \"size\": %llu, \"device\": %d, "
	    "\"cuda_error\": ", (unsigned long long)o->size, o->device);
	report_json_str(w, error_name(o->cuda_error));
	report_printf(w, ", \"cuda_error_code\": %d,\n     \"stack\": ",
	    o->cuda_error);
	report_json_stack(w, o->stack);
	report_puts(w, "},\n  \"device_memory\": ");
	if (o->mem_known)
		report_printf(w, "{\"free\": %llu, \"total\": %llu, "
		    "\"error\": null}", (unsigned long long)o->mem_free,
		    (unsigned long long)o->mem_total);
	else if (o->mem_error < 0)
		report_puts(w, "{\"free\": null, \"total\": null, "
		    "\"error\": \"not asked: no current context\"}");
	else {
		report_puts(w, "{\"free\": null, \"total\": null, \"error\": ");
		report_json_str(w, error_name(o->mem_error));
		report_puts(w, "}");
	}
	report_puts(w, ",\n  \"pool_cached_bytes\": ");
	if (o->pool)
		report_printf(w, "%llu", (unsigned long long)o->pool_cached);
	else
		report_puts(w, "null");
	report_printf(w, ",\n  \"live\": {\"complete\": %s, \"bytes\": %llu, "
	    "\"bytes_saturated\": %s, \"allocations\": %llu, "
	    "\"groups\": %llu, \"top\": [", live_ok ? "true" : "false",
	    (unsigned long long)L->bytes[REPORT_CAT_LEAK],
	    L->saturated[REPORT_CAT_LEAK] ? "true" : "false",
	    (unsigned long long)L->count[REPORT_CAT_LEAK],
	    (unsigned long long)L->ngroups);
	for (size_t g = 0; g < L->ngroups && g < REPORT_OOM_GROUPS; g++) {
		const leak_t *l = &lv[gv[g].first];

		report_puts(w, g > 0 ? ",\n    {\"owner\": " :
		    "\n    {\"owner\": ");
		report_json_str(w, report_owner_str(l->owner));
		report_puts(w, ", \"kind\": ");
		report_json_str(w, report_kname(l->kind));
		report_printf(w, ", \"device\": %d, \"api\": ", l->device);
		report_json_str(w, l->api != NULL ? l->api : "");
		report_printf(w, ", \"count\": %llu, \"bytes\": %llu,\n"
		    "     \"stack\": ", (unsigned long long)gv[g].count,
		    (unsigned long long)gv[g].bytes);
		report_json_stack(w, l->stack);
		report_puts(w, "}");
	}
	report_puts(w, "]},\n  \"recent\": [");
	for (size_t i = 0; i < o->nrecent; i++)
		json_event(w, &o->recent[i], i > 0);
	report_puts(w, "],\n  \"modules\": ");
	report_json_modules(w);
	report_puts(w, "\n}\n");
}

/* ------------------------------------------------------------------ text */

static void
text_arg(const char *a, size_t n, size_t i, void *arg)
{
	char s[256];
	size_t k = n < sizeof(s) - 1 ? n : sizeof(s) - 1;

	(void)i;
	memcpy(s, a, k);
	s[k] = '\0';
	report_puts(arg, " ");
	report_text_str(arg, s);
}

static void
oom_text(wr_t *w, const report_oom_t *o, const proc_t *p, const leaks_t *L,
    bool live_ok)
{
	const leak_t *lv = (const leak_t *)(const void *)L->ls.p;
	const group_t *gv = (const group_t *)(const void *)L->gs.p;
	modset_t seen;

	memset(&seen, 0, sizeof(seen));
	report_printf(w, "== OUT OF MEMORY in pid %d: ", (int)getpid());
	report_text_str(w, o->api);
	report_printf(w, " of %'llu bytes (%s)", (unsigned long long)o->size,
	    report_kname(o->kind));
	if (o->device >= 0)
		report_printf(w, " on device %d", o->device);
	report_printf(w, " failed (%s), mode %s\n", error_name(o->cuda_error),
	    o->mode);
	report_puts(w, "command:");
	report_proc_args(p, text_arg, w);
	report_puts(w, "\n");
	if (o->mem_known)
		report_printf(w, "device free %'llu of %'llu bytes\n",
		    (unsigned long long)o->mem_free,
		    (unsigned long long)o->mem_total);
	else if (o->mem_error < 0)
		report_puts(w, "device free: not asked (no current context)\n");
	else
		report_printf(w, "device free: cuMemGetInfo failed (%s)\n",
		    error_name(o->mem_error));
	if (o->pool)
		report_printf(w, "pools' cached bytes: %'llu\n",
		    (unsigned long long)o->pool_cached);
	report_puts(w, "requested at:\n");
	report_text_stack(w, o->stack, "    ", &seen);
	report_printf(w, "live: %'llu bytes in %'llu allocation%s, %'llu "
	    "group%s by owner and stack%s%s\n",
	    (unsigned long long)L->bytes[REPORT_CAT_LEAK],
	    (unsigned long long)L->count[REPORT_CAT_LEAK],
	    L->count[REPORT_CAT_LEAK] == 1 ? "" : "s",
	    (unsigned long long)L->ngroups, L->ngroups == 1 ? "" : "s",
	    L->ngroups > REPORT_OOM_GROUPS ? " (the largest listed)" : "",
	    live_ok ? "" : " (incomplete: out of memory for the copy)");
	for (size_t g = 0; g < L->ngroups && g < REPORT_OOM_GROUPS; g++) {
		const leak_t *l = &lv[gv[g].first];
		const char *own = report_owner_str(l->owner);

		report_printf(w, "  %'llu bytes in %'llu %s allocation%s (",
		    (unsigned long long)gv[g].bytes,
		    (unsigned long long)gv[g].count, report_kname(l->kind),
		    gv[g].count == 1 ? "" : "s");
		report_text_str(w, l->api);
		if (*own != '\0') {
			report_puts(w, ", owner ");
			report_text_str(w, own);
		}
		if (l->device >= 0)
			report_printf(w, ", device %d", l->device);
		report_puts(w, ")\n");
		report_text_stack(w, l->stack, "      ", &seen);
	}
	report_printf(w, "last %zu allocations and frees (oldest first):\n",
	    o->nrecent);
	for (size_t i = 0; i < o->nrecent; i++) {
		const report_event_t *e = &o->recent[i];

		report_printf(w, "  #%llu %s ", (unsigned long long)e->seq,
		    e->is_free ? "free " : "alloc");
		report_text_str(w, e->api);
		report_printf(w, " %s %'llu bytes at 0x%lx",
		    report_kname(e->kind), (unsigned long long)e->size,
		    (unsigned long)e->base);
		if (e->device >= 0)
			report_printf(w, " on device %d", e->device);
		report_puts(w, "\n");
	}
	report_text_modules(w, &seen);
	report_puts(w, "== END OF OUT OF MEMORY REPORT\n");
}

/* ----------------------------------------------------------------- write */

bool
report_write_oom_fd(int fd, cw_format_t format, const report_oom_t *o)
{
	scratch_t ps = SCRATCH_INIT;
	scratch_t ws = SCRATCH_INIT;
	proc_t *p;
	wr_t *w;
	leaks_t L;
	bool live_ok, err = false;
	int e = 0;

	if (format != CW_FORMAT_JSON && format != CW_FORMAT_TEXT) {
		errno = EINVAL;
		return true;
	}
	/* proc_t holds PATH_MAX bytes, wr_t 8 KiB: scratch, not the
	 * faulting thread's stack. */
	if (scratch_reserve(&ps, sizeof(proc_t)) ||
	    scratch_reserve(&ws, sizeof(wr_t))) {
		scratch_free(&ps);
		errno = ENOMEM;
		return true;
	}
	p = (proc_t *)(void *)ps.p;
	w = (wr_t *)(void *)ws.p;
	report_proc_read(p);
	/* Out of memory for the copy: what was copied, marked incomplete. */
	live_ok = !report_live_collect(&L);
	w->fd = fd;
	w->err = false;
	w->saved_errno = 0;
	w->len = 0;
	if (format == CW_FORMAT_JSON)
		oom_json(w, o, p, &L, live_ok);
	else
		oom_text(w, o, p, &L, live_ok);
	report_flush(w);
	if (w->err) {
		err = true;
		e = w->saved_errno;
	}
	report_leaks_free(&L);
	scratch_free(&p->cmd);
	scratch_free(&ps);
	scratch_free(&ws);
	if (err)
		errno = e;
	return err;
}

typedef struct oom_body_s {
	cw_format_t format;
	const report_oom_t *o;
} oom_body_t;

static bool
oom_body(int fd, void *arg)
{
	const oom_body_t *b = arg;

	return report_write_oom_fd(fd, b->format, b->o);
}

bool
report_write_oom(const report_oom_t *o)
{
	oom_body_t b = { CW_FORMAT_TEXT, o };
	char name[PATH_MAX];
	bool set, stream;

	if (report_sibling_path(name, sizeof(name), ".oom", "OOM report",
	    &set, &stream)) {
		if (set)
			return true;
		/* No CUWARDEN_REPORT: text, where the report at exit would
		 * go (CUWARDEN_EXIT_REPORT=never: nowhere). */
		if (options_get(OPT_EXIT_REPORT) == OPT_EXIT_REPORT_NEVER)
			return false;
		return report_write_default("OOM report", oom_body, &b);
	}
	if (!stream)
		b.format = (cw_format_t)options_get(OPT_REPORT_FORMAT);
	if (report_file_write(name, false, "OOM report", name, sizeof(name),
	    oom_body, &b, &stream))
		return true;
	log_debug(1, "OOM report written to %s", name);
	return false;
}
