#include "preamble.h"
/*
 * ledger.c -- addresses the driver failed to free.
 *
 * Owns: a set of at most LEDGER_MAX addresses (open addressing, linear
 * probing, 2 * LEDGER_MAX slots, static), the count of every failure and
 * the count of failures whose address was not kept (set full).
 *
 * Invariants: nkept <= LEDGER_MAX; an address is in the table at most
 * once (a second failure of the same address is counted, not kept twice);
 * address 0 marks an empty slot (0 is never an allocation).
 *
 * Locking: one mutex (LOCK_RANK_LEDGER), a leaf: nothing is called with
 * it held.  The counters are atomics, readable without the lock.  The
 * ledger survives fork unchanged (the child reports the parent's losses
 * as its own history); the lock is re-initialised in the child through
 * ledger_postfork_child.
 */
#include <pthread.h>
#include <string.h>

#include "ledger.h"
#include "mutex.h"
#include "nowait.h"

#define LEDGER_SLOTS (2 * LEDGER_MAX) /* power of two */
_Static_assert((LEDGER_SLOTS & (LEDGER_SLOTS - 1)) == 0,
    "LEDGER_SLOTS is a power of two");

typedef struct ledger_entry_s {
	uintptr_t address;
	size_t size;
	int kind;
	int cuda_error;
} ledger_entry_t;

static cw_mutex_t llock = CW_MUTEX_INITIALIZER(LOCK_RANK_LEDGER);
static ledger_entry_t table[LEDGER_SLOTS];
static size_t nkept;
static uint64_t failures;
static uint64_t overflow;

/* A one-round mixer of its own, not hash.h's: the report lists the kept
 * addresses in slot order, so another mixer would reorder reports. */
static size_t
slot_of(uintptr_t a)
{
	uint64_t h = (uint64_t)a;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)(h & (LEDGER_SLOTS - 1));
}

/* The slot holding a, or the empty slot where it would go.  Under llock. */
static size_t
probe(uintptr_t a)
{
	size_t i = slot_of(a);

	while (table[i].address != 0 && table[i].address != a)
		i = (i + 1) & (LEDGER_SLOTS - 1);
	return i;
}

void
ledger_add(uintptr_t address, size_t size, int kind, int cuda_error)
{
	__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
	if (address == 0) {
		__atomic_fetch_add(&overflow, 1, __ATOMIC_RELAXED);
		return;
	}
	cw_mutex_lock(&llock);
	size_t i = probe(address);
	if (table[i].address == address) {
		table[i].size = size;
		table[i].kind = kind;
		table[i].cuda_error = cuda_error;
	} else if (nkept < LEDGER_MAX) {
		table[i].address = address;
		table[i].size = size;
		table[i].kind = kind;
		table[i].cuda_error = cuda_error;
		__atomic_store_n(&nkept, nkept + 1, __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_add(&overflow, 1, __ATOMIC_RELAXED);
	}
	cw_mutex_unlock(&llock);
}

bool
ledger_contains(uintptr_t address)
{
	bool found;

	if (address == 0)
		return false;
	cw_mutex_lock(&llock);
	found = table[probe(address)].address == address;
	cw_mutex_unlock(&llock);
	return found;
}

uint64_t
ledger_failures(void)
{
	return __atomic_load_n(&failures, __ATOMIC_RELAXED);
}

uint64_t
ledger_overflow(void)
{
	return __atomic_load_n(&overflow, __ATOMIC_RELAXED);
}

size_t
ledger_size(void)
{
	return __atomic_load_n(&nkept, __ATOMIC_RELAXED);
}

size_t
ledger_addresses(uintptr_t *out, size_t max)
{
	size_t n = 0;

	if (out == NULL || nowait_lock(&llock))
		return 0;
	for (size_t i = 0; i < LEDGER_SLOTS && n < max; i++)
		if (table[i].address != 0)
			out[n++] = table[i].address;
	cw_mutex_unlock(&llock);
	return n;
}

void
ledger_reset(void)
{
	cw_mutex_lock(&llock);
	memset(table, 0, sizeof(table));
	__atomic_store_n(&nkept, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&failures, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&overflow, 0, __ATOMIC_RELAXED);
	cw_mutex_unlock(&llock);
}

void
ledger_prefork(void)
{
	cw_mutex_prefork(&llock);
}

void
ledger_postfork_parent(void)
{
	cw_mutex_postfork_parent(&llock);
}

void
ledger_postfork_child(void)
{
	cw_mutex_postfork_child(&llock);
}
