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
 * stdio (the buffer is scratch memory; report_file_write writes it
 * whole).
 */

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "jobinfo.h"
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
	    "\"pid\": %d, \"ppid\": %d, \"start_time\": %llu, ",
	    (int)getpid(), (int)getppid(), outfile_start_time());
	/* Its rank, so that a rank killed by SIGKILL is named by it. */
	if (jobinfo_get()->rank >= 0)
		report_printf(w, "\"rank\": %ld, ", jobinfo_get()->rank);
	else
		report_puts(w, "\"rank\": null, ");
	report_puts(w, "\"command\": [");
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

static bool
marker_body(int fd, void *arg)
{
	scratch_t ws = SCRATCH_INIT;
	wr_t *w;
	bool err;

	(void)arg;
	if (scratch_reserve(&ws, sizeof(wr_t))) {
		errno = ENOMEM;
		return true;
	}
	w = (wr_t *)(void *)ws.p;
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	marker_json(w);
	err = w->err;
	errno = w->saved_errno;
	scratch_free(&ws);
	return err;
}

bool
report_write_marker(void)
{
	const char *pat = report_marker_pattern();
	char name[PATH_MAX];
	bool stream;

	if (pat == NULL)
		return false;
	if (report_expand_path(pat, name, sizeof(name)) ||
	    outfile_std_fd(pat) >= 0) {
		log_error("CUWARDEN_MARKER=%s: not a usable path (too long, a "
		    "standard stream, or a '%%' other than %%p, %%r, %%h, "
		    "%%j and %%%%); no marker written", pat);
		errno = EINVAL;
		return true;
	}
	if (report_file_write(name, false, "marker", name, sizeof(name),
	    marker_body, NULL, &stream))
		return true;
	log_debug(1, "marker written to %s", name);
	return false;
}
