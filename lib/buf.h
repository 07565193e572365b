/*
 * buf.h -- the contract logic behind the cw_* handle functions, shared by
 * buf.c (the public calls), xfer.c, advise.c and annotate.c (the
 * annotations, which the shim also serves).  Handles are registry
 * handles.  Every function here sets cw_last_error on failure and, where
 * doc/contracts.md says so, records a violation under api.  Owner: core.
 */
#ifndef CUWARDEN_BUF_H
#define CUWARDEN_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "registry.h"
#include "types.h"
#include "violation.h"

/* What a handle designates, resolved through views: [addr, addr + size)
 * of the allocation alloc (a view's own range; bounds are the view's). */
typedef struct buf_target_s {
	uintptr_t addr;     /* start of the handle's range */
	size_t size;        /* the handle's size (a view's length) */
	kind_t kind;        /* the allocation's kind */
	int device;         /* the allocation's device */
	reg_handle_t alloc; /* the allocation (== the handle unless a view) */
	bool view;
	reg_rec_t rec;      /* the handle's own record */
} buf_target_t;

/* Resolves h for a data/hint call.  A freed handle is a use_after_free
 * violation (CW_EFREED), one never issued CW_EINVAL (no violation). */
int buf_resolve(uint64_t h, const char *api, buf_target_t *t);
/* Checks [off, off + n) against t; outside (or off + n overflowing) is an
 * out_of_bounds violation, CW_EBOUNDS. */
int buf_check_range(uint64_t h, const buf_target_t *t, size_t off,
    size_t n, const char *api);

/* The contract operations on a live handle (an allocation, or a view,
 * which acts on its allocation).  api names the caller in violations. */
int buf_retain(uint64_t h, const char *api);
int buf_release(uint64_t h, const char *api);
int buf_transfer(uint64_t h, owner_id_t to, const char *api);
/* Sets the owner without contract checks (cw_annotate_owner) and marks
 * the record annotated. */
int buf_set_owner(uint64_t h, owner_id_t owner, const char *api);

/* Records a violation of type for handle h (record rec, a tombstone when
 * tomb, or NULL) and sets cw_last_error; returns status. */
int buf_violation(int status, vtype_t type, const char *api, uint64_t h,
    const reg_rec_t *rec, bool tomb, int cuda_error);
/* The answer for a handle that is not live: use_after_free (when
 * record_uaf) or plain CW_EFREED for a freed one, CW_EINVAL for one never
 * issued. */
int buf_not_live(uint64_t h, const char *api, bool record_uaf);

/* CW_OK if device is an ordinal of a present device (or CW_CPU when
 * allow_cpu); CW_ENODEV otherwise, with cw_last_error set. */
int buf_check_device(int device, bool allow_cpu, const char *api);

#endif /* CUWARDEN_BUF_H */
