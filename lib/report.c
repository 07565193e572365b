#include "preamble.h"

/*
 * report.c -- the per-process report.
 *
 * FIRST VERSION (placeholder): writes a minimal valid document with no
 * leaks and no violations.  The full document lands next.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "options.h"
#include "report.h"

bool
report_write(int fd, cw_format_t format, const report_meta_t *meta)
{
	char buf[512];
	int n;

	if (format == CW_FORMAT_TEXT)
		n = log_snprintf(buf, sizeof(buf),
		    "LEAK SUMMARY: 0 bytes leaked in 0 allocations\n"
		    "ERROR SUMMARY: 0 errors\n");
	else
		n = log_snprintf(buf, sizeof(buf),
		    "{\"format\": \"cuwarden-report\", \"version\": 1, "
		    "\"pid\": %d, \"ppid\": %d, \"mode\": \"%s\", "
		    "\"summary\": {\"leaked_bytes\": 0, "
		    "\"leaked_allocations\": 0, \"violations\": 0}, "
		    "\"leaks\": [], \"violations\": []}\n",
		    (int)getpid(), (int)getppid(),
		    meta != NULL && meta->mode != NULL ? meta->mode : "library");
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		errno = EOVERFLOW;
		return true;
	}
	return log_write_all(fd, buf, (size_t)n);
}

bool
report_expand_path(const char *pattern, char *buf, size_t size)
{
	size_t o = 0;

	if (pattern == NULL || size == 0)
		return true;
	for (const char *p = pattern; *p != '\0'; p++) {
		char num[24];
		const char *piece = num;
		size_t n;

		if (*p != '%') {
			num[0] = *p;
			num[1] = '\0';
		} else if (p[1] == 'p') {
			log_snprintf(num, sizeof(num), "%d", (int)getpid());
			p++;
		} else if (p[1] == '%') {
			piece = "%";
			p++;
		} else {
			return true;
		}
		n = strlen(piece);
		if (o + n >= size)
			return true;
		memcpy(buf + o, piece, n);
		o += n;
	}
	buf[o] = '\0';
	return false;
}

bool
report_write_env(const report_meta_t *meta)
{
	const char *pat = options_get_str(OPT_REPORT);
	char path[PATH_MAX];
	int fd;
	bool err;

	if (pat == NULL)
		return false;
	if (report_expand_path(pat, path, sizeof(path))) {
		log_error("CUWARDEN_REPORT=%s: bad path", pat);
		return true;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_error("cannot open report %s (errno %d)", path, errno);
		return true;
	}
	err = report_write(fd, (cw_format_t)options_get(OPT_REPORT_FORMAT),
	    meta);
	close(fd);
	return err;
}
