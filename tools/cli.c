/*
 * cli.c -- cuwarden-audit's command line: the option table, each
 * option's checks and the configuration it fills (the shim options become
 * CUWARDEN_* variables of the program), the command word (`report` or a
 * program) and the outputs checked to be distinct.  The usage texts are
 * cli_help.c's, the parsing of values cli_value.c's (cli_int.h).  Every
 * message here is a usage error (AU_EXIT_USAGE) on stderr.
 *
 * Options are valgrind's style as getopt_long gives it: --opt=VALUE or
 * --opt VALUE for an option that takes a value, --opt=VALUE only for an
 * optional value; a flag that valgrind users write --flag=yes takes an
 * optional =yes|no.
 */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cli.h"
#include "cli_int.h"
#include "editdist.h" /* lib/editdist.h: inline only */
#include "num.h"
#include "options_int.h" /* KIB..TIB: options.def writes sizes with them */
#include "out.h"
#include "snapshot.h"
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
	OPT_ALLOW_MISSING_RANKS,
	OPT_BASELINE_MATCH,
	OPT_PLAIN_SUMMARY,
	OPT_QUIET, OPT_PRINT_LIMIT, OPT_ERROR_LIMIT, OPT_DEMANGLE,
	OPT_SHOW_KINDS, OPT_COLOR, OPT_HELP_ALL,
	OPT_JUNIT, OPT_TIMELINE, OPT_SEE_THROUGH, OPT_TRACE,
};

static const struct option long_opts[] = {
	{ "preload", required_argument, NULL, OPT_PRELOAD },
	{ "keep-reports", required_argument, NULL, OPT_KEEP },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "sarif", required_argument, NULL, OPT_SARIF },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "junit", required_argument, NULL, OPT_JUNIT },
	{ "trace", required_argument, NULL, OPT_TRACE },
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
	{ "check-bounds", optional_argument, NULL, OPT_CHECK_BOUNDS },
	{ "timeline", optional_argument, NULL, OPT_TIMELINE },
	{ "verbose", optional_argument, NULL, OPT_VERBOSE },
	{ "no-pool", no_argument, NULL, OPT_NO_POOL },
	{ "large-block", required_argument, NULL, OPT_LARGE_BLOCK },
	{ "show-stats", optional_argument, NULL, OPT_SHOW_STATS },
	{ "tombstones", required_argument, NULL, OPT_TOMBSTONES },
	{ "shim-log-file", required_argument, NULL, OPT_SHIM_LOG },
	{ "num-callers", required_argument, NULL, OPT_NUM_CALLERS },
	{ "plain-summary", optional_argument, NULL, OPT_PLAIN_SUMMARY },
	{ "no-wait-descendants", no_argument, NULL, OPT_NO_WAIT },
	{ "see-through", optional_argument, NULL, OPT_SEE_THROUGH },
	{ "require-cuda", optional_argument, NULL, OPT_REQUIRE_CUDA },
	{ "accept-teardown", optional_argument, NULL, OPT_ACCEPT_TEARDOWN },
	{ "allow-missing-reports", optional_argument, NULL,
	    OPT_ALLOW_MISSING },
	{ "allow-missing-ranks", optional_argument, NULL,
	    OPT_ALLOW_MISSING_RANKS },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "print-limit", required_argument, NULL, OPT_PRINT_LIMIT },
	{ "error-limit", required_argument, NULL, OPT_ERROR_LIMIT },
	{ "demangle", required_argument, NULL, OPT_DEMANGLE },
	{ "show-leak-kinds", required_argument, NULL, OPT_SHOW_KINDS },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "help-all", no_argument, NULL, OPT_HELP_ALL },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

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

static int
usage_msg(char *msg)
{
	int rc = usage_error("%s", msg);

	free(msg);
	return rc;
}

/* A flag's optional value (--flag=yes|no; none: yes) into *v.  Returns
 * -1 to go on, else the exit status after a message. */
static int
flag(const char *opt, bool *v)
{
	if (optarg == NULL) {
		*v = true;
		return -1;
	}
	if (!cli_yesno(optarg, v))
		return -1;
	return usage_msg(xasprintf("%s: \"%s\" is neither yes nor no", opt,
	    optarg));
}

/* An output file's name (--json, --sarif, --html, --junit, --trace: slot
 * i of c->out_bufs), its %-patterns expanded as --log-file's (%p, %r,
 * %h, %j, %q{VAR}: a job's ranks write one file each) into *dst.  Returns -1
 * to go on, else the exit status after a message. */
static int
out_pattern(au_cfg_t *c, size_t i, const char *opt, const char **dst)
{
	char *why, *path = cli_log_pattern(optarg, &why);

	if (path == NULL) {
		int st = usage_msg(xasprintf("%s %s: %s", opt, optarg, why));

		free(why);
		return st;
	}
	free(c->out_bufs[i]);
	*dst = c->out_bufs[i] = path;
	return -1;
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
	bool b;
	char *why, *path;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:hqvV", long_opts, NULL)) !=
	    -1) {
		switch (opt) {
		case OPT_PRELOAD:
			c->run.preload = optarg;
			break;
		case OPT_KEEP:
			c->run.keep_reports = optarg;
			break;
		case OPT_JSON:
			if ((st = out_pattern(c, 0, "--json", &c->json)) >= 0)
				return st;
			break;
		case OPT_SARIF:
			if ((st = out_pattern(c, 1, "--sarif", &c->sarif)) >= 0)
				return st;
			break;
		case OPT_HTML:
			if ((st = out_pattern(c, 2, "--html", &c->html)) >= 0)
				return st;
			break;
		case OPT_JUNIT:
			if ((st = out_pattern(c, 3, "--junit", &c->junit)) >= 0)
				return st;
			break;
		case OPT_TRACE:
			if ((st = out_pattern(c, 4, "--trace", &c->trace)) >= 0)
				return st;
			break;
		case OPT_LOG:
			if ((path = cli_log_pattern(optarg, &why)) == NULL) {
				st = usage_msg(xasprintf("--log-file %s: %s",
				    optarg, why));
				free(why);
				return st;
			}
			free(c->log_file_buf);
			c->log_file = c->log_file_buf = path;
			break;
		case OPT_ERROR_EXIT:
			if (parse_long(optarg, 0, 255, &c->error_exitcode))
				return usage_error("--error-exitcode: \"%s\" "
				    "is not a number from 0 to 255", optarg);
			c->error_exitcode_set = true;
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
			if ((st = flag("--check-bounds", &b)) >= 0)
				return st;
			set_env(c, "CUWARDEN_CHECK_BOUNDS", b ? "1" : "0");
			break;
		case OPT_TIMELINE:
			if ((st = flag("--timeline", &b)) >= 0)
				return st;
			set_env(c, "CUWARDEN_TIMELINE", b ? "1" : "0");
			break;
		case OPT_NO_POOL:
			set_env(c, "CUWARDEN_POOL", "0");
			break;
		case OPT_SHOW_STATS:
			if ((st = flag("--show-stats", &b)) >= 0)
				return st;
			set_env(c, "CUWARDEN_SHOW_STATS", b ? "1" : "0");
			break;
		case OPT_TOMBSTONES:
			if ((st = lib_long("--tombstones", "TOMBSTONES",
			    optarg, &v)) != 0)
				return st;
			set_env(c, "CUWARDEN_TOMBSTONES", optarg);
			break;
		case 'q':
		case OPT_QUIET:
			c->verbosity = -1;
			break;
		case 'v':
		case OPT_VERBOSE:
			/* The tool's detail, and the shim's log level (set in
			 * the program by cli_parse: not for `report`). */
			if (optarg != NULL) {
				if ((st = lib_long("--verbose", "VERBOSE",
				    optarg, &v)) != 0)
					return st;
				c->shim_verbose = (int)v;
				c->verbosity = v > 0 ? 1 : 0;
				break;
			}
			c->verbosity++;
			if (c->shim_verbose < 3)
				c->shim_verbose = c->shim_verbose < 0 ? 1 :
				    c->shim_verbose + 1;
			break;
		case OPT_SHIM_LOG:
			set_env(c, "CUWARDEN_LOG_FILE", optarg);
			break;
		case OPT_NUM_CALLERS:
			if (parse_long(optarg, 0, 1000, &c->num_callers))
				return usage_error("--num-callers: \"%s\" is "
				    "not a count", optarg);
			break;
		case OPT_PRINT_LIMIT:
			if (parse_long(optarg, 0, LONG_MAX, &c->print_limit))
				return usage_error("--print-limit: \"%s\" is "
				    "not a count (0: every group)", optarg);
			break;
		case OPT_ERROR_LIMIT:
			if (cli_yesno(optarg, &b))
				return usage_error("--error-limit: \"%s\" is "
				    "neither yes nor no", optarg);
			c->print_limit = b ? CLI_ERROR_LIMIT : 0;
			break;
		case OPT_DEMANGLE:
			if (cli_yesno(optarg, &c->demangle))
				return usage_error("--demangle: \"%s\" is "
				    "neither yes nor no", optarg);
			break;
		case OPT_SHOW_KINDS:
			if ((why = cli_leak_kinds(optarg, &c->show_kinds)) !=
			    NULL) {
				st = usage_msg(xasprintf("--show-leak-kinds: "
				    "\"%s\" is not a category: give all, none "
				    "or a comma-separated list of leak (or "
				    "definite), teardown, address_range, "
				    "suppressed", why));
				free(why);
				return st;
			}
			break;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") == 0)
				c->color = AU_COLOR_AUTO;
			else if (strcmp(optarg, "always") == 0)
				c->color = AU_COLOR_ALWAYS;
			else if (strcmp(optarg, "never") == 0)
				c->color = AU_COLOR_NEVER;
			else
				return usage_error("--color: \"%s\" is none of "
				    "auto, always, never", optarg);
			break;
		case OPT_REQUIRE_CUDA:
			if ((st = flag("--require-cuda", &c->require_cuda)) >=
			    0)
				return st;
			break;
		case OPT_PLAIN_SUMMARY:
			if ((st = flag("--plain-summary", &c->plain_summary))
			    >= 0)
				return st;
			break;
		case OPT_ACCEPT_TEARDOWN:
			if ((st = flag("--accept-teardown",
			    &c->accept_teardown)) >= 0)
				return st;
			break;
		case OPT_NO_WAIT:
			c->run.wait_descendants = false;
			break;
		case OPT_SEE_THROUGH:
			if ((st = flag("--see-through", &c->run.see_through))
			    >= 0)
				return st;
			c->shim_opts = true; /* a run's only */
			break;
		case OPT_ALLOW_MISSING:
			if ((st = flag("--allow-missing-reports",
			    &c->run.allow_missing)) >= 0)
				return st;
			break;
		case OPT_ALLOW_MISSING_RANKS:
			if ((st = flag("--allow-missing-ranks",
			    &c->allow_missing_ranks)) >= 0)
				return st;
			break;
		case 'h':
		case OPT_HELP:
			cli_help_short(stdout);
			return 0;
		case OPT_HELP_ALL:
			cli_help_all(stdout);
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
	    "--gen-suppressions", "--junit", "--trace" };
	const char *path[] = { c->log_file, c->json, c->sarif, c->html,
	    c->gen_supp_file, c->junit, c->trace };
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

/* A VALUE of a command's own option at argv[*i]: "--opt=VALUE" or
 * "--opt VALUE".  Returns it (advancing *i past it), or NULL when
 * argv[*i] is not --opt; *missing when --opt has no value. */
static const char *
own_opt(const char *opt, int argc, char **argv, int *i, bool *missing)
{
	size_t n = strlen(opt);
	const char *a = argv[*i];

	*missing = false;
	if (strncmp(a, opt, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	*i += 1;
	return argv[*i];
}

/* `snapshot PID [--wait SECONDS]` at argv[optind].  Returns -1 to go
 * on, else the exit status. */
static int
parse_snapshot(au_cfg_t *c, int argc, char **argv)
{
	bool pid_seen = false, missing;
	const char *v;

	c->snapshot_cmd = true;
	c->snap_wait = SNAPSHOT_WAIT_S;
	for (int i = optind + 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") ==
		    0) {
			cli_help_snapshot(stdout);
			return 0;
		}
		if ((v = own_opt("--wait", argc, argv, &i, &missing)) !=
		    NULL || missing) {
			if (missing || parse_long(v, 1, 86400, &c->snap_wait))
				return usage_error("snapshot --wait: \"%s\" is "
				    "not a number of seconds from 1 to 86400",
				    missing ? "" : v);
			continue;
		}
		if (pid_seen || parse_long(argv[i], 1, INT32_MAX,
		    &c->snap_pid))
			return usage_error("snapshot: \"%s\" is not a process "
			    "id (snapshot PID [--wait SECONDS])", argv[i]);
		pid_seen = true;
	}
	if (!pid_seen)
		return usage_error("%s", "snapshot: give the process id "
		    "(snapshot PID [--wait SECONDS])");
	/* A live allocation of a running process is no error. */
	if (!c->error_exitcode_set)
		c->error_exitcode = 0;
	return -1;
}

/* `diff A B [--json FILE] [--error-exitcode N]` at argv[optind].
 * Returns -1 to go on, else the exit status. */
static int
parse_diff(au_cfg_t *c, int argc, char **argv)
{
	bool missing;
	const char *v;
	int n = 0;

	c->diff_cmd = true;
	c->args = xcalloc(2, sizeof(*c->args));
	c->args_owned = true;
	for (int i = optind + 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") ==
		    0) {
			cli_help_diff(stdout);
			return 0;
		}
		if ((v = own_opt("--json", argc, argv, &i, &missing)) !=
		    NULL || missing) {
			if (missing || *v == '\0')
				return usage_error("%s", "diff --json: give a "
				    "file name");
			c->json = v;
			continue;
		}
		if ((v = own_opt("--error-exitcode", argc, argv, &i,
		    &missing)) != NULL || missing) {
			if (missing || parse_long(v, 0, 255,
			    &c->error_exitcode))
				return usage_error("diff --error-exitcode: "
				    "\"%s\" is not a number from 0 to 255",
				    missing ? "" : v);
			c->error_exitcode_set = true;
			continue;
		}
		if (n == 2)
			return usage_error("diff: \"%s\" is one file too many "
			    "(diff A B)", argv[i]);
		c->args[n++] = argv[i];
	}
	if (n != 2)
		return usage_error("%s", "diff: give two reports (diff A B)");
	c->nargs = 2;
	/* Growth fails nothing unless asked (--error-exitcode). */
	if (!c->error_exitcode_set)
		c->error_exitcode = 0;
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
	c->print_limit = CLI_ERROR_LIMIT;
	c->demangle = true;
	c->shim_verbose = -1;
	rc = parse_options(c, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind < argc && (strcmp(argv[optind], "snapshot") == 0 ||
	    strcmp(argv[optind], "diff") == 0) &&
	    strcmp(argv[optind - 1], "--") != 0) {
		if (c->shim_opts || c->run.preload || c->run.keep_reports)
			return usage_error("%s: the shim and run options apply "
			    "only when running a program", argv[optind]);
		rc = argv[optind][0] == 's' ? parse_snapshot(c, argc, argv) :
		    parse_diff(c, argc, argv);
		if (rc >= 0)
			return rc;
		c->run.quiet = c->verbosity < 0;
		return check_distinct(c);
	}
	if (optind < argc && strcmp(argv[optind], "report") == 0 &&
	    strcmp(argv[optind - 1], "--") != 0) {
		c->report_cmd = true;
		optind++;
		if (optind < argc && (strcmp(argv[optind], "--help") == 0 ||
		    strcmp(argv[optind], "-h") == 0)) {
			cli_help_report(stdout);
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
	if (c->shim_verbose >= 0 && !c->report_cmd) {
		char buf[16];

		snprintf(buf, sizeof(buf), "%d", c->shim_verbose);
		set_env(c, "CUWARDEN_VERBOSE", buf);
	}
	c->run.quiet = c->verbosity < 0;
	c->args = argv + optind;
	c->nargs = argc - optind;
	/* A document on our stdout: the program's goes to stderr. */
	c->run.stdout_to_stderr = (c->json && out_is_stdout(c->json)) ||
	    (c->sarif && out_is_stdout(c->sarif)) ||
	    (c->html && out_is_stdout(c->html)) ||
	    (c->junit && out_is_stdout(c->junit)) ||
	    (c->trace && out_is_stdout(c->trace)) ||
	    (c->gen_supp_file && out_is_stdout(c->gen_supp_file));
	return check_distinct(c);
}

void
cli_free(au_cfg_t *c)
{
	for (size_t i = 0; i < c->run.nenv; i++)
		free(c->run.env[i]);
	free(c->run.env);
	free(c->run.see_unsuppressed);
	free(c->supp_files);
	free(c->log_file_buf);
	for (size_t i = 0; i < sizeof(c->out_bufs) / sizeof(c->out_bufs[0]);
	    i++)
		free(c->out_bufs[i]);
	if (c->args_owned)
		free(c->args);
}
