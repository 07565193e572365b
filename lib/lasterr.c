#include "preamble.h"
/*
 * lasterr.c -- the thread-local detail behind cw_last_error().
 *
 * Owns: one cw_error_t per thread (initial-exec TLS, so reading it never
 * allocates).  It keeps the last failure of the thread until the next
 * one (a successful call does not clear it, as with errno).
 *
 * Invariants: after lasterr_set, status, function and message are set and
 * every other field is zero until the caller adds detail.
 *
 * Locking: none (thread-local).  No malloc: the message is formatted by
 * fmt_vsnprintf into the record itself.
 */
#include <stdarg.h>
#include <string.h>

#include "fmt.h"
#include "lasterr.h"

static CW_TLS cw_error_t tls_err;

int
lasterr_set(int status, const char *function, const char *fmt, ...)
{
	cw_error_t *e = &tls_err;
	va_list ap;

	memset(e, 0, sizeof(*e));
	e->status = status;
	e->function = function;
	va_start(ap, fmt);
	fmt_vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return status;
}

cw_error_t *
lasterr_get(void)
{
	return &tls_err;
}

void
lasterr_clear(void)
{
	memset(&tls_err, 0, sizeof(tls_err));
}
