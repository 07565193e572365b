#include "preamble.h"
/*
 * pool.c -- the front of the pools (pool.h).  This first version passes
 * every call straight to direct.h (one driver call per allocation); the
 * pooled engines land behind the same functions.
 * Invariants: none kept here yet.  Locking: none.
 */
#include <string.h>

#include "direct.h"
#include "lasterr.h"
#include "options.h"
#include "pool.h"

int
pool_alloc(kind_t kind, int device, size_t size, uintptr_t *addr,
    unsigned *flags)
{
	int st = direct_alloc(kind, device, size, addr);
	if (st == CW_OK && flags != NULL)
		*flags = POOL_F_OWN_SEGMENT;
	return st;
}

int
pool_free(kind_t kind, int device, uintptr_t addr, size_t size)
{
	return direct_free(kind, device, addr, size);
}

int
pool_free_async(kind_t kind, int device, uintptr_t addr, size_t size,
    CUstream stream)
{
	(void)stream;
	return direct_free(kind, device, addr, size);
}

bool
pool_block_of(uintptr_t addr, uintptr_t *base, size_t *size,
    unsigned *flags)
{
	(void)addr;
	(void)base;
	(void)size;
	(void)flags;
	return true;
}

size_t
pool_cached_bytes(int device)
{
	(void)device;
	return 0;
}

int
pool_trim(int device)
{
	(void)device;
	return CW_OK;
}

void
pool_stats(kind_t kind, cw_pool_stats_t *out)
{
	(void)kind;
	memset(out, 0, sizeof(*out));
}

bool
pool_enabled(void)
{
	return options_get_bool(OPT_POOL);
}

void
pool_prefork(void)
{
}

void
pool_postfork_parent(void)
{
}

void
pool_postfork_child(void)
{
}

void
pool_reset(void)
{
}
