/*
 * types.h -- the glossary: the nouns of cuwarden, one line each, and the
 * small types every module shares.  Use these words and only these
 * (doc/design.md points here).
 *
 *   allocation  one block handed to a program: base, size, kind, device.
 *   kind        what the driver made it with (kind_t below, kinds.h).
 *   segment     memory a pool got from the driver, carved into allocations.
 *   block       a piece of a segment: free or handed out as an allocation.
 *   owner       who must free an allocation: a registered name (library) or
 *               the shared object that asked for it (shim).
 *   reference   a holder besides the owner (cw_retain); a view holds one.
 *   view        a non-owning byte range of an allocation.
 *   violation   a broken contract, recorded with stacks (violation.h).
 *   leak        an allocation still live at exit or at a report.
 *   stack       a call stack, captured raw, kept once in the stack depot.
 *   tombstone   what is kept of a freed allocation, to tell a double free
 *               from an invalid one.
 *   context     a CUDA context (CUcontext); primary = the one per device.
 *   fence       what keeps freed memory from reuse until the device work
 *               submitted before the free has finished.
 *   GPU page    2 MiB, the driver's allocation granularity; "page" alone
 *               means a host page (4 KiB).
 */
#ifndef CUWARDEN_TYPES_H
#define CUWARDEN_TYPES_H

#include <stdint.h>

#include "kinds.h"

/* Every kind an allocation can have, in KIND_LIST's order (kinds.h: the
 * one table of kinds).  The first three equal cw_kind_t. */
typedef enum kind_e {
#define KIND_ENUM(e, name, leaks, host, line, rule, text) KIND_##e,
	KIND_LIST(KIND_ENUM)
#undef KIND_ENUM
	KIND_COUNT
} kind_t;

/* KIND_DEVICE .. KIND_PINNED: the kinds of the public cw_kind_t. */
#define KIND_PUBLIC_COUNT 3

/* The report's name of a kind ("device", "managed", ...; "unknown" out of
 * range). */
static inline const char *
kind_name(kind_t kind)
{
	static const char *const names[KIND_COUNT] = {
#define KIND_NAME(e, name, leaks, host, line, rule, text) [KIND_##e] = name,
		KIND_LIST(KIND_NAME)
#undef KIND_NAME
	};
	if ((unsigned)kind >= KIND_COUNT)
		return "unknown";
	return names[kind];
}

/* Key namespaces of the registry: values of different namespaces never
 * collide (a VMM handle may equal a device address). */
typedef enum ns_e {
	NS_ADDR = 0,  /* device, managed, pinned, registered, async, IPC: by address */
	NS_VMM = 1,   /* physical handles (CUmemGenericAllocationHandle) */
	NS_VA = 2,    /* reservations, by start address */
	NS_MAP = 3,   /* mappings, by mapped address */
	NS_ARRAY = 4, /* CUarray / CUmipmappedArray handles */
	NS_NONE = 5,  /* not keyed (views): reached by handle only */
	NS_COUNT
} ns_t;

typedef uint32_t stack_id_t; /* 0 = no stack */
typedef uint32_t owner_id_t; /* 0 = no owner; same space as cw_owner_t */

#endif /* CUWARDEN_TYPES_H */
