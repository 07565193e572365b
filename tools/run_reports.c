/*
 * run_reports.c -- the reports of a run (run.h, run_int.h): the private
 * directory the shim writes them into, listed and removed, and the copies
 * --keep-reports keeps.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "input.h"
#include "out.h"
#include "path.h"
#include "run_int.h"
#include "xalloc.h"

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

void
run_remove_dir(const char *dir)
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

/* --keep-reports DIR is made 0700 when it does not exist.  An existing
 * DIR must be ours or root's, and writable by no one else unless it is
 * sticky (as ssh's StrictModes asks of ~/.ssh): in a directory another
 * user controls, the reports (command lines, paths) could be read or
 * swapped.  Shared sticky directories such as /tmp stay usable: there no
 * one can replace a file of ours. */
int
run_keep_open(const char *dir)
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

/* Each copy is a new 0600 file renamed over the name (out_open_at): a
 * name already there, a planted link included, is replaced, never
 * written through. */
void
run_keep_reports(int dirfd, const char *dir, char **files, size_t n)
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

void
run_copy_log(const char *path, FILE *out)
{
	static const char prefix[] = "cuwarden: ";
	char err[PATH_MAX + 256], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *in;
	int fd;

	fd = input_open(path, UINT64_MAX, "the shim's log", NULL, err,
	    sizeof(err));
	if (fd < 0) {
		if (errno != ENOENT) /* absent: the shim said nothing */
			au_warn("%s", err);
		return;
	}
	if ((in = fdopen(fd, "r")) == NULL) {
		au_warn("%s: %s", path, strerror(errno));
		close(fd);
		return;
	}
	while ((n = getline(&line, &cap, in)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (strncmp(line, prefix, sizeof(prefix) - 1) != 0)
			fputs(prefix, out);
		for (ssize_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)line[i];

			if ((c < 0x20 && c != '\t') || c == 0x7f)
				fprintf(out, "\\x%02x", c);
			else
				fputc(c, out);
		}
		fputc('\n', out);
	}
	free(line);
	fclose(in);
}
