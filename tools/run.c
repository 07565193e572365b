/*
 * run.c -- runs the program under the shim: finds the shim of this
 * installation (or build tree), builds the environment (LD_PRELOAD with
 * ours first, CUWARDEN_REPORT in a private temporary directory, the shim
 * options), fork + execvp, forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to
 * the tool, waits for the program and every process it started (the tool
 * is a child subreaper, so orphans come back to it), reads every report
 * and removes the directory (or copies it for --keep-reports).
 *
 * Invariants: the tool never returns 0 for a run that audited nothing: no
 * report at all is an audit failure (125) unless the program died of a
 * signal (then its 128+n, and nothing is rendered).  exec failures come
 * back through a close-on-exec pipe: 127 when the program is not found,
 * 126 when it cannot run.
 */
#include "config.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "diag.h"
#include "input.h"
#include "out.h"
#include "path.h"
#include "report_read.h"
#include "xalloc.h"

#ifndef CW_PKGLIBDIR
#define CW_PKGLIBDIR "/usr/local/lib/cuwarden"
#endif
#define SHIM_NAME "libcuwarden_preload.so"

/* ------------------------------------------------------------ the shim */

static bool
readable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, R_OK) == 0;
}

char *
run_find_shim(char *err, size_t errsize)
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

/* ------------------------------------------------------------ signals */

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t interrupted;
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void
forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	interrupted = sig;
	/* A terminal's ^C already reached the whole process group: only
	 * signals sent to the tool by a process are passed on. */
	if (child_pid > 0 && (si == NULL || si->si_code != SI_KERNEL))
		kill((pid_t)child_pid, sig);
}

static void
signals_install(struct sigaction *old)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, &old[i]);
}

static void
signals_restore(const struct sigaction *old)
{
	size_t i;

	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &old[i], NULL);
}

/* ------------------------------------------------------------ the dir */

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t
run_list_files(const char *dir, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	char **v = NULL;
	size_t n = 0;

	*out = NULL;
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		/* '.' starts the shim's files still being written (and ".",
		 * ".."): never a report. */
		if (e->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, 0) != 0) {
			au_warn("%s/%s: %s, not read", dir, e->d_name,
			    strerror(errno));
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			au_warn("%s/%s: %s, not read", dir, e->d_name,
			    file_kind(st.st_mode));
			continue;
		}
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = xasprintf("%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_name);
	*out = v;
	return n;
}

void
run_free_list(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Empties and removes our private directory: the reports, and whatever
 * a process killed while writing left (its ".name" files). */
static void
remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d != NULL) {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 &&
			    strcmp(e->d_name, "..") != 0 &&
			    unlinkat(dirfd(d), e->d_name, 0) != 0 &&
			    errno == EISDIR)
				(void)unlinkat(dirfd(d), e->d_name,
				    AT_REMOVEDIR);
		closedir(d);
	}
	if (rmdir(dir) != 0 && errno != ENOENT)
		au_warn("cannot remove %s: %s", dir, strerror(errno));
}

/* Opens --keep-reports DIR, made 0700 when it does not exist.  An
 * existing DIR must be ours or root's, and writable by no one else unless
 * it is sticky (as ssh's StrictModes asks of ~/.ssh): in a directory
 * another user controls, the reports (command lines, paths) could be
 * read or swapped.  Shared sticky directories such as /tmp stay usable:
 * there no one can replace a file of ours.  Returns the directory's
 * descriptor, or -1 after a message. */
static int
keep_open(const char *dir)
{
	struct stat st;
	uid_t me = geteuid();
	bool made;
	int fd;

	made = mkdir(dir, 0700) == 0;
	if (!made && errno != EEXIST) {
		au_error("--keep-reports %s: cannot create it: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != me &&
	    st.st_uid != 0) {
		au_error("--keep-reports %s: a symbolic link of uid %ld, "
		    "refused", dir, (long)st.st_uid);
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		au_error("--keep-reports %s: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (made)
		(void)fchmod(fd, 0700); /* whatever the umask */
	if (st.st_uid != me && st.st_uid != 0) {
		au_error("--keep-reports %s: owned by uid %ld, not by this "
		    "user or root: refused (its owner could read or replace "
		    "the reports)", dir, (long)st.st_uid);
		close(fd);
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
	    (st.st_mode & S_ISVTX) == 0) {
		au_error("--keep-reports %s: writable by %s and not sticky: "
		    "refused (chmod go-w or +t it)", dir,
		    st.st_mode & S_IWOTH ? "others" : "its group");
		close(fd);
		return -1;
	}
	return fd;
}

/* Copies a report of our private directory to name in dirfd.  Returns
 * true on error (message in err). */
static bool
copy_report(const char *from, int dirfd, const char *name, const char *to,
    char *err, size_t errsize)
{
	char buf[65536];
	au_out_t out;
	ssize_t r;
	int in;

	in = input_open(from, AU_MAX_REPORT_BYTES, NULL, NULL, err, errsize);
	if (in < 0)
		return true;
	if (out_open_at(&out, dirfd, name, to, err, errsize)) {
		close(in);
		return true;
	}
	while ((r = read(in, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errsize, "%s: %s", from, strerror(errno));
			out_abort(&out);
			close(in);
			return true;
		}
		/* a short write shows at commit */
		(void)fwrite(buf, 1, (size_t)r, out.fp);
	}
	close(in);
	return out_commit(&out, err, errsize);
}

/* Copies the reports into the --keep-reports directory (each a new 0600
 * file renamed over the name: a name already there, a planted link
 * included, is replaced, never written through). */
static void
keep_reports(int dirfd, const char *dir, char **files, size_t n)
{
	char err[PATH_MAX + 256];
	size_t i;

	for (i = 0; i < n; i++) {
		const char *name = base_name(files[i]);
		char *to = xasprintf("%s/%s", dir, name);

		if (copy_report(files[i], dirfd, name, to, err, sizeof(err))) {
			au_warn("--keep-reports: cannot keep %s: %s", files[i],
			    err);
			free(to);
			continue;
		}
		/* Read (and name in the JSON) the copy that stays. */
		free(files[i]);
		files[i] = to;
	}
}

/* ------------------------------------------------------------ the run */

/* A process the tool reaped: the program, and orphans re-parented to it
 * (it is a child subreaper). */
typedef struct reaped_s {
	long pid;
	int status; /* waitpid's */
} reaped_t;

/* Completes the exit of each process whose report does not know it
 * (status -1: the shim could not tell) from what waitpid said, when the
 * pid was reaped once and reported once (with pid reuse the pairing
 * would be a guess). */
static void
fill_exits(au_model_t *m, const reaped_t *r, size_t nr)
{
	size_t i, j, k, hit = 0, same;

	for (i = 0; i < m->nprocs; i++) {
		au_process_t *p = &m->procs[i];

		if (p->exit_status >= 0)
			continue;
		for (j = 0, k = 0; j < nr; j++)
			if (r[j].pid == p->pid) {
				hit = j;
				k++;
			}
		for (j = 0, same = 0; j < m->nprocs; j++)
			same += m->procs[j].pid == p->pid;
		if (k != 1 || same != 1)
			continue;
		if (WIFEXITED(r[hit].status)) {
			p->exit_status = WEXITSTATUS(r[hit].status);
		} else if (WIFSIGNALED(r[hit].status)) {
			p->exit_how = "signal";
			p->exit_status = WTERMSIG(r[hit].status);
		}
	}
}

static void
child_exec(int errfd, const char *shim, const char *report,
    const au_run_opts_t *o, char **argv)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload;
	size_t i;
	int e;

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
	for (i = 0; i < o->nenv; i++)
		putenv(o->env[i]);
	execvp(argv[0], argv);
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(AU_EXIT_NOT_FOUND);
	_exit(e == ENOENT ? AU_EXIT_NOT_FOUND : AU_EXIT_CANNOT_EXEC);
}

/* The file execvp(prog) tried: prog itself when it has a '/', else the
 * first regular file named prog in $PATH (execvp's default path when
 * unset).  Newly allocated, or NULL. */
static char *
exec_file(const char *prog)
{
	const char *path = getenv("PATH"), *p, *end;
	char defpath[256];
	struct stat st;

	if (strchr(prog, '/') != NULL)
		return stat(prog, &st) == 0 && S_ISREG(st.st_mode) ?
		    xstrdup(prog) : NULL;
	if (path == NULL) {
		if (confstr(_CS_PATH, defpath, sizeof(defpath)) == 0)
			return NULL;
		path = defpath;
	}
	for (p = path;; p = end + 1) {
		char *cand;

		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		/* An empty entry is the current directory. */
		cand = end == p ? xasprintf("./%s", prog) :
		    xasprintf("%.*s/%s", (int)(end - p), p, prog);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode))
			return cand;
		free(cand);
		if (*end == '\0')
			return NULL;
	}
}

/* The interpreter file names: its #! line's first word (*script set),
 * or its ELF PT_INTERP, the dynamic loader.  Newly allocated, or NULL. */
static char *
interpreter_of(const char *file, bool *script)
{
	char buf[512], err[PATH_MAX + 128], *interp = NULL;
	unsigned char *e = (unsigned char *)buf;
	ssize_t n;
	int fd;

	fd = input_open(file, UINT64_MAX, NULL, NULL, err, sizeof(err));
	if (fd < 0)
		return NULL;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		size_t i = 2, j;

		buf[n] = '\0';
		while (buf[i] == ' ' || buf[i] == '\t')
			i++;
		j = i + strcspn(buf + i, " \t\r\n");
		if (j > i)
			interp = strndup(buf + i, j - i);
		*script = true;
	} else if (n >= (ssize_t)sizeof(Elf64_Ehdr) && e[EI_MAG0] == ELFMAG0 &&
	    e[EI_MAG1] == ELFMAG1 && e[EI_MAG2] == ELFMAG2 &&
	    e[EI_MAG3] == ELFMAG3 && e[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
		unsigned i;

		memcpy(&eh, buf, sizeof(eh));
		for (i = 0; i < eh.e_phnum && i < 256; i++) {
			off_t at = (off_t)(eh.e_phoff +
			    (uint64_t)i * eh.e_phentsize);

			if (pread(fd, &ph, sizeof(ph), at) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type != PT_INTERP || ph.p_filesz < 2 ||
			    ph.p_filesz > PATH_MAX)
				continue;
			interp = xmalloc(ph.p_filesz + 1);
			if (pread(fd, interp, ph.p_filesz,
			    (off_t)ph.p_offset) != (ssize_t)ph.p_filesz) {
				free(interp);
				interp = NULL;
				break;
			}
			interp[ph.p_filesz] = '\0';
			break;
		}
	}
	close(fd);
	return interp;
}

static int
exec_failed(const char *prog, int e)
{
	char *file = e == ENOENT ? exec_file(prog) : NULL;
	bool script = false;
	char *interp = file != NULL ? interpreter_of(file, &script) : NULL;
	struct stat st;
	int rc;

	if (e == ENOENT && file == NULL && strchr(prog, '/') == NULL) {
		au_error("%s: command not found", prog);
		return AU_EXIT_NOT_FOUND;
	}
	/* ENOENT for a file that exists: what it needs to run is missing. */
	if (interp != NULL && stat(interp, &st) != 0)
		au_error("cannot run %s: its %s %s%s is not found", file,
		    script ? "interpreter" : "ELF interpreter (dynamic loader)",
		    interp, script ? ", named on its #! line," : "");
	else if (file != NULL)
		au_error("cannot run %s: %s (the file exists: a file it needs "
		    "to start is missing)", file, strerror(e));
	else
		au_error("cannot run %s: %s", prog, strerror(e));
	rc = e == ENOENT ? AU_EXIT_NOT_FOUND : AU_EXIT_CANNOT_EXEC;
	free(interp);
	free(file);
	return rc;
}

int
run_program(const au_run_opts_t *o, char **argv, au_model_t *m)
{
	char err[4096], tmpl[PATH_MAX], *shim, *report, **files, *dir;
	struct sigaction old[4];
	const char *tmp = getenv("TMPDIR");
	int pfd[2], status = 0, e, rc = 0;
	bool main_reported = false;
	ssize_t r;
	pid_t pid, main_pid;
	size_t i, n;
	int keep_fd = -1;
	reaped_t *reaped = NULL;
	size_t nreaped = 0;

	if (o->preload != NULL) {
		if (!readable(o->preload)) {
			au_error("--preload %s: %s", o->preload,
			    access(o->preload, F_OK) ? strerror(errno) :
			    "not a readable file");
			return AU_EXIT_AUDIT_FAILED;
		}
		shim = realpath(o->preload, NULL);
	} else {
		shim = run_find_shim(err, sizeof(err));
		if (shim == NULL) {
			au_error("%s", err);
			return AU_EXIT_AUDIT_FAILED;
		}
	}
	if (strpbrk(shim, " :\t\n") != NULL) {
		au_error("the shim's path %s contains a space or a colon, "
		    "which LD_PRELOAD cannot carry; install it elsewhere",
		    shim);
		free(shim);
		return AU_EXIT_AUDIT_FAILED;
	}
	if (o->keep_reports != NULL && (keep_fd = keep_open(o->keep_reports)) <
	    0) {
		free(shim);
		return AU_EXIT_AUDIT_FAILED;
	}
	snprintf(tmpl, sizeof(tmpl), "%s/cuwarden-audit.XXXXXX",
	    tmp && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(tmpl) == NULL) {
		au_error("cannot create a temporary directory %s: %s", tmpl,
		    strerror(errno));
		if (keep_fd >= 0)
			close(keep_fd);
		free(shim);
		return AU_EXIT_AUDIT_FAILED;
	}
	/* Absolute, whatever TMPDIR is: a program that changes directory
	 * must still write where we read. */
	dir = realpath(tmpl, NULL);
	if (dir == NULL) {
		au_error("%s: %s", tmpl, strerror(errno));
		rmdir(tmpl);
		if (keep_fd >= 0)
			close(keep_fd);
		free(shim);
		return AU_EXIT_AUDIT_FAILED;
	}
	report = xasprintf("%s/report.%%p.json", dir);
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		au_error("pipe: %s", strerror(errno));
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}
	if (o->wait_descendants)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fflush(NULL);
	signals_install(old);
	pid = fork();
	if (pid < 0) {
		au_error("fork: %s", strerror(errno));
		signals_restore(old);
		close(pfd[0]);
		close(pfd[1]);
		rc = AU_EXIT_AUDIT_FAILED;
		goto out;
	}
	if (pid == 0) {
		signals_restore(old);
		close(pfd[0]);
		child_exec(pfd[1], shim, report, o, argv);
	}
	main_pid = pid;
	child_pid = pid;
	close(pfd[1]);
	do
		r = read(pfd[0], &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(main_pid, &status, 0) < 0 && errno == EINTR)
		;
	child_pid = 0;
	if (r == (ssize_t)sizeof(e)) {
		signals_restore(old);
		rc = exec_failed(argv[0], e);
		goto out;
	}
	reaped = xrealloc(reaped, (nreaped + 1) * sizeof(*reaped));
	reaped[nreaped++] = (reaped_t){ (long)main_pid, status };
	/* Orphaned descendants were re-parented to us: wait for them too,
	 * unless the user interrupts the wait (or already asked the program
	 * to stop: then its leftovers are not waited for). */
	while (o->wait_descendants && !interrupted) {
		int st;
		pid_t w = waitpid(-1, &st, 0);

		if (w < 0 && errno != EINTR)
			break;
		if (w > 0) {
			reaped = xrealloc(reaped, (nreaped + 1) *
			    sizeof(*reaped));
			reaped[nreaped++] = (reaped_t){ (long)w, st };
		}
	}
	signals_restore(old);
	if (WIFEXITED(status)) {
		m->exit_status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		m->exit_status = 128 + WTERMSIG(status);
		m->term_signal = WTERMSIG(status);
		au_warn("the program was killed by signal %d (%s)%s",
		    WTERMSIG(status), strsignal(WTERMSIG(status)),
		    WCOREDUMP(status) ? ", core dumped" : "");
	}
	m->ran = true;

	m->group = ++m->ngroups;
	n = run_list_files(dir, &files);
	if (keep_fd >= 0)
		keep_reports(keep_fd, o->keep_reports, files, n);
	/* (the originals are removed with the directory below) */
	for (i = 0; i < n; i++) {
		if (report_read_file(m, files[i], err, sizeof(err))) {
			au_error("unreadable report: %s", err);
			if (o->keep_reports == NULL)
				au_error("(run with --keep-reports DIR to keep "
				    "the reports)");
			rc = AU_EXIT_AUDIT_FAILED;
			break;
		}
	}
	if (rc == 0)
		fill_exits(m, reaped, nreaped);
	for (i = 0; rc == 0 && i < m->nprocs; i++)
		if (m->procs[i].pid == main_pid)
			main_reported = true;
	if (rc == 0 && n == 0) {
		if (WIFSIGNALED(status)) {
			au_error("the program was killed by signal %d before "
			    "any report was written: nothing was audited",
			    WTERMSIG(status));
			rc = m->exit_status;
		} else if (WIFEXITED(status) && (WEXITSTATUS(status) ==
		    AU_EXIT_NOT_FOUND || WEXITSTATUS(status) ==
		    AU_EXIT_CANNOT_EXEC)) {
			/* The dynamic loader's "error while loading shared
			 * libraries" (127), or a shell's "cannot execute"
			 * (126): before the shim could load.  The program's
			 * own stderr said why; its status is passed on. */
			au_error("%s could not start: it exited with %d before "
			    "any report was written (its own message above "
			    "says why: a shared library or an interpreter "
			    "missing?)", argv[0], WEXITSTATUS(status));
			rc = m->exit_status;
		} else {
			au_error("the shim was not loaded, or no process used "
			    "CUDA: no process wrote a report (is %s statically "
			    "linked or setuid, or does it clear LD_PRELOAD? "
			    "shim: %s)", argv[0], shim);
			rc = AU_EXIT_AUDIT_FAILED;
		}
	} else if (rc == 0 && !main_reported && !WIFSIGNALED(status)) {
		fprintf(stderr, AU_PROG ": note: the program's own process "
		    "(pid %ld) wrote no report (it used no CUDA, or the shim "
		    "was not loaded into it); %zu process%s it started %s "
		    "audited\n", (long)main_pid, n, n == 1 ? "" : "es",
		    n == 1 ? "was" : "were");
	}
	run_free_list(files, n);
out:
	if (keep_fd >= 0)
		close(keep_fd);
	remove_dir(dir);
	free(dir);
	free(reaped);
	free(report);
	free(shim);
	return rc;
}
