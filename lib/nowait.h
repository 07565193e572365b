/*
 * nowait.h -- a report written on a thread that must not block.
 *
 * A program's signal handler may call exit() while the signal interrupted
 * one of the shim's wrappers on the same thread, in the middle of an
 * engine call holding one of our locks (a registry stripe, the stack
 * depot, the pools).  That lock is never released: the exit report must
 * not wait for it.  While the report is written in that state
 * (nowait_begin), the lock acquisitions on the report's path go through
 * nowait_lock: it tries for a bounded number of attempts (yielding
 * between them, so another thread's short hold passes) and gives up; the
 * part that needed the lock is left out and counted (nowait_skipped),
 * and the report says so.  Outside that state nowait_lock is
 * cw_mutex_lock (its tries are trylocks: not checked against the rank
 * order, which the interrupted wrapper's held lock may break).
 * Owner: infra.
 */
#ifndef CUWARDEN_NOWAIT_H
#define CUWARDEN_NOWAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "mutex.h"

/* The report about to be written on a thread that may hold our locks. */
void nowait_begin(void);
void nowait_end(void);
bool nowait_active(void);
/* Takes m.  Returns true if it was not taken (nowait_active only: the
 * caller leaves its part out); counts the part skipped. */
bool nowait_lock(cw_mutex_t *m);
/* A part left out without trying (nowait_active). */
void nowait_skip(void);
/* Parts left out since nowait_begin. */
uint64_t nowait_skipped(void);

#endif /* CUWARDEN_NOWAIT_H */
