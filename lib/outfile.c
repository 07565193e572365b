#include "preamble.h"

/*
 * outfile.c -- a file cuwarden writes (the report, the log): what may be
 * opened and how.
 *
 * Owns: the names of the standard streams; the checks made before and
 * after an open (outfile_int.h), which outfile_whole.c's report file
 * uses too; the log's append-only open and its identity check; the
 * writes that wait for a non-blocking fd.  Patterns made absolute once
 * are outfile_path.c's; a report's file written whole, outfile_whole.c's.
 *
 * Invariants: the log is created O_CREAT|O_NOFOLLOW with mode 0600, then
 * checked to be a regular file of ours.  Nothing is opened that is not a
 * regular file or a terminal, and nothing is opened in a way that can
 * block (a FIFO is seen by lstat and refused unopened; a FIFO swapped in
 * between is opened O_NONBLOCK, which fails or returns at once, and
 * refused by fstat).  No malloc, no stdio, no locks: everything here may
 * run at exit and in a signal handler.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "outfile.h"
#include "outfile_int.h"

/* ------------------------------------------------------------ names */

int
outfile_std_fd(const char *path)
{
	static const char *const err_names[] = { "-", "/dev/stderr",
		"/dev/fd/2", "/proc/self/fd/2" };
	static const char *const out_names[] = { "/dev/stdout", "/dev/fd/1",
		"/proc/self/fd/1" };

	if (path == NULL)
		return -1;
	for (size_t i = 0; i < CW_ARRAY_SIZE(err_names); i++)
		if (strcmp(path, err_names[i]) == 0)
			return STDERR_FILENO;
	for (size_t i = 0; i < CW_ARRAY_SIZE(out_names); i++)
		if (strcmp(path, out_names[i]) == 0)
			return STDOUT_FILENO;
	return -1;
}

/* "a FIFO", "a directory", ...: what a file of this st_mode is. */
static const char *
describe(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFLNK: return "a symbolic link";
	case S_IFBLK: return "a block device";
	case S_IFCHR: return "a character device other than a terminal";
	default: return "not a regular file";
	}
}

/* ------------------------------------------------------------ checks */

/* True for the device numbers of terminals: the virtual consoles and
 * serial lines (major 4), /dev/tty and /dev/console (5, 0 and 1; not
 * /dev/ptmx, whose open makes a new terminal) and pseudo-terminals
 * (136-143).  Other devices are never opened: opening one can act
 * (a watchdog starts, a tape rewinds). */
static bool
terminal_dev(dev_t rdev)
{
	unsigned maj = major(rdev), min = minor(rdev);

	return maj == 4 || (maj == 5 && min <= 1) ||
	    (maj >= 136 && maj <= 143);
}

bool
outfile_refuse_existing(const char *path, bool *tty, const char **what)
{
	struct stat st;

	*tty = false;
	if (lstat(path, &st) != 0)
		return false; /* missing (or unreadable: open will say) */
	if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
		return false;
	if (S_ISCHR(st.st_mode) && terminal_dev(st.st_rdev)) {
		*tty = true;
		return false;
	}
	*what = describe(st.st_mode);
	errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	return true;
}

bool
outfile_refuse_open(int fd, bool must_be_ours, const char **what)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return true;
	if (S_ISREG(st.st_mode)) {
		if (must_be_ours && st.st_uid != geteuid()) {
			*what = "a file owned by another user";
			errno = EPERM;
			return true;
		}
		return false;
	}
	if (S_ISCHR(st.st_mode) && terminal_dev(st.st_rdev) && isatty(fd))
		return false;
	*what = describe(st.st_mode);
	errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	return true;
}

/* ------------------------------------------------------------ the log */

int
outfile_open_append(const char *path, outfile_id_t *id, const char **what)
{
	/* O_NONBLOCK: an open of a FIFO that appeared after the lstat
	 * fails (ENXIO) or returns at once instead of waiting for a reader;
	 * on a terminal a full output queue loses a line instead of
	 * stopping the program (log.c counts it).  A regular file ignores
	 * the flag. */
	const int fl = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK | O_NOCTTY;
	struct stat st;
	bool tty;
	int fd, e;

	*what = NULL;
	if (outfile_refuse_existing(path, &tty, what))
		return -1;
	fd = open(path, fl, 0600);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			*what = "a symbolic link";
		errno = e;
		return -1;
	}
	if (outfile_refuse_open(fd, true, what) || fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return fd;
}

bool
outfile_is(int fd, const outfile_id_t *id)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == id->dev &&
	    st.st_ino == id->ino;
}

bool
outfile_write_all(int fd, const void *buf, size_t len)
{
	return outfile_write_within(fd, buf, len, OUTFILE_WAIT_MS);
}

bool
outfile_write_within(int fd, const void *buf, size_t len, int wait_ms)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			struct pollfd pfd = { fd, POLLOUT, 0 };
			int r;

			if (errno == EINTR)
				continue;
			if ((errno != EAGAIN && errno != EWOULDBLOCK) ||
			    wait_ms == 0)
				return true;
			do
				r = poll(&pfd, 1, wait_ms);
			while (r < 0 && errno == EINTR);
			if (r <= 0 || (pfd.revents & (POLLERR | POLLNVAL))) {
				if (r == 0)
					errno = ETIMEDOUT;
				else if (r > 0)
					errno = EIO;
				return true;
			}
			continue;
		}
		if (n == 0) {
			errno = EIO;
			return true;
		}
		p += n;
		len -= (size_t)n;
	}
	return false;
}
