#include "preamble.h"
/*
 * fork.c -- one pthread_atfork registration for every module (fork.h).
 *
 * Owns: the registration (made once, lazily, by fork_init), the table of
 * lib/'s hooks, the hooks upper layers add, and the order: prefork calls
 * every prefork in rank order (lockrank.h; a hook at rank r takes locks of
 * rank r and above only, checked in debug builds by cw_mutex_prefork);
 * the postfork handlers call theirs in the reverse order, so a child hook
 * of an outer rank runs after the inner modules are usable again.
 *
 * Locking: none of its own (pthread_once; added hooks are published with
 * release order and read at fork with acquire).
 */
#include <pthread.h>

#include "capture.h"
#include "driver.h"
#include "fork.h"
#include "ledger.h"
#include "log.h"
#include "owner.h"
#include "pool.h"
#include "registry.h"
#include "stackdepot.h"
#include "violation.h"

/* lib/'s modules, in rank order. */
static const fork_hooks_t lib_hooks[] = {
	{ LOCK_RANK_REGISTRY_H, registry_prefork, registry_postfork_parent,
	  registry_postfork_child },
	{ LOCK_RANK_VIOLATION, violation_prefork, violation_postfork_parent,
	  violation_postfork_child },
	{ LOCK_RANK_STACKDEPOT, stack_prefork, stack_postfork_parent,
	  stack_postfork_child },
	{ LOCK_RANK_POOL_INIT, pool_prefork, pool_postfork_parent,
	  pool_postfork_child },
	{ LOCK_RANK_CAPTURE, capture_prefork, capture_postfork_parent,
	  capture_postfork_child },
	{ LOCK_RANK_DRIVER, NULL, NULL, driver_postfork_child },
	{ LOCK_RANK_OWNER, owner_prefork, owner_postfork_parent,
	  owner_postfork_child },
	{ LOCK_RANK_LEDGER, ledger_prefork, ledger_postfork_parent,
	  ledger_postfork_child },
	{ LOCK_RANK_LOG, log_prefork, log_postfork_parent,
	  log_postfork_child },
};

#define LIB_HOOKS CW_ARRAY_SIZE(lib_hooks)
#define MAX_ADDED 8

static const fork_hooks_t *added[MAX_ADDED];
static unsigned nadded; /* release/acquire */

/* Every hook, lib's and the added ones merged by rank (stable: lib's
 * first at equal rank).  Returns how many. */
static size_t
ordered(const fork_hooks_t **out)
{
	unsigned na = __atomic_load_n(&nadded, __ATOMIC_ACQUIRE);
	size_t i = 0, j = 0, n = 0;

	while (i < LIB_HOOKS || j < na) {
		if (j == na || (i < LIB_HOOKS &&
		    lib_hooks[i].rank <= added[j]->rank))
			out[n++] = &lib_hooks[i++];
		else
			out[n++] = added[j++];
	}
	return n;
}

static void
prefork(void)
{
	const fork_hooks_t *h[LIB_HOOKS + MAX_ADDED];
	size_t n = ordered(h);

	for (size_t i = 0; i < n; i++)
		if (h[i]->prefork != NULL)
			h[i]->prefork();
}

/* The child's or the parent's hooks, in reverse rank order. */
static void
postfork(bool child)
{
	const fork_hooks_t *h[LIB_HOOKS + MAX_ADDED];
	size_t n = ordered(h);

	for (size_t i = n; i-- > 0; ) {
		void (*fn)(void) = child ? h[i]->postfork_child :
		    h[i]->postfork_parent;
		if (fn != NULL)
			fn();
	}
	lockrank_fork_done();
}

static void
postfork_parent(void)
{
	postfork(false);
}

static void
postfork_child(void)
{
	postfork(true);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool registered;

static void
do_register(void)
{
	if (pthread_atfork(prefork, postfork_parent, postfork_child) == 0)
		__atomic_store_n(&registered, true, __ATOMIC_RELEASE);
}

void
fork_init(void)
{
	if (likely(__atomic_load_n(&registered, __ATOMIC_ACQUIRE)))
		return;
	pthread_once(&once, do_register);
}

bool
fork_registered(void)
{
	return __atomic_load_n(&registered, __ATOMIC_ACQUIRE);
}

bool
fork_add(const fork_hooks_t *h)
{
	unsigned n = __atomic_load_n(&nadded, __ATOMIC_RELAXED);
	unsigned i;

	if (n == MAX_ADDED)
		return false;
	/* Sorted by rank, stable: shift the higher ones up. */
	for (i = n; i > 0 && added[i - 1]->rank > h->rank; i--)
		added[i] = added[i - 1];
	added[i] = h;
	__atomic_store_n(&nadded, n + 1, __ATOMIC_RELEASE);
	return true;
}
