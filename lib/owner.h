/*
 * owner.h -- owners: names interned once, ids stable for the process.
 * The library registers names (cw_owner_register); the shim interns the
 * path of the module that asked for memory.  Ids are cw_owner_t values.
 * Owner: core.
 */
#ifndef CUWARDEN_OWNER_H
#define CUWARDEN_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define OWNER_MAX 65536     /* ids 1..OWNER_MAX-1 */
#define OWNER_NAME_MAX 127  /* bytes of a name */
#define OWNER_CHUNK (256 * 1024)
/* The most bytes the table ever holds: ids and hash (static, 1 MiB) and
 * the chunks of name bytes.  A chunk is left only when the next name (at
 * most OWNER_NAME_MAX + 1 bytes) does not fit, so every chunk but the
 * last holds more than OWNER_CHUNK - OWNER_NAME_MAX - 1 bytes of names:
 * at most 33 chunks, 9.25 MiB in all. */
#define OWNER_CHUNKS_MAX (1 + (size_t)(OWNER_MAX - 1) * \
	(OWNER_NAME_MAX + 1) / (OWNER_CHUNK - OWNER_NAME_MAX))
#define OWNER_BYTES_MAX ((size_t)OWNER_MAX * sizeof(char *) + \
	(size_t)2 * OWNER_MAX * sizeof(uint32_t) + \
	OWNER_CHUNKS_MAX * OWNER_CHUNK)

/* The id of name (interned on first use).  0 on error (bad name, full). */
owner_id_t owner_intern(const char *name);
/* The name of id, NULL if unknown.  Stable until owner_reset. */
const char *owner_name(owner_id_t id);
bool owner_valid(owner_id_t id);
size_t owner_count(void); /* names interned (ids 1..count) */
/* The most slots any interned name sits past its hash's own slot: a known
 * name is found in at most that many + 1 probes (tests: the cost bound). */
uint32_t owner_longest_probe(void);
/* Bytes the table holds: its static arrays and the name chunks mapped
 * since the last reset (<= OWNER_BYTES_MAX). */
size_t owner_bytes(void);
void owner_reset(void);
/* Fork (fork.c calls these in lock-rank order). */
void owner_prefork(void);
void owner_postfork_parent(void);
void owner_postfork_child(void);

#endif /* CUWARDEN_OWNER_H */
