/*
 * json.c -- members of jansson objects read with a default, counts and
 * strings made into JSON (json.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "text.h"
#include "xalloc.h"

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

json_t *
json_count(uint64_t v)
{
	return json_integer(v > (uint64_t)AU_JSON_INT_MAX ? AU_JSON_INT_MAX :
	    (json_int_t)v);
}

json_t *
json_utf8(const char *s)
{
	const unsigned char *p;
	json_t *j;
	char *buf;
	size_t o = 0;

	if (s == NULL)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	/* Not UTF-8 (json_string refuses it): each byte that does not
	 * start a valid sequence becomes U+FFFD, as doc/report-schema.md
	 * says of the shim's strings. */
	buf = xmalloc(3 * strlen(s) + 1);
	for (p = (const unsigned char *)s; *p != '\0';) {
		size_t n = utf8_seq(p);

		if (n == 0) {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
			continue;
		}
		memcpy(buf + o, p, n);
		o += n;
		p += n;
	}
	buf[o] = '\0';
	j = json_string(buf);
	free(buf);
	return j != NULL ? j : json_string("");
}
