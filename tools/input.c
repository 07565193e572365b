/*
 * input.c -- the files the tool reads (input.h).
 *
 * Files read (reports, suppressions, baselines, modules) come from a
 * report or the command line, so a path may name a FIFO (an open would
 * block for ever), a device or a directory: only regular files are read,
 * opened non-blocking and checked with fstat after the open, and of a
 * bounded size.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"
#include "path.h"
#include "xalloc.h"

int
input_open(const char *path, uint64_t max, const char *what,
    struct stat *stp, char *err, size_t errsize)
{
	struct stat st;
	int fd, fl;

	/* A look before the open: opening a device can do something of
	 * its own (a tape rewinds); the fstat after it is the one that
	 * counts (the name may change in between). */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errsize, "%s: %s, not a regular file", path,
		    file_kind(st.st_mode));
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsize, "%s: cannot read%s%s: %s", path,
		    what ? " " : "", what ? what : "", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsize, "%s: %s, not a regular file", path,
		    file_kind(st.st_mode));
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if ((uint64_t)st.st_size > max) {
		snprintf(err, errsize, "%s: %llu bytes, more than the %llu "
		    "this tool reads from such a file", path,
		    (unsigned long long)st.st_size, (unsigned long long)max);
		close(fd);
		errno = EFBIG;
		return -1;
	}
	/* Regular files never block; reads stay plain. */
	if ((fl = fcntl(fd, F_GETFL)) >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (stp != NULL)
		*stp = st;
	return fd;
}

char *
input_read(const char *path, uint64_t max, const char *what,
    struct stat *stp, size_t *len, char *err, size_t errsize)
{
	struct stat st;
	char *buf;
	size_t cap, n = 0;
	ssize_t r;
	int fd = input_open(path, max, what, &st, err, errsize);

	if (fd < 0)
		return NULL;
	/* The size may change while we read (a file still being written):
	 * read to the end, never past max. */
	cap = (size_t)st.st_size + 1;
	buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				snprintf(err, errsize, "%s: more than the %llu "
				    "bytes this tool reads from such a file",
				    path, (unsigned long long)max);
				goto fail;
			}
			cap = cap * 2 > max + 1 ? (size_t)max + 1 : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errsize, "%s: cannot read%s%s: %s", path,
			    what ? " " : "", what ? what : "",
			    strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	if (stp != NULL)
		*stp = st;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}
