/*
 * main.c -- cuwarden-audit's flow: the commands (`cuwarden-audit
 * [options] [--] program [args]`, `cuwarden-audit report FILE...`,
 * `snapshot PID` (snapshot.c, then its file as `report`) and `diff A B`
 * (diff.c), parsed by cli.c), the order of the work (suppressions and baseline are
 * read before the program runs, so a bad file fails fast; then run,
 * symbolize, suppress, baseline, render) and the exit status.
 *
 * Exit status: the program's own when nothing is reported; the
 * --error-exitcode (23) when a leak or violation is; 125 when the audit
 * itself failed or the command line is wrong; 126/127 when the program
 * cannot be run / is not found; 128+n when it died of signal n and left
 * nothing to audit.
 */
#include "config.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "baseline.h"
#include "cli.h"
#include "diag.h"
#include "diff.h"
#include "fold.h"
#include "ingest.h"
#include "json.h"
#include "model.h"
#include "out.h"
#include "render.h"
#include "run.h"
#include "snapshot.h"
#include "suppress.h"
#include "symbolize.h"

/* Can path be written?  Checked before a long run.  Returns true on
 * error, after a message. */
static bool
check_writable(const char *opt, const char *path)
{
	char err[PATH_MAX + 256];
	const char *why = err;
	size_t n;

	if (path == NULL || !out_check(path, err, sizeof(err)))
		return false;
	n = strlen(path);
	if (strncmp(err, path, n) == 0 && err[n] == ':')
		why = err + n + 2;
	au_error("%s %s: cannot be written: %s", opt, path, why);
	return true;
}

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* --gen-suppressions=FILE: written whole or not at all, as every
 * output.  Returns true on error, after a message. */
static bool
write_supp(const au_model_t *m, const au_cfg_t *c)
{
	char err[PATH_MAX + 256];
	au_out_t o;

	if (out_open(&o, c->gen_supp_file, err, sizeof(err))) {
		au_error("--gen-suppressions: cannot write %s", err);
		return true;
	}
	supp_generate(m, (size_t)c->num_callers, o.fp);
	if (out_commit(&o, err, sizeof(err))) {
		au_error("--gen-suppressions: cannot write %s", err);
		return true;
	}
	return false;
}

/* Whether the text report, on log, is coloured (--color): never in a
 * --log-file FILE; with auto, on a terminal unless NO_COLOR is set and
 * not empty (no-color.org) or TERM is dumb. */
static bool
use_color(const au_cfg_t *c, FILE *log)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	if (c->color == AU_COLOR_NEVER ||
	    (c->log_file != NULL && !out_is_stdout(c->log_file)))
		return false;
	if (c->color == AU_COLOR_ALWAYS)
		return true;
	return isatty(fileno(log)) && (no == NULL || no[0] == '\0') &&
	    !(term != NULL && strcmp(term, "dumb") == 0);
}

/* `report FILE|DIR...`.  Returns 0, or 125 after a message. */
static int
read_reports(au_model_t *m, int argc, char **argv)
{
	char err[4096];
	int i;

	for (i = 0; i < argc; i++) {
		m->group = ++m->ngroups;
		if (is_dir(argv[i])) {
			char **files;
			size_t j, n = run_list_files(argv[i], &files);
			int bad = 0;

			if (n == 0)
				au_warn("%s: no report files in this "
				    "directory", argv[i]);
			for (j = 0; j < n && !bad; j++)
				if (ingest_file(m, files[j], err,
				    sizeof(err))) {
					au_error("%s", err);
					bad = AU_EXIT_AUDIT_FAILED;
				}
			run_free_list(files, n);
			if (bad)
				return bad;
			continue;
		}
		if (ingest_file(m, argv[i], err, sizeof(err))) {
			au_error("%s", err);
			return AU_EXIT_AUDIT_FAILED;
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	au_cfg_t c;
	au_model_t m;
	au_supp_t *supp = NULL;
	au_baseline_t *base = NULL;
	au_render_opts_t ro;
	au_totals_t t;
	char err[4096];
	au_out_t logout;
	FILE *log = stderr;
	bool log_open = false;
	int rc, status, m_signal = 0;
	bool no_cuda, lost, missing;
	char *snap_path = NULL;
	char *snap_args[1];
	size_t i;

	memset(&m, 0, sizeof(m));
	m.exit_status = -1;
	if ((rc = cli_parse(&c, argc, argv)) >= 0)
		goto out;

	/* Everything that can be wrong with our own inputs, before the
	 * program runs. */
	supp = supp_new();
	/* The built-in rules hide the frameworks' caches, which are fine
	 * at exit; in a running process (snapshot, diff) they are the
	 * memory asked about. */
	if (c.builtin && !c.snapshot_cmd && !c.diff_cmd && c.run.see_through)
		c.run.see_unsuppressed = supp_add_builtin_but_caches(supp);
	else if (c.builtin && !c.snapshot_cmd && !c.diff_cmd)
		supp_add_builtin(supp);
	for (i = 0; i < c.nsupp; i++)
		if (supp_load(supp, c.supp_files[i], err, sizeof(err))) {
			au_error("%s", err);
			rc = AU_EXIT_AUDIT_FAILED;
			goto out;
		}
	if (c.baseline != NULL) {
		base = baseline_load(c.baseline, c.baseline_match, err,
		    sizeof(err));
		if (base == NULL) {
			au_error("--baseline: %s", err);
			rc = AU_EXIT_AUDIT_FAILED;
			goto out;
		}
	}
	if (check_writable("--json", c.json) ||
	    check_writable("--sarif", c.sarif) ||
	    check_writable("--html", c.html) ||
	    check_writable("--junit", c.junit) ||
	    check_writable("--trace", c.trace) ||
	    check_writable("--gen-suppressions", c.gen_supp_file)) {
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}
	if (c.log_file != NULL) {
		if (out_open(&logout, c.log_file, err, sizeof(err))) {
			au_error("--log-file %s", err);
			rc = AU_EXIT_AUDIT_FAILED;
			goto out;
		}
		log_open = true;
		log = logout.fp;
		/* valgrind's log file has everything: the shim's messages
		 * too (run.h). */
		c.run.shim_lines = log;
	}

	if (c.diff_cmd) {
		au_diff_opts_t d = { supp, c.demangle, (int)c.num_callers,
			c.json, c.error_exitcode_set ? c.error_exitcode : 0 };

		rc = diff_run(c.args[0], c.args[1], &d, log);
		goto out;
	}
	if (c.snapshot_cmd) {
		bool json;

		rc = snapshot_take(c.snap_pid, c.snap_wait, &snap_path, &json);
		if (rc != 0 || snap_path == NULL)
			goto out;
		/* Its path first, on standard output (for scripts). */
		printf("%s\n", snap_path);
		fflush(stdout);
		if (!json) {
			au_warn("snapshot: %s is a text report "
			    "(CUWARDEN_REPORT_FORMAT=text): not rendered",
			    snap_path);
			goto out;
		}
		snap_args[0] = snap_path;
		c.report_cmd = true;
		c.args = snap_args;
		c.nargs = 1;
	}
	if (c.report_cmd) {
		rc = read_reports(&m, c.nargs, c.args);
	} else {
		m.command = json_array();
		for (i = 0; i < (size_t)c.nargs; i++)
			json_array_append_new(m.command, json_utf8(c.args[i]));
		rc = run_program(&c.run, c.args, &m);
	}
	if (rc != 0)
		goto out;
	if (c.report_cmd && m.nprocs == 0) {
		au_error("report: no report files found");
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}

	symbolize_model(&m, c.demangle);
	fingerprint_symbolic(&m);
	supp_apply(supp, &m);
	if (c.accept_teardown)
		model_accept_teardown(&m);
	if (base != NULL)
		baseline_apply(base, &m);
	model_sort(&m);
	/* One rank's audit names none missing: a tool started as a rank,
	 * or a snapshot of one process. */
	fold_model(&m, c.snapshot_cmd || (!c.report_cmd &&
	    fold_tool_is_rank()));

	/* The exit status, known before the outputs (the HTML page shows
	 * it); its messages come after them, on the last lines. */
	model_totals(&m, &t);
	no_cuda = c.require_cuda && t.cuda_active == 0;
	lost = run_lost_count(&m) > 0 && !c.run.allow_missing;
	missing = m.nmissing_ranks > 0 && !c.allow_missing_ranks;
	status = m.ran && m.exit_status >= 0 ? m.exit_status : 0;
	if (t.errors > 0 && c.error_exitcode != 0)
		status = (int)c.error_exitcode;

	memset(&ro, 0, sizeof(ro));
	ro.supp = supp;
	ro.baseline = c.baseline;
	ro.stack_limit = (int)c.num_callers;
	ro.plain_summary = c.plain_summary;
	ro.verbosity = c.verbosity;
	ro.print_limit = (size_t)c.print_limit;
	ro.show_kinds = c.show_kinds;
	ro.color = use_color(&c, log);
	ro.audit_failed = no_cuda || lost || missing;
	ro.exit_status = ro.audit_failed ? AU_EXIT_AUDIT_FAILED : status;
	render_text(&m, &ro, log);
	if (c.gen_supp && c.gen_supp_file == NULL)
		supp_generate(&m, (size_t)c.num_callers, log);
	fflush(log);
	if ((c.gen_supp_file != NULL && write_supp(&m, &c)) ||
	    (c.json != NULL && render_json(&m, &ro, c.json)) ||
	    (c.sarif != NULL && render_sarif(&m, &ro, c.sarif)) ||
	    (c.html != NULL && render_html(&m, &ro, c.html)) ||
	    (c.junit != NULL && render_junit(&m, &ro, c.junit)) ||
	    (c.trace != NULL && render_trace(&m, c.trace))) {
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}

	if (no_cuda) {
		au_error("--require-cuda: no CUDA activity seen in %llu "
		    "process%s: nothing GPU-related was audited",
		    (unsigned long long)t.processes,
		    t.processes == 1 ? "" : "es");
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}
	if (lost) {
		size_t k = run_lost_count(&m);

		/* Where CI shows it: the last line. */
		au_error("%zu process%s used CUDA and left no report (listed "
		    "above): the audit is incomplete (--allow-missing-reports "
		    "accepts that)", k, k == 1 ? "" : "es");
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}
	if (missing) {
		au_error("%zu rank%s of %ld left no report (listed above): "
		    "the audit is incomplete (--allow-missing-ranks accepts "
		    "that)", m.nmissing_ranks, m.nmissing_ranks == 1 ? "" :
		    "s", m.world_size);
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}
	if (t.errors > 0 && c.error_exitcode != 0)
		render_text_status(&m, &ro, status, t.errors, log);
	rc = status;
out:
	m_signal = m.term_signal;
	/* A text report that did not reach its file is a failed audit, as
	 * a --json that could not be written is. */
	if (log_open && out_commit(&logout, err, sizeof(err))) {
		au_error("--log-file: the text report was not written: %s",
		    err);
		rc = AU_EXIT_AUDIT_FAILED;
	}
	model_free(&m);
	free(snap_path);
	supp_free(supp);
	baseline_free(base);
	symbolize_done();
	cli_free(&c);
	/* A program stopped by ^C or kill: die the same way, so a calling
	 * shell stops too (as it would without us).  Not for signals that
	 * dump core: the tool did not crash. */
	if (m_signal != 0 && rc == 128 + m_signal &&
	    (m_signal == SIGINT || m_signal == SIGTERM || m_signal == SIGHUP ||
	    m_signal == SIGPIPE)) {
		fflush(NULL);
		signal(m_signal, SIG_DFL);
		raise(m_signal);
	}
	return rc;
}
