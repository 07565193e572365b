/*
 * driver_int.h -- what the driver layer's two files share (driver.h is
 * the contract), and nobody else.  Include it after preamble.h.
 *
 *   driver.c      the state of the load, the real dlsym, libcuda loaded
 *                 (driver_open, driver_sym, driver_get), error names and
 *                 driver_fail, fork and reset
 *   driver_ctx.c  cuInit once, the device count, the primary contexts
 *                 (driver_bind and the rest), driver_attr and its cache
 *
 * Locking: one leaf mutex (rank DRIVER), defined in driver.c and taken
 * only through driver_init_lock_take/drop, on first-time paths of both
 * files; see driver.c for the re-entry rule it implies.
 */
#ifndef CUWARDEN_DRIVER_INT_H
#define CUWARDEN_DRIVER_INT_H

#include <stdbool.h>

#include "driver.h"

/* Declared hidden, so that the hot path reaches them without the GOT. */
#pragma GCC visibility push(hidden)

enum { LOAD_NONE = 0, LOAD_OK = 1, LOAD_FAILED = 2 };

/* ------------------------------------------------------------ "driver.c" */

/* The table, written once under the init lock, read without one once
 * driver_load_state is LOAD_OK (acquire). */
extern driver_fns_t driver_fns;
extern _Atomic int driver_load_state; /* LOAD_* */
extern _Atomic bool driver_forked;    /* set in the fork child */
/* This thread holds the init lock (see "Re-entry" in driver.c). */
extern CW_TLS bool driver_in_init;

/* Takes the init lock and marks this thread driver_in_init. */
void driver_init_lock_take(void);
/* Clears driver_in_init and drops the init lock. */
void driver_init_lock_drop(void);

/* -------------------------------------------------------- "driver_ctx.c" */

/* Forgets every primary context (no CUDA call): the fork child's. */
void driver_ctx_forget(void);
/* Forgets the contexts, the attribute cache, cuInit's result and the
 * device count.  With the init lock held. */
void driver_ctx_reset(void);

#pragma GCC visibility pop

#endif /* CUWARDEN_DRIVER_INT_H */
