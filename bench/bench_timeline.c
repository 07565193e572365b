/*
 * bench_timeline.c -- what the timeline adds to one allocation or free,
 * without a driver in the way: the engine's own recording path
 * (shim_tl_clock, then shim_tl_put into the thread's buffer, with the
 * writer thread writing the file) timed in-process, beside a loop that
 * builds the same record and does nothing with it.  The difference is
 * the "event recording adds at most 50 ns per allocation or free
 * over audit mode without the timeline", free of the driver's spread,
 * which hides tens of nanoseconds in a whole-process comparison
 * (bench/run-bench-shim.sh, bench/run-ab-timeline.sh).
 *
 *   bench_timeline [-n EVENTS] [-r ROUNDS] [-t THREADS] [-w WORK]
 *
 * Each round runs every row once, in turn (one thread), then the record
 * row on THREADS threads at once; each figure is the median over the
 * rounds, ns per event.  Back to back, events come as fast as the loop
 * makes them: the writer's copying competes for the memory, and the
 * buffer's stores miss -- a bound no program reaches, since each event
 * comes with a driver call (0.25 us an event at the cheapest, the
 * stream-ordered pair).  Paced, each event follows WORK steps of
 * arithmetic that touch no memory (the driver's stand-in; the "work
 * alone" row says how long they take), each chain afresh ("paced") or
 * from the one before ("paced, chained": spin() says why both): the
 * difference of two such rows is the cost an event adds at a driver's
 * pace.  The clock rows say
 * what the clock alone costs (on x86-64 also the TSC's two instructions,
 * for comparison).  The last line says how many events the writer wrote
 * and dropped: a drop means the loop outran the disk, and the record rows
 * then include buffers counted as dropped instead of queued.  Results
 * are in doc/benchmarks.md.  Not a test: exits 0, or 99 when the
 * timeline cannot start.
 */
#include "preamble.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "engine.h"
#include "track.h"

#define MAX_ROUNDS 64
#define MAX_THREADS 256

typedef enum row_e {
	ROW_NOTHING, ROW_CLOCK, ROW_RECORD,
#if defined(__x86_64__)
	ROW_RDTSC, ROW_LFENCE_RDTSC,
#endif
	ROW_WORK, ROW_WORK_RECORD, ROW_CHAIN, ROW_CHAIN_RECORD, ROW_THREADS,
	ROWS
} row_t;

static const char *const row_name[ROWS] = {
	"back to back: the loop alone",
	"back to back: shim_tl_clock",
	"back to back: shim_tl_clock + shim_tl_put",
#if defined(__x86_64__)
	"back to back: rdtsc (for comparison)",
	"back to back: lfence; rdtsc (comparison)",
#endif
	"paced: the work alone",
	"paced: the work + clock + put",
	"paced, chained: the work alone",
	"paced, chained: the work + clock + put",
	"back to back: clock + put, T threads",
};

static long events = 1L << 20;
static long work = 400;
static int nthreads = 16;
static volatile uint64_t sink;
static pthread_barrier_t start_line;

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

__attribute__((noinline)) static void
keep(const reg_rec_t *r, uint64_t t)
{
	sink += r->base + t;
}

/* The paced rows' stand-in for a driver call: w steps of a dependent
 * chain from x, no memory touched.  The "paced" rows start each event's
 * chain afresh, so the CPU may run the end of one and the start of the
 * next at once -- which the free's ordered clock (lfence; rdtsc) stops:
 * the fence's dearest case.  The "chained" rows start each from the one
 * before (a program that uses each call's result, as it uses the pointer
 * an allocation returns): nothing to overlap, so their difference is the
 * event's own cost at a driver's pace. */
__attribute__((noinline)) static uint64_t
spin(uint64_t x, long w)
{
	for (long i = 0; i < w; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	return x;
}

/* ns per event of row w, n events, on the calling thread. */
static double
run(row_t w, long n)
{
	reg_rec_t r;
	uint64_t x = 1;
	double t0;

	memset(&r, 0, sizeof(r));
	r.size = 4096;
	r.kind = KIND_DEVICE;
	r.alloc_stack = 1;
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		r.base = 0x700000000000u + ((uintptr_t)i << 12);
		switch (w) {
		case ROW_NOTHING:
			keep(&r, (uint64_t)i);
			break;
		case ROW_CLOCK:
			keep(&r, shim_tl_clock());
			break;
		case ROW_WORK:
			keep(&r, spin((uint64_t)i, work));
			break;
		case ROW_WORK_RECORD:
			r.aux = spin((uint64_t)i, work);
			shim_tl_put((i & 1) ? TLF_FREE : TLF_ALLOC, &r,
			    (i & 1) ? shim_tl_clock() : shim_tl_clock_before());
			break;
		case ROW_CHAIN:
			x = spin(x, work);
			keep(&r, x);
			break;
		case ROW_CHAIN_RECORD:
			x = spin(x, work);
			r.aux = x;
			shim_tl_put((i & 1) ? TLF_FREE : TLF_ALLOC, &r,
			    (i & 1) ? shim_tl_clock() : shim_tl_clock_before());
			break;
#if defined(__x86_64__)
		case ROW_RDTSC:
			keep(&r, __rdtsc());
			break;
		case ROW_LFENCE_RDTSC:
			_mm_lfence();
			keep(&r, __rdtsc());
			break;
#endif
		default: /* ROW_RECORD, ROW_THREADS */
			shim_tl_put((i & 1) ? TLF_FREE : TLF_ALLOC, &r,
			    (i & 1) ? shim_tl_clock() : shim_tl_clock_before());
			break;
		}
	}
	return (now_ns() - t0) / (double)n;
}

static void *
thread_main(void *arg)
{
	double *out = arg;

	pthread_barrier_wait(&start_line);
	*out = run(ROW_THREADS, events);
	return NULL;
}

static double
run_threads(void)
{
	pthread_t th[MAX_THREADS];
	double each[MAX_THREADS], sum = 0;

	pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
	for (int i = 1; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, thread_main, &each[i]) != 0) {
			fprintf(stderr, "bench_timeline: pthread_create failed\n");
			exit(99);
		}
	(void)thread_main(&each[0]);
	for (int i = 1; i < nthreads; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start_line);
	for (int i = 0; i < nthreads; i++)
		sum += each[i];
	return sum / nthreads;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long
number(const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "bench_timeline: %s: not a number in [%ld, %ld]\n",
		    s, lo, hi);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	static double fig[ROWS][MAX_ROUNDS];
	char dir[] = "/tmp/cwbtl.XXXXXX", path[64];
	const report_timeline_t *tl;
	int rounds = 5, c;

	while ((c = getopt(argc, argv, "n:r:t:w:")) != -1) {
		switch (c) {
		case 'n': events = number(optarg, 1000, 1L << 26); break;
		case 'w': work = number(optarg, 0, 1L << 20); break;
		case 'r': rounds = (int)number(optarg, 1, MAX_ROUNDS); break;
		case 't': nthreads = (int)number(optarg, 0, MAX_THREADS); break;
		default:
			fprintf(stderr, "usage: bench_timeline [-n EVENTS] "
			    "[-r ROUNDS] [-t THREADS] [-w WORK]\n");
			return 2;
		}
	}
	if (mkdtemp(dir) == NULL) {
		perror("bench_timeline: mkdtemp");
		return 99;
	}
	snprintf(path, sizeof(path), "%s/r.json", dir);
	setenv("CUWARDEN_REPORT", path, 1);
	setenv("CUWARDEN_TIMELINE", "1", 1);
	/* Every event written: the limit far above this run's. */
	setenv("CUWARDEN_TIMELINE_LIMIT", "68719476736", 1);
	track_init();
	if (!shim_tl_on) {
		fprintf(stderr, "bench_timeline: the timeline did not start\n");
		return 99;
	}
	for (int k = 0; k < rounds; k++) {
		for (int w = 0; w < ROW_THREADS; w++)
			fig[w][k] = run((row_t)w, events);
		if (nthreads > 0)
			fig[ROW_THREADS][k] = run_threads();
	}
	tl = shim_timeline_finish();
	printf("%-40s %10s   (%ld events a row, median of %d rounds)\n",
	    "row", "ns/event", events, rounds);
	for (int w = 0; w < ROWS; w++) {
		if (w == ROW_THREADS && nthreads == 0)
			continue;
		printf("%-40s %10.1f", row_name[w], median(fig[w], rounds));
		if (w == ROW_THREADS)
			printf("   (T = %d)", nthreads);
		printf("\n");
	}
	printf("%-40s %+10.1f\n", "the cost back to back (record - loop)",
	    median(fig[ROW_RECORD], rounds) - median(fig[ROW_NOTHING], rounds));
	printf("%-40s %+10.1f\n", "the cost paced (work+record - work)",
	    median(fig[ROW_WORK_RECORD], rounds) - median(fig[ROW_WORK],
	    rounds));
	printf("%-40s %+10.1f\n", "the cost paced, chained",
	    median(fig[ROW_CHAIN_RECORD], rounds) - median(fig[ROW_CHAIN],
	    rounds));
	if (tl != NULL)
		printf("clock %s; written %llu events, %llu bytes; dropped "
		    "%llu%s\n", tl->clock != NULL ? tl->clock : "?",
		    (unsigned long long)tl->events,
		    (unsigned long long)tl->bytes,
		    (unsigned long long)tl->dropped,
		    tl->error != NULL ? tl->error : "");
	snprintf(path, sizeof(path), "%s/r.json.timeline", dir);
	(void)unlink(path);
	if (rmdir(dir) != 0)
		fprintf(stderr, "bench_timeline: %s left behind\n", dir);
	return 0;
}
