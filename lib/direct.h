/*
 * direct.h -- allocation straight from the driver, one call per
 * allocation, for each public kind (device: cuMemAlloc_v2, managed:
 * cuMemAllocManaged(CU_MEM_ATTACH_GLOBAL), pinned: cuMemHostAlloc(
 * CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)).  The pools get
 * their segments here, and CUWARDEN_POOL=0 sends every cw_alloc here.
 * Binds the device's primary context first (driver_bind_save) and puts
 * the calling thread's previous context back afterwards (driver_restore),
 * in the library and in the shim alike (doc/driver.md).  Owner: driver.
 */
#ifndef CUWARDEN_DIRECT_H
#define CUWARDEN_DIRECT_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* Returns CW_OK with *addr set, or CW_ENOMEM / CW_ECUDA / CW_ENODEV /
 * CW_EINVAL with cw_last_error filled (cuda_error, requested). */
int direct_alloc(kind_t kind, int device, size_t size, uintptr_t *addr);
/* Frees what direct_alloc returned.  A driver failure returns CW_ECUDA
 * (cuda_error in cw_last_error) and adds the address to the failed-free
 * ledger; the memory is then considered lost.  Callers must NOT add it to
 * the ledger again: direct_free is the only place that does.  In a forked
 * child (driver_postfork_child) it frees nothing and returns CW_ENODEV. */
int direct_free(kind_t kind, int device, uintptr_t addr, size_t size);

#endif /* CUWARDEN_DIRECT_H */
