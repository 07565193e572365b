#include "preamble.h"
/*
 * api.c -- the process-wide public calls: cw_stats, cw_stats_print,
 * cw_report, cw_set_output, cw_strerror, cw_last_error, cw_trim.
 *
 * Owns no state: statistics come from stats.c (stats_fill), reports from
 * report.c, output from log.c, the last error from lasterr.c.  No locks.
 */
#include <errno.h>
#include <string.h>

#include "api.h"
#include "contract.h"
#include "fmt.h"
#include "fork.h"
#include "lasterr.h"
#include "log.h"
#include "pool.h"
#include "report.h"
#include "stats.h"

static const char *(*mode_source)(void);

void
api_set_mode_source(const char *(*fn)(void))
{
	mode_source = fn;
}

int
cw_stats(cw_stats_t *stats)
{
	if (stats == NULL)
		return lasterr_set(CW_EINVAL, "cw_stats", "stats is NULL");
	stats_fill(stats);
	return CW_OK;
}

static void
emit(cw_output_fn out, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
emit(cw_output_fn out, void *arg, const char *fmt, ...)
{
	static const char prefix[] = "cuwarden: ";
	char line[256];
	va_list ap;

	/* The same shape as log.c's lines: prefix, text, one newline. */
	memcpy(line, prefix, sizeof(prefix) - 1);
	va_start(ap, fmt);
	fmt_vsnprintf(line + sizeof(prefix) - 1,
	    sizeof(line) - (sizeof(prefix) - 1), fmt, ap);
	va_end(ap);
	if (out != NULL) {
		size_t n = strlen(line);
		if (n + 1 < sizeof(line)) {
			line[n] = '\n';
			line[n + 1] = '\0';
		}
		out(line, arg);
	} else {
		log_printf("%s", line + sizeof(prefix) - 1);
	}
}

static const char *const pub_kinds[3] = { "device", "managed", "pinned" };

int
cw_stats_print(cw_output_fn out, void *arg)
{
	cw_stats_t s;

	stats_fill(&s);
	emit(out, arg, "stats: %-8s %14s %14s %14s %10s %10s %12s", "kind",
	    "bytes", "peak bytes", "total bytes", "allocs", "peak", "total");
	for (int k = 0; k < 3; k++)
		emit(out, arg, "stats: %-8s %14llu %14llu %14llu %10llu %10llu "
		    "%12llu", pub_kinds[k],
		    (unsigned long long)s.bytes[k].current,
		    (unsigned long long)s.bytes[k].peak,
		    (unsigned long long)s.bytes[k].total,
		    (unsigned long long)s.allocations[k].current,
		    (unsigned long long)s.allocations[k].peak,
		    (unsigned long long)s.allocations[k].total);
	emit(out, arg, "stats: views live %llu, violations %llu",
	    (unsigned long long)s.views_live,
	    (unsigned long long)s.violations);
	emit(out, arg, "stats: failed frees %llu (ledger %llu, overflow %llu)",
	    (unsigned long long)s.failed_frees,
	    (unsigned long long)s.failed_free_ledger,
	    (unsigned long long)s.failed_free_overflow);
	emit(out, arg, "stats: stacks %llu (%llu bytes)",
	    (unsigned long long)s.stacks, (unsigned long long)s.stack_bytes);
	for (int k = 0; k < 3; k++) {
		const cw_pool_stats_t *p = &s.pool[k];
		int frag = (int)(p->fragmentation * 100.0 + 0.5);
		emit(out, arg, "stats: pool %-8s reserved %llu (peak %llu), "
		    "allocated %llu (peak %llu), segments %llu, "
		    "largest free %llu", pub_kinds[k],
		    (unsigned long long)p->reserved.current,
		    (unsigned long long)p->reserved.peak,
		    (unsigned long long)p->allocated.current,
		    (unsigned long long)p->allocated.peak,
		    (unsigned long long)p->segments.current,
		    (unsigned long long)p->largest_free);
		emit(out, arg, "stats: pool %-8s driver allocs %llu, frees "
		    "%llu, fence waits %llu, trims %llu, fragmentation "
		    "%d.%02d", pub_kinds[k],
		    (unsigned long long)p->driver_allocs,
		    (unsigned long long)p->driver_frees,
		    (unsigned long long)p->fence_waits,
		    (unsigned long long)p->trims,
		    frag / 100, frag % 100);
	}
	return CW_OK;
}

int
cw_report(int fd, cw_format_t format)
{
	static const char fn[] = "cw_report";
	report_meta_t meta;

	fork_init();
	if (fd < 0)
		return lasterr_set(CW_EINVAL, fn, "fd %d is not a file "
		    "descriptor", fd);
	if (format != CW_FORMAT_JSON && format != CW_FORMAT_TEXT)
		return lasterr_set(CW_EINVAL, fn, "format %d is not "
		    "CW_FORMAT_JSON or CW_FORMAT_TEXT", (int)format);
	meta.mode = mode_source != NULL ? mode_source() : "library";
	meta.exit_how = "request";
	meta.exit_status = -1;
	meta.timeline = NULL;
	if (report_write(fd, format, &meta)) {
		int e = errno;
		return lasterr_set(e == ENOSPC || e == ENOMEM ? CW_ENOMEM :
		    CW_EINVAL, fn,
		    "writing the report failed (errno %d)", e);
	}
	return CW_OK;
}

void
cw_set_output(cw_output_fn fn, void *arg)
{
	log_set_output(fn, arg);
}

const char *
cw_strerror(int status)
{
	switch (status) {
	case CW_OK:
		return "success";
	case CW_EINVAL:
		return "invalid argument";
	case CW_ENOMEM:
		return "out of memory";
	case CW_ECONTRACT:
		return "refused by a contract; nothing changed";
	case CW_EFREED:
		return "handle already freed";
	case CW_EBOUNDS:
		return "range outside the allocation; nothing written";
	case CW_ENOTSUP:
		return "not supported for this kind or device";
	case CW_ECUDA:
		return "CUDA driver error";
	case CW_ENODEV:
		return "no CUDA driver or no such device";
	default:
		return "unknown status";
	}
}

const cw_error_t *
cw_last_error(void)
{
	return lasterr_get();
}

int
cw_trim(int device)
{
	int r;

	fork_init();
	if ((r = contract_check_device(device, false, "cw_trim")) != CW_OK)
		return r;
	r = pool_trim(device);
	if (r != CW_OK && lasterr_get()->status == r)
		lasterr_get()->function = "cw_trim";
	return r;
}
