/*
 * fork.h -- the one pthread_atfork registration of cuwarden.
 *
 * fork_init() registers the handlers once (pthread_once); every public
 * entry point and the shim's initialisation call it, so the registration
 * is made lazily, on first use.  The handlers call every module's prefork
 * in lock rank order (lockrank.h) and its postfork_parent / postfork_child
 * in the reverse order: lib/'s modules from fork.c's own table, a layer
 * above (the shim) from the hooks it adds with fork_add, each at the rank
 * of its outermost lock.  In the child, the driver layer is marked dead
 * (CUDA is unusable until exec) and the pools forget everything without
 * touching CUDA; what the registry keeps is its own decision
 * (registry.h).
 * Owner: core.
 */
#ifndef CUWARDEN_FORK_H
#define CUWARDEN_FORK_H

#include <stdbool.h>

#include "lockrank.h"

/* One module's hooks; any may be NULL.  prefork takes the module's locks
 * (cw_mutex_prefork), postfork_parent lets them go, postfork_child makes
 * them anew and forgets what the parent's other threads were doing. */
typedef struct fork_hooks_s {
	lock_rank_t rank; /* of the outermost lock prefork takes */
	void (*prefork)(void);
	void (*postfork_parent)(void);
	void (*postfork_child)(void);
} fork_hooks_t;

/* Registers the handlers on first call; cheap afterwards. */
void fork_init(void);
/* True once the registration is made (tests). */
bool fork_registered(void);
/* Adds an upper layer's hooks (h must stay valid: static storage), called
 * from the next fork on, at h->rank among the others.  At most 8; false
 * when full (logged by the caller).  Not thread-safe against another
 * fork_add: call it once, from an initialisation. */
bool fork_add(const fork_hooks_t *h);

#endif /* CUWARDEN_FORK_H */
