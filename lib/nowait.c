#include "preamble.h"
/*
 * nowait.c -- nowait.h: the report on a thread that must not block.
 *
 * Owns: the nowait flag and the count of parts skipped.  The flag is
 * process-wide (the exit path runs once); other threads that take a lock
 * on the report's path meanwhile (a wrapper's registry insert) try as
 * long as the report does, and the lock holder is never this thread, so
 * their tries succeed once the holder goes on.
 *
 * Locking: none (atomics).
 */
#include <errno.h>
#include <sched.h>

#include "nowait.h"

/* Attempts before giving up, a yield between each: a few milliseconds
 * when the holder is this thread (it never lets go), far longer than
 * any hold of ours by a running thread. */
#define NOWAIT_TRIES 2000

static bool active;        /* atomic */
static uint64_t skipped;   /* atomic */

void
nowait_begin(void)
{
	__atomic_store_n(&skipped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&active, true, __ATOMIC_RELEASE);
	lockrank_pause();
}

void
nowait_end(void)
{
	__atomic_store_n(&active, false, __ATOMIC_RELEASE);
	lockrank_resume();
}

bool
nowait_active(void)
{
	return __atomic_load_n(&active, __ATOMIC_ACQUIRE);
}

bool
nowait_lock(cw_mutex_t *m)
{
	if (likely(!nowait_active())) {
		cw_mutex_lock(m);
		return false;
	}
	for (int i = 0; i < NOWAIT_TRIES; i++) {
		if (cw_mutex_trylock(m))
			return false;
		sched_yield();
	}
	nowait_skip();
	return true;
}

void
nowait_skip(void)
{
	__atomic_fetch_add(&skipped, 1, __ATOMIC_RELAXED);
}

uint64_t
nowait_skipped(void)
{
	return __atomic_load_n(&skipped, __ATOMIC_RELAXED);
}
