/*
 * report.h -- the per-process report: JSON (the source of truth, schema
 * in doc/report-schema.md) or text.  Built from the registry (live
 * records = leaks), violations, the ledger, stats and the stack depot.
 * Writes with write(2) through a fixed buffer; works at exit, from an
 * _exit hook and from a signal handler; never calls the driver.  Owner:
 * infra.
 */
#ifndef CUWARDEN_REPORT_H
#define CUWARDEN_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuwarden.h"
#include "types.h"

/* The timeline past CUWARDEN_TIMELINE_LIMIT (shim/tlsummary.c;
 * doc/report-schema.md, "The timeline member"): running totals of the
 * events not written, and a sampled series.  Times in the timeline's
 * clock (report_timeline_t's tick_ns_num/den converts them to ns since
 * its start). */
typedef struct report_tl_dev_s {
	int16_t device;       /* -1: host memory */
	int64_t at_limit;     /* live bytes when the limit was reached */
	int64_t max;          /* the most live bytes since, as sampled */
	uint64_t max_t;
	int64_t end;          /* live bytes at the last event */
} report_tl_dev_t;

typedef struct report_tl_sample_s {
	uint64_t t;
	int64_t bytes;        /* the most live bytes of the interval ending
			       * at t */
	int16_t device;
} report_tl_sample_t;

typedef struct report_tl_stack_s {
	uint32_t stack;       /* an id of the report's timeline.stacks */
	int16_t device;
	uint8_t kind;         /* kinds.h's index */
	int64_t at_limit, max, end; /* its live bytes, as the device's */
} report_tl_stack_t;

typedef struct report_tlsum_s {
	uint64_t since;       /* the file's last event's time */
	uint64_t events;      /* events summarized */
	const report_tl_dev_t *devs;
	size_t ndevs;
	const report_tl_sample_t *samples; /* in time order per device */
	size_t nsamples;
	const report_tl_stack_t *stacks;  /* the largest max first */
	size_t nstacks;
} report_tlsum_t;

/* The timeline of the report at exit (shim/timeline.c; doc/report-schema.md,
 * "The timeline member"). */
typedef struct report_timeline_s {
	const char *file;     /* the file written; NULL: none */
	const char *error;    /* why there is none, or NULL */
	uint64_t events;      /* records in the file */
	uint64_t dropped;     /* events not in it */
	uint64_t bytes;       /* the file's size */
	uint64_t limit;       /* CUWARDEN_TIMELINE_LIMIT */
	const char *clock;    /* "tsc" or "monotonic"; NULL: not started */
	bool limit_reached;
	/* A bit per stack id its records name (stack_bits[id / 64] >> id %
	 * 64 & 1): their stacks go in the report.  NULL: none. */
	const uint64_t *stack_bits;
	size_t nstack_bits;
	/* Past the limit; NULL: not reached, or nothing could be kept. */
	const report_tlsum_t *after_limit;
	uint64_t tick_ns_num, tick_ns_den; /* the records' times to ns */
} report_timeline_t;

typedef struct report_meta_s {
	const char *mode;     /* "audit", "pool" or "library" */
	const char *exit_how; /* "exit", "_exit", "request", "signal",
			       * "snapshot" (the process goes on) */
	int exit_status;      /* exit status ("exit", "_exit"), signal number
			       * ("signal"); -1 when not known, written as
			       * null.  "snapshot": the snapshot's number
			       * (1, 2, ...), written as "snapshot" (the
			       * status is null) */
	const report_timeline_t *timeline; /* the report at exit with
			       * CUWARDEN_TIMELINE: its "timeline" member;
			       * else NULL */
} report_meta_t;

/* Writes the report to fd.  Returns true on error (errno set). */
bool report_write(int fd, cw_format_t format, const report_meta_t *meta);
/* The same, but only when the report holds a finding: a leak (of any
 * category, address ranges included) or a violation; otherwise nothing is
 * written.  *wrote says whether it was.  Returns true on error (errno
 * set). */
bool report_write_found(int fd, cw_format_t format,
    const report_meta_t *meta, bool *wrote);

/* Expands a CUWARDEN_REPORT path ("%p" -> pid, "%%" -> "%") into buf.
 * Returns true on error (too long, bad escape). */
bool report_expand_path(const char *pattern, char *buf, size_t size);

/* Makes CUWARDEN_REPORT, CUWARDEN_MARKER and CUWARDEN_LOG_FILE absolute against the
 * current directory and keeps the answers: relative paths name files of
 * the directory the process was in at this first call, wherever it is
 * when it writes them.  Idempotent, thread-safe, no CUDA, no malloc;
 * callable from a library constructor.  The shim calls it at load; the
 * first report and the first message call it too (a relative path with
 * no current directory is kept as it is, with one warning). */
void report_paths_init(void);
/* For tests: forget the resolved CUWARDEN_REPORT, CUWARDEN_MARKER and
 * the last report. */
void report_paths_reset(void);

/* Writes the report to the file named by CUWARDEN_REPORT (JSON unless
 * CUWARDEN_REPORT_FORMAT=text), by outfile.h's rules: whole or not at
 * all, 0600, never through a link, never over an existing file but this
 * process's own earlier report (which it replaces): a name already taken
 * (by a parent, a sibling, an earlier process with the same pid, a file
 * planted there) gives "<path>.<pid>-<starttime>".  "-", /dev/stderr and
 * /dev/fd/2 are standard error; a FIFO, a directory or a device other than
 * a terminal is refused.  Returns true on error (logged; errno set).  Does
 * nothing and returns false when unset. */
bool report_write_env(const report_meta_t *meta);
/* True when CUWARDEN_REPORT is set (report_write_env writes a report). */
bool report_env_set(void);
/* Writes the text report to the process's standard error (fd 2, as
 * CUWARDEN_REPORT=- does: written in place, whatever fd 2 is, the signals
 * a second kill brings held meanwhile), or where CUWARDEN_LOG_FILE sends
 * the shim's lines (log_file_fd: appended there); with only_found, only when it
 * holds a finding (report_write_found).  Returns true on error (logged;
 * errno set). */
bool report_write_stderr(const report_meta_t *meta, bool only_found);

/* Writes a snapshot (meta: exit_how "snapshot", exit_status its number
 * N) to the expanded CUWARDEN_REPORT plus ".snap.N" (JSON unless
 * CUWARDEN_REPORT_FORMAT=text) by report_write_env's rules (whole or not
 * at all, 0600, never through a link, a name taken gives
 * "<path>.<pid>-<starttime>"), never touching the report at exit; as text
 * to standard error when CUWARDEN_REPORT names it.  No driver call, no
 * malloc.  Returns true on error (logged; errno set), or when
 * CUWARDEN_REPORT is unset (errno ENOENT, not logged). */
bool report_write_snapshot(const report_meta_t *meta);

/* The timeline's file name: the expanded CUWARDEN_REPORT plus
 * ".timeline" (snap 0: the report at exit's), or ".snap.N.timeline" (snap
 * N: snapshot N's copy of the timeline so far), into name.  Returns true
 * on error (logged): unset, too long, or a standard stream (for a
 * snapshot: not logged, its text on the stream has no timeline). */
bool report_timeline_path(char *name, size_t size, int snap);

/* Writes the marker (lib/report_marker.c) to the file named by
 * CUWARDEN_MARKER, by report_write_env's rules (a name taken gives
 * "<path>.<pid>-<starttime>"; no standard stream): one JSON object, the
 * process's pid, ppid, start time, command line and executable.  A
 * process that writes it promises a report at exit (doc/report-schema.md,
 * "The marker").  Returns true on error (logged; errno set).  Does
 * nothing and returns false when unset. */
bool report_write_marker(void);
/* The resolved CUWARDEN_MARKER (made absolute at the first call, as
 * CUWARDEN_REPORT is by report_paths_init), NULL when unset. */
const char *report_marker_pattern(void);
/* For tests: forget the resolved CUWARDEN_MARKER. */
void report_marker_reset(void);

/* ------------------------------------------------------------ OOM report */

/* One of the last allocations or frees before an OOM (the shim's ring,
 * shim/oom.c). */
typedef struct report_event_s {
	uint64_t seq;      /* the event's number in the process, from 1 */
	const char *api;
	uintptr_t base;
	size_t size;
	stack_id_t stack;
	int16_t device;    /* -1: none (host memory) */
	uint8_t kind;
	bool is_free;
} report_event_t;

/* What an allocation refused with CUDA_ERROR_OUT_OF_MEMORY (or the pools'
 * own OOM) leaves in the OOM report (doc/report-schema.md, "The OOM
 * report"). */
typedef struct report_oom_s {
	const char *mode;     /* "audit" or "pool" */
	const char *api;      /* the entry point called */
	int kind;             /* kind_t of the request */
	size_t size;          /* bytes asked for */
	int device;           /* -1: none (host memory) or unknown */
	int cuda_error;       /* what the program got */
	stack_id_t stack;     /* the request's stack */
	bool mem_known;       /* cuMemGetInfo answered: */
	size_t mem_free, mem_total;
	int mem_error;        /* else its CUresult (-1: not asked: no
			       * context, no driver) */
	bool pool;            /* pool mode: pool_cached holds the pools'
			       * cached bytes of the device */
	size_t pool_cached;
	const report_event_t *recent; /* oldest first */
	size_t nrecent;
} report_oom_t;

/* Most live groups an OOM report lists (largest first; the totals count
 * them all). */
#define REPORT_OOM_GROUPS 10

/* Writes the OOM report: with CUWARDEN_REPORT set, to its expanded path
 * plus ".oom" (JSON unless CUWARDEN_REPORT_FORMAT=text), by
 * report_write_env's rules (whole or not at all, 0600, never through a
 * link, a name taken gives "<path>.<pid>-<starttime>"); unset, as text to
 * standard error unless CUWARDEN_EXIT_REPORT=never.  No driver call, no
 * malloc.  Returns true on error (logged; errno set). */
bool report_write_oom(const report_oom_t *o);
/* The same document to fd (tests, benchmarks).  Returns true on error
 * (errno set). */
bool report_write_oom_fd(int fd, cw_format_t format, const report_oom_t *o);

/* True for the kinds whose live records are leaks (kinds.h's leaks
 * column). */
bool report_kind_leaks(int kind);

#endif /* CUWARDEN_REPORT_H */
