/*
 * util.c -- small helpers of cuwarden-audit: allocation that never fails
 * (the tool exits on out-of-memory: it is a short-lived command, not a
 * library), number formatting and parsing, paths, diagnostics, text
 * from outside (UTF-8 for JSON, escapes for text), and the only ways the
 * tool opens files: input_open() for what it reads, out_open() for what
 * it writes.
 *
 * Files read (reports, suppressions, baselines, modules) come from a
 * report or the command line, so a path may name a FIFO (an open would
 * block for ever), a device or a directory: only regular files are read,
 * opened non-blocking and checked with fstat after the open, and of a
 * bounded size.
 *
 * Files written may be in a directory another user can write to: a name
 * there may be a link planted to make us overwrite something else.  A
 * file is never written through its name: a new file is created beside
 * it (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600) and renamed over the name
 * once complete, which replaces a planted link rather than following it
 * and leaves an earlier output whole until the new one is.  Character
 * devices (/dev/null, /dev/full, a terminal: no other user can make one)
 * and a link to the tool's own standard output or error are written in
 * place; a directory, a FIFO or a socket at the name is refused.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"

static void
oom(void)
{
	fputs(AU_PROG ": error: out of memory\n", stderr);
	exit(AU_EXIT_AUDIT_FAILED);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		oom();
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");

	if (p == NULL)
		oom();
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	return s;
}

const char *
fmt_commas(uint64_t v, char *buf, size_t size)
{
	char tmp[32];
	size_t len, i, o = 0;

	len = (size_t)snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	for (i = 0; i < len && o + 1 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0 && o + 2 < size)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

const char *
base_name(const char *path)
{
	const char *s;

	if (path == NULL)
		return "";
	s = strrchr(path, '/');
	return s ? s + 1 : path;
}

bool
parse_size(const char *s, unsigned long long *out)
{
	unsigned long long v, mul = 1;
	char *end;

	if (s == NULL || *s == '\0' || *s == '-')
		return true;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return true;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		mul = 1ULL << 10;
		end++;
		break;
	case 'm': case 'M':
		mul = 1ULL << 20;
		end++;
		break;
	case 'g': case 'G':
		mul = 1ULL << 30;
		end++;
		break;
	case 't': case 'T':
		mul = 1ULL << 40;
		end++;
		break;
	default:
		return true;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end != '\0')
		return true;
	if (v > ULLONG_MAX / mul)
		return true;
	*out = v * mul;
	return false;
}

bool
parse_long(const char *s, long min, long max, long *out)
{
	long v;
	char *end;

	if (s == NULL || *s == '\0')
		return true;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return true;
	*out = v;
	return false;
}

char *
path_under_cwd(const char *path)
{
	char cwd[PATH_MAX];
	size_t n;

	if (path == NULL || path[0] != '/')
		return NULL;
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return NULL;
	n = strlen(cwd);
	if (n == 1) /* "/" */
		return xstrdup(path + 1);
	if (strncmp(path, cwd, n) != 0 || path[n] != '/')
		return NULL;
	return xstrdup(path + n + 1);
}

/* One diagnostic line.  Its arguments are often names from a report
 * (a format, a member, a path): the whole message is escaped, so that it
 * stays one line and no escape sequence reaches the terminal. */
static void
diag(const char *what, const char *fmt, va_list ap)
{
	char *msg, *esc;

	if (vasprintf(&msg, fmt, ap) < 0)
		oom();
	esc = text_escape(msg);
	fprintf(stderr, AU_PROG ": %s: %s\n", what, esc);
	free(esc);
	free(msg);
}

void
au_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag("error", fmt, ap);
	va_end(ap);
}

void
au_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag("warning", fmt, ap);
	va_end(ap);
}

const char *
json_str(const json_t *o, const char *key, const char *dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

long long
json_int(const json_t *o, const char *key, long long dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

/* ------------------------------------------------------------ numbers */

uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t
sat_mul(uint64_t a, uint64_t b)
{
	return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

const char *
fmt_sum(uint64_t v, const char *unit, bool commas, char *buf, size_t size)
{
	char num[32];

	if (commas)
		fmt_commas(v, num, sizeof(num));
	else
		snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	if (v == UINT64_MAX)
		snprintf(buf, size, "at least %s %s (the sum overflowed)", num,
		    unit);
	else
		snprintf(buf, size, "%s %s", num, unit);
	return buf;
}

json_t *
json_count(uint64_t v)
{
	return json_integer(v > (uint64_t)AU_JSON_INT_MAX ? AU_JSON_INT_MAX :
	    (json_int_t)v);
}

/* ------------------------------------------------------------ text */

size_t
utf8_seq(const unsigned char *s)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 ||
	    cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

json_t *
json_utf8(const char *s)
{
	const unsigned char *p;
	json_t *j;
	char *buf;
	size_t o = 0;

	if (s == NULL)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	/* Not UTF-8 (json_string refuses it): each byte that does not
	 * start a valid sequence becomes U+FFFD, as doc/report-schema.md
	 * says of the shim's strings. */
	buf = xmalloc(3 * strlen(s) + 1);
	for (p = (const unsigned char *)s; *p != '\0';) {
		size_t n = utf8_seq(p);

		if (n == 0) {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
			continue;
		}
		memcpy(buf + o, p, n);
		o += n;
		p += n;
	}
	buf[o] = '\0';
	j = json_string(buf);
	free(buf);
	return j != NULL ? j : json_string("");
}

char *
text_escape(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char *out = xmalloc(4 * strlen((const char *)p) + 1);
	size_t o = 0;

	while (*p != '\0') {
		size_t n = utf8_seq(p);
		unsigned c = *p;

		if (n == 0) {
			o += (size_t)sprintf(out + o, "\\x%02x", c);
			p++;
			continue;
		}
		if (n == 2 && c == 0xc2 && p[1] < 0xa0) {
			/* U+0080..U+009F, the C1 controls (CSI among them) */
			o += (size_t)sprintf(out + o, "\\u%04x", p[1]);
		} else if (n > 1) {
			memcpy(out + o, p, n);
			o += n;
		} else if (c == '\n' || c == '\t' || c == '\r' || c == '\\') {
			out[o++] = '\\';
			out[o++] = c == '\n' ? 'n' : c == '\t' ? 't' :
			    c == '\r' ? 'r' : '\\';
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)sprintf(out + o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
		p += n;
	}
	out[o] = '\0';
	return out;
}

/* ------------------------------------------------------------ files read */

const char *
file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "is a directory";
	if (S_ISFIFO(mode))
		return "is a FIFO";
	if (S_ISCHR(mode))
		return "is a character device";
	if (S_ISBLK(mode))
		return "is a block device";
	if (S_ISSOCK(mode))
		return "is a socket";
	if (S_ISLNK(mode))
		return "is a symbolic link";
	return "is not a regular file";
}

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

/* ------------------------------------------------------------ files written */

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
		    strndup(path, (size_t)(slash - path));
		if (dir == NULL)
			oom();
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
out_check(const char *path, char *err, size_t errsize)
{
	out_how_t how;
	char *name;
	int dirfd;
	bool bad;

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

bool
out_same(const char *a, const char *b)
{
	struct stat sa, sb;
	char *na, *nb, err[16];
	int da, db;
	bool same = false;

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
