/*
 * main.c -- cuwarden-audit's command line: options, the two commands
 * (`cuwarden-audit [options] [--] program [args]` and `cuwarden-audit
 * report FILE...`), the order of the work (suppressions and baseline are
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

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "baseline.h"
#include "diag.h"
#include "ingest.h"
#include "json.h"
#include "model.h"
#include "num.h"
#include "options_int.h" /* KIB..TIB: options.def writes sizes with them */
#include "out.h"
#include "render.h"
#include "run.h"
#include "suppress.h"
#include "symbolize.h"
#include "text.h"
#include "xalloc.h"

enum {
	OPT_PRELOAD = 256, OPT_KEEP, OPT_JSON, OPT_SARIF, OPT_HTML, OPT_LOG,
	OPT_ERROR_EXIT, OPT_SUPP, OPT_NO_BUILTIN, OPT_PRINT_BUILTIN,
	OPT_GEN_SUPP, OPT_BASELINE, OPT_MODE, OPT_STACK_DEPTH,
	OPT_ON_VIOLATION, OPT_OWNER_SKIP, OPT_POOL_LIMIT, OPT_CHECK_BOUNDS,
	OPT_VERBOSE, OPT_NO_POOL, OPT_LARGE_BLOCK, OPT_SHOW_STATS,
	OPT_TOMBSTONES, OPT_SHIM_LOG, OPT_NUM_CALLERS, OPT_NO_WAIT, OPT_HELP,
	OPT_VERSION, OPT_REQUIRE_CUDA,
};

static const struct option long_opts[] = {
	{ "preload", required_argument, NULL, OPT_PRELOAD },
	{ "keep-reports", required_argument, NULL, OPT_KEEP },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "sarif", required_argument, NULL, OPT_SARIF },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "log-file", required_argument, NULL, OPT_LOG },
	{ "error-exitcode", required_argument, NULL, OPT_ERROR_EXIT },
	{ "suppressions", required_argument, NULL, OPT_SUPP },
	{ "no-builtin-suppressions", no_argument, NULL, OPT_NO_BUILTIN },
	{ "print-builtin-suppressions", no_argument, NULL, OPT_PRINT_BUILTIN },
	{ "gen-suppressions", no_argument, NULL, OPT_GEN_SUPP },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "stack-depth", required_argument, NULL, OPT_STACK_DEPTH },
	{ "on-violation", required_argument, NULL, OPT_ON_VIOLATION },
	{ "owner-skip", required_argument, NULL, OPT_OWNER_SKIP },
	{ "pool-limit", required_argument, NULL, OPT_POOL_LIMIT },
	{ "check-bounds", no_argument, NULL, OPT_CHECK_BOUNDS },
	{ "verbose", optional_argument, NULL, OPT_VERBOSE },
	{ "no-pool", no_argument, NULL, OPT_NO_POOL },
	{ "large-block", required_argument, NULL, OPT_LARGE_BLOCK },
	{ "show-stats", no_argument, NULL, OPT_SHOW_STATS },
	{ "tombstones", required_argument, NULL, OPT_TOMBSTONES },
	{ "shim-log-file", required_argument, NULL, OPT_SHIM_LOG },
	{ "num-callers", required_argument, NULL, OPT_NUM_CALLERS },
	{ "no-wait-descendants", no_argument, NULL, OPT_NO_WAIT },
	{ "require-cuda", no_argument, NULL, OPT_REQUIRE_CUDA },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static const char usage_text[] =
"Usage: " AU_PROG " [options] [--] program [args...]\n"
"       " AU_PROG " [output options] report FILE|DIR...\n"
"\n"
"Runs program (and every process it starts) under the cuwarden shim and\n"
"reports every GPU allocation never freed and every broken contract.\n"
"\n"
"Output:\n"
"  --log-file FILE          text report to FILE (default: stderr)\n"
"  --json FILE              merged JSON document (cuwarden-audit v1)\n"
"  --sarif FILE             SARIF 2.1.0 for code scanning\n"
"  --html FILE              one self-contained HTML page\n"
"  --num-callers N          frames printed per stack in text (0 = all)\n"
"  --require-cuda           fail (125) when no process used CUDA\n"
"  --error-exitcode N       exit status when something is reported\n"
"                           (default 23; 0 = never fail)\n"
"Filtering:\n"
"  --suppressions FILE      rules (leak:PAT, owner:PAT, violation:TYPE:PAT)\n"
"  --no-builtin-suppressions  report CUDA libraries' own allocations too\n"
"  --print-builtin-suppressions  list the built-in rules and exit\n"
"  --gen-suppressions       print a rule for every finding\n"
"  --baseline FILE          report only findings not in FILE (a --json)\n"
"Running:\n"
"  --preload PATH           the shim to use (default: this installation's)\n"
"  --keep-reports DIR       keep the per-process reports in DIR\n"
"  --no-wait-descendants    do not wait for processes the program left\n"
"Shim options (CUWARDEN_* variables of the program):\n"
"  --mode audit|pool        track only, or also serve from cuwarden's pools\n"
"  --stack-depth N          frames captured per stack (0..64, default 24)\n"
"  --on-violation report|abort\n"
"  --owner-skip PATTERNS    ':'-separated modules skipped naming owners\n"
"  --pool-limit SIZE        pool mode: bytes per device (K/M/G suffixes)\n"
"  --no-pool                pool mode off: straight to the driver\n"
"  --large-block SIZE       blocks with their own segment (default 2M)\n"
"  --check-bounds           check cuMemcpy*/cuMemset* ranges\n"
"  --tombstones N           freed allocations remembered\n"
"  --show-stats             the shim prints its statistics at exit\n"
"  --verbose[=N]            shim log level (0..3)\n"
"  --shim-log-file FILE     the shim's own messages to FILE\n"
"\n"
"  --help, --version\n"
"\n"
"Exit status: the program's own when nothing is reported; the error\n"
"exit code when something is; 125 when the audit failed or the command\n"
"line is wrong; 126/127 when the program cannot run / is not found.\n"
"See cuwarden-audit(1).\n";

typedef struct cfg_s {
	au_run_opts_t run;
	const char *json, *sarif, *html, *log_file, *baseline;
	const char **supp_files;
	size_t nsupp;
	bool builtin, gen_supp, require_cuda;
	long error_exitcode;
	long num_callers;
	int verbose;
	bool shim_opts; /* a shim option was given */
} cfg_t;

/* The library's range of each CUWARDEN_* variable (lib/options.def), so
 * that the tool refuses what the shim would (it would warn and take the
 * default). */
static const struct {
	const char *name;
	long long min, max;
} lib_ranges[] = {
#define OPTION(n, kind, def, lo, hi, words, doc) { #n, (lo), (hi) },
#include "options.def"
#undef OPTION
};

static int
usage_error(const char *fmt, const char *arg)
{
	char *esc = text_escape(arg);

	fputs(AU_PROG ": ", stderr);
	fprintf(stderr, fmt, esc);
	fputs("\nTry '" AU_PROG " --help'.\n", stderr);
	free(esc);
	return AU_EXIT_USAGE;
}

/* arg as the value of the LONG variable CUWARDEN_<name> (options.def's
 * range) into *v; a usage error (its status) naming opt if out of it, 0
 * if in. */
static int
lib_long(const char *opt, const char *name, const char *arg, long *v)
{
	for (size_t i = 0; i < sizeof(lib_ranges) / sizeof(lib_ranges[0]); i++) {
		if (strcmp(lib_ranges[i].name, name) != 0)
			continue;
		if (!parse_long(arg, (long)lib_ranges[i].min,
		    (long)lib_ranges[i].max, v))
			return 0;
		char *esc = text_escape(arg);
		fprintf(stderr, AU_PROG ": %s: \"%s\" is not a number from "
		    "%lld to %lld\nTry '" AU_PROG " --help'.\n", opt, esc,
		    lib_ranges[i].min, lib_ranges[i].max);
		free(esc);
		return AU_EXIT_USAGE;
	}
	abort(); /* a name not in the table: a bug of this file */
}

static void
set_env(cfg_t *c, const char *name, const char *value)
{
	size_t i, len = strlen(name);

	for (i = 0; i < c->run.nenv; i++)
		if (strncmp(c->run.env[i], name, len) == 0 &&
		    c->run.env[i][len] == '=') {
			free(c->run.env[i]);
			c->run.env[i] = xasprintf("%s=%s", name, value);
			return;
		}
	c->run.env = xrealloc(c->run.env,
	    (c->run.nenv + 1) * sizeof(*c->run.env));
	c->run.env[c->run.nenv++] = xasprintf("%s=%s", name, value);
	c->shim_opts = true;
}

/* Returns -1 to go on, else the exit status. */
static int
parse_options(cfg_t *c, int argc, char **argv)
{
	unsigned long long sz;
	long v;
	int st;
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:hvV", long_opts, NULL)) !=
	    -1) {
		switch (opt) {
		case OPT_PRELOAD:
			c->run.preload = optarg;
			break;
		case OPT_KEEP:
			c->run.keep_reports = optarg;
			break;
		case OPT_JSON:
			c->json = optarg;
			break;
		case OPT_SARIF:
			c->sarif = optarg;
			break;
		case OPT_HTML:
			c->html = optarg;
			break;
		case OPT_LOG:
			c->log_file = optarg;
			break;
		case OPT_ERROR_EXIT:
			if (parse_long(optarg, 0, 255, &c->error_exitcode))
				return usage_error("--error-exitcode: \"%s\" "
				    "is not a number from 0 to 255", optarg);
			break;
		case OPT_SUPP:
			c->supp_files = xrealloc(c->supp_files,
			    (c->nsupp + 1) * sizeof(*c->supp_files));
			c->supp_files[c->nsupp++] = optarg;
			break;
		case OPT_NO_BUILTIN:
			c->builtin = false;
			break;
		case OPT_PRINT_BUILTIN:
			supp_print_builtin(stdout);
			return 0;
		case OPT_GEN_SUPP:
			c->gen_supp = true;
			break;
		case OPT_BASELINE:
			c->baseline = optarg;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "audit") && strcmp(optarg, "pool"))
				return usage_error("--mode: \"%s\" is neither "
				    "audit nor pool", optarg);
			set_env(c, "CUWARDEN_MODE", optarg);
			break;
		case OPT_STACK_DEPTH:
			if ((st = lib_long("--stack-depth", "STACK_DEPTH",
			    optarg, &v)) != 0)
				return st;
			set_env(c, "CUWARDEN_STACK_DEPTH", optarg);
			break;
		case OPT_ON_VIOLATION:
			if (strcmp(optarg, "report") && strcmp(optarg,
			    "abort"))
				return usage_error("--on-violation: \"%s\" is "
				    "neither report nor abort", optarg);
			set_env(c, "CUWARDEN_ON_VIOLATION", optarg);
			break;
		case OPT_OWNER_SKIP:
			set_env(c, "CUWARDEN_OWNER_SKIP", optarg);
			break;
		case OPT_POOL_LIMIT:
			if (parse_size(optarg, &sz))
				return usage_error("--pool-limit: \"%s\" is "
				    "not a size (e.g. 4G, 512M)", optarg);
			set_env(c, "CUWARDEN_POOL_LIMIT", optarg);
			break;
		case OPT_LARGE_BLOCK:
			if (parse_size(optarg, &sz) || sz == 0)
				return usage_error("--large-block: \"%s\" is "
				    "not a size (e.g. 2M)", optarg);
			set_env(c, "CUWARDEN_LARGE_BLOCK", optarg);
			break;
		case OPT_CHECK_BOUNDS:
			set_env(c, "CUWARDEN_CHECK_BOUNDS", "1");
			break;
		case OPT_NO_POOL:
			set_env(c, "CUWARDEN_POOL", "0");
			break;
		case OPT_SHOW_STATS:
			set_env(c, "CUWARDEN_SHOW_STATS", "1");
			break;
		case OPT_TOMBSTONES:
			if ((st = lib_long("--tombstones", "TOMBSTONES",
			    optarg, &v)) != 0)
				return st;
			set_env(c, "CUWARDEN_TOMBSTONES", optarg);
			break;
		case 'v':
		case OPT_VERBOSE: {
			char buf[8];

			if (optarg != NULL) {
				if ((st = lib_long("--verbose", "VERBOSE",
				    optarg, &v)) != 0)
					return st;
				c->verbose = (int)v;
			} else if (c->verbose < 3) {
				c->verbose++;
			}
			snprintf(buf, sizeof(buf), "%d", c->verbose);
			set_env(c, "CUWARDEN_VERBOSE", buf);
			break;
		}
		case OPT_SHIM_LOG:
			set_env(c, "CUWARDEN_LOG_FILE", optarg);
			break;
		case OPT_NUM_CALLERS:
			if (parse_long(optarg, 0, 1000, &c->num_callers))
				return usage_error("--num-callers: \"%s\" is "
				    "not a count", optarg);
			break;
		case OPT_REQUIRE_CUDA:
			c->require_cuda = true;
			break;
		case OPT_NO_WAIT:
			c->run.wait_descendants = false;
			break;
		case 'h':
		case OPT_HELP:
			fputs(usage_text, stdout);
			fputs("\nBuilt-in suppressions:\n", stdout);
			supp_print_builtin(stdout);
			return 0;
		case 'V':
		case OPT_VERSION:
			printf(AU_PROG " (cuwarden) %s\n", PACKAGE_VERSION);
			return 0;
		case ':':
			return usage_error("option %s needs a value",
			    argv[optind - 1]);
		default:
			return usage_error("unknown option %s",
			    argv[optind - 1]);
		}
	}
	return -1;
}

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

static int
distinct_error(const char *n1, const char *p1, const char *n2,
    const char *p2)
{
	char *msg = xasprintf("%s %s and %s %s name one file: give each "
	    "output its own", n1, p1, n2, p2);
	int rc = usage_error("%s", msg);

	free(msg);
	return rc;
}

/* Two outputs naming one file (also as "./a" and "a", through a linked
 * directory, or /dev/null twice) would overwrite each other: a usage
 * error.  Returns -1 to go on, else the exit status. */
static int
check_distinct(const cfg_t *c)
{
	const char *name[] = { "--log-file", "--json", "--sarif", "--html" };
	const char *path[] = { c->log_file, c->json, c->sarif, c->html };
	size_t i, j;

	for (i = 0; i < 4; i++)
		for (j = i + 1; j < 4; j++)
			if (path[i] != NULL && path[j] != NULL &&
			    (strcmp(path[i], path[j]) == 0 ||
			    out_same(path[i], path[j])))
				return distinct_error(name[i], path[i],
				    name[j], path[j]);
	return -1;
}

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
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
	cfg_t c;
	au_model_t m;
	au_supp_t *supp = NULL;
	au_baseline_t *base = NULL;
	au_render_opts_t ro;
	au_totals_t t;
	char err[4096];
	au_out_t logout;
	FILE *log = stderr;
	bool report_cmd = false, log_open = false;
	int rc, status, m_signal = 0;
	size_t i;

	memset(&c, 0, sizeof(c));
	memset(&m, 0, sizeof(m));
	c.builtin = true;
	c.error_exitcode = AU_EXIT_DEFAULT_ERROR;
	c.run.wait_descendants = true;
	m.exit_status = -1;
	rc = parse_options(&c, argc, argv);
	if (rc >= 0)
		goto out;
	if (optind < argc && strcmp(argv[optind], "report") == 0 &&
	    strcmp(argv[optind - 1], "--") != 0) {
		report_cmd = true;
		optind++;
		if (optind >= argc) {
			rc = usage_error("%s", "report: give the report files "
			    "(or directories) to read");
			goto out;
		}
		if (c.shim_opts || c.run.preload || c.run.keep_reports) {
			rc = usage_error("%s", "report: the shim and run "
			    "options apply only when running a program");
			goto out;
		}
	} else if (optind >= argc) {
		rc = usage_error("%s", "missing program: " AU_PROG
		    " [options] [--] program [args...]");
		goto out;
	}

	if ((rc = check_distinct(&c)) >= 0)
		goto out;

	/* Everything that can be wrong with our own inputs, before the
	 * program runs. */
	supp = supp_new();
	if (c.builtin)
		supp_add_builtin(supp);
	for (i = 0; i < c.nsupp; i++)
		if (supp_load(supp, c.supp_files[i], err, sizeof(err))) {
			au_error("%s", err);
			rc = AU_EXIT_AUDIT_FAILED;
			goto out;
		}
	if (c.baseline != NULL) {
		base = baseline_load(c.baseline, err, sizeof(err));
		if (base == NULL) {
			au_error("--baseline: %s", err);
			rc = AU_EXIT_AUDIT_FAILED;
			goto out;
		}
	}
	if (check_writable("--json", c.json) ||
	    check_writable("--sarif", c.sarif) ||
	    check_writable("--html", c.html)) {
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
	}

	if (report_cmd) {
		rc = read_reports(&m, argc - optind, argv + optind);
	} else {
		m.command = json_array();
		for (i = (size_t)optind; i < (size_t)argc; i++)
			json_array_append_new(m.command, json_utf8(argv[i]));
		rc = run_program(&c.run, argv + optind, &m);
	}
	if (rc != 0)
		goto out;
	if (report_cmd && m.nprocs == 0) {
		au_error("report: no report files found");
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}

	symbolize_model(&m);
	fingerprint_symbolic(&m);
	supp_apply(supp, &m);
	if (base != NULL)
		baseline_apply(base, &m);
	model_sort(&m);

	memset(&ro, 0, sizeof(ro));
	ro.supp = supp;
	ro.baseline = c.baseline;
	ro.stack_limit = (int)c.num_callers;
	render_text(&m, &ro, log);
	if (c.gen_supp)
		supp_generate(&m, log);
	fflush(log);
	if ((c.json != NULL && render_json(&m, &ro, c.json)) ||
	    (c.sarif != NULL && render_sarif(&m, &ro, c.sarif)) ||
	    (c.html != NULL && render_html(&m, &ro, c.html))) {
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}

	model_totals(&m, &t);
	if (c.require_cuda && t.cuda_active == 0) {
		au_error("--require-cuda: no CUDA activity seen in %llu "
		    "process%s: nothing GPU-related was audited",
		    (unsigned long long)t.processes,
		    t.processes == 1 ? "" : "es");
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}
	status = m.ran && m.exit_status >= 0 ? m.exit_status : 0;
	if (t.errors > 0 && c.error_exitcode != 0) {
		char b1[96];

		status = (int)c.error_exitcode;
		/* Why the job failed, where CI shows it: the last line. */
		fprintf(log, "== EXIT STATUS: %d (%s reported", status,
		    fmt_sum(t.errors, t.errors == 1 ? "error" : "errors",
		    false, b1, sizeof(b1)));
		if (m.ran && m.exit_status >= 0)
			fprintf(log, "; the program exited with %d",
			    m.exit_status);
		fputs(")\n", log);
	}
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
	supp_free(supp);
	baseline_free(base);
	symbolize_done();
	for (i = 0; i < c.run.nenv; i++)
		free(c.run.env[i]);
	free(c.run.env);
	free(c.supp_files);
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
