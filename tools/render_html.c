/*
 * render_html.c -- one self-contained HTML page (doc/audit.md, "The HTML
 * page").  The page itself -- tools/html/page.html with page.css and
 * page.js inside -- is embedded at build time (tools/html/embed.sh makes
 * tools/html_page.h); here its two places are filled: @CW_DATA@ with the
 * merged document and @CW_PAGE@ with what the document does not hold
 * (the audit's exit status, when the page was written).  Both are JSON
 * with every '<' written as \u003c, so nothing in them can end their
 * script element.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "diag.h"
#include "out.h"
#include "render.h"
#include "tools/html_page.h"

/* s, JSON, inside a script element. */
static void
put_json(const char *s, FILE *fp)
{
	for (; *s != '\0'; s++) {
		if (*s == '<')
			fputs("\\u003c", fp);
		else
			fputc(*s, fp);
	}
}

/* The page's own facts, as JSON.  Caller frees. */
static char *
page_info(const au_render_opts_t *o)
{
	char when[32] = "";
	time_t now = time(NULL);
	struct tm tm;
	json_t *j;
	char *s;

	if (now != (time_t)-1 && gmtime_r(&now, &tm) != NULL)
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	j = json_pack("{s:i,s:s}", "exit_status", o->exit_status, "written",
	    when);
	s = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) :
	    NULL;
	json_decref(j);
	return s;
}

/* The page with its places filled. */
static void
put_page(FILE *fp, const char *doc, const char *info)
{
	static const char data_mark[] = "@CW_DATA@", page_mark[] = "@CW_PAGE@";
	const char *p = page_html, *q;

	while ((q = strstr(p, "@CW_")) != NULL) {
		fwrite(p, 1, (size_t)(q - p), fp);
		if (strncmp(q, data_mark, sizeof(data_mark) - 1) == 0) {
			put_json(doc, fp);
			p = q + sizeof(data_mark) - 1;
		} else if (strncmp(q, page_mark, sizeof(page_mark) - 1) == 0) {
			put_json(info, fp);
			p = q + sizeof(page_mark) - 1;
		} else { /* not ours: as written */
			fputs("@CW_", fp);
			p = q + 4;
		}
	}
	fputs(p, fp);
}

bool
render_html(const au_model_t *m, const au_render_opts_t *o, const char *path)
{
	json_t *d = render_json_doc(m, o);
	char *doc = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER);
	char *info = page_info(o);
	char err[PATH_MAX + 256];
	au_out_t out;
	bool bad = true;

	json_decref(d);
	if (doc == NULL || info == NULL) {
		au_error("--html: cannot encode the report");
		goto out;
	}
	if (out_open(&out, path, err, sizeof(err))) {
		au_error("cannot write %s", err);
		goto out;
	}
	put_page(out.fp, doc, info);
	if (out_commit(&out, err, sizeof(err))) {
		au_error("cannot write %s", err);
		goto out;
	}
	bad = false;
out:
	free(doc);
	free(info);
	return bad;
}
