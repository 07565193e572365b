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
 * (track_alive).  Runs in the constructor only: single-threaded, so
 * setenv (and its malloc) is safe here and nowhere else.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "fmt.h"
#include "seethrough.h"

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
		if (access(cand, R_OK) != 0 || realpath(cand, dir) == NULL)
			continue;
		*strrchr(dir, '/') = '\0';
		return true;
	}
	return false;
}

/* Whether dir is one of the ':'-separated elements of list. */
static bool
path_has(const char *list, const char *dir)
{
	size_t n = strlen(dir);
	const char *p = list;

	for (;;) {
		if (strncmp(p, dir, n) == 0 && (p[n] == ':' || p[n] == '\0'))
			return true;
		if ((p = strchr(p, ':')) == NULL)
			return false;
		p++;
	}
}

/* PYTHONPATH with the hook's directory first.  Returns 1 when set, 0 when
 * it was there already (a child of a see-through process), -1 when the
 * directory was not found or cannot go on a path. */
static int
set_hook_path(char *dir)
{
	const char *old = getenv(SEE_THROUGH_PATHVAR);
	char *val;
	size_t len;

	if (!hook_dir(dir) || strchr(dir, ':') != NULL)
		return -1;
	if (old != NULL && path_has(old, dir))
		return 0;
	len = strlen(dir) + (old ? strlen(old) : 0) + 2;
	if ((val = malloc(len)) == NULL)
		return -1;
	if (old != NULL && old[0] != '\0')
		fmt_snprintf(val, len, "%s:%s", dir, old);
	else
		fmt_snprintf(val, len, "%s", dir);
	bool ok = setenv(SEE_THROUGH_PATHVAR, val, 1) == 0;

	free(val);
	return ok ? 1 : -1;
}

void
track_see_through(void)
{
	bool set[CW_ARRAY_SIZE(see_vars)], any = false;
	char dir[PATH_MAX];
	int hook;

	if (!track_alive() || !options_get_quiet(OPT_SEE_THROUGH))
		return;
	for (size_t i = 0; i < CW_ARRAY_SIZE(see_vars); i++) {
		set[i] = getenv(see_vars[i].var) == NULL &&
		    setenv(see_vars[i].var, see_vars[i].value, 0) == 0;
		any |= set[i];
	}
	hook = set_hook_path(dir);
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
