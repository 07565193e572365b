#include "preamble.h"

/*
 * stackdepot.c -- call stacks, captured raw and kept once.
 *
 * Owns: the depot (every unique stack, its raw return addresses and its
 * frames resolved to (module, offset)), the module table (path, build-id,
 * load base of every module a stored frame fell in), and the range cache
 * that maps an address to a module.
 *
 * Layout: a stack is a record (hash, chain link, depth, a cached
 * stack_first_module_outside answer, raw IPs, resolved frames) bump-
 * allocated from mmap'd chunks.  `recs[id]` points at record id (ids are
 * 1, 2, 3 ... in order of first store); `buckets[hash & mask]` holds the
 * id heading a chain linked through `next`.  All of it is allocated with
 * mmap, never malloc, and never freed: records, module paths and build-ids
 * live in depot memory, so they survive dlclose of the module.
 *
 * Bounded: at most DEPOT_MAX_STACKS - 1 stacks and STACK_DEPOT_MAX_BYTES
 * of records (stackdepot.h), plus MODULE_MAX modules; a program that
 * makes ever new stacks (recursion, generated code) fills it and then
 * gets id 0 for a new stack, counted in stack_dropped.  Stacks stored
 * before stay valid.
 *
 * Invariants: a record is immutable once published except its `outside`
 * cache word (written atomically; any value it holds is a correct answer
 * for the key it carries).  A record is published by storing recs[id],
 * then the bucket head (release), then the count (release); readers load
 * the bucket head (acquire) and walk the chain with no lock.  Module
 * entries are likewise filled before module_count is published.
 *
 * Locking: depot_lock (a mutex) serialises inserts, the module table and
 * the range cache.  Lookups of a stack already stored take no lock.  A new
 * stack calls dl_iterate_phdr (the loader's lock) under depot_lock, never
 * the other way round.  Fork: the lock is taken in prepare.
 *
 * Costs: a capture is unw_backtrace (libunwind's cached frame walk) plus
 * a hash and a lock-free chain walk.  The first capture on a thread lets
 * libunwind set up its per-thread cache (which may allocate); later
 * captures do not call malloc (tests/unit/check_stackdepot.c checks it).
 */

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <elf.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hash.h"
#include "options.h"
#include "stackdepot.h"

#define DEPOT_MAX_STACKS (1u << 22)  /* ids 1 .. DEPOT_MAX_STACKS - 1 */
#define SREC_BYTES(n) (((sizeof(srec_t) + (n) * (sizeof(uintptr_t) + \
	sizeof(uint32_t))) + 7) & ~(size_t)7)
#define DEPOT_BUCKETS (1u << 16)
#define DEPOT_CHUNK ((size_t)1 << 20)
#define MODULE_MAX 4096
#define SKIP_MAX 32
#define BUILD_ID_MAX 64                /* bytes of a build-id we keep */

typedef struct srec_s {
	uint64_t hash;
	uint32_t next;        /* next id in the bucket's chain, 0 = end */
	uint32_t n;           /* frames */
	uint64_t outside;     /* atomic: key << 32 | answer, 0 = none */
	uintptr_t ips[];      /* n raw addresses, then n module indices */
} srec_t;

typedef struct module_s {
	const char *path;
	const char *base_name; /* within path */
	const char *build_id;
	uintptr_t base;        /* load bias (dlpi_addr) */
	uintptr_t lo, hi;      /* PT_LOAD extent when last seen */
} module_t;

typedef struct range_s {
	uintptr_t lo, hi;
	uint32_t module;
} range_t;

static pthread_mutex_t depot_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* Module table (entries published by module_count). */
static module_t *modules;
static uint32_t module_count;
static uint32_t self_module = UINT32_MAX; /* the object holding this file */

/* Range cache of the modules loaded now; under depot_lock. */
static range_t *ranges;
static size_t nranges;
static unsigned long long seen_adds, seen_subs;
static bool ranges_valid;

/* ------------------------------------------------------------------ memory */

static void *
map_zero(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Allocates n bytes (8-aligned) of depot memory.  Under depot_lock. */
static void *
depot_alloc(size_t n)
{
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (n > chunk_left) {
		size_t sz = n > DEPOT_CHUNK ? (n + 4095) & ~(size_t)4095 :
		    DEPOT_CHUNK;
		char *c = map_zero(sz);

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

static const char *
depot_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = depot_alloc(n);

	if (p != NULL)
		memcpy(p, s, n);
	return p;
}

/* Maps the fixed tables once.  Under depot_lock.  Returns true on error. */
static bool
depot_setup(void)
{
	size_t sz;

	if (recs != NULL)
		return false;
	sz = (size_t)DEPOT_BUCKETS * sizeof(uint32_t) +
	    (size_t)DEPOT_MAX_STACKS * sizeof(srec_t *) +
	    (size_t)MODULE_MAX * (sizeof(module_t) + sizeof(range_t));
	{
		char *p = map_zero(sz);

		if (p == NULL)
			return true;
		__atomic_store_n(&buckets, (uint32_t *)p, __ATOMIC_RELEASE);
		p += (size_t)DEPOT_BUCKETS * sizeof(uint32_t);
		modules = (module_t *)p;
		p += (size_t)MODULE_MAX * sizeof(module_t);
		ranges = (range_t *)p;
		p += (size_t)MODULE_MAX * sizeof(range_t);
		__atomic_store_n(&recs, (srec_t **)p, __ATOMIC_RELEASE);
	}
	return false;
}

/* The module index of each frame (UINT32_MAX = none); offsets are not
 * stored: address - the module's base. */
static inline uint32_t *
rec_mods(const srec_t *r)
{
	return (uint32_t *)(uintptr_t)(r->ips + r->n);
}

static inline srec_t *
rec_get(stack_id_t id)
{
	srec_t **t = __atomic_load_n(&recs, __ATOMIC_ACQUIRE);

	if (id == 0 || t == NULL ||
	    id > __atomic_load_n(&nstacks, __ATOMIC_ACQUIRE))
		return NULL;
	return t[id];
}

/* ----------------------------------------------------------------- modules */

/* Lowercase hex of the GNU build-id note of a loaded object, or "". */
static void
find_build_id(const struct dl_phdr_info *info, char *hex, size_t size)
{
	hex[0] = '\0';
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(uintptr_t)p;
			const char *name = p + sizeof(*nh);
			const unsigned char *desc = (const unsigned char *)
			    name + ((nh->n_namesz + 3) & ~3u);

			if ((const char *)desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID &&
			    nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
				size_t n = nh->n_descsz;

				if (n > BUILD_ID_MAX)
					n = BUILD_ID_MAX;
				if (2 * n + 1 > size)
					n = (size - 1) / 2;
				for (size_t k = 0; k < n; k++) {
					hex[2 * k] = "0123456789abcdef"
					    [desc[k] >> 4];
					hex[2 * k + 1] = "0123456789abcdef"
					    [desc[k] & 15];
				}
				hex[2 * n] = '\0';
				return;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

/* The index of the module (path, base, build-id), added if new.  Under
 * depot_lock.  UINT32_MAX when the table is full. */
static uint32_t
module_find_or_add(const char *path, uintptr_t base, const char *bid,
    uintptr_t lo, uintptr_t hi)
{
	uint32_t n = module_count;
	module_t *m;
	const char *slash;

	for (uint32_t i = 0; i < n; i++) {
		m = &modules[i];
		if (m->base == base && strcmp(m->path, path) == 0 &&
		    strcmp(m->build_id, bid) == 0) {
			m->lo = lo;
			m->hi = hi;
			return i;
		}
	}
	if (n >= MODULE_MAX)
		return UINT32_MAX;
	m = &modules[n];
	m->path = depot_strdup(path);
	m->build_id = depot_strdup(bid);
	if (m->path == NULL || m->build_id == NULL)
		return UINT32_MAX;
	slash = strrchr(m->path, '/');
	m->base_name = slash != NULL ? slash + 1 : m->path;
	m->base = base;
	m->lo = lo;
	m->hi = hi;
	__atomic_store_n(&module_count, n + 1, __ATOMIC_RELEASE);
	return n;
}

static void
self_marker(void)
{
}

typedef struct rebuild_s {
	bool first;
	char exe[PATH_MAX];
} rebuild_t;

static int
rebuild_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	rebuild_t *rb = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	char bid[2 * BUILD_ID_MAX + 1];
	const char *path = info->dlpi_name;
	uintptr_t self = (uintptr_t)&self_marker;
	uint32_t idx;
	bool first = rb->first;

	(void)size;
	rb->first = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (lo >= hi || nranges >= MODULE_MAX)
		return 0;
	if (path == NULL || path[0] == '\0')
		path = first ? rb->exe : "";
	find_build_id(info, bid, sizeof(bid));
	idx = module_find_or_add(path, info->dlpi_addr, bid, lo, hi);
	if (idx == UINT32_MAX)
		return 0;
	if (self >= lo && self < hi)
		self_module = idx;
	/* Insertion sort by lo (a few hundred modules at most). */
	{
		size_t k = nranges++;

		while (k > 0 && ranges[k - 1].lo > lo) {
			ranges[k] = ranges[k - 1];
			k--;
		}
		ranges[k].lo = lo;
		ranges[k].hi = hi;
		ranges[k].module = idx;
	}
	return 0;
}

typedef struct counters_s {
	unsigned long long adds, subs;
} counters_t;

static int
counters_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	counters_t *c = arg;

	if (size < offsetof(struct dl_phdr_info, dlpi_subs) +
	    sizeof(info->dlpi_subs))
		return 1;
	c->adds = info->dlpi_adds;
	c->subs = info->dlpi_subs;
	return 1;
}

/* Brings the range cache up to date with the loaded modules.  Under
 * depot_lock. */
static void
ranges_refresh(void)
{
	counters_t c = { 0, 0 };
	static rebuild_t rb; /* PATH_MAX: not on the caller's stack */
	ssize_t n;

	dl_iterate_phdr(counters_cb, &c);
	if (ranges_valid && c.adds == seen_adds && c.subs == seen_subs)
		return;
	n = readlink("/proc/self/exe", rb.exe, sizeof(rb.exe) - 1);
	rb.exe[n > 0 ? n : 0] = '\0';
	rb.first = true;
	nranges = 0;
	dl_iterate_phdr(rebuild_cb, &rb);
	seen_adds = c.adds;
	seen_subs = c.subs;
	ranges_valid = true;
}

/* The module holding addr, UINT32_MAX if none.  Under depot_lock. */
static uint32_t
ranges_lookup(uintptr_t addr)
{
	size_t lo = 0, hi = nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= ranges[lo - 1].hi)
		return UINT32_MAX;
	return ranges[lo - 1].module;
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
	r = depot_alloc(SREC_BYTES(n));
	if (r == NULL)
		return 0;
	rec_bytes += SREC_BYTES(n);
	r->hash = h;
	r->n = (uint32_t)n;
	memcpy(r->ips, ips, n * sizeof(*ips));
	mods = rec_mods(r);
	ranges_refresh();
	for (size_t i = 0; i < n; i++) {
		/* Return addresses: the call is the byte before. */
		uintptr_t a = ips[i] != 0 ? ips[i] - 1 : 0;

		mods[i] = ranges_lookup(a);
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
	pthread_mutex_lock(&depot_lock);
	id = insert(h, ips, n);
	pthread_mutex_unlock(&depot_lock);
	return id;
}

/* The capture itself, inlined into each public entry point so that
 * unw_backtrace's frame 0 is always that entry point's own frame. */
static inline __attribute__((always_inline)) stack_id_t
capture(unsigned skip, long long depth)
{
	void *buf[STACK_MAX_DEPTH + SKIP_MAX + 2];
	long long opt = options_get(OPT_STACK_DEPTH);
	unsigned first;
	int n;

	if (depth > opt)
		depth = opt;
	if (depth <= 0)
		return 0;
	if (depth > STACK_MAX_DEPTH)
		depth = STACK_MAX_DEPTH;
	if (skip > SKIP_MAX)
		skip = SKIP_MAX;
	/* Frame 0 is the entry point itself (unw_backtrace starts at its
	 * caller's own frame). */
	first = skip + 1;
	n = unw_backtrace(buf, (int)(depth + first));
	if (n <= (int)first)
		return 0;
	return stack_intern((const uintptr_t *)(uintptr_t)(buf + first),
	    (size_t)n - first);
}

__attribute__((noinline)) stack_id_t
stack_capture(unsigned skip)
{
	return capture(skip, STACK_MAX_DEPTH);
}

__attribute__((noinline)) stack_id_t
stack_capture_depth(unsigned skip, unsigned depth)
{
	return capture(skip, depth);
}

size_t
stack_get(stack_id_t id, stack_frame_t *frames, size_t max)
{
	const srec_t *r = rec_get(id);
	const uint32_t *mods;
	size_t n;

	if (r == NULL)
		return 0;
	n = r->n < max ? r->n : max;
	mods = rec_mods(r);
	for (size_t i = 0; i < n; i++) {
		frames[i].module = mods[i];
		frames[i].offset = mods[i] == UINT32_MAX ? r->ips[i] :
		    r->ips[i] - modules[mods[i]].base;
	}
	return n;
}

size_t
stack_get_ips(stack_id_t id, uintptr_t *ips, size_t max)
{
	const srec_t *r = rec_get(id);
	size_t n;

	if (r == NULL)
		return 0;
	n = r->n < max ? r->n : max;
	memcpy(ips, r->ips, n * sizeof(*ips));
	return n;
}

size_t
stack_module_count(void)
{
	return __atomic_load_n(&module_count, __ATOMIC_ACQUIRE);
}

bool
stack_module_get(uint32_t index, stack_module_t *out)
{
	const module_t *m;

	if (index >= __atomic_load_n(&module_count, __ATOMIC_ACQUIRE))
		return true;
	m = &modules[index];
	out->path = m->path;
	out->build_id = m->build_id;
	out->base = m->base;
	return false;
}

/* A non-zero 32-bit key of a pattern list. */
static uint32_t
patterns_key(const char *const *patterns, size_t npatterns)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ npatterns;

	for (size_t i = 0; i < npatterns; i++) {
		for (const char *s = patterns[i]; s != NULL && *s; s++)
			h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL;
	}
	h ^= h >> 32;
	return (uint32_t)h | 1;
}

uint32_t
stack_first_module_outside(stack_id_t id, const char *const *patterns,
    size_t npatterns)
{
	srec_t *r = rec_get(id);
	uint32_t key, self, answer = UINT32_MAX;
	const uint32_t *mods;
	uint64_t c;

	if (r == NULL)
		return UINT32_MAX;
	key = patterns_key(patterns, npatterns);
	c = __atomic_load_n(&r->outside, __ATOMIC_RELAXED);
	if ((uint32_t)(c >> 32) == key)
		return (uint32_t)c;
	self = __atomic_load_n(&self_module, __ATOMIC_RELAXED);
	mods = rec_mods(r);
	for (uint32_t i = 0; i < r->n && answer == UINT32_MAX; i++) {
		uint32_t m = mods[i];
		bool skip = false;

		if (m == UINT32_MAX || m == self)
			continue;
		for (size_t k = 0; k < npatterns && !skip; k++)
			skip = patterns[k] != NULL && fnmatch(patterns[k],
			    modules[m].base_name, 0) == 0;
		if (!skip)
			answer = m;
	}
	__atomic_store_n(&r->outside, (uint64_t)key << 32 | answer,
	    __ATOMIC_RELAXED);
	return answer;
}

/* The index of the module containing cuwarden itself (the object this
 * file is linked into), UINT32_MAX before any stack was stored. */
uint32_t
stack_self_module(void)
{
	return __atomic_load_n(&self_module, __ATOMIC_RELAXED);
}

/* Every invariant of the depot; aborts (cw_assert_fail) on a broken
 * one.  Takes the insert lock, so the depot is still while it looks. */
void
stack_validate(void)
{
	uint32_t n, nm;

	pthread_mutex_lock(&depot_lock);
	n = nstacks;
	nm = module_count;
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
		mods = rec_mods(r);
		for (uint32_t i = 0; i < r->n; i++) {
			uintptr_t a = r->ips[i] != 0 ? r->ips[i] - 1 : 0;

			if (mods[i] != UINT32_MAX && (mods[i] >= nm ||
			    a < modules[mods[i]].lo))
				cw_assert_fail("stack frame", __FILE__,
				    __LINE__);
		}
	}
	for (uint32_t m = 0; m < nm; m++)
		if (modules[m].path == NULL || modules[m].build_id == NULL)
			cw_assert_fail("stack module", __FILE__, __LINE__);
	pthread_mutex_unlock(&depot_lock);
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
	    (stack_count() + 1) * sizeof(srec_t *) +
	    stack_module_count() * (sizeof(module_t) + sizeof(range_t));
}

uint64_t
stack_dropped(void)
{
	return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

void
stack_set_limit(size_t bytes)
{
	pthread_mutex_lock(&depot_lock);
	rec_limit = bytes < STACK_DEPOT_MAX_BYTES ? bytes :
	    STACK_DEPOT_MAX_BYTES;
	pthread_mutex_unlock(&depot_lock);
}

void
stack_prefork(void)
{
	pthread_mutex_lock(&depot_lock);
}

void
stack_postfork_parent(void)
{
	pthread_mutex_unlock(&depot_lock);
}

void
stack_postfork_child(void)
{
	pthread_mutex_init(&depot_lock, NULL);
}
