/*
 * fuzz_options.c -- libFuzzer target for lib/options.c (and the %p path
 * expansion of lib/log.c that CUWARDEN_REPORT and CUWARDEN_LOG_FILE go
 * through).
 *
 * Each input is used twice:
 *   1. as a string (up to its first NUL) for options_parse_bool,
 *      options_parse_size, options_parse_long (bounds from the input's
 *      last bytes) and log_expand_path; every answer is compared with a
 *      reference parser written here from the documentation (options.h,
 *      cuwarden(7)): blanks trimmed, booleans exactly 1/yes/on/true/y
 *      and 0/no/off/false/n in any case, sizes with K/M/G/T (+ B or iB),
 *      overflow refused.
 *   2. as a list of records "<selector byte><value>\0" that become
 *      CUWARDEN_* variables (an option's name, a one-letter typo of one,
 *      or a raw name); then options_reset() and options_get/_get_str of
 *      every option: each value must be within its option's range (the
 *      table of options.def, restated below), equal to the reference parse
 *      of the variable when that is valid, and the default otherwise.
 * Warnings go to a sink through log_set_output (never to a file named by
 * a fuzzed CUWARDEN_LOG_FILE).  Any disagreement aborts.
 */
#include "preamble.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "options.h"

#define KIB 1024ULL
#define TIB (KIB * KIB * KIB * KIB)

typedef enum rkind_e { R_BOOL, R_LONG, R_SIZE, R_STRING, R_ENUM } rkind_t;

/* The documented table (options.def), restated independently. */
static const struct {
	const char *name;
	rkind_t kind;
	long long def, min, max;
	const char *words[3];
} ref[OPT_COUNT] = {
	[OPT_STACK_DEPTH] = { "STACK_DEPTH", R_LONG, 24, 0, 64, { 0 } },
	[OPT_REPORT] = { "REPORT", R_STRING, 0, 0, 0, { 0 } },
	[OPT_MODE] = { "MODE", R_ENUM, 0, 0, 1, { "audit", "pool" } },
	[OPT_ON_VIOLATION] = { "ON_VIOLATION", R_ENUM, 0, 0, 1,
	    { "report", "abort" } },
	[OPT_POOL] = { "POOL", R_BOOL, 1, 0, 1, { 0 } },
	[OPT_POOL_LIMIT] = { "POOL_LIMIT", R_SIZE, 0, 0, 1024 * TIB, { 0 } },
	[OPT_LARGE_BLOCK] = { "LARGE_BLOCK", R_SIZE, 2 * KIB * KIB, 4 * KIB,
	    1024 * TIB, { 0 } },
	[OPT_SHOW_STATS] = { "SHOW_STATS", R_BOOL, 0, 0, 1, { 0 } },
	[OPT_VERBOSE] = { "VERBOSE", R_LONG, 0, 0, 3, { 0 } },
	[OPT_LOG_FILE] = { "LOG_FILE", R_STRING, 0, 0, 0, { 0 } },
	[OPT_OWNER_SKIP] = { "OWNER_SKIP", R_STRING, 0, 0, 0, { 0 } },
	[OPT_PYTHON_FRAMES] = { "PYTHON_FRAMES", R_BOOL, 1, 0, 1, { 0 } },
	[OPT_PYTHON_TEST_VERSION] = { "PYTHON_TEST_VERSION", R_STRING, 0, 0, 0,
	    { 0 } },
	[OPT_TOMBSTONES] = { "TOMBSTONES", R_LONG, 65536, 0, 16 * 1024 * 1024,
	    { 0 } },
	[OPT_CHECK_BOUNDS] = { "CHECK_BOUNDS", R_BOOL, 0, 0, 1, { 0 } },
	[OPT_REPORT_FORMAT] = { "REPORT_FORMAT", R_ENUM, 0, 0, 1,
	    { "json", "text" } },
	[OPT_REPORT_ALWAYS] = { "REPORT_ALWAYS", R_BOOL, 0, 0, 1, { 0 } },
	[OPT_EXIT_REPORT] = { "EXIT_REPORT", R_ENUM, 0, 0, 2,
	    { "auto", "always", "never" } },
	[OPT_MARKER] = { "MARKER", R_STRING, 0, 0, 0, { 0 } },
	[OPT_SIGNALS] = { "SIGNALS", R_BOOL, 1, 0, 1, { 0 } },
	[OPT_POOL_ARENAS] = { "POOL_ARENAS", R_LONG, 0, 0, 4, { 0 } },
	[OPT_SNAPSHOT_SIGNAL] = { "SNAPSHOT_SIGNAL", R_STRING, 0, 0, 0, { 0 } },
	[OPT_CONTROL] = { "CONTROL", R_STRING, 0, 0, 0, { 0 } },
	[OPT_TIMELINE] = { "TIMELINE", R_BOOL, 0, 0, 1, { 0 } },
	[OPT_TIMELINE_LIMIT] = { "TIMELINE_LIMIT", R_SIZE, 256 * KIB * KIB,
	    KIB, 1024 * TIB, { 0 } },
	[OPT_TIMELINE_CLOCK] = { "TIMELINE_CLOCK", R_ENUM, 0, 0, 2,
	    { "auto", "monotonic", "tsc" } },
	[OPT_SEE_THROUGH] = { "SEE_THROUGH", R_BOOL, 0, 0, 1, { 0 } },
};

#define STR_MAX 4096 /* string options: at most STR_MAX - 1 bytes */

#define CHECK(c) \
	do { \
		if (!(c)) { \
			fprintf(stderr, "fuzz_options: check failed: %s " \
			    "(line %d)\n", #c, __LINE__); \
			abort(); \
		} \
	} while (0)

static unsigned long sink_lines;

static void
sink(const char *msg, void *arg)
{
	(void)arg;
	CHECK(msg != NULL && strlen(msg) < 8192);
	sink_lines++;
}

/* ------------------------------------------------------ reference parsers */

/* Copies s without leading ' '/'\t' and trailing ' '/'\t'/'\n' (the blanks
 * options.c trims) into buf (the caller sizes it). */
static char *
ref_trim(const char *s, char *buf)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
	    s[n - 1] == '\n'))
		n--;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

/* 1 true, 0 false, -1 invalid. */
static int
ref_bool(const char *s)
{
	static const char *const t[] = { "1", "yes", "on", "true", "y" };
	static const char *const f[] = { "0", "no", "off", "false", "n" };
	char *b = malloc(strlen(s) + 1);
	int r = -1;

	ref_trim(s, b);
	for (size_t i = 0; i < 5 && r < 0; i++) {
		if (strcasecmp(b, t[i]) == 0)
			r = 1;
		else if (strcasecmp(b, f[i]) == 0)
			r = 0;
	}
	free(b);
	return r;
}

/* Unsigned decimal of all of s (at least one digit).  false on error. */
static bool
ref_digits(const char *s, size_t n, unsigned __int128 *out)
{
	unsigned __int128 v = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > (unsigned __int128)ULLONG_MAX)
			return false;
	}
	*out = v;
	return true;
}

static bool
ref_size(const char *s, unsigned long long *out)
{
	char *b = malloc(strlen(s) + 1);
	size_t n, d = 0;
	unsigned __int128 v, mult = 1;
	bool ok = false;

	ref_trim(s, b);
	n = strlen(b);
	while (d < n && b[d] >= '0' && b[d] <= '9')
		d++;
	if (!ref_digits(b, d, &v))
		goto out;
	if (d < n) {
		const char *suf = b + d;
		const char *u = strchr("kmgt", suf[0] | 0x20);

		if (u != NULL && suf[0] != '\0') {
			mult = (unsigned __int128)1 << (10 * (u - "kmgt" + 1));
			suf++;
			if (!(suf[0] == '\0' || strcasecmp(suf, "b") == 0 ||
			    strcasecmp(suf, "ib") == 0))
				goto out;
		} else if (strcasecmp(suf, "b") != 0) {
			goto out;
		}
	}
	if (v * mult > (unsigned __int128)ULLONG_MAX)
		goto out;
	*out = (unsigned long long)(v * mult);
	ok = true;
out:
	free(b);
	return ok;
}

static bool
ref_long(const char *s, long long min, long long max, long long *out)
{
	char *b = malloc(strlen(s) + 1);
	const char *p;
	bool neg = false, ok = false;
	unsigned __int128 u;
	__int128 v;

	ref_trim(s, b);
	p = b;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (!ref_digits(p, strlen(p), &u))
		goto out;
	v = neg ? -(__int128)u : (__int128)u;
	if (v < (__int128)LLONG_MIN || v > (__int128)LLONG_MAX || v < min ||
	    v > max)
		goto out;
	*out = (long long)v;
	ok = true;
out:
	free(b);
	return ok;
}

static int
ref_enum(int o, const char *s)
{
	char *b = malloc(strlen(s) + 1);
	int r = -1;

	ref_trim(s, b);
	for (int i = 0; i < 3 && ref[o].words[i] != NULL; i++)
		if (strcasecmp(b, ref[o].words[i]) == 0)
			r = i;
	free(b);
	return r;
}

/* --------------------------------------------------------------- parsers */

static void
fuzz_parsers(const char *s, const uint8_t *data, size_t size)
{
	bool b = false;
	unsigned long long u = 0, ru = 0;
	long long l = 0, rl = 0, min = LLONG_MIN, max = LLONG_MAX;
	char path[64];
	int rb = ref_bool(s);

	CHECK(options_parse_bool(s, &b) == (rb < 0));
	if (rb >= 0)
		CHECK(b == (rb == 1));
	CHECK(options_parse_size(s, &u) == !ref_size(s, &ru));
	if (ref_size(s, &ru))
		CHECK(u == ru);
	if (size >= 16) {
		memcpy(&min, data + size - 16, 8);
		memcpy(&max, data + size - 8, 8);
	}
	CHECK(options_parse_long(s, min, max, &l) == !ref_long(s, min, max,
	    &rl));
	if (ref_long(s, min, max, &rl))
		CHECK(l == rl);

	/* %p expansion: NUL-terminated within the buffer, or an error. */
	memset(path, 'X', sizeof(path));
	if (!log_expand_path(s, path, 1 + (size % sizeof(path)))) {
		CHECK(memchr(path, '\0', 1 + (size % sizeof(path))) != NULL);
		CHECK(strlen(path) > 0);
	}
}

/* ----------------------------------------------------------- environment */

#define MAX_SET 32

/* The environment is built here and installed as `environ` for the read
 * (options.c reads environ): setenv would keep every distinct string
 * forever (glibc does, on purpose) and grow without bound. */
extern char **environ;
static char *vars[MAX_SET + 2];
static size_t nset;

static void
clear_env(void)
{
	for (size_t i = 0; i < nset; i++)
		free(vars[i]);
	nset = 0;
	vars[0] = NULL;
}

static void
set_var(const char *name, const char *value)
{
	size_t n = strlen(name);
	char *kv;

	if (nset == MAX_SET || n == 0 || strchr(name, '=') != NULL)
		return;
	for (size_t i = 0; i < nset; i++) {
		if (strncmp(vars[i], name, n) == 0 && vars[i][n] == '=') {
			/* As setenv: the last value wins. */
			free(vars[i]);
			vars[i] = vars[--nset];
			break;
		}
	}
	kv = malloc(n + strlen(value) + 2);
	CHECK(kv != NULL);
	sprintf(kv, "%s=%s", name, value);
	vars[nset++] = kv;
	vars[nset] = NULL;
}

/* getenv over vars. */
static const char *
get_var(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < nset; i++)
		if (strncmp(vars[i], name, n) == 0 && vars[i][n] == '=')
			return vars[i] + n + 1;
	return NULL;
}

static void
fuzz_environment(const uint8_t *data, size_t size)
{
	char **saved;
	size_t i = 0;

	clear_env();
	while (i < size && nset < MAX_SET) {
		uint8_t sel = data[i++];
		const char *v = (const char *)data + i;
		size_t n = strnlen(v, size - i);
		char *val = strndup(v, n), name[128];
		unsigned which = sel % (OPT_COUNT + 2);

		i += n + 1;
		if (which < OPT_COUNT) {
			snprintf(name, sizeof(name), "CUWARDEN_%s",
			    ref[which].name);
		} else if (which == OPT_COUNT) {
			/* A one-letter typo of an option's name. */
			const char *nm = ref[sel % OPT_COUNT].name;
			size_t len = strlen(nm);

			snprintf(name, sizeof(name), "CUWARDEN_%s", nm);
			name[9 + (sel / 3) % len] =
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_"[val[0] % 27u];
		} else {
			/* A raw name: the value up to its first ':'. */
			char *c = strchr(val, ':');

			snprintf(name, sizeof(name), "CUWARDEN_%.*s",
			    c != NULL ? (int)(c - val) : 0, val);
		}
		set_var(name, val);
		free(val);
	}

	saved = environ;
	environ = vars;
	options_reset();
	for (int o = 0; o < OPT_COUNT; o++) {
		char name[64];
		const char *env;
		long long got = options_get((option_t)o);
		const char *str = options_get_str((option_t)o);

		if (ref[o].name == NULL) { /* an option added to options.def */
			fprintf(stderr, "fuzz_options: ref[] has no entry for "
			    "%s: add one\n", options_name((option_t)o));
			abort();
		}
		snprintf(name, sizeof(name), "CUWARDEN_%s", ref[o].name);
		CHECK(strcmp(options_name((option_t)o), name) == 0);
		CHECK(options_default((option_t)o) == ref[o].def);
		env = get_var(name);
		if (env != NULL && env[0] == '\0')
			env = NULL; /* empty counts as unset */
		switch (ref[o].kind) {
		case R_STRING:
			CHECK(got == 0);
			if (env == NULL || strlen(env) >= STR_MAX)
				CHECK(str == NULL);
			else
				CHECK(str != NULL && strcmp(str, env) == 0);
			continue;
		case R_BOOL: {
			int r = env ? ref_bool(env) : -1;

			CHECK(got == (r >= 0 ? r : ref[o].def));
			CHECK(options_get_bool((option_t)o) == (got != 0));
			break;
		}
		case R_ENUM: {
			int r = env ? ref_enum(o, env) : -1;

			CHECK(got == (r >= 0 ? r : ref[o].def));
			break;
		}
		case R_LONG: {
			long long r;

			if (env != NULL && ref_long(env, ref[o].min,
			    ref[o].max, &r))
				CHECK(got == r);
			else
				CHECK(got == ref[o].def);
			break;
		}
		case R_SIZE: {
			unsigned long long r;

			if (env != NULL && ref_size(env, &r) &&
			    r >= (unsigned long long)ref[o].min &&
			    r <= (unsigned long long)ref[o].max)
				CHECK(got == (long long)r);
			else
				CHECK(got == ref[o].def);
			break;
		}
		}
		CHECK(str == NULL);
		CHECK(got >= ref[o].min && got <= ref[o].max);
	}
	/* A second read without reset gives the same values. */
	for (int o = 0; o < OPT_COUNT; o++)
		CHECK(options_get((option_t)o) == options_get((option_t)o));
	CHECK(options_get(OPT_COUNT) == 0);
	CHECK(options_get_str(OPT_COUNT) == NULL);
	options_reset();
	environ = saved;
	clear_env();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = strndup((const char *)data, size);
	static bool once;

	if (!once) {
		once = true;
		log_set_output(sink, NULL);
	}
	fuzz_parsers(s, data, size);
	free(s);
	fuzz_environment(data, size);
	return 0;
}
