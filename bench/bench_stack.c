/*
 * bench_stack.c -- what a stack costs: ns per stack_capture at depth 8,
 * 24 and 64, for a stack already in the depot (the common case: the same
 * call site allocating again) and for a new one (insert + resolution of
 * every frame to its module), next to libunwind's unw_backtrace alone.
 * Results are in doc/stacks.md.  Not a test: it always exits 0.
 *
 * Distinct stacks come from a recursion whose every level calls one of
 * two functions, chosen by one bit of a counter: 2^levels stacks.
 */
#include "preamble.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "options.h"
#include "stackdepot.h"

typedef enum what_e { W_CAPTURE, W_UNWIND } what_t;

static volatile int sink;
static what_t what;
static int iters;

static stack_id_t path_a(int n, unsigned long bits);
static stack_id_t path_b(int n, unsigned long bits);

static stack_id_t
leaf(void)
{
	void *buf[80];

	if (what == W_UNWIND)
		return (stack_id_t)unw_backtrace(buf, (int)options_get(
		    OPT_STACK_DEPTH) + 1);
	return stack_capture(0);
}

__attribute__((noinline)) static stack_id_t
path_a(int n, unsigned long bits)
{
	stack_id_t r = n == 0 ? leaf() : (bits & 1) ? path_a(n - 1, bits >> 1) :
	    path_b(n - 1, bits >> 1);

	sink++;
	return r;
}

__attribute__((noinline)) static stack_id_t
path_b(int n, unsigned long bits)
{
	stack_id_t r = n == 0 ? leaf() : (bits & 1) ? path_a(n - 1, bits >> 1) :
	    path_b(n - 1, bits >> 1);

	sink++;
	return r;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per call of a capture under `levels` frames of recursion. */
static double
run(int levels)
{
	double t0 = now_ns();

	for (int i = 0; i < iters; i++)
		(void)path_a(levels, 0x5a5a5a5a5a5aUL);
	return (now_ns() - t0) / iters;
}

/* ns per stack_intern of a new stack: a real captured stack whose
 * innermost address is moved by one byte each time (so every frame is
 * resolved against the module table, as a new call site would be). */
static double
run_new(int levels)
{
	uintptr_t ips[STACK_MAX_DEPTH];
	stack_id_t id;
	size_t n;
	double t0;

	what = W_CAPTURE;
	id = path_a(levels, 0x5a5a5a5a5a5aUL);
	n = stack_get_ips(id, ips, STACK_MAX_DEPTH);
	t0 = now_ns();
	for (int i = 0; i < iters; i++) {
		ips[0]++;
		(void)stack_intern(ips, n);
	}
	return (now_ns() - t0) / iters;
}

int
main(int argc, char **argv)
{
	static const int depths[] = { 8, 24, 64 };
	static const char *const names[] = {
		"unw_backtrace alone",
		"stack_capture, stack in the depot",
		"stack_intern, new stack",
	};
	char val[8];

	iters = argc > 1 ? atoi(argv[1]) : 20000;
	if (iters <= 0)
		iters = 20000;
	printf("%-34s %10s %10s %10s\n", "ns per call (depth =)", "8", "24",
	    "64");
	for (int row = 0; row < 3; row++) {
		printf("%-34s", names[row]);
		for (size_t d = 0; d < CW_ARRAY_SIZE(depths); d++) {
			/* Deeper than the depth kept: every capture is
			 * full. */
			int levels = depths[d] + 4;
			double ns;

			snprintf(val, sizeof(val), "%d", depths[d]);
			setenv("CUWARDEN_STACK_DEPTH", val, 1);
			options_reset();
			what = row == 0 ? W_UNWIND : W_CAPTURE;
			(void)run(levels); /* warm-up */
			ns = row == 2 ? run_new(levels) : run(levels);
			printf(" %10.0f", ns);
			fflush(stdout);
		}
		printf("\n");
	}
	printf("new stack by capture ~= unw_backtrace + stack_intern new\n");
	printf("stacks stored: %zu, depot memory in use: %zu KiB\n",
	    stack_count(), stack_bytes() / 1024);
	return 0;
}
