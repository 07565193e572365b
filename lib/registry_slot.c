#include "preamble.h"

/*
 * registry_slot.c -- the slot table and each stripe's hash (the layout:
 * registry_int.h).
 *
 * Owns the reservation of the slot table (made once, halved until the
 * kernel grants it), the commit of a stripe's slots in chunks of
 * CHUNK_SLOTS, the stripes' free lists (LIFO; a slot freed at SEQ_RETIRE
 * is retired instead, never reissued) and the bucket arrays of the
 * stripes' hashes by (ns, base), doubled when the load passes 1.
 *
 * Locking: everything here but the reservation runs under the stripe's H
 * lock.  The high-water mark is stored with release (registry_state reads
 * it without the lock).
 */

#include <pthread.h>
#include <sys/mman.h>

#include "log.h"
#include "registry_int.h"

#define CHUNK_SLOTS 512u              /* 512 * 88 bytes = 11 pages */
#define PSHIFT_MAX 19                 /* 2^19 slots per stripe, 2^25 in all */
#define PSHIFT_MIN 12
#define BUCKETS_MIN 1024u

char *registry_table;
unsigned registry_pshift;
bool registry_ready;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

void *
registry_map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void
registry_unmap(void *p, size_t bytes)
{
	if (p != NULL)
		munmap(p, bytes);
}

/* ------------------------------------------------------------------ init */

static void
registry_init_once(void)
{
	for (unsigned sh = PSHIFT_MAX; sh >= PSHIFT_MIN; sh--) {
		size_t bytes = ((size_t)NSTRIPES << sh) * sizeof(slot_t);
		void *p = mmap(NULL, bytes, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED) {
			registry_table = p;
			registry_pshift = sh;
			break;
		}
	}
	if (registry_table == NULL) {
		log_error("registry: cannot reserve the slot table");
		return;
	}
	registry_tomb_init();
	__atomic_store_n(&registry_ready, true, __ATOMIC_RELEASE);
}

bool
registry_init_slow(void)
{
	pthread_once(&init_once, registry_init_once);
	return !__atomic_load_n(&registry_ready, __ATOMIC_ACQUIRE);
}

/* ----------------------------------------------------------------- slots */

bool
registry_slot_alloc(stripe_t *st, unsigned s, uint32_t *out)
{
	unsigned pshift = registry_pshift;
	if (st->free_head != 0) {
		uint32_t i = st->free_head - 1;
		st->free_head = registry_slot_at(i)->hnext;
		registry_slot_at(i)->hnext = 0;
		*out = i;
		return false;
	}
	uint32_t k = st->hw;
	if (k >= (1u << pshift))
		return true;
	if (k >= st->committed) {
		uint32_t first = (s << pshift) + st->committed;
		if (mprotect(registry_slot_at(first),
		    CHUNK_SLOTS * sizeof(slot_t), PROT_READ | PROT_WRITE) != 0)
			return true;
		st->committed += CHUNK_SLOTS;
	}
	__atomic_store_n(&st->hw, k + 1, __ATOMIC_RELEASE);
	*out = (s << pshift) + k;
	return false;
}

void
registry_slot_free(stripe_t *st, uint32_t i)
{
	slot_t *sl = registry_slot_at(i);
	if (sl->seq >= SEQ_RETIRE) {
		st->retired++;
		return;
	}
	sl->hnext = st->free_head;
	st->free_head = i + 1;
}

/* ------------------------------------------------------------------ hash */

uint32_t *
registry_hash_link(stripe_t *st, unsigned ns, uintptr_t base, uint64_t h)
{
	uint32_t *link = &st->buckets[h & (st->nbuckets - 1)];
	while (*link != 0) {
		slot_t *sl = NODE(*link);
		if (sl->base == base && sl->ns == ns)
			break;
		link = &sl->hnext;
	}
	return link;
}

bool
registry_hash_reserve(stripe_t *st, uint32_t n)
{
	if (st->nbuckets != 0 && n <= st->nbuckets)
		return false;
	uint32_t nb = st->nbuckets == 0 ? BUCKETS_MIN : st->nbuckets * 2;
	uint32_t *nbk = registry_map_zeroed((size_t)nb * sizeof(uint32_t));
	if (nbk == NULL)
		return st->nbuckets == 0; /* keep the old one, longer chains */
	for (uint32_t b = 0; b < st->nbuckets; b++) {
		uint32_t n1 = st->buckets[b];
		while (n1 != 0) {
			slot_t *sl = NODE(n1);
			uint32_t next = sl->hnext;
			uint64_t h = registry_key_hash(sl->ns, sl->base);
			sl->hnext = nbk[h & (nb - 1)];
			nbk[h & (nb - 1)] = n1;
			n1 = next;
		}
	}
	registry_unmap(st->buckets, (size_t)st->nbuckets * sizeof(uint32_t));
	st->buckets = nbk;
	st->nbuckets = nb;
	return false;
}
