/*
 * jemalloc_private.h -- the renamed jemalloc API.  The build links
 * lib/libjemalloc_private.a: Debian's libjemalloc_pic.a with every public
 * non-je_ name renamed to cw_je_* and every symbol kept out of the
 * dynamic table (lib/Makemodule.am), so the host program's malloc stays
 * its own.  Only these names may be called; <jemalloc/jemalloc.h> is
 * included for the types (extent_hooks_t) and macros (MALLOCX_*) only:
 * calling malloc/mallocx from it would reach glibc or fail to link.
 * Owner: pools.
 */
#ifndef CUWARDEN_JEMALLOC_PRIVATE_H
#define CUWARDEN_JEMALLOC_PRIVATE_H

#include <stddef.h>

#include <jemalloc/jemalloc.h>

void *cw_je_mallocx(size_t size, int flags);
void cw_je_dallocx(void *ptr, int flags);
size_t cw_je_sallocx(const void *ptr, int flags);
int cw_je_mallctl(const char *name, void *oldp, size_t *oldlenp,
    void *newp, size_t newlen);

#endif /* CUWARDEN_JEMALLOC_PRIVATE_H */
