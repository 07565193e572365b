/*
 * report.h -- the per-process report: JSON (the source of truth, schema
 * in doc/report-schema.md) or text.  Built from the registry (live
 * records = leaks), violations, the ledger, stats and the stack depot.
 * Writes with write(2) through a fixed buffer; works at exit and from an
 * _exit hook; never calls the driver.  Owner: infra.
 */
#ifndef CUWARDEN_REPORT_H
#define CUWARDEN_REPORT_H

#include <stdbool.h>

#include "cuwarden.h"

typedef struct report_meta_s {
	const char *mode;     /* "audit", "pool" or "library" */
	const char *exit_how; /* "exit", "_exit", "request", "signal" */
	int exit_status;      /* when known, else -1 */
} report_meta_t;

/* Writes the report to fd.  Returns true on error (errno set). */
bool report_write(int fd, cw_format_t format, const report_meta_t *meta);

/* Expands a CUWARDEN_REPORT path ("%p" -> pid, "%%" -> "%") into buf.
 * Returns true on error (too long, bad escape). */
bool report_expand_path(const char *pattern, char *buf, size_t size);

/* Opens the report file named by CUWARDEN_REPORT for this process and
 * writes it (JSON unless CUWARDEN_REPORT_FORMAT=text).  A path without %p
 * is never overwritten by another process: a child whose parent already
 * wrote there (or any second writer) gets "<path>.<pid>"; the same process
 * writing again overwrites its own report.  Returns true on error
 * (logged).  Does nothing and returns false when unset. */
bool report_write_env(const report_meta_t *meta);

/* True for the kinds whose live records are leaks: all but views and
 * mappings (a mapping holds no memory of its own; its physical handle and
 * its reservation are reported). */
bool report_kind_leaks(int kind);

/* "CUDA_ERROR_..." of a CUresult from cuda.h's names (never asks the
 * driver); NULL for a code it does not know. */
const char *report_cuda_error_name(int code);

#endif /* CUWARDEN_REPORT_H */
