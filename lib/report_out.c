#include "preamble.h"

/*
 * report_out.c -- the report's output (report_int.h): a fixed buffer
 * written to the fd with write(2) when full and at the end, and the
 * UTF-8 check both formats' strings go through.
 *
 * No malloc, no stdio: the buffer is in the wr_t (on report_write's
 * stack), formatting is fmt_vsnprintf's.  The first failed write is kept
 * (err, saved_errno) and ends the writing; what follows is dropped.
 */

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "fmt.h"
#include "outfile.h"
#include "report_int.h"

/* outfile_write_all: a report to a standard error the program made
 * non-blocking waits for room rather than lose its middle. */
void
report_flush(wr_t *w)
{
	if (!w->err && w->len > 0 &&
	    outfile_write_all(w->fd, w->buf, w->len)) {
		w->err = true;
		w->saved_errno = errno;
	}
	w->len = 0;
}

void
report_putn(wr_t *w, const char *s, size_t n)
{
	while (n > 0) {
		size_t k = sizeof(w->buf) - w->len;

		if (k == 0) {
			report_flush(w);
			continue;
		}
		if (k > n)
			k = n;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
	}
}

void
report_puts(wr_t *w, const char *s)
{
	report_putn(w, s, strlen(s));
}

void
report_printf(wr_t *w, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	report_putn(w, tmp, (size_t)n < sizeof(tmp) ? (size_t)n :
	    sizeof(tmp) - 1);
}

size_t
report_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}
