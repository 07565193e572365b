/*
 * render_html.c -- one self-contained HTML page (doc/audit.md, "The HTML
 * page").  The page itself -- tools/html/page.html with page.css and
 * page.js inside -- is embedded at build time (tools/html/embed.sh makes
 * tools/html_page.h); here its two places are filled: @CW_DATA@ with the
 * merged document, @CW_PAGE@ with what the document does not hold
 * (the audit's exit status, when the page was written) and @CW_STACKS@
 * with the OOM reports' and peaks' stacks symbolized (the document
 * carries them as the shim wrote them: module indexes and offsets).  All
 * three are JSON with every '<' written as \u003c, so nothing in them can
 * end their script element.
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

/* The stacks the document holds unsymbolized, symbolized as the
 * findings' are, in the document's order: {"oom": [{"request": STACK,
 * "live": [STACK per live.top group read]}], "peaks": [{"devices":
 * [[STACK per top group read] per device]}]}.  Caller frees. */
static char *
mem_stacks(const au_model_t *m)
{
	json_t *j = json_object(), *ooms = json_array(), *peaks = json_array();
	char *s;

	for (size_t i = 0; i < m->nooms; i++) {
		const au_oom_t *oom = &m->ooms[i];
		json_t *live = json_array();

		for (size_t g = 0; g < oom->ngroups; g++)
			json_array_append_new(live,
			    render_stack_json(&oom->groups[g]));
		json_array_append_new(ooms, json_pack("{s:o,s:o}", "request",
		    render_stack_json(&oom->request), "live", live));
	}
	for (size_t i = 0; i < m->npeaks; i++) {
		const au_peak_t *p = &m->peaks[i];
		const json_t *devs = json_object_get(p->doc, "devices");
		const json_t *past = json_object_get(json_object_get(p->doc,
		    "after_limit"), "devices");
		size_t nd = json_array_size(devs);
		json_t *da = json_array();

		/* The devices', then those past the limit (au_peak_t). */
		for (size_t k = 0; k < nd + json_array_size(past); k++) {
			size_t ng = json_array_size(json_object_get(
			    json_array_get(k < nd ? devs : past, k < nd ? k :
			    k - nd), "top"));
			json_t *ga = json_array();

			for (size_t g = 0; g < ng && g < AU_PEAK_GROUPS; g++)
				if (k * AU_PEAK_GROUPS + g < p->nstacks)
					json_array_append_new(ga,
					    render_stack_json(&p->stacks[
					    k * AU_PEAK_GROUPS + g]));
			json_array_append_new(da, ga);
		}
		json_array_append_new(peaks, json_pack("{s:o}", "devices", da));
	}
	json_object_set_new(j, "oom", ooms);
	json_object_set_new(j, "peaks", peaks);
	s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	return s;
}

/* The page with its places filled. */
static void
put_page(FILE *fp, const char *doc, const char *info, const char *stacks)
{
	static const char data_mark[] = "@CW_DATA@", page_mark[] = "@CW_PAGE@";
	static const char stacks_mark[] = "@CW_STACKS@";
	const char *p = page_html, *q;

	while ((q = strstr(p, "@CW_")) != NULL) {
		fwrite(p, 1, (size_t)(q - p), fp);
		if (strncmp(q, data_mark, sizeof(data_mark) - 1) == 0) {
			put_json(doc, fp);
			p = q + sizeof(data_mark) - 1;
		} else if (strncmp(q, page_mark, sizeof(page_mark) - 1) == 0) {
			put_json(info, fp);
			p = q + sizeof(page_mark) - 1;
		} else if (strncmp(q, stacks_mark, sizeof(stacks_mark) - 1) ==
		    0) {
			put_json(stacks, fp);
			p = q + sizeof(stacks_mark) - 1;
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
	char *stacks = mem_stacks(m);
	char err[PATH_MAX + 256];
	au_out_t out;
	bool bad = true;

	json_decref(d);
	if (doc == NULL || info == NULL || stacks == NULL) {
		au_error("--html: cannot encode the report");
		goto out;
	}
	if (out_open(&out, path, err, sizeof(err))) {
		au_error("cannot write %s", err);
		goto out;
	}
	put_page(out.fp, doc, info, stacks);
	if (out_commit(&out, err, sizeof(err))) {
		au_error("cannot write %s", err);
		goto out;
	}
	bad = false;
out:
	free(doc);
	free(info);
	free(stacks);
	return bad;
}
