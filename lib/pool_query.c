#include "preamble.h"
/*
 * pool_query.c -- the pools' answers about addresses and bytes, for the
 * shim's pool mode (pool.h: pool_block_of, pool_segment_of,
 * pool_cached_bytes; doc/pools.md "Pool mode queries").
 *
 * Owns no state.  pool_block_of reads the address map (poolmap.c) and,
 * for a device block too big for the map's size field (POOLMAP_F_HUGE),
 * asks the device engine; pool_segment_of asks each pool's engine
 * whether a segment of it holds the address; pool_cached_bytes is what
 * the device and managed pools of a device reserve and do not hand out.
 * Invariants: only blocks handed out are found (a free clears the map
 * entry first); sizes are the requested size rounded up to 512 bytes.
 *
 * Locking: no lock for an answer from the map; the engines are asked
 * under each pool's lock in turn (slow paths of the shim only).
 */
#include <pthread.h>

#include "devpool.h"
#include "hostpool.h"
#include "mutex.h"
#include "pool_int.h"
#include "poolmap.h"

bool
pool_block_of(uintptr_t addr, uintptr_t *base, size_t *size,
    unsigned *flags)
{
	uintptr_t b;
	size_t s;
	unsigned k, f;
	if (poolmap_lookup(addr, &b, &s, &k, &f))
		return true;
	if ((f & POOLMAP_F_HUGE) && k == KIND_DEVICE) {
		for (int d = 0; d < POOL_MAX_DEVICES; d++) {
			pool_t *p = pool_arena_at(KIND_DEVICE, d,
			    POOLMAP_ARENA_OF(f));
			if (p == NULL)
				continue;
			cw_mutex_lock(&p->lock);
			bool miss = devpool_block_of(p->dp, addr, &b, &s, &f);
			cw_mutex_unlock(&p->lock);
			if (!miss)
				goto hit;
		}
		return true;
	}
hit:
	if (base != NULL)
		*base = b;
	if (size != NULL)
		*size = s;
	if (flags != NULL)
		*flags = f & POOL_F_OWN_SEGMENT;
	return false;
}

bool
pool_segment_of(uintptr_t addr, kind_t *kind)
{
	static const kind_t kinds[] = { KIND_DEVICE, KIND_MANAGED,
		KIND_PINNED };

	if (!poolmap_page_held(addr))
		return true;
	for (size_t i = 0; i < CW_ARRAY_SIZE(kinds); i++)
		for (int d = 0; d < POOL_MAX_DEVICES; d++) {
			pool_t *p;
			FOR_ARENAS(p, kinds[i], d) {
				uintptr_t b;
				size_t s;
				cw_mutex_lock(&p->lock);
				bool miss = p->dp != NULL ?
				    devpool_segment_of(p->dp, addr) :
				    p->hp == NULL ||
				    hostpool_segment_of(p->hp, addr, &b, &s);
				cw_mutex_unlock(&p->lock);
				if (!miss) {
					if (kind != NULL)
						*kind = kinds[i];
					return false;
				}
			}
		}
	return true;
}

size_t
pool_cached_bytes(int device)
{
	if (device < 0 || device >= POOL_MAX_DEVICES || !pool_enabled())
		return 0;
	size_t cached = 0;
	kind_t kinds[2] = { KIND_DEVICE, KIND_MANAGED };
	for (int i = 0; i < 2; i++) {
		pool_t *p, *any = NULL;
		size_t res = 0;
		FOR_ARENAS(p, kinds[i], device) {
			cw_mutex_lock(&p->lock);
			res += pool_eng_reserved(p);
			cw_mutex_unlock(&p->lock);
			any = p;
		}
		if (any == NULL)
			continue;
		uint64_t a = pool_allocated_now(any);
		if (res > a)
			cached += res - (size_t)a;
	}
	return cached;
}
