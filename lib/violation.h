/*
 * violation.h -- broken contracts: one record each, with stacks.
 * The first VIOLATION_KEEP records are kept for reports; all are counted,
 * by type.  Recording logs one line through log.h and, with
 * CUWARDEN_ON_VIOLATION=abort, aborts after logging.  Owner: core.
 */
#ifndef CUWARDEN_VIOLATION_H
#define CUWARDEN_VIOLATION_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"
#include "vtypes.h"

#define VIOLATION_KEEP 4096
/* Printed as they happen, per type; the rest only counted (and kept). */
#define VIOLATION_SHOW 100

typedef enum vtype_e {
#define VTYPE_ENUM(e, name, rule, text, phrase) V_##e,
	VTYPE_LIST(VTYPE_ENUM)
#undef VTYPE_ENUM
	V_COUNT
} vtype_t;

/* What the call that broke the contract did, when its phrase (vtypes.h)
 * does not say it: the library refuses (nothing done), the shim forwards
 * the call to the driver all the same (doc/shim.md). */
typedef enum voutcome_e {
	V_OUTCOME_UNSAID = 0,
	V_OUTCOME_REFUSED,    /* nothing done */
	V_OUTCOME_FORWARDED,  /* the call went to the driver */
	V_OUTCOME_DONE        /* done all the same (the shim's free) */
} voutcome_t;

typedef struct violation_s {
	vtype_t type;
	const char *api;       /* static string: the call that broke it */
	uintptr_t address;     /* the pointer passed (shim); the allocation's
	                        * base, or the handle when never issued or
	                        * forgotten (library) */
	size_t size;           /* size of the allocation concerned, or 0 */
	int kind;              /* kind_t of the allocation, or -1 */
	int device;            /* -1 if unknown */
	owner_id_t owner;
	int cuda_error;        /* the driver's CUresult, or 0 */
	stack_id_t stack;      /* where it happened */
	stack_id_t alloc_stack;/* where the allocation was made, or 0 */
	stack_id_t free_stack; /* where it was first freed, or 0 */
	unsigned family;       /* kind -1 (an invalid free): the kinds the
	                        * call frees, one bit (1u << kind_t) each
	                        * (cuMemFree_v2: device, managed, ...;
	                        * cuMemFreeHost: pinned); 0 when unknown.
	                        * Reports name the first (violation_family) */
	size_t off, len;       /* out_of_bounds: the range [off, off + len),
	                        * from the allocation's base */
	voutcome_t outcome;
} violation_t;

/* Records v (copied), logs one line, aborts after it with
 * CUWARDEN_ON_VIOLATION=abort.  Thread-safe; never calls the driver or
 * malloc; call it with no registry lock held (never from a registry
 * callback): the output callback may call back into cuwarden. */
void violation_record(const violation_t *v);
const char *violation_name(vtype_t type); /* "double_free", ... */
/* The kind_t that names v's family (its first kind), or -1. */
int violation_family(const violation_t *v);
uint64_t violation_count(void);
/* Violations recorded but not printed (VIOLATION_SHOW per type). */
uint64_t violation_not_shown(void);
uint64_t violation_count_type(vtype_t type);
/* Calls fn on each kept record in order; non-zero stops the walk. */
int violation_foreach(int (*fn)(const violation_t *v, void *arg), void *arg);
void violation_reset(void);
void violation_prefork(void);
void violation_postfork_parent(void);
void violation_postfork_child(void);

#endif /* CUWARDEN_VIOLATION_H */
