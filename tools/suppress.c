/*
 * suppress.c -- suppression rules: the built-in list (allocations CUDA's
 * own libraries and the big frameworks keep live by design) and the files
 * given with --suppressions; --gen-suppressions.
 *
 * Syntax, one rule a line, '#' starts a comment, blanks ignored:
 *   leak:PATTERN             a leak with a frame (or owner) matching
 *   owner:PATTERN            a leak whose owner matches
 *   violation:TYPE[:PATTERN] a violation of TYPE (fnmatch; "*" = any)
 *                            with a frame of its stack matching
 * PATTERN is an fnmatch(3) pattern matched against, for each frame, the
 * function (and every inlined function), the module's base name and path,
 * and the source file's base name and path.  The first rule that matches
 * a finding is the one counted.
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
#include "suppress.h"
#include "text.h"
#include "xalloc.h"

typedef enum rule_e { RULE_LEAK, RULE_OWNER, RULE_VIOLATION } rule_t;

typedef struct supp_rule_s {
	rule_t type;
	char *vtype;   /* violation type pattern */
	char *pattern;
	char *text;    /* the rule as written */
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
	{ "leak:xla_extension*.so*", "jaxlib's XLA client: BFC arena" },
	{ "leak:*xla_cuda*plugin*.so*", "JAX's CUDA PJRT plugin arena" },
	{ "leak:libjax_common*.so*", "jaxlib runtime leftovers" },
};

/* Frames that are CUDA's or ours, skipped by --gen-suppressions. */
static const char *const runtime_modules[] = {
	"libcuda.so*", "libcudart.so*", "libcudart_static*",
	"libcuwarden*", "libcuwarden_preload*",
};

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
	r->pattern = xstrdup(pattern);
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
		return "expected leak:PATTERN, owner:PATTERN or "
		       "violation:TYPE[:PATTERN]";
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
	return "unknown rule type (expected leak:, owner: or violation:)";
}

void
supp_add_builtin(au_supp_t *s)
{
	size_t i;

	for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++) {
		char *line = xstrdup(builtin[i][0]);
		const char *bad = parse_rule(s, line, "built-in");

		if (bad != NULL)
			abort(); /* the table above is wrong */
		free(line);
	}
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

bool
supp_load(au_supp_t *s, const char *path, char *err, size_t errsize)
{
	char *buf = NULL, *line, *hash;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
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
		const char *why;
		char *origin, *copy;

		lineno++;
		/* A NUL would cut the line short where the string functions
		 * below look: the rule would be another than the one
		 * written. */
		if (strlen(buf) != (size_t)len) {
			snprintf(err, errsize, "%s:%u: NUL byte", path, lineno);
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
		if (*line == '\0')
			continue;
		origin = xasprintf("%s:%u", path, lineno);
		copy = xstrdup(line);
		why = parse_rule(s, line, origin);
		if (why != NULL) {
			snprintf(err, errsize, "%s: malformed suppression "
			    "\"%s\": %s", origin, copy, why);
			bad = true;
		}
		free(copy);
		free(origin);
		if (bad)
			break;
	}
	free(buf);
	if (!bad && ferror(fp)) {
		snprintf(err, errsize, "%s: read error: %s", path,
		    strerror(errno));
		bad = true;
	}
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

static bool
runtime_frame(const au_frame_t *f)
{
	size_t i;

	if (f->module == NULL)
		return true;
	for (i = 0; i < sizeof(runtime_modules) / sizeof(runtime_modules[0]);
	    i++)
		if (fnmatch(runtime_modules[i], base_name(f->module), 0) == 0)
			return true;
	return false;
}

/* A function of the CUDA runtime linked into the program (static
 * cudart): its internals and its API entry points (cudaMalloc, ...). */
static bool
runtime_function(const char *fn)
{
	return fn != NULL && (strncmp(fn, "libcudart_static_", 17) == 0 ||
	    strncmp(fn, "__cuda", 6) == 0 ||
	    (strncmp(fn, "cuda", 4) == 0 && fn[4] >= 'A' && fn[4] <= 'Z'));
}

static bool
named(const char *s)
{
	return s != NULL && *s != '\0';
}

/* The most specific pattern for a stack: the first function outside
 * CUDA's libraries, the static CUDA runtime and ours, else that frame's
 * module (by base name; by path when the path ends in '/').  A frame with
 * no name at all cannot be matched (match() wants a name): the next one
 * is taken. */
static const char *
best_pattern(const au_stack_t *st)
{
	size_t i;

	for (i = 0; i < st->n; i++) {
		const au_frame_t *f = &st->frames[i];

		if (runtime_frame(f) || (f->ninlined == 0 &&
		    runtime_function(f->function)))
			continue;
		if (f->ninlined > 0 && named(f->inlined[0].function))
			return f->inlined[0].function;
		if (named(f->function))
			return f->function;
		if (named(base_name(f->module)))
			return base_name(f->module);
		if (named(f->module))
			return f->module;
	}
	for (i = 0; i < st->n; i++) {
		const char *mod = st->frames[i].module;

		if (named(base_name(mod)))
			return base_name(mod);
		if (named(mod))
			return mod;
	}
	return NULL;
}

/* Writes name as a pattern that the file parser (supp_load) takes back
 * whole and that matches name: fnmatch's special characters escaped
 * ("operator[]"); '#' escaped too (after a blank it would start a
 * comment: "{lambda(int) #1}"); each byte the parser cannot keep -- a
 * control character (a newline would end the rule, a trailing '\r' be
 * trimmed), a blank at the end (trimmed), and in a violation type a ':'
 * (it ends the type) -- written as '?', which matches any one byte.
 * Never cut: a cut pattern would match nothing. */
static void
put_pattern(FILE *out, const char *p, bool vtype)
{
	size_t n = strlen(p), keep = n;

	while (keep > 0 && (p[keep - 1] == ' ' || p[keep - 1] == '\t'))
		keep--;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (i >= keep || c < 0x20 || c == 0x7f || (vtype && c == ':'))
			c = '?';
		else if (c == '*' || c == '?' || c == '[' || c == '\\' ||
		    c == '#')
			fputc('\\', out);
		fputc(c, out);
	}
}

/* s for a comment line: text_escape()d (a newline would end the comment
 * and make the rest a malformed rule). */
static void
put_text(FILE *out, const char *s)
{
	char *esc = text_escape(s);

	fputs(esc, out);
	free(esc);
}

void
supp_generate(const au_model_t *m, FILE *out)
{
	char b1[32];
	size_t i;

	fputs("# Suppressions for the findings above (" AU_PROG
	    " --suppressions FILE):\n", out);
	for (i = 0; i < m->nleaks; i++) {
		const au_finding_t *f = m->leaks[i];
		const char *p, *owner = NULL;

		if (!finding_reported(f))
			continue;
		p = best_pattern(&f->stack);
		if (p == NULL && named(f->owner))
			owner = named(base_name(f->owner)) ?
			    base_name(f->owner) : f->owner;
		fprintf(out, "# %s bytes in %llu ", fmt_commas(f->bytes, b1,
		    sizeof(b1)), (unsigned long long)f->count);
		put_text(out, f->kind);
		fprintf(out, " allocation%s (", f->count == 1 ? "" : "s");
		put_text(out, f->api);
		fprintf(out, "), fingerprint %s\n", f->fingerprint);
		if (p == NULL && owner == NULL) {
			fputs("# (no rule: no frame or owner to match)\n", out);
			continue;
		}
		/* Owners are patterns too ("lib[v2].so"). */
		fputs(p != NULL ? "leak:" : "owner:", out);
		put_pattern(out, p != NULL ? p : owner, false);
		fputc('\n', out);
	}
	for (i = 0; i < m->nviols; i++) {
		const au_finding_t *f = m->viols[i];
		const char *p;

		if (!finding_reported(f))
			continue;
		p = best_pattern(&f->stack);
		fputs("# ", out);
		put_text(out, f->type);
		fputs(" in ", out);
		put_text(out, f->api);
		fprintf(out, ", fingerprint %s\n", f->fingerprint);
		if (!named(f->type)) {
			/* No pattern but "" matches an empty type, and the
			 * parser refuses an empty one. */
			fputs("# (no rule: the violation type is empty)\n",
			    out);
			continue;
		}
		fputs("violation:", out);
		put_pattern(out, f->type, true);
		fputc(':', out);
		if (p != NULL)
			put_pattern(out, p, false);
		else
			fputc('*', out);
		fputc('\n', out);
	}
}
