/*
 * owner.h -- owners: names interned once, ids stable for the process.
 * The library registers names (cw_owner_register); the shim interns the
 * path of the module that asked for memory.  Ids are cw_owner_t values.
 * Owner: core.
 */
#ifndef CUWARDEN_OWNER_H
#define CUWARDEN_OWNER_H

#include <stdbool.h>

#include "types.h"

/* The id of name (interned on first use).  0 on error (bad name, full). */
owner_id_t owner_intern(const char *name);
/* The name of id, NULL if unknown.  Stable until owner_reset. */
const char *owner_name(owner_id_t id);
bool owner_valid(owner_id_t id);
void owner_reset(void);
/* Fork (fork.c calls these in lock-rank order). */
void owner_prefork(void);
void owner_postfork_parent(void);
void owner_postfork_child(void);

#endif /* CUWARDEN_OWNER_H */
