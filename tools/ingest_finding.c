/*
 * ingest_finding.c -- a report's leaks and violations (ingest_int.h):
 * each checked, made a finding (one process's, or a merged document's
 * group with every pid and device) and added to the model.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest_int.h"
#include "model.h"
#include "num.h"
#include "xalloc.h"

/* A merged document's "per_process" (each pid's share, beside pids):
 * absent (a document from before it) leaves the shares unknown. */
static bool
read_shares(ingest_rd_t *r, const json_t *o, const char *w, au_finding_t *f)
{
	const json_t *pp = json_object_get(o, "per_process");
	uint64_t c, b;

	if (pp == NULL)
		return false;
	if (!json_is_array(pp) || json_array_size(pp) != f->npids)
		return ingest_fail(r, "%s.per_process: expected an array as "
		    "long as pids", w);
	f->pid_count = xcalloc(f->npids + 1, sizeof(*f->pid_count));
	f->pid_bytes = xcalloc(f->npids + 1, sizeof(*f->pid_bytes));
	for (size_t i = 0; i < f->npids; i++) {
		const json_t *e = json_array_get(pp, i);
		char where[96];

		snprintf(where, sizeof(where), "%s.per_process[%zu]", w, i);
		if (ingest_get_uint(r, e, where, "count", true, 0, &c) ||
		    ingest_get_uint(r, e, where, "bytes", true, 0, &b))
			return true;
		f->pid_count[i] = c;
		f->pid_bytes[i] = b;
	}
	return false;
}

/* What a merged document adds to a finding: every pid (with its host)
 * and device, the size range, the count of a violation group. */
static bool
read_merged_extras(ingest_rd_t *r, const json_t *o, const char *w,
    au_finding_t *f)
{
	const json_t *pids = json_object_get(o, "pids");
	const json_t *hosts = json_object_get(o, "hosts");
	const json_t *devs = json_object_get(o, "devices");
	const json_t *sat;
	uint64_t v;
	size_t i;

	if (!json_is_array(pids) || json_array_size(pids) == 0)
		return ingest_fail(r, "%s.pids: expected a non-empty array",
		    w);
	/* Documents written before hosts: every host unknown. */
	if (hosts != NULL && (!json_is_array(hosts) ||
	    json_array_size(hosts) != json_array_size(pids)))
		return ingest_fail(r, "%s.hosts: expected an array as long as "
		    "pids", w);
	for (i = 0; i < json_array_size(pids); i++) {
		const json_t *h = json_array_get(hosts, i);

		if (!json_is_integer(json_array_get(pids, i)))
			return ingest_fail(r, "%s.pids[%zu]: expected an "
			    "integer", w, i);
		if (hosts != NULL && !json_is_string(h))
			return ingest_fail(r, "%s.hosts[%zu]: expected a "
			    "string", w, i);
		finding_add_pid(f, (long)json_integer_value(
		    json_array_get(pids, i)), json_string_value(h));
	}
	if (read_shares(r, o, w, f))
		return true;
	if (devs != NULL && !json_is_array(devs))
		return ingest_fail(r, "%s.devices: expected an array", w);
	for (i = 0; i < json_array_size(devs); i++)
		if (json_is_integer(json_array_get(devs, i)))
			finding_add_device(f, (int)json_integer_value(
			    json_array_get(devs, i)));
	if (ingest_get_uint(r, o, w, "min_size", false, f->min_size, &v))
		return true;
	f->min_size = v;
	if (ingest_get_uint(r, o, w, "max_size", false, f->max_size, &v))
		return true;
	f->max_size = v;
	/* Sums the writer could not hold: lower bounds, saturated again. */
	sat = json_object_get(o, "saturated");
	for (i = 0; i < json_array_size(sat); i++) {
		const char *k = json_string_value(json_array_get(sat, i));

		if (k != NULL && strcmp(k, "bytes") == 0)
			f->bytes = UINT64_MAX;
		else if (k != NULL && strcmp(k, "count") == 0)
			f->count = UINT64_MAX;
	}
	if (f->cls == AU_VIOLATION) {
		const json_t *addrs = json_object_get(o, "addresses");

		if (ingest_get_uint(r, o, w, "count", false, 1, &v))
			return true;
		if (f->count != UINT64_MAX)
			f->count = v > 0 ? v : 1;
		if (json_is_array(addrs) && json_array_size(addrs) > 0) {
			for (i = 0; i < f->naddresses; i++)
				free(f->addresses[i]);
			f->naddresses = 0;
			for (i = 0; i < json_array_size(addrs); i++)
				if (json_is_string(json_array_get(addrs, i)))
					finding_add_address(f,
					    json_string_value(
					    json_array_get(addrs, i)));
		}
	}
	return false;
}

/* A finding of one device and size, its strings copied. */
static au_finding_t *
new_finding(au_class_t cls, const char *type, const char *kind,
    const char *api, const char *owner, long long dev, uint64_t size)
{
	au_finding_t *f = xcalloc(1, sizeof(*f));

	f->cls = cls;
	f->type = xstrdup(type);
	f->kind = xstrdup(kind);
	f->api = xstrdup(api);
	f->owner = xstrdup(owner);
	f->device = (int)dev;
	finding_add_device(f, (int)dev);
	f->size = f->min_size = f->max_size = size;
	return f;
}

/* Where f was seen: the process of a per-process report, or what a merged
 * document says.  Returns true on error. */
static bool
read_origin(ingest_rd_t *r, const json_t *o, const char *w, au_finding_t *f)
{
	if (r->merged)
		return read_merged_extras(r, o, w, f);
	finding_add_pid(f, r->proc->pid, r->proc->host);
	return false;
}

bool
ingest_leak(ingest_rd_t *r, au_model_t *m, const json_t *o,
    size_t idx)
{
	au_finding_t *f;
	const char *kind = "", *api = "", *owner = "", *cat = "";
	uint64_t size = 0, count = 0, bytes = 0;
	long long dev = -1;
	const json_t *addrs;
	char w[64];
	size_t i;

	snprintf(w, sizeof(w), "leaks[%zu]", idx);
	if (!json_is_object(o))
		return ingest_fail(r, "%s: expected an object", w);
	if (ingest_get_str(r, o, w, "kind", NULL, &kind) ||
	    ingest_get_str(r, o, w, "api", "", &api) ||
	    ingest_get_str(r, o, w, "owner", "", &owner) ||
	    ingest_get_uint(r, o, w, "count", true, 0, &count) ||
	    ingest_get_uint(r, o, w, "size", false, 0, &size) ||
	    ingest_get_uint(r, o, w, "bytes", false, sat_mul(size, count),
	    &bytes) ||
	    ingest_get_int(r, o, w, "device", -1, &dev))
		return true;
	/* Reports without categories (before them): a reservation is an
	 * address range, anything else a leak. */
	if (ingest_get_str(r, o, w, "category", strcmp(kind, "va") == 0 ?
	    "address_range" : "leak", &cat))
		return true;
	if (dev < -1 || dev > 65535)
		return ingest_fail(r, "%s.device: %lld is not a device "
		    "ordinal", w, dev);
	if (size == 0 && count > 0)
		size = bytes / count;
	addrs = json_object_get(o, "addresses");
	if (addrs != NULL && !json_is_array(addrs))
		return ingest_fail(r, "%s.addresses: expected an array", w);
	f = new_finding(AU_LEAK, kind, kind, api, owner, dev, size);
	/* A category this tool does not know is counted as a leak. */
	if (!cat_parse(cat, &f->cat))
		f->cat = AU_CAT_LEAK;
	f->count = count;
	f->bytes = bytes;
	for (i = 0; i < json_array_size(addrs); i++) {
		const json_t *a = json_array_get(addrs, i);

		if (!json_is_string(a)) {
			finding_free(f);
			return ingest_fail(r, "%s.addresses[%zu]: expected a "
			    "string \"0x...\"", w, i);
		}
		finding_add_address(f, json_string_value(a));
	}
	if (read_origin(r, o, w, f)) {
		finding_free(f);
		return true;
	}
	if (ingest_stack(r, o, w, "stack", &f->stack)) {
		finding_free(f);
		return true;
	}
	model_add(m, f);
	return false;
}

bool
ingest_violation(ingest_rd_t *r, au_model_t *m, const json_t *o,
    size_t idx)
{
	au_finding_t *f;
	const char *type = "", *api = "", *addr = "", *kind = "";
	const char *owner = "", *cerr = "", *family = "";
	uint64_t size = 0;
	long long dev = -1;
	char w[64];

	snprintf(w, sizeof(w), "violations[%zu]", idx);
	if (!json_is_object(o))
		return ingest_fail(r, "%s: expected an object", w);
	if (ingest_get_str(r, o, w, "type", NULL, &type) ||
	    ingest_get_str(r, o, w, "api", "", &api) ||
	    ingest_get_str(r, o, w, "address", "", &addr) ||
	    ingest_get_str(r, o, w, "kind", "", &kind) ||
	    ingest_get_str(r, o, w, "family", "", &family) ||
	    ingest_get_str(r, o, w, "owner", "", &owner) ||
	    ingest_get_str(r, o, w, "cuda_error", "", &cerr) ||
	    ingest_get_uint(r, o, w, "size", false, 0, &size) ||
	    ingest_get_int(r, o, w, "device", -1, &dev))
		return true;
	f = new_finding(AU_VIOLATION, type, kind, api, owner, dev, size);
	f->cuda_error = cerr[0] ? xstrdup(cerr) : NULL;
	f->family = family[0] ? xstrdup(family) : NULL;
	f->count = 1;
	{
		const json_t *rg = json_object_get(o, "range");
		char wr[80];

		snprintf(wr, sizeof(wr), "%s.range", w);
		if (json_is_object(rg)) {
			if (ingest_get_uint(r, rg, wr, "offset", true, 0,
			    &f->range_off) ||
			    ingest_get_uint(r, rg, wr, "length", true, 0,
			    &f->range_len)) {
				finding_free(f);
				return true;
			}
			f->has_range = true;
		} else if (rg != NULL && !json_is_null(rg)) {
			finding_free(f);
			return ingest_fail(r, "%s: expected an object or null",
			    wr);
		}
	}
	if (addr[0])
		finding_add_address(f, addr);
	if (read_origin(r, o, w, f)) {
		finding_free(f);
		return true;
	}
	if (ingest_stack(r, o, w, "stack", &f->stack) ||
	    ingest_stack(r, o, w, "alloc_stack", &f->alloc_stack) ||
	    ingest_stack(r, o, w, "free_stack", &f->free_stack)) {
		finding_free(f);
		return true;
	}
	model_add(m, f);
	return false;
}
