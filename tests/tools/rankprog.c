/*
 * rankprog.c -- one rank of a simulated distributed job, for
 * tests/tools/check_mpi.sh: a driver-API program on the simulated driver
 * (tests/fakecuda) that never calls MPI; its rank is what the launcher
 * put in its environment (OMPI_COMM_WORLD_RANK, else RANK), as the shim
 * reads it too.
 *
 * Usage: rankprog [-s RANKS] [-k RANK] [-W]
 *   every rank leaks 3 MiB from leak_everywhere();
 *   -s 1,3   ranks 1 and 3 also leak 2 x 1 MiB from leak_somewhere();
 *   -k 2     rank 2 dies of SIGKILL after its allocations (no report);
 *   -W       the killed rank first waits until CUWARDEN_REPORT's directory
 *            holds a report (a *.json file, not the tool's "loaded."
 *            markers) of every other rank: mpirun ends the job when a
 *            rank dies of a signal, and a rank still running then would
 *            be killed before its report (waiting for the event, not for
 *            a time: the test's timeout bounds it).
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#define MIB ((size_t)1 << 20)

static void
check(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "rankprog: %s failed: %d\n", what, (int)r);
		exit(99);
	}
}

__attribute__((noinline)) static void
leak(size_t size)
{
	CUdeviceptr p = 0;

	check(cuMemAlloc(&p, size), "cuMemAlloc");
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void leak_everywhere(void);
__attribute__((noinline)) void leak_somewhere(void);

void
leak_everywhere(void)
{
	leak(3 * MIB);
	__asm__ volatile("" ::: "memory");
}

void
leak_somewhere(void)
{
	/* volatile: one call site, never unrolled into two stacks. */
	for (volatile int i = 0; i < 2; i++)
		leak(MIB);
	__asm__ volatile("" ::: "memory");
}

/* The *.json files in dir. */
static long
reports_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long n = 0;

	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		n += len > 5 && strcmp(e->d_name + len - 5, ".json") == 0 &&
		    strncmp(e->d_name, "loaded.", 7) != 0;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/* Is rank in the comma-separated list? */
static int
in_list(const char *list, long rank)
{
	while (list != NULL && *list != '\0') {
		char *end;

		if (strtol(list, &end, 10) == rank && end != list)
			return 1;
		list = *end == ',' ? end + 1 : NULL;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	const char *some = NULL, *report = getenv("CUWARDEN_REPORT");
	char wait_dir[4096] = "";
	const char *size = getenv("OMPI_COMM_WORLD_SIZE");
	long rank, kill_rank = -1;
	CUdevice dev;
	CUcontext ctx;
	int c;

	while ((c = getopt(argc, argv, "s:k:W")) != -1) {
		if (c == 's')
			some = optarg;
		else if (c == 'W') {
			if (report == NULL || strlen(report) >= sizeof(wait_dir))
				continue; /* no report to wait for */
			strcpy(wait_dir, report);
			if (strrchr(wait_dir, '/') != NULL)
				*strrchr(wait_dir, '/') = '\0';
			else
				strcpy(wait_dir, ".");
		} else if (c == 'k')
			kill_rank = strtol(optarg, NULL, 10);
		else
			return 99;
	}
	if (r == NULL)
		r = getenv("RANK");
	rank = r != NULL ? strtol(r, NULL, 10) : -1;
	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	leak_everywhere();
	if (in_list(some, rank))
		leak_somewhere();
	if (kill_rank >= 0 && rank == kill_rank) {
		while (wait_dir[0] != '\0' && size != NULL &&
		    reports_in(wait_dir) < strtol(size, NULL, 10) - 1)
			usleep(10000);
		raise(SIGKILL);
	}
	return 0;
}
