#include "preamble.h"

/*
 * report_file.c -- which file a report goes to (report.h:
 * report_write_env): CUWARDEN_REPORT, made absolute once
 * (report_paths_init), expanded ("%p"), and written by outfile.h's rules,
 * this process's own earlier report being replaced.
 *
 * Locking: none.  The last path this process wrote (for "the same
 * process replaces its own report") is kept in statics, written with the
 * pid of the writer, so a fork child never takes its parent's for its
 * own.  The resolved CUWARDEN_REPORT is an outfile_path_t (atomic,
 * resolved once).
 */

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"
#include "log.h"
#include "options.h"
#include "outfile.h"
#include "report.h"
#include "scratch.h"

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
	(void)report_marker_pattern();
}

void
report_paths_reset(void)
{
	outfile_path_reset(&report_path);
	report_marker_reset();
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
		    fmt_snprintf(last_path, sizeof(last_path), "%s", name) >=
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
