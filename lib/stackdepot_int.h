/*
 * stackdepot_int.h -- the stack depot's internals, shared by its files
 * and nobody else; the contract is stackdepot.h, the design and the
 * measured costs doc/stacks.md.  Include it after preamble.h.
 *
 *   stackdepot.c     the depot: records, the hash of stacks, ids, limits,
 *                    stack_intern, stack_get, validation, fork
 *   stack_modules.c  the module table, the range cache of the modules
 *                    loaded now, cuwarden's own module, owners
 *                    (stack_first_module_outside)
 *   stack_capture.c  the capture (libunwind), Python frames merged in
 *   stack_python.c   the Python frames of this thread (CPython 3.11,
 *                    3.12, 3.13) and their locations
 *
 * Locking: stackdepot.c's depot_lock serialises inserts, the module
 * table and the range cache: every function below that says "under
 * depot_lock" is called from an insert.  Lookups of a stack already
 * stored, of a module already published, take no lock.
 */
#ifndef CUWARDEN_STACKDEPOT_INT_H
#define CUWARDEN_STACKDEPOT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stackdepot.h"

#pragma GCC visibility push(hidden)

/* ------------------------------------------------------ "stackdepot.c" */

typedef struct srec_s {
	uint64_t hash;
	uint32_t next;        /* next id in the bucket's chain, 0 = end */
	uint32_t n;           /* frames */
	uint64_t outside;     /* atomic: key << 32 | answer, 0 = none */
	uintptr_t ips[];      /* n raw addresses, then n module indices */
} srec_t;

/* The module index of each frame (UINT32_MAX = none); offsets are not
 * stored: address - the module's base. */
static inline uint32_t *
stack_rec_mods(const srec_t *r)
{
	return (uint32_t *)(uintptr_t)(r->ips + r->n);
}

/* The record of a stored stack, NULL for 0 or an unknown id.  No lock. */
srec_t *stack_rec(stack_id_t id);
/* Zeroed memory (MAP_NORESERVE), NULL when out of memory. */
void *stack_map_zero(size_t size);
/* n bytes (8-aligned) of depot memory, never freed; a copy of s in it.
 * NULL when out of memory.  Under depot_lock. */
void *stack_depot_alloc(size_t n);
const char *stack_depot_strdup(const char *s);
/* The insert lock, for stack_python.c's tables. */
void stack_depot_lock(void);
void stack_depot_unlock(void);

/* --------------------------------------------------- "stack_modules.c" */

typedef struct module_s {
	const char *path;
	const char *base_name; /* within path */
	const char *build_id;
	uintptr_t base;        /* load bias (dlpi_addr) */
	uintptr_t lo, hi;      /* PT_LOAD extent when last seen */
} module_t;

/* The module table: entries below stack_module_count() are published. */
extern module_t *stack_modules;

/* Maps the module table and the range cache once.  Under depot_lock.
 * Returns true on error. */
bool stack_modules_setup(void);
/* Brings the range cache up to date with the loaded modules (adding
 * modules to the table as they are first seen).  Under depot_lock. */
void stack_ranges_refresh(void);
/* The module holding addr, UINT32_MAX if none.  Under depot_lock. */
uint32_t stack_ranges_lookup(uintptr_t addr);
/* The bytes of the module table and range cache in use. */
size_t stack_modules_bytes(void);

/* ---------------------------------------------------- "stack_python.c" */

/* This thread's Python frames, innermost first, as tokens (STACK_PY_TAG |
 * location id), at most max; ends[] receives the end (exclusive index) of
 * each run of frames that one _PyEval_EvalFrameDefault call runs, at most
 * maxends.  0 when the thread runs no Python code or frames are off. */
size_t stack_python_capture(uintptr_t *out, size_t max, uint16_t *ends,
    size_t *nends, size_t maxends);
/* Turns Python frames off and on again (benchmarks, tests). */
void stack_python_set_enabled(bool on);
/* Whether return address ret is in _PyEval_EvalFrameDefault. */
bool stack_python_is_eval(uintptr_t ret);
/* The location table: maps it once (true on success); interns a location
 * (under the depot's lock; 0 when full). */
bool stack_pyloc_setup(void);
uint32_t stack_pyloc_intern(const char *file, const char *func, int line);
/* The line of code unit addr from a 3.11-3.13 location table. */
int stack_py_line(const uint8_t *table, size_t len, int firstline,
    unsigned addr);

#pragma GCC visibility pop

#endif /* CUWARDEN_STACKDEPOT_INT_H */
