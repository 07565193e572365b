#include "preamble.h"

/*
 * fmt.c -- the formatter: fmt_vsnprintf, a printf subset into a caller's
 * buffer.
 *
 * Invariants: never writes past size bytes; when size > 0 the result is
 * NUL-terminated (cut where it must be); returns the length the whole
 * text has, as snprintf does (capped at INT_MAX).  Conversions the subset
 * lacks are copied as they are; %p of NULL is "(nil)" and %s of NULL
 * "(null)", as glibc writes them.
 *
 * Locking: none; no state.  No malloc, no stdio, no locale.
 */

#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>

#include "fmt.h"

typedef struct fmtbuf_s {
	char *buf;
	size_t size;
	size_t len; /* length it would have, as snprintf counts */
} fmtbuf_t;

static void
put_char(fmtbuf_t *b, char c)
{
	if (b->len + 1 < b->size)
		b->buf[b->len] = c;
	b->len++;
}

static void
put_repeat(fmtbuf_t *b, char c, int n)
{
	for (; n > 0; n--)
		put_char(b, c);
}

static void
put_mem(fmtbuf_t *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_char(b, s[i]);
}

enum {
	F_MINUS = 0x1,
	F_ZERO = 0x2,
	F_ALT = 0x4,
	F_PLUS = 0x8,
	F_SPACE = 0x10,
	F_GROUP = 0x20  /* ' : decimal digits in groups of three, with ',' */
};

/* A padded field: sign/prefix, zeros for precision, digits. */
static void
put_number(fmtbuf_t *b, unsigned long long v, bool neg, unsigned base,
    bool upper, int flags, int width, int prec)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[64];
	int nd = 0;
	const char *prefix = "";
	int plen;
	int zeros;
	int total;

	while (v != 0) {
		if ((flags & F_GROUP) && base == 10 && nd % 4 == 3)
			tmp[nd++] = ',';
		tmp[nd++] = digits[v % base];
		v /= base;
	}
	if (prec < 0 && nd == 0)
		tmp[nd++] = '0';
	if (base == 8 && (flags & F_ALT) && (nd == 0 || tmp[nd - 1] != '0'))
		tmp[nd++] = '0';

	if (neg)
		prefix = "-";
	else if (flags & F_PLUS)
		prefix = "+";
	else if (flags & F_SPACE)
		prefix = " ";
	if (base == 16 && (flags & F_ALT) && nd > 0 &&
	    !(nd == 1 && tmp[0] == '0'))
		prefix = upper ? "0X" : "0x";
	plen = (int)strlen(prefix);

	zeros = prec > nd ? prec - nd : 0;
	if ((flags & F_ZERO) && !(flags & F_MINUS) && prec < 0) {
		total = plen + nd;
		if (width > total)
			zeros = width - total;
	}
	total = plen + zeros + nd;
	if (!(flags & F_MINUS))
		put_repeat(b, ' ', width - total);
	put_mem(b, prefix, (size_t)plen);
	put_repeat(b, '0', zeros);
	while (nd > 0)
		put_char(b, tmp[--nd]);
	if (flags & F_MINUS)
		put_repeat(b, ' ', width - total);
}

static void
put_string(fmtbuf_t *b, const char *s, int flags, int width, int prec)
{
	size_t n = 0;

	if (s == NULL)
		s = "(null)";
	while (s[n] != '\0' && (prec < 0 || n < (size_t)prec))
		n++;
	if (!(flags & F_MINUS))
		put_repeat(b, ' ', width - (int)n);
	put_mem(b, s, n);
	if (flags & F_MINUS)
		put_repeat(b, ' ', width - (int)n);
}

enum { L_NONE, L_HH, L_H, L_L, L_LL, L_Z, L_J, L_T };

int
fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	fmtbuf_t b = { buf, size, 0 };
	const char *p = fmt;

	while (*p != '\0') {
		int flags = 0, width = 0, prec = -1, len = L_NONE;
		unsigned long long u;
		long long s;

		if (*p != '%') {
			put_char(&b, *p++);
			continue;
		}
		p++;
		for (;; p++) {
			if (*p == '-')
				flags |= F_MINUS;
			else if (*p == '0')
				flags |= F_ZERO;
			else if (*p == '#')
				flags |= F_ALT;
			else if (*p == '+')
				flags |= F_PLUS;
			else if (*p == ' ')
				flags |= F_SPACE;
			else if (*p == '\'')
				flags |= F_GROUP;
			else
				break;
		}
		if (*p == '*') {
			width = va_arg(ap, int);
			if (width < 0) {
				flags |= F_MINUS;
				width = width == INT_MIN ? INT_MAX : -width;
			}
			p++;
		} else {
			while (*p >= '0' && *p <= '9') {
				if (width < 100000)
					width = width * 10 + (*p - '0');
				p++;
			}
		}
		if (*p == '.') {
			p++;
			prec = 0;
			if (*p == '*') {
				prec = va_arg(ap, int);
				if (prec < 0)
					prec = -1;
				p++;
			} else {
				while (*p >= '0' && *p <= '9') {
					if (prec < 100000)
						prec = prec * 10 + (*p - '0');
					p++;
				}
			}
		}
		switch (*p) {
		case 'h':
			len = L_H;
			if (p[1] == 'h') {
				len = L_HH;
				p++;
			}
			p++;
			break;
		case 'l':
			len = L_L;
			if (p[1] == 'l') {
				len = L_LL;
				p++;
			}
			p++;
			break;
		case 'z':
			len = L_Z;
			p++;
			break;
		case 'j':
			len = L_J;
			p++;
			break;
		case 't':
			len = L_T;
			p++;
			break;
		default:
			break;
		}
		switch (*p) {
		case 'd':
		case 'i':
			switch (len) {
			case L_HH: s = (signed char)va_arg(ap, int); break;
			case L_H: s = (short)va_arg(ap, int); break;
			case L_L: s = va_arg(ap, long); break;
			case L_LL: s = va_arg(ap, long long); break;
			case L_Z: s = va_arg(ap, ssize_t); break;
			case L_J: s = va_arg(ap, intmax_t); break;
			case L_T: s = va_arg(ap, ptrdiff_t); break;
			default: s = va_arg(ap, int); break;
			}
			u = s < 0 ? 0ULL - (unsigned long long)s :
			    (unsigned long long)s;
			if (prec >= 0)
				flags &= ~F_ZERO;
			put_number(&b, u, s < 0, 10, false, flags, width, prec);
			break;
		case 'u':
		case 'x':
		case 'X':
		case 'o':
			switch (len) {
			case L_HH: u = (unsigned char)va_arg(ap, unsigned);
				break;
			case L_H: u = (unsigned short)va_arg(ap, unsigned);
				break;
			case L_L: u = va_arg(ap, unsigned long); break;
			case L_LL: u = va_arg(ap, unsigned long long); break;
			case L_Z: u = va_arg(ap, size_t); break;
			case L_J: u = va_arg(ap, uintmax_t); break;
			case L_T: u = (unsigned long long)va_arg(ap, ptrdiff_t);
				break;
			default: u = va_arg(ap, unsigned); break;
			}
			if (prec >= 0)
				flags &= ~F_ZERO;
			flags &= ~(F_PLUS | F_SPACE);
			put_number(&b, u, false,
			    *p == 'u' ? 10 : *p == 'o' ? 8 : 16, *p == 'X',
			    flags, width, prec);
			break;
		case 'p': {
			void *ptr = va_arg(ap, void *);

			if (ptr == NULL) {
				put_string(&b, "(nil)", flags & F_MINUS, width,
				    -1);
				break;
			}
			put_number(&b, (uintptr_t)ptr, false, 16, false,
			    (flags & (F_MINUS | F_PLUS | F_SPACE)) | F_ALT,
			    width, prec);
			break;
		}
		case 'c': {
			char c = (char)va_arg(ap, int);

			if (!(flags & F_MINUS))
				put_repeat(&b, ' ', width - 1);
			put_char(&b, c);
			if (flags & F_MINUS)
				put_repeat(&b, ' ', width - 1);
			break;
		}
		case 's':
			put_string(&b, va_arg(ap, const char *), flags, width,
			    prec);
			break;
		case '%':
			put_char(&b, '%');
			break;
		case '\0':
			/* A lone '%' at the end: write it and stop. */
			put_char(&b, '%');
			p--;
			break;
		default:
			/* Unknown conversion: copy it as it is. */
			put_char(&b, '%');
			put_char(&b, *p);
			break;
		}
		p++;
	}
	if (size > 0)
		buf[b.len < size ? b.len : size - 1] = '\0';
	return b.len > INT_MAX ? INT_MAX : (int)b.len;
}

int
fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
