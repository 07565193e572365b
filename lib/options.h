/*
 * options.h -- every CUWARDEN_* environment variable, in one table
 * (options.def: name, parser, default, range, doc), read once (lazily, at
 * first use, from environ), never again.  A malformed value is a warning
 * and the default.  Booleans take exactly 1/yes/on/true/y and
 * 0/no/off/false/n (any case, surrounding blanks ignored;
 * OPTIONS_BOOL_WORDS); sizes take K/M/G/T suffixes (powers of 1024).  The
 * same list is in cuwarden(7) (tests/check_options_doc.sh checks it).
 * Owner: infra.
 */
#ifndef CUWARDEN_OPTIONS_H
#define CUWARDEN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

/* OPT_STACK_DEPTH for CUWARDEN_STACK_DEPTH, ...: one per line of
 * options.def, in its order. */
typedef enum option_e {
#define OPTION(name, kind, def, min, max, words, doc) OPT_##name,
#include "options.def"
#undef OPTION
	OPT_COUNT
} option_t;

/* Values of the enum options (options_get returns the word's index: the
 * order of the words in options.def). */
#define OPT_MODE_AUDIT 0
#define OPT_MODE_POOL 1
#define OPT_ON_VIOLATION_REPORT 0
#define OPT_ON_VIOLATION_ABORT 1
#define OPT_REPORT_FORMAT_JSON 0 /* == CW_FORMAT_JSON */
#define OPT_REPORT_FORMAT_TEXT 1 /* == CW_FORMAT_TEXT */
#define OPT_EXIT_REPORT_AUTO 0 /* when it holds a finding */
#define OPT_EXIT_REPORT_ALWAYS 1
#define OPT_EXIT_REPORT_NEVER 2
#define OPT_TIMELINE_CLOCK_AUTO 0      /* the TSC where the kernel uses it */
#define OPT_TIMELINE_CLOCK_MONOTONIC 1 /* clock_gettime, always */
#define OPT_TIMELINE_CLOCK_TSC 2       /* the TSC wherever it is invariant */

/* Reads the environment once; later calls do nothing.  Safe from any
 * thread, and from a constructor. */
void options_init(void);
long long options_get(option_t opt);         /* numbers, sizes, bools, enums */
const char *options_get_str(option_t opt);   /* strings; NULL when unset */
/* The same, but the warnings of the read (malformed values) are not
 * logged now: they stay owed to the next options_* call.  For what runs at
 * the shim's load in every process (report_paths_init): one that never
 * uses CUDA stays silent. */
const char *options_get_str_quiet(option_t opt);
/* options_get without logging the read's warnings (as above). */
long long options_get_quiet(option_t opt);
bool options_get_bool(option_t opt);
/* Whether the variable is in the environment with a value (an empty one
 * counts as unset; a malformed one as set: its default is then used). */
bool options_is_set(option_t opt);
const char *options_name(option_t opt);      /* "CUWARDEN_STACK_DEPTH" */
long long options_default(option_t opt);     /* the table's default */
/* For tests: forget what was read, so the next call reads again. */
void options_reset(void);

/* The words a boolean takes, as the warning for a bad one lists them. */
#define OPTIONS_BOOL_WORDS "1/yes/on/true/y or 0/no/off/false/n"

/* Parsers, exported for tests.  Return true on error. */
/* A boolean: exactly one of the words of OPTIONS_BOOL_WORDS, any case,
 * between optional blanks (spaces and tabs; newlines after); anything
 * else (empty, "2", "t", "enable", "yes!") is an error. */
bool options_parse_bool(const char *s, bool *out);
bool options_parse_size(const char *s, unsigned long long *out);
bool options_parse_long(const char *s, long long min, long long max,
    long long *out);

#endif /* CUWARDEN_OPTIONS_H */
