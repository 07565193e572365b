/*
 * sizeclass.h -- the size classes of every pool kind: a 512-byte granule
 * up to 2^lgd granules, then 2^lgd classes per doubling.  Device memory
 * takes 8 per doubling (at most 12.5 % rounding above 4 KiB); managed and
 * pinned memory take jemalloc's grid, 4 per doubling, so the rounding of
 * the thread caches costs nothing extra in jemalloc (doc/pools.md).
 * Arithmetic only: no state, no lock.  Owner: pools.
 */
#ifndef CUWARDEN_SIZECLASS_H
#define CUWARDEN_SIZECLASS_H

#include <stddef.h>

#define SIZECLASS_GRANULE ((size_t)512)
#define SIZECLASS_LGD_DEVICE 3 /* lgd of device memory */
#define SIZECLASS_LGD_HOST 2   /* lgd of managed and pinned memory */

/* The class of a request of size bytes (0 for size <= the granule). */
unsigned sizeclass_of(size_t size, unsigned lgd);
/* The bytes of class cls, a multiple of the granule. */
size_t sizeclass_size(unsigned cls, unsigned lgd);
/* size rounded up to the size of its class. */
size_t sizeclass_round(size_t size, unsigned lgd);

#endif /* CUWARDEN_SIZECLASS_H */
