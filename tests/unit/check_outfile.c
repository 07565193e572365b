/*
 * check_outfile.c -- a file cuwarden writes: the names of the standard
 * streams; patterns made absolute once (a '%' in the directory kept
 * literal; no directory: kept, with the error); the log's open (created
 * 0600, appended to, a FIFO, a directory, a link, a device and another
 * user's file refused without blocking) and its identity check (a closed
 * and reused fd is no longer ours); a report written whole (a dot file
 * until commit, never over an existing name: "<path>.<pid>-<starttime>",
 * then a random suffix; link + unlink where renameat2 cannot; its own
 * earlier file replaced by rename), the signals held while it is written
 * (SIGALRM not), and a SIGPIPE from a closed standard error not killing
 * the writer.
 */
#include "preamble.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "outfile.h"
#include "unit.h"

/* ------------------------------------------------------------- helpers */

/* A fresh directory of this test (each test runs in its own process). */
static const char *
tmpdir(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/cw-check-outfile-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

static void
rmtree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Entries of dir whose names start with prefix ("." for dot files). */
static int
count_prefix(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0
		    && strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

static void
spit(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	chmod(path, mode);
}

/* Whatever blocks here ends the test (a FIFO opened blocking). */
static void
guard(void)
{
	signal(SIGALRM, SIG_DFL);
	alarm(10);
}

/* ------------------------------------------------------------- names */

START_TEST(test_outfile_std_names)
{
	ck_assert_int_eq(outfile_std_fd("-"), 2);
	ck_assert_int_eq(outfile_std_fd("/dev/stderr"), 2);
	ck_assert_int_eq(outfile_std_fd("/dev/fd/2"), 2);
	ck_assert_int_eq(outfile_std_fd("/proc/self/fd/2"), 2);
	ck_assert_int_eq(outfile_std_fd("/dev/stdout"), 1);
	ck_assert_int_eq(outfile_std_fd("/dev/fd/1"), 1);
	ck_assert_int_eq(outfile_std_fd("/dev/stderr.1"), -1);
	ck_assert_int_eq(outfile_std_fd("./-"), -1);
	ck_assert_int_eq(outfile_std_fd("/dev/fd/3"), -1);
	ck_assert_int_eq(outfile_std_fd(NULL), -1);
}
END_TEST

START_TEST(test_outfile_absolute)
{
	const char *dir = tmpdir();
	char sub[PATH_MAX], out[OUTFILE_PATTERN_MAX], want[PATH_MAX * 2],
	    exp[PATH_MAX];

	ck_assert(!outfile_absolute("/abs/r.%p.json", out, sizeof(out)));
	ck_assert_str_eq(out, "/abs/r.%p.json");
	ck_assert(!outfile_absolute("-", out, sizeof(out)));
	ck_assert_str_eq(out, "-");

	/* A directory with a '%' in its name: doubled, so that the
	 * expansion gives the directory back. */
	snprintf(sub, sizeof(sub), "%s/100%%p done", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(chdir(sub), 0);
	ck_assert(!outfile_absolute("r.%p.json", out, sizeof(out)));
	snprintf(want, sizeof(want), "%s/100%%%%p done/r.%%p.json", dir);
	ck_assert_str_eq(out, want);
	ck_assert(!log_expand_path(out, exp, sizeof(exp)));
	snprintf(want, sizeof(want), "%s/r.%d.json", sub, (int)getpid());
	ck_assert_str_eq(exp, want);

	/* No directory any more: kept as it is, with the error. */
	ck_assert_int_eq(rmdir(sub), 0);
	errno = 0;
	ck_assert(outfile_absolute("r.json", out, sizeof(out)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(out, "r.json");

	/* Too long for out. */
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert(outfile_absolute("r.json", out, 8));
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ck_assert_int_eq(chdir("/"), 0);
	ck_assert(!outfile_absolute("r.json", out, sizeof(out)));
	ck_assert_str_eq(out, "/r.json");
	rmtree(dir);
}
END_TEST

/* Resolved once: a later chdir changes nothing; a missing directory keeps
 * the pattern relative and says why, once. */
START_TEST(test_outfile_path_once)
{
	static outfile_path_t p = OUTFILE_PATH_INIT;
	const char *dir = tmpdir();
	char want[PATH_MAX], sub[PATH_MAX];
	const char *got;
	bool first;

	ck_assert_int_eq(chdir(dir), 0);
	got = outfile_path_get(&p, "r.%p.json", &first);
	ck_assert(first);
	snprintf(want, sizeof(want), "%s/r.%%p.json", dir);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(chdir("/"), 0);
	got = outfile_path_get(&p, "r.%p.json", &first);
	ck_assert(!first);
	ck_assert_str_eq(got, want);
	/* The raw value is read only the first time. */
	ck_assert_str_eq(outfile_path_get(&p, "other", NULL), want);

	outfile_path_reset(&p);
	ck_assert_ptr_null(outfile_path_get(&p, NULL, &first));
	ck_assert(first);
	ck_assert_int_eq(p.err, 0);

	snprintf(sub, sizeof(sub), "%s/gone", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(chdir(sub), 0);
	ck_assert_int_eq(rmdir(sub), 0);
	outfile_path_reset(&p);
	got = outfile_path_get(&p, "r.json", &first);
	ck_assert(first);
	ck_assert_str_eq(got, "r.json");
	ck_assert_int_eq(p.err, ENOENT);
	ck_assert_int_eq(chdir("/"), 0);
	rmtree(dir);
}
END_TEST

/* ------------------------------------------------------------- the log */

START_TEST(test_outfile_append)
{
	const char *dir = tmpdir(), *what;
	char path[PATH_MAX], buf[256];
	outfile_id_t id;
	struct stat st;
	int fd;

	guard();
	/* Created 0600, O_APPEND and O_NONBLOCK, appended to. */
	snprintf(path, sizeof(path), "%s/log", dir);
	fd = outfile_open_append(path, &id, &what);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert(fcntl(fd, F_GETFL) & O_NONBLOCK);
	ck_assert(fcntl(fd, F_GETFL) & O_APPEND);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	ck_assert_int_eq(write(fd, "one\n", 4), 4);
	close(fd);
	fd = outfile_open_append(path, &id, &what);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "two\n", 4), 4);
	ck_assert(outfile_is(fd, &id));
	close(fd);
	unit_read_text(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "one\ntwo\n");

	/* A FIFO (with no reader: an open for writing would wait for
	 * one), a directory, a symbolic link, a device other than a
	 * terminal: refused, named. */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_lt(outfile_open_append(path, &id, &what), 0);
	ck_assert_str_eq(what, "a FIFO");
	ck_assert_int_lt(outfile_open_append(dir, &id, &what), 0);
	ck_assert_str_eq(what, "a directory");
	ck_assert_int_eq(errno, EISDIR);
	snprintf(buf, sizeof(buf), "%s/link", dir);
	snprintf(path, sizeof(path), "%s/log", dir);
	ck_assert_int_eq(symlink(path, buf), 0);
	ck_assert_int_lt(outfile_open_append(buf, &id, &what), 0);
	ck_assert_int_eq(errno, ELOOP);
	ck_assert_str_eq(what, "a symbolic link");
	ck_assert_int_lt(outfile_open_append("/dev/null", &id, &what), 0);
	ck_assert_str_eq(what, "a character device other than a terminal");

	/* Another user's file (root can make one): refused, not written. */
	if (geteuid() == 0) {
		snprintf(path, sizeof(path), "%s/theirs", dir);
		spit(path, "", 0666);
		ck_assert_int_eq(chown(path, 65534, 65534), 0);
		ck_assert_int_lt(outfile_open_append(path, &id, &what), 0);
		ck_assert_str_eq(what, "a file owned by another user");
		ck_assert_int_eq(errno, EPERM);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_int_eq(st.st_size, 0);
	}
	rmtree(dir);
}
END_TEST

/* The program closes the fd and reuses its number: not ours any more. */
START_TEST(test_outfile_identity)
{
	const char *dir = tmpdir(), *what;
	char path[PATH_MAX], other[PATH_MAX];
	outfile_id_t id;
	int fd, o;

	snprintf(path, sizeof(path), "%s/log", dir);
	snprintf(other, sizeof(other), "%s/data", dir);
	fd = outfile_open_append(path, &id, &what);
	ck_assert_int_ge(fd, 0);
	ck_assert(outfile_is(fd, &id));
	close(fd);
	ck_assert(!outfile_is(fd, &id)); /* EBADF */
	o = open(other, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(o, fd);          /* the number reused */
	ck_assert(!outfile_is(fd, &id));
	ck_assert(!outfile_is(-1, &id));
	close(o);
	rmtree(dir);
}
END_TEST

/* ------------------------------------------------------------- a report */

START_TEST(test_outfile_whole)
{
	const char *dir = tmpdir(), *what;
	char path[PATH_MAX], out[PATH_MAX], buf[256];
	outfile_t of;
	struct stat st;

	snprintf(path, sizeof(path), "%s/report.json", dir);
	ck_assert(!outfile_begin(&of, path, false, &what));
	ck_assert(!of.stream);
	ck_assert_int_ge(of.fd, 0);
	ck_assert_int_eq(write(of.fd, "{\"half", 6), 6);
	/* Until commit a reader sees no report, only a dot file. */
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_eq(count_prefix(dir, "."), 1);
	ck_assert_int_eq(count_prefix(dir, ".report.json."), 1);
	ck_assert_int_eq(write(of.fd, "\": 1}\n", 6), 6);
	ck_assert(!outfile_commit(&of, out, sizeof(out)));
	ck_assert_str_eq(out, path);
	unit_read_text(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "{\"half\": 1}\n");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(count_prefix(dir, "."), 0);

	/* Given up: nothing left at all. */
	snprintf(path, sizeof(path), "%s/abandoned.json", dir);
	ck_assert(!outfile_begin(&of, path, false, &what));
	ck_assert_int_eq(write(of.fd, "{", 1), 1);
	outfile_abort(&of);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_eq(count_prefix(dir, "."), 0);
	ck_assert_int_eq(count_prefix(dir, "abandoned"), 0);

	/* No such directory: an error, nothing made. */
	snprintf(path, sizeof(path), "%s/none/r.json", dir);
	ck_assert(outfile_begin(&of, path, false, &what));
	ck_assert_int_eq(errno, ENOENT);
	rmtree(dir);
}
END_TEST

/* A name that is taken is never written: "<path>.<pid>-<starttime>", then
 * a random suffix; with and without renameat2. */
static void
noreplace_case(bool no_renameat2)
{
	const char *dir = tmpdir(), *what;
	char path[PATH_MAX], out[PATH_MAX], out2[PATH_MAX], buf[256],
	    prefix[64];
	outfile_t of;
	struct stat st;

	outfile_test_no_renameat2 = no_renameat2;
	snprintf(path, sizeof(path), "%s/r.json", dir);
	spit(path, "someone else's", 0666);
	ck_assert(!outfile_begin(&of, path, false, &what));
	ck_assert_int_eq(write(of.fd, "mine", 4), 4);
	ck_assert(!outfile_commit(&of, out, sizeof(out)));
	unit_read_text(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "someone else's");
	snprintf(prefix, sizeof(prefix), "r.json.%d-", (int)getpid());
	ck_assert_msg(strncmp(out + strlen(dir) + 1, prefix,
	    strlen(prefix)) == 0, "%s", out);
	unit_read_text(out, buf, sizeof(buf));
	ck_assert_str_eq(buf, "mine");
	ck_assert_int_eq(stat(out, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);

	/* Again: that name is taken too; a random one, the others kept. */
	ck_assert(!outfile_begin(&of, path, false, &what));
	ck_assert_int_eq(write(of.fd, "again", 5), 5);
	ck_assert(!outfile_commit(&of, out2, sizeof(out2)));
	ck_assert_str_ne(out, out2);
	ck_assert_int_eq(strncmp(out2, out, strlen(out)), 0);
	ck_assert_int_eq(out2[strlen(out)], '-');
	unit_read_text(out, buf, sizeof(buf));
	ck_assert_str_eq(buf, "mine");
	unit_read_text(out2, buf, sizeof(buf));
	ck_assert_str_eq(buf, "again");

	/* A symbolic link counts as taken: its target is not written. */
	snprintf(out2, sizeof(out2), "%s/l.json", dir);
	ck_assert_int_eq(symlink(path, out2), 0);
	ck_assert(!outfile_begin(&of, out2, false, &what));
	ck_assert_int_eq(write(of.fd, "x", 1), 1);
	ck_assert(!outfile_commit(&of, out, sizeof(out)));
	ck_assert_str_ne(out, out2);
	unit_read_text(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "someone else's");
	ck_assert_int_eq(count_prefix(dir, "."), 0);
	outfile_test_no_renameat2 = false;
	rmtree(dir);
}

START_TEST(test_outfile_noreplace)
{
	noreplace_case(false);
}
END_TEST

START_TEST(test_outfile_noreplace_link)
{
	noreplace_case(true);
}
END_TEST

/* Its own earlier file is replaced by rename: a new inode, never a file
 * truncated under a reader. */
START_TEST(test_outfile_replace)
{
	const char *dir = tmpdir(), *what;
	char path[PATH_MAX], out[PATH_MAX], buf[256];
	struct stat a, b;
	outfile_t of;

	snprintf(path, sizeof(path), "%s/r.json", dir);
	spit(path, "first", 0600);
	ck_assert_int_eq(stat(path, &a), 0);
	ck_assert(!outfile_begin(&of, path, true, &what));
	ck_assert_int_eq(write(of.fd, "second", 6), 6);
	unit_read_text(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "first"); /* untouched until commit */
	ck_assert(!outfile_commit(&of, out, sizeof(out)));
	ck_assert_str_eq(out, path);
	ck_assert_int_eq(stat(path, &b), 0);
	ck_assert_uint_ne(a.st_ino, b.st_ino);
	unit_read_text(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "second");
	ck_assert_int_eq(count_prefix(dir, "."), 0);
	ck_assert_int_eq(count_prefix(dir, "r.json."), 0);
	rmtree(dir);
}
END_TEST

/* Not regular: a FIFO is refused unopened (a blocking open would wait
 * for a reader for ever), so is a directory or a device; the standard
 * streams' names are written in place. */
START_TEST(test_outfile_not_regular)
{
	const char *dir = tmpdir(), *what;
	char path[PATH_MAX], out[PATH_MAX], buf[256];
	outfile_t of;
	int fd;

	guard();
	snprintf(path, sizeof(path), "%s/r.fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert(outfile_begin(&of, path, false, &what));
	ck_assert_str_eq(what, "a FIFO");
	ck_assert(outfile_begin(&of, dir, false, &what));
	ck_assert_str_eq(what, "a directory");
	ck_assert(outfile_begin(&of, "/dev/null", false, &what));
	ck_assert_str_eq(what, "a character device other than a terminal");
	ck_assert_int_eq(count_prefix(dir, "."), 0);

	/* "-": fd 2, here a file standing in for standard error. */
	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(dup2(fd, 2), 0);
	close(fd);
	ck_assert(!outfile_begin(&of, "-", false, &what));
	ck_assert(of.stream);
	ck_assert_int_eq(of.fd, 2);
	ck_assert_int_eq(write(of.fd, "report\n", 7), 7);
	ck_assert(!outfile_commit(&of, out, sizeof(out)));
	ck_assert_str_eq(out, "standard error");
	ck_assert(!outfile_begin(&of, "/dev/stderr", false, &what));
	ck_assert_int_eq(of.fd, 2);
	ck_assert(!outfile_commit(&of, out, sizeof(out)));
	ck_assert_int_eq(fcntl(2, F_GETFD), 0); /* still open */
	unit_read_text(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "report\n");
	ck_assert_int_ne(access("/dev/stderr.1", F_OK), 0);
	rmtree(dir);
}
END_TEST

static bool
blocked(int sig)
{
	sigset_t cur;

	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, NULL, &cur), 0);
	return sigismember(&cur, sig) == 1;
}

/* While a report is written a second SIGTERM (timeout(1), the tool's
 * forwarding) waits; SIGALRM, the watchdog's, does not. */
START_TEST(test_outfile_signals)
{
	static const int held[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE,
		SIGUSR1, SIGUSR2 };
	const char *dir = tmpdir(), *what;
	char path[PATH_MAX], out[PATH_MAX];
	outfile_t of;

	snprintf(path, sizeof(path), "%s/r.json", dir);
	for (size_t i = 0; i < CW_ARRAY_SIZE(held); i++)
		ck_assert(!blocked(held[i]));
	ck_assert(!outfile_begin(&of, path, false, &what));
	for (size_t i = 0; i < CW_ARRAY_SIZE(held); i++)
		ck_assert_msg(blocked(held[i]), "signal %d not held", held[i]);
	ck_assert(!blocked(SIGALRM));
	/* A SIGTERM now is taken after the file is in place. */
	ck_assert_int_eq(write(of.fd, "whole", 5), 5);
	ck_assert(!outfile_commit(&of, out, sizeof(out)));
	for (size_t i = 0; i < CW_ARRAY_SIZE(held); i++)
		ck_assert(!blocked(held[i]));
	/* Restored after a failure too. */
	snprintf(path, sizeof(path), "%s/none/r.json", dir);
	ck_assert(outfile_begin(&of, path, false, &what));
	ck_assert(!blocked(SIGTERM));
	ck_assert(!outfile_begin(&of, "-", false, &what));
	outfile_abort(&of);
	ck_assert(!blocked(SIGTERM));

	/* SIGTERM sent during the write: the file is whole, then the
	 * process dies of it. */
	{
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			char tmp[PATH_MAX];

			/* (check's own handler forwards it to the group) */
			signal(SIGTERM, SIG_DFL);
			snprintf(tmp, sizeof(tmp), "%s/t.json", dir);
			if (outfile_begin(&of, tmp, false, &what))
				_exit(2);
			kill(getpid(), SIGTERM);
			if (write(of.fd, "whole\n", 6) != 6 ||
			    outfile_commit(&of, out, sizeof(out)))
				_exit(3);
			_exit(0);
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
		snprintf(path, sizeof(path), "%s/t.json", dir);
		{
			char buf[64];

			unit_read_text(path, buf, sizeof(buf));
			ck_assert_str_eq(buf, "whole\n");
		}
	}
	rmtree(dir);
}
END_TEST

/* Standard error is a pipe whose reader is gone: the write fails (EPIPE),
 * the SIGPIPE it made does not kill the writer. */
START_TEST(test_outfile_sigpipe)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		const char *what;
		char out[PATH_MAX];
		int p[2];
		outfile_t of;
		bool failed;

		signal(SIGPIPE, SIG_DFL);
		if (pipe(p) != 0 || dup2(p[1], 2) < 0)
			_exit(2);
		close(p[0]);
		if (outfile_begin(&of, "-", false, &what))
			_exit(3);
		failed = outfile_write_all(of.fd, "x\n", 2) && errno == EPIPE;
		(void)outfile_commit(&of, out, sizeof(out));
		_exit(failed ? 0 : 4);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "status 0x%x", st);
}
END_TEST

static Suite *
make_outfile_suite(void)
{
	Suite *s = suite_create("outfile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_outfile_std_names);
	tcase_add_test(tc, test_outfile_absolute);
	tcase_add_test(tc, test_outfile_path_once);
	tcase_add_test(tc, test_outfile_append);
	tcase_add_test(tc, test_outfile_identity);
	tcase_add_test(tc, test_outfile_whole);
	tcase_add_test(tc, test_outfile_noreplace);
	tcase_add_test(tc, test_outfile_noreplace_link);
	tcase_add_test(tc, test_outfile_replace);
	tcase_add_test(tc, test_outfile_not_regular);
	tcase_add_test(tc, test_outfile_signals);
	tcase_add_test(tc, test_outfile_sigpipe);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_outfile_suite)
