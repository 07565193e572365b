#include "preamble.h"

/*
 * outfile.c -- a file cuwarden writes (the report, the log).
 *
 * Owns: the rules by which such a file is named, created, opened and put
 * in place: the names of the standard streams; patterns made absolute
 * once (outfile_path_t); the log's append-only open and its identity
 * check; the report's temporary file and its atomic move into place,
 * with the unique alternative name when the name is taken; the signals
 * held off while a report is written.
 *
 * Invariants: every file created here is created O_CREAT|O_EXCL|O_NOFOLLOW
 * (the log: O_CREAT|O_NOFOLLOW, then checked to be a regular file of ours)
 * with mode 0600.  Nothing is opened that is not a regular file or a
 * terminal, and nothing is opened in a way that can block (a FIFO is seen
 * by lstat and refused unopened; a FIFO swapped in between is opened
 * O_NONBLOCK, which fails or returns at once, and refused by fstat).  A
 * file that exists is never written again, truncated or replaced, except
 * this process's own earlier report (rename(2) over it).  A report's
 * final name appears only when the file is complete (rename or link of a
 * closed temporary file); its temporary file is a dot file of the same
 * directory, removed on every error path.  No malloc, no stdio, no locks:
 * everything here may run at exit and in a signal handler.
 *
 * Locking: none.  outfile_path_t is a three-state atomic (the resolver
 * writes the pattern, then publishes RESOLVED with release order).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"
#include "log.h"
#include "outfile.h"

enum { OUTFILE_UNRESOLVED = 0, OUTFILE_RESOLVING = 1, OUTFILE_RESOLVED = 2 };

/* Waits for another thread's resolution at most this many yields: a
 * resolver that never finishes (it was in another thread of the parent
 * at fork) must not stall us for ever. */
#define RESOLVE_SPINS (1 << 20)

/* Alternative names tried after "<path>.<pid>-<starttime>". */
#define ALT_TRIES 16

bool outfile_test_no_renameat2;

static CW_TLS int resolving_here; /* this thread is resolving a path */

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

bool
outfile_absolute(const char *pat, char *out, size_t size)
{
	char cwd[PATH_MAX];
	size_t o = 0, n = strlen(pat);
	int e;

	if (size == 0) {
		errno = ENAMETOOLONG;
		return true;
	}
	if (pat[0] == '/' || outfile_std_fd(pat) >= 0) {
		if (n >= size) {
			errno = ENAMETOOLONG;
			return true;
		}
		memcpy(out, pat, n + 1);
		return false;
	}
	/* No directory to resolve against (removed, unreachable: an
	 * answer that is no absolute path counts as none). */
	e = getcwd(cwd, sizeof(cwd)) == NULL ? errno : cwd[0] != '/' ? ENOENT :
	    0;
	if (e != 0) {
		if (n < size)
			memcpy(out, pat, n + 1);
		errno = e;
		return true;
	}
	for (const char *c = cwd; *c != '\0'; c++) {
		if (o + 3 > size)
			goto too_long;
		if (*c == '%')
			out[o++] = '%';
		out[o++] = *c;
	}
	if (o > 1 || out[0] != '/')
		out[o++] = '/';
	else
		o = 1; /* the root: "/" + pat */
	if (o + n >= size)
		goto too_long;
	memcpy(out + o, pat, n + 1);
	return false;
too_long:
	if (n < size)
		memcpy(out, pat, n + 1);
	errno = ENAMETOOLONG;
	return true;
}

const char *
outfile_path_get(outfile_path_t *p, const char *raw, bool *first)
{
	int s = __atomic_load_n(&p->state, __ATOMIC_ACQUIRE);

	if (first != NULL)
		*first = false;
	if (likely(s == OUTFILE_RESOLVED))
		return p->value;
	s = OUTFILE_UNRESOLVED;
	if (__atomic_compare_exchange_n(&p->state, &s, OUTFILE_RESOLVING,
	    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		resolving_here++;
		p->err = 0;
		p->value = NULL;
		p->pat[0] = '\0';
		if (raw != NULL) {
			if (outfile_absolute(raw, p->pat, sizeof(p->pat)))
				p->err = errno;
			/* Kept as it is when it could not be resolved (a
			 * pattern that does not even fit as it is cannot
			 * come from options.c, whose strings are shorter). */
			if (p->err == 0 || strcmp(p->pat, raw) == 0)
				p->value = p->pat;
		}
		__atomic_store_n(&p->state, OUTFILE_RESOLVED,
		    __ATOMIC_RELEASE);
		resolving_here--;
		if (first != NULL)
			*first = true;
		return p->value;
	}
	/* Another resolver: this thread (from a signal handler that
	 * interrupted it) cannot wait for itself; another thread is done
	 * in microseconds. */
	if (resolving_here > 0)
		return raw;
	for (long i = 0; i < RESOLVE_SPINS; i++) {
		if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) ==
		    OUTFILE_RESOLVED)
			return p->value;
		sched_yield();
	}
	return raw;
}

void
outfile_path_reset(outfile_path_t *p)
{
	__atomic_store_n(&p->state, OUTFILE_UNRESOLVED, __ATOMIC_RELEASE);
}

void
outfile_path_postfork_child(outfile_path_t *p)
{
	int s = OUTFILE_RESOLVING;

	/* The thread that was resolving is not in the child. */
	(void)__atomic_compare_exchange_n(&p->state, &s, OUTFILE_UNRESOLVED,
	    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	resolving_here = 0;
}

const char *
outfile_describe(mode_t mode)
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

/* What lstat finds at path, before anything is opened.  Returns true if
 * it must not be opened (errno and *what set); *tty says it is a
 * terminal. */
static bool
refuse_existing(const char *path, bool *tty, const char **what)
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
	*what = outfile_describe(st.st_mode);
	errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	return true;
}

/* After open: is fd what we may write to?  Returns true if not (errno
 * and *what set). */
static bool
refuse_open(int fd, bool must_be_ours, const char **what)
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
	*what = outfile_describe(st.st_mode);
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
	if (refuse_existing(path, &tty, what))
		return -1;
	fd = open(path, fl, 0600);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			*what = "a symbolic link";
		errno = e;
		return -1;
	}
	if (refuse_open(fd, true, what) || fstat(fd, &st) != 0) {
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
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			struct pollfd pfd = { fd, POLLOUT, 0 };
			int r;

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return true;
			do
				r = poll(&pfd, 1, OUTFILE_WAIT_MS);
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

/* ------------------------------------------------------------ a report */

/* Hex digits of random bytes (getrandom; if that fails, the time, the pid
 * and a counter: unique enough for names tried with O_EXCL). */
static void
random_hex(char *out, size_t ndigits)
{
	static unsigned counter; /* atomic */
	unsigned char b[16];
	size_t nb = (ndigits + 1) / 2;

	if (nb > sizeof(b))
		nb = sizeof(b);
	if (getrandom(b, nb, GRND_NONBLOCK) != (ssize_t)nb) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
		    ((uint64_t)getpid() << 40) ^
		    (uint64_t)__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED)
		    * HASH_GOLDEN;
		for (size_t i = 0; i < nb; i++) { /* splitmix64 */
			x += HASH_GOLDEN;
			b[i] = (unsigned char)(hash_mix64(x) >> 56);
		}
	}
	for (size_t i = 0; i < ndigits && i / 2 < nb; i++)
		out[i] = "0123456789abcdef"[(b[i / 2] >> (i % 2 ? 0 : 4)) & 15];
	out[ndigits] = '\0';
}

/* This process's start time (field 22 of /proc/self/stat, clock ticks
 * since boot): with the pid, it names one process for the machine's
 * uptime.  0 when unreadable. */
static unsigned long long
start_time(void)
{
	char buf[1024];
	unsigned long long v = 0;
	const char *p;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The command name may hold spaces and ')': the fields start
	 * after the last ')'.  State is field 3; start time 22. */
	p = strrchr(buf, ')');
	if (p == NULL)
		return 0;
	for (int field = 2; field < 22 && *p != '\0'; p++)
		if (*p == ' ')
			field++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (unsigned long long)(*p++ - '0');
	return v;
}

/* Where the signals that may arrive twice (timeout(1) signals the whole
 * process group; cuwarden-audit forwards SIGTERM) must wait. */
static void
block_signals(outfile_t *of)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE,
		SIGUSR1, SIGUSR2 };
	sigset_t set, pend;

	sigemptyset(&set);
	for (size_t i = 0; i < CW_ARRAY_SIZE(sigs); i++)
		sigaddset(&set, sigs[i]);
	pthread_sigmask(SIG_BLOCK, &set, &of->saved);
	of->pipe_pending = sigpending(&pend) == 0 &&
	    sigismember(&pend, SIGPIPE) == 1;
}

static void
restore_signals(outfile_t *of)
{
	sigset_t pend;

	/* A write to a closed pipe (a reader of standard error gone) made
	 * a SIGPIPE for this thread while it was held: the write failed and
	 * says so; the signal, which the program's own write would not have
	 * caused, is taken here rather than kill the program.  One that was
	 * pending before is left to the program. */
	if (!of->pipe_pending && sigpending(&pend) == 0 &&
	    sigismember(&pend, SIGPIPE) == 1 &&
	    !sigismember(&of->saved, SIGPIPE)) {
		static const struct timespec zero = { 0, 0 };
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, SIGPIPE);
		(void)sigtimedwait(&one, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &of->saved, NULL);
}

/* "<dir>/.<name>.<16 hex digits>" beside path.  Returns true on error. */
static bool
temp_name(const char *path, char *out, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash != NULL ? (size_t)(slash - path) + 1 : 0;
	size_t nlen = strlen(path + dlen);
	char hex[17];

	/* Within NAME_MAX: ".", the name (cut if need be), ".", 16 digits. */
	if (nlen > NAME_MAX - 18)
		nlen = NAME_MAX - 18;
	if (dlen + 1 + nlen + 1 + 16 >= size) {
		errno = ENAMETOOLONG;
		return true;
	}
	random_hex(hex, 16);
	memcpy(out, path, dlen);
	out[dlen] = '.';
	memcpy(out + dlen + 1, path + dlen, nlen);
	out[dlen + 1 + nlen] = '.';
	memcpy(out + dlen + 2 + nlen, hex, 17);
	return false;
}

bool
outfile_begin(outfile_t *of, const char *path, bool replace,
    const char **what)
{
	const int fl = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	bool tty;
	int std = outfile_std_fd(path), e;

	*what = NULL;
	memset(of, 0, sizeof(*of));
	of->fd = -1;
	of->replace = replace;
	if (log_snprintf(of->target, sizeof(of->target), "%s", path) >=
	    (int)sizeof(of->target)) {
		errno = ENAMETOOLONG;
		return true;
	}
	block_signals(of);
	if (std >= 0) {
		/* The process's own stream, whatever it is (a terminal, a
		 * pipe, a file): written in place, no name to take. */
		of->fd = std;
		of->stream = true;
		return false;
	}
	if (!replace) {
		if (refuse_existing(path, &tty, what))
			goto fail;
		if (tty) {
			of->fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC |
			    O_NONBLOCK | O_NOCTTY);
			if (of->fd < 0)
				goto fail;
			of->stream = true;
			of->close_fd = true;
			if (refuse_open(of->fd, false, what))
				goto fail;
			return false;
		}
	}
	for (int i = 0; i < ALT_TRIES; i++) {
		if (temp_name(path, of->tmp, sizeof(of->tmp)))
			goto fail;
		of->fd = open(of->tmp, fl, 0600);
		if (of->fd >= 0 || errno != EEXIST)
			break;
	}
	if (of->fd < 0) {
		of->tmp[0] = '\0';
		goto fail;
	}
	of->close_fd = true;
	return false;
fail:
	e = errno;
	outfile_abort(of);
	errno = e;
	return true;
}

/* Moves tmp to `to` only if `to` is free.  Returns true on error. */
static bool
move_noreplace(const char *tmp, const char *to)
{
	if (!outfile_test_no_renameat2) {
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, to,
		    RENAME_NOREPLACE) == 0)
			return false;
		/* EINVAL: a filesystem without RENAME_NOREPLACE; ENOSYS: a
		 * kernel or a seccomp filter without renameat2. */
		if (errno != EINVAL && errno != ENOSYS)
			return true;
	}
	/* link(2) never replaces either (EEXIST), and the file is complete
	 * before it gets the name. */
	if (link(tmp, to) != 0)
		return true;
	(void)unlink(tmp);
	return false;
}

bool
outfile_commit(outfile_t *of, char *out, size_t size)
{
	char alt[PATH_MAX];
	unsigned long long st;
	int e;

	if (of->stream) {
		e = 0;
		if (of->close_fd && close(of->fd) != 0)
			e = errno;
		of->fd = -1;
		restore_signals(of);
		switch (outfile_std_fd(of->target)) {
		case STDERR_FILENO:
			log_snprintf(out, size, "standard error");
			break;
		case STDOUT_FILENO:
			log_snprintf(out, size, "standard output");
			break;
		default:
			log_snprintf(out, size, "%s", of->target);
			break;
		}
		errno = e;
		return e != 0;
	}
	e = close(of->fd) != 0 ? errno : 0;
	of->fd = -1;
	if (e != 0)
		goto fail;
	if (of->replace) {
		if (rename(of->tmp, of->target) != 0) {
			e = errno;
			goto fail;
		}
		goto done;
	}
	if (!move_noreplace(of->tmp, of->target))
		goto done;
	if (errno != EEXIST) {
		e = errno;
		goto fail;
	}
	/* The name is taken (another process's report, one planted there,
	 * an earlier process with this pid): a name of this process's own. */
	st = start_time();
	for (int i = 0; i <= ALT_TRIES; i++) {
		char hex[9];
		int n;

		random_hex(hex, 8);
		if (i == 0)
			n = log_snprintf(alt, sizeof(alt), "%s.%d-%llu",
			    of->target, (int)getpid(), st);
		else
			n = log_snprintf(alt, sizeof(alt), "%s.%d-%llu-%s",
			    of->target, (int)getpid(), st, hex);
		if (n >= (int)sizeof(alt)) {
			e = ENAMETOOLONG;
			goto fail;
		}
		if (!move_noreplace(of->tmp, alt)) {
			memcpy(of->target, alt, (size_t)n + 1);
			goto done;
		}
		e = errno;
		if (e != EEXIST)
			goto fail;
	}
	goto fail;
done:
	of->tmp[0] = '\0';
	restore_signals(of);
	log_snprintf(out, size, "%s", of->target);
	return false;
fail:
	outfile_abort(of);
	errno = e;
	return true;
}

void
outfile_abort(outfile_t *of)
{
	int e = errno;

	if (of->close_fd && of->fd >= 0)
		close(of->fd);
	of->fd = -1;
	of->close_fd = false;
	if (of->tmp[0] != '\0')
		(void)unlink(of->tmp);
	of->tmp[0] = '\0';
	restore_signals(of);
	errno = e;
}
