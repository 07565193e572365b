/*
 * fence_int.h -- what the fence's two files share (fence.h is the
 * contract): fence.c (epochs, barriers, events) and fence_helper.c (the
 * helper thread that issues requested barriers).  Include it after
 * preamble.h.
 */
#ifndef CUWARDEN_FENCE_INT_H
#define CUWARDEN_FENCE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "fence.h"

#pragma GCC visibility push(hidden)

/* ----------------------------------------------------------- "fence.c" */

/* Barriers in progress, per device: the epoch the running one covers (0:
 * none; atomics). */
extern uint64_t fence_running[FENCE_MAX_DEVICES];
/* Calls of fence_barrier_for by threads other than the helper that had
 * to wait (their frees had not passed), per device (atomics): the helper
 * paces itself only while this does not move. */
extern uint64_t fence_stalls[FENCE_MAX_DEVICES];
/* Set on the helper thread: its barriers are not stalls. */
extern CW_TLS bool fence_tls_helper;

static inline uint64_t
fence_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------- "fence_helper.c" */

/* Called from fence.c's hooks of the same name: prefork takes the
 * helper's lock (before the event lists'), postfork_parent releases it
 * (after them); postfork_child forgets the helper (it does not exist in
 * the child).  Touch no CUDA. */
void fence_helper_prefork(void);
void fence_helper_postfork_parent(void);
void fence_helper_postfork_child(void);
/* fence_reset's part: stops the helper, waits until it has exited, and
 * clears its requests and counters. */
void fence_helper_reset(void);

#pragma GCC visibility pop

#endif /* CUWARDEN_FENCE_INT_H */
