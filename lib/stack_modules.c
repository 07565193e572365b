#include "preamble.h"

/*
 * stack_modules.c -- the loaded objects a stored frame fell in.
 *
 * Owns the module table (path, build-id, load base of every module a
 * stored frame fell in; strings in depot memory, so they survive dlclose
 * of the module; indices stable for the process's life), the range cache
 * (the PT_LOAD extents of the modules loaded now, sorted by address) that
 * maps an address to a module, the module cuwarden itself is linked into
 * (self_marker's), and the owner query over a stack's modules
 * (stack_first_module_outside, cached in the stack's record).
 *
 * Bounded: MODULE_MAX modules.  The range cache is rebuilt with
 * dl_iterate_phdr only when the loader's dlpi_adds / dlpi_subs moved,
 * so a module loaded at the address of an unloaded one is never taken
 * for it.
 *
 * Locking: the table and the cache change only under stackdepot.c's
 * depot_lock (they are filled from an insert); dl_iterate_phdr (the
 * loader's lock) is called under depot_lock, never the other way round.
 * Module entries are filled before the count is published (release), so
 * stack_module_get and stack_first_module_outside take no lock.
 */

#include <elf.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "stackdepot_int.h"

#define MODULE_MAX 4096
#define BUILD_ID_MAX 64                /* bytes of a build-id we keep */

typedef struct range_s {
	uintptr_t lo, hi;
	uint32_t module;
} range_t;

/* Module table (entries published by module_count). */
module_t *stack_modules;
static uint32_t module_count;
static uint32_t self_module = UINT32_MAX; /* the object holding this file */

/* Range cache of the modules loaded now; under depot_lock. */
static range_t *ranges;
static size_t nranges;
static unsigned long long seen_adds, seen_subs;
static bool ranges_valid;

bool
stack_modules_setup(void)
{
	char *p;

	if (stack_modules != NULL)
		return false;
	p = stack_map_zero((size_t)MODULE_MAX *
	    (sizeof(module_t) + sizeof(range_t)));
	if (p == NULL)
		return true;
	stack_modules = (module_t *)(void *)p;
	ranges = (range_t *)(void *)(p + (size_t)MODULE_MAX *
	    sizeof(module_t));
	return false;
}

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
		m = &stack_modules[i];
		if (m->base == base && strcmp(m->path, path) == 0 &&
		    strcmp(m->build_id, bid) == 0) {
			m->lo = lo;
			m->hi = hi;
			return i;
		}
	}
	if (n >= MODULE_MAX)
		return UINT32_MAX;
	m = &stack_modules[n];
	m->path = stack_depot_strdup(path);
	m->build_id = stack_depot_strdup(bid);
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

void
stack_ranges_refresh(void)
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

uint32_t
stack_ranges_lookup(uintptr_t addr)
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
	m = &stack_modules[index];
	out->path = m->path;
	out->build_id = m->build_id;
	out->base = m->base;
	return false;
}

/* A non-zero 32-bit key of a pattern list. */
static uint32_t
patterns_key(const char *const *patterns, size_t npatterns)
{
	uint64_t h = HASH_FNV_OFFSET ^ npatterns;

	for (size_t i = 0; i < npatterns; i++) {
		if (patterns[i] != NULL)
			h = hash_fnv_str(h, patterns[i]);
		h = hash_fnv(h, "\xff", 1); /* ("ab","c") is not ("a","bc") */
	}
	h ^= h >> 32;
	return (uint32_t)h | 1;
}

uint32_t
stack_first_module_outside(stack_id_t id, const char *const *patterns,
    size_t npatterns)
{
	srec_t *r = stack_rec(id);
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
	mods = stack_rec_mods(r);
	for (uint32_t i = 0; i < r->n && answer == UINT32_MAX; i++) {
		uint32_t m = mods[i];
		bool skip = false;

		if (m == UINT32_MAX || m == STACK_MODULE_PYTHON || m == self)
			continue;
		for (size_t k = 0; k < npatterns && !skip; k++)
			skip = patterns[k] != NULL && fnmatch(patterns[k],
			    stack_modules[m].base_name, 0) == 0;
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


size_t
stack_modules_bytes(void)
{
	return stack_module_count() * (sizeof(module_t) + sizeof(range_t));
}
