#include "preamble.h"
/*
 * fork.c -- one pthread_atfork registration for every module.
 *
 * Owns: the registration (made once, lazily, by fork_init) and the order
 * of the handlers: prefork takes every module's locks in lock-rank order
 * (lockrank.h); postfork_parent and postfork_child release them in the
 * reverse order.  In the child the driver layer is told CUDA is gone
 * (driver_postfork_child) after the locks are re-initialised.
 *
 * Locking: none of its own (pthread_once).
 */
#include <pthread.h>

#include "driver.h"
#include "fork.h"
#include "ledger.h"
#include "log.h"
#include "owner.h"
#include "pool.h"
#include "registry.h"
#include "stackdepot.h"
#include "violation.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool registered;

static void
prefork(void)
{
	registry_prefork();       /* LOCK_RANK_REGISTRY */
	violation_prefork();      /* LOCK_RANK_VIOLATION */
	stack_prefork();          /* LOCK_RANK_STACKDEPOT */
	pool_prefork();           /* LOCK_RANK_POOL */
	owner_prefork();          /* LOCK_RANK_OWNER */
	ledger_prefork();         /* LOCK_RANK_LEDGER */
	log_prefork();            /* LOCK_RANK_LOG */
}

static void
postfork_parent(void)
{
	log_postfork_parent();
	ledger_postfork_parent();
	owner_postfork_parent();
	pool_postfork_parent();
	stack_postfork_parent();
	violation_postfork_parent();
	registry_postfork_parent();
}

static void
postfork_child(void)
{
	log_postfork_child();
	ledger_postfork_child();
	owner_postfork_child();
	pool_postfork_child();
	stack_postfork_child();
	violation_postfork_child();
	registry_postfork_child();
	driver_postfork_child();
}

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
