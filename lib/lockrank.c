#include "preamble.h"
/*
 * lockrank.c -- the lock-order checks of debug builds (lockrank.h).
 *
 * Owns: per thread, how many locks of each rank it holds (and the set of
 * ranks held), and the highest rank taken by the prefork in progress.
 * Invariant: a rank is taken only when no rank above it is held, and no
 * lock of it unless it is nestable.
 * Locking: none (thread-local).
 */
#include <stdio.h>

#include "lockrank.h"

static const struct {
	const char *name;
	bool nestable;
} ranks[LOCK_RANK_COUNT] = {
	[LOCK_RANK_NONE] = { "none", false },
#define LOCK_RANK_ROW(n, nest) [LOCK_RANK_##n] = { #n, nest },
	LOCK_RANKS(LOCK_RANK_ROW)
#undef LOCK_RANK_ROW
};

static CW_TLS uint32_t held;                  /* bit r: a lock of rank r */
static CW_TLS uint8_t count[LOCK_RANK_COUNT]; /* locks held per rank */
static CW_TLS unsigned fork_rank;             /* prefork's highest yet */
static CW_TLS bool paused;

void
lockrank_pause(void)
{
	paused = true;
}

void
lockrank_resume(void)
{
	paused = false;
}

const char *
lockrank_name(lock_rank_t rank)
{
	return (unsigned)rank < LOCK_RANK_COUNT ? ranks[rank].name : "?";
}

static void
fail(const char *why, lock_rank_t rank)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%s: rank %s (lockrank.h)", why,
	    lockrank_name(rank));
	cw_assert_fail(msg, __FILE__, __LINE__);
}

void
lockrank_note_take(lock_rank_t rank)
{
	if (paused)
		return;
	if ((unsigned)rank - 1u >= LOCK_RANK_COUNT - 1u)
		fail("lock made without a rank", rank);
	count[rank]++;
	held |= 1u << (unsigned)rank;
}

void
lockrank_check_take(lock_rank_t rank)
{
	uint32_t bit = 1u << (unsigned)rank;

	if (paused)
		return;
	if ((unsigned)rank - 1u >= LOCK_RANK_COUNT - 1u)
		fail("lock made without a rank", rank);
	/* Any held rank above rank, or rank itself unless nestable. */
	if (held & ~(bit - 1u) & ~(ranks[rank].nestable ? bit : 0u))
		fail("lock taken out of rank order", rank);
	lockrank_note_take(rank);
}

void
lockrank_check_drop(lock_rank_t rank)
{
	if (paused)
		return;
	if ((unsigned)rank >= LOCK_RANK_COUNT || count[rank] == 0) {
		fail("lock let go that was not held", rank);
		return;
	}
	if (--count[rank] == 0)
		held &= ~(1u << (unsigned)rank);
}

void
lockrank_check_prefork(lock_rank_t rank)
{
	if ((unsigned)rank - 1u >= LOCK_RANK_COUNT - 1u)
		fail("lock made without a rank", rank);
	if ((unsigned)rank < fork_rank)
		fail("prefork takes a lock out of rank order", rank);
	fork_rank = (unsigned)rank;
}

void
lockrank_fork_done(void)
{
	fork_rank = 0;
}
