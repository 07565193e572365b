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
#include <link.h>

#include "options.h"
#include "stackdepot_int.h"

#define SKIP_MAX 32
#define SELF_MAX 16 /* room for cuwarden's own frames (a hook, the engine) */

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

/* The extent of the object holding this file, found once (it never
 * moves); racing first calls find the same.  hi == 0: not known yet. */
static uintptr_t self_lo, self_hi; /* atomics */

static int
self_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)&stack_capture_outside, lo = UINTPTR_MAX;
	uintptr_t hi = 0;

	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (me < lo || me >= hi)
		return 0;
	__atomic_store_n(&self_lo, lo, __ATOMIC_RELAXED);
	__atomic_store_n(&self_hi, hi, __ATOMIC_RELEASE);
	return 1;
}

/* Native frames with the thread's Python frames in place of the
 * _PyEval_EvalFrameDefault frames that run them (innermost run for the
 * innermost such frame); runs whose eval frame was not unwound (past the
 * depth) go after the native frames kept.  At most `depth` native
 * frames, STACK_MAX_DEPTH in all (doc/stacks.md, "Python frames"). */
static stack_id_t
merge_python(const uintptr_t *nat, size_t nn, size_t depth,
    const uintptr_t *pyf, const uint16_t *ends, size_t nends)
{
	uintptr_t out[STACK_MAX_DEPTH];
	size_t n = 0, kept = 0, g = 0, p = 0;

	for (size_t i = 0; i < nn && n < STACK_MAX_DEPTH; i++) {
		if (g < nends && stack_python_is_eval(nat[i])) {
			while (p < ends[g] && n < STACK_MAX_DEPTH)
				out[n++] = pyf[p++];
			p = ends[g++];
			continue;
		}
		if (kept < depth) {
			out[n++] = nat[i];
			kept++;
		}
	}
	for (; g < nends; g++)
		for (; p < ends[g] && n < STACK_MAX_DEPTH; p++)
			out[n++] = pyf[p];
	return stack_intern(out, n);
}

__attribute__((noinline)) stack_id_t
stack_capture_outside(void)
{
	void *buf[STACK_MAX_DEPTH + SELF_MAX];
	uintptr_t pyf[STACK_MAX_DEPTH];
	uint16_t ends[32];
	size_t py, nends;
	long long depth = options_get(OPT_STACK_DEPTH);
	uintptr_t lo, hi;
	int n, first = 0;

	if (depth <= 0)
		return 0;
	if (depth > STACK_MAX_DEPTH)
		depth = STACK_MAX_DEPTH;
	hi = __atomic_load_n(&self_hi, __ATOMIC_ACQUIRE);
	if (unlikely(hi == 0)) {
		dl_iterate_phdr(self_cb, NULL);
		hi = __atomic_load_n(&self_hi, __ATOMIC_ACQUIRE);
	}
	lo = __atomic_load_n(&self_lo, __ATOMIC_RELAXED);
	/* Unwind only what is kept plus room for our own frames: every
	 * frame unwound costs time (doc/stacks.md, "Costs (measured)"), and
	 * some stacks (Python's) are deep. */
	n = unw_backtrace(buf, (int)depth + SELF_MAX);
	while (first < n && (uintptr_t)buf[first] >= lo &&
	    (uintptr_t)buf[first] < hi)
		first++;
	if (first >= n)
		return 0;
	py = stack_python_capture(pyf, STACK_MAX_DEPTH, ends, &nends,
	    CW_ARRAY_SIZE(ends));
	if (py > 0)
		return merge_python((const uintptr_t *)(uintptr_t)(buf + first),
		    (size_t)(n - first), (size_t)depth, pyf, ends, nends);
	if (n - first > depth)
		n = first + (int)depth;
	return stack_intern((const uintptr_t *)(uintptr_t)(buf + first),
	    (size_t)(n - first));
}
