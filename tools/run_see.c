/*
 * run_see.c -- --see-through (run_int.h): the program's environment that
 * turns the frameworks' caching allocators off and pool mode on
 * (lib/seethrough.h's table), and the CuPy hook's directory, found beside
 * the shim, first on PYTHONPATH; each setting said on stderr before the
 * program starts, as valgrind's preamble.  A variable the environment
 * (or an option of ours: --mode) already gives is kept, and said too.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "diag.h"
#include "run_int.h"
#include "seethrough.h"
#include "text.h"
#include "xalloc.h"

typedef struct see_var_s {
	const char *var, *value, *framework, *what;
} see_var_t;

static const see_var_t see_vars[] = {
#define SEE_ROW(var, value, fw, what) { var, value, fw, what },
	SEE_THROUGH_VARS(SEE_ROW)
#undef SEE_ROW
};

/* The value env (n "NAME=value" entries) gives name, or NULL. */
static const char *
env_value(char **env, size_t n, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return env[i] + len + 1;
	return NULL;
}

/* The CuPy hook's directory beside shim (an absolute path), newly
 * allocated, or NULL. */
static char *
hook_dir(const char *shim)
{
	static const char *const rel[] = SEE_THROUGH_HOOK_DIRS;
	char *dir = xstrdup(shim), *slash = strrchr(dir, '/'), *found = NULL;

	if (slash != NULL)
		*slash = '\0';
	for (size_t i = 0; found == NULL && i < sizeof(rel) / sizeof(rel[0]);
	    i++) {
		char *cand = xasprintf("%s/%s/" SEE_THROUGH_HOOK_FILE, dir,
		    rel[i]);

		if (see_hook_is_ours(cand) &&
		    (found = realpath(cand, NULL)) != NULL)
			*strrchr(found, '/') = '\0';
		free(cand);
	}
	free(dir);
	return found;
}

static void
say(bool quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One line of the preamble (escaped: values come from the environment). */
static void
say(bool quiet, const char *fmt, ...)
{
	va_list ap;
	char *line, *esc;

	if (quiet)
		return;
	va_start(ap, fmt);
	line = xvasprintf(fmt, ap);
	va_end(ap);
	esc = text_escape(line);
	fprintf(stderr, AU_PROG ": see-through: %s\n", esc);
	free(esc);
	free(line);
}

static void
add(char ***env, size_t *n, char *entry)
{
	*env = xrealloc(*env, (*n + 1) * sizeof(**env));
	(*env)[(*n)++] = entry;
}

char **
run_see_env(const au_run_opts_t *o, const char *shim, size_t *n)
{
	char **env = xcalloc(o->nenv + 1, sizeof(*env)), *dir;
	const char *old;

	memcpy(env, o->env, o->nenv * sizeof(*env));
	*n = o->nenv;
	for (size_t i = 0; i < sizeof(see_vars) / sizeof(see_vars[0]); i++) {
		const see_var_t *v = &see_vars[i];

		if ((old = env_value(o->env, o->nenv, v->var)) != NULL) {
			say(o->quiet, "%s=%s kept, given on the command "
			    "line (see-through would set %s)", v->var, old,
			    v->value);
		} else if ((old = getenv(v->var)) != NULL &&
		    strcmp(old, v->value) == 0) {
			say(o->quiet, "%s=%s, from the environment (%s: %s)",
			    v->var, old, v->framework, v->what);
		} else if (old != NULL) {
			say(o->quiet, "%s=%s kept, from the environment "
			    "(see-through would set %s)", v->var, old,
			    v->value);
		} else {
			add(&env, n, xasprintf("%s=%s", v->var, v->value));
			say(o->quiet, "%s=%s (%s: %s)", v->var, v->value,
			    v->framework, v->what);
		}
	}
	old = getenv(SEE_THROUGH_PATHVAR);
	if ((dir = hook_dir(shim)) == NULL || strchr(dir, ':') != NULL) {
		au_warn("see-through: CuPy's hook (%s) is not beside the shim "
		    "%s, or its directory holds a ':': CuPy's memory pools "
		    "stay on", SEE_THROUGH_HOOK_FILE, shim);
	} else if (old != NULL && see_path_has(old, dir)) {
		say(o->quiet, SEE_THROUGH_PATHVAR " has %s already (CuPy: its "
		    "memory pools off at import, by " SEE_THROUGH_HOOK_FILE ")",
		    dir);
	} else {
		add(&env, n, old != NULL && old[0] != '\0' ?
		    xasprintf(SEE_THROUGH_PATHVAR "=%s:%s", dir, old) :
		    xasprintf(SEE_THROUGH_PATHVAR "=%s", dir));
		say(o->quiet, "%s (CuPy: its memory pools off at import, by "
		    SEE_THROUGH_HOOK_FILE ")", env[*n - 1]);
	}
	free(dir);
	if (o->see_unsuppressed != NULL)
		say(o->quiet, "built-in suppressions not applied: %s (they hide "
		    "every tensor of these frameworks)", o->see_unsuppressed);
	return env;
}

void
run_see_free(const au_run_opts_t *o, char **env, size_t n)
{
	for (size_t i = o->nenv; i < n; i++)
		free(env[i]);
	free(env);
}
