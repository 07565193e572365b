/*
 * text.c -- UTF-8 sequences and escaped text lines (text.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "xalloc.h"

size_t
utf8_seq(const unsigned char *s)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 ||
	    cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

char *
text_escape(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char *out = xmalloc(4 * strlen((const char *)p) + 1);
	size_t o = 0;

	while (*p != '\0') {
		size_t n = utf8_seq(p);
		unsigned c = *p;

		if (n == 0) {
			o += (size_t)sprintf(out + o, "\\x%02x", c);
			p++;
			continue;
		}
		if (n == 2 && c == 0xc2 && p[1] < 0xa0) {
			/* U+0080..U+009F, the C1 controls (CSI among them) */
			o += (size_t)sprintf(out + o, "\\u%04x", p[1]);
		} else if (n > 1) {
			memcpy(out + o, p, n);
			o += n;
		} else if (c == '\n' || c == '\t' || c == '\r' || c == '\\') {
			out[o++] = '\\';
			out[o++] = c == '\n' ? 'n' : c == '\t' ? 't' :
			    c == '\r' ? 'r' : '\\';
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)sprintf(out + o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
		p += n;
	}
	out[o] = '\0';
	return out;
}
