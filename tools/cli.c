/*
 * cli.c -- cuwarden-audit's command line: the option table, the --help
 * text, each option's checks and the configuration it fills (the shim
 * options become CUWARDEN_* variables of the program), the command word
 * (`report` or a program) and the outputs checked to be distinct.
 * Every message here is a usage error (AU_EXIT_USAGE) on stderr.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cli.h"
#include "editdist.h" /* lib/editdist.h: inline only */
#include "num.h"
#include "options_int.h" /* KIB..TIB: options.def writes sizes with them */
#include "out.h"
#include "suppress.h"
#include "text.h"
#include "xalloc.h"

enum {
	OPT_PRELOAD = 256, OPT_KEEP, OPT_JSON, OPT_SARIF, OPT_HTML, OPT_LOG,
	OPT_ERROR_EXIT, OPT_SUPP, OPT_NO_BUILTIN, OPT_PRINT_BUILTIN,
	OPT_GEN_SUPP, OPT_BASELINE, OPT_MODE, OPT_STACK_DEPTH,
	OPT_ON_VIOLATION, OPT_OWNER_SKIP, OPT_POOL_LIMIT, OPT_CHECK_BOUNDS,
	OPT_VERBOSE, OPT_NO_POOL, OPT_LARGE_BLOCK, OPT_SHOW_STATS,
	OPT_TOMBSTONES, OPT_SHIM_LOG, OPT_NUM_CALLERS, OPT_NO_WAIT, OPT_HELP,
	OPT_VERSION, OPT_REQUIRE_CUDA, OPT_ACCEPT_TEARDOWN, OPT_ALLOW_MISSING,
	OPT_BASELINE_MATCH,
	OPT_PLAIN_SUMMARY,
	OPT_JUNIT,
};

static const struct option long_opts[] = {
	{ "preload", required_argument, NULL, OPT_PRELOAD },
	{ "keep-reports", required_argument, NULL, OPT_KEEP },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "sarif", required_argument, NULL, OPT_SARIF },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "junit", required_argument, NULL, OPT_JUNIT },
	{ "log-file", required_argument, NULL, OPT_LOG },
	{ "error-exitcode", required_argument, NULL, OPT_ERROR_EXIT },
	{ "suppressions", required_argument, NULL, OPT_SUPP },
	{ "no-builtin-suppressions", no_argument, NULL, OPT_NO_BUILTIN },
	{ "print-builtin-suppressions", no_argument, NULL, OPT_PRINT_BUILTIN },
	{ "gen-suppressions", optional_argument, NULL, OPT_GEN_SUPP },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "baseline-match", required_argument, NULL, OPT_BASELINE_MATCH },
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
	{ "plain-summary", no_argument, NULL, OPT_PLAIN_SUMMARY },
	{ "no-wait-descendants", no_argument, NULL, OPT_NO_WAIT },
	{ "require-cuda", no_argument, NULL, OPT_REQUIRE_CUDA },
	{ "accept-teardown", no_argument, NULL, OPT_ACCEPT_TEARDOWN },
	{ "allow-missing-reports", no_argument, NULL, OPT_ALLOW_MISSING },
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
"  --junit FILE             JUnit XML: a test case per process\n"
"                           (these five: FILE - is standard output)\n"
"  --num-callers N          frames printed per stack in text (0 = all)\n"
"  --plain-summary          LEAK and ERROR SUMMARY numbers ungrouped, as\n"
"                           compute-sanitizer writes them (for scripts)\n"
"  --require-cuda           fail (125) when no process used CUDA\n"
"  --allow-missing-reports  a process that used CUDA and left no report\n"
"                           (killed by SIGKILL) is listed, not a failure\n"
"  --error-exitcode N       exit status when something is reported\n"
"                           (default 23; 0 = never fail)\n"
"Filtering:\n"
"  --suppressions FILE      rules (leak:PAT, owner:PAT, violation:TYPE:PAT,\n"
"                           and { ... } call chains: see cuwarden-audit(1))\n"
"  --no-builtin-suppressions  report CUDA libraries' own allocations too\n"
"  --print-builtin-suppressions  list the built-in rules and exit\n"
"  --gen-suppressions[=FILE]  a call-chain rule for every finding group,\n"
"                           after the report (or to FILE)\n"
"  --baseline FILE          report only findings not in FILE (a --json)\n"
"  --baseline-match exact|function\n"
"                           a finding is in the baseline when its whole\n"
"                           stack is: every frame's function, file and\n"
"                           line (exact, the default), or the same with\n"
"                           lines aside (function: tolerates line shifts)\n"
"  --accept-teardown        memory freed only by context teardown is not\n"
"                           a leak (listed as accepted, not counted)\n"
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
"  report --help            the report command's own usage\n"
"\n"
"Exit status: the program's own when nothing is reported; the error\n"
"exit code when something is; 125 when the audit failed or the command\n"
"line is wrong; 126/127 when the program cannot run / is not found.\n"
"See cuwarden-audit(1).\n";

static const char report_usage_text[] =
"Usage: " AU_PROG " [output and filtering options] report FILE|DIR...\n"
"\n"
"Reads saved per-process reports (every file of each DIR, names starting\n"
"with '.' aside) and documents written by --json, merges them (the same\n"
"report given twice counts once) and reports them as a run would; nothing\n"
"is run.  Options go before the word report.\n"
"\n"
"Options: the Output and Filtering options of '" AU_PROG " --help';\n"
"the Running and Shim options apply only when running a program.\n"
"\n"
"Examples:\n"
"  " AU_PROG " --keep-reports out ./launcher; " AU_PROG " report out\n"
"  " AU_PROG " --html page.html report audit.json\n"
"\n"
"Exit status: 0 when nothing is reported; the error exit code (23) when\n"
"something is; 125 when a report cannot be read, none is found or the\n"
"command line is wrong.  See cuwarden-audit(1).\n";

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

/* An option getopt refused: a value given to an option that takes none,
 * a prefix of several options, or a misspelling (one or two edits from
 * an option: "did you mean"), else unknown.  word is the argument that
 * held it. */
static int
unknown_option(const char *word)
{
	const char *name = word + 2;
	size_t i, len, nprefix = 0;
	int best = 3, which = -1;
	char *list = NULL, *msg;
	int rc;

	if (optopt > 0 && optopt < 256) { /* a short option, maybe in -xyz */
		char opt[3] = { '-', (char)optopt, '\0' };

		return usage_error("unknown option %s", opt);
	}
	if (strncmp(word, "--", 2) != 0)
		return usage_error("unknown option %s", word);
	len = strcspn(name, "=");
	for (i = 0; long_opts[i].name != NULL; i++) {
		int d = edit_distance(name, len, long_opts[i].name);

		if (d < best) {
			best = d;
			which = (int)i;
		}
		if (len > 0 && strncmp(name, long_opts[i].name, len) == 0) {
			char *l = xasprintf("%s%s--%s", list ? list : "",
			    list ? ", " : "", long_opts[i].name);

			free(list);
			list = l;
			nprefix++;
		}
	}
	if (best == 0)
		msg = xasprintf("option --%s takes no value",
		    long_opts[which].name);
	else if (nprefix > 1)
		msg = xasprintf("option --%.*s is ambiguous: %s", (int)len,
		    name, list);
	else if (which >= 0 && best <= 2)
		msg = xasprintf("unknown option --%.*s (did you mean --%s?)",
		    (int)len, name, long_opts[which].name);
	else
		msg = xasprintf("unknown option --%.*s", (int)len, name);
	rc = usage_error("%s", msg);
	free(msg);
	free(list);
	return rc;
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
set_env(au_cfg_t *c, const char *name, const char *value)
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
parse_options(au_cfg_t *c, int argc, char **argv)
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
		case OPT_JUNIT:
			c->junit = optarg;
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
			/* valgrind's --gen-suppressions=yes|all|no are
			 * understood too: a file of that name is ./yes. */
			c->gen_supp = optarg == NULL ||
			    strcmp(optarg, "no") != 0;
			c->gen_supp_file = NULL;
			if (optarg != NULL && *optarg == '\0')
				return usage_error("%s", "--gen-suppressions=: "
				    "give a file name (or leave out the '=')");
			if (optarg != NULL && strcmp(optarg, "yes") != 0 &&
			    strcmp(optarg, "all") != 0 &&
			    strcmp(optarg, "no") != 0)
				c->gen_supp_file = optarg;
			break;
		case OPT_BASELINE:
			c->baseline = optarg;
			break;
		case OPT_BASELINE_MATCH:
			if (!baseline_match_parse(optarg, &c->baseline_match))
				return usage_error("--baseline-match: \"%s\" "
				    "is neither exact nor function", optarg);
			c->baseline_match_set = true;
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
		case OPT_PLAIN_SUMMARY:
			c->plain_summary = true;
			break;
		case OPT_ACCEPT_TEARDOWN:
			c->accept_teardown = true;
			break;
		case OPT_NO_WAIT:
			c->run.wait_descendants = false;
			break;
		case OPT_ALLOW_MISSING:
			c->run.allow_missing = true;
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
			return unknown_option(argv[optind - 1]);
		}
	}
	return -1;
}

static int
distinct_error(const char *n1, const char *p1, const char *n2,
    const char *p2)
{
	char *msg = out_is_stdout(p1) && out_is_stdout(p2) ?
	    xasprintf("%s - and %s -: only one output can go to standard "
	    "output", n1, n2) :
	    xasprintf("%s %s and %s %s name one file: give each output its "
	    "own", n1, p1, n2, p2);
	int rc = usage_error("%s", msg);

	free(msg);
	return rc;
}

/* Two outputs naming one file (also as "./a" and "a", through a linked
 * directory, or /dev/null twice) would overwrite each other: a usage
 * error.  Returns -1 to go on, else the exit status. */
static int
check_distinct(const au_cfg_t *c)
{
	const char *name[] = { "--log-file", "--json", "--sarif", "--html",
	    "--gen-suppressions", "--junit" };
	const char *path[] = { c->log_file, c->json, c->sarif, c->html,
	    c->gen_supp_file, c->junit };
	size_t i, j, n = sizeof(path) / sizeof(path[0]);

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (path[i] != NULL && path[j] != NULL &&
			    (strcmp(path[i], path[j]) == 0 ||
			    out_same(path[i], path[j])))
				return distinct_error(name[i], path[i],
				    name[j], path[j]);
	return -1;
}

int
cli_parse(au_cfg_t *c, int argc, char **argv)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->builtin = true;
	c->error_exitcode = AU_EXIT_DEFAULT_ERROR;
	c->run.wait_descendants = true;
	rc = parse_options(c, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind < argc && strcmp(argv[optind], "report") == 0 &&
	    strcmp(argv[optind - 1], "--") != 0) {
		c->report_cmd = true;
		optind++;
		if (optind < argc && (strcmp(argv[optind], "--help") == 0 ||
		    strcmp(argv[optind], "-h") == 0)) {
			fputs(report_usage_text, stdout);
			return 0;
		}
		if (optind >= argc)
			return usage_error("%s", "report: give the report "
			    "files (or directories) to read");
		if (c->shim_opts || c->run.preload || c->run.keep_reports)
			return usage_error("%s", "report: the shim and run "
			    "options apply only when running a program");
	} else if (optind >= argc) {
		return usage_error("%s", "missing program: " AU_PROG
		    " [options] [--] program [args...]");
	}
	if (c->baseline_match_set && c->baseline == NULL)
		return usage_error("%s", "--baseline-match: applies only "
		    "with --baseline FILE");
	c->args = argv + optind;
	c->nargs = argc - optind;
	/* A document on our stdout: the program's goes to stderr. */
	c->run.stdout_to_stderr = (c->json && out_is_stdout(c->json)) ||
	    (c->sarif && out_is_stdout(c->sarif)) ||
	    (c->html && out_is_stdout(c->html)) ||
	    (c->junit && out_is_stdout(c->junit)) ||
	    (c->gen_supp_file && out_is_stdout(c->gen_supp_file));
	return check_distinct(c);
}

void
cli_free(au_cfg_t *c)
{
	for (size_t i = 0; i < c->run.nenv; i++)
		free(c->run.env[i]);
	free(c->run.env);
	free(c->supp_files);
}
