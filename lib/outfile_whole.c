#include "preamble.h"

/*
 * outfile_whole.c -- a file written whole or not at all: the report's
 * temporary file, its atomic move into place and the signals held off
 * while it is written (outfile.h: outfile_begin, outfile_commit,
 * outfile_abort).
 *
 * Invariants: the temporary file is a dot file of the target's directory,
 * created O_CREAT|O_EXCL|O_NOFOLLOW with mode 0600 and removed on every
 * error path.  The final name appears only when the file is complete
 * (rename or link of a closed temporary file), and it never replaces a
 * file that exists, except this process's own earlier report (rename(2)
 * over it); a name that is taken gives "<path>.<pid>-<starttime>", then
 * a random suffix.  What may be opened in place (a standard stream, a
 * terminal) is decided by outfile.c's checks (outfile_int.h).  No malloc,
 * no stdio: usable at exit and in a signal handler.
 *
 * Locking: none.  The signal mask is the calling thread's, saved in the
 * outfile_t between begin and commit or abort.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "hash.h"
#include "outfile.h"
#include "outfile_int.h"

/* Alternative names tried after "<path>.<pid>-<starttime>". */
#define ALT_TRIES 16

bool outfile_test_no_renameat2;

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

unsigned long long
outfile_start_time(void)
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
	if (fmt_snprintf(of->target, sizeof(of->target), "%s", path) >=
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
		if (outfile_refuse_existing(path, &tty, what))
			goto fail;
		if (tty) {
			of->fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC |
			    O_NONBLOCK | O_NOCTTY);
			if (of->fd < 0)
				goto fail;
			of->stream = true;
			of->close_fd = true;
			if (outfile_refuse_open(of->fd, false, what))
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
			fmt_snprintf(out, size, "standard error");
			break;
		case STDOUT_FILENO:
			fmt_snprintf(out, size, "standard output");
			break;
		default:
			fmt_snprintf(out, size, "%s", of->target);
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
	st = outfile_start_time();
	for (int i = 0; i <= ALT_TRIES; i++) {
		char hex[9];
		int n;

		random_hex(hex, 8);
		if (i == 0)
			n = fmt_snprintf(alt, sizeof(alt), "%s.%d-%llu",
			    of->target, (int)getpid(), st);
		else
			n = fmt_snprintf(alt, sizeof(alt), "%s.%d-%llu-%s",
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
	fmt_snprintf(out, size, "%s", of->target);
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
