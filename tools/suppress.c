/*
 * suppress.c -- suppression rules: the built-in list (allocations CUDA's
 * own libraries and the big frameworks keep live by design) and the files
 * given with --suppressions, applied to the findings.  --gen-suppressions
 * is supp_gen.c.
 *
 * A file holds one-line rules and call-chain rules ("{ ... }" blocks,
 * supp_chain.c); '#' starts a comment, blanks are ignored:
 *   leak:PATTERN             a leak with a frame (or owner) matching
 *   owner:PATTERN            a leak whose owner matches
 *   violation:TYPE[:PATTERN] a violation of TYPE (fnmatch; "*" = any)
 *                            with a frame of its stack matching
 * PATTERN is an fnmatch(3) pattern matched against, for each frame, the
 * function (and every inlined function), the module's base name and path,
 * and the source file's base name and path.  The first rule that matches
 * a finding is the one counted (doc/audit.md, "Suppressions").
 */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "input.h"
#include "num.h"
#include "path.h"
#include "supp_chain.h"
#include "suppress.h"
#include "xalloc.h"

typedef enum rule_e {
	RULE_LEAK, RULE_OWNER, RULE_VIOLATION,
	RULE_CHAIN, /* a "{ ... }" block */
} rule_t;

typedef struct supp_rule_s {
	rule_t type;
	char *vtype;   /* violation type pattern */
	char *pattern;
	supp_chain_t *chain; /* RULE_CHAIN */
	char *text;    /* the rule as written; a chain rule's name */
	char *origin;  /* "file:line" or "built-in" */
	uint64_t count, bytes;
} supp_rule_t;

struct au_supp_s {
	supp_rule_t *rules;
	size_t n;
};

/* The built-in rules: "rule", "why".  The math and communication
 * libraries match as any frame: they call the driver themselves, a user's
 * own allocation never passes through them.  The CUDA runtime matches as
 * owner only: every cudaMalloc of the program passes through it. */
static const char *const builtin[][2] = {
	{ "owner:libcudart.so*",
	  "the CUDA runtime's own state (module images, context data)" },
	{ "leak:libcublas.so*",
	  "cuBLAS handle workspaces, kept until cublasDestroy" },
	{ "leak:libcublasLt.so*", "cuBLASLt workspaces" },
	{ "leak:libcudnn*.so*", "cuDNN handles and workspaces" },
	{ "leak:libnccl*.so*",
	  "NCCL communicator buffers, kept until ncclCommDestroy" },
	{ "leak:libcupti*.so*", "CUPTI activity buffers" },
	{ "leak:libcufft*.so*", "cuFFT plan work areas" },
	{ "leak:libcusparse*.so*", "cuSPARSE handle state" },
	{ "leak:libcusolver*.so*", "cuSOLVER handle workspaces" },
	{ "leak:libcurand*.so*", "cuRAND generator state" },
	{ "leak:libc10_cuda.so",
	  "PyTorch's caching allocator: segments cached until exit" },
	{ "leak:*CachingHostAllocator*",
	  "PyTorch's pinned-memory cache (libtorch_cuda.so)" },
	{ "leak:libxla*.so*", "XLA's BFC allocator arena (JAX, TensorFlow)" },
	{ "leak:*BFCAllocator::Extend*",
	  "XLA's BFC arenas, pinned host memory's too (no see-through "
	  "setting turns that one off)" },
	{ "leak:xla_extension*.so*", "jaxlib's XLA client: BFC arena" },
	{ "leak:*xla_cuda*plugin*.so*", "JAX's CUDA PJRT plugin arena" },
	{ "leak:libjax_common*.so*", "jaxlib runtime leftovers" },
};

/* The rules of the table above that hide a framework's cache, and with it
 * every tensor or array: --see-through turns the caches off to see those
 * (doc/audit.md, "Seeing through the caches"). */
static bool
is_cache_rule(const char *rule)
{
	static const char *const caches[] = { "leak:libc10_cuda.so",
	    "leak:libxla*.so*", "leak:xla_extension*.so*",
	    "leak:*xla_cuda*plugin*.so*", "leak:libjax_common*.so*" };

	for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++)
		if (strcmp(rule, caches[i]) == 0)
			return true;
	return false;
}

au_supp_t *
supp_new(void)
{
	return xcalloc(1, sizeof(au_supp_t));
}

static void
add_rule(au_supp_t *s, rule_t type, const char *vtype, const char *pattern,
    const char *text, const char *origin)
{
	supp_rule_t *r;

	s->rules = xrealloc(s->rules, (s->n + 1) * sizeof(*s->rules));
	r = &s->rules[s->n++];
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->vtype = vtype ? xstrdup(vtype) : NULL;
	r->pattern = pattern ? xstrdup(pattern) : NULL;
	r->text = xstrdup(text);
	r->origin = xstrdup(origin);
}

/* Parses one rule.  Returns NULL, or what is wrong with it. */
static const char *
parse_rule(au_supp_t *s, char *line, const char *origin)
{
	char *colon, *rest, *vtype, *pat;

	colon = strchr(line, ':');
	if (colon == NULL)
		return "expected leak:PATTERN, owner:PATTERN, "
		       "violation:TYPE[:PATTERN], or \"{\" to open a "
		       "call-chain rule";
	*colon = '\0';
	rest = colon + 1;
	if (strcmp(line, "leak") == 0 || strcmp(line, "owner") == 0) {
		bool leak = line[0] == 'l';

		*colon = ':';
		if (*rest == '\0')
			return "empty pattern";
		add_rule(s, leak ? RULE_LEAK : RULE_OWNER, NULL, rest, line,
		    origin);
		return NULL;
	}
	if (strcmp(line, "violation") == 0) {
		*colon = ':';
		vtype = xstrdup(rest);
		pat = strchr(vtype, ':');
		if (pat != NULL)
			*pat++ = '\0';
		if (*vtype == '\0' || (pat != NULL && *pat == '\0')) {
			free(vtype);
			return "empty violation type or pattern";
		}
		add_rule(s, RULE_VIOLATION, vtype, pat ? pat : "*", line,
		    origin);
		free(vtype);
		return NULL;
	}
	return "unknown rule type (expected leak:, owner:, violation:, or "
	    "\"{\" to open a call-chain rule)";
}

/* The built-in rules, the caches' too unless skipped is not NULL: then
 * they are left out and listed in *skipped (", "-separated). */
static void
add_builtin(au_supp_t *s, char **skipped)
{
	size_t i;

	for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++) {
		char *line;
		const char *bad;

		if (skipped != NULL && is_cache_rule(builtin[i][0])) {
			char *l = xasprintf("%s%s%s", *skipped ? *skipped : "",
			    *skipped ? ", " : "", builtin[i][0]);

			free(*skipped);
			*skipped = l;
			continue;
		}
		line = xstrdup(builtin[i][0]);
		bad = parse_rule(s, line, "built-in");
		if (bad != NULL)
			abort(); /* the table above is wrong */
		free(line);
	}
}

void
supp_add_builtin(au_supp_t *s)
{
	add_builtin(s, NULL);
}

char *
supp_add_builtin_but_caches(au_supp_t *s)
{
	char *skipped = NULL;

	add_builtin(s, &skipped);
	return skipped;
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
	    e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* A file being read: where it is, and the "{ ... }" rule open there. */
typedef struct loader_s {
	au_supp_t *s;
	const char *path;
	unsigned lineno;
	supp_chain_t *open; /* NULL outside a block */
	unsigned open_line; /* its "{" */
	char *err;
	size_t errsize;
} loader_t;

/* The "}" of the open rule.  Returns true on error (message in err). */
static bool
close_chain(loader_t *ld)
{
	const char *why = chain_finish(ld->open);
	char *origin = xasprintf("%s:%u", ld->path, ld->open_line);

	if (why != NULL) {
		snprintf(ld->err, ld->errsize, "%s: malformed suppression "
		    "rule \"%s\" (lines %u-%u): %s", origin,
		    chain_name(ld->open) ? chain_name(ld->open) : "",
		    ld->open_line, ld->lineno, why);
		free(origin);
		return true;
	}
	add_rule(ld->s, RULE_CHAIN, NULL, NULL, chain_name(ld->open), origin);
	ld->s->rules[ld->s->n - 1].chain = ld->open;
	ld->open = NULL;
	free(origin);
	return false;
}

/* One line (trimmed, comment removed, not empty).  Returns true on error
 * (message in err). */
static bool
load_line(loader_t *ld, char *line)
{
	const char *why;
	char *origin, *copy;

	if (strcmp(line, "}") == 0) {
		if (ld->open != NULL)
			return close_chain(ld);
		snprintf(ld->err, ld->errsize, "%s:%u: \"}\" without a \"{\"",
		    ld->path, ld->lineno);
		return true;
	}
	if (strcmp(line, "{") == 0) {
		if (ld->open == NULL) {
			ld->open = chain_new();
			ld->open_line = ld->lineno;
			return false;
		}
		snprintf(ld->err, ld->errsize, "%s:%u: \"{\" inside the rule "
		    "opened at line %u (a \"}\" is missing)", ld->path,
		    ld->lineno, ld->open_line);
		return true;
	}
	origin = xasprintf("%s:%u", ld->path, ld->lineno);
	copy = xstrdup(line);
	if (ld->open != NULL) {
		why = chain_add_line(ld->open, line);
		if (why != NULL)
			snprintf(ld->err, ld->errsize, "%s: malformed "
			    "suppression \"%s\": %s (in the rule opened at "
			    "line %u)", origin, copy, why, ld->open_line);
	} else {
		why = parse_rule(ld->s, line, origin);
		if (why != NULL)
			snprintf(ld->err, ld->errsize, "%s: malformed "
			    "suppression \"%s\": %s", origin, copy, why);
	}
	free(copy);
	free(origin);
	return why != NULL;
}

bool
supp_load(au_supp_t *s, const char *path, char *err, size_t errsize)
{
	char *buf = NULL, *line, *hash;
	size_t cap = 0;
	ssize_t len;
	loader_t ld = { s, path, 0, NULL, 0, err, errsize };
	bool bad = false;
	FILE *fp;
	int fd;

	fd = input_open(path, AU_MAX_SUPP_BYTES, "the suppressions file",
	    NULL, err, errsize);
	if (fd < 0)
		return true;
	if ((fp = fdopen(fd, "r")) == NULL) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		close(fd);
		return true;
	}
	while ((len = getline(&buf, &cap, fp)) >= 0) {
		ld.lineno++;
		/* A NUL would cut the line short where the string functions
		 * below look: the rule would be another than the one
		 * written. */
		if (strlen(buf) != (size_t)len) {
			snprintf(err, errsize, "%s:%u: NUL byte", path,
			    ld.lineno);
			bad = true;
			break;
		}
		/* A comment starts with '#' at the start of a line or after
		 * a blank: a '#' inside a pattern is the pattern's (C++
		 * lambdas: "f()::{lambda(int)#1}::operator()"). */
		for (hash = buf; (hash = strchr(hash, '#')) != NULL; hash++)
			if (hash == buf || hash[-1] == ' ' || hash[-1] == '\t')
				break;
		if (hash != NULL)
			*hash = '\0';
		line = trim(buf);
		if (*line != '\0' && (bad = load_line(&ld, line)))
			break;
	}
	free(buf);
	if (!bad && ferror(fp)) {
		snprintf(err, errsize, "%s: read error: %s", path,
		    strerror(errno));
		bad = true;
	}
	if (!bad && ld.open != NULL) {
		snprintf(err, errsize, "%s:%u: the rule opened here%s%s%s has "
		    "no \"}\" before the end of the file", path, ld.open_line,
		    chain_name(ld.open) ? " (\"" : "",
		    chain_name(ld.open) ? chain_name(ld.open) : "",
		    chain_name(ld.open) ? "\")" : "");
		bad = true;
	}
	chain_free(ld.open);
	fclose(fp);
	return bad;
}

static bool
match(const char *pat, const char *s)
{
	return s != NULL && *s != '\0' && fnmatch(pat, s, 0) == 0;
}

/* Does frame pattern `pat` match frame f (function, module base name or
 * path, source file base name or path)? */
static bool
supp_frame_matches(const char *pat, const au_frame_t *f)
{
	size_t i;

	if (match(pat, f->function))
		return true;
	for (i = 0; i < f->ninlined; i++)
		if (match(pat, f->inlined[i].function) ||
		    match(pat, f->inlined[i].file) ||
		    match(pat, base_name(f->inlined[i].file)))
			return true;
	if (f->module != NULL && (match(pat, f->module) ||
	    match(pat, base_name(f->module))))
		return true;
	if (f->file != NULL && (match(pat, f->file) ||
	    match(pat, base_name(f->file))))
		return true;
	return false;
}

static bool
stack_matches(const char *pat, const au_stack_t *st)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (supp_frame_matches(pat, &st->frames[i]))
			return true;
	return false;
}

static bool
rule_matches(const supp_rule_t *r, const au_finding_t *f)
{
	switch (r->type) {
	case RULE_LEAK:
		if (f->cls != AU_LEAK)
			return false;
		return stack_matches(r->pattern, &f->stack) ||
		    match(r->pattern, f->owner) ||
		    match(r->pattern, base_name(f->owner));
	case RULE_OWNER:
		if (f->cls != AU_LEAK)
			return false;
		return match(r->pattern, f->owner) ||
		    match(r->pattern, base_name(f->owner));
	case RULE_VIOLATION:
		if (f->cls != AU_VIOLATION || fnmatch(r->vtype, f->type, 0))
			return false;
		return strcmp(r->pattern, "*") == 0 ||
		    stack_matches(r->pattern, &f->stack);
	case RULE_CHAIN:
		return chain_matches(r->chain, f);
	}
	return false;
}

static void
apply_one(au_supp_t *s, au_finding_t *f)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		supp_rule_t *r = &s->rules[i];

		if (!rule_matches(r, f))
			continue;
		r->count = sat_add(r->count, f->count);
		r->bytes = sat_add(r->bytes, f->bytes);
		f->suppressed_by = r->text;
		return;
	}
}

void
supp_apply(au_supp_t *s, au_model_t *m)
{
	size_t i;

	for (i = 0; i < m->nleaks; i++)
		apply_one(s, m->leaks[i]);
	for (i = 0; i < m->nviols; i++)
		apply_one(s, m->viols[i]);
}

void
supp_foreach_used(const au_supp_t *s,
    void (*fn)(const char *rule, const char *origin, uint64_t count,
	uint64_t bytes, void *arg), void *arg)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		if (s->rules[i].count > 0)
			fn(s->rules[i].text, s->rules[i].origin,
			    s->rules[i].count, s->rules[i].bytes, arg);
}

void
supp_free(au_supp_t *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		chain_free(s->rules[i].chain);
		free(s->rules[i].vtype);
		free(s->rules[i].pattern);
		free(s->rules[i].text);
		free(s->rules[i].origin);
	}
	free(s->rules);
	free(s);
}

void
supp_print_builtin(FILE *out)
{
	size_t i;

	for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		fprintf(out, "%-30s # %s\n", builtin[i][0], builtin[i][1]);
}
