/*
 * bench_pyframes.c -- what Python frames add to a stack capture: a module
 * that bench/bench_pyframes.py loads with ctypes and calls from a Python
 * recursion of a chosen depth, so that the stack it captures holds that
 * many Python frames.  It times, in one run, ns per call of
 *
 *   native   stack_capture_outside with Python frames off (what a C
 *            program, or CUWARDEN_PYTHON_FRAMES=0, pays)
 *   python   the same with them on: the unwind, the frame walk, the
 *            (code, offset) cache, the merge, the depot lookup
 *
 * for a stack already in the depot (the common case: a call site that
 * allocates again).  Results are in doc/stacks.md.  Not a test.
 */
#include "preamble.h"

#include <time.h>

#include "stackdepot_int.h"

double bench_capture(int iters, int python, int *frames);
int bench_python_frames(void);

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per capture over iters captures, Python frames on or off; the
 * number of frames of the stack in *frames. */
__attribute__((visibility("default"))) double
bench_capture(int iters, int python, int *frames)
{
	stack_frame_t fr[STACK_MAX_DEPTH];
	stack_id_t id = 0;
	double t0;

	stack_python_set_enabled(python != 0);
	for (int i = 0; i < 100; i++)
		id = stack_capture_outside(); /* warm: the stack is stored */
	t0 = now_ns();
	for (int i = 0; i < iters; i++)
		id = stack_capture_outside();
	t0 = now_ns() - t0;
	*frames = (int)stack_get(id, fr, STACK_MAX_DEPTH);
	stack_python_set_enabled(true);
	return t0 / iters;
}

/* The Python frames of the last stack: how many. */
__attribute__((visibility("default"))) int
bench_python_frames(void)
{
	stack_frame_t fr[STACK_MAX_DEPTH];
	size_t n = stack_get(stack_capture_outside(), fr, STACK_MAX_DEPTH);
	int k = 0;

	for (size_t i = 0; i < n; i++)
		k += fr[i].module == STACK_MODULE_PYTHON;
	return k;
}
