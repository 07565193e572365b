#include "preamble.h"
/*
 * hostpool.c -- pinned and managed pools over private jemalloc arenas
 * (hostpool.h).
 *
 * Owns: one arena per pool (created lazily, destroyed by trim), the
 * extent hooks, the sorted table of segments the hooks got from the
 * provider, and the arena's metadata blocks (anonymous memory).
 * Invariants: every extent jemalloc holds lies inside one segment (merge
 * refused across them); reserved == sum of segment sizes; allocated ==
 * bytes of blocks live in the arena.
 * Locking: arena_lock (rwlock): read for mallocx/dallocx, write for arena
 * create/destroy; seg_lock (mutex, leaf) for the segment table, never
 * held across a provider call.  jemalloc calls the hooks with its own
 * locks held and with arena_lock held for reading.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fmt.h"
#include "hostpool.h"
#include "jemalloc_private.h"
#include "log.h"
#include "mutex.h"
#include "nowait.h"

typedef struct hseg_s {
	uintptr_t base;   /* as the provider gave it */
	size_t size;
	uintptr_t lo, hi; /* the range handed to jemalloc */
} hseg_t;

struct hostpool_s {
	extent_hooks_t hooks; /* first: the hooks find the pool from it */
	hostpool_provider_t prov;
	size_t limit, grow_limit;
	cw_rwlock_t arena_lock;
	unsigned arena;
	bool have_arena;
	cw_mutex_t seg_lock;
	hseg_t *segs;
	size_t nsegs, cap;
	size_t reserved;  /* atomic */
	size_t allocated; /* atomic */
	uint64_t seg_allocs, seg_frees, arenas_created;
	uint64_t meta_maps, meta_unmaps;
};

#define PAGE ((size_t)4096)

static hostpool_t *
hp_of(extent_hooks_t *h)
{
	return (hostpool_t *)(void *)h;
}

/* Index of the segment containing a, or nsegs.  seg_lock held. */
static size_t
seg_find(hostpool_t *hp, uintptr_t a)
{
	size_t lo = 0, hi = hp->nsegs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (hp->segs[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return hp->nsegs;
	hseg_t *s = &hp->segs[lo - 1];
	return a < s->hi ? lo - 1 : hp->nsegs;
}

static bool
seg_add(hostpool_t *hp, const hseg_t *s)
{
	bool err = false;
	cw_mutex_lock(&hp->seg_lock);
	if (hp->nsegs == hp->cap) {
		size_t nc = hp->cap ? hp->cap * 2 : 16;
		hseg_t *n = realloc(hp->segs, nc * sizeof(*n));
		if (n == NULL) {
			err = true;
			goto out;
		}
		hp->segs = n;
		hp->cap = nc;
	}
	size_t i = 0;
	while (i < hp->nsegs && hp->segs[i].lo < s->lo)
		i++;
	memmove(&hp->segs[i + 1], &hp->segs[i],
	    (hp->nsegs - i) * sizeof(*s));
	hp->segs[i] = *s;
	hp->nsegs++;
out:
	cw_mutex_unlock(&hp->seg_lock);
	return err;
}

/* ---------------------------------------------------------------- hooks */

/* jemalloc 5.3 asks the hooks for its metadata (base) blocks with
 * HUGEPAGE alignment and for data with PAGE alignment (retain grows in
 * PAGE-aligned steps whatever the blocks' alignment).  Metadata is served
 * from anonymous host memory, never from the provider: jemalloc writes
 * it on every allocation, and managed memory must not be touched by the
 * host while a kernel runs on devices without concurrent managed access.
 * (An arena's metadata stays on the hooks it was created with: arena_make
 * passes ours.) */
#define META_ALIGN ((size_t)2 << 20)

static void *
meta_map(hostpool_t *hp, size_t size, size_t alignment, bool *zero,
    bool *commit)
{
	if (size == 0 || size > SIZE_MAX - alignment)
		return NULL;
	size_t span = size + alignment;
	unsigned char *m = mmap(NULL, span, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	uintptr_t lo = ((uintptr_t)m + alignment - 1) &
	    ~(uintptr_t)(alignment - 1);
	size_t head = lo - (uintptr_t)m, tail = span - head - size;
	if (head != 0)
		munmap(m, head);
	if (tail != 0)
		munmap((void *)(lo + size), tail);
	__atomic_fetch_add(&hp->meta_maps, 1, __ATOMIC_RELAXED);
	*zero = true; /* fresh anonymous pages */
	*commit = true;
	return (void *)lo;
}

static void *
h_alloc(extent_hooks_t *h, void *new_addr, size_t size, size_t alignment,
    bool *zero, bool *commit, unsigned arena_ind)
{
	(void)arena_ind;
	hostpool_t *hp = hp_of(h);
	if (new_addr != NULL)
		return NULL; /* cannot grow in place */
	if (alignment >= META_ALIGN)
		return meta_map(hp, size, alignment, zero, commit);
	size_t extra = alignment > PAGE ? alignment : 0;
	size_t want = size + extra;
	size_t res = __atomic_load_n(&hp->reserved, __ATOMIC_RELAXED);
	if (hp->limit != 0 && res + want > hp->limit)
		return NULL;
	uintptr_t base;
	__atomic_fetch_add(&hp->seg_allocs, 1, __ATOMIC_RELAXED);
	if (hp->prov.seg_alloc(hp->prov.arg, want, &base))
		return NULL;
	uintptr_t lo = (base + alignment - 1) & ~(uintptr_t)(alignment - 1);
	if (lo + size > base + want) {
		__atomic_fetch_add(&hp->seg_frees, 1, __ATOMIC_RELAXED);
		hp->prov.seg_free(hp->prov.arg, base, want);
		return NULL;
	}
	hseg_t s = { base, want, lo, lo + size };
	if (seg_add(hp, &s)) {
		__atomic_fetch_add(&hp->seg_frees, 1, __ATOMIC_RELAXED);
		hp->prov.seg_free(hp->prov.arg, base, want);
		return NULL;
	}
	__atomic_fetch_add(&hp->reserved, want, __ATOMIC_RELAXED);
	if (*zero)
		memset((void *)lo, 0, size); /* host-addressable kinds */
	*commit = true;
	return (void *)lo;
}

/* Data extents: opt out (retained; the segments are released whole after
 * the arena is destroyed).  Metadata blocks (meta_map's, given back only
 * when the arena is destroyed): unmapped. */
static bool
h_dalloc(extent_hooks_t *h, void *addr, size_t size, bool committed,
    unsigned arena_ind)
{
	(void)committed, (void)arena_ind;
	hostpool_t *hp = hp_of(h);
	uintptr_t a = (uintptr_t)addr;
	if (a % META_ALIGN != 0 || size % META_ALIGN != 0)
		return true;
	cw_mutex_lock(&hp->seg_lock);
	bool data = seg_find(hp, a) != hp->nsegs;
	cw_mutex_unlock(&hp->seg_lock);
	if (data || munmap(addr, size) != 0)
		return true;
	__atomic_fetch_add(&hp->meta_unmaps, 1, __ATOMIC_RELAXED);
	return false;
}

static void
h_destroy(extent_hooks_t *h, void *addr, size_t size, bool committed,
    unsigned arena_ind)
{
	/* Segments are released by hostpool_trim/destroy after the arena
	 * is gone, whole, whatever pieces jemalloc reports here. */
	(void)h, (void)addr, (void)size, (void)committed, (void)arena_ind;
}

static bool
h_commit(extent_hooks_t *h, void *addr, size_t size, size_t offset,
    size_t length, unsigned arena_ind)
{
	(void)h, (void)addr, (void)size, (void)offset, (void)length;
	(void)arena_ind;
	return false; /* always committed */
}

static bool
h_refuse(extent_hooks_t *h, void *addr, size_t size, size_t offset,
    size_t length, unsigned arena_ind)
{
	(void)h, (void)addr, (void)size, (void)offset, (void)length;
	(void)arena_ind;
	return true; /* decommit / purge: refused */
}

static bool
h_split(extent_hooks_t *h, void *addr, size_t size, size_t size_a,
    size_t size_b, bool committed, unsigned arena_ind)
{
	(void)h, (void)addr, (void)size, (void)size_a, (void)size_b;
	(void)committed, (void)arena_ind;
	return false; /* bookkeeping only */
}

static bool
h_merge(extent_hooks_t *h, void *addr_a, size_t size_a, void *addr_b,
    size_t size_b, bool committed, unsigned arena_ind)
{
	(void)size_a, (void)committed, (void)arena_ind;
	hostpool_t *hp = hp_of(h);
	uintptr_t a = (uintptr_t)addr_a, b = (uintptr_t)addr_b;
	cw_mutex_lock(&hp->seg_lock);
	size_t i = seg_find(hp, a);
	bool refuse = i == hp->nsegs || b + size_b > hp->segs[i].hi ||
	    b < hp->segs[i].lo;
	cw_mutex_unlock(&hp->seg_lock);
	return refuse;
}

static const extent_hooks_t hooks_template = {
	.alloc = h_alloc,
	.dalloc = h_dalloc,
	.destroy = h_destroy,
	.commit = h_commit,
	.decommit = h_refuse,
	.purge_lazy = h_refuse,
	.purge_forced = h_refuse,
	.split = h_split,
	.merge = h_merge,
};

/* ---------------------------------------------------------------- arena */

static int
arena_ctl_set(unsigned arena, const char *leaf, void *val, size_t len)
{
	char name[64];
	fmt_snprintf(name, sizeof(name), "arena.%u.%s", arena, leaf);
	return cw_je_mallctl(name, NULL, NULL, val, len);
}

/* arena_lock held for writing.  Returns true on error. */
static bool
arena_make(hostpool_t *hp)
{
	unsigned idx;
	size_t len = sizeof(idx);
	/* Created with our hooks: they serve its data from the provider and
	 * its metadata from anonymous memory (META_ALIGN), so destroying
	 * the arena unmaps the metadata too.  (With jemalloc's own hooks
	 * and retain, each destroyed arena's metadata stayed mapped.) */
	extent_hooks_t *hk = &hp->hooks;
	int r = cw_je_mallctl("arenas.create", &idx, &len, &hk, sizeof(hk));
	if (r != 0) {
		log_warn("pool: jemalloc arenas.create failed (%d)", r);
		return true;
	}
	size_t gl = hp->grow_limit;
	if (arena_ctl_set(idx, "retain_grow_limit", &gl, sizeof(gl)) != 0)
		log_debug(1, "pool: retain_grow_limit not set");
	ssize_t never = -1;
	arena_ctl_set(idx, "dirty_decay_ms", &never, sizeof(never));
	arena_ctl_set(idx, "muzzy_decay_ms", &never, sizeof(never));
	hp->arena = idx;
	hp->have_arena = true;
	__atomic_fetch_add(&hp->arenas_created, 1, __ATOMIC_RELAXED);
	return false;
}

hostpool_t *
hostpool_create(const hostpool_provider_t *prov, size_t limit,
    size_t grow_limit)
{
	hostpool_t *hp = calloc(1, sizeof(*hp));
	if (hp == NULL)
		return NULL;
	hp->hooks = hooks_template;
	hp->prov = *prov;
	hp->limit = limit;
	hp->grow_limit = grow_limit ? grow_limit : ((size_t)16 << 20);
	cw_rwlock_init(&hp->arena_lock, LOCK_RANK_HOSTPOOL_ARENA);
	cw_mutex_init(&hp->seg_lock, LOCK_RANK_HOSTPOOL_SEG);
	return hp;
}

void
hostpool_set_limit(hostpool_t *hp, size_t limit)
{
	hp->limit = limit;
}

bool
hostpool_alloc(hostpool_t *hp, size_t size, uintptr_t *addr, size_t *bsize)
{
	cw_rwlock_rdlock(&hp->arena_lock);
	if (!hp->have_arena) {
		cw_rwlock_unlock(&hp->arena_lock);
		cw_rwlock_wrlock(&hp->arena_lock);
		bool err = !hp->have_arena && arena_make(hp);
		cw_rwlock_unlock(&hp->arena_lock);
		if (err)
			return true;
		cw_rwlock_rdlock(&hp->arena_lock);
		if (!hp->have_arena) {
			cw_rwlock_unlock(&hp->arena_lock);
			return true;
		}
	}
	/* 512-byte alignment: poolmap's granule.  It also keeps jemalloc's
	 * cache-oblivious offset of large blocks a multiple of 512. */
	int flags = MALLOCX_ARENA(hp->arena) | MALLOCX_TCACHE_NONE |
	    MALLOCX_ALIGN(512);
	void *p = cw_je_mallocx(size, flags);
	size_t bs = p != NULL ? cw_je_sallocx(p, flags) : 0;
	cw_rwlock_unlock(&hp->arena_lock);
	if (p == NULL)
		return true;
	__atomic_fetch_add(&hp->allocated, bs, __ATOMIC_RELAXED);
	*addr = (uintptr_t)p;
	*bsize = bs;
	return false;
}

void
hostpool_free(hostpool_t *hp, uintptr_t addr, size_t bsize)
{
	cw_rwlock_rdlock(&hp->arena_lock);
	bsize = cw_je_sallocx((void *)addr, MALLOCX_TCACHE_NONE);
	cw_je_dallocx((void *)addr, MALLOCX_TCACHE_NONE);
	cw_rwlock_unlock(&hp->arena_lock);
	__atomic_fetch_sub(&hp->allocated, bsize, __ATOMIC_RELAXED);
}

/* Takes the segment table out of hp (arena_lock held for writing). */
static hseg_t *
take_segments(hostpool_t *hp, size_t *n)
{
	cw_mutex_lock(&hp->seg_lock);
	hseg_t *segs = hp->segs;
	*n = hp->nsegs;
	hp->segs = NULL;
	hp->nsegs = hp->cap = 0;
	cw_mutex_unlock(&hp->seg_lock);
	return segs;
}

/* Gives segments back to the provider, no lock of ours held. */
static size_t
free_segments(hostpool_t *hp, hseg_t *segs, size_t n)
{
	size_t bytes = 0;
	for (size_t i = 0; i < n; i++) {
		bytes += segs[i].size;
		__atomic_fetch_add(&hp->seg_frees, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&hp->reserved, segs[i].size,
		    __ATOMIC_RELAXED);
		hp->prov.seg_free(hp->prov.arg, segs[i].base, segs[i].size);
	}
	free(segs);
	return bytes;
}

static void
arena_destroy(hostpool_t *hp)
{
	char name[64];
	fmt_snprintf(name, sizeof(name), "arena.%u.destroy", hp->arena);
	int r = cw_je_mallctl(name, NULL, NULL, NULL, 0);
	if (r != 0)
		log_warn("pool: jemalloc %s failed (%d)", name, r);
	hp->have_arena = false;
}

size_t
hostpool_trim(hostpool_t *hp)
{
	hseg_t *segs = NULL;
	size_t n = 0;
	cw_rwlock_wrlock(&hp->arena_lock);
	if (hp->have_arena &&
	    __atomic_load_n(&hp->allocated, __ATOMIC_RELAXED) == 0) {
		arena_destroy(hp);
		segs = take_segments(hp, &n);
	}
	cw_rwlock_unlock(&hp->arena_lock);
	return free_segments(hp, segs, n);
}

bool
hostpool_locked(hostpool_t *hp)
{
	if (nowait_lock(&hp->seg_lock))
		return true;
	cw_mutex_unlock(&hp->seg_lock);
	return false;
}

void
hostpool_stats(hostpool_t *hp, hostpool_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	cw_mutex_lock(&hp->seg_lock);
	out->segments = hp->nsegs;
	for (size_t i = 0; i < hp->nsegs; i++)
		if (hp->segs[i].size > out->largest_segment)
			out->largest_segment = hp->segs[i].size;
	cw_mutex_unlock(&hp->seg_lock);
	out->reserved = __atomic_load_n(&hp->reserved, __ATOMIC_RELAXED);
	out->allocated = __atomic_load_n(&hp->allocated, __ATOMIC_RELAXED);
	out->seg_allocs = __atomic_load_n(&hp->seg_allocs, __ATOMIC_RELAXED);
	out->seg_frees = __atomic_load_n(&hp->seg_frees, __ATOMIC_RELAXED);
	out->arenas_created = __atomic_load_n(&hp->arenas_created,
	    __ATOMIC_RELAXED);
	out->meta_maps = __atomic_load_n(&hp->meta_maps, __ATOMIC_RELAXED);
	out->meta_unmaps = __atomic_load_n(&hp->meta_unmaps,
	    __ATOMIC_RELAXED);
}

void
hostpool_destroy(hostpool_t *hp)
{
	if (hp == NULL)
		return;
	size_t n;
	cw_rwlock_wrlock(&hp->arena_lock);
	if (hp->have_arena)
		arena_destroy(hp);
	hseg_t *segs = take_segments(hp, &n);
	cw_rwlock_unlock(&hp->arena_lock);
	free_segments(hp, segs, n);
	cw_rwlock_destroy(&hp->arena_lock);
	cw_mutex_destroy(&hp->seg_lock);
	free(hp);
}

bool
hostpool_segment_of(hostpool_t *hp, uintptr_t addr, uintptr_t *base,
    size_t *size)
{
	cw_mutex_lock(&hp->seg_lock);
	size_t i = seg_find(hp, addr);
	bool miss = i == hp->nsegs;
	if (!miss) {
		*base = hp->segs[i].lo;
		*size = hp->segs[i].hi - hp->segs[i].lo;
	}
	cw_mutex_unlock(&hp->seg_lock);
	return miss;
}

const char *
hostpool_jemalloc_version(void)
{
	const char *v = NULL;
	size_t len = sizeof(v);
	if (cw_je_mallctl("version", &v, &len, NULL, 0) != 0)
		return NULL;
	return v;
}
