/*
 * render_junit.c -- JUnit XML (--junit), the test report CI systems read
 * (doc/audit.md, "JUnit XML"): one <testsuite> for the audit, one
 * <testcase> per audited process, named by its command and pid, with one
 * <failure> per reported finding group of that process: its message the
 * text report's header line, its text the group's stacks as the text
 * report prints them, its type the group's SARIF rule id.  Suppressed,
 * accepted and baseline findings are no failures; an OOM report (its
 * text report section) and address ranges never freed, which fail
 * nothing, are in the test case's <system-out>.
 * A process that used CUDA and left no report is a test case with an
 * <error> (the audit fails for it), or <skipped> while still running
 * (--no-wait-descendants).  A finding belongs to the processes whose pids
 * it holds, each on its host (a process is named "host:pid" when the
 * processes span several hosts).
 *
 * The test cases' "failures" count is Ant's: test cases with a failure,
 * not failure elements.  Every text comes from the text report (escaped
 * there: valid UTF-8, no control character but the newline) or through
 * text_escape, and is escaped here for XML.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "diag.h"
#include "fold.h"
#include "json.h"
#include "model.h"
#include "out.h"
#include "render.h"
#include "run.h"
#include "text.h"
#include "xalloc.h"

/* s, escaped for a text line already, as XML character data, or as an
 * attribute value (attr: a newline as a character reference, which an
 * attribute value keeps). */
static void
xml_put(FILE *out, const char *s, bool attr)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		case '\n': fputs(attr ? "&#10;" : "\n", out); break;
		default: fputc(*s, out);
		}
	}
}

/* A test case's start, its name a text escaped for a text line. */
static void
put_testcase(FILE *out, const char *name)
{
	fputs("<testcase classname=\"cuwarden-audit\" name=\"", out);
	xml_put(out, name, true);
	fputs("\">\n", out);
}

/* Is f a failure of a test case (reported, and failing the audit)? */
static bool
failing(const au_finding_t *f)
{
	return finding_reported(f) &&
	    !(f->cls == AU_LEAK && f->cat == AU_CAT_RANGE);
}

/* The failures of process p, in the text report's order: leaks, those
 * freed only by teardown, violations. */
static size_t
count_failures(const au_model_t *m, const au_process_t *p)
{
	size_t i, n = 0;

	for (i = 0; i < m->nleaks; i++)
		n += failing(m->leaks[i]) &&
		    finding_has_process(m->leaks[i], p);
	for (i = 0; i < m->nviols; i++)
		n += failing(m->viols[i]) &&
		    finding_has_process(m->viols[i], p);
	return n;
}

/* The lines of text (size bytes), each without its leading "==" and one
 * blank, and empty ones left out, newly allocated; with head, the first
 * line (empty or not) goes to *head instead (newly allocated). */
static char *
text_lines(const char *text, size_t size, char **head)
{
	const char *line, *next;
	char *b = xmalloc(size + 1);
	size_t len = 0;

	if (head != NULL)
		*head = NULL;
	for (line = text; *line != '\0'; line = next) {
		size_t n = strcspn(line, "\n");

		next = line[n] == '\n' ? line + n + 1 : line + n;
		if (strncmp(line, "==", 2) == 0) {
			line += 2;
			n -= 2;
			if (n > 0 && *line == ' ') {
				line++;
				n--;
			}
		}
		if (head != NULL && *head == NULL) {
			*head = xstrndup(line, n);
		} else if (n > 0) {
			memcpy(b + len, line, n);
			len += n;
			b[len++] = '\n';
		}
	}
	b[len] = '\0';
	if (head != NULL && *head == NULL)
		*head = xstrdup("");
	return b;
}

/* f as the text report has it, its lines without the leading "== ":
 * the header line in *head, the rest in *body (both newly allocated). */
static void
finding_text(const au_finding_t *f, int limit, char **head, char **body)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *mem = xopen_memstream(&buf, &size);

	render_text_finding(f, limit, mem);
	xclose_memstream(mem);
	*body = text_lines(buf, size, head);
	free(buf);
}

static void
put_failure(FILE *out, const au_finding_t *f, int limit)
{
	char *head, *body, *type = sarif_rule_id(f);

	finding_text(f, limit, &head, &body);
	fputs("<failure type=\"", out);
	xml_put(out, type, true);
	fputs("\" message=\"", out);
	xml_put(out, head, true);
	fputs("\">", out);
	xml_put(out, body, false);
	fputs("</failure>\n", out);
	free(type);
	free(head);
	free(body);
}

/* Did oom come from process p (its pid, on its host)? */
static bool
oom_of(const au_oom_t *oom, const au_process_t *p)
{
	return oom->pid == p->pid && strcmp(json_str(oom->doc, "host", ""),
	    p->host) == 0;
}

/* oom's OUT OF MEMORY section as the text report has it, its lines
 * without the leading "== " (newly allocated). */
static char *
oom_text(const au_oom_t *oom, int limit)
{
	char *buf = NULL, *text;
	size_t size = 0;
	FILE *mem = xopen_memstream(&buf, &size);

	render_text_oom(oom, limit, mem);
	xclose_memstream(mem);
	text = text_lines(buf, size, NULL);
	free(buf);
	return text;
}

/* The test case's <system-out>, when it has anything to say: the OOM
 * reports of process p (an OOM is no failure of the audit: the program
 * saw the error and went on or not), then its address ranges never
 * freed, their header lines. */
static void
put_system_out(FILE *out, const au_model_t *m, const au_process_t *p,
    int limit)
{
	bool open = false;

	for (size_t i = 0; i < m->nooms; i++) {
		char *text;

		if (!oom_of(&m->ooms[i], p))
			continue;
		text = oom_text(&m->ooms[i], limit);
		fputs(open ? "\n" : "<system-out>", out);
		open = true;
		xml_put(out, text, false);
		free(text);
	}
	for (size_t i = 0; i < m->nleaks; i++) {
		const au_finding_t *f = m->leaks[i];
		char *head, *body;

		if (!finding_reported(f) || failing(f) ||
		    !finding_has_process(f, p))
			continue;
		finding_text(f, limit, &head, &body);
		fputs(open ? "\n" : "<system-out>", out);
		open = true;
		xml_put(out, head, false);
		free(head);
		free(body);
	}
	if (open)
		fputs("</system-out>\n", out);
}

static void
put_process(FILE *out, const au_model_t *m, const au_process_t *p,
    int limit)
{
	char *cmd = run_command_line(json_object_get(p->doc, "command"),
	    p->exe);
	char lab[320];
	/* The label holds the report's host name: escaped as the text's
	 * (a control byte is no XML character). */
	char *label = text_escape(process_name(m, p, lab, sizeof(lab)));
	char *name = xasprintf("%s (%s)", cmd, label);
	size_t i;

	put_testcase(out, name);
	for (i = 0; i < m->nleaks; i++)
		if (failing(m->leaks[i]) && finding_has_process(m->leaks[i], p))
			put_failure(out, m->leaks[i], limit);
	for (i = 0; i < m->nviols; i++)
		if (failing(m->viols[i]) && finding_has_process(m->viols[i], p))
			put_failure(out, m->viols[i], limit);
	put_system_out(out, m, p, limit);
	fputs("</testcase>\n", out);
	free(cmd);
	free(label);
	free(name);
}

static bool
lost_running(const au_lost_t *l)
{
	return l->end_how != NULL && strcmp(l->end_how, "running") == 0;
}

static void
put_lost(FILE *out, const au_lost_t *l)
{
	char *cmd = run_command_line(l->command, l->exe);
	char *name = xasprintf("%s (pid %ld)", cmd, l->pid);
	char *line = run_lost_line(l);

	put_testcase(out, name);
	fputs(lost_running(l) ? "<skipped" : "<error type=\"lost_process\"",
	    out);
	fputs(" message=\"", out);
	xml_put(out, line, true);
	fputs("\"/>\n</testcase>\n", out);
	free(cmd);
	free(name);
	free(line);
}

/* The ranks that left no report: one test case in error, as a lost
 * process is (they fail the audit unless --allow-missing-ranks). */
static void
put_missing_ranks(FILE *out, const au_model_t *m)
{
	char *line = fold_missing_line(m);

	if (line == NULL)
		return;
	put_testcase(out, "missing ranks");
	fputs("<error type=\"missing_ranks\" message=\"MISSING RANKS: ", out);
	xml_put(out, line, true);
	fputs("\"/>\n</testcase>\n", out);
	free(line);
}

bool
render_junit(const au_model_t *m, const au_render_opts_t *o, const char *path)
{
	char err[PATH_MAX + 256], counts[128];
	size_t i, failures = 0, errors = 0, skipped = 0;
	size_t tests = m->nprocs + m->nlost + (m->nmissing_ranks > 0);
	au_out_t out;

	for (i = 0; i < m->nprocs; i++)
		failures += count_failures(m, &m->procs[i]) > 0;
	for (i = 0; i < m->nlost; i++)
		if (lost_running(&m->lost[i]))
			skipped++;
		else
			errors++;
	errors += m->nmissing_ranks > 0;
	snprintf(counts, sizeof(counts), " tests=\"%zu\" failures=\"%zu\" "
	    "errors=\"%zu\" skipped=\"%zu\"", tests, failures, errors,
	    skipped);
	if (out_open(&out, path, err, sizeof(err))) {
		au_error("cannot write %s", err);
		return true;
	}
	fprintf(out.fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<testsuites name=\"cuwarden-audit\"%s>\n"
	    "<testsuite name=\"cuwarden-audit\"%s>\n", counts, counts);
	if (json_array_size(m->command) > 0) {
		char *cmd = run_command_line(m->command, NULL);

		fputs("<properties>\n<property name=\"command\" value=\"",
		    out.fp);
		xml_put(out.fp, cmd, true);
		fputs("\"/>\n", out.fp);
		if (m->ran && m->exit_status >= 0)
			fprintf(out.fp, "<property name=\"exit_status\" "
			    "value=\"%d\"/>\n", m->exit_status);
		fputs("</properties>\n", out.fp);
		free(cmd);
	}
	for (i = 0; i < m->nprocs; i++)
		put_process(out.fp, m, &m->procs[i], o->stack_limit);
	for (i = 0; i < m->nlost; i++)
		put_lost(out.fp, &m->lost[i]);
	put_missing_ranks(out.fp, m);
	fputs("</testsuite>\n</testsuites>\n", out.fp);
	if (out_commit(&out, err, sizeof(err))) {
		au_error("cannot write %s", err);
		return true;
	}
	return false;
}
