/*
 * outfile.h -- a file cuwarden writes: the report and the log.  Every
 * file is created O_CREAT|O_EXCL|O_NOFOLLOW with mode 0600, or appended to
 * only when it is a regular file of ours; a report is written whole to a
 * temporary file and moved into place, never replacing anything but this
 * process's own earlier report; nothing but a regular file or a terminal
 * is ever opened, and never in a way that blocks.  "-", /dev/stderr and
 * /dev/fd/2 name the process's standard error (fd 2).  Paths are made
 * absolute once, when the process starts.  doc/threat-model.md says why.
 * No malloc, no stdio: usable at exit and from a signal handler.
 * Owner: infra.
 */
#ifndef CUWARDEN_OUTFILE_H
#define CUWARDEN_OUTFILE_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Room for a pattern made absolute: the directory (each '%' doubled) and
 * the pattern itself. */
#define OUTFILE_PATTERN_MAX (2 * PATH_MAX + 4096)

/* The standard stream a path names: 2 for "-", "/dev/stderr", "/dev/fd/2"
 * and "/proc/self/fd/2"; 1 for "/dev/stdout", "/dev/fd/1" and
 * "/proc/self/fd/1"; -1 for any other path. */
int outfile_std_fd(const char *path);

/* pat (a file name pattern of log_expand_path: "%p", "%%") made absolute
 * against the current directory: a relative one gets the directory in
 * front, with each '%' of the directory doubled, so that expanding the
 * result gives the path the caller meant.  Absolute patterns and names of
 * standard streams are copied as they are.  Returns true on error (errno:
 * getcwd's, or ENAMETOOLONG); out then holds pat unchanged if it fits. */
bool outfile_absolute(const char *pat, char *out, size_t size);

/* A pattern made absolute once (at the process's start) and kept. */
typedef struct outfile_path_s {
	int state;         /* atomic: OUTFILE_UNRESOLVED, ..._RESOLVING, ..._RESOLVED */
	int err;           /* errno when a relative pattern had to be kept, else 0 */
	const char *value; /* NULL (unset) or pat; valid once RESOLVED */
	char pat[OUTFILE_PATTERN_MAX];
} outfile_path_t;
#define OUTFILE_PATH_INIT { 0, 0, NULL, { 0 } }

/* Resolves raw (NULL: unset) into *p with outfile_absolute at the first
 * call; every later call returns that first answer, wherever the process
 * is by then.  Thread-safe and idempotent; a call made while this thread
 * is resolving (from a signal handler) gets raw.  *first (may be NULL) is
 * true for the one call that resolved, so that its caller warns once
 * about p->err.  Returns the pattern to use, NULL when unset. */
const char *outfile_path_get(outfile_path_t *p, const char *raw, bool *first);
/* Forgets the answer (for tests; and in a fork child, a resolution that
 * another thread of the parent had not finished). */
void outfile_path_reset(outfile_path_t *p);
void outfile_path_postfork_child(outfile_path_t *p);

/* ------------------------------------------------------------ the log */

typedef struct outfile_id_s {
	dev_t dev;
	ino_t ino;
} outfile_id_t;

/* Opens path to append to (the log): created O_CREAT|O_NOFOLLOW with mode
 * 0600 when missing, opened O_APPEND|O_NONBLOCK|O_CLOEXEC|O_NOCTTY.  It
 * must be a regular file owned by the effective user, or a terminal;
 * anything else (a FIFO, a socket, a directory, another device) is refused
 * without ever being opened in a way that blocks.  *id gets the file's
 * identity.  Returns the fd, or -1 with errno set and *what saying what is
 * there ("a FIFO", "a file owned by another user"; NULL when errno says
 * it all). */
int outfile_open_append(const char *path, outfile_id_t *id,
    const char **what);

/* True if fd is still the file of id: false once the program has closed
 * it (EBADF) or reused its number for a file of its own. */
bool outfile_is(int fd, const outfile_id_t *id);

/* Writes all of buf to fd, retrying on EINTR and short writes; a
 * non-blocking fd that is full is waited for (poll), at most
 * OUTFILE_WAIT_MS without progress.  Returns true on error. */
#define OUTFILE_WAIT_MS 10000
bool outfile_write_all(int fd, const void *buf, size_t len);
/* The same, waiting at most wait_ms; with 0 a full fd is an error
 * (EAGAIN): log_write_all's way. */
bool outfile_write_within(int fd, const void *buf, size_t len, int wait_ms);

/* ------------------------------------------------------------ a report */

/* A file written whole: begin, write to fd, commit (or abort). */
typedef struct outfile_s {
	int fd;            /* where to write, between begin and commit */
	bool stream;       /* fd is a stream (standard error, a terminal) */
	bool close_fd;     /* fd was opened here */
	bool replace;      /* target is this process's own earlier file */
	bool pipe_pending; /* SIGPIPE was pending before begin */
	sigset_t saved;    /* the thread's signal mask before begin */
	char tmp[PATH_MAX];    /* the temporary file (a dot file) */
	char target[PATH_MAX]; /* the name it is meant to get; at commit, the
				* name it got */
} outfile_t;

/* Starts writing path whole.  Blocks SIGTERM, SIGINT, SIGHUP, SIGQUIT,
 * SIGPIPE, SIGUSR1 and SIGUSR2 in the calling thread until commit or
 * abort (a second signal cannot cut the file short; SIGALRM stays open
 * for the watchdog that ends a writer which cannot finish).  A standard
 * stream's name (outfile_std_fd) or a terminal is written in place; any
 * other existing file that is not regular (nor a symbolic link) is
 * refused.  Otherwise of->fd is a new temporary file in path's directory,
 * named ".<name>.<random>" (a dot file: readers of the directory skip
 * it), O_CREAT|O_EXCL|O_NOFOLLOW, 0600.  replace: path is this process's
 * own earlier file, to be replaced.  Returns true on error (errno set,
 * *what as outfile_open_append's; nothing left behind, the mask restored). */
bool outfile_begin(outfile_t *of, const char *path, bool replace,
    const char **what);

/* Ends it: closes the temporary file and moves it into place atomically:
 * over the target if replace, else under the target's name only if that
 * name is free (renameat2 RENAME_NOREPLACE, or link + unlink where the
 * filesystem has no such rename), else under "<path>.<pid>-<starttime>"
 * or, if that exists too, "<path>.<pid>-<starttime>-<random>".  A reader
 * sees the whole file or none.  out gets the name written (or
 * "standard error").  Returns true on error (errno set; the temporary
 * file removed).  The signal mask is restored either way. */
bool outfile_commit(outfile_t *of, char *out, size_t size);
/* Gives up: removes the temporary file, restores the signal mask. */
void outfile_abort(outfile_t *of);

/* This process's start time (field 22 of /proc/self/stat, clock ticks
 * since boot): with the pid, it names one process for the machine's
 * uptime.  0 when unreadable. */
unsigned long long outfile_start_time(void);

/* For tests: behave as on a filesystem that refuses RENAME_NOREPLACE. */
extern bool outfile_test_no_renameat2;

#endif /* CUWARDEN_OUTFILE_H */
