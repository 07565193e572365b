/*
 * tp_files.c -- a driver-API program for the shim's output files
 * (tests/preload/check_files.sh).
 *
 *   tp_files logfd   a double free (the shim's first message opens
 *                    CUWARDEN_LOG_FILE), then every fd above 2 closed
 *                    (closefrom, as daemons do) and eight data files
 *                    opened in the current directory (they reuse the
 *                    numbers, the log's among them), then a second
 *                    double free: its message must not land in them.
 *   tp_files leak    one 1 MiB device allocation leaked.
 *
 * Prints pid=N first (for check.py's -V); exits 1 if the driver answers
 * differently than expected.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

static int errors;

#define EXPECT(call, want) \
	do { \
		CUresult r_ = (call); \
		if (r_ != (want)) { \
			fprintf(stderr, "%s:%d: %s = %d, want %d\n", \
			    __FILE__, __LINE__, #call, (int)r_, (int)(want)); \
			errors++; \
		} \
	} while (0)
#define OK(call) EXPECT(call, CUDA_SUCCESS)

static void
init(void)
{
	CUdevice d;
	CUcontext c;

	OK(cuInit(0));
	OK(cuDeviceGet(&d, 0));
	OK(cuDevicePrimaryCtxRetain(&c, d));
	OK(cuCtxSetCurrent(c));
}

static void
double_free(size_t n)
{
	CUdeviceptr p;

	OK(cuMemAlloc(&p, n));
	OK(cuMemFree(p));
	EXPECT(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
}

static int
scenario_logfd(void)
{
	int data[8];

	init();
	double_free(4096);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	for (int i = 0; i < 8; i++) {
		char name[32];

		snprintf(name, sizeof(name), "data%d.out", i);
		data[i] = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (data[i] < 0)
			errors++;
	}
	double_free(8192);
	for (int i = 0; i < 8; i++) {
		if (write(data[i], "PROGRAM DATA\n", 13) != 13)
			errors++;
		close(data[i]);
	}
	return errors;
}

static int
scenario_leak(void)
{
	CUdeviceptr p;

	init();
	OK(cuMemAlloc(&p, 1 << 20));
	return errors;
}

int
main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";
	int r;

	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	if (strcmp(s, "logfd") == 0)
		r = scenario_logfd();
	else if (strcmp(s, "leak") == 0)
		r = scenario_leak();
	else {
		fprintf(stderr, "usage: %s logfd|leak\n", argv[0]);
		return 99;
	}
	printf("errors=%d\n", r);
	return r != 0;
}
