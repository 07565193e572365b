/*
 * libprog.c -- a program that uses CUDA through libcuwarden (no shim), on
 * the simulated driver, for cuwarden-audit's tests of library reports
 * (check_labels.sh).  Built with -g; LINE-LIBLEAK marks the leaking call.
 *
 * Usage: libprog JSON-FILE TEXT-FILE
 *   leaks 2 x 64 KiB and 1 x 4 KiB of device memory from lib_leak(),
 *   copies 8 bytes at offset 60 of a 64-byte buffer (out_of_bounds,
 *   refused), frees a handle never issued (invalid_free), then writes
 *   its report with cw_report: JSON to JSON-FILE, text to TEXT-FILE.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuwarden.h>

static void
quiet(const char *line, void *arg)
{
	(void)arg;
	fprintf(stderr, "libprog: cuwarden: %s\n", line);
}

__attribute__((noinline)) void lib_leak(size_t size);

__attribute__((noinline)) void
lib_leak(size_t size)
{
	cw_buf_t b;

	if (cw_alloc(&b, size, CW_DEVICE, 0, CW_OWNER_NONE) != CW_OK) /* LINE-LIBLEAK */
		exit(99);
	__asm__ volatile("" ::: "memory");
}

static int
report_to(const char *path, cw_format_t format)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int st;

	if (fd < 0) {
		perror(path);
		return 99;
	}
	st = cw_report(fd, format);
	close(fd);
	if (st != CW_OK) {
		fprintf(stderr, "libprog: cw_report: %s\n", cw_strerror(st));
		return 99;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	cw_buf_t small;
	char bytes[8];

	if (argc != 3) {
		fprintf(stderr, "usage: %s JSON-FILE TEXT-FILE\n", argv[0]);
		return 99;
	}
	cw_set_output(quiet, NULL);
	lib_leak(65536);
	lib_leak(65536);
	lib_leak(4096);
	if (cw_alloc(&small, 64, CW_DEVICE, 0, CW_OWNER_NONE) != CW_OK)
		return 99;
	memset(bytes, 1, sizeof(bytes));
	if (cw_upload(small, 60, bytes, sizeof(bytes)) != CW_EBOUNDS)
		return 99;
	if (cw_free(small) != CW_OK)
		return 99;
	if (cw_free((cw_buf_t)0x7777) == CW_OK)
		return 99;
	if (report_to(argv[1], CW_FORMAT_JSON) != 0 ||
	    report_to(argv[2], CW_FORMAT_TEXT) != 0)
		return 99;
	return 0;
}
