/*
 * check_options.c -- every option: its default, valid values (any case),
 * malformed values (one warning naming the variable, the value and the
 * default; then the default), sizes with suffixes, booleans, overflow,
 * reading once, reading from threads.
 */
#include "preamble.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "options.h"
#include "unit.h"

#define MAXLINES 64

static int nlines;
static char lines[MAXLINES][512];

static void
collect(const char *msg, void *arg)
{
	(void)arg;
	if (nlines < MAXLINES)
		snprintf(lines[nlines], sizeof(lines[0]), "%s", msg);
	nlines++;
}

static void
clear_env(void)
{
	for (int o = 0; o < OPT_COUNT; o++)
		unsetenv(options_name((option_t)o));
}

/* Sets one variable, re-reads, and returns the warnings logged. */
static int
with(const char *name, const char *value)
{
	clear_env();
	if (value != NULL)
		setenv(name, value, 1);
	options_reset();
	nlines = 0;
	log_reset();
	log_set_output(collect, NULL);
	options_init();
	log_set_output(NULL, NULL);
	return nlines;
}

START_TEST(test_options_names)
{
	ck_assert_str_eq(options_name(OPT_STACK_DEPTH), "CUWARDEN_STACK_DEPTH");
	ck_assert_str_eq(options_name(OPT_REPORT_FORMAT),
	    "CUWARDEN_REPORT_FORMAT");
	for (int o = 0; o < OPT_COUNT; o++) {
		const char *n = options_name((option_t)o);

		ck_assert_ptr_nonnull(n);
		ck_assert_int_eq(strncmp(n, "CUWARDEN_", 9), 0);
		for (int k = 0; k < o; k++)
			ck_assert_str_ne(n, options_name((option_t)k));
	}
	ck_assert_ptr_null(options_name(OPT_COUNT));
}
END_TEST

START_TEST(test_options_defaults)
{
	ck_assert_int_eq(with("CUWARDEN_NOTHING", NULL), 0);
	ck_assert_int_eq(options_get(OPT_STACK_DEPTH), 24);
	ck_assert_ptr_null(options_get_str(OPT_REPORT));
	ck_assert_int_eq(options_get(OPT_MODE), OPT_MODE_AUDIT);
	ck_assert_int_eq(options_get(OPT_ON_VIOLATION),
	    OPT_ON_VIOLATION_REPORT);
	ck_assert(options_get_bool(OPT_POOL));
	ck_assert_int_eq(options_get(OPT_POOL_LIMIT), 0);
	ck_assert_int_eq(options_get(OPT_LARGE_BLOCK), 2 * 1024 * 1024);
	ck_assert(!options_get_bool(OPT_SHOW_STATS));
	ck_assert_int_eq(options_get(OPT_VERBOSE), 0);
	ck_assert_ptr_null(options_get_str(OPT_LOG_FILE));
	ck_assert_ptr_null(options_get_str(OPT_OWNER_SKIP));
	ck_assert_int_eq(options_get(OPT_TOMBSTONES), 65536);
	ck_assert(!options_get_bool(OPT_CHECK_BOUNDS));
	ck_assert_int_eq(options_get(OPT_REPORT_FORMAT), CW_FORMAT_JSON);
	for (int o = 0; o < OPT_COUNT; o++)
		ck_assert_int_eq(options_get((option_t)o),
		    options_default((option_t)o));
}
END_TEST

START_TEST(test_options_valid)
{
	ck_assert_int_eq(with("CUWARDEN_STACK_DEPTH", "0"), 0);
	ck_assert_int_eq(options_get(OPT_STACK_DEPTH), 0);
	with("CUWARDEN_STACK_DEPTH", "64");
	ck_assert_int_eq(options_get(OPT_STACK_DEPTH), 64);
	with("CUWARDEN_STACK_DEPTH", " 8 ");
	ck_assert_int_eq(options_get(OPT_STACK_DEPTH), 8);

	ck_assert_int_eq(with("CUWARDEN_REPORT", "/tmp/r-%p.json"), 0);
	ck_assert_str_eq(options_get_str(OPT_REPORT), "/tmp/r-%p.json");

	with("CUWARDEN_MODE", "POOL");
	ck_assert_int_eq(options_get(OPT_MODE), OPT_MODE_POOL);
	with("CUWARDEN_MODE", "Audit");
	ck_assert_int_eq(options_get(OPT_MODE), OPT_MODE_AUDIT);
	with("CUWARDEN_ON_VIOLATION", "abort");
	ck_assert_int_eq(options_get(OPT_ON_VIOLATION), OPT_ON_VIOLATION_ABORT);
	with("CUWARDEN_POOL", "off");
	ck_assert(!options_get_bool(OPT_POOL));
	with("CUWARDEN_POOL_LIMIT", "16G");
	ck_assert_int_eq(options_get(OPT_POOL_LIMIT), 16LL << 30);
	with("CUWARDEN_LARGE_BLOCK", "4m");
	ck_assert_int_eq(options_get(OPT_LARGE_BLOCK), 4 << 20);
	with("CUWARDEN_SHOW_STATS", "YES");
	ck_assert(options_get_bool(OPT_SHOW_STATS));
	with("CUWARDEN_VERBOSE", "3");
	ck_assert_int_eq(options_get(OPT_VERBOSE), 3);
	with("CUWARDEN_LOG_FILE", "/tmp/x.log");
	ck_assert_str_eq(options_get_str(OPT_LOG_FILE), "/tmp/x.log");
	with("CUWARDEN_OWNER_SKIP", "libtorch*:libc10*");
	ck_assert_str_eq(options_get_str(OPT_OWNER_SKIP), "libtorch*:libc10*");
	with("CUWARDEN_TOMBSTONES", "0");
	ck_assert_int_eq(options_get(OPT_TOMBSTONES), 0);
	with("CUWARDEN_CHECK_BOUNDS", "True");
	ck_assert(options_get_bool(OPT_CHECK_BOUNDS));
	ck_assert_int_eq(with("CUWARDEN_REPORT_FORMAT", "TEXT"), 0);
	ck_assert_int_eq(options_get(OPT_REPORT_FORMAT), CW_FORMAT_TEXT);

	/* Empty means unset: the default, silently. */
	ck_assert_int_eq(with("CUWARDEN_STACK_DEPTH", ""), 0);
	ck_assert_int_eq(options_get(OPT_STACK_DEPTH), 24);
	ck_assert_int_eq(with("CUWARDEN_REPORT", ""), 0);
	ck_assert_ptr_null(options_get_str(OPT_REPORT));
}
END_TEST

/* Each malformed value: exactly one warning naming the variable, the bad
 * value and the default; the option has its default. */
static void
bad(const char *name, const char *value, option_t opt, const char *def)
{
	int n = with(name, value);

	ck_assert_msg(n == 1, "%s=%s: %d warnings", name, value, n);
	ck_assert_ptr_nonnull(strstr(lines[0], "warning"));
	ck_assert_msg(strstr(lines[0], name) != NULL, "%s", lines[0]);
	ck_assert_msg(strstr(lines[0], value) != NULL, "%s", lines[0]);
	ck_assert_msg(strstr(lines[0], def) != NULL, "no default '%s' in %s",
	    def, lines[0]);
	ck_assert_int_eq(options_get(opt), options_default(opt));
	ck_assert_ptr_null(options_get_str(opt));
	/* Read once: no second warning. */
	nlines = 0;
	log_set_output(collect, NULL);
	(void)options_get(opt);
	log_set_output(NULL, NULL);
	ck_assert_int_eq(nlines, 0);
}

START_TEST(test_options_malformed)
{
	bad("CUWARDEN_STACK_DEPTH", "65", OPT_STACK_DEPTH, "24");
	bad("CUWARDEN_STACK_DEPTH", "-1", OPT_STACK_DEPTH, "24");
	bad("CUWARDEN_STACK_DEPTH", "deep", OPT_STACK_DEPTH, "24");
	bad("CUWARDEN_STACK_DEPTH", "12abc", OPT_STACK_DEPTH, "24");
	bad("CUWARDEN_STACK_DEPTH", "99999999999999999999999", OPT_STACK_DEPTH,
	    "24");
	bad("CUWARDEN_MODE", "fast", OPT_MODE, "audit");
	bad("CUWARDEN_ON_VIOLATION", "explode", OPT_ON_VIOLATION, "report");
	bad("CUWARDEN_POOL", "maybe", OPT_POOL, "1");
	bad("CUWARDEN_POOL_LIMIT", "12Q", OPT_POOL_LIMIT, "0");
	bad("CUWARDEN_POOL_LIMIT", "99999999999T", OPT_POOL_LIMIT, "0");
	bad("CUWARDEN_LARGE_BLOCK", "1K", OPT_LARGE_BLOCK, "2097152");
	bad("CUWARDEN_LARGE_BLOCK", "-5M", OPT_LARGE_BLOCK, "2097152");
	bad("CUWARDEN_SHOW_STATS", "2", OPT_SHOW_STATS, "0");
	bad("CUWARDEN_VERBOSE", "4", OPT_VERBOSE, "0");
	bad("CUWARDEN_TOMBSTONES", "lots", OPT_TOMBSTONES, "65536");
	bad("CUWARDEN_CHECK_BOUNDS", "yess", OPT_CHECK_BOUNDS, "0");
	bad("CUWARDEN_REPORT_FORMAT", "xml", OPT_REPORT_FORMAT, "json");
	{
		static char longval[5000];

		memset(longval, 'p', sizeof(longval) - 1);
		ck_assert_int_eq(with("CUWARDEN_REPORT", longval), 1);
		ck_assert_ptr_null(options_get_str(OPT_REPORT));
	}
	/* Unknown CUWARDEN_ variables are not ours to judge (scripts use
	 * the prefix too), unless they look like a misspelt option. */
	ck_assert_int_eq(with("CUWARDEN_NO_SUCH_OPTION", "1"), 0);
	unsetenv("CUWARDEN_NO_SUCH_OPTION");
	ck_assert_int_eq(with("CUWARDEN_PRELOAD", "/x.so"), 0);
	unsetenv("CUWARDEN_PRELOAD");
	ck_assert_int_eq(with("CUWARDEN_REPROT", "/tmp/r.json"), 1);
	ck_assert_ptr_nonnull(strstr(lines[0], "CUWARDEN_REPROT"));
	ck_assert_ptr_nonnull(strstr(lines[0], "did you mean CUWARDEN_REPORT"));
	ck_assert_ptr_null(options_get_str(OPT_REPORT));
	unsetenv("CUWARDEN_REPROT");
	ck_assert_int_eq(with("CUWARDEN_STACKDEPTH", "8"), 1);
	ck_assert_ptr_nonnull(strstr(lines[0], "CUWARDEN_STACK_DEPTH"));
	unsetenv("CUWARDEN_STACKDEPTH");
}
END_TEST

/* The documented set (cuwarden(7), options.h), exactly: these ten words in
 * any case, with blanks around them; nothing else. */
static const char *const bool_true[] = { "1", "yes", "on", "true", "y" };
static const char *const bool_false[] = { "0", "no", "off", "false", "n" };

/* 1 true, 0 false, -1 not a documented boolean word (case-insensitive,
 * blanks and a trailing newline trimmed: what the man page says). */
static int
documented_bool(const char *v)
{
	char w[64];
	size_t n;

	while (*v == ' ' || *v == '\t')
		v++;
	n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t' ||
	    v[n - 1] == '\n'))
		n--;
	if (n >= sizeof(w))
		return -1;
	memcpy(w, v, n);
	w[n] = '\0';
	for (size_t i = 0; i < CW_ARRAY_SIZE(bool_true); i++) {
		if (strcasecmp(w, bool_true[i]) == 0)
			return 1;
		if (strcasecmp(w, bool_false[i]) == 0)
			return 0;
	}
	return -1;
}

START_TEST(test_options_parse_bool)
{
	static const char *const t[] = { "1", "yes", "YES", "on", "On",
	    "true", "TRUE", " y ", "Y", "\tyEs\n", "y\n\n" };
	static const char *const f[] = { "0", "no", "No", "off", "OFF",
	    "false", "False", "n", "N", " 0\t" };
	static const char *const e[] = { "", " ", "2", "yess", "of", "truee",
	    "-1", "o n", "t", "f", "T", "F", "ye", "tru", "fals", "enable",
	    "disable", "enabled", "yes!", "yes no", "+1", "01", "00", "1.0",
	    "0x1", "\"yes\"", "\nyes", "\vyes", "yes\r", "nope",
	    "oui", "ja", "\xc3\xbf" "es" };
	bool b;

	for (size_t i = 0; i < CW_ARRAY_SIZE(t); i++) {
		b = false;
		ck_assert_msg(!options_parse_bool(t[i], &b), "%s", t[i]);
		ck_assert(b);
	}
	for (size_t i = 0; i < CW_ARRAY_SIZE(f); i++) {
		b = true;
		ck_assert_msg(!options_parse_bool(f[i], &b), "%s", f[i]);
		ck_assert(!b);
	}
	for (size_t i = 0; i < CW_ARRAY_SIZE(e); i++) {
		b = true;
		ck_assert_msg(options_parse_bool(e[i], &b), "'%s' taken",
		    e[i]);
		ck_assert(b); /* untouched on error */
	}
	ck_assert(options_parse_bool(NULL, &b));
}
END_TEST

/* Every string of one or two bytes (and every documented word with one
 * byte changed, added or dropped) is a boolean exactly when the documented
 * set says so. */
START_TEST(test_options_bool_exhaustive)
{
	char v[8];
	bool b;
	size_t accepted = 0;

	for (int c1 = 1; c1 < 256; c1++) {
		for (int c2 = 0; c2 < 256; c2++) {
			v[0] = (char)c1;
			v[1] = (char)c2;
			v[2] = '\0';
			int want = documented_bool(v);
			bool err = options_parse_bool(v, &b);
			ck_assert_msg(err == (want < 0), "'%s': %s", v,
			    err ? "refused" : "taken");
			if (!err) {
				ck_assert_int_eq(b, want);
				accepted++;
			}
		}
	}
	/* 1, 0, y, Y, n, N alone (6), with a space or tab before or a
	 * space, tab or newline after (6 x 5); "on" and "no" in four cases
	 * each (8). */
	ck_assert_uint_eq(accepted, 6 + 6 * 5 + 2 * 4);
	for (size_t k = 0; k < 2 * CW_ARRAY_SIZE(bool_true); k++) {
		const char *w = k < CW_ARRAY_SIZE(bool_true) ? bool_true[k] :
		    bool_false[k - CW_ARRAY_SIZE(bool_true)];
		size_t n = strlen(w);

		for (size_t at = 0; at <= n; at++) {
			for (int c = 1; c < 256; c++) {
				/* c inserted at at */
				memcpy(v, w, at);
				v[at] = (char)c;
				memcpy(v + at + 1, w + at, n - at + 1);
				ck_assert_int_eq(options_parse_bool(v, &b),
				    documented_bool(v) < 0);
				if (at == n)
					continue;
				/* c in place of w[at] */
				memcpy(v, w, n + 1);
				v[at] = (char)c;
				ck_assert_int_eq(options_parse_bool(v, &b),
				    documented_bool(v) < 0);
			}
			if (at == n)
				continue;
			/* w[at] dropped */
			memcpy(v, w, at);
			memcpy(v + at, w + at + 1, n - at);
			ck_assert_int_eq(options_parse_bool(v, &b),
			    documented_bool(v) < 0);
		}
	}
}
END_TEST

/* A bad boolean in the environment: one warning that names the variable
 * and the value and lists exactly the documented words; the default. */
START_TEST(test_options_bool_warning_lists_words)
{
	static const char *const bad_values[] = { "t", "2", "enable", "ye" };

	for (size_t i = 0; i < CW_ARRAY_SIZE(bad_values); i++) {
		ck_assert_int_eq(with("CUWARDEN_SHOW_STATS", bad_values[i]), 1);
		ck_assert_msg(strstr(lines[0], "CUWARDEN_SHOW_STATS=\"") !=
		    NULL, "%s", lines[0]);
		ck_assert_msg(strstr(lines[0], "(expected 1/yes/on/true/y or "
		    "0/no/off/false/n)") != NULL, "%s", lines[0]);
		ck_assert_msg(strstr(lines[0], "using the default, 0") != NULL,
		    "%s", lines[0]);
		ck_assert(!options_get_bool(OPT_SHOW_STATS));
	}
	ck_assert_str_eq(OPTIONS_BOOL_WORDS,
	    "1/yes/on/true/y or 0/no/off/false/n");
	for (size_t i = 0; i < CW_ARRAY_SIZE(bool_true); i++) {
		ck_assert_int_eq(with("CUWARDEN_POOL", bool_false[i]), 0);
		ck_assert(!options_get_bool(OPT_POOL));
		ck_assert_int_eq(with("CUWARDEN_POOL", bool_true[i]), 0);
		ck_assert(options_get_bool(OPT_POOL));
	}
}
END_TEST

START_TEST(test_options_parse_size)
{
	static const struct {
		const char *s;
		unsigned long long v;
	} ok[] = {
		{ "0", 0 }, { "4096", 4096 }, { "1k", 1024 }, { "1K", 1024 },
		{ "1KB", 1024 }, { "1KiB", 1024 }, { "2M", 2ULL << 20 },
		{ "2mib", 2ULL << 20 }, { "3G", 3ULL << 30 },
		{ "1T", 1ULL << 40 }, { "512B", 512 }, { "512b", 512 },
		{ " 8M ", 8ULL << 20 },
		{ "18446744073709551615", 18446744073709551615ULL },
		{ "16777215T", 16777215ULL << 40 },
	};
	static const char *const e[] = { "", "K", "1.5M", "-1", "1X", "1MM",
	    "1 M", "1Bi", "1iB", "18446744073709551616", "16777216T",
	    "0x10" };
	unsigned long long v;

	for (size_t i = 0; i < CW_ARRAY_SIZE(ok); i++) {
		ck_assert_msg(!options_parse_size(ok[i].s, &v), "%s", ok[i].s);
		ck_assert_msg(v == ok[i].v, "%s = %llu", ok[i].s, v);
	}
	for (size_t i = 0; i < CW_ARRAY_SIZE(e); i++)
		ck_assert_msg(options_parse_size(e[i], &v), "'%s' accepted",
		    e[i]);
}
END_TEST

START_TEST(test_options_parse_long)
{
	long long v;

	ck_assert(!options_parse_long("42", 0, 100, &v));
	ck_assert_int_eq(v, 42);
	ck_assert(!options_parse_long("-7", -10, 10, &v));
	ck_assert_int_eq(v, -7);
	ck_assert(!options_parse_long("+7", -10, 10, &v));
	ck_assert_int_eq(v, 7);
	ck_assert(!options_parse_long("9223372036854775807", 0, LLONG_MAX,
	    &v));
	ck_assert_int_eq(v, LLONG_MAX);
	ck_assert(!options_parse_long("-9223372036854775808", LLONG_MIN, 0,
	    &v));
	ck_assert_int_eq(v, LLONG_MIN);
	ck_assert(options_parse_long("9223372036854775808", 0, LLONG_MAX, &v));
	ck_assert(options_parse_long("-9223372036854775809", LLONG_MIN, 0,
	    &v));
	ck_assert(options_parse_long("101", 0, 100, &v));
	ck_assert(options_parse_long("-1", 0, 100, &v));
	ck_assert(options_parse_long("", 0, 100, &v));
	ck_assert(options_parse_long("-", 0, 100, &v));
	ck_assert(options_parse_long("1e3", 0, 10000, &v));
	ck_assert(options_parse_long(NULL, 0, 100, &v));
}
END_TEST

START_TEST(test_options_read_once)
{
	with("CUWARDEN_VERBOSE", "2");
	ck_assert_int_eq(options_get(OPT_VERBOSE), 2);
	/* A later setenv is not seen until options_reset. */
	setenv("CUWARDEN_VERBOSE", "1", 1);
	ck_assert_int_eq(options_get(OPT_VERBOSE), 2);
	setenv("CUWARDEN_LOG_FILE", "/tmp/a", 1);
	ck_assert_ptr_null(options_get_str(OPT_LOG_FILE));
	options_reset();
	ck_assert_int_eq(options_get(OPT_VERBOSE), 1);
	ck_assert_str_eq(options_get_str(OPT_LOG_FILE), "/tmp/a");
	/* The string was copied: changing the environment leaves it. */
	setenv("CUWARDEN_LOG_FILE", "/tmp/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 1);
	ck_assert_str_eq(options_get_str(OPT_LOG_FILE), "/tmp/a");
	clear_env();
	options_reset();
}
END_TEST

/* options_is_set: a value (even a malformed one, which gives the
 * default) is set; unset and empty are not.  options_get_quiet: the value,
 * its warnings left owed to the next logging call. */
START_TEST(test_options_is_set_and_quiet)
{
	with("CUWARDEN_MODE", NULL);
	ck_assert(!options_is_set(OPT_MODE));
	with("CUWARDEN_MODE", "");
	ck_assert(!options_is_set(OPT_MODE));
	with("CUWARDEN_MODE", "audit");
	ck_assert(options_is_set(OPT_MODE));
	ck_assert_int_eq(options_get(OPT_MODE), OPT_MODE_AUDIT);
	ck_assert(!options_is_set(OPT_SEE_THROUGH));
	ck_assert_int_eq(with("CUWARDEN_MODE", "pol"), 1);
	ck_assert(options_is_set(OPT_MODE));
	ck_assert_int_eq(options_get(OPT_MODE), OPT_MODE_AUDIT);

	clear_env();
	setenv("CUWARDEN_SEE_THROUGH", "1", 1);
	setenv("CUWARDEN_STACK_DEPTH", "x", 1);
	options_reset();
	nlines = 0;
	log_reset();
	log_set_output(collect, NULL);
	ck_assert_int_eq(options_get_quiet(OPT_SEE_THROUGH), 1);
	ck_assert_int_eq(nlines, 0);       /* owed, not logged */
	ck_assert(options_get_bool(OPT_SEE_THROUGH));
	ck_assert_int_eq(nlines, 1);       /* now, once */
	log_set_output(NULL, NULL);
	clear_env();
	options_reset();
}
END_TEST

static void *
reader(void *arg)
{
	long long *out = arg;

	*out = options_get(OPT_STACK_DEPTH) * 1000 + options_get(OPT_VERBOSE);
	return NULL;
}

START_TEST(test_options_threads)
{
	pthread_t t[8];
	long long got[8];

	clear_env();
	setenv("CUWARDEN_STACK_DEPTH", "12", 1);
	setenv("CUWARDEN_VERBOSE", "1", 1);
	options_reset();
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, reader, &got[i]);
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(got[i], 12001);
	}
	clear_env();
	options_reset();
}
END_TEST

static Suite *
make_options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_options_names);
	tcase_add_test(tc, test_options_defaults);
	tcase_add_test(tc, test_options_valid);
	tcase_add_test(tc, test_options_malformed);
	tcase_add_test(tc, test_options_parse_bool);
	tcase_add_test(tc, test_options_bool_exhaustive);
	tcase_add_test(tc, test_options_bool_warning_lists_words);
	tcase_add_test(tc, test_options_parse_size);
	tcase_add_test(tc, test_options_parse_long);
	tcase_add_test(tc, test_options_read_once);
	tcase_add_test(tc, test_options_threads);
	tcase_add_test(tc, test_options_is_set_and_quiet);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_options_suite)
