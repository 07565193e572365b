/*
 * snapshot.c -- `cuwarden-audit snapshot PID` (snapshot.h): what the
 * process's environment says (/proc/PID/environ: the control FIFO or the
 * signal, where its reports go), the request -- a "snapshot" line written
 * to the FIFO of CUWARDEN_CONTROL when the process has one (no signal:
 * nothing can end the process), else the signal, sent only where the
 * shim's handler is there (/proc/PID/status: SigCgt; a signal nobody
 * catches would end the process by its default action) -- and the wait
 * for the file:
 * the snapshot's directory is listed before the signal and polled after
 * it until a new "<name>.snap.*" appears (the shim writes it whole under
 * a temporary ".name" and renames it: a name seen is a whole file) or
 * the wait is over.  Files are read through input.c.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "diag.h"
#include "input.h"
#include "jobenv.h"
#include "signame.h"
#include "snapshot.h"
#include "xalloc.h"

#define PROC_MAX (64ULL << 20) /* an environment, a status, the maps */

/* The value of NAME in an environ block (NUL-separated), NULL if
 * absent. */
static const char *
env_get(const char *env, size_t len, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < len; i += strlen(env + i) + 1)
		if (strncmp(env + i, name, n) == 0 && env[i + n] == '=')
			return env + i + n + 1;
	return NULL;
}

/* /proc/PID/<what> read whole, NULL after a message. */
static char *
proc_read(long pid, const char *what, size_t *len)
{
	char path[64], err[PATH_MAX + 256];
	char *s;

	snprintf(path, sizeof(path), "/proc/%ld/%s", pid, what);
	s = input_read(path, PROC_MAX, NULL, NULL, len, err, sizeof(err));
	if (s == NULL && (errno == EACCES || errno == EPERM))
		au_error("snapshot: process %ld is not yours (its %s cannot be "
		    "read): only its owner or root can ask it for a snapshot",
		    pid, what);
	else if (s == NULL)
		au_error("snapshot: %s", err);
	return s;
}

/* Does process pid catch signal sig (SigCgt of /proc/PID/status)?
 * Returns -1 after a message when that cannot be read. */
static int
catches(long pid, int sig)
{
	size_t len;
	char *st = proc_read(pid, "status", &len);
	const char *p;
	unsigned long long mask;
	int r = -1;

	if (st == NULL)
		return -1;
	p = strstr(st, "\nSigCgt:");
	if (p != NULL && sscanf(p + 8, "%llx", &mask) == 1)
		r = (mask >> (sig - 1) & 1) != 0;
	else
		au_error("snapshot: no SigCgt line in /proc/%ld/status", pid);
	free(st);
	return r;
}

/* An environ block (NUL-separated, len bytes) as a NULL-terminated
 * vector of its strings, for jobenv_parse.  Caller frees the vector. */
static char **
env_vector(const char *env, size_t len)
{
	size_t n = 0, k = 0;
	char **v;

	for (size_t i = 0; i < len; i++)
		if (env[i] == '\0')
			n++;
	v = xcalloc(n + 2, sizeof(*v));
	for (size_t i = 0; i < len && k <= n; i += strlen(env + i) + 1)
		v[k++] = (char *)env + i;
	return v;
}

/* The pattern pat of variable name (CUWARDEN_REPORT, CUWARDEN_CONTROL)
 * expanded as the shim does (%p the pid, %r %h %j its job's rank, host
 * and id as its environment env (envlen bytes) gives them, %% a
 * percent), and made absolute against the process's current directory
 * if it is relative (the shim made it absolute against the one it
 * started in: the same unless the program changed directory).  NULL
 * after a message. */
static char *
expand(long pid, const char *name, const char *pat, const char *env,
    size_t envlen)
{
	char buf[PATH_MAX], cwd[PATH_MAX], link[64];
	size_t o = 0;
	ssize_t n;
	jobenv_t job;
	char **vars = env_vector(env, envlen);

	jobenv_parse(vars, &job);
	free(vars);
	for (const char *p = pat; *p != '\0'; p++) {
		char num[160];
		const char *piece = num;
		struct utsname u;

		if (*p != '%') {
			num[0] = *p;
			num[1] = '\0';
		} else if (p[1] == 'p' || (p[1] == 'r' && job.rank < 0)) {
			snprintf(num, sizeof(num), "%s%ld", p[1] == 'r' ?
			    JOBENV_NO_RANK_PREFIX : "", pid);
			p++;
		} else if (p[1] == 'r') {
			snprintf(num, sizeof(num), "%ld", job.rank);
			p++;
		} else if (p[1] == 'j') {
			jobenv_safe_name(num, sizeof(num), job.id[0] != '\0' ?
			    job.id : JOBENV_NO_JOB);
			p++;
		} else if (p[1] == 'h') { /* a process of this host */
			jobenv_safe_name(num, sizeof(num), uname(&u) == 0 &&
			    u.nodename[0] != '\0' ? u.nodename :
			    JOBENV_NO_HOST);
			p++;
		} else if (p[1] == '%') {
			piece = "%";
			p++;
		} else {
			au_error("snapshot: its %s=%s has a '%%' other than "
			    "%%p, %%r, %%h, %%j and %%%%: the shim uses no such "
			    "path", name, pat);
			return NULL;
		}
		if (o + strlen(piece) >= sizeof(buf)) {
			au_error("snapshot: its %s is too long", name);
			return NULL;
		}
		memcpy(buf + o, piece, strlen(piece));
		o += strlen(piece);
	}
	buf[o] = '\0';
	if (buf[0] == '/')
		return xstrdup(buf);
	snprintf(link, sizeof(link), "/proc/%ld/cwd", pid);
	n = readlink(link, cwd, sizeof(cwd) - 1);
	if (n <= 0) {
		au_error("snapshot: its %s=%s is relative and its directory "
		    "cannot be read (%s)", name, pat, strerror(errno));
		return NULL;
	}
	cwd[n] = '\0';
	return xasprintf("%s/%s", cwd, buf);
}

/* The names in dir that begin with prefix, but for timelines, in *names
 * (newly allocated, n of them).  Returns true when dir cannot be read (errno set). */
static bool
list(const char *dir, const char *prefix, char ***names, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t cap = 0;

	*names = NULL;
	*n = 0;
	if (d == NULL)
		return true;
	while ((e = readdir(d)) != NULL) {
		size_t k = strlen(e->d_name);

		/* A snapshot's timeline (".snap.N.timeline") comes before
		 * its report and is read through it. */
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 ||
		    (k > 9 && strcmp(e->d_name + k - 9, ".timeline") == 0))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			*names = xrealloc(*names, cap * sizeof(**names));
		}
		(*names)[(*n)++] = xstrdup(e->d_name);
	}
	closedir(d);
	return false;
}

static void
list_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static bool
listed(char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* Why the process has no shim, or NULL when its maps name it. */
static bool
has_shim(long pid)
{
	size_t len;
	char *maps = proc_read(pid, "maps", &len);
	bool yes;

	if (maps == NULL)
		return true; /* said; the signal check says the rest */
	yes = strstr(maps, "libcuwarden_preload") != NULL;
	free(maps);
	return yes;
}

/* Writes a request for a snapshot to process pid's control FIFO path.
 * Returns true after a message when it cannot. */
static bool
control_send(long pid, const char *path)
{
	static const char req[] = "snapshot\n";
	struct stat st;
	ssize_t n;
	int fd;

	/* Only a FIFO is opened: opening a device or a file that stands
	 * there instead may act on it (fstat below closes the race). */
	if (lstat(path, &st) == 0 && !S_ISFIFO(st.st_mode)) {
		au_error("snapshot: %s (CUWARDEN_CONTROL of process %ld) is no "
		    "FIFO; nothing written", path, pid);
		return true;
	}
	/* O_NONBLOCK: no reader is an error (ENXIO), not a wait. */
	fd = open(path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ENXIO || errno == ENOENT)) {
		au_error("snapshot: process %ld has CUWARDEN_CONTROL, but %s "
		    "%s: the shim makes it at the process's first CUDA call "
		    "(none yet?), and says on the process's standard error "
		    "why when it cannot", pid, path, errno == ENXIO ?
		    "has no reader (a FIFO left by a process that ended?)" :
		    "does not exist");
		return true;
	}
	if (fd < 0) {
		au_error("snapshot: cannot open %s: %s", path, strerror(errno));
		return true;
	}
	if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) {
		au_error("snapshot: %s (CUWARDEN_CONTROL of process %ld) is no "
		    "FIFO; nothing written", path, pid);
		close(fd);
		return true;
	}
	/* One write of less than PIPE_BUF bytes: whole or not at all.  A
	 * full FIFO holds requests not read yet: one snapshot comes. */
	n = write(fd, req, sizeof(req) - 1);
	if (n != (ssize_t)sizeof(req) - 1 && !(n < 0 && errno == EAGAIN)) {
		au_error("snapshot: cannot write to %s: %s", path,
		    n < 0 ? strerror(errno) : "a short write");
		close(fd);
		return true;
	}
	close(fd);
	return false;
}

/* Waits for a new file of dir beginning with prefix, not in before[],
 * while the process lives.  Returns it (newly allocated), or NULL after a
 * message. */
static char *
wait_file(long pid, const char *dir, const char *prefix, char **before,
    size_t nbefore, long wait_s, const char *sent)
{
	struct timespec t0, now, nap = { 0, 20 * 1000 * 1000 };
	char **names;
	size_t n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char *found = NULL;

		if (list(dir, prefix, &names, &n)) {
			au_error("snapshot: cannot list %s: %s", dir,
			    strerror(errno));
			return NULL;
		}
		for (size_t i = 0; i < n && found == NULL; i++)
			if (!listed(before, nbefore, names[i]))
				found = xasprintf("%s/%s", dir, names[i]);
		list_free(names, n);
		if (found != NULL)
			return found;
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			au_error("snapshot: process %ld ended before its "
			    "snapshot was written", pid);
			return NULL;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= wait_s) {
			au_error("snapshot: %s process %ld, but no %s* file "
			    "came in %ld s (--wait): the process may be "
			    "stopped, or the snapshot could not be written "
			    "(the process's standard error says why)", sent,
			    pid, prefix, wait_s);
			return NULL;
		}
		nanosleep(&nap, NULL);
	}
}

/* Sends the request: to the FIFO cpath when there is one, else the
 * signal.  Returns true after a message. */
static bool
request(long pid, const char *cpath, int sig)
{
	if (cpath != NULL)
		return control_send(pid, cpath);
	if (kill((pid_t)pid, sig) != 0) {
		au_error("snapshot: cannot signal process %ld: %s", pid,
		    strerror(errno));
		return true;
	}
	return false;
}

int
snapshot_take(long pid, long wait_s, char **path, bool *json)
{
	size_t len, nbefore = 0;
	char *env, *full = NULL, *dir = NULL, *prefix = NULL, *cpath = NULL;
	char **before = NULL;
	const char *v, *ctl, *rep, *fmt, *why, *sname = NULL, *slash;
	char num[16], sent[PATH_MAX + 64];
	int sig = 0, rc = AU_EXIT_AUDIT_FAILED, c;

	*path = NULL;
	*json = true;
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
		au_error("snapshot: no process %ld", pid);
		return rc;
	}
	if ((env = proc_read(pid, "environ", &len)) == NULL)
		return rc;
	v = env_get(env, len, "CUWARDEN_SNAPSHOT_SIGNAL");
	ctl = env_get(env, len, "CUWARDEN_CONTROL");
	rep = env_get(env, len, "CUWARDEN_REPORT");
	fmt = env_get(env, len, "CUWARDEN_REPORT_FORMAT");
	if (ctl != NULL && *ctl == '\0')
		ctl = NULL;
	if (!has_shim(pid)) {
		au_error("snapshot: process %ld does not run under the "
		    "cuwarden shim (no libcuwarden_preload in its maps)", pid);
		goto out;
	}
	if ((v == NULL || *v == '\0') && ctl == NULL) {
		au_error("snapshot: process %ld has snapshots off: it was "
		    "started without CUWARDEN_SNAPSHOT_SIGNAL or "
		    "CUWARDEN_CONTROL (start it with CUWARDEN_CONTROL=/tmp/"
		    "cw.%%p.ctl or CUWARDEN_SNAPSHOT_SIGNAL=USR2, and "
		    "CUWARDEN_REPORT)", pid);
		goto out;
	}
	if (rep == NULL || *rep == '\0') {
		au_error("snapshot: process %ld has no CUWARDEN_REPORT: the "
		    "shim takes no snapshot without one", pid);
		goto out;
	}
	if (ctl != NULL) {
		/* The FIFO, whatever the signal says. */
		if ((cpath = expand(pid, "CUWARDEN_CONTROL", ctl, env,
		    len)) == NULL)
			goto out;
		snprintf(sent, sizeof(sent), "a request written to %s of",
		    cpath);
	} else {
		sig = signame_parse(v);
		if (sig == 0 || (why = signame_refused(sig)) != NULL) {
			au_error("snapshot: process %ld has "
			    "CUWARDEN_SNAPSHOT_SIGNAL=%s, which the shim "
			    "refuses (%s): no snapshots", pid, v, sig == 0 ?
			    "not a signal" : why);
			goto out;
		}
		sname = signame_name(sig);
		if (sname == NULL) {
			snprintf(num, sizeof(num), "%d", sig);
			sname = num;
		}
		if ((c = catches(pid, sig)) < 0)
			goto out;
		if (c == 0) {
			au_error("snapshot: process %ld does not catch SIG%s, "
			    "so the shim's snapshot handler is not there: it "
			    "is installed at the process's first CUDA call "
			    "(none yet?), and never over the program's own "
			    "handler (the shim's warning says so); nothing "
			    "sent (the default action would end it)", pid,
			    sname);
			goto out;
		}
		snprintf(sent, sizeof(sent), "SIG%s sent to", sname);
	}
	if (strcmp(rep, "-") == 0 || strcmp(rep, "/dev/stderr") == 0 ||
	    strcmp(rep, "/dev/fd/2") == 0) {
		if (request(pid, cpath, sig))
			goto out;
		au_warn("snapshot: %s process %ld; its snapshot goes to its "
		    "standard error (CUWARDEN_REPORT=%s)", sent, pid, rep);
		rc = 0;
		goto out;
	}
	if ((full = expand(pid, "CUWARDEN_REPORT", rep, env, len)) == NULL)
		goto out;
	slash = strrchr(full, '/');
	dir = xstrndup(full, slash == full ? 1 : (size_t)(slash - full));
	prefix = xasprintf("%s.snap.", slash + 1);
	if (list(dir, prefix, &before, &nbefore)) {
		au_error("snapshot: cannot list %s: %s", dir, strerror(errno));
		goto out;
	}
	if (request(pid, cpath, sig))
		goto out;
	*path = wait_file(pid, dir, prefix, before, nbefore, wait_s, sent);
	if (*path != NULL) {
		*json = fmt == NULL || strcasecmp(fmt, "text") != 0;
		rc = 0;
	}
out:
	list_free(before, nbefore);
	free(prefix);
	free(dir);
	free(full);
	free(cpath);
	free(env);
	return rc;
}
