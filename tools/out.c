/*
 * out.c -- the files the tool writes (out.h).
 *
 * Files written may be in a directory another user can write to: a name
 * there may be a link planted to make us overwrite something else.  A
 * file is never written through its name: a new file is created beside
 * it (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600) and renamed over the name
 * once complete, which replaces a planted link rather than following it
 * and leaves an earlier output whole until the new one is.  Character
 * devices (/dev/null, /dev/full, a terminal: no other user can make one)
 * and a link to the tool's own standard output or error are written in
 * place; a directory, a FIFO or a socket at the name is refused.  The
 * name "-" is the tool's standard output, as for most Unix tools.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "out.h"
#include "path.h"
#include "xalloc.h"

typedef enum out_how_e {
	OUT_REPLACE,   /* a new file renamed over the name */
	OUT_IN_PLACE,  /* a character device: written as it is */
	OUT_STDOUT,    /* a link to our standard output */
	OUT_STDERR,    /* ... or error */
} out_how_t;

/* Splits path into its directory (opened, O_PATH) and its last name.
 * Returns true on error (message in err). */
static bool
out_dir(const char *path, int *dirfd, char **name, char *err, size_t errsize)
{
	const char *slash = strrchr(path, '/');
	char *dir;

	if (path[0] == '\0') {
		snprintf(err, errsize, "an empty file name");
		return true;
	}
	if (slash == NULL) {
		dir = xstrdup(".");
		*name = xstrdup(path);
	} else {
		dir = slash == path ? xstrdup("/") :
		    xstrndup(path, (size_t)(slash - path));
		*name = xstrdup(slash + 1);
	}
	if ((*name)[0] == '\0' || strcmp(*name, ".") == 0 ||
	    strcmp(*name, "..") == 0) {
		snprintf(err, errsize, "%s: is a directory", path);
		goto fail;
	}
	*dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		goto fail;
	}
	free(dir);
	return false;
fail:
	free(dir);
	free(*name);
	*name = NULL;
	return true;
}

static bool
same_file_as_fd(const struct stat *st, int fd)
{
	struct stat fs;

	return fstat(fd, &fs) == 0 && fs.st_dev == st->st_dev &&
	    fs.st_ino == st->st_ino;
}

/* How name in dirfd can be written.  Returns true when it cannot
 * (message in err). */
static bool
out_how(int dirfd, const char *name, const char *path, out_how_t *how,
    char *err, size_t errsize)
{
	struct stat st, to;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno != ENOENT) {
			snprintf(err, errsize, "%s: %s", path,
			    strerror(errno));
			return true;
		}
		*how = OUT_REPLACE;
		return false;
	}
	if (S_ISREG(st.st_mode)) {
		*how = OUT_REPLACE;
		return false;
	}
	if (S_ISCHR(st.st_mode)) {
		*how = OUT_IN_PLACE;
		return false;
	}
	if (S_ISLNK(st.st_mode)) {
		/* /dev/stdout, /dev/stderr: what the user means is our own
		 * descriptor, not a regular file in /dev. */
		*how = OUT_REPLACE;
		if (fstatat(dirfd, name, &to, 0) == 0) {
			if (same_file_as_fd(&to, STDOUT_FILENO))
				*how = OUT_STDOUT;
			else if (same_file_as_fd(&to, STDERR_FILENO))
				*how = OUT_STDERR;
		}
		return false;
	}
	snprintf(err, errsize, "%s: %s (outputs are written to regular "
	    "files or character devices)", path, file_kind(st.st_mode));
	return true;
}

bool
out_is_stdout(const char *path)
{
	return strcmp(path, "-") == 0;
}

bool
out_check(const char *path, char *err, size_t errsize)
{
	out_how_t how;
	char *name;
	int dirfd;
	bool bad;

	if (out_is_stdout(path)) {
		int fl = fcntl(STDOUT_FILENO, F_GETFL);

		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
			snprintf(err, errsize, "-: standard output is closed "
			    "or not writable");
			return true;
		}
		return false;
	}
	if (out_dir(path, &dirfd, &name, err, errsize))
		return true;
	bad = out_how(dirfd, name, path, &how, err, errsize);
	if (!bad && how == OUT_REPLACE && faccessat(dirfd, ".", W_OK | X_OK,
	    AT_EACCESS) != 0) {
		snprintf(err, errsize, "%s: cannot create a file in its "
		    "directory: %s", path, strerror(errno));
		bad = true;
	} else if (!bad && how == OUT_IN_PLACE &&
	    faccessat(dirfd, name, W_OK, AT_EACCESS) != 0) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		bad = true;
	}
	close(dirfd);
	free(name);
	return bad;
}

/* Is path a link to our standard output (as /dev/stdout is)? */
static bool
names_stdout(const char *path)
{
	out_how_t how;
	char *name, err[16];
	int dirfd;
	bool is = false;

	if (out_dir(path, &dirfd, &name, err, sizeof(err)))
		return false;
	is = !out_how(dirfd, name, path, &how, err, sizeof(err)) &&
	    how == OUT_STDOUT;
	close(dirfd);
	free(name);
	return is;
}

bool
out_same(const char *a, const char *b)
{
	struct stat sa, sb;
	char *na, *nb, err[16];
	int da, db;
	bool same = false;

	if (out_is_stdout(a) || out_is_stdout(b))
		return out_is_stdout(a) ? out_is_stdout(b) || names_stdout(b) :
		    names_stdout(a);
	if (out_dir(a, &da, &na, err, sizeof(err)))
		return false;
	if (!out_dir(b, &db, &nb, err, sizeof(err))) {
		same = fstat(da, &sa) == 0 && fstat(db, &sb) == 0 &&
		    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
		    strcmp(na, nb) == 0;
		close(db);
		free(nb);
	}
	close(da);
	free(na);
	return same;
}

bool
out_open_at(au_out_t *o, int dirfd, const char *name, const char *path,
    char *err, size_t errsize)
{
	out_how_t how;
	int fd = -1, i;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	o->path = xstrdup(path);
	if (out_how(dirfd, name, path, &how, err, errsize))
		goto fail;
	switch (how) {
	case OUT_STDOUT:
	case OUT_STDERR:
		fflush(how == OUT_STDOUT ? stdout : stderr);
		fd = fcntl(how == OUT_STDOUT ? STDOUT_FILENO : STDERR_FILENO,
		    F_DUPFD_CLOEXEC, 3);
		break;
	case OUT_IN_PLACE:
		fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_NOCTTY |
		    O_CLOEXEC);
		if (fd >= 0) {
			struct stat st;

			if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
				close(fd);
				fd = -1;
				errno = EEXIST; /* it changed under us */
			}
		}
		break;
	case OUT_REPLACE:
		o->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
		if (o->dirfd < 0)
			break;
		o->name = xstrdup(name);
		for (i = 0; i < 100 && fd < 0; i++) {
			uint64_t r;

			if (getrandom(&r, sizeof(r), GRND_NONBLOCK) !=
			    (ssize_t)sizeof(r))
				r = (uint64_t)getpid() << 32 ^
				    (uint64_t)time(NULL) ^ (uint64_t)i;
			free(o->tmp);
			/* Starts with '.': `report DIR` never reads it. */
			o->tmp = xasprintf(".%.200s.%06llx", name,
			    (unsigned long long)(r & 0xffffff));
			fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT |
			    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 && errno != EEXIST)
				break;
		}
		break;
	}
	if (fd < 0) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		goto fail;
	}
	o->fp = fdopen(fd, "w");
	if (o->fp == NULL) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		close(fd);
		goto fail;
	}
	return false;
fail:
	out_abort(o);
	return true;
}

bool
out_open(au_out_t *o, const char *path, char *err, size_t errsize)
{
	char *name;
	int dirfd;
	bool bad;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	if (out_is_stdout(path)) {
		int fd;

		fflush(stdout);
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		o->path = xstrdup(path);
		if (fd >= 0 && (o->fp = fdopen(fd, "w")) != NULL)
			return false;
		snprintf(err, errsize, "-: standard output: %s",
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		out_abort(o);
		return true;
	}
	if (out_dir(path, &dirfd, &name, err, errsize))
		return true;
	bad = out_open_at(o, dirfd, name, path, err, errsize);
	close(dirfd);
	free(name);
	return bad;
}

bool
out_commit(au_out_t *o, char *err, size_t errsize)
{
	int e = 0;

	if (o->fp == NULL) {
		snprintf(err, errsize, "%s: not open", o->path);
		out_abort(o);
		return true;
	}
	/* fflush gives the errno of a failing write; an error flag left by
	 * an earlier one (its errno lost) still fails the file. */
	errno = 0;
	if (fflush(o->fp) != 0)
		e = errno ? errno : EIO;
	else if (ferror(o->fp))
		e = errno ? errno : EIO;
	if (fclose(o->fp) != 0 && e == 0)
		e = errno ? errno : EIO;
	o->fp = NULL;
	if (e == 0 && o->tmp != NULL &&
	    renameat(o->dirfd, o->tmp, o->dirfd, o->name) != 0)
		e = errno;
	if (e != 0) {
		snprintf(err, errsize, "%s: %s", o->path, strerror(e));
		out_abort(o);
		return true;
	}
	free(o->tmp);
	o->tmp = NULL;
	out_abort(o);
	return false;
}

void
out_abort(au_out_t *o)
{
	if (o->fp != NULL)
		fclose(o->fp);
	if (o->tmp != NULL && o->dirfd >= 0)
		(void)unlinkat(o->dirfd, o->tmp, 0);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->tmp);
	free(o->name);
	free(o->path);
	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
}
