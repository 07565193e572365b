#include "preamble.h"

/*
 * report_marker.c -- the marker a process leaves at its first CUDA call
 * (report.h: report_write_marker): CUWARDEN_MARKER, made absolute once
 * (report_paths_init), expanded ("%p"), written whole by outfile.h's
 * rules.  cuwarden-audit pairs each marker with a report of the same pid:
 * a marker alone is a process that used CUDA and left no report (killed
 * by SIGKILL, or its report lost), doc/audit.md "Lost processes".
 *
 * Locking: none; the caller writes it once per process.  No malloc, no
 * stdio (the outfile_t and the buffer are scratch memory).
 */

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "options.h"
#include "outfile.h"
#include "report.h"
#include "report_int.h"
#include "scratch.h"

/* CUWARDEN_MARKER, made absolute once. */
static outfile_path_t marker_path = OUTFILE_PATH_INIT;

const char *
report_marker_pattern(void)
{
	return outfile_path_get(&marker_path,
	    options_get_str_quiet(OPT_MARKER), NULL);
}

void
report_marker_reset(void)
{
	outfile_path_reset(&marker_path);
}

/* The marker's one line: what the tool says of a process that left no
 * report (doc/report-schema.md, "The marker"). */
static void
marker_json(wr_t *w)
{
	proc_t *p;
	scratch_t ps = SCRATCH_INIT;

	report_printf(w, "{\"format\": \"cuwarden-marker\", \"version\": 1, "
	    "\"pid\": %d, \"ppid\": %d, \"start_time\": %llu, \"command\": [",
	    (int)getpid(), (int)getppid(), outfile_start_time());
	if (!scratch_reserve(&ps, sizeof(proc_t))) {
		p = (proc_t *)(void *)ps.p;
		report_proc_read(p);
		report_proc_args(p, report_json_arg, w);
		report_puts(w, "], \"exe\": ");
		report_json_strn(w, p->exe, strlen(p->exe));
		scratch_free(&p->cmd);
	} else {
		report_puts(w, "], \"exe\": \"\"");
	}
	scratch_free(&ps);
	report_puts(w, "}\n");
	report_flush(w);
}

bool
report_write_marker(void)
{
	const char *pat = report_marker_pattern(), *what;
	char name[PATH_MAX];
	scratch_t os = SCRATCH_INIT;
	outfile_t *of;
	wr_t *w;
	int e = 0;

	if (pat == NULL)
		return false;
	if (report_expand_path(pat, name, sizeof(name)) ||
	    outfile_std_fd(pat) >= 0) {
		log_error("CUWARDEN_MARKER=%s: not a usable path (too long, a "
		    "standard stream, or a '%%' other than %%p and %%%%); no "
		    "marker written", pat);
		errno = EINVAL;
		return true;
	}
	if (scratch_reserve(&os, sizeof(outfile_t) + sizeof(wr_t))) {
		log_error("cannot write the marker %s (no memory)", name);
		errno = ENOMEM;
		return true;
	}
	of = (outfile_t *)(void *)os.p;
	w = (wr_t *)(void *)(os.p + sizeof(outfile_t));
	if (outfile_begin(of, name, false, &what)) {
		e = errno;
		log_error("cannot write the marker %s (%s)", name,
		    what != NULL ? what : "errno");
		goto out;
	}
	memset(w, 0, sizeof(*w));
	w->fd = of->fd;
	marker_json(w);
	if (w->err) {
		e = w->saved_errno;
		outfile_abort(of);
		log_error("writing the marker %s failed (errno %d)", name, e);
		goto out;
	}
	if (outfile_commit(of, name, sizeof(name))) {
		e = errno;
		log_error("cannot put the marker in place at %s (errno %d)",
		    of->target, e);
		goto out;
	}
	log_debug(1, "marker written to %s", name);
	scratch_free(&os);
	return false;
out:
	scratch_free(&os);
	errno = e;
	return true;
}
