/*
 * check_log.c -- the output callback (prefix, one call per line, long
 * lines cut), the warning cap, CUWARDEN_LOG_FILE, CUWARDEN_VERBOSE, and
 * concurrent logging.  The log file's rules: a FIFO there neither hangs
 * the program nor is opened (standard error instead);
 * a log fd the program closed and reused is never written to nor closed
 * (the file is opened again); "-" and /dev/stderr are fd 2; a relative
 * path is resolved once, before a chdir; the fd is O_NONBLOCK; a full
 * pipe on standard error loses the line (counted) instead of blocking;
 * another user's file is refused.
 */
#include "preamble.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "options.h"
#include "unit.h"

/* ------------------------------------------------------------- output */

#define MAXLINES 512

typedef struct sink_s {
	pthread_mutex_t mu;
	int n;
	char lines[MAXLINES][300];
	void *arg_seen;
} sink_t;

static sink_t sink = { PTHREAD_MUTEX_INITIALIZER, 0, { { 0 } }, NULL };

static void
collect(const char *msg, void *arg)
{
	pthread_mutex_lock(&sink.mu);
	if (sink.n < MAXLINES)
		snprintf(sink.lines[sink.n], sizeof(sink.lines[0]), "%s", msg);
	sink.n++;
	sink.arg_seen = arg;
	pthread_mutex_unlock(&sink.mu);
}

static void
sink_start(void)
{
	sink.n = 0;
	log_reset();
	log_set_output(collect, &sink);
}

START_TEST(test_log_callback)
{
	sink_start();
	log_printf("hello %d", 42);
	ck_assert_int_eq(sink.n, 1);
	ck_assert_str_eq(sink.lines[0], "cuwarden: hello 42\n");
	ck_assert_ptr_eq(sink.arg_seen, &sink);

	/* A trailing newline is not doubled; each line is its own call. */
	log_printf("one\n");
	log_error("two\nthree");
	ck_assert_int_eq(sink.n, 4);
	ck_assert_str_eq(sink.lines[1], "cuwarden: one\n");
	ck_assert_str_eq(sink.lines[2], "cuwarden: error: two\n");
	ck_assert_str_eq(sink.lines[3], "cuwarden: error: three\n");

	log_warn("careful %s", "now");
	ck_assert_str_eq(sink.lines[4], "cuwarden: warning: careful now\n");

	/* A long message is cut, marked, and still one line. */
	{
		char big[3000];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		log_printf("%s", big);
		ck_assert_int_eq(sink.n, 6);
		ck_assert_ptr_nonnull(strstr(sink.lines[5], "xxx"));
	}
	log_set_output(NULL, NULL);
}
END_TEST

START_TEST(test_log_long_line)
{
	static char got[4096];
	char big[3000];
	int pipefd[2];
	ssize_t n;

	/* Default output to a pipe standing in for fd 2. */
	ck_assert_int_eq(pipe(pipefd), 0);
	ck_assert_int_ge(dup2(pipefd[1], 2), 0);
	log_set_output(NULL, NULL);
	log_reset();
	unsetenv("CUWARDEN_LOG_FILE");
	options_reset();
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_printf("%s", big);
	n = read(pipefd[0], got, sizeof(got) - 1);
	ck_assert_int_gt(n, 100);
	got[n] = '\0';
	ck_assert_int_eq(got[n - 1], '\n');
	ck_assert_ptr_eq(strchr(got, '\n'), got + n - 1);
	ck_assert_ptr_nonnull(strstr(got, "y...\n"));
	ck_assert_int_eq(strncmp(got, "cuwarden: yyy", 13), 0);
}
END_TEST

START_TEST(test_log_warn_cap)
{
	int suppressed = 0;

	sink_start();
	for (int i = 0; i < 250; i++)
		log_warn("w%d", i);
	ck_assert_int_eq(sink.n, 101);
	ck_assert_str_eq(sink.lines[0], "cuwarden: warning: w0\n");
	ck_assert_str_eq(sink.lines[99], "cuwarden: warning: w99\n");
	for (int i = 0; i < sink.n; i++)
		if (strstr(sink.lines[i], "further warnings suppressed"))
			suppressed++;
	ck_assert_int_eq(suppressed, 1);
	ck_assert_ptr_nonnull(strstr(sink.lines[100], "suppressed"));
	ck_assert_uint_eq(log_warn_count(), 250);
	/* Errors are never capped. */
	log_error("still here");
	ck_assert_int_eq(sink.n, 102);
	log_set_output(NULL, NULL);
}
END_TEST

START_TEST(test_log_verbose)
{
	setenv("CUWARDEN_VERBOSE", "2", 1);
	options_reset();
	sink_start();
	log_debug(1, "d1");
	log_debug(2, "d2");
	log_debug(3, "d3");
	ck_assert_int_eq(sink.n, 2);
	ck_assert_str_eq(sink.lines[0], "cuwarden: debug: d1\n");
	ck_assert_str_eq(sink.lines[1], "cuwarden: debug: d2\n");
	unsetenv("CUWARDEN_VERBOSE");
	options_reset();
	log_debug(1, "quiet");
	ck_assert_int_eq(sink.n, 2);
	log_set_output(NULL, NULL);
}
END_TEST

START_TEST(test_log_file)
{
	char path[PATH_MAX], pat[PATH_MAX], buf[512];
	int fd;
	ssize_t n;

	snprintf(pat, sizeof(pat), "/tmp/cw-check-log-%d-%%p.log",
	    (int)getpid());
	snprintf(path, sizeof(path), "/tmp/cw-check-log-%d-%d.log",
	    (int)getpid(), (int)getpid());
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "before\n", 7), 7);
	close(fd);

	setenv("CUWARDEN_LOG_FILE", pat, 1);
	options_reset();
	log_set_output(NULL, NULL);
	log_reset();
	log_printf("to the file");
	log_error("and %d more", 1);

	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	/* O_APPEND: what was there is kept. */
	ck_assert_str_eq(buf, "before\ncuwarden: to the file\n"
	    "cuwarden: error: and 1 more\n");
	unlink(path);

	/* A forked child logs to its own file (%p is its pid). */
	{
		pid_t pid;
		int st;

		log_prefork();
		pid = fork();
		if (pid == 0) {
			log_postfork_child();
			log_printf("child");
			_exit(0);
		}
		log_postfork_parent();
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		snprintf(path, sizeof(path), "/tmp/cw-check-log-%d-%d.log",
		    (int)getpid(), (int)pid);
		fd = open(path, O_RDONLY);
		ck_assert_int_ge(fd, 0);
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		ck_assert_int_gt(n, 0);
		buf[n] = '\0';
		ck_assert_str_eq(buf, "cuwarden: child\n");
		unlink(path);
	}
	unsetenv("CUWARDEN_LOG_FILE");
	options_reset();
	log_reset();
}
END_TEST

/* A callback that logs again: the inner line goes to fd 2, no deadlock. */
static int reentered;

static void
reenter(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
	reentered++;
	log_printf("from inside the callback");
}

START_TEST(test_log_reentrant)
{
	int devnull = open("/dev/null", O_WRONLY);

	ck_assert_int_ge(dup2(devnull, 2), 0);
	reentered = 0;
	log_set_output(reenter, NULL);
	log_printf("outer");
	ck_assert_int_eq(reentered, 1);
	log_set_output(NULL, NULL);
}
END_TEST

static void *
log_thread(void *arg)
{
	for (int i = 0; i < 50; i++)
		log_printf("thread %d line %d", (int)(intptr_t)arg, i);
	return NULL;
}

START_TEST(test_log_threads)
{
	pthread_t t[8];

	sink_start();
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, log_thread, (void *)(intptr_t)i);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(sink.n, 400);
	for (int i = 0; i < MAXLINES && i < sink.n; i++)
		ck_assert_int_eq(strncmp(sink.lines[i], "cuwarden: thread ",
		    17), 0);
	log_set_output(NULL, NULL);
}
END_TEST

START_TEST(test_log_write_all)
{
	int p[2];
	char buf[8];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert(!log_write_all(p[1], "abcdef", 6));
	ck_assert_int_eq(read(p[0], buf, sizeof(buf)), 6);
	close(p[0]);
	close(p[1]);
	ck_assert(log_write_all(p[1], "x", 1)); /* closed fd: error */
}
END_TEST

/* --------------------------------------------------------- log files */

/* The directory of the test running (file_setup), removed after it. */
static char file_dir[64];

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
file_teardown(void)
{
	if (file_dir[0] != '\0')
		nftw(file_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	file_dir[0] = '\0';
}

/* A fresh directory and the file standing in for fd 2 in it. */
static const char *
file_setup(char *err_path, size_t size)
{
	char *dir = file_dir;
	int fd;

	snprintf(dir, sizeof(file_dir), "/tmp/cw-check-log-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(err_path, size, "%s/stderr", dir);
	fd = open(err_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(dup2(fd, 2), 0);
	close(fd);
	log_set_output(NULL, NULL);
	/* A FIFO opened blocking would hang the test: end it instead. */
	signal(SIGALRM, SIG_DFL);
	alarm(10);
	return dir;
}

static void
use_log_file(const char *pat)
{
	if (pat != NULL)
		setenv("CUWARDEN_LOG_FILE", pat, 1);
	else
		unsetenv("CUWARDEN_LOG_FILE");
	options_reset();
	log_reset();
}

static void
file_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

/* The fd this process has open on path, -1 if none. */
static int
fd_of(const char *path)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		char link[300], target[PATH_MAX];
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, path) == 0 && atoi(e->d_name) != dirfd(d))
			found = atoi(e->d_name);
	}
	closedir(d);
	return found;
}

START_TEST(test_log_file_fifo)
{
	char err[PATH_MAX], path[PATH_MAX], buf[2048];
	const char *dir = file_setup(err, sizeof(err));

	snprintf(path, sizeof(path), "%s/log.fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	use_log_file(path);
	log_printf("after the fifo");
	file_text(err, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "is a FIFO") != NULL, "%s", buf);
	ck_assert_ptr_nonnull(strstr(buf, "cuwarden: after the fifo\n"));
	use_log_file(NULL);
}
END_TEST

/* The program closes the log's fd and opens its own file on the number:
 * the next line goes to the log file (opened again), none to the
 * program's file, and the program's fd is left open. */
START_TEST(test_log_file_fd_reused)
{
	char err[PATH_MAX], path[PATH_MAX], data[PATH_MAX], buf[2048];
	const char *dir = file_setup(err, sizeof(err));
	bool nonblock;
	int fd, mine;

	snprintf(path, sizeof(path), "%s/cw.log", dir);
	snprintf(data, sizeof(data), "%s/data", dir);
	use_log_file(path);
	log_printf("first");
	fd = fd_of(path);
	ck_assert_int_gt(fd, 2);
	nonblock = (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0;
	ck_assert_int_eq(close(fd), 0);
	mine = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_eq(mine, fd);
	log_printf("second");
	log_error("third");
	file_text(data, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	file_text(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, "cuwarden: first\ncuwarden: second\n"
	    "cuwarden: error: third\n");
	/* Forgetting the log (a %p child, log_reset) closes ours only. */
	log_reset();
	ck_assert_int_eq(fcntl(mine, F_GETFD), 0);
	ck_assert_int_eq(write(mine, "x", 1), 1);
	close(mine);
	/* Never blocks: the log's own fd is O_NONBLOCK. */
	ck_assert(nonblock);
	use_log_file(NULL);
}
END_TEST

/* "-", /dev/stderr, /dev/fd/2: fd 2 itself; no file of that name. */
START_TEST(test_log_file_stderr)
{
	static const char *const names[] = { "-", "/dev/stderr", "/dev/fd/2" };
	char err[PATH_MAX], buf[2048], want[256];
	const char *dir = file_setup(err, sizeof(err));
	struct stat st;

	ck_assert_int_eq(chdir(dir), 0);
	for (size_t i = 0; i < CW_ARRAY_SIZE(names); i++) {
		use_log_file(names[i]);
		log_printf("to %s", names[i]);
	}
	file_text(err, buf, sizeof(buf));
	ck_assert_str_eq(buf, "cuwarden: to -\ncuwarden: to /dev/stderr\n"
	    "cuwarden: to /dev/fd/2\n");
	ck_assert_int_ne(stat("-", &st), 0);
	snprintf(want, sizeof(want), "/dev/stderr.%d", (int)getpid());
	ck_assert_int_ne(stat(want, &st), 0);
	ck_assert_int_eq(fcntl(2, F_GETFD), 0);
	use_log_file(NULL);
	ck_assert_int_eq(chdir("/"), 0);
}
END_TEST

/* A relative CUWARDEN_LOG_FILE names a file of the directory the process
 * was in at log_path_init (the shim's load), not at the first message. */
START_TEST(test_log_file_relative)
{
	char err[PATH_MAX], a[PATH_MAX], b[PATH_MAX], buf[2048];
	const char *dir = file_setup(err, sizeof(err));
	struct stat st;

	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	ck_assert_int_eq(mkdir(a, 0700), 0);
	ck_assert_int_eq(mkdir(b, 0700), 0);
	ck_assert_int_eq(chdir(a), 0);
	use_log_file("rel.log");
	log_path_init();
	ck_assert_int_eq(chdir(b), 0);
	log_printf("where am I");
	ck_assert_int_ne(stat("rel.log", &st), 0);
	snprintf(a, sizeof(a), "%s/a/rel.log", dir);
	file_text(a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "cuwarden: where am I\n");
	ck_assert_int_eq(stat(a, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	use_log_file(NULL);
	ck_assert_int_eq(chdir("/"), 0);
}
END_TEST

/* Standard error is a pipe nobody reads, full: the line is lost and
 * counted, the program goes on. */
START_TEST(test_log_full_pipe)
{
	char err[PATH_MAX], junk[4096];
	int p[2], fl;

	(void)file_setup(err, sizeof(err));
	use_log_file(NULL);
	ck_assert_int_eq(pipe(p), 0);
	fl = fcntl(p[1], F_GETFL);
	ck_assert_int_eq(fcntl(p[1], F_SETFL, fl | O_NONBLOCK), 0);
	memset(junk, 'j', sizeof(junk));
	while (write(p[1], junk, sizeof(junk)) > 0)
		;
	ck_assert_int_eq(errno, EAGAIN);
	/* The program's stderr is blocking, as most are. */
	ck_assert_int_eq(fcntl(p[1], F_SETFL, fl), 0);
	ck_assert_int_ge(dup2(p[1], 2), 0);
	ck_assert_uint_eq(log_lost_count(), 0);
	log_printf("nobody reads this");
	log_warn("nor this");
	ck_assert_uint_eq(log_lost_count(), 2);
	/* Room again: lines go out. */
	ck_assert_int_eq(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	while (read(p[0], junk, sizeof(junk)) > 0)
		;
	log_printf("now read");
	ck_assert_uint_eq(log_lost_count(), 2);
	ck_assert_int_eq(read(p[0], junk, sizeof(junk)), 19);
	ck_assert_int_eq(memcmp(junk, "cuwarden: now read\n", 19), 0);
}
END_TEST

/* A log file another user made beforehand: not written (it could be read
 * by them), standard error instead.  Root makes one. */
START_TEST(test_log_file_theirs)
{
	char err[PATH_MAX], path[PATH_MAX], buf[2048];
	const char *dir = file_setup(err, sizeof(err));
	struct stat st;
	int fd;

	if (geteuid() != 0)
		return;
	snprintf(path, sizeof(path), "%s/theirs.log", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0666), 0);
	ck_assert_int_eq(fchown(fd, 65534, 65534), 0);
	close(fd);
	use_log_file(path);
	log_printf("secret");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	file_text(err, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "owned by another user"));
	ck_assert_ptr_nonnull(strstr(buf, "cuwarden: secret\n"));
	use_log_file(NULL);
}
END_TEST

static Suite *
make_log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, NULL, file_teardown);

	tcase_add_test(tc, test_log_callback);
	tcase_add_test(tc, test_log_long_line);
	tcase_add_test(tc, test_log_warn_cap);
	tcase_add_test(tc, test_log_verbose);
	tcase_add_test(tc, test_log_file);
	tcase_add_test(tc, test_log_reentrant);
	tcase_add_test(tc, test_log_threads);
	tcase_add_test(tc, test_log_write_all);
	tcase_add_test(tc, test_log_file_fifo);
	tcase_add_test(tc, test_log_file_fd_reused);
	tcase_add_test(tc, test_log_file_stderr);
	tcase_add_test(tc, test_log_file_relative);
	tcase_add_test(tc, test_log_full_pipe);
	tcase_add_test(tc, test_log_file_theirs);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_log_suite)
