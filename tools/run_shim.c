/*
 * run_shim.c -- the shim a run preloads (run_int.h): --preload checked,
 * or ours found next to the tool (installed: <prefix>/lib/cuwarden,
 * lib64, lib/<multiarch>; build tree: preload/.libs) or in the configured
 * pkglibdir; and the environment that loads it into the program.
 */
#include "config.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "installdirs.h"
#include "path.h"
#include "run_int.h"
#include "xalloc.h"

#define SHIM_NAME "libcuwarden_preload.so"

static bool
readable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, R_OK) == 0;
}

/* Ours: next to the tool's own binary, installed or in the build tree,
 * then the configured pkglibdir.  Returns a newly allocated absolute
 * path, or NULL (with the places looked at in err). */
static char *
find_shim(char *err, size_t errsize)
{
	char exe[PATH_MAX], *dir, *cand[6] = { NULL }, *up, *prefix;
	char *found = NULL;
	ssize_t n;
	size_t i, nc = 0, len = 0;
	glob_t g;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		dir = strrchr(exe, '/');
		if (dir != NULL)
			*dir = '\0';
		/* libtool keeps the real binary in tools/.libs. */
		if (strcmp(base_name(exe), ".libs") == 0 &&
		    (dir = strrchr(exe, '/')) != NULL)
			*dir = '\0';
		/* <prefix> (installed) or <builddir> (build tree). */
		up = xasprintf("%s/..", exe);
		prefix = realpath(up, NULL);
		free(up);
		if (prefix == NULL)
			prefix = xasprintf("%s/..", exe);
		cand[nc++] = xasprintf("%s/lib/cuwarden/" SHIM_NAME, prefix);
		cand[nc++] = xasprintf("%s/lib64/cuwarden/" SHIM_NAME, prefix);
		cand[nc++] = xasprintf("%s/preload/.libs/" SHIM_NAME, prefix);
		cand[nc] = xasprintf("%s/lib/*/cuwarden/" SHIM_NAME, prefix);
		free(prefix);
		if (glob(cand[nc], 0, NULL, &g) == 0) {
			if (g.gl_pathc > 0) {
				free(cand[nc]);
				cand[nc] = xstrdup(g.gl_pathv[0]);
			}
			globfree(&g);
		}
		nc++;
	}
	cand[nc++] = xstrdup(CW_PKGLIBDIR "/" SHIM_NAME);
	for (i = 0; i < nc && found == NULL; i++)
		if (readable(cand[i]))
			found = realpath(cand[i], NULL);
	if (found == NULL) {
		len = (size_t)snprintf(err, errsize, "the preload shim "
		    SHIM_NAME " was not found; looked at:");
		for (i = 0; i < nc && len < errsize; i++)
			len += (size_t)snprintf(err + len, errsize - len,
			    " %s", cand[i]);
		if (len < errsize)
			snprintf(err + len, errsize - len, " (use --preload "
			    "PATH, or build it: make)");
	}
	for (i = 0; i < nc; i++)
		free(cand[i]);
	return found;
}

char *
run_shim_path(const au_run_opts_t *o)
{
	char err[4096], *shim;

	if (o->preload != NULL) {
		if (!readable(o->preload)) {
			au_error("--preload %s: %s", o->preload,
			    access(o->preload, F_OK) ? strerror(errno) :
			    "not a readable file");
			return NULL;
		}
		shim = realpath(o->preload, NULL);
		if (shim == NULL) {
			au_error("--preload %s: %s", o->preload,
			    strerror(errno));
			return NULL;
		}
	} else {
		shim = find_shim(err, sizeof(err));
		if (shim == NULL) {
			au_error("%s", err);
			return NULL;
		}
	}
	if (strpbrk(shim, " :\t\n") != NULL) {
		au_error("the shim's path %s contains a space or a colon, "
		    "which LD_PRELOAD cannot carry; install it elsewhere",
		    shim);
		free(shim);
		return NULL;
	}
	return shim;
}

void
run_shim_env(const char *shim, const char *report, const char *marker,
    const char *log, const au_run_opts_t *o)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload;
	size_t i;

	if (old != NULL && old[0] != '\0')
		preload = xasprintf("%s:%s", shim, old);
	else
		preload = xstrdup(shim);
	setenv("LD_PRELOAD", preload, 1);
	setenv("CUWARDEN_REPORT", report, 1);
	setenv("CUWARDEN_REPORT_FORMAT", "json", 1);
	/* Proof of loading: asks the shim for a report (hooks_active false)
	 * even from a process that never used CUDA, so such a program is
	 * audited clean rather than "no report" (125).  A shim that does
	 * not know the variable ignores it. */
	setenv("CUWARDEN_REPORT_ALWAYS", "1", 1);
	/* A process that used CUDA says so at once (its marker): one that
	 * then leaves no report (SIGKILL) is listed as lost, not forgotten
	 * (run_lost.c). */
	setenv("CUWARDEN_MARKER", marker, 1);
	/* --log-file: the shim's messages, copied there after the run
	 * (run_copy_log). */
	if (log != NULL)
		setenv("CUWARDEN_LOG_FILE", log, 1);
	for (i = 0; i < o->nenv; i++)
		putenv(o->env[i]);
}
