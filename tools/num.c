/*
 * num.c -- numbers parsed, summed and written (num.h).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "num.h"

bool
parse_size(const char *s, unsigned long long *out)
{
	unsigned long long v, mul = 1;
	char *end;

	if (s == NULL || *s == '\0' || *s == '-')
		return true;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return true;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		mul = 1ULL << 10;
		end++;
		break;
	case 'm': case 'M':
		mul = 1ULL << 20;
		end++;
		break;
	case 'g': case 'G':
		mul = 1ULL << 30;
		end++;
		break;
	case 't': case 'T':
		mul = 1ULL << 40;
		end++;
		break;
	default:
		return true;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end != '\0')
		return true;
	if (v > ULLONG_MAX / mul)
		return true;
	*out = v * mul;
	return false;
}

bool
parse_long(const char *s, long min, long max, long *out)
{
	long v;
	char *end;

	if (s == NULL || *s == '\0')
		return true;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return true;
	*out = v;
	return false;
}

uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t
sat_mul(uint64_t a, uint64_t b)
{
	return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

const char *
fmt_sum(uint64_t v, const char *unit, bool commas, char *buf, size_t size)
{
	char num[32];

	if (commas)
		fmt_commas(v, num, sizeof(num));
	else
		snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	if (v == UINT64_MAX)
		snprintf(buf, size, "at least %s %s (the sum overflowed)", num,
		    unit);
	else
		snprintf(buf, size, "%s %s", num, unit);
	return buf;
}

const char *
fmt_commas(uint64_t v, char *buf, size_t size)
{
	char tmp[32];
	size_t len, i, o = 0;

	len = (size_t)snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	for (i = 0; i < len && o + 1 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0 && o + 2 < size)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}
