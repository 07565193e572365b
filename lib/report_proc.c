#include "preamble.h"

/*
 * report_proc.c -- the facts of the process a report names (report_int.h):
 * its executable (/proc/self/exe) and its command line
 * (/proc/self/cmdline, read until it ends or past 1 MiB, into scratch
 * memory).
 *
 * Read with open, read and readlink only: no malloc, no stdio; a file
 * that cannot be read leaves its fact empty.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "report_int.h"

void
report_proc_read(proc_t *p)
{
	ssize_t n = readlink("/proc/self/exe", p->exe, sizeof(p->exe) - 1);
	int fd;

	p->exe[n > 0 ? n : 0] = '\0';
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
