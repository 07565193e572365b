/*
 * fork.h -- the one pthread_atfork registration of cuwarden.
 *
 * fork_init() registers handlers once (pthread_once); every public entry
 * point and the shim's initialisation call it, so the registration is made
 * lazily, on first use.  The handlers call each module's prefork in lock
 * rank order (lockrank.h) and its postfork_parent / postfork_child in the
 * reverse order.  In the child, the driver layer is marked dead (CUDA is
 * unusable until exec) and the pools forget everything without touching
 * CUDA; what the registry keeps is its own decision (registry.h).
 * Owner: core.
 */
#ifndef CUWARDEN_FORK_H
#define CUWARDEN_FORK_H

#include <stdbool.h>

/* Registers the handlers on first call; cheap afterwards. */
void fork_init(void);
/* True once the registration is made (tests). */
bool fork_registered(void);

#endif /* CUWARDEN_FORK_H */
