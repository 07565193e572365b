#include "preamble.h"
/*
 * owner.c -- owners: names interned once, ids stable for the process.
 *
 * Owns: the name table (id -> name, ids 1..OWNER_MAX-1 handed out in
 * order; 0 = none), an open-addressing hash of ids keyed by name (O(1)
 * lookup), and the bytes of the names (mmap'd chunks, never moved or
 * freed until owner_reset).  No malloc: the shim interns names from hooks.
 *
 * Bounded: at most OWNER_MAX - 1 names of at most OWNER_NAME_MAX bytes;
 * a chunk is left only when the next name does not fit, so the table
 * never holds more than OWNER_BYTES_MAX (9.25 MiB: owner.h) however many
 * names are offered (owner_bytes; tests/unit/check_owner.c fills it).
 *
 * Invariants: names[id] != NULL exactly for 1 <= id <= count; a name is
 * 1..OWNER_NAME_MAX printable bytes (0x20..0x7e) and appears once; every
 * id in the hash has its name in names[].
 *
 * Locking: olock (LOCK_RANK_OWNER) serialises interning.  Readers of
 * names[] (owner_name, owner_valid) take no lock: an id is published
 * (count, release) only after its name is written.  The fast path of
 * owner_intern (name already known) probes the hash without the lock:
 * slots are written once (0 -> id, release) and never change until
 * owner_reset, which is for tests and must not race with other calls.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "hash.h"
#include "mutex.h"
#include "owner.h"

#define OWNER_HASH (2 * OWNER_MAX) /* power of two */
_Static_assert((OWNER_HASH & (OWNER_HASH - 1)) == 0,
    "OWNER_HASH is a power of two");

/* An owner_id_t is handed out as a cw_owner_t unchanged (types.h). */
_Static_assert(sizeof(owner_id_t) == sizeof(cw_owner_t) &&
    (owner_id_t)-1 == (cw_owner_t)-1 && CW_OWNER_NONE == 0,
    "owner_id_t is cw_owner_t, 0 = none");

static cw_mutex_t olock = CW_MUTEX_INITIALIZER(LOCK_RANK_OWNER);
static const char *names[OWNER_MAX];
static uint32_t hash[OWNER_HASH]; /* owner ids, 0 = empty */
static uint32_t count;            /* ids issued */
static uint32_t longest;          /* most slots a name sits past its own */

static char *chunk;     /* current chunk of name bytes */
static size_t chunk_used;
static size_t chunks;   /* chunks mapped since the last reset */

static uint64_t
hash_name(const char *s, size_t len)
{
	return hash_fnv(HASH_FNV_OFFSET, s, len);
}

/* Length of a valid name, or 0 when name is not one. */
static size_t
valid_len(const char *name)
{
	size_t n = 0;

	if (name == NULL)
		return 0;
	for (; name[n] != '\0'; n++) {
		unsigned char c = (unsigned char)name[n];
		if (n >= OWNER_NAME_MAX || c < 0x20 || c > 0x7e)
			return 0;
	}
	return n;
}

/* Probes for name; returns its id (or 0) and the slot where the walk
 * stopped (the slot to fill when 0). */
static uint32_t
lookup(const char *name, size_t len, uint64_t h, size_t *slot)
{
	size_t i = (size_t)(h & (OWNER_HASH - 1));

	for (;;) {
		uint32_t id = __atomic_load_n(&hash[i], __ATOMIC_ACQUIRE);
		if (id == 0) {
			*slot = i;
			return 0;
		}
		const char *s = names[id];
		if (strncmp(s, name, len) == 0 && s[len] == '\0') {
			*slot = i;
			return id;
		}
		i = (i + 1) & (OWNER_HASH - 1);
	}
}

static char *
store_name(const char *name, size_t len)
{
	if (chunk == NULL || chunk_used + len + 1 > OWNER_CHUNK) {
		void *p = mmap(NULL, OWNER_CHUNK, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		chunk = p;
		chunk_used = 0;
		__atomic_fetch_add(&chunks, 1, __ATOMIC_RELAXED);
	}
	char *s = chunk + chunk_used;
	memcpy(s, name, len);
	s[len] = '\0';
	chunk_used += len + 1;
	return s;
}

owner_id_t
owner_intern(const char *name)
{
	size_t len = valid_len(name);
	size_t slot;
	uint32_t id;

	if (len == 0)
		return 0;
	uint64_t h = hash_name(name, len);
	id = lookup(name, len, h, &slot);
	if (id != 0)
		return id;

	cw_mutex_lock(&olock);
	id = lookup(name, len, h, &slot); /* someone may have won the race */
	if (id == 0 && count + 1 < OWNER_MAX) {
		char *s = store_name(name, len);
		if (s != NULL) {
			id = count + 1;
			names[id] = s;
			__atomic_store_n(&count, id, __ATOMIC_RELEASE);
			__atomic_store_n(&hash[slot], id, __ATOMIC_RELEASE);
			uint32_t d = (uint32_t)((slot - (size_t)h) &
			    (OWNER_HASH - 1));
			if (d > longest)
				__atomic_store_n(&longest, d,
				    __ATOMIC_RELAXED);
		}
	}
	cw_mutex_unlock(&olock);
	return id;
}

const char *
owner_name(owner_id_t id)
{
	if (id == 0 || id > __atomic_load_n(&count, __ATOMIC_ACQUIRE))
		return NULL;
	return names[id];
}

bool
owner_valid(owner_id_t id)
{
	return id != 0 && id <= __atomic_load_n(&count, __ATOMIC_ACQUIRE);
}

size_t
owner_count(void)
{
	return __atomic_load_n(&count, __ATOMIC_ACQUIRE);
}

uint32_t
owner_longest_probe(void)
{
	return __atomic_load_n(&longest, __ATOMIC_RELAXED);
}

size_t
owner_bytes(void)
{
	return sizeof(names) + sizeof(hash) +
	    __atomic_load_n(&chunks, __ATOMIC_RELAXED) * (size_t)OWNER_CHUNK;
}

void
owner_reset(void)
{
	cw_mutex_lock(&olock);
	__atomic_store_n(&count, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&longest, 0, __ATOMIC_RELAXED);
	memset(hash, 0, sizeof(hash));
	memset(names, 0, sizeof(names));
	/* The old chunks stay mapped: a pointer returned by owner_name
	 * before the reset must not fault.  Tests reset rarely. */
	chunk = NULL;
	chunk_used = 0;
	chunks = 0;
	cw_mutex_unlock(&olock);
}

void
owner_prefork(void)
{
	cw_mutex_prefork(&olock);
}

void
owner_postfork_parent(void)
{
	cw_mutex_postfork_parent(&olock);
}

void
owner_postfork_child(void)
{
	cw_mutex_postfork_child(&olock);
}
