#include "preamble.h"

/*
 * teardown.c -- the records context teardown freed (teardown.h).
 *
 * Invariants: a slot is claimed by one atomic increment of next and
 * published by its ready flag (release); readers take only the slots
 * whose flag they see set (acquire), so a report written while a
 * teardown is under way lists what was complete.  No locks: a report
 * from a signal handler never waits.  A forked child keeps its parent's
 * records, as it keeps the registry's.
 */

#include <string.h>

#include "teardown.h"

static struct {
	teardown_rec_t rec;
	bool ready;
} slots[TEARDOWN_KEEP];
static uint64_t next;    /* slots claimed, and beyond: records dropped */

void
teardown_keep(const teardown_rec_t *r)
{
	uint64_t i = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);

	if (i >= TEARDOWN_KEEP)
		return;
	slots[i].rec = *r;
	__atomic_store_n(&slots[i].ready, true, __ATOMIC_RELEASE);
}

size_t
teardown_kept(void)
{
	uint64_t n = __atomic_load_n(&next, __ATOMIC_RELAXED);

	return n < TEARDOWN_KEEP ? (size_t)n : TEARDOWN_KEEP;
}

uint64_t
teardown_dropped(void)
{
	uint64_t n = __atomic_load_n(&next, __ATOMIC_RELAXED);

	return n > TEARDOWN_KEEP ? n - TEARDOWN_KEEP : 0;
}

int
teardown_foreach(int (*fn)(const teardown_rec_t *r, void *arg), void *arg)
{
	size_t n = teardown_kept();
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (!__atomic_load_n(&slots[i].ready, __ATOMIC_ACQUIRE))
			continue;
		if ((rc = fn(&slots[i].rec, arg)) != 0)
			return rc;
	}
	return 0;
}

void
teardown_reset(void)
{
	for (size_t i = 0; i < TEARDOWN_KEEP; i++)
		__atomic_store_n(&slots[i].ready, false, __ATOMIC_RELAXED);
	__atomic_store_n(&next, 0, __ATOMIC_RELEASE);
}
