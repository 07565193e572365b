/*
 * render_html.c -- the HTML page (placeholder; filled in next).
 */
#include "config.h"

#include "audit.h"

bool
render_html(const au_model_t *m, const au_render_opts_t *o, const char *path)
{
	(void)m;
	(void)o;
	au_error("--html %s: not implemented yet", path);
	return true;
}
