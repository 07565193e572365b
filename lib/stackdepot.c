#include "preamble.h"

/*
 * stackdepot.c -- the depot: every unique stack, kept once (stackdepot.h;
 * the other files of the module: stackdepot_int.h).
 *
 * Layout: a stack is a record (hash, chain link, depth, a cached
 * stack_first_module_outside answer, raw IPs, resolved frames) bump-
 * allocated from mmap'd chunks.  `recs[id]` points at record id (ids are
 * 1, 2, 3 ... in order of first store); `buckets[hash & mask]` holds the
 * id heading a chain linked through `next`.  All of it is allocated with
 * mmap, never malloc, and never freed: records, module paths and build-ids
 * live in depot memory, so they survive dlclose of the module.  A record's
 * frames are resolved to modules (stack_modules.c) when it is stored.
 *
 * Bounded: at most DEPOT_MAX_STACKS - 1 stacks and STACK_DEPOT_MAX_BYTES
 * of records (stackdepot.h); a program that makes ever new stacks
 * (recursion, generated code) fills it and then gets id 0 for a new
 * stack, counted in stack_dropped.  Stacks stored before stay valid.
 *
 * Invariants: a record is immutable once published except its `outside`
 * cache word (written atomically; any value it holds is a correct answer
 * for the key it carries).  A record is published by storing recs[id],
 * then the bucket head (release), then the count (release); readers load
 * the bucket head (acquire) and walk the chain with no lock.
 *
 * Locking: depot_lock (a mutex) serialises inserts, and with them the
 * module table and the range cache.  Lookups of a stack already stored
 * take no lock.  Fork: the lock is taken in prepare.
 *
 * Costs: a stack already stored costs a hash and a lock-free chain walk
 * (doc/stacks.md, "Costs (measured)").
 */

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "hash.h"
#include "mutex.h"
#include "stackdepot_int.h"

#define DEPOT_MAX_STACKS (1u << 22)  /* ids 1 .. DEPOT_MAX_STACKS - 1 */
#define SREC_BYTES(n) (((sizeof(srec_t) + (n) * (sizeof(uintptr_t) + \
	sizeof(uint32_t))) + 7) & ~(size_t)7)
#define DEPOT_BUCKETS (1u << 16)
#define DEPOT_CHUNK ((size_t)1 << 20)

static cw_mutex_t depot_lock = CW_MUTEX_INITIALIZER(LOCK_RANK_STACKDEPOT);

/* Depot (pointers published with release, read with acquire). */
static uint32_t *buckets;
static srec_t **recs;
static uint32_t nstacks;          /* ids used: 1 .. nstacks */
static size_t depot_bytes;        /* chunk bytes mmap'd (records, names) */
static size_t rec_bytes;          /* bytes of stored records */
static size_t rec_limit = STACK_DEPOT_MAX_BYTES; /* stack_set_limit */
static uint64_t dropped;          /* new stacks refused: depot full */

/* Bump allocator over mmap'd chunks; under depot_lock. */
static char *chunk_cur;
static size_t chunk_left;

/* ------------------------------------------------------------------ memory */

void *
stack_map_zero(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void *
stack_depot_alloc(size_t n)
{
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (n > chunk_left) {
		size_t sz = n > DEPOT_CHUNK ? (n + 4095) & ~(size_t)4095 :
		    DEPOT_CHUNK;
		char *c = stack_map_zero(sz);

		if (c == NULL)
			return NULL;
		__atomic_fetch_add(&depot_bytes, sz, __ATOMIC_RELAXED);
		chunk_cur = c;
		chunk_left = sz;
	}
	p = chunk_cur;
	chunk_cur += n;
	chunk_left -= n;
	return p;
}

void
stack_depot_lock(void)
{
	cw_mutex_lock(&depot_lock);
}

void
stack_depot_unlock(void)
{
	cw_mutex_unlock(&depot_lock);
}

const char *
stack_depot_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = stack_depot_alloc(n);

	if (p != NULL)
		memcpy(p, s, n);
	return p;
}

/* Maps the fixed tables once.  Under depot_lock.  Returns true on error. */
static bool
depot_setup(void)
{
	size_t sz;
	char *p;

	if (recs != NULL)
		return false;
	if (stack_modules_setup())
		return true;
	sz = (size_t)DEPOT_BUCKETS * sizeof(uint32_t) +
	    (size_t)DEPOT_MAX_STACKS * sizeof(srec_t *);
	p = stack_map_zero(sz);
	if (p == NULL)
		return true;
	__atomic_store_n(&buckets, (uint32_t *)(void *)p, __ATOMIC_RELEASE);
	p += (size_t)DEPOT_BUCKETS * sizeof(uint32_t);
	__atomic_store_n(&recs, (srec_t **)(void *)p, __ATOMIC_RELEASE);
	return false;
}

srec_t *
stack_rec(stack_id_t id)
{
	srec_t **t = __atomic_load_n(&recs, __ATOMIC_ACQUIRE);

	if (id == 0 || t == NULL ||
	    id > __atomic_load_n(&nstacks, __ATOMIC_ACQUIRE))
		return NULL;
	return t[id];
}

/* ------------------------------------------------------------------- depot */

/* One multiply per frame folds the frames in; hash_mix64 spreads the
 * result over the buckets. */
static inline uint64_t
hash_ips(const uintptr_t *ips, size_t n)
{
	uint64_t h = HASH_GOLDEN ^ n;

	for (size_t i = 0; i < n; i++) {
		h ^= (uint64_t)ips[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return hash_mix64(h);
}

static stack_id_t
lookup(uint64_t h, const uintptr_t *ips, size_t n)
{
	uint32_t *b = __atomic_load_n(&buckets, __ATOMIC_ACQUIRE);
	srec_t **t;
	uint32_t id;

	if (b == NULL)
		return 0;
	t = __atomic_load_n(&recs, __ATOMIC_ACQUIRE);
	id = __atomic_load_n(&b[h & (DEPOT_BUCKETS - 1)], __ATOMIC_ACQUIRE);
	while (id != 0) {
		const srec_t *r = t[id];

		if (r->hash == h && r->n == n &&
		    memcmp(r->ips, ips, n * sizeof(*ips)) == 0)
			return id;
		id = r->next;
	}
	return 0;
}

/* Stores a new stack.  Under depot_lock. */
static stack_id_t
insert(uint64_t h, const uintptr_t *ips, size_t n)
{
	stack_id_t id;
	srec_t *r;
	uint32_t *mods, *head;

	if (depot_setup())
		return 0;
	id = lookup(h, ips, n);
	if (id != 0)
		return id;
	if (nstacks + 1 >= DEPOT_MAX_STACKS ||
	    rec_bytes + SREC_BYTES(n) > rec_limit) {
		__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
		return 0;
	}
	r = stack_depot_alloc(SREC_BYTES(n));
	if (r == NULL)
		return 0;
	rec_bytes += SREC_BYTES(n);
	r->hash = h;
	r->n = (uint32_t)n;
	memcpy(r->ips, ips, n * sizeof(*ips));
	mods = stack_rec_mods(r);
	stack_ranges_refresh();
	for (size_t i = 0; i < n; i++) {
		/* Return addresses: the call is the byte before. */
		uintptr_t a = ips[i] != 0 ? ips[i] - 1 : 0;

		mods[i] = STACK_IS_PY(ips[i]) ? STACK_MODULE_PYTHON :
		    stack_ranges_lookup(a);
	}
	id = nstacks + 1;
	head = &buckets[h & (DEPOT_BUCKETS - 1)];
	r->next = *head;
	recs[id] = r;
	__atomic_store_n(head, id, __ATOMIC_RELEASE);
	__atomic_store_n(&nstacks, id, __ATOMIC_RELEASE);
	return id;
}

stack_id_t
stack_intern(const uintptr_t *ips, size_t n)
{
	uint64_t h;
	stack_id_t id;

	if (ips == NULL || n == 0)
		return 0;
	if (n > STACK_MAX_DEPTH)
		n = STACK_MAX_DEPTH;
	h = hash_ips(ips, n);
	id = lookup(h, ips, n);
	if (likely(id != 0))
		return id;
	cw_mutex_lock(&depot_lock);
	id = insert(h, ips, n);
	cw_mutex_unlock(&depot_lock);
	return id;
}

size_t
stack_get(stack_id_t id, stack_frame_t *frames, size_t max)
{
	const srec_t *r = stack_rec(id);
	const uint32_t *mods;
	size_t n;

	if (r == NULL)
		return 0;
	n = r->n < max ? r->n : max;
	mods = stack_rec_mods(r);
	for (size_t i = 0; i < n; i++) {
		frames[i].module = mods[i];
		frames[i].offset = mods[i] == UINT32_MAX ? r->ips[i] :
		    mods[i] == STACK_MODULE_PYTHON ?
		    r->ips[i] & ~STACK_PY_TAG :
		    r->ips[i] - stack_modules[mods[i]].base;
	}
	return n;
}

size_t
stack_get_ips(stack_id_t id, uintptr_t *ips, size_t max)
{
	const srec_t *r = stack_rec(id);
	size_t n;

	if (r == NULL)
		return 0;
	n = r->n < max ? r->n : max;
	memcpy(ips, r->ips, n * sizeof(*ips));
	return n;
}

/* Every invariant of the depot; aborts (cw_assert_fail) on a broken
 * one.  Takes the insert lock, so the depot is still while it looks. */
void
stack_validate(void)
{
	uint32_t n, nm;

	cw_mutex_lock(&depot_lock);
	n = nstacks;
	nm = (uint32_t)stack_module_count();
	for (uint32_t id = 1; id <= n; id++) {
		const srec_t *r = recs[id];
		const uint32_t *mods;
		uint32_t c;
		bool found = false;

		if (r == NULL || r->n == 0 || r->n > STACK_MAX_DEPTH ||
		    r->hash != hash_ips(r->ips, r->n))
			cw_assert_fail("stack record", __FILE__, __LINE__);
		/* Reachable from its bucket, and its chain only goes down. */
		for (c = buckets[r->hash & (DEPOT_BUCKETS - 1)]; c != 0;
		    c = recs[c]->next) {
			if (c > n)
				cw_assert_fail("stack chain", __FILE__,
				    __LINE__);
			if (c == id)
				found = true;
		}
		if (!found || (r->next != 0 && r->next >= id))
			cw_assert_fail("stack bucket", __FILE__, __LINE__);
		mods = stack_rec_mods(r);
		for (uint32_t i = 0; i < r->n; i++) {
			uintptr_t a = r->ips[i] != 0 ? r->ips[i] - 1 : 0;

			if (mods[i] == STACK_MODULE_PYTHON &&
			    STACK_IS_PY(r->ips[i]))
				continue;
			if (mods[i] != UINT32_MAX && (mods[i] >= nm ||
			    a < stack_modules[mods[i]].lo))
				cw_assert_fail("stack frame", __FILE__,
				    __LINE__);
		}
	}
	for (uint32_t m = 0; m < nm; m++)
		if (stack_modules[m].path == NULL ||
		    stack_modules[m].build_id == NULL)
			cw_assert_fail("stack module", __FILE__, __LINE__);
	cw_mutex_unlock(&depot_lock);
}

size_t
stack_count(void)
{
	return __atomic_load_n(&nstacks, __ATOMIC_ACQUIRE);
}

/* Memory in use: the chunks, the bucket array, and the used part of the
 * id index and of the module tables (the rest of their MAP_NORESERVE
 * reservations is never touched, so costs nothing). */
size_t
stack_bytes(void)
{
	size_t b = __atomic_load_n(&depot_bytes, __ATOMIC_RELAXED);

	if (__atomic_load_n(&recs, __ATOMIC_ACQUIRE) == NULL)
		return b;
	return b + (size_t)DEPOT_BUCKETS * sizeof(uint32_t) +
	    (stack_count() + 1) * sizeof(srec_t *) + stack_modules_bytes();
}

uint64_t
stack_dropped(void)
{
	return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

void
stack_set_limit(size_t bytes)
{
	cw_mutex_lock(&depot_lock);
	rec_limit = bytes < STACK_DEPOT_MAX_BYTES ? bytes :
	    STACK_DEPOT_MAX_BYTES;
	cw_mutex_unlock(&depot_lock);
}

void
stack_prefork(void)
{
	cw_mutex_prefork(&depot_lock);
}

void
stack_postfork_parent(void)
{
	cw_mutex_postfork_parent(&depot_lock);
}

void
stack_postfork_child(void)
{
	cw_mutex_postfork_child(&depot_lock);
}

