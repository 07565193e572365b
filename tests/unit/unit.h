/*
 * unit.h -- what every unit test program shares.  One program per module
 * (tests/unit/check_<mod>.c) defining make_<mod>_suite(); UNIT_MAIN
 * runs it.  Exit: 0 pass, 1 fail, 77 skip, 99 harness error.
 */
#ifndef CUWARDEN_TESTS_UNIT_H
#define CUWARDEN_TESTS_UNIT_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define UNIT_MAIN(make_suite) \
	int main(void) \
	{ \
		SRunner *sr = srunner_create(make_suite()); \
		srunner_run_all(sr, CK_ENV); \
		int failed = srunner_ntests_failed(sr); \
		srunner_free(sr); \
		return failed == 0 ? 0 : 1; \
	}

/* The first size - 1 bytes of the file at path, NUL-terminated, into
 * buf (a failed assertion if it cannot be read). */
static inline void
unit_read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_msg(fd >= 0, "%s: errno %d", path, errno);
	n = read(fd, buf, size - 1);
	close(fd);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
}

#endif /* CUWARDEN_TESTS_UNIT_H */
