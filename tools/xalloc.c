/*
 * xalloc.c -- cuwarden-audit's allocation that never fails (xalloc.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "xalloc.h"

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
xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (p == NULL)
		oom();
	return p;
}

char *
xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	return s;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

FILE *
xopen_memstream(char **buf, size_t *len)
{
	FILE *fp = open_memstream(buf, len);

	if (fp == NULL)
		oom();
	return fp;
}

void
xclose_memstream(FILE *fp)
{
	if (fclose(fp) != 0)
		oom();
}
