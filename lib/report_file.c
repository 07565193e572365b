#include "preamble.h"

/*
 * report_file.c -- which file a report goes to (report.h:
 * report_write_env): CUWARDEN_REPORT, made absolute once
 * (report_paths_init), expanded ("%p"), and written by outfile.h's rules,
 * this process's own earlier report being replaced; or standard error
 * (report_write_stderr: the shim's text report when CUWARDEN_REPORT is
 * unset; CUWARDEN_LOG_FILE's file instead when that is set).
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
#include "report_int.h"
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
report_file_write(const char *path, bool own, const char *noun, char *name,
    size_t size, bool (*body)(int fd, void *arg), void *arg, bool *stream)
{
	const char *what;
	outfile_t *of;
	scratch_t os = SCRATCH_INIT;
	int e = 0;

	/* outfile_t holds two paths: scratch, not the caller's stack (this
	 * may run in a signal handler). */
	if (scratch_reserve(&os, sizeof(outfile_t))) {
		log_error("cannot write the %s to %s (no memory)", noun, name);
		errno = ENOMEM;
		return true;
	}
	of = (outfile_t *)(void *)os.p;
	if (outfile_begin(of, path, own, &what)) {
		e = errno;
		if (what != NULL)
			log_error("not writing the %s to %s: it is %s, not a "
			    "regular file (a %s goes to a new file%s, or to a "
			    "terminal)", noun, name, what, noun,
			    /* a marker never goes to a stream */
			    strcmp(noun, "report") == 0 ?
			    ", to standard error with \"-\"" : "");
		else
			log_error("cannot write the %s to %s (errno %d)", noun,
			    name, e);
		goto out;
	}
	*stream = of->stream;
	if (body(of->fd, arg)) {
		e = errno;
		outfile_abort(of);
		log_error("writing the %s to %s failed (errno %d)%s", noun,
		    name, e, of->stream ? "" : "; nothing left there");
		goto out;
	}
	if (outfile_commit(of, name, size)) {
		e = errno;
		log_error("cannot put the %s in place at %s (errno %d); "
		    "nothing left there", noun, of->target, e);
		goto out;
	}
	scratch_free(&os);
	return false;
out:
	scratch_free(&os);
	errno = e;
	return true;
}

/* What report_file_write's body writes: the report, in format; with
 * only_found, only if it holds a finding (wrote says whether). */
typedef struct report_body_s {
	cw_format_t format;
	const report_meta_t *meta;
	bool only_found;
	bool wrote;
} report_body_t;

static bool
report_body(int fd, void *arg)
{
	report_body_t *b = arg;

	b->wrote = true;
	if (b->only_found)
		return report_write_found(fd, b->format, b->meta, &b->wrote);
	return report_write(fd, b->format, b->meta);
}

bool
report_env_set(void)
{
	report_paths_init();
	return report_pattern() != NULL;
}

bool
report_env_path(char *name, size_t size, bool *set)
{
	const char *pat;

	report_paths_init();
	pat = report_pattern();
	*set = pat != NULL;
	if (pat == NULL)
		return true;
	if (report_expand_path(pat, name, size)) {
		log_error("CUWARDEN_REPORT=%s: not a usable path (too long, or "
		    "a '%%' other than %%p, %%r, %%h, %%j and %%%%)", pat);
		errno = EINVAL;
		return true;
	}
	return false;
}

bool
report_write_default(const char *noun, bool (*body)(int fd, void *arg),
    void *arg)
{
	char name[32] = "standard error";
	bool stream;
	int fd = log_file_fd();

	if (fd >= 0) {
		/* CUWARDEN_LOG_FILE: after the shim's lines, in the same
		 * file (valgrind's log file holds everything; LeakSanitizer's
		 * log_path takes its report). */
		if (body(fd, arg)) {
			int e = errno;

			log_error("writing the %s to CUWARDEN_LOG_FILE failed "
			    "(errno %d)", noun, e);
			errno = e;
			return true;
		}
		return false;
	}
	return report_file_write("-", false, noun, name, sizeof(name), body,
	    arg, &stream);
}

bool
report_write_stderr(const report_meta_t *meta, bool only_found)
{
	report_body_t b = { CW_FORMAT_TEXT, meta, only_found, false };

	if (report_write_default("report", report_body, &b))
		return true;
	if (b.wrote)
		log_debug(1, "report written to %s", log_file_fd() >= 0 ?
		    "CUWARDEN_LOG_FILE" : "standard error");
	return false;
}

bool
report_write_env(const report_meta_t *meta)
{
	report_body_t b = { (cw_format_t)options_get(OPT_REPORT_FORMAT), meta,
		false, false };
	const char *pat;
	char name[PATH_MAX];
	bool own, stream = false;

	report_paths_init();
	pat = report_pattern();
	if (pat == NULL)
		return false;
	if (report_expand_path(pat, name, sizeof(name))) {
		log_error("CUWARDEN_REPORT=%s: not a usable path (too long, or "
		    "a '%%' other than %%p, %%r, %%h, %%j and %%%%); no report "
		    "written", pat);
		errno = EINVAL;
		return true;
	}
	/* This process wrote it before (a report on request, then the one
	 * at exit): it replaces its own report, wherever that went. */
	own = last_pid == getpid() && strcmp(last_name, name) == 0;
	if (report_file_write(own ? last_path : name, own, "report", name,
	    sizeof(name), report_body, &b, &stream))
		return true;
	log_debug(1, "report written to %s", name);
	if (!stream) {
		if (report_expand_path(pat, last_name, sizeof(last_name)) ||
		    fmt_snprintf(last_path, sizeof(last_path), "%s", name) >=
		    (int)sizeof(last_path))
			last_pid = 0;
		else
			last_pid = getpid();
	}
	return false;
}

bool
report_sibling_path(char *name, size_t size, const char *suffix,
    const char *noun, bool *set, bool *stream)
{
	size_t n;

	*stream = false;
	if (report_env_path(name, size, set))
		return true;
	if (outfile_std_fd(name) >= 0) { /* "-", /dev/stdout, ... */
		*stream = true;
		return false;
	}
	n = strlen(name);
	if (fmt_snprintf(name + n, size - n, "%s", suffix) >= (int)(size - n)) {
		log_error("CUWARDEN_REPORT: the %s's name (the report's and "
		    "\"%s\") is too long; no %s written", noun, suffix, noun);
		errno = ENAMETOOLONG;
		return true;
	}
	return false;
}

bool
report_write_snapshot(const report_meta_t *meta)
{
	report_body_t b = { CW_FORMAT_TEXT, meta, false, false };
	char name[PATH_MAX], suffix[32];
	bool set, stream;

	fmt_snprintf(suffix, sizeof(suffix), ".snap.%d", meta->exit_status);
	if (report_sibling_path(name, sizeof(name), suffix, "snapshot", &set,
	    &stream)) {
		if (!set)
			errno = ENOENT;
		return true;
	}
	if (!stream)
		b.format = (cw_format_t)options_get(OPT_REPORT_FORMAT);
	/* Never "own": the report at exit is not this file, and a name
	 * already taken gives the snapshot a name of its own. */
	if (report_file_write(name, false, "snapshot", name, sizeof(name),
	    report_body, &b, &stream))
		return true;
	log_debug(1, "snapshot %d written to %s", meta->exit_status, name);
	return false;
}

bool
report_timeline_path(char *name, size_t size, int snap)
{
	char suffix[48];
	bool set, stream;

	if (snap > 0)
		fmt_snprintf(suffix, sizeof(suffix), ".snap.%d.timeline", snap);
	else
		fmt_snprintf(suffix, sizeof(suffix), ".timeline");
	if (report_sibling_path(name, size, suffix, "timeline", &set,
	    &stream)) {
		if (!set)
			log_error("CUWARDEN_TIMELINE: CUWARDEN_REPORT is unset; "
			    "no timeline");
		return true;
	}
	if (stream && snap > 0)
		return true;
	if (stream) {
		log_error("CUWARDEN_TIMELINE: CUWARDEN_REPORT=%s names a "
		    "stream, and the timeline goes to a file; no timeline",
		    name);
		return true;
	}
	return false;
}
