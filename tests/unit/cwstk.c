/*
 * cwstk.c -- a tiny shared object for check_stackdepot: it captures a
 * stack through the function it is given (so a frame lies in a module
 * that the test dlclose's afterwards).
 */
#include <stdint.h>

typedef uint32_t (*capture_fn)(unsigned);

uint32_t cwstk_capture(capture_fn cap);

static volatile int cwstk_sink;

__attribute__((noinline)) uint32_t
cwstk_capture(capture_fn cap)
{
	uint32_t id = cap(0);

	cwstk_sink++; /* no tail call: this frame stays on the stack */
	return id;
}
