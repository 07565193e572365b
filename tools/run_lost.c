/*
 * run_lost.c -- the processes that left no report (run.h, run_int.h):
 * the shim's markers (CUWARDEN_MARKER, written at a process's first CUDA
 * call; doc/report-schema.md, "The marker") paired with the reports by
 * pid, what the tool knows of the end of each marker left alone, and the
 * line that says so.
 *
 * Invariants: a marker is lost only when no report of the run has its
 * pid (an exec keeps the pid: the new program's report stands for it);
 * its end comes from waitpid only when the tool reaped that pid exactly
 * once, as fill_exits (run.c) pairs them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "input.h"
#include "json.h"
#include "run_int.h"
#include "text.h"
#include "xalloc.h"

/* Markers are small: a command line of 1 MiB at most, escaped. */
#define MARKER_MAX_BYTES (8ULL << 20)

bool
run_is_marker(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b != NULL ? b + 1 : path;
	return strncmp(b, RUN_MARKER_PREFIX, strlen(RUN_MARKER_PREFIX)) == 0;
}

/* Whether pid is still the process that started at start_time (clock
 * ticks since boot, /proc/PID/stat field 22) and not a zombie. */
static bool
still_running(long pid, unsigned long long start_time)
{
	char path[64], buf[1024];
	unsigned long long v = 0;
	const char *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* The fields start after the last ')': state is field 3. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' || p[2] == 'Z' ||
	    p[2] == 'X')
		return false;
	for (field = 2, p++; field < 22 && *p != '\0'; p++)
		if (*p == ' ')
			field++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (unsigned long long)(*p++ - '0');
	return start_time == 0 || v == start_time;
}

/* How the reaped process pid ended, into *l; unknown when the tool did
 * not reap it, or reaped that pid more than once. */
static void
fill_end(au_lost_t *l, const run_reaped_t *r, size_t nr,
    unsigned long long start_time)
{
	size_t j, k = 0, hit = 0;

	for (j = 0; j < nr; j++)
		if (r[j].pid == l->pid) {
			hit = j;
			k++;
		}
	if (k == 1 && WIFSIGNALED(r[hit].status)) {
		l->end_how = "signal";
		l->end_status = WTERMSIG(r[hit].status);
	} else if (k == 1 && WIFEXITED(r[hit].status)) {
		l->end_how = "exit";
		l->end_status = WEXITSTATUS(r[hit].status);
	} else if (k == 0 && still_running(l->pid, start_time)) {
		l->end_how = "running";
	}
}

void
run_lost_collect(au_model_t *m, char **markers, size_t n,
    const run_reaped_t *r, size_t nr)
{
	char err[4096];
	size_t i, j, len;

	for (i = 0; i < n; i++) {
		json_t *doc, *cmd;
		au_lost_t *l;
		char *buf;
		long pid;
		bool reported = false;

		buf = input_read(markers[i], MARKER_MAX_BYTES, NULL, NULL,
		    &len, err, sizeof(err));
		if (buf == NULL) {
			au_warn("a process's marker is unreadable: %s", err);
			continue;
		}
		doc = json_loadb(buf, len, 0, NULL);
		free(buf);
		if (!json_is_object(doc) || strcmp(json_str(doc, "format",
		    ""), "cuwarden-marker") != 0 ||
		    (pid = (long)json_int(doc, "pid", -1)) <= 0) {
			au_warn("%s: not a marker of the shim, ignored",
			    markers[i]);
			json_decref(doc);
			continue;
		}
		for (j = 0; j < m->nprocs && !reported; j++)
			reported = m->procs[j].pid == pid;
		for (j = 0; j < m->nlost && !reported; j++)
			reported = m->lost[j].pid == pid;
		if (reported) {
			json_decref(doc);
			continue;
		}
		m->lost = xrealloc(m->lost, (m->nlost + 1) * sizeof(*m->lost));
		l = &m->lost[m->nlost++];
		memset(l, 0, sizeof(*l));
		l->pid = pid;
		l->ppid = (long)json_int(doc, "ppid", -1);
		l->rank = (long)json_int(doc, "rank", -1);
		if (l->rank < 0 || l->rank >= (1L << 20))
			l->rank = -1;
		cmd = json_object_get(doc, "command");
		l->command = json_is_array(cmd) ? json_incref(cmd) :
		    json_array();
		l->exe = xstrdup(json_str(doc, "exe", ""));
		fill_end(l, r, nr, (unsigned long long)json_int(doc,
		    "start_time", 0));
		json_decref(doc);
	}
}

size_t
run_lost_count(const au_model_t *m)
{
	size_t i, k = 0;

	for (i = 0; i < m->nlost; i++)
		k += m->lost[i].end_how == NULL ||
		    strcmp(m->lost[i].end_how, "running") != 0;
	return k;
}

/* What is known of l's end. */
static void
lost_end(const au_lost_t *l, char *buf, size_t size)
{
	if (l->end_how == NULL) {
		snprintf(buf, size, "end unknown");
	} else if (strcmp(l->end_how, "signal") == 0) {
		const char *abbrev = sigabbrev_np(l->end_status);

		if (abbrev != NULL)
			snprintf(buf, size, "killed by SIG%s", abbrev);
		else
			snprintf(buf, size, "killed by signal %d",
			    l->end_status);
	} else if (strcmp(l->end_how, "exit") == 0) {
		snprintf(buf, size, "exited with %d", l->end_status);
	} else {
		snprintf(buf, size, "still running when the audit ended (not "
		    "waited for: --no-wait-descendants)");
	}
}

char *
run_command_line(const json_t *command, const char *exe)
{
	char *cmd = xstrdup(""), *arg, *t;
	size_t k, n = json_array_size(command);

	for (k = 0; k < n && k < 8; k++) {
		arg = text_escape(json_string_value(json_array_get(command,
		    k)));
		t = xasprintf("%s%s%s", cmd, k > 0 ? " " : "", arg);
		free(arg);
		free(cmd);
		cmd = t;
	}
	if (n == 0) {
		free(cmd);
		cmd = text_escape(exe != NULL && exe[0] != '\0' ? exe : "?");
	} else if (n > 8) {
		t = xasprintf("%s ...", cmd);
		free(cmd);
		cmd = t;
	}
	return cmd;
}

char *
run_lost_line(const au_lost_t *l)
{
	char end[128], *cmd = run_command_line(l->command, l->exe), *t;

	lost_end(l, end, sizeof(end));
	if (l->rank >= 0)
		t = xasprintf("process %ld (rank %ld: %s) used CUDA under the "
		    "shim and left no report: %s", l->pid, l->rank, cmd, end);
	else
		t = xasprintf("process %ld (%s) used CUDA under the shim and "
		    "left no report: %s", l->pid, cmd, end);
	free(cmd);
	return t;
}
