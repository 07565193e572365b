#include "preamble.h"

/*
 * report_proc.c -- the facts of the process a report names (report_int.h):
 * its executable (/proc/self/exe), its command line (/proc/self/cmdline,
 * read until it ends or past 1 MiB, into scratch memory), and the machine
 * and boot it ran in (uname's nodename; /proc/sys/kernel/random/boot_id),
 * which tell apart two processes of one pid on two hosts or two boots.
 *
 * Read when the report is written, with open, read, readlink and uname
 * only (all async-signal-safe): no malloc, no stdio; a fact that cannot
 * be read is left empty.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "report_int.h"

/* The host's name: uname's nodename, what gethostname(2) answers (glibc's
 * calls uname, which, unlike it, is async-signal-safe). */
static void
read_host(proc_t *p)
{
	struct utsname u;
	size_t n;

	p->host[0] = '\0';
	if (uname(&u) != 0)
		return;
	n = strnlen(u.nodename, sizeof(u.nodename));
	if (n >= sizeof(p->host))
		n = sizeof(p->host) - 1;
	memcpy(p->host, u.nodename, n);
	p->host[n] = '\0';
}

/* The kernel's boot id, its line's newline trimmed. */
static void
read_boot_id(proc_t *p)
{
	ssize_t n;
	int fd;

	p->boot_id[0] = '\0';
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	do
		n = read(fd, p->boot_id, sizeof(p->boot_id) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return;
	p->boot_id[n] = '\0';
	while (n > 0 && (p->boot_id[n - 1] == '\n' ||
	    p->boot_id[n - 1] == ' '))
		p->boot_id[--n] = '\0';
}

void
report_proc_read(proc_t *p)
{
	ssize_t n = readlink("/proc/self/exe", p->exe, sizeof(p->exe) - 1);
	int fd;

	p->exe[n > 0 ? n : 0] = '\0';
	read_host(p);
	read_boot_id(p);
	memset(&p->cmd, 0, sizeof(p->cmd));
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		ssize_t r;

		if (p->cmd.used >= (1u << 20) || scratch_reserve(&p->cmd, 4096))
			break;
		r = read(fd, p->cmd.p + p->cmd.used, p->cmd.cap - p->cmd.used);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		p->cmd.used += (size_t)r;
	}
	close(fd);
}

void
report_proc_args(const proc_t *p, void (*fn)(const char *a, size_t n, size_t i,
    void *arg), void *arg)
{
	size_t i = 0, k = 0;

	while (i < p->cmd.used) {
		size_t j = i;

		while (j < p->cmd.used && p->cmd.p[j] != '\0')
			j++;
		fn(p->cmd.p + i, j - i, k++, arg);
		i = j + 1;
	}
}
