/*
 * ledger.h -- addresses the driver failed to free.  At most LEDGER_MAX
 * addresses are kept; every failure is counted, and those not kept are
 * counted as overflow, so an operator can see that a process should be
 * recycled.  Owner: core.
 *
 * Who adds: exactly one place per failed driver free -- direct_free
 * (every driver free of the library and the pools goes through it) and
 * the shim (shim/classify.c, forwarding a program's own free).  cw_free does not
 * add: it records the failed_free violation only.  A second failure of an
 * address already kept counts as a failure, not as a second entry.
 */
#ifndef CUWARDEN_LEDGER_H
#define CUWARDEN_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LEDGER_MAX 4096

void ledger_add(uintptr_t address, size_t size, int kind, int cuda_error);
bool ledger_contains(uintptr_t address);
uint64_t ledger_failures(void);  /* every failed free */
uint64_t ledger_overflow(void);  /* failures not kept */
size_t ledger_size(void);        /* addresses kept now */
/* Copies up to max kept addresses; returns how many. */
size_t ledger_addresses(uintptr_t *out, size_t max);
void ledger_reset(void);
/* Fork (fork.c calls these in lock-rank order). */
void ledger_prefork(void);
void ledger_postfork_parent(void);
void ledger_postfork_child(void);

#endif /* CUWARDEN_LEDGER_H */
