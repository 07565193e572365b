/*
 * util.c -- small helpers of cuwarden-audit: allocation that never fails
 * (the tool exits on out-of-memory: it is a short-lived command, not a
 * library), number formatting and parsing, paths, diagnostics.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"

static void
oom(void)
{
	fputs(AU_PROG ": error: out of memory\n", stderr);
	exit(AU_EXIT_AUDIT_FAILED);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		oom();
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");

	if (p == NULL)
		oom();
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	return s;
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

const char *
base_name(const char *path)
{
	const char *s;

	if (path == NULL)
		return "";
	s = strrchr(path, '/');
	return s ? s + 1 : path;
}

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

char *
path_under_cwd(const char *path)
{
	char cwd[PATH_MAX];
	size_t n;

	if (path == NULL || path[0] != '/')
		return NULL;
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return NULL;
	n = strlen(cwd);
	if (n == 1) /* "/" */
		return xstrdup(path + 1);
	if (strncmp(path, cwd, n) != 0 || path[n] != '/')
		return NULL;
	return xstrdup(path + n + 1);
}

void
au_error(const char *fmt, ...)
{
	va_list ap;

	fputs(AU_PROG ": error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
au_warn(const char *fmt, ...)
{
	va_list ap;

	fputs(AU_PROG ": warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *
json_str(const json_t *o, const char *key, const char *dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

long long
json_int(const json_t *o, const char *key, long long dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}
