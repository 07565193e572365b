#include "preamble.h"
/*
 * seethrough.c -- CUWARDEN_SEE_THROUGH=1 with the shim alone (no
 * cuwarden-audit): at load, before main, lib/seethrough.h's variables are
 * set in the process's environment where they are unset, and the CuPy
 * hook's directory (found beside the shim) is put first on PYTHONPATH.
 * The program reads them later: a Python interpreter once main runs,
 * PyTorch, JAX and Numba when they start.  Pool mode itself is the
 * engine's (do_init: CUWARDEN_SEE_THROUGH and no CUWARDEN_MODE).
 *
 * Every process of the run does this, and its children inherit what it
 * set, so only the first one has anything to set: that one prints what
 * it set, and what it kept, one line each; the others say nothing.
 *
 * Invariants: a variable already in the environment (any value, empty
 * included) is never changed; nothing is done in a setuid/setgid process
 * (track_alive).  Runs in the constructor only (its mallocs are safe
 * there), but not alone: the constructors of the program's libraries ran
 * before ours and may have left threads that read the environment.  So
 * setenv is never called -- each call reallocs the array glibc made at
 * the last one, freeing it under such a reader -- and the new environment
 * is one new array, stored in environ at once; no array is freed.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "fmt.h"
#include "seethrough.h"

extern char **environ;

typedef struct see_var_s {
	const char *var, *value, *framework, *what;
} see_var_t;

static const see_var_t see_vars[] = {
#define SEE_ROW(var, value, fw, what) { var, value, fw, what },
	SEE_THROUGH_VARS(SEE_ROW)
#undef SEE_ROW
};

/* The CuPy hook's directory (SEE_THROUGH_HOOK_DIRS beside this shim) into
 * dir, absolute.  Returns true when found. */
static bool
hook_dir(char *dir)
{
	static const char *const rel[] = SEE_THROUGH_HOOK_DIRS;
	char self[PATH_MAX], cand[PATH_MAX + 64], *slash;
	Dl_info info;

	if (dladdr((void *)track_see_through, &info) == 0 ||
	    info.dli_fname == NULL || realpath(info.dli_fname, self) == NULL)
		return false;
	if ((slash = strrchr(self, '/')) == NULL)
		return false;
	*slash = '\0';
	for (size_t i = 0; i < CW_ARRAY_SIZE(rel); i++) {
		fmt_snprintf(cand, sizeof(cand), "%s/%s/" SEE_THROUGH_HOOK_FILE,
		    self, rel[i]);
		if (!see_hook_is_ours(cand) || realpath(cand, dir) == NULL)
			continue;
		*strrchr(dir, '/') = '\0';
		return true;
	}
	return false;
}

/* "name=value", allocated and never freed (the environment keeps it);
 * NULL when out of memory. */
static char *
env_entry(const char *name, const char *value, const char *rest)
{
	size_t len = strlen(name) + strlen(value) + (rest ? strlen(rest) : 0) +
	    3;
	char *e = malloc(len);

	if (e != NULL)
		fmt_snprintf(e, len, "%s=%s%s%s", name, value, rest ? ":" : "",
		    rest ? rest : "");
	return e;
}

/* The environment with add[0..nadd) in it ("name=value" each; one of a
 * name already there replaces it), as one new array stored in environ at
 * once: a reader of the old array (a thread of an earlier constructor)
 * keeps a whole one, never freed.  Returns true when out of memory. */
static bool
env_publish(char *const *add, size_t nadd)
{
	char **cur = environ, **arr;
	size_t n = 0, k = 0;

	while (cur != NULL && cur[n] != NULL)
		n++;
	if ((arr = malloc((n + nadd + 1) * sizeof(*arr))) == NULL)
		return true;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;

		for (size_t j = 0; j < nadd && !replaced; j++) {
			size_t len = (size_t)(strchr(add[j], '=') - add[j]) + 1;

			replaced = strncmp(cur[i], add[j], len) == 0;
		}
		if (!replaced)
			arr[k++] = cur[i];
	}
	for (size_t j = 0; j < nadd; j++)
		arr[k++] = add[j];
	arr[k] = NULL;
	__atomic_store_n(&environ, arr, __ATOMIC_RELEASE);
	return false;
}

/* PYTHONPATH with the hook's directory first, as an entry for
 * env_publish in *entry.  Returns 1 with the entry, 0 when it was there
 * already (a child of a see-through process), -1 when the directory was
 * not found or cannot go on a path (or no memory). */
static int
hook_path_entry(char *dir, char **entry)
{
	const char *old = getenv(SEE_THROUGH_PATHVAR);

	if (!hook_dir(dir) || strchr(dir, ':') != NULL)
		return -1;
	if (old != NULL && see_path_has(old, dir))
		return 0;
	*entry = env_entry(SEE_THROUGH_PATHVAR, dir, old != NULL &&
	    old[0] != '\0' ? old : NULL);
	return *entry != NULL ? 1 : -1;
}

void
track_see_through(void)
{
	bool set[CW_ARRAY_SIZE(see_vars)], any = false;
	char dir[PATH_MAX], *add[CW_ARRAY_SIZE(see_vars) + 1];
	size_t nadd = 0;
	int hook;

	if (!track_alive() || !options_get_quiet(OPT_SEE_THROUGH))
		return;
	for (size_t i = 0; i < CW_ARRAY_SIZE(see_vars); i++) {
		set[i] = getenv(see_vars[i].var) == NULL &&
		    (add[nadd] = env_entry(see_vars[i].var, see_vars[i].value,
		    NULL)) != NULL;
		if (set[i])
			nadd++;
		any |= set[i];
	}
	hook = hook_path_entry(dir, &add[nadd]);
	if (hook > 0)
		nadd++;
	if (nadd > 0 && env_publish(add, nadd)) {
		memset(set, 0, sizeof(set)); /* said below: could not be set */
		any = true;
		hook = -1;
	}
	if (!any && hook <= 0)
		return; /* a child: its parent said it all */
	for (size_t i = 0; i < CW_ARRAY_SIZE(see_vars); i++) {
		const see_var_t *v = &see_vars[i];
		const char *cur = getenv(v->var);

		if (set[i])
			log_printf("see-through: %s=%s (%s: %s)", v->var,
			    v->value, v->framework, v->what);
		else if (cur == NULL)
			log_warn("see-through: %s could not be set", v->var);
		else if (strcmp(cur, v->value) == 0)
			log_printf("see-through: %s=%s, set already (%s: %s)",
			    v->var, v->value, v->framework, v->what);
		else
			log_printf("see-through: %s=%s kept, set already "
			    "(see-through would set %s)", v->var, cur,
			    v->value);
	}
	if (hook > 0)
		log_printf("see-through: " SEE_THROUGH_PATHVAR "=%s first (CuPy: "
		    "its memory pools off at import, by " SEE_THROUGH_HOOK_FILE
		    ")", dir);
	else if (hook == 0)
		log_printf("see-through: " SEE_THROUGH_PATHVAR " has %s already "
		    "(CuPy: its memory pools off at import, by "
		    SEE_THROUGH_HOOK_FILE ")", dir);
	else
		log_warn("see-through: CuPy's hook (" SEE_THROUGH_HOOK_FILE ") "
		    "not found beside the shim, or its directory holds a ':': "
		    "CuPy's memory pools stay on");
}
