/*
 * json.h -- the tool's helpers over jansson: members read with a default,
 * counts and strings written so that jansson takes them.
 */
#ifndef CUWARDEN_TOOLS_JSON_H
#define CUWARDEN_TOOLS_JSON_H

#include <stdint.h>

#include <jansson.h>

/* The largest JSON integer (jansson's json_int_t is long long here;
 * long on configurations without it, 64 bits on every Linux we build). */
#define AU_JSON_INT_MAX ((json_int_t)INT64_MAX)

/* A string member of o, or dflt. */
const char *json_str(const json_t *o, const char *key, const char *dflt);
/* An integer member of o, or dflt. */
long long json_int(const json_t *o, const char *key, long long dflt);
/* v as a JSON integer, AU_JSON_INT_MAX when larger (render_json.c's
 * set_count says which sums were cut). */
json_t *json_count(uint64_t v);
/* s as a JSON string, never NULL: bytes that are not UTF-8 become U+FFFD
 * (json_string refuses them); NULL gives JSON null. */
json_t *json_utf8(const char *s);

#endif /* CUWARDEN_TOOLS_JSON_H */
