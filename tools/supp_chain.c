/*
 * supp_chain.c -- call-chain suppression rules (supp_chain.h), in the
 * spirit of valgrind's:
 *
 *   {
 *      NAME
 *      CLASS:KIND-OR-TYPE[:API]     leak, teardown, address_range,
 *                                   violation
 *      fun:FUNCTION [obj:MODULE]    one frame (fnmatch patterns)
 *      obj:MODULE                   one frame
 *      ...                          zero or more frames
 *   }
 *
 * The frame lines are matched in order against the innermost frames of
 * the finding's stack (each inlined function a frame of its own); frames
 * after the last line are not compared.  doc/audit.md has the grammar
 * and the rules; this file only says how.  Matching is a table walk over
 * (rule line, frame), so "..." never backtracks exponentially.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "model.h"
#include "path.h"
#include "supp_chain.h"
#include "xalloc.h"

typedef struct chain_line_s {
	bool any;       /* "..." */
	char *fun, *obj; /* patterns; NULL: not compared */
} chain_line_t;

struct supp_chain_s {
	char *name;
	bool have_finding;
	au_class_t cls;
	au_cat_t cat;    /* leaks */
	char *what;      /* kind (leaks) or type (violations) pattern */
	char *api;       /* NULL: any */
	chain_line_t *lines;
	size_t n;
};

supp_chain_t *
chain_new(void)
{
	return xcalloc(1, sizeof(supp_chain_t));
}

const char *
chain_name(const supp_chain_t *c)
{
	return c->name;
}

/* The finding line: CLASS:WHAT[:API]. */
static const char *
parse_finding(supp_chain_t *c, const char *line)
{
	const char *colon = strchr(line, ':'), *what, *api;
	char *cls;

	if (colon == NULL)
		return "expected the finding, leak:KIND[:API], teardown:KIND"
		    "[:API], address_range:KIND[:API] or violation:TYPE[:API]";
	cls = xstrndup(line, (size_t)(colon - line));
	if (strcmp(cls, "violation") == 0) {
		c->cls = AU_VIOLATION;
	} else if (cat_parse(cls, &c->cat)) {
		c->cls = AU_LEAK;
	} else {
		free(cls);
		return "unknown finding (expected leak:, teardown:, "
		    "address_range: or violation:)";
	}
	free(cls);
	what = colon + 1;
	api = strchr(what, ':');
	if (api == what || *what == '\0')
		return c->cls == AU_LEAK ? "empty kind (\"*\" is any kind)" :
		    "empty violation type (\"*\" is any type)";
	if (api != NULL && api[1] == '\0')
		return "empty API (leave \":API\" out for any API)";
	c->what = api != NULL ? xstrndup(what, (size_t)(api - what)) :
	    xstrdup(what);
	c->api = api != NULL ? xstrdup(api + 1) : NULL;
	c->have_finding = true;
	return NULL;
}

/* Where p holds, after a run of blanks no backslash escapes, the word
 * key: the start of that run (*next: just after key); else NULL. */
static const char *
find_key(const char *p, const char *key, const char **next)
{
	size_t klen = strlen(key);

	for (; *p != '\0'; p++) {
		const char *q = p;

		if (*p == '\\' && p[1] != '\0') {
			p++;
			continue;
		}
		if (*p != ' ' && *p != '\t')
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		if (strncmp(q, key, klen) == 0) {
			*next = q + klen;
			return p;
		}
		p = q - 1;
	}
	return NULL;
}

/* A frame line: "...", "fun:F", "fun:F obj:O" or "obj:O". */
static const char *
parse_frame(chain_line_t *l, const char *line)
{
	const char *end, *obj;

	memset(l, 0, sizeof(*l));
	if (strcmp(line, "...") == 0) {
		l->any = true;
		return NULL;
	}
	if (strncmp(line, "fun:", 4) == 0) {
		line += 4;
		end = find_key(line, "obj:", &obj);
		if (end == line || *line == '\0' ||
		    (end != NULL && *obj == '\0'))
			return "empty pattern";
		l->fun = end != NULL ? xstrndup(line, (size_t)(end - line)) :
		    xstrdup(line);
		if (end != NULL)
			l->obj = xstrdup(obj);
	} else if (strncmp(line, "obj:", 4) == 0) {
		line += 4;
		if (*line == '\0')
			return "empty pattern";
		if (find_key(line, "fun:", &obj) != NULL)
			return "fun: comes first (fun:FUNCTION obj:MODULE)";
		l->obj = xstrdup(line);
	} else {
		return "expected a frame: fun:FUNCTION, fun:FUNCTION "
		    "obj:MODULE, obj:MODULE or ...";
	}
	if (l->obj != NULL && find_key(l->obj, "obj:", &obj) != NULL) {
		free(l->fun);
		free(l->obj);
		return "two obj: in one frame";
	}
	return NULL;
}

const char *
chain_add_line(supp_chain_t *c, const char *line)
{
	chain_line_t l;
	const char *why;

	if (c->name == NULL) {
		c->name = xstrdup(line);
		return NULL;
	}
	if (!c->have_finding)
		return parse_finding(c, line);
	if (c->n == SUPP_CHAIN_MAX_FRAMES)
		return "more frame lines than a rule may have (256)";
	if ((why = parse_frame(&l, line)) != NULL)
		return why;
	c->lines = xrealloc(c->lines, (c->n + 1) * sizeof(*c->lines));
	c->lines[c->n++] = l;
	return NULL;
}

const char *
chain_finish(const supp_chain_t *c)
{
	if (c->name == NULL)
		return "empty rule: a name, the finding (e.g. "
		    "leak:device:cuMemAlloc_v2) and frames were expected";
	if (!c->have_finding)
		return "the rule has no finding line (e.g. "
		    "leak:device:cuMemAlloc_v2)";
	if (c->n == 0)
		return "the rule has no frame line (fun:, obj: or ...)";
	return NULL;
}

void
chain_free(supp_chain_t *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->lines[i].fun);
		free(c->lines[i].obj);
	}
	free(c->lines);
	free(c->name);
	free(c->what);
	free(c->api);
	free(c);
}

chain_frame_t *
chain_frames(const au_stack_t *st, size_t *n)
{
	size_t i, j, k = 0, total = 0;
	chain_frame_t *out;

	for (i = 0; i < st->n; i++)
		total += 1 + st->frames[i].ninlined;
	out = xcalloc(total + 1, sizeof(*out));
	for (i = 0; i < st->n; i++) {
		const au_frame_t *f = &st->frames[i];

		for (j = 0; j < f->ninlined; j++) {
			out[k].function = f->inlined[j].function;
			out[k++].module = f->module;
		}
		out[k].function = f->function;
		out[k++].module = f->module;
	}
	*n = k;
	return out;
}

/* An unknown (or empty) name is matched as "???". */
static const char *
known(const char *s)
{
	return s != NULL && *s != '\0' ? s : "???";
}

static bool
line_matches(const chain_line_t *l, const chain_frame_t *f)
{
	const char *mod = known(f->module);

	if (l->fun != NULL && fnmatch(l->fun, known(f->function), 0) != 0)
		return false;
	if (l->obj != NULL && fnmatch(l->obj, mod, 0) != 0 &&
	    (f->module == NULL || *base_name(f->module) == '\0' ||
	    fnmatch(l->obj, base_name(f->module), 0) != 0))
		return false;
	return true;
}

/* Do the lines match the first frames of fr (prefix: frames after the
 * last line are not compared)?  reach[j]: the lines so far can match
 * fr[0..j) exactly. */
static bool
frames_match(const supp_chain_t *c, const chain_frame_t *fr, size_t n)
{
	bool *reach = xcalloc(n + 1, sizeof(*reach));
	bool *next = xcalloc(n + 1, sizeof(*next));
	bool any = true;
	size_t i, j;

	reach[0] = true;
	for (i = 0; i < c->n && any; i++) {
		const chain_line_t *l = &c->lines[i];
		bool *t;

		any = false;
		for (j = 0; j <= n; j++) {
			if (l->any)
				next[j] = reach[j] || (j > 0 && next[j - 1]);
			else
				next[j] = j > 0 && reach[j - 1] &&
				    line_matches(l, &fr[j - 1]);
			any = any || next[j];
		}
		t = reach;
		reach = next;
		next = t;
	}
	free(reach);
	free(next);
	return any;
}

bool
chain_matches(const supp_chain_t *c, const au_finding_t *f)
{
	chain_frame_t *fr;
	size_t n;
	bool ok;

	if (f->cls != c->cls || (c->cls == AU_LEAK && f->cat != c->cat))
		return false;
	if (fnmatch(c->what, f->cls == AU_LEAK ? f->kind : f->type, 0) != 0)
		return false;
	if (c->api != NULL && fnmatch(c->api, f->api, 0) != 0)
		return false;
	fr = chain_frames(&f->stack, &n);
	ok = frames_match(c, fr, n);
	free(fr);
	return ok;
}
