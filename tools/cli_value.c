/*
 * cli_value.c -- the values options take (cli_int.h): yes|no, the
 * %-patterns of --log-file, the category lists of --show-leak-kinds.
 * Pure functions of their argument (and of the environment, pid and host
 * for %q, %p, %r, %h and %j): cli.c turns what they refuse into usage errors.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "audit.h"
#include "cli_int.h"
#include "jobenv.h"
#include "model.h"
#include "render.h"
#include "xalloc.h"

bool
cli_yesno(const char *arg, bool *v)
{
	if (strcmp(arg, "yes") == 0)
		*v = true;
	else if (strcmp(arg, "no") == 0)
		*v = false;
	else
		return true;
	return false;
}

#define PATTERNS ": use %p (the tool's pid), %r (the rank), %h (the host), " \
	"%j (the job id), %q{VAR} (the variable VAR) or %% (a %)"

/* Appends n bytes of s to the string *buf of *len bytes. */
static void
append(char **buf, size_t *len, const char *s, size_t n)
{
	*buf = xrealloc(*buf, *len + n + 1);
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/* %r, %h or %j (c) as the shim expands them (lib/jobenv.h), from the
 * tool's own environment: the launcher that started the tool set it. */
static void
job_escape(char c, char *buf, size_t size)
{
	jobenv_t j;
	struct utsname u;

	jobenv_parse(environ, &j);
	if (c == 'r' && j.rank >= 0)
		snprintf(buf, size, "%ld", j.rank);
	else if (c == 'r')
		snprintf(buf, size, JOBENV_NO_RANK_PREFIX "%ld",
		    (long)getpid());
	else if (c == 'j')
		jobenv_safe_name(buf, size, j.id[0] != '\0' ? j.id :
		    JOBENV_NO_JOB);
	else
		jobenv_safe_name(buf, size, uname(&u) == 0 &&
		    u.nodename[0] != '\0' ? u.nodename : JOBENV_NO_HOST);
}

char *
cli_log_pattern(const char *pat, char **why)
{
	char *out = xstrdup("");
	size_t len = 0;
	const char *p = pat;

	*why = NULL;
	while (*p != '\0') {
		const char *pc = strchr(p, '%');

		if (pc == NULL) {
			append(&out, &len, p, strlen(p));
			break;
		}
		append(&out, &len, p, (size_t)(pc - p));
		if (pc[1] == '%') {
			append(&out, &len, "%", 1);
			p = pc + 2;
		} else if (pc[1] == 'p') {
			char pid[24];
			int n = snprintf(pid, sizeof(pid), "%ld",
			    (long)getpid());

			append(&out, &len, pid, (size_t)n);
			p = pc + 2;
		} else if (pc[1] == 'r' || pc[1] == 'h' || pc[1] == 'j') {
			char v[160];

			job_escape(pc[1], v, sizeof(v));
			append(&out, &len, v, strlen(v));
			p = pc + 2;
		} else if (pc[1] == 'q') {
			const char *name = pc + 3, *end, *val;
			char *var;

			if (pc[2] != '{') {
				*why = xstrdup("%q is not followed by {VAR}"
				    PATTERNS);
				goto fail;
			}
			if ((end = strchr(name, '}')) == NULL) {
				*why = xstrdup("%q{ has no closing }"
				    PATTERNS);
				goto fail;
			}
			if (end == name) {
				*why = xstrdup("%q{} names no variable"
				    PATTERNS);
				goto fail;
			}
			var = xstrndup(name, (size_t)(end - name));
			val = getenv(var);
			if (val == NULL) {
				*why = xasprintf("the environment variable "
				    "%s (%%q{%s}) is not set", var, var);
				free(var);
				goto fail;
			}
			free(var);
			append(&out, &len, val, strlen(val));
			p = end + 1;
		} else {
			*why = pc[1] == '\0' ? xstrdup("a % at the end"
			    PATTERNS) : xasprintf("%%%c is not a pattern%s", pc[1],
			    PATTERNS);
			goto fail;
		}
	}
	return out;
fail:
	free(out);
	return NULL;
}

char *
cli_leak_kinds(const char *arg, unsigned *set)
{
	const char *p = arg;

	if (strcmp(arg, "all") == 0) {
		*set = AU_SHOW_ALL;
		return NULL;
	}
	if (strcmp(arg, "none") == 0) {
		*set = AU_SHOW_NONE;
		return NULL;
	}
	*set = AU_SHOW_NONE;
	for (;;) {
		size_t n = strcspn(p, ",");
		char *item = xstrndup(p, n);
		au_cat_t cat;

		/* valgrind's name for memory nobody points to any more. */
		if (strcmp(item, "definite") == 0)
			*set |= AU_SHOW_CAT(AU_CAT_LEAK);
		else if (strcmp(item, "suppressed") == 0)
			*set |= AU_SHOW_SUPPRESSED;
		else if (cat_parse(item, &cat))
			*set |= AU_SHOW_CAT(cat);
		else
			return item;
		free(item);
		if (p[n] == '\0')
			return NULL;
		p += n + 1;
	}
}
