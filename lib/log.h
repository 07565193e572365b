/*
 * log.h -- all text output: one callback, line-buffered, allocator-safe.
 * Messages are formatted by fmt.h into a fixed stack buffer (no malloc,
 * no stdio), so these work on early paths, in hooks and at exit.
 * Owner: infra.
 */
#ifndef CUWARDEN_LOG_H
#define CUWARDEN_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "cuwarden.h"

/* Routes output through fn (NULL restores the default: write(2) to fd 2,
 * or to the file named by CUWARDEN_LOG_FILE, opened by outfile.h's rules
 * at the first message; "-" and /dev/stderr are fd 2).  The default output
 * never blocks: a line that cannot be written at once is lost and
 * counted (log_lost_count). */
void log_set_output(cw_output_fn fn, void *arg);

/* Where the log finds its two settings, which options.h owns (options sit
 * above the log, which never names them): verbose() answers the level of
 * CUWARDEN_VERBOSE, file() the raw CUWARDEN_LOG_FILE (NULL when unset)
 * without logging; either may read the environment.  Set once, at load,
 * before anything logs (options.c's constructor); unset, log_debug prints
 * nothing and the default output is fd 2. */
void log_set_source(int (*verbose)(void), const char *(*file)(void));

/* Makes CUWARDEN_LOG_FILE absolute against the current directory, once
 * (later calls, and the first message, use that answer wherever the
 * process is by then).  Idempotent, thread-safe, no CUDA; called by
 * report_paths_init (at the shim's load) and at the first message. */
void log_path_init(void);
/* Where the default output goes when it is not standard error: the fd of
 * CUWARDEN_LOG_FILE's file (or of standard output, when it names that),
 * opened as the first line would open it; -1 when lines go to standard
 * error (unset, unusable, or a host callback set by cw_set_output). */
int log_file_fd(void);

/* One message, prefixed "cuwarden: ", newline added if missing. */
void log_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "cuwarden: warning: ..." -- at most 100 warnings per process, then one
 * line saying the rest are suppressed. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "cuwarden: error: ..." -- never capped. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only when CUWARDEN_VERBOSE >= level. */
void log_debug(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Expands "%p" (the pid), "%r" (the rank), "%h" (the host), "%j" (the
 * job id) (jobinfo_expand) and "%%" (a "%") in a file name pattern into
 * out.  Returns true on error (any other escape, an empty result, or out
 * too small).  Used for CUWARDEN_LOG_FILE and CUWARDEN_REPORT. */
bool log_expand_path(const char *pat, char *out, size_t size);

/* Writes all of buf to fd, retrying on EINTR and short writes. Returns
 * true on error.  Unlike outfile_write_all (a report, which waits for a
 * full non-blocking fd), a log line never waits: EAGAIN is an error, the
 * line is lost and counted, and the program goes on. */
bool log_write_all(int fd, const void *buf, size_t len);

/* For tests: forget the warning count, the lost lines, the log file
 * chosen and its resolved path. */
void log_reset(void);
unsigned log_warn_count(void); /* warnings asked for, capped or not */
/* Lines of the default output lost because they could not be written at
 * once (a full pipe or terminal, a write error). */
unsigned long long log_lost_count(void);

/* Fork: the output lock is taken in prepare, released after. */
void log_prefork(void);
void log_postfork_parent(void);
void log_postfork_child(void);

#endif /* CUWARDEN_LOG_H */
