/*
 * render_sarif.c -- SARIF 2.1.0 (placeholder; filled in next).
 */
#include "config.h"

#include "audit.h"

bool
render_sarif(const au_model_t *m, const au_render_opts_t *o, const char *path)
{
	(void)m;
	(void)o;
	au_error("--sarif %s: not implemented yet", path);
	return true;
}
