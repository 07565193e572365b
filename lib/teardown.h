/*
 * teardown.h -- the allocations a context's destruction freed
 * (cuCtxDestroy, cuDevicePrimaryCtxReset, the last primary release): the
 * program never freed them, the driver reclaimed them.  compute-sanitizer
 * reports them as leaks; the report lists them as their own category
 * (doc/report-schema.md, "leaks[]": category teardown).  The first
 * TEARDOWN_KEEP are kept with their stacks, the rest only counted.
 * Owner: infra.
 */
#ifndef CUWARDEN_TEARDOWN_H
#define CUWARDEN_TEARDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define TEARDOWN_KEEP 4096

typedef struct teardown_rec_s {
	uintptr_t base;
	size_t size;
	const char *api;   /* static string: the entry point that made it */
	stack_id_t stack;  /* where it was allocated */
	owner_id_t owner;
	int16_t device;
	uint8_t kind;      /* kind_t */
} teardown_rec_t;

/* Keeps a copy of *r (or counts it, TEARDOWN_KEEP kept already).
 * Thread-safe, lock-free; never calls malloc or the driver. */
void teardown_keep(const teardown_rec_t *r);
/* Calls fn on each kept record, in the order kept; non-zero stops the
 * walk.  Lock-free (a report from a signal handler may call it). */
int teardown_foreach(int (*fn)(const teardown_rec_t *r, void *arg),
    void *arg);
/* Records kept, and those only counted (over TEARDOWN_KEEP). */
size_t teardown_kept(void);
uint64_t teardown_dropped(void);
/* For tests: forget every record. */
void teardown_reset(void);

#endif /* CUWARDEN_TEARDOWN_H */
