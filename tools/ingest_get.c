/*
 * ingest_get.c -- the report reader's checked member access and its
 * error message (ingest_int.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "ingest_int.h"

bool
ingest_fail(ingest_rd_t *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, r->errsize, "%s: ", r->path);
	if (n < 0 || (size_t)n >= r->errsize)
		return true;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->errsize - (size_t)n, fmt, ap);
	va_end(ap);
	return true;
}

bool
ingest_get_str(ingest_rd_t *r, const json_t *o, const char *where,
    const char *key, const char *dflt, const char **out)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL || (json_is_null(v) && dflt != NULL)) {
		if (dflt == NULL)
			return ingest_fail(r, "%s: the member \"%s\" is "
			    "missing", where, key);
		*out = dflt;
		return false;
	}
	if (!json_is_string(v))
		return ingest_fail(r, "%s.%s: expected a string", where,
		    key);
	*out = json_string_value(v);
	return false;
}

bool
ingest_get_uint(ingest_rd_t *r, const json_t *o, const char *where,
    const char *key, bool required, uint64_t dflt, uint64_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL) {
		if (required)
			return ingest_fail(r, "%s: the member \"%s\" is "
			    "missing", where, key);
		*out = dflt;
		return false;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return ingest_fail(r, "%s.%s: expected a non-negative "
		    "integer", where, key);
	*out = (uint64_t)json_integer_value(v);
	return false;
}

bool
ingest_get_int(ingest_rd_t *r, const json_t *o, const char *where,
    const char *key, long long dflt, long long *out)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL || json_is_null(v)) {
		*out = dflt;
		return false;
	}
	if (!json_is_integer(v))
		return ingest_fail(r, "%s.%s: expected an integer", where,
		    key);
	*out = (long long)json_integer_value(v);
	return false;
}
