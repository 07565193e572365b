#include "preamble.h"

/*
 * stack_capture.c -- the capture of the calling thread's stack: libunwind's
 * unw_backtrace (UNW_LOCAL_ONLY) into a buffer on the caller's stack, then
 * stack_intern (stackdepot.c).
 *
 * unw_backtrace walks frames with libunwind's per-thread cache of frame
 * descriptions; its first use on a thread sets that cache up (which may
 * allocate), later captures do not call malloc (check_stackdepot's
 * test_stackdepot_no_malloc).  The cost is per frame unwound, so only
 * what is kept is unwound (doc/stacks.md, "Costs (measured)").  Not
 * async-signal-safe.
 */

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "options.h"
#include "stackdepot.h"

#define SKIP_MAX 32

/* The capture itself, inlined into each public entry point so that
 * unw_backtrace's frame 0 is always that entry point's own frame. */
static inline __attribute__((always_inline)) stack_id_t
capture(unsigned skip, long long depth)
{
	void *buf[STACK_MAX_DEPTH + SKIP_MAX + 2];
	long long opt = options_get(OPT_STACK_DEPTH);
	unsigned first;
	int n;

	if (depth > opt)
		depth = opt;
	if (depth <= 0)
		return 0;
	if (depth > STACK_MAX_DEPTH)
		depth = STACK_MAX_DEPTH;
	if (skip > SKIP_MAX)
		skip = SKIP_MAX;
	/* Frame 0 is the entry point itself (unw_backtrace starts at its
	 * caller's own frame). */
	first = skip + 1;
	n = unw_backtrace(buf, (int)(depth + first));
	if (n <= (int)first)
		return 0;
	return stack_intern((const uintptr_t *)(uintptr_t)(buf + first),
	    (size_t)n - first);
}

__attribute__((noinline)) stack_id_t
stack_capture(unsigned skip)
{
	return capture(skip, STACK_MAX_DEPTH);
}

__attribute__((noinline)) stack_id_t
stack_capture_depth(unsigned skip, unsigned depth)
{
	return capture(skip, depth);
}
