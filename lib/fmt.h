/*
 * fmt.h -- a printf subset into a caller's buffer: no malloc, no stdio, no
 * locale, no lock, so it works on early paths, in hooks, in a signal
 * handler and at exit.  Every text cuwarden makes is formatted here (the
 * log's lines, the report, the last error).  Owner: infra.
 */
#ifndef CUWARDEN_FMT_H
#define CUWARDEN_FMT_H

#include <stdarg.h>
#include <stddef.h>

/* snprintf into buf without malloc (a subset: %s %d %i %u %ld %lu %lld
 * %llu %zu %zd %x %lx %llx %p %c %%, widths, '-', '0', '#', and '\'' for
 * decimal digits grouped by three with ',' whatever the locale:
 * "3,407,872"). Returns the length it would have written, as snprintf
 * does. */
int fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

#endif /* CUWARDEN_FMT_H */
