/*
 * contract.h -- the contracts on handles (doc/contracts.md): what a handle
 * designates through views, the checks of a call (handle, device, range),
 * the answers and violations when one fails, and the reference model --
 * references, owners, views -- as changes of registry records checked and
 * made in one step.  Shared by the public calls (buf.c, xfer.c, advise.c,
 * api.c) and the annotations (annotate.c, which the shim also serves).
 *
 * Handles are registry handles.  An allocation of cw_alloc is an NS_ADDR
 * record {base, size, kind, device, owner, refcount, aux = its live views,
 * REC_F_LIBRARY (| REC_F_POOLED)}; a view is an NS_NONE record {base = its
 * absolute address, size = its length, kind KIND_VIEW, parent = the
 * allocation (never another view), aux = its offset in the allocation,
 * device, owner, refcount 1, REC_F_LIBRARY}.
 *
 * Every function here sets cw_last_error on failure and, where
 * doc/contracts.md says so, records a violation under api.  Owner: core.
 */
#ifndef CUWARDEN_CONTRACT_H
#define CUWARDEN_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "registry.h"
#include "types.h"
#include "violation.h"

/* What a handle designates, resolved through views: [addr, addr + size)
 * of the allocation alloc (a view's own range; bounds are the view's). */
typedef struct contract_target_s {
	uintptr_t addr;     /* start of the handle's range */
	size_t size;        /* the handle's size (a view's length) */
	kind_t kind;        /* the allocation's kind */
	int device;         /* the allocation's device */
	reg_handle_t alloc; /* the allocation (== the handle unless a view) */
	bool view;
	reg_rec_t rec;      /* the handle's own record */
} contract_target_t;

/* ------------------------------------------------------- "contract.c" */

/* Resolves h for a data/hint call.  A freed handle is a use_after_free
 * violation (CW_EFREED), one never issued CW_EINVAL (no violation). */
int contract_resolve(uint64_t h, const char *api, contract_target_t *t);
/* Checks [off, off + n) against t; outside (or off + n overflowing) is an
 * out_of_bounds violation, CW_EBOUNDS. */
int contract_check_range(uint64_t h, const contract_target_t *t,
    size_t off, size_t n, const char *api);
/* CW_OK if device is an ordinal of a present device (or CW_CPU when
 * allow_cpu); CW_ENODEV otherwise, with cw_last_error set. */
int contract_check_device(int device, bool allow_cpu, const char *api);

/* Records a violation of type for handle h (record rec, a tombstone when
 * tomb, or NULL) and sets cw_last_error; returns status. */
int contract_violation(int status, vtype_t type, const char *api,
    uint64_t h, const reg_rec_t *rec, bool tomb, int cuda_error);
/* The answer for a handle that is not live: use_after_free (when
 * record_uaf) or plain CW_EFREED for a freed one, CW_EINVAL for one never
 * issued. */
int contract_not_live(uint64_t h, const char *api, bool record_uaf);

/* --------------------------------------------------- "contract_ref.c" */

/* The live views of the allocation of record rec (0 for any other). */
static inline uintptr_t
contract_views(const reg_rec_t *rec)
{
	return (rec->flags & REC_F_LIBRARY) ? rec->aux : 0;
}

/* The contract operations on a live handle (an allocation, or a view,
 * which acts on its allocation).  api names the caller in violations. */
int contract_retain(uint64_t h, const char *api);
int contract_release(uint64_t h, const char *api);
int contract_transfer(uint64_t h, owner_id_t to, const char *api);
/* Sets the owner without contract checks (cw_annotate_owner) and marks
 * the record annotated. */
int contract_set_owner(uint64_t h, owner_id_t owner, const char *api);

/* Removes the record of h, freed at stack st, if the contract lets it be
 * freed: CW_OK with the record in *out.  Otherwise the answer of
 * invalid_free, double_free or free_while_referenced, nothing changed.
 * A view's reference on its allocation stays: contract_view_unref. */
int contract_remove(uint64_t h, stack_id_t st, const char *api,
    reg_rec_t *out);
/* Takes a view's reference on allocation alloc, the target of handle h:
 * CW_OK with the allocation's record in *arec; CW_EINVAL when it would
 * overflow, or the answer for h not live. */
int contract_view_ref(uint64_t h, reg_handle_t alloc, const char *api,
    reg_rec_t *arec);
/* Drops a view's reference on allocation alloc. */
void contract_view_unref(reg_handle_t alloc);

#endif /* CUWARDEN_CONTRACT_H */
