/*
 * diag.c -- the tool's diagnostics on stderr (diag.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit.h"
#include "diag.h"
#include "text.h"
#include "xalloc.h"

static void
diag(const char *what, const char *fmt, va_list ap)
{
	char *msg, *esc;

	msg = xvasprintf(fmt, ap);
	esc = text_escape(msg);
	fprintf(stderr, AU_PROG ": %s: %s\n", what, esc);
	free(esc);
	free(msg);
}

void
au_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag("error", fmt, ap);
	va_end(ap);
}

void
au_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag("warning", fmt, ap);
	va_end(ap);
}
