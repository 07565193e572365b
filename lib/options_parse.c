#include "preamble.h"

/*
 * options_parse.c -- the parsers of option values: booleans, integers,
 * sizes and the words of an enum, from text to a value.
 *
 * Invariants: every parser ignores the same blanks (spaces and tabs
 * before, spaces, tabs and newlines after: trim), and the words of
 * booleans and enums match in any case; a parser writes *out only on
 * success, and refuses an overflow rather than wrapping.
 *
 * Locking: none; no state.  No malloc, no stdio.
 */

#include <limits.h>
#include <string.h>
#include <strings.h>

#include "options.h"
#include "options_int.h"

/* Trims leading and trailing blanks into [*s, *e). */
static void
trim(const char *in, const char **s, const char **e)
{
	const char *b = in, *x = in + strlen(in);

	while (*b == ' ' || *b == '\t')
		b++;
	while (x > b && (x[-1] == ' ' || x[-1] == '\t' || x[-1] == '\n'))
		x--;
	*s = b;
	*e = x;
}

static bool
word_is(const char *s, const char *e, const char *w)
{
	size_t n = (size_t)(e - s);

	return strlen(w) == n && strncasecmp(s, w, n) == 0;
}

bool
options_parse_bool(const char *str, bool *out)
{
	/* cuwarden(7) and OPTIONS_BOOL_WORDS list these: keep in step. */
	static const char *const yes[] = { "1", "yes", "on", "true", "y" };
	static const char *const no[] = { "0", "no", "off", "false", "n" };
	const char *s, *e;

	if (str == NULL)
		return true;
	trim(str, &s, &e);
	for (size_t i = 0; i < CW_ARRAY_SIZE(yes); i++) {
		if (word_is(s, e, yes[i])) {
			*out = true;
			return false;
		}
		if (word_is(s, e, no[i])) {
			*out = false;
			return false;
		}
	}
	return true;
}

/* Decimal digits of [s, e) into *out.  Returns true on error/overflow. */
static bool
parse_digits(const char *s, const char *e, unsigned long long *out)
{
	unsigned long long v = 0;

	if (s == e)
		return true;
	for (; s < e; s++) {
		unsigned d;

		if (*s < '0' || *s > '9')
			return true;
		d = (unsigned)(*s - '0');
		if (v > (ULLONG_MAX - d) / 10)
			return true;
		v = v * 10 + d;
	}
	*out = v;
	return false;
}

bool
options_parse_size(const char *str, unsigned long long *out)
{
	const char *s, *e, *d;
	unsigned long long v, mult = 1;

	if (str == NULL)
		return true;
	trim(str, &s, &e);
	d = s;
	while (d < e && *d >= '0' && *d <= '9')
		d++;
	if (parse_digits(s, d, &v))
		return true;
	if (d < e) {
		/* K, M, G, T, optionally followed by "B" or "iB". */
		switch (*d) {
		case 'k': case 'K': mult = KIB; break;
		case 'm': case 'M': mult = MIB; break;
		case 'g': case 'G': mult = GIB; break;
		case 't': case 'T': mult = TIB; break;
		case 'b': case 'B': mult = 1; d--; break;
		default: return true;
		}
		d++;
		if (!(word_is(d, e, "") || word_is(d, e, "b") ||
		    (mult > 1 && word_is(d, e, "ib"))))
			return true;
	}
	if (v > ULLONG_MAX / mult)
		return true;
	*out = v * mult;
	return false;
}

bool
options_parse_long(const char *str, long long min, long long max,
    long long *out)
{
	const char *s, *e;
	bool neg = false;
	unsigned long long u;
	long long v;

	if (str == NULL)
		return true;
	trim(str, &s, &e);
	if (s < e && (*s == '-' || *s == '+')) {
		neg = *s == '-';
		s++;
	}
	if (parse_digits(s, e, &u))
		return true;
	if (neg) {
		if (u > (unsigned long long)LLONG_MAX + 1)
			return true;
		v = u == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN :
		    -(long long)u;
	} else {
		if (u > (unsigned long long)LLONG_MAX)
			return true;
		v = (long long)u;
	}
	if (v < min || v > max)
		return true;
	*out = v;
	return false;
}

bool
options_parse_word(const char *str, const char *const *words, int *out)
{
	const char *s, *e;

	if (str == NULL)
		return true;
	trim(str, &s, &e);
	for (int i = 0; words[i] != NULL; i++) {
		if (word_is(s, e, words[i])) {
			*out = i;
			return false;
		}
	}
	return true;
}
