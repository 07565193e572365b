#include "preamble.h"

/*
 * options.c -- every CUWARDEN_* environment variable, in one table.
 *
 * Owns: the option table (options.def expanded: name, kind, default,
 * range or words) and the values read; the parsers of the values are
 * options_parse.c's.  Options are above the log: they log their warnings,
 * and tell the log at load where its level and file are (log_set_source).
 *
 * Invariants: the environment is read once, lazily, at the first
 * options_* call (from `environ`, never getenv), and never again until
 * options_reset.  In a setuid/setgid process (AT_SECURE) the options that
 * name files (kind PATH: CUWARDEN_REPORT, CUWARDEN_LOG_FILE) are ignored,
 * as secure_getenv would.  Every value in `values` is within its option's
 * range; string values are copied into static storage (so a later setenv or
 * putenv cannot change them).  A malformed value gives one warning naming
 * the variable, the value and the default used, and the default.  An
 * empty value counts as unset.
 *
 * Locking: a three-state atomic (UNREAD -> READING -> READ).  The thread
 * that moves it to READING parses; other threads wait for READ (the parse
 * is a few microseconds).  Warnings are formatted into a static buffer
 * while parsing and logged after READ is published, so logging (which
 * itself reads CUWARDEN_LOG_FILE and CUWARDEN_VERBOSE) never re-enters an
 * unfinished read; options_get_str_quiet leaves them owed to the next
 * call.  Safe from constructors: no malloc, no stdio.
 */

#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/auxv.h>

#include "editdist.h"
#include "fmt.h"
#include "log.h"
#include "options.h"
#include "options_int.h"

extern char **environ;

#define PREFIX "CUWARDEN_"
#define PREFIX_LEN (sizeof(PREFIX) - 1)

typedef enum okind_e {
	OK_BOOL,
	OK_LONG,
	OK_SIZE,
	OK_STRING,
	OK_PATH,               /* a string naming a file we write */
	OK_ENUM
} okind_t;

typedef struct option_desc_s {
	const char *name;      /* "CUWARDEN_STACK_DEPTH" */
	okind_t kind;
	long long def;         /* default (enum: index into words) */
	long long min, max;    /* OK_LONG, OK_SIZE */
	const char *words[4];  /* OK_ENUM, NULL-terminated */
} option_desc_t;

#define OPTION_WORDS(...) { __VA_ARGS__, NULL }
#define OPTION_NO_WORDS { NULL }

static const option_desc_t table[OPT_COUNT] = {
#define OPTION(name, kind, def, min, max, words, doc) \
	[OPT_##name] = { PREFIX #name, OK_##kind, def, min, max, words },
#include "options.def"
#undef OPTION
};

#define STR_MAX 4096
#define WARN_BUF 4096

enum { UNREAD = 0, READING = 1, READ = 2 };

static int state;                           /* atomic */
static long long values[OPT_COUNT];
static const char *strs[OPT_COUNT];         /* NULL = unset */
static bool given[OPT_COUNT];               /* set, not empty (valid or not) */
static char str_store[OPT_COUNT][STR_MAX];  /* only string options use it */
static char pending[WARN_BUF];              /* warnings of the last read */
static size_t pending_len;
static int pending_owed;                    /* atomic: warnings to log */

/* ---------------------------------------------------------------- reading */

static void
pend(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Queues one warning line (NUL-separated in `pending`). */
static void
pend(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (pending_len + 2 >= sizeof(pending))
		return;
	va_start(ap, fmt);
	n = fmt_vsnprintf(pending + pending_len, sizeof(pending) - pending_len,
	    fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	pending_len += strlen(pending + pending_len) + 1;
}

static void
describe_default(const option_desc_t *d, char *buf, size_t size)
{
	switch (d->kind) {
	case OK_BOOL:
		fmt_snprintf(buf, size, "%s", d->def ? "1" : "0");
		break;
	case OK_ENUM:
		fmt_snprintf(buf, size, "%s", d->words[d->def]);
		break;
	case OK_STRING:
	case OK_PATH:
		fmt_snprintf(buf, size, "unset");
		break;
	default:
		fmt_snprintf(buf, size, "%lld", d->def);
		break;
	}
}

static void
describe_allowed(const option_desc_t *d, char *buf, size_t size)
{
	switch (d->kind) {
	case OK_BOOL:
		fmt_snprintf(buf, size, "%s", OPTIONS_BOOL_WORDS);
		break;
	case OK_ENUM: {
		size_t o = 0;

		buf[0] = '\0';
		for (int i = 0; d->words[i] != NULL && o < size; i++)
			o += (size_t)fmt_snprintf(buf + o, size - o, "%s%s",
			    i ? "|" : "", d->words[i]);
		break;
	}
	case OK_SIZE:
		fmt_snprintf(buf, size, "a size %lld..%lld, K/M/G/T suffixes",
		    d->min, d->max);
		break;
	case OK_LONG:
		fmt_snprintf(buf, size, "an integer %lld..%lld", d->min,
		    d->max);
		break;
	default:
		fmt_snprintf(buf, size, "at most %d bytes", STR_MAX - 1);
		break;
	}
}

/* Parses one value.  Returns true when malformed. */
static bool
parse_value(option_t o, const char *v)
{
	const option_desc_t *d = &table[o];

	switch (d->kind) {
	case OK_BOOL: {
		bool b;

		if (options_parse_bool(v, &b))
			return true;
		values[o] = b;
		return false;
	}
	case OK_LONG:
		return options_parse_long(v, d->min, d->max, &values[o]);
	case OK_SIZE: {
		unsigned long long u;

		if (options_parse_size(v, &u) || u < (unsigned long long)d->min
		    || u > (unsigned long long)d->max)
			return true;
		values[o] = (long long)u;
		return false;
	}
	case OK_ENUM: {
		int i;

		if (options_parse_word(v, d->words, &i))
			return true;
		values[o] = i;
		return false;
	}
	case OK_STRING:
	case OK_PATH:
		if (strlen(v) >= STR_MAX)
			return true;
		memcpy(str_store[o], v, strlen(v) + 1);
		strs[o] = str_store[o];
		return false;
	}
	return true;
}

/* A CUWARDEN_ variable that is no option but one or two typos away from
 * one is most likely a misspelling: say so.  (Others, e.g. variables of
 * scripts that happen to share the prefix, are left alone.) */
static void
check_typo(const char *name, size_t nlen)
{
	int best = 3, which = -1;

	for (int o = 0; o < OPT_COUNT; o++) {
		int d = edit_distance(name, nlen, table[o].name + PREFIX_LEN);

		if (d < best) {
			best = d;
			which = o;
		}
	}
	if (which >= 0 && best <= 2)
		pend("%s%.*s is not a cuwarden variable (did you mean %s?); "
		    "ignored", PREFIX, (int)nlen, name, table[which].name);
}

/* The option [name, name + len) names (without the prefix), or -1. */
static int
lookup(const char *name, size_t len)
{
	for (int o = 0; o < OPT_COUNT; o++) {
		const char *n = table[o].name + PREFIX_LEN;

		if (strlen(n) == len && strncmp(name, n, len) == 0)
			return o;
	}
	return -1;
}

static void
read_environment(void)
{
	pending_len = 0;
	for (int o = 0; o < OPT_COUNT; o++) {
		values[o] = table[o].def;
		strs[o] = NULL;
		given[o] = false;
	}
	if (environ == NULL)
		return;
	for (char **ep = environ; *ep != NULL; ep++) {
		const char *kv = *ep, *eq, *v;
		char def[64], allowed[128];
		size_t nlen;
		int o;

		if (strncmp(kv, PREFIX, PREFIX_LEN) != 0)
			continue;
		eq = strchr(kv, '=');
		if (eq == NULL)
			continue;
		v = eq + 1;
		nlen = (size_t)(eq - kv) - PREFIX_LEN;
		o = lookup(kv + PREFIX_LEN, nlen);
		if (o < 0) {
			check_typo(kv + PREFIX_LEN, nlen);
			continue;
		}
		if (v[0] == '\0')
			continue; /* empty: unset, the default */
		given[o] = true;
		if (table[o].kind == OK_PATH && getauxval(AT_SECURE) != 0) {
			/* setuid/setgid: as secure_getenv would, do not let
			 * the caller's environment name files we create. */
			pend("%s ignored in a setuid/setgid process",
			    table[o].name);
			continue;
		}
		if (!parse_value((option_t)o, v))
			continue;
		values[o] = table[o].def;
		strs[o] = NULL;
		describe_default(&table[o], def, sizeof(def));
		describe_allowed(&table[o], allowed, sizeof(allowed));
		pend("%s=\"%.200s\" is not valid (expected %s); using the "
		    "default, %s", table[o].name, v, allowed, def);
	}
}

/* Logs the warnings of the last read (once). */
static void
flush_pending(void)
{
	size_t o = 0;

	if (__atomic_exchange_n(&pending_owed, 0, __ATOMIC_ACQ_REL) == 0)
		return;
	while (o < pending_len) {
		log_warn("%s", pending + o);
		o += strlen(pending + o) + 1;
	}
}

/* Reads the environment once (the warnings are only queued). */
static void
read_once(void)
{
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);

	if (likely(s == READ))
		return;
	s = UNREAD;
	if (__atomic_compare_exchange_n(&state, &s, READING, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		read_environment();
		__atomic_store_n(&pending_owed, pending_len > 0,
		    __ATOMIC_RELEASE);
		__atomic_store_n(&state, READ, __ATOMIC_RELEASE);
	} else {
		while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != READ)
			sched_yield();
	}
}

void
options_init(void)
{
	read_once();
	if (unlikely(__atomic_load_n(&pending_owed, __ATOMIC_ACQUIRE)))
		flush_pending();
}

long long
options_get(option_t opt)
{
	if (unlikely(__atomic_load_n(&state, __ATOMIC_ACQUIRE) != READ) ||
	    unlikely(__atomic_load_n(&pending_owed, __ATOMIC_RELAXED)))
		options_init();
	if ((unsigned)opt >= OPT_COUNT)
		return 0;
	return values[opt];
}

const char *
options_get_str(option_t opt)
{
	options_init();
	if ((unsigned)opt >= OPT_COUNT)
		return NULL;
	return strs[opt];
}

const char *
options_get_str_quiet(option_t opt)
{
	read_once();
	if ((unsigned)opt >= OPT_COUNT)
		return NULL;
	return strs[opt];
}

long long
options_get_quiet(option_t opt)
{
	read_once();
	if ((unsigned)opt >= OPT_COUNT)
		return 0;
	return values[opt];
}

bool
options_is_set(option_t opt)
{
	options_init();
	if ((unsigned)opt >= OPT_COUNT)
		return false;
	return given[opt];
}

bool
options_get_bool(option_t opt)
{
	return options_get(opt) != 0;
}

const char *
options_name(option_t opt)
{
	if ((unsigned)opt >= OPT_COUNT)
		return NULL;
	return table[opt].name;
}

long long
options_default(option_t opt)
{
	if ((unsigned)opt >= OPT_COUNT)
		return 0;
	return table[opt].def;
}

/* ---------------------------------------------------------------- the log */

/* The log is below options and never names them: it is told at load where
 * its two settings are.  Priority 101 runs this ahead of every constructor
 * without one (the shim's, which makes the log's path absolute), whatever
 * order the objects were linked in. */
static int
source_verbose(void)
{
	return (int)options_get(OPT_VERBOSE);
}

static const char *
source_file(void)
{
	return options_get_str_quiet(OPT_LOG_FILE);
}

__attribute__((constructor(101))) static void
tell_log(void)
{
	log_set_source(source_verbose, source_file);
}

void
options_reset(void)
{
	int s = READ;

	/* Only a finished read is forgotten; one in progress completes. */
	while (!__atomic_compare_exchange_n(&state, &s, UNREAD, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (s == UNREAD)
			break;
		s = READ;
		sched_yield();
	}
	__atomic_store_n(&pending_owed, 0, __ATOMIC_RELEASE);
}
