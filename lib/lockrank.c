#include "preamble.h"
/*
 * lockrank.c -- the lock-order checker of debug builds (lockrank.h).
 *
 * Owns: one thread-local bit set of the ranks the thread holds.
 * Invariant: a rank is taken only when no rank at or above it is held.
 * Locking: none (thread-local).
 */
#include "lockrank.h"

static CW_TLS uint32_t held;

void
lockrank_check_take(lock_rank_t rank)
{
	uint32_t bit = 1u << (unsigned)rank;

	/* Any held rank >= rank breaks the order. */
	if (held & ~(bit - 1u))
		cw_assert_fail("lock taken out of rank order (lockrank.h)",
		    __FILE__, __LINE__);
	held |= bit;
}

void
lockrank_check_drop(lock_rank_t rank)
{
	held &= ~(1u << (unsigned)rank);
}
