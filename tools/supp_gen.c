/*
 * supp_gen.c -- --gen-suppressions: one call-chain rule (supp_chain.c's
 * format) for every reported finding group, naming its class, kind or
 * type, API and frames from the innermost up to and including main;
 * identical rules written once, each under the comment lines of every
 * finding it stands for.  The file written always loads back and each
 * rule matches the findings it was written for (tests/fuzz/fuzz_supp.c
 * checks both).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "model.h"
#include "num.h"
#include "path.h"
#include "supp_chain.h"
#include "suppress.h"
#include "text.h"
#include "xalloc.h"

/* A rule to write: its lines, its name, and the comment lines of the
 * findings it stands for.  body NULL: a finding no rule can express. */
typedef struct gen_rule_s {
	char *body;
	char *name;
	char *notes;
} gen_rule_t;

typedef struct gen_s {
	gen_rule_t *rules;
	size_t n;
	size_t findings, written, norule; /* groups; rules; groups with none */
} gen_t;

static bool
named(const char *s)
{
	return s != NULL && *s != '\0';
}

static bool
blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Writes name as a pattern that the file parser (supp_load) takes back
 * whole and that matches name: fnmatch's special characters escaped
 * ("operator[]"); '#' escaped too (after a blank it would start a
 * comment: "{lambda(int) #1}"); in a frame's pattern, a blank escaped
 * where the blanks after it lead to "fun:" or "obj:" (the parser would
 * take them for the next part of the frame line); each byte the parser cannot keep -- a control character (a
 * newline would end the rule, a trailing '\r' be trimmed), a blank at the
 * end (trimmed, or taken for the separator before "obj:"), and, when
 * colon is set, a ':' (it ends the kind or type) -- written as '?', which
 * matches any one byte.  Never cut: a cut pattern would match nothing. */
static void
put_pattern(FILE *out, const char *p, bool colon, bool frame)
{
	size_t n = strlen(p), keep = n;

	while (keep > 0 && blank(p[keep - 1]))
		keep--;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (i >= keep || c < 0x20 || c == 0x7f || (colon && c == ':')) {
			c = '?';
		} else if (c == '*' || c == '?' || c == '[' || c == '\\' ||
		    c == '#') {
			fputc('\\', out);
		} else if (blank((char)c) && frame) {
			size_t j = i;

			while (blank(p[j]))
				j++;
			if (strncmp(p + j, "fun:", 4) == 0 ||
			    strncmp(p + j, "obj:", 4) == 0)
				fputc('\\', out);
		}
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

/* One frame line.  The static CUDA runtime's internal functions are
 * named libcudart_static_<hash>, a hash that changes with every CUDA
 * release: written as a pattern. */
static void
put_frame(FILE *out, const chain_frame_t *f)
{
	const char *mod = NULL;

	if (named(f->module))
		mod = named(base_name(f->module)) ? base_name(f->module) :
		    f->module;
	fputs("   ", out);
	if (named(f->function)) {
		fputs("fun:", out);
		if (strncmp(f->function, "libcudart_static_", 17) == 0)
			fputs("libcudart_static_*", out);
		else
			put_pattern(out, f->function, false, true);
		if (mod != NULL) {
			fputs(" obj:", out);
			put_pattern(out, mod, false, true);
		}
	} else if (mod != NULL) {
		fputs("obj:", out);
		put_pattern(out, mod, false, true);
	} else {
		fputs("fun:*", out); /* nothing known: any one frame */
	}
	fputc('\n', out);
}

/* The rule's lines for f: the finding, then the frames from the
 * innermost up to main (at most max, 0 = no limit; "..." when frames
 * were left out).  NULL when f has no stack. */
static char *
rule_body(const au_finding_t *f, size_t max)
{
	const char *what = f->cls == AU_LEAK ? f->kind : f->type;
	chain_frame_t *fr;
	size_t n, i;
	char *body = NULL;
	size_t len = 0;
	FILE *out;

	if (f->stack.n == 0)
		return NULL;
	fr = chain_frames(&f->stack, &n);
	out = xopen_memstream(&body, &len);
	fprintf(out, "   %s:", f->cls == AU_LEAK ? cat_name(f->cat) :
	    "violation");
	if (named(what))
		put_pattern(out, what, true, false);
	else
		fputc('*', out);
	if (named(f->api)) {
		fputc(':', out);
		put_pattern(out, f->api, false, false);
	}
	fputc('\n', out);
	for (i = 0; i < n; i++) {
		if (max > 0 && i == max) {
			fputs("   ...\n", out);
			break;
		}
		put_frame(out, &fr[i]);
		if (named(fr[i].function) && strcmp(fr[i].function, "main") == 0)
			break;
	}
	xclose_memstream(out);
	free(fr);
	return body;
}

/* The comment line of finding f. */
static char *
rule_note(const au_finding_t *f)
{
	char b1[32], *note = NULL;
	size_t len = 0;
	FILE *out = xopen_memstream(&note, &len);

	if (f->cls == AU_LEAK) {
		fprintf(out, "# %s bytes in %llu ", fmt_commas(f->bytes, b1,
		    sizeof(b1)), (unsigned long long)f->count);
		put_text(out, f->kind);
		fprintf(out, " allocation%s (", f->count == 1 ? "" : "s");
	} else {
		fputs("# ", out);
		put_text(out, f->type);
		fputs(" (", out);
	}
	put_text(out, f->api);
	fprintf(out, "), fingerprint %s\n", f->fingerprint);
	xclose_memstream(out);
	return note;
}

/* A name no other rule has: the class (the violation type when it is a
 * plain word) and the fingerprint. */
static char *
rule_name(const gen_t *g, const au_finding_t *f)
{
	const char *cls = f->cls == AU_LEAK ? cat_name(f->cat) : "violation";
	const char *fp = f->fingerprint;
	char *name;
	size_t i;
	unsigned k = 1;

	if (f->cls == AU_VIOLATION && named(f->type) &&
	    strlen(f->type) < 40 &&
	    strspn(f->type, "abcdefghijklmnopqrstuvwxyz0123456789_") ==
	    strlen(f->type))
		cls = f->type;
	if (strlen(fp) != 16 || strspn(fp, "0123456789abcdef") != 16)
		fp = "group";
	name = xasprintf("%s-%s", cls, fp);
	for (i = 0; i < g->n; i++)
		if (g->rules[i].name != NULL &&
		    strcmp(g->rules[i].name, name) == 0) {
			free(name);
			name = xasprintf("%s-%s-%u", cls, fp, ++k);
			i = (size_t)-1; /* check the new one from the start */
		}
	return name;
}

static void
add_finding(gen_t *g, const au_finding_t *f, size_t max)
{
	char *body = rule_body(f, max), *note = rule_note(f);
	gen_rule_t *r = NULL;
	size_t i;

	for (i = 0; body != NULL && i < g->n; i++)
		if (g->rules[i].body != NULL &&
		    strcmp(g->rules[i].body, body) == 0) {
			r = &g->rules[i];
			break;
		}
	if (r != NULL) {
		char *both = xasprintf("%s%s", r->notes, note);

		free(r->notes);
		free(note);
		free(body);
		r->notes = both;
		return;
	}
	g->rules = xrealloc(g->rules, (g->n + 1) * sizeof(*g->rules));
	r = &g->rules[g->n];
	r->name = body != NULL ? rule_name(g, f) : NULL;
	r->body = body;
	r->notes = note;
	g->n++;
	if (body != NULL)
		g->written++;
	else
		g->norule++;
}

void
supp_generate(const au_model_t *m, size_t max_frames, FILE *out)
{
	gen_t g;
	size_t i;

	memset(&g, 0, sizeof(g));
	for (i = 0; i < m->nleaks + m->nviols; i++) {
		const au_finding_t *f = i < m->nleaks ? m->leaks[i] :
		    m->viols[i - m->nleaks];

		if (finding_reported(f)) {
			add_finding(&g, f, max_frames);
			g.findings++;
		}
	}
	fprintf(out, "# ---- " AU_PROG " --gen-suppressions: %zu rule%s for "
	    "%zu finding group%s", g.written, g.written == 1 ? "" : "s",
	    g.findings, g.findings == 1 ? "" : "s");
	if (g.norule > 0)
		fprintf(out, " (%zu with no rule)", g.norule);
	fputs(" (use with --suppressions FILE) ----\n", out);
	for (i = 0; i < g.n; i++) {
		gen_rule_t *r = &g.rules[i];

		fputs(r->notes, out);
		if (r->body == NULL)
			fputs("# (no rule: no stack was captured for this "
			    "finding)\n", out);
		else
			fprintf(out, "{\n   %s\n%s}\n", r->name, r->body);
		free(r->notes);
		free(r->body);
		free(r->name);
	}
	fputs("# ---- end of suppressions ----\n", out);
	free(g.rules);
}
