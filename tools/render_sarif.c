/*
 * render_sarif.c -- SARIF 2.1.0 for code scanning (GitHub, GitLab).
 *
 * One rule per leak kind ("cuwarden.leak.<kind>"), per violation type
 * ("cuwarden.violation.<type>"), and per leak category of its own
 * ("cuwarden.teardown": memory freed only by context teardown, an error;
 * "cuwarden.address_range": an address range never freed, a warning),
 * all listed whether used or not, so ruleIndex is stable.  One result per reported finding group (suppressed
 * and baseline findings are left out; violations first, then leaks largest
 * first, at most 25,000 results, GitHub's limit), located at the innermost
 * frame whose source file lies under the current directory (uri relative
 * to it, uriBaseId %SRCROOT%), else the innermost frame with a source file
 * (absolute file: uri), else the first module outside CUDA (line 1).  The
 * allocation, violating, allocation and first-free stacks go into
 * result.stacks; the primary stack, outermost first, into a code flow;
 * the fingerprints into partialFingerprints ("cuwarden/v1", and the
 * symbolic one, which survives rebuilds, "cuwarden-symbolic/v1").
 *
 * An OOM report is one more result, rule "cuwarden.oom" of level
 * "note" (listed by code scanning, failing nothing), after the findings.
 *
 * The leak rules (name, PascalCase name, description) come from
 * lib/kinds.h, the one table of kinds; views have none.
 */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "fold.h"
#include "installdirs.h"
#include "json.h"
#include "kinds.h"
#include "num.h"
#include "path.h"
#include "render.h"
#include "run.h"
#include "vtypes.h"
#include "xalloc.h"

#define SARIF_MAX_RESULTS 25000 /* GitHub code scanning's limit */
#define OOM_RULE "cuwarden.oom"
#define OOM_STACKS 5 /* live groups' stacks in a result */
#define SARIF_SCHEMA \
	"https://json.schemastore.org/sarif-2.1.0.json"

typedef struct rule_desc_s {
	const char *what; /* kind or violation type */
	const char *name; /* PascalCase */
	const char *text; /* full description */
} rule_desc_t;

/* Every kind of kinds.h with a rule, in its order: views have none. */
static const rule_desc_t leak_rules[] = {
#define KIND_RULE(e, kind, leaks, host, line, rule, text) { kind, rule, text },
	KIND_LIST(KIND_RULE)
#undef KIND_RULE
};

static const rule_desc_t violation_rules[] = {
#define VTYPE_RULE(e, name, rule, text, phrase) { name, rule, text },
	VTYPE_LIST(VTYPE_RULE)
#undef VTYPE_RULE
};

typedef struct rules_s {
	json_t *array;
	char **ids;
	size_t n;
	char *help_uri; /* info_uri() */
} rules_t;

/* A path as a URI path: every byte outside RFC 3986's unreserved set
 * and '/' percent-encoded (spaces, '%', '#', '?', non-ASCII). */
static char *
uri_path(const char *prefix, const char *path)
{
	static const char hexd[] = "0123456789ABCDEF";
	size_t n = strlen(prefix), i;
	char *out = xmalloc(n + 3 * strlen(path) + 1), *o = out;

	memcpy(o, prefix, n);
	o += n;
	for (i = 0; path[i] != '\0'; i++) {
		unsigned char c = (unsigned char)path[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~' || c == '/') {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hexd[c >> 4];
			*o++ = hexd[c & 15];
		}
	}
	*o = '\0';
	return out;
}

/* The tool's documentation: the package URL configure was given, else
 * the installed doc/audit.md (installdirs.h). */
static char *
info_uri(void)
{
#ifdef PACKAGE_URL
	if (PACKAGE_URL[0] != '\0')
		return xstrdup(PACKAGE_URL);
#endif
	return uri_path("file://", CW_DOCDIR "/audit.md");
}

/* The rules of the leak categories that are not plain leaks
 * (doc/audit.md, "Leak categories"), and each one's level. */
static const struct {
	const char *id, *name, *text, *level;
} cat_rules[] = {
	[AU_CAT_TEARDOWN] = { "cuwarden.teardown", "ContextTeardownLeak",
	    "Memory was never freed by the program: the destruction of its "
	    "context (cuCtxDestroy, cuDevicePrimaryCtxReset) reclaimed it.",
	    "error" },
	[AU_CAT_RANGE] = { "cuwarden.address_range", "AddressRangeNeverFreed",
	    "A virtual address range from cuMemAddressReserve was never "
	    "freed (address space, not memory).", "warning" },
};

static const char *
level_of(const au_finding_t *f)
{
	return f->cls == AU_LEAK && f->cat != AU_CAT_LEAK ?
	    cat_rules[f->cat].level : "error";
}

static void
rule_add(rules_t *r, const char *id, const char *name, const char *short_text,
    const char *full, const char *level)
{
	json_t *o = json_pack("{s:s,s:s,s:{s:s},s:{s:s},s:s,s:{s:s},s:{s:[s]}}",
	    "id", id, "name", name,
	    "shortDescription", "text", short_text,
	    "fullDescription", "text", full,
	    "helpUri", r->help_uri,
	    "defaultConfiguration", "level", level,
	    "properties", "tags", "memory");

	json_array_append_new(r->array, o);
	r->ids = xrealloc(r->ids, (r->n + 1) * sizeof(*r->ids));
	r->ids[r->n++] = xstrdup(id);
}

char *
sarif_rule_id(const au_finding_t *f)
{
	return f->cls == AU_LEAK && f->cat != AU_CAT_LEAK ?
	    xstrdup(cat_rules[f->cat].id) : xasprintf("cuwarden.%s.%s",
	    f->cls == AU_LEAK ? "leak" : "violation", f->type);
}

static size_t
rule_index(rules_t *r, const au_finding_t *f)
{
	char *id = sarif_rule_id(f);
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->ids[i], id) == 0) {
			free(id);
			return i;
		}
	/* A kind or type this tool does not know yet (a newer shim). */
	{
		char *s = xasprintf("%s %s", f->cls == AU_LEAK ? "Leak of" :
		    "Violation:", f->type);

		rule_add(r, id, f->cls == AU_LEAK ? "OtherLeak" :
		    "OtherViolation", s, s, "error");
		free(s);
	}
	free(id);
	return r->n - 1;
}

static void
rules_init(rules_t *r)
{
	size_t i;

	r->array = json_array();
	r->help_uri = info_uri();
	for (i = 0; i < sizeof(leak_rules) / sizeof(leak_rules[0]); i++) {
		char *id, *s;

		if (leak_rules[i].name == NULL)
			continue;
		id = xasprintf("cuwarden.leak.%s", leak_rules[i].what);
		s = xasprintf("%s memory leak", leak_rules[i].what);

		s[0] = (char)(s[0] - 'a' + 'A');
		rule_add(r, id, leak_rules[i].name, s, leak_rules[i].text,
		    "error");
		free(id);
		free(s);
	}
	for (i = 0; i < sizeof(violation_rules) / sizeof(violation_rules[0]);
	    i++) {
		char *id = xasprintf("cuwarden.violation.%s",
		    violation_rules[i].what);

		rule_add(r, id, violation_rules[i].name,
		    violation_rules[i].text, violation_rules[i].text, "error");
		free(id);
	}
	for (i = AU_CAT_TEARDOWN; i <= AU_CAT_RANGE; i++)
		rule_add(r, cat_rules[i].id, cat_rules[i].name,
		    cat_rules[i].text, cat_rules[i].text, cat_rules[i].level);
	/* Last, so that the rules before keep their index. */
	rule_add(r, OOM_RULE, "OutOfMemory", "Out of device memory",
	    "An allocation was refused with CUDA_ERROR_OUT_OF_MEMORY.  The "
	    "result tells the request, the device's free and total memory, "
	    "the pools' cache and the live set by owner and stack (its "
	    "stacks, properties); not an error of the audit by itself.",
	    "note");
}

static bool
runtime_module(const char *module)
{
	static const char *const pats[] = { "libcuda.so*", "libcudart*",
		"libcuwarden*" };
	size_t i;

	if (module == NULL)
		return true;
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (fnmatch(pats[i], base_name(module), 0) == 0)
			return true;
	return false;
}

/* An artifactLocation for path: relative to %SRCROOT% when under the
 * current directory, else an absolute file: URI. */
static json_t *
artifact(const char *path)
{
	char *rel = path_under_cwd(path);
	char *u;
	json_t *o;

	if (rel != NULL) {
		u = uri_path("", rel);
		o = json_pack("{s:s,s:s}", "uri", u, "uriBaseId",
		    "%SRCROOT%");
		free(rel);
	} else if (path[0] == '/') {
		u = uri_path("file://", path);
		o = json_pack("{s:s}", "uri", u);
	} else {
		u = uri_path("", path);
		o = json_pack("{s:s}", "uri", u);
	}
	free(u);
	return o;
}

static json_t *
physical(const char *file, int line)
{
	return json_pack("{s:o,s:{s:i}}", "artifactLocation", artifact(file),
	    "region", "startLine", line > 0 ? line : 1);
}

/* A location for one frame, or one inlined call of it (inl >= 0). */
static json_t *
frame_location(const au_frame_t *f, long inl)
{
	const char *fn = inl >= 0 ? f->inlined[inl].function : f->function;
	const char *file = inl >= 0 ? f->inlined[inl].file : f->file;
	int line = inl >= 0 ? f->inlined[inl].line : f->line;
	json_t *o = json_object();
	char *text;

	if (f->python)
		text = xasprintf("%s (%s:%d) [python]", fn ? fn : "?",
		    file ? file : "?", line);
	else if (file != NULL && line > 0)
		text = xasprintf("%s (%s:%d) in %s+0x%llx%s", fn ? fn : "?",
		    base_name(file), line, f->module ? base_name(f->module) :
		    "?", (unsigned long long)f->offset, inl >= 0 ?
		    " [inlined]" : "");
	else
		text = xasprintf("%s in %s+0x%llx", fn ? fn : "?",
		    f->module ? f->module : "an unknown module",
		    (unsigned long long)f->offset);
	if (file != NULL && line > 0)
		json_object_set_new(o, "physicalLocation",
		    physical(file, line));
	if (fn != NULL)
		json_object_set_new(o, "logicalLocations", json_pack(
		    "[{s:o,s:s}]", "name", json_utf8(fn), "kind", "function"));
	json_object_set_new(o, "message", json_pack("{s:o}", "text",
	    json_utf8(text)));
	free(text);
	return o;
}

static json_t *
stack_json(const au_stack_t *s, const char *what)
{
	json_t *frames = json_array();
	size_t i;
	long k;

	for (i = 0; i < s->n; i++) {
		const au_frame_t *f = &s->frames[i];

		for (k = 0; k <= (long)f->ninlined; k++) {
			long inl = k < (long)f->ninlined ? k : -1;
			json_t *fr = json_pack("{s:o}", "location",
			    frame_location(f, inl));

			if (f->module != NULL)
				json_object_set_new(fr, "module",
				    json_utf8(f->module));
			json_array_append_new(frames, fr);
		}
	}
	return json_pack("{s:{s:s},s:o}", "message", "text", what, "frames",
	    frames);
}

static json_t *
code_flow(const au_stack_t *s)
{
	json_t *locs = json_array();
	size_t i;
	long k;

	for (i = s->n; i-- > 0;) {
		const au_frame_t *f = &s->frames[i];

		/* Outermost first: the frame, then its inlined calls. */
		for (k = -1; k < (long)f->ninlined; k++) {
			long inl = k < 0 ? -1 : (long)f->ninlined - 1 - k;
			const char *file = inl >= 0 ? f->inlined[inl].file :
			    f->file;

			if (file == NULL)
				continue;
			json_array_append_new(locs, json_pack("{s:o}",
			    "location", frame_location(f, inl)));
		}
	}
	if (json_array_size(locs) == 0) {
		json_decref(locs);
		return NULL;
	}
	return json_pack("[{s:[{s:o}]}]", "threadFlows", "locations", locs);
}

/* The primary location of a stack (never NULL): its innermost frame
 * with a source line under the current directory, else with any source
 * line, else its first module outside CUDA, else owner. */
static json_t *
stack_location(const au_stack_t *s, const char *owner)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < s->n; i++) {
			const au_frame_t *fr = &s->frames[i];
			const char *file = fr->ninlined ?
			    fr->inlined[0].file : fr->file;
			int line = fr->ninlined ? fr->inlined[0].line :
			    fr->line;
			char *rel;

			if (file == NULL || line <= 0)
				continue;
			rel = path_under_cwd(file);
			free(rel);
			if (pass == 0 && rel == NULL)
				continue;
			return json_pack("{s:o}", "physicalLocation",
			    physical(file, line));
		}
	for (i = 0; i < s->n; i++)
		if (!runtime_module(s->frames[i].module))
			return json_pack("{s:o,s:{s:s}}", "physicalLocation",
			    physical(s->frames[i].module, 1), "message",
			    "text", "no source line: the module has no debug "
			    "info");
	return json_pack("{s:o,s:{s:s}}", "physicalLocation",
	    physical(owner[0] ? owner : "unknown", 1), "message", "text",
	    "no stack was recorded");
}

/* The primary location of a finding (never NULL). */
static json_t *
primary_location(const au_finding_t *f)
{
	return stack_location(&f->stack, f->owner);
}

static char *
message(const au_finding_t *f)
{
	char b1[96], b2[32];

	if (f->cls == AU_LEAK && f->cat == AU_CAT_RANGE)
		return xasprintf("%s in %llu address range%s never freed, "
		    "reserved by %s (%s)",
		    fmt_sum(f->bytes, "bytes", true, b1, sizeof(b1)),
		    (unsigned long long)f->count, f->count == 1 ? "" : "s",
		    f->owner[0] ? f->owner : "an unknown owner",
		    f->api[0] ? f->api : "?");
	if (f->cls == AU_LEAK)
		return xasprintf("%s in %llu %s allocation%s%s%s%s "
		    "%s %s (%s, device %d)",
		    fmt_sum(f->bytes, "bytes", true, b1, sizeof(b1)),
		    (unsigned long long)f->count, f->kind,
		    f->count == 1 ? "" : "s",
		    f->count > 1 && f->min_size == f->max_size ? " (" : "",
		    f->count > 1 && f->min_size == f->max_size ?
		    fmt_commas(f->size, b2, sizeof(b2)) : "",
		    f->count > 1 && f->min_size == f->max_size ? " each)" : "",
		    f->cat == AU_CAT_TEARDOWN ? "freed only by context "
		    "teardown, made by" : "leaked by",
		    f->owner[0] ? f->owner : "an unknown owner",
		    f->api[0] ? f->api : "?", f->device);
	return xasprintf("%s: %s of %s%s%s, %llu time%s", f->type,
	    f->api[0] ? f->api : "?", f->naddresses ? f->addresses[0] : "?",
	    f->cuda_error ? " -> " : "", f->cuda_error ? f->cuda_error : "",
	    (unsigned long long)f->count, f->count == 1 ? "" : "s");
}

static json_t *
result_json(rules_t *rules, const au_finding_t *f, bool baseline)
{
	size_t idx = rule_index(rules, f);
	char *msg = message(f);
	json_t *o, *stacks, *pids = json_array(), *hosts = json_array(), *flow;
	json_t *ranks = json_array();
	size_t i;

	for (i = 0; i < f->npids; i++) {
		json_array_append_new(pids, json_integer(f->pids[i]));
		json_array_append_new(hosts, json_utf8(f->hosts[i]));
	}
	/* A distributed job's finding (fold.c): on which ranks. */
	for (i = 0; i < f->nranks; i++)
		json_array_append_new(ranks, json_integer(f->ranks[i]));
	if (f->nranks > 0 && f->job_size > 0) {
		char *list = fold_rank_list(f->ranks, f->nranks);
		char *m2 = xasprintf("%s, on %zu of %ld rank%s (%s)", msg,
		    f->nranks, f->job_size, f->job_size == 1 ? "" : "s",
		    list);

		free(list);
		free(msg);
		msg = m2;
	}
	stacks = json_array();
	if (f->cls == AU_LEAK) {
		json_array_append_new(stacks, stack_json(&f->stack,
		    "allocation stack"));
	} else {
		json_array_append_new(stacks, stack_json(&f->stack,
		    "violating call"));
		if (f->alloc_stack.n > 0)
			json_array_append_new(stacks, stack_json(
			    &f->alloc_stack, "allocation stack"));
		if (f->free_stack.n > 0)
			json_array_append_new(stacks, stack_json(
			    &f->free_stack, "first free"));
	}
	o = json_pack("{s:s,s:I,s:s,s:{s:s},s:[o],s:o,s:{s:s,s:s},"
	    "s:{s:s,s:s,s:o,s:o,s:o,s:o}}",
	    "ruleId", rules->ids[idx], "ruleIndex", (json_int_t)idx,
	    "level", level_of(f), "message", "text", msg,
	    "locations", primary_location(f),
	    "stacks", stacks,
	    "partialFingerprints", "cuwarden/v1", f->fingerprint,
	    "cuwarden-symbolic/v1", f->sym_fingerprint,
	    "properties", "api", f->api, "owner", f->owner,
	    "count", json_count(f->count), "bytes", json_count(f->bytes),
	    "pids", pids, "hosts", hosts);
	json_object_set_new(json_object_get(o, "properties"), "ranks", ranks);
	flow = code_flow(&f->stack);
	if (flow != NULL)
		json_object_set_new(o, "codeFlows", flow);
	if (baseline)
		json_object_set_new(o, "baselineState", json_string("new"));
	free(msg);
	return o;
}

/* The index of rule id (rules_init added it). */
static size_t
rule_by_id(const rules_t *r, const char *id)
{
	size_t i;

	for (i = 0; i < r->n && strcmp(r->ids[i], id) != 0; i++)
		continue;
	return i;
}

/* A count of a document read as it is, for a property: the integer, or
 * null when it is none. */
static json_t *
doc_count(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer(json_integer_value(v)) :
	    json_null();
}

/* An OOM report as a result of level "note" (doc/audit.md, "Out of
 * memory"): code scanning lists it with the findings, located at the
 * request's stack, without failing anything; its message is the text
 * report's first lines, the request's and the largest live groups'
 * stacks are its stacks, the numbers its properties. */
static json_t *
oom_result(const rules_t *rules, const au_oom_t *oom)
{
	const json_t *doc = oom->doc;
	const json_t *q = json_object_get(doc, "request");
	const json_t *mem = json_object_get(doc, "device_memory");
	const json_t *live = json_object_get(doc, "live");
	const json_t *top = json_object_get(live, "top");
	size_t idx = rule_by_id(rules, OOM_RULE), i;
	char b1[32], b2[32], b3[32], dev[32] = "", *msg, *free_text;
	json_t *o, *stacks, *groups, *flow, *props;

	if (json_int(q, "device", -1) >= 0)
		snprintf(dev, sizeof(dev), " on device %lld",
		    json_int(q, "device", -1));
	if (json_is_integer(json_object_get(mem, "free"))) {
		fmt_commas((uint64_t)json_int(mem, "free", 0), b1, sizeof(b1));
		fmt_commas((uint64_t)json_int(mem, "total", 0), b2,
		    sizeof(b2));
		free_text = xasprintf("device free %s of %s bytes", b1, b2);
	} else {
		free_text = xasprintf("device free unknown (%s)",
		    json_str(mem, "error", "?"));
	}
	fmt_commas((uint64_t)json_int(q, "size", 0), b3, sizeof(b3));
	fmt_commas((uint64_t)json_int(live, "bytes", 0), b1, sizeof(b1));
	msg = xasprintf("Out of memory in pid %lld: %s of %s bytes%s failed "
	    "(%s); %s; live: %s bytes in %lld allocations (%lld groups by "
	    "owner and stack)", json_int(doc, "pid", -1),
	    json_str(q, "api", "?"), b3, dev, json_str(q, "cuda_error", "?"),
	    free_text, b1, json_int(live, "allocations", 0),
	    json_int(live, "groups", 0));
	stacks = json_array();
	json_array_append_new(stacks, stack_json(&oom->request,
	    "the request"));
	groups = json_array();
	for (i = 0; i < json_array_size(top); i++) {
		const json_t *g = json_array_get(top, i);

		json_array_append_new(groups, json_pack("{s:o,s:o,s:o,s:o,s:o,"
		    "s:o}", "owner", json_utf8(json_str(g, "owner", "")),
		    "kind", json_utf8(json_str(g, "kind", "")),
		    "api", json_utf8(json_str(g, "api", "")),
		    "device", doc_count(g, "device"),
		    "count", doc_count(g, "count"),
		    "bytes", doc_count(g, "bytes")));
		if (i < oom->ngroups && i < OOM_STACKS) {
			char *what;

			fmt_commas((uint64_t)json_int(g, "bytes", 0), b1,
			    sizeof(b1));
			what = xasprintf("live: %s bytes in %lld %s "
			    "allocations, owner %s", b1, json_int(g, "count",
			    0), json_str(g, "kind", "?"), json_str(g, "owner",
			    "unknown"));
			json_array_append_new(stacks, stack_json(
			    &oom->groups[i], what));
			free(what);
		}
	}
	props = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,"
	    "s:o,s:o}",
	    "pid", doc_count(doc, "pid"),
	    "api", json_utf8(json_str(q, "api", "")),
	    "kind", json_utf8(json_str(q, "kind", "")),
	    "size", doc_count(q, "size"),
	    "device", doc_count(q, "device"),
	    "cuda_error", json_utf8(json_str(q, "cuda_error", "")),
	    "device_free", doc_count(mem, "free"),
	    "device_total", doc_count(mem, "total"),
	    "pool_cached_bytes", doc_count(doc, "pool_cached_bytes"),
	    "live_bytes", doc_count(live, "bytes"),
	    "live_allocations", doc_count(live, "allocations"),
	    "live_groups", doc_count(live, "groups"),
	    "live_top", groups);
	if (*json_str(doc, "host", "") != '\0')
		json_object_set_new(props, "host", json_utf8(json_str(doc,
		    "host", "")));
	o = json_pack("{s:s,s:I,s:s,s:{s:o},s:[o],s:o,s:o}",
	    "ruleId", OOM_RULE, "ruleIndex", (json_int_t)idx,
	    "level", "note", "message", "text", json_utf8(msg),
	    "locations", stack_location(&oom->request, ""),
	    "stacks", stacks,
	    "properties", props);
	flow = code_flow(&oom->request);
	if (flow != NULL)
		json_object_set_new(o, "codeFlows", flow);
	free(msg);
	free(free_text);
	return o;
}

/* The processes that left no report: one notification each, an error
 * unless the process was still running (not waited for); then the ranks
 * that left none, in one. */
static json_t *
lost_notifications(const au_model_t *m)
{
	json_t *a = json_array();
	char *line;

	for (size_t i = 0; i < m->nlost; i++) {
		const au_lost_t *l = &m->lost[i];
		bool running = l->end_how != NULL &&
		    strcmp(l->end_how, "running") == 0;

		line = run_lost_line(l);
		json_array_append_new(a, json_pack("{s:s,s:{s:o}}", "level",
		    running ? "note" : "error", "message", "text",
		    json_utf8(line)));
		free(line);
	}
	if ((line = fold_missing_line(m)) != NULL) {
		char *text = xasprintf("MISSING RANKS: %s", line);

		json_array_append_new(a, json_pack("{s:s,s:{s:o}}", "level",
		    "error", "message", "text", json_utf8(text)));
		free(text);
		free(line);
	}
	return a;
}

bool
render_sarif(const au_model_t *m, const au_render_opts_t *o, const char *path)
{
	rules_t rules = { NULL, NULL, 0, NULL };
	json_t *doc, *results, *run, *inv, *cmd;
	char cwd[PATH_MAX];
	char *root;
	size_t i;
	bool bad;

	rules_init(&rules);
	results = json_array();
	/* Violations first (they are few and always worth a look), then
	 * leaks largest first, at most GitHub's 25,000 results a run. */
	for (i = 0; i < m->nviols; i++)
		if (finding_reported(m->viols[i]) &&
		    json_array_size(results) < SARIF_MAX_RESULTS)
			json_array_append_new(results, result_json(&rules,
			    m->viols[i], o->baseline != NULL));
	for (i = 0; i < m->nleaks; i++)
		if (finding_reported(m->leaks[i]) &&
		    json_array_size(results) < SARIF_MAX_RESULTS)
			json_array_append_new(results, result_json(&rules,
			    m->leaks[i], o->baseline != NULL));
	/* The OOM reports: notes, after the findings. */
	for (i = 0; i < m->nooms; i++)
		if (json_array_size(results) < SARIF_MAX_RESULTS)
			json_array_append_new(results, oom_result(&rules,
			    &m->ooms[i]));
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		strcpy(cwd, "/");
	{
		char *r = uri_path("file://", cwd);

		root = xasprintf("%s%s", r, strcmp(cwd, "/") ? "/" : "");
		free(r);
	}
	cmd = json_array();
	for (i = 0; i < json_array_size(m->command); i++)
		json_array_append(cmd, json_array_get(m->command, i));
	/* The audit itself failed (lost reports, missing ranks, no CUDA
	 * with --require-cuda): the exit status says so, and so does SARIF. */
	inv = json_pack("{s:b}", "executionSuccessful",
	    !o->audit_failed);
	if (json_array_size(cmd) > 0)
		json_object_set_new(inv, "arguments", cmd);
	else
		json_decref(cmd);
	if (m->ran && m->exit_status >= 0)
		json_object_set_new(inv, "exitCode",
		    json_integer(m->exit_status));
	if (m->nlost > 0 || m->nmissing_ranks > 0)
		json_object_set_new(inv, "toolExecutionNotifications",
		    lost_notifications(m));
	run = json_pack("{s:{s:{s:s,s:s,s:s,s:s,s:o}},s:{s:{s:s}},s:[o],"
	    "s:s,s:o}",
	    "tool", "driver", "name", "cuwarden-audit",
	    "version", PACKAGE_VERSION, "semanticVersion", PACKAGE_VERSION,
	    "informationUri", rules.help_uri, "rules", rules.array,
	    "originalUriBaseIds", "%SRCROOT%", "uri", root,
	    "invocations", inv,
	    "columnKind", "utf16CodeUnits",
	    "results", results);
	doc = json_pack("{s:s,s:s,s:[o]}", "$schema", SARIF_SCHEMA,
	    "version", "2.1.0", "runs", run);
	/* Compact: SARIF is for machines, and uploads have size limits. */
	bad = render_json_write(doc, JSON_COMPACT | JSON_PRESERVE_ORDER, path);
	json_decref(doc);
	free(root);
	for (i = 0; i < rules.n; i++)
		free(rules.ids[i]);
	free(rules.ids);
	free(rules.help_uri);
	return bad;
}
