/*
 * render_oom.c -- the text report's OUT OF MEMORY sections (render.h),
 * one per OOM report read, before the leaks: the request and its stack,
 * the device's free and total memory, the pools' cache, the largest live
 * groups by owner and stack, and the last allocations and frees.  Drawn
 * from the shim's document as it is (doc/report-schema.md, "The OOM
 * report"); frames are written module+offset, unsymbolized.  Every name
 * goes through rt_tx.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "num.h"
#include "render.h"
#include "render_text_int.h"

#define OOM_FRAMES 8  /* frames shown of a stack */
#define OOM_GROUPS 5  /* live groups shown */

static const char *
num(const json_t *o, const char *key, char *buf, size_t size)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return "?";
	return fmt_commas((uint64_t)json_integer_value(v), buf, size);
}

/* The basename of module i of the document, "?" if none. */
static const char *
module_name(const json_t *doc, long long i)
{
	const char *p = json_str(json_array_get(json_object_get(doc,
	    "modules"), (size_t)i), "path", NULL);
	const char *slash;

	if (i < 0 || p == NULL || *p == '\0')
		return "?";
	slash = strrchr(p, '/');
	return slash != NULL && slash[1] != '\0' ? slash + 1 : p;
}

static void
print_stack(FILE *out, const json_t *doc, const json_t *stack,
    const char *indent)
{
	size_t i, n = json_array_size(stack);

	if (n == 0)
		fprintf(out, "%s(no stack)\n", indent);
	for (i = 0; i < n && i < OOM_FRAMES; i++) {
		const json_t *f = json_array_get(stack, i);

		fprintf(out, "%s#%-2zu %s+%s\n", indent, i,
		    rt_tx(module_name(doc, json_int(f, "module", -1))),
		    rt_tx(json_str(f, "offset", "?")));
	}
	if (n > OOM_FRAMES)
		fprintf(out, "%s... %zu more frames\n", indent, n - OOM_FRAMES);
}

static void
print_one(FILE *out, const json_t *doc)
{
	const json_t *q = json_object_get(doc, "request");
	const json_t *mem = json_object_get(doc, "device_memory");
	const json_t *live = json_object_get(doc, "live");
	const json_t *top = json_object_get(live, "top");
	const json_t *recent = json_object_get(doc, "recent");
	const json_t *cached = json_object_get(doc, "pool_cached_bytes");
	char b1[64], b2[64], b3[64];
	size_t i;

	fprintf(out, "== " RT_ERR "OUT OF MEMORY in pid %lld: %s of %s bytes",
	    json_int(doc, "pid", -1), rt_tx(json_str(q, "api", "?")),
	    num(q, "size", b1, sizeof(b1)));
	if (json_int(q, "device", -1) >= 0)
		fprintf(out, " on device %lld", json_int(q, "device", -1));
	fprintf(out, " failed (%s)" RT_OFF "\n",
	    rt_tx(json_str(q, "cuda_error", "?")));
	if (json_is_integer(json_object_get(mem, "free")))
		fprintf(out, "==    device free %s of %s bytes",
		    num(mem, "free", b1, sizeof(b1)),
		    num(mem, "total", b2, sizeof(b2)));
	else
		fprintf(out, "==    device free unknown (%s)",
		    rt_tx(json_str(mem, "error", "?")));
	if (json_is_integer(cached))
		fprintf(out, "; pools' cache %s bytes",
		    num(doc, "pool_cached_bytes", b1, sizeof(b1)));
	fprintf(out, "; live: %s bytes in %s allocations (%s groups by "
	    "owner and stack)\n", num(live, "bytes", b1, sizeof(b1)),
	    num(live, "allocations", b2, sizeof(b2)),
	    num(live, "groups", b3, sizeof(b3)));
	fputs("==    requested at:\n", out);
	print_stack(out, doc, json_object_get(q, "stack"), "==      ");
	for (i = 0; i < json_array_size(top) && i < OOM_GROUPS; i++) {
		const json_t *g = json_array_get(top, i);

		fprintf(out, "==    live: %s bytes in %s %s allocations (%s",
		    num(g, "bytes", b1, sizeof(b1)),
		    num(g, "count", b2, sizeof(b2)),
		    rt_tx(json_str(g, "kind", "?")),
		    rt_tx(json_str(g, "api", "?")));
		if (*json_str(g, "owner", "") != '\0')
			fprintf(out, ", owner %s", rt_tx(json_str(g, "owner",
			    "")));
		fputs(")\n", out);
		print_stack(out, doc, json_object_get(g, "stack"),
		    "==      ");
	}
	if (json_array_size(top) > OOM_GROUPS)
		fprintf(out, "==    ... %zu more live groups in %s\n",
		    json_array_size(top) - OOM_GROUPS, "the OOM report");
	if (json_array_size(recent) > 0)
		fputs("==    last allocations and frees (oldest first):\n", out);
	for (i = 0; i < json_array_size(recent); i++) {
		const json_t *e = json_array_get(recent, i);

		fprintf(out, "==      %-5s %s %s %s bytes at %s\n",
		    rt_tx(json_str(e, "event", "?")),
		    rt_tx(json_str(e, "api", "?")),
		    rt_tx(json_str(e, "kind", "?")),
		    num(e, "size", b1, sizeof(b1)),
		    rt_tx(json_str(e, "address", "?")));
	}
	fputs("\n", out);
}

void
render_oom_text(const au_model_t *m, FILE *out)
{
	for (size_t i = 0; i < m->nooms; i++)
		print_one(out, m->ooms[i].doc);
}
