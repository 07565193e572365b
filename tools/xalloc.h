/*
 * xalloc.h -- allocation that never fails: out of memory, the tool says
 * so on stderr and exits 125 (it is a short-lived command, not a library,
 * and has nothing to give back).  A size of 0 is taken as 1, so the
 * result is never NULL.
 */
#ifndef CUWARDEN_TOOLS_XALLOC_H
#define CUWARDEN_TOOLS_XALLOC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* A copy of s; NULL gives "". */
char *xstrdup(const char *s);
/* A copy of at most n bytes of s. */
char *xstrndup(const char *s, size_t n);
/* open_memstream(3) that never fails; the text is in *buf (NUL-ended)
 * once xclose_memstream(fp) returns. */
FILE *xopen_memstream(char **buf, size_t *len);
void xclose_memstream(FILE *fp);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap)
    __attribute__((format(printf, 1, 0)));

#endif /* CUWARDEN_TOOLS_XALLOC_H */
