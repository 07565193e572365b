/*
 * fuzz_supp.c -- libFuzzer target for the suppressions of cuwarden-audit
 * (tools/suppress.c): the file parser (supp_load), the matcher
 * (supp_apply, fnmatch patterns against frames, owners and violation
 * types) and --gen-suppressions (supp_generate).
 *
 * Input: a suppressions file (the bytes up to the first NUL), then a
 * description of findings (class, type, kind, api, owner, frames with
 * module, function, file and inlined calls; strings separated by \1, a
 * lone \2 for NULL).  Properties checked:
 *   1. supp_load either accepts the file or says "FILE:LINE: ..." in one
 *      line; no crash, no leak.
 *   2. After supp_apply, the counts of the rules that matched
 *      (supp_foreach_used) add up to the counts of the suppressed
 *      findings, and every suppressed finding names a rule.
 *   3. Round trip: supp_generate over the unsuppressed findings writes a
 *      file that supp_load must accept, and that file, applied to the
 *      same findings, must suppress every finding it wrote a rule for
 *      (a call-chain rule for every finding with a stack, suppress.h).  A failure aborts with the generated file on stderr;
 *      set CW_FUZZ_SUPP_LAX=1 to log such failures once per kind of
 *      character involved and go on (how the long runs were made, so
 *      that one known issue does not hide the others).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "audit.h"
#include "baseline.h"
#include "model.h"
#include "suppress.h"
#include "xalloc.h"

#define CHECK(c) \
	do { \
		if (!(c)) { \
			fprintf(stderr, "fuzz_supp: check failed: %s " \
			    "(line %d)\n", #c, __LINE__); \
			abort(); \
		} \
	} while (0)

#define MAX_FINDINGS 8
#define MAX_FRAMES 6
#define MAX_STR 1500 /* above the 1 KiB of supp_generate's buffer */

typedef struct cursor_s {
	const uint8_t *p, *e;
} cursor_t;

static unsigned
take_byte(cursor_t *c)
{
	return c->p < c->e ? *c->p++ : 0;
}

/* A string up to \1 (or the end); NULL for a lone \2 when nullable. */
static char *
take_str(cursor_t *c, bool nullable)
{
	const uint8_t *s = c->p;
	size_t n = 0;
	char *r;

	while (c->p < c->e && *c->p != 1)
		c->p++;
	n = (size_t)(c->p - s);
	if (c->p < c->e)
		c->p++;
	if (nullable && n == 1 && s[0] == 2)
		return NULL;
	if (n > MAX_STR)
		n = MAX_STR;
	r = xmalloc(n + 1);
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

static void
take_stack(cursor_t *c, au_stack_t *st)
{
	st->n = take_byte(c) % MAX_FRAMES;
	st->frames = xcalloc(st->n + 1, sizeof(*st->frames));
	for (size_t i = 0; i < st->n; i++) {
		au_frame_t *f = &st->frames[i];

		f->module = take_str(c, true);
		f->build_id = xstrdup("");
		f->offset = take_byte(c);
		f->function = take_str(c, true);
		f->file = take_str(c, true);
		f->ninlined = take_byte(c) % 3;
		f->inlined = xcalloc(f->ninlined + 1, sizeof(*f->inlined));
		for (size_t j = 0; j < f->ninlined; j++) {
			f->inlined[j].function = take_str(c, true);
			f->inlined[j].file = take_str(c, true);
		}
		f->symbolized = true;
	}
}

static void
build_model(au_model_t *m, const uint8_t *data, size_t size)
{
	cursor_t c = { data, data + size };

	memset(m, 0, sizeof(*m));
	while (c.p < c.e && m->nleaks + m->nviols < MAX_FINDINGS) {
		au_finding_t *f = xcalloc(1, sizeof(*f));

		f->cls = take_byte(&c) & 1 ? AU_VIOLATION : AU_LEAK;
		f->type = take_str(&c, false);
		f->kind = xstrdup(f->cls == AU_LEAK ? f->type : "device");
		f->api = take_str(&c, false);
		f->owner = take_str(&c, false);
		f->device = 0;
		f->count = 1 + take_byte(&c);
		f->size = 512;
		f->bytes = f->count * f->size;
		take_stack(&c, &f->stack);
		fingerprint_compute(f);
		f->seq = m->seq++;
		if (f->cls == AU_LEAK) {
			m->leaks = xrealloc(m->leaks, (m->nleaks + 1) *
			    sizeof(*m->leaks));
			m->leaks[m->nleaks++] = f;
		} else {
			m->viols = xrealloc(m->viols, (m->nviols + 1) *
			    sizeof(*m->viols));
			m->viols[m->nviols++] = f;
		}
	}
}

static void
reset_model(au_model_t *m)
{
	for (size_t i = 0; i < m->nleaks; i++)
		m->leaks[i]->suppressed_by = NULL;
	for (size_t i = 0; i < m->nviols; i++)
		m->viols[i]->suppressed_by = NULL;
}

/* A memfd holding text, named /proc/self/fd/N in path. */
static int
text_file(const char *text, size_t n, char *path, size_t size)
{
	int fd = memfd_create("fuzz_supp", 0);

	CHECK(fd >= 0);
	CHECK(write(fd, text, n) == (ssize_t)n);
	snprintf(path, size, "/proc/self/fd/%d", fd);
	return fd;
}

static void
used(const char *rule, const char *origin, uint64_t count, uint64_t bytes,
    void *arg)
{
	uint64_t *sum = arg;

	CHECK(rule != NULL && origin != NULL && count > 0);
	(void)bytes;
	*sum += count;
}

static void
check_counts(const au_supp_t *s, const au_model_t *m)
{
	uint64_t rules = 0, findings = 0;

	supp_foreach_used(s, used, &rules);
	for (size_t i = 0; i < m->nleaks; i++)
		if (m->leaks[i]->suppressed_by != NULL)
			findings += m->leaks[i]->count;
	for (size_t i = 0; i < m->nviols; i++)
		if (m->viols[i]->suppressed_by != NULL)
			findings += m->viols[i]->count;
	CHECK(rules == findings);
}

/* Which findings got a rule in the generated text: every finding with a
 * stack ("--gen-suppressions" writes a call-chain rule for each, the
 * same rule once for findings that share it); one without gets a "#
 * (no rule: ...)" comment.  Each finding has its "# ..., fingerprint FP"
 * comment line, none split: as many such lines as findings. */
static void
rules_written(const char *gen, const au_model_t *m, bool *has)
{
	const char *line = gen;
	size_t i, notes = 0, n = m->nleaks + m->nviols;

	while (*line != '\0') {
		const char *end = strchr(line, '\n');
		size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
		static const char tag[] = ", fingerprint ";

		if (len > 2 && line[0] == '#' && memmem(line, len, tag,
		    sizeof(tag) - 1) != NULL)
			notes++;
		if (end == NULL)
			break;
		line = end + 1;
	}
	CHECK(notes == n);
	for (i = 0; i < n; i++) {
		const au_finding_t *f = i < m->nleaks ? m->leaks[i] :
		    m->viols[i - m->nleaks];

		has[i] = f->stack.n > 0;
	}
}

/* A one-word description of what makes a pattern special, to log a
 * failure of the lax mode once per kind. */
static const char *
trait(const char *gen)
{
	if (strchr(gen, '#') != NULL && strstr(gen, "#1") != NULL)
		return "hash";
	if (strpbrk(gen, "\r\v\f") != NULL)
		return "control";
	if (strstr(gen, " \n") != NULL || strstr(gen, "\t\n") != NULL ||
	    strstr(gen, ": ") != NULL || strstr(gen, ":\t") != NULL)
		return "blank";
	return "other";
}

static void
round_trip(au_model_t *m)
{
	char *gen = NULL, path[64], err[1024];
	size_t glen = 0;
	FILE *out = open_memstream(&gen, &glen);
	au_supp_t *s;
	bool *has = NULL;
	int fd;

	CHECK(out != NULL);
	reset_model(m);
	supp_generate(m, 0, out);
	CHECK(fclose(out) == 0);
	fd = text_file(gen, glen, path, sizeof(path));
	s = supp_new();
	err[0] = '\0';
	if (supp_load(s, path, err, sizeof(err))) {
		static char reasons[8][96];
		const char *why = strrchr(err, ':');
		size_t k;

		why = why != NULL ? why : err;
		for (k = 0; k < 8 && reasons[k][0]; k++)
			if (strcmp(reasons[k], why) == 0)
				break;
		if (getenv("CW_FUZZ_SUPP_LAX") == NULL || (k < 8 &&
		    !reasons[k][0])) {
			if (k < 8)
				snprintf(reasons[k], sizeof(reasons[k]), "%s",
				    why);
			fprintf(stderr, "fuzz_supp: generated suppressions "
			    "refused: %s\n--- generated:\n%s---\n", err,
			    gen);
		}
		if (getenv("CW_FUZZ_SUPP_LAX") == NULL)
			abort();
		goto out;
	}
	supp_apply(s, m);
	check_counts(s, m);
	has = xcalloc(m->nleaks + m->nviols + 1, sizeof(*has));
	rules_written(gen, m, has);
	for (size_t i = 0; i < m->nleaks + m->nviols; i++) {
		au_finding_t *f = i < m->nleaks ? m->leaks[i] :
		    m->viols[i - m->nleaks];
		static char seen[8][16];
		const char *t;

		if (f->suppressed_by != NULL || !has[i])
			continue;
		t = trait(gen);
		if (getenv("CW_FUZZ_SUPP_LAX") != NULL) {
			size_t k;

			for (k = 0; k < 8 && seen[k][0]; k++)
				if (strcmp(seen[k], t) == 0)
					break;
			if (k == 8 || seen[k][0])
				continue;
			snprintf(seen[k], sizeof(seen[k]), "%s", t);
		}
		fprintf(stderr, "fuzz_supp: generated rule does not suppress "
		    "finding %s (%s)\n--- generated:\n%s---\n",
		    f->fingerprint, t, gen);
		if (getenv("CW_FUZZ_SUPP_LAX") == NULL)
			abort();
	}
out:
	free(has);
	supp_free(s);
	close(fd);
	free(gen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t tlen = nul != NULL ? (size_t)(nul - data) : size;
	char path[64], err[1024];
	au_supp_t *s = supp_new();
	au_model_t m;
	int fd;

	build_model(&m, nul != NULL ? nul + 1 : data + size,
	    nul != NULL ? size - tlen - 1 : 0);
	fd = text_file((const char *)data, tlen, path, sizeof(path));
	if (size > 0 && (data[0] & 1))
		supp_add_builtin(s);
	err[0] = '\0';
	if (supp_load(s, path, err, sizeof(err))) {
		CHECK(strncmp(err, path, strlen(path)) == 0);
		CHECK(err[strlen(path)] == ':');
		CHECK(strchr(err, '\n') == NULL);
	} else {
		supp_apply(s, &m);
		check_counts(s, &m);
	}
	supp_free(s);
	close(fd);
	round_trip(&m);
	model_free(&m);
	return 0;
}
