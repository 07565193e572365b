#include "preamble.h"

/*
 * log.c -- the output path of all text cuwarden writes: one output
 * callback, the default output and the warning cap.
 *
 * Owns: the output callback (fn, arg), the default output (write(2) to
 * fd 2, or to CUWARDEN_LOG_FILE, its pattern made absolute once and the
 * file opened at the first message through outfile.c), the warning cap,
 * the count of lines lost, and cw_assert_fail.  Messages are formatted by
 * fmt.c.  The log is below options: it never names them, and reads its
 * level and file through the source options.c gives it (log_set_source).
 *
 * Invariants: every message is formatted into a stack buffer of
 * LOG_LINE_MAX bytes (longer messages are cut and end in "..."), gets the
 * "cuwarden: " prefix and exactly one trailing newline per line, and is
 * handed to the output one line at a time.  At most LOG_WARN_CAP warnings
 * reach the output; the next one is replaced by a single "further
 * warnings suppressed" line, later ones are only counted.  The log never
 * blocks the program: a line that cannot be written at once (a full pipe
 * or terminal) is lost and counted.  A log file is written only while the
 * fd still is that file (out_id): once the program has closed it, its
 * number is never written to nor closed by us again.
 *
 * Locking: out_lock guards the output's choice (callback, fd, out_id);
 * the callback and write(2) run without it, one call per line, so a
 * blocking host callback never holds up other threads, and a host
 * callback may run in several threads at once.  A thread that logs again
 * from inside the output (recursion) writes to fd 2 directly.  The
 * warning and lost-line counters are atomics.  The settings' source is
 * set once, at load, before any thread logs.  Nothing here allocates, so
 * it is safe on early paths, in hooks and at exit.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"
#include "jobinfo.h"
#include "log.h"
#include "mutex.h"
#include "outfile.h"

#define LOG_LINE_MAX 1024
#define LOG_WARN_CAP 100
#define LOG_PREFIX "cuwarden: "

/* ------------------------------------------------------------------ state */

static cw_mutex_t out_lock = CW_MUTEX_INITIALIZER(LOCK_RANK_LOG);
static cw_output_fn out_fn;       /* NULL = default output */
static void *out_arg;
static int out_fd = -1;           /* default output fd, -1 = not chosen yet */
static bool out_ours;             /* out_fd is the log file we opened */
static outfile_id_t out_id;       /* ... and that file's identity */
static outfile_path_t log_path = OUTFILE_PATH_INIT; /* CUWARDEN_LOG_FILE */
static unsigned warn_count;       /* atomic */
static unsigned long long lost;   /* atomic: lines not written */
static CW_TLS int in_output;      /* this thread is inside the output */
static int (*src_verbose)(void);  /* log_set_source: set at load */
static const char *(*src_file)(void);

/* ---------------------------------------------------------------- output */

bool
log_write_all(int fd, const void *buf, size_t len)
{
	return outfile_write_within(fd, buf, len, 0);
}

bool
log_expand_path(const char *pat, char *out, size_t size)
{
	size_t o = 0;

	if (size == 0)
		return true;
	for (const char *p = pat; *p != '\0'; p++) {
		char num[24], job[130];
		const char *piece = num;
		size_t n;

		if (*p != '%') {
			num[0] = *p;
			num[1] = '\0';
		} else if (p[1] == 'p') {
			fmt_snprintf(num, sizeof(num), "%d", (int)getpid());
			p++;
		} else if (p[1] == '%') {
			piece = "%";
			p++;
		} else if (p[1] != '\0' && jobinfo_expand(p[1], job,
		    sizeof(job))) {
			piece = job;
			p++;
		} else {
			return true;
		}
		n = strlen(piece);
		if (o + n >= size)
			return true;
		memcpy(out + o, piece, n);
		o += n;
	}
	if (o == 0)
		return true;
	out[o] = '\0';
	return false;
}

/* True if pattern has a "%p" escape ("%%p" is a literal "%p"). */
static bool
has_pid(const char *pattern)
{
	for (const char *p = pattern; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		if (p[1] == 'p')
			return true;
		if (p[1] == '\0')
			break;
		p++;
	}
	return false;
}

/* CUWARDEN_LOG_FILE made absolute (once), NULL when unset. */
static const char *
log_pattern(void)
{
	bool first;
	const char *raw = src_file != NULL ? src_file() : NULL;
	const char *path = outfile_path_get(&log_path, raw, &first);

	if (first && log_path.err != 0) {
		in_output++;
		log_printf("warning: CUWARDEN_LOG_FILE=%s: cannot be made "
		    "absolute (errno %d): kept as it is, relative to the "
		    "directory the process is in when it first logs", raw,
		    log_path.err);
		in_output--;
	}
	return path;
}

void
log_set_source(int (*verbose)(void), const char *(*file)(void))
{
	src_verbose = verbose;
	src_file = file;
}

void
log_path_init(void)
{
	(void)log_pattern();
}

/* The default output's fd: CUWARDEN_LOG_FILE if set and openable, else 2.
 * Called with out_lock held. */
static int
default_fd(void)
{
	const char *path, *what;
	char buf[PATH_MAX];
	int fd;

	if (out_fd >= 0) {
		if (!out_ours || outfile_is(out_fd, &out_id))
			return out_fd;
		/* The program closed the log's fd (closefrom, a daemon's
		 * cleanup) and may have reused the number for a file of its
		 * own: never write there, never close it; open the log
		 * file again. */
		out_fd = -1;
		out_ours = false;
	}
	out_fd = STDERR_FILENO;
	path = log_pattern();
	if (path == NULL)
		return out_fd;
	if ((fd = outfile_std_fd(path)) >= 0) {
		out_fd = fd; /* "-", /dev/stderr: the process's own stream */
		return out_fd;
	}
	if (log_expand_path(path, buf, sizeof(buf))) {
		in_output++;
		log_printf("warning: CUWARDEN_LOG_FILE=%s: bad path, "
		    "logging to standard error", path);
		in_output--;
		return out_fd;
	}
	fd = outfile_open_append(buf, &out_id, &what);
	if (fd < 0) {
		int e = errno;

		in_output++;
		if (what != NULL)
			log_printf("warning: CUWARDEN_LOG_FILE=%s is %s (only "
			    "a regular file of this user's or a terminal is "
			    "written): logging to standard error", buf, what);
		else
			log_printf("warning: CUWARDEN_LOG_FILE=%s: cannot open "
			    "(errno %d), logging to standard error", buf, e);
		in_output--;
		return out_fd;
	}
	out_fd = fd;
	out_ours = true;
	return out_fd;
}

int
log_file_fd(void)
{
	int fd = -1;

	if (in_output > 0)
		return -1;
	in_output++;
	cw_mutex_lock(&out_lock);
	if (out_fn == NULL) {
		fd = default_fd();
		if (fd == STDERR_FILENO)
			fd = -1;
	}
	cw_mutex_unlock(&out_lock);
	in_output--;
	return fd;
}

/* Writes one line to the default output without ever waiting.  Our log
 * file's fd is O_NONBLOCK (outfile_open_append): one write, and what does
 * not fit now is lost.  Standard error is the program's: its flags are
 * not ours to change (the file description is shared with the program and
 * its other processes), so a line goes only when poll says there is room
 * (a pipe with room takes a line of LOG_LINE_MAX + 64 < PIPE_BUF bytes
 * whole).  Returns true if the line was lost. */
static bool
write_line(int fd, bool ours, const char *line, size_t len)
{
	if (!ours) {
		struct pollfd pfd = { fd, POLLOUT, 0 };
		int r;

		do
			r = poll(&pfd, 1, 0);
		while (r < 0 && errno == EINTR);
		if (r != 1 || (pfd.revents & (POLLERR | POLLNVAL)))
			return true;
		return log_write_all(fd, line, len);
	}
	while (len > 0) {
		ssize_t n = write(fd, line, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
		line += n;
		len -= (size_t)n;
	}
	return false;
}

/* Hands one line (with its newline) to the output.  The lock only guards
 * reading the output's choice: the callback and write(2) run without it,
 * so a host callback that blocks (on its own lock, Python's GIL) never
 * stalls other threads' logging behind ours.  A line is one write(2), so
 * lines of different threads never interleave within a line (pipes and
 * O_APPEND files). */
static void
emit_line(const char *line, size_t len)
{
	cw_output_fn fn;
	void *arg;
	int fd = STDERR_FILENO;
	bool ours = false;

	if (in_output > 0) {
		/* Logging from inside our own output (a host callback that
		 * calls back into cuwarden): straight to stderr. */
		if (write_line(STDERR_FILENO, false, line, len))
			__atomic_fetch_add(&lost, 1, __ATOMIC_RELAXED);
		return;
	}
	in_output++;
	cw_mutex_lock(&out_lock);
	fn = out_fn;
	arg = out_arg;
	if (fn == NULL) {
		fd = default_fd();
		ours = out_ours;
	}
	cw_mutex_unlock(&out_lock);
	if (fn != NULL)
		fn(line, arg);
	else if (write_line(fd, ours, line, len))
		__atomic_fetch_add(&lost, 1, __ATOMIC_RELAXED);
	in_output--;
}

/* Formats prefix + message into a fixed buffer and emits it line by line:
 * every line gets the prefix, the last one a newline if it lacks one. */
static void
emit(const char *prefix, const char *fmt, va_list ap)
{
	char msg[LOG_LINE_MAX];
	char line[LOG_LINE_MAX + 64];
	int n;
	size_t mlen;
	const char *p;

	n = fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
	mlen = strlen(msg);
	if (n >= (int)sizeof(msg) && mlen >= 3)
		memcpy(msg + mlen - 3, "...", 3);

	p = msg;
	do {
		const char *nl = strchr(p, '\n');
		size_t l = nl != NULL ? (size_t)(nl - p) : strlen(p);
		size_t o;

		o = (size_t)fmt_snprintf(line, sizeof(line), "%s%s",
		    LOG_PREFIX, prefix);
		if (o > sizeof(line) - 2)
			o = sizeof(line) - 2;
		if (l > sizeof(line) - 2 - o)
			l = sizeof(line) - 2 - o;
		memcpy(line + o, p, l);
		o += l;
		line[o++] = '\n';
		line[o] = '\0';
		emit_line(line, o);
		if (nl == NULL || nl[1] == '\0')
			break;
		p = nl + 1;
	} while (*p != '\0');
}

void
log_set_output(cw_output_fn fn, void *arg)
{
	cw_mutex_lock(&out_lock);
	out_fn = fn;
	out_arg = fn != NULL ? arg : NULL;
	cw_mutex_unlock(&out_lock);
}

void
log_printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	unsigned n = __atomic_fetch_add(&warn_count, 1, __ATOMIC_RELAXED);
	va_list ap;

	if (n > LOG_WARN_CAP)
		return;
	if (n == LOG_WARN_CAP) {
		log_printf("warning: %d warnings so far; further warnings "
		    "suppressed", LOG_WARN_CAP);
		return;
	}
	va_start(ap, fmt);
	emit("warning: ", fmt, ap);
	va_end(ap);
}

void
log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("error: ", fmt, ap);
	va_end(ap);
}

void
log_debug(int level, const char *fmt, ...)
{
	va_list ap;

	if (src_verbose == NULL || src_verbose() < level)
		return;
	va_start(ap, fmt);
	emit("debug: ", fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------- internals */

/* Closes the log file if its fd still is that file.  out_lock held. */
static void
close_ours(void)
{
	if (out_ours && outfile_is(out_fd, &out_id))
		close(out_fd);
	out_fd = -1;
	out_ours = false;
}

/* For tests: forget the warning count and the chosen log file. */
void
log_reset(void)
{
	cw_mutex_lock(&out_lock);
	__atomic_store_n(&warn_count, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&lost, 0, __ATOMIC_RELAXED);
	close_ours();
	outfile_path_reset(&log_path);
	cw_mutex_unlock(&out_lock);
}

unsigned
log_warn_count(void)
{
	return __atomic_load_n(&warn_count, __ATOMIC_RELAXED);
}

unsigned long long
log_lost_count(void)
{
	return __atomic_load_n(&lost, __ATOMIC_RELAXED);
}

void
log_prefork(void)
{
	cw_mutex_prefork(&out_lock);
}

void
log_postfork_parent(void)
{
	cw_mutex_postfork_parent(&out_lock);
}

void
log_postfork_child(void)
{
	const char *path;

	cw_mutex_postfork_child(&out_lock);
	in_output = 0;
	outfile_path_postfork_child(&log_path);
	/* A per-process log file ("%p") is the child's own: open it anew
	 * at the child's first message (with the pattern as the parent
	 * resolved it: a file is open, so it was resolved). */
	if (!out_ours)
		return;
	path = outfile_path_get(&log_path, NULL, NULL);
	if (path != NULL && has_pid(path))
		close_ours();
}

void
cw_assert_fail(const char *expr, const char *file, int line)
{
	log_error("assertion failed: %s (%s:%d)", expr, file, line);
	abort();
}
