/*
 * options.h -- every CUWARDEN_* environment variable, in one table
 * (options.c), read once (lazily, at first use, from environ), never
 * again.  A malformed value is a warning and the default.  Booleans take
 * exactly 1/yes/on/true/y and 0/no/off/false/n (any case, surrounding
 * blanks ignored; OPTIONS_BOOL_WORDS); sizes take K/M/G/T suffixes
 * (powers of 1024).  The same list is in cuwarden(7).  Owner: infra.
 */
#ifndef CUWARDEN_OPTIONS_H
#define CUWARDEN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum option_e {
	OPT_STACK_DEPTH,   /* CUWARDEN_STACK_DEPTH: frames kept, 0..64, default 24 */
	OPT_REPORT,        /* CUWARDEN_REPORT: report path (%p = pid), string, default unset */
	OPT_MODE,          /* CUWARDEN_MODE: audit|pool (shim), default audit */
	OPT_ON_VIOLATION,  /* CUWARDEN_ON_VIOLATION: report|abort, default report */
	OPT_POOL,          /* CUWARDEN_POOL: bool, default 1 (0 = straight to the driver) */
	OPT_POOL_LIMIT,    /* CUWARDEN_POOL_LIMIT: size per device, default 0 = none */
	OPT_LARGE_BLOCK,   /* CUWARDEN_LARGE_BLOCK: size of own-segment blocks, default 2M */
	OPT_SHOW_STATS,    /* CUWARDEN_SHOW_STATS: bool, print stats at exit, default 0 */
	OPT_VERBOSE,       /* CUWARDEN_VERBOSE: 0..3, default 0 */
	OPT_LOG_FILE,      /* CUWARDEN_LOG_FILE: string, default unset (stderr) */
	OPT_OWNER_SKIP,    /* CUWARDEN_OWNER_SKIP: ':'-separated module patterns skipped when naming owners */
	OPT_TOMBSTONES,    /* CUWARDEN_TOMBSTONES: freed allocations remembered, default 65536 */
	OPT_CHECK_BOUNDS,  /* CUWARDEN_CHECK_BOUNDS: bool, shim checks cuMemcpy/cuMemset ranges, default 0 */
	OPT_REPORT_FORMAT, /* CUWARDEN_REPORT_FORMAT: json|text, default json */
	OPT_REPORT_ALWAYS, /* CUWARDEN_REPORT_ALWAYS: bool, shim reports even when CUDA was never used, default 0 */
	OPT_SIGNALS,       /* CUWARDEN_SIGNALS: bool, shim writes the report on a fatal signal, default 1 */
	OPT_POOL_ARENAS,   /* CUWARDEN_POOL_ARENAS: 0..4 arenas per pool, default 0 = one per 4 CPUs */
	OPT_COUNT
} option_t;

/* Values of the enum options (options_get returns the word's index). */
#define OPT_MODE_AUDIT 0
#define OPT_MODE_POOL 1
#define OPT_ON_VIOLATION_REPORT 0
#define OPT_ON_VIOLATION_ABORT 1
#define OPT_REPORT_FORMAT_JSON 0 /* == CW_FORMAT_JSON */
#define OPT_REPORT_FORMAT_TEXT 1 /* == CW_FORMAT_TEXT */

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
bool options_get_bool(option_t opt);
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
