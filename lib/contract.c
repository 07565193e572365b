#include "preamble.h"
/*
 * contract.c -- the checks and answers of the contracts (contract.h):
 * what a handle designates (contract_resolve), whether a range and a
 * device are valid for it, and the answer when a check fails -- the
 * violation recorded (type, api, address, stacks) and cw_last_error's
 * message, which says why in the reference model's terms (how many
 * retains and views hold the allocation).
 *
 * Owns no state.  Locking: none of its own; a violation is recorded after
 * every registry lock is dropped (the callers' callbacks have returned).
 */
#include <string.h>

#include "contract.h"
#include "driver.h"
#include "fmt.h"
#include "lasterr.h"
#include "stackdepot.h"

/* contract_violation, with an out_of_bounds's range (off, n) when
 * range is true. */
static int
violation_at(int status, vtype_t type, const char *api, uint64_t h,
    const reg_rec_t *rec, bool tomb, int cuda_error, bool range,
    size_t off, size_t n)
{
	violation_t v;

	memset(&v, 0, sizeof(v));
	v.type = type;
	v.api = api;
	v.address = rec != NULL ? rec->base : (uintptr_t)h;
	v.size = rec != NULL ? rec->size : 0;
	v.kind = rec != NULL ? rec->kind : -1;
	v.device = rec != NULL ? rec->device : -1;
	v.owner = rec != NULL ? rec->owner : 0;
	v.cuda_error = cuda_error;
	v.stack = stack_capture_outside();
	v.alloc_stack = rec != NULL ? rec->alloc_stack : 0;
	v.free_stack = rec != NULL && tomb ? rec->free_stack : 0;
	if (range) {
		v.off = off;
		v.len = n;
	}
	/* Where the phrase does not say that nothing was done. */
	if (type == V_OUT_OF_BOUNDS || type == V_FREE_WHILE_REFERENCED)
		v.outcome = V_OUTCOME_REFUSED;
	violation_record(&v);

	if (rec == NULL) {
		lasterr_set(status, api, "%s: handle %#llx %s",
		    violation_name(type), (unsigned long long)h,
		    type == V_INVALID_FREE ? "was never issued" :
		    "was freed (its tombstone is forgotten)");
	} else {
		char what[128];
		int views = (int)contract_views(rec);
		int retains = (int)rec->refcount - 1 - views;
		fmt_snprintf(what, sizeof(what), "handle %#llx (%s memory, %zu "
		    "bytes at %#lx)", (unsigned long long)h,
		    kind_name((kind_t)rec->kind), rec->size,
		    (unsigned long)rec->base);
		switch (type) {
		case V_DOUBLE_FREE:
			lasterr_set(status, api, "double_free: %s was already "
			    "freed", what);
			break;
		case V_USE_AFTER_FREE:
			lasterr_set(status, api, "use_after_free: %s was freed",
			    what);
			break;
		case V_FREE_WHILE_REFERENCED:
			lasterr_set(status, api, "free_while_referenced: %s is "
			    "held by %d retain(s) and %d view(s) besides its "
			    "owner; nothing freed", what, retains, views);
			break;
		case V_TRANSFER_WHILE_SHARED:
			lasterr_set(status, api, "transfer_while_shared: %s is "
			    "held by %d retain(s) and %d view(s) besides its "
			    "owner; owner unchanged", what, retains, views);
			break;
		case V_REFCOUNT_UNDERFLOW:
			lasterr_set(status, api, "refcount_underflow: %s has "
			    "no retained reference to release (the owner's "
			    "and the views' are not released by cw_release)",
			    what);
			break;
		case V_FAILED_FREE:
			lasterr_set(status, api, "failed_free: the driver "
			    "failed to free %s (CUresult %d); the handle is "
			    "freed, the address is in the failed-free ledger",
			    what,
			    cuda_error);
			break;
		default:
			lasterr_set(status, api, "%s: %s", violation_name(type),
			    what);
			break;
		}
	}
	cw_error_t *e = lasterr_get();
	e->rule = violation_name(type);
	e->buf = h;
	e->address = v.address;
	e->cuda_error = cuda_error;
	if (cuda_error != 0)
		e->cuda_error_name = driver_error_name((CUresult)cuda_error);
	return status;
}

int
contract_violation(int status, vtype_t type, const char *api,
    uint64_t h, const reg_rec_t *rec, bool tomb, int cuda_error)
{
	return violation_at(status, type, api, h, rec, tomb, cuda_error,
	    false, 0, 0);
}

int
contract_not_live(uint64_t h, const char *api, bool record_uaf)
{
	reg_rec_t tomb;
	bool have;

	if (h != 0 && registry_state(h) == REG_FREED) {
		have = !registry_tomb_get(h, &tomb);
		if (record_uaf)
			return contract_violation(CW_EFREED, V_USE_AFTER_FREE,
			    api, h, have ? &tomb : NULL, true, 0);
		lasterr_set(CW_EFREED, api, "handle %#llx was freed",
		    (unsigned long long)h);
		lasterr_get()->buf = h;
		if (have)
			lasterr_get()->address = tomb.base;
		return CW_EFREED;
	}
	lasterr_set(CW_EINVAL, api, "handle %#llx was never issued",
	    (unsigned long long)h);
	lasterr_get()->buf = h;
	return CW_EINVAL;
}

int
contract_check_device(int device, bool allow_cpu, const char *api)
{
	if (allow_cpu && device == CW_CPU)
		return CW_OK;
	int n = driver_device_count();
	if (n <= 0)
		return lasterr_set(CW_ENODEV, api, "no CUDA driver or no "
		    "device");
	if (device < 0 || device >= n)
		return lasterr_set(CW_ENODEV, api, "device %d: no such device "
		    "(%d present)%s", device, n,
		    allow_cpu ? ", nor CW_CPU" : "");
	return CW_OK;
}

int
contract_resolve(uint64_t h, const char *api, contract_target_t *t)
{
	reg_rec_t prec;

	if (h == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, api, "handle is CW_BUF_NONE");
	if (registry_get(h, &t->rec))
		return contract_not_live(h, api, true);
	t->addr = t->rec.base;
	t->size = t->rec.size;
	t->device = t->rec.device;
	t->view = t->rec.kind == KIND_VIEW;
	if (!t->view) {
		t->alloc = h;
		t->kind = (kind_t)t->rec.kind;
		return CW_OK;
	}
	t->alloc = t->rec.parent;
	if (registry_get(t->rec.parent, &prec))
		/* The view was freed (and its allocation) under us. */
		return contract_not_live(h, api, true);
	t->kind = (kind_t)prec.kind;
	return CW_OK;
}

int
contract_check_range(uint64_t h, const contract_target_t *t, size_t off,
    size_t n, const char *api)
{
	if (off <= t->size && n <= t->size - off)
		return CW_OK;
	violation_at(CW_EBOUNDS, V_OUT_OF_BOUNDS, api, h, &t->rec, false, 0,
	    true, off, n);
	fmt_snprintf(lasterr_get()->message, sizeof(lasterr_get()->message),
	    "out_of_bounds: [%zu, %zu + %zu) outside handle %#llx of %zu "
	    "bytes; nothing done", off, off, n, (unsigned long long)h,
	    t->size);
	return CW_EBOUNDS;
}
