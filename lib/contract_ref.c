#include "preamble.h"
/*
 * contract_ref.c -- the reference model (contract.h, doc/contracts.md):
 * references (retain, release), owners (transfer, set), views' references
 * on their allocations, and the check of a free.
 *
 * Invariants:
 *   - an allocation's refcount is 1 (its owner's) + cw_retain's not yet
 *     released + its live views, and its aux counts the live views (so
 *     cw_release never takes a view's reference); a view's own refcount
 *     stays 1;
 *   - a live view's allocation is live (the view's reference keeps it);
 *   - a refused call changes nothing: every check is made inside the
 *     registry_update / registry_remove callback that would make the
 *     change, under the record's lock, so it is atomic with respect to
 *     other threads.
 *
 * Owns no state.  Locking: none of its own.  The callbacks only read and
 * write the record (never call out); violations are recorded and stacks
 * captured after the callback returns.
 */
#include "contract.h"
#include "fmt.h"
#include "lasterr.h"
#include "owner.h"

/* registry_update / registry_remove answers of our callbacks (> 0). */
enum {
	CB_OK = 0,
	CB_REFUSED = 1, /* the contract refused; record copied to ctx */
	CB_VIEW = 2,    /* the handle is a view: act on its allocation */
	CB_FOREIGN = 3, /* not an allocation made by cw_alloc */
	CB_OVERFLOW = 4 /* refcount would overflow */
};

typedef struct cb_ctx_s {
	reg_rec_t rec;   /* the record as the callback saw it */
	owner_id_t to;   /* contract_transfer / contract_set_owner target */
} cb_ctx_t;

/* ------------------------------------------------------------ callbacks */

static int
check_free_cb(reg_rec_t *rec, void *arg)
{
	cb_ctx_t *c = arg;

	c->rec = *rec;
	if (!(rec->flags & REC_F_LIBRARY))
		return CB_FOREIGN;
	if (rec->kind != KIND_VIEW && rec->refcount > 1)
		return CB_REFUSED;
	return CB_OK;
}

static int
retain_cb(reg_rec_t *rec, void *arg)
{
	cb_ctx_t *c = arg;

	c->rec = *rec;
	if (rec->kind == KIND_VIEW)
		return CB_VIEW;
	if (rec->refcount >= INT32_MAX)
		return CB_OVERFLOW;
	rec->refcount++;
	return CB_OK;
}

static int
release_cb(reg_rec_t *rec, void *arg)
{
	cb_ctx_t *c = arg;

	c->rec = *rec;
	if (rec->kind == KIND_VIEW)
		return CB_VIEW;
	/* Neither the owner's reference nor a view's is the caller's. */
	if ((int64_t)rec->refcount <= 1 + (int64_t)contract_views(rec))
		return CB_REFUSED;
	rec->refcount--;
	return CB_OK;
}

static int
transfer_cb(reg_rec_t *rec, void *arg)
{
	cb_ctx_t *c = arg;
	owner_id_t to = c->to;

	c->rec = *rec;
	if (rec->kind == KIND_VIEW)
		return CB_VIEW;
	if (rec->refcount > 1)
		return CB_REFUSED;
	rec->owner = to;
	return CB_OK;
}

static int
set_owner_cb(reg_rec_t *rec, void *arg)
{
	cb_ctx_t *c = arg;

	c->rec = *rec;
	if (rec->kind == KIND_VIEW)
		return CB_VIEW;
	rec->owner = c->to;
	rec->flags |= REC_F_ANNOTATED;
	return CB_OK;
}

/* Takes a view's reference on its allocation. */
static int
ref_cb(reg_rec_t *rec, void *arg)
{
	cb_ctx_t *c = arg;

	c->rec = *rec;
	if (rec->refcount >= INT32_MAX)
		return CB_OVERFLOW;
	rec->refcount++;
	rec->aux++;
	return CB_OK;
}

/* Drops a view's reference on its allocation. */
static int
unref_cb(reg_rec_t *rec, void *arg)
{
	(void)arg;
	if (rec->refcount > 1)
		rec->refcount--;
	if (rec->aux > 0)
		rec->aux--;
	return CB_OK;
}

/* Runs cb on h, or on h's allocation when h is a view.  Returns the
 * callback's answer or -1/-2 (not live); *acted = the handle acted on. */
static int
update_through_view(uint64_t h, reg_update_fn cb, cb_ctx_t *c,
    uint64_t *acted)
{
	int r = registry_update(h, cb, c);

	*acted = h;
	if (r == CB_VIEW) {
		*acted = c->rec.parent;
		r = registry_update(c->rec.parent, cb, c);
	}
	return r;
}

/* ----------------------------------------------------------- operations */

int
contract_retain(uint64_t h, const char *api)
{
	cb_ctx_t c;
	uint64_t acted;

	if (h == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, api, "handle is CW_BUF_NONE");
	int r = update_through_view(h, retain_cb, &c, &acted);
	if (r < 0)
		return contract_not_live(acted, api, true);
	if (r == CB_OVERFLOW)
		return lasterr_set(CW_EINVAL, api, "handle %#llx: too many "
		    "references", (unsigned long long)h);
	return CW_OK;
}

int
contract_release(uint64_t h, const char *api)
{
	cb_ctx_t c;
	uint64_t acted;

	if (h == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, api, "handle is CW_BUF_NONE");
	int r = update_through_view(h, release_cb, &c, &acted);
	if (r < 0)
		return contract_not_live(acted, api, true);
	if (r == CB_REFUSED)
		return contract_violation(CW_ECONTRACT, V_REFCOUNT_UNDERFLOW,
		    api, acted, &c.rec, false, 0);
	return CW_OK;
}

int
contract_transfer(uint64_t h, owner_id_t to, const char *api)
{
	cb_ctx_t c;
	uint64_t acted;

	if (h == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, api, "handle is CW_BUF_NONE");
	if (to != CW_OWNER_NONE && !owner_valid(to))
		return lasterr_set(CW_EINVAL, api, "owner %u is not "
		    "registered", (unsigned)to);
	c.to = to;
	int r = update_through_view(h, transfer_cb, &c, &acted);
	if (r < 0)
		return contract_not_live(acted, api, true);
	if (r == CB_REFUSED)
		return contract_violation(CW_ECONTRACT,
		    V_TRANSFER_WHILE_SHARED, api, acted, &c.rec, false, 0);
	return CW_OK;
}

int
contract_set_owner(uint64_t h, owner_id_t owner, const char *api)
{
	cb_ctx_t c;
	uint64_t acted;

	c.to = owner;
	int r = update_through_view(h, set_owner_cb, &c, &acted);
	if (r < 0)
		return contract_not_live(acted, api, false);
	return CW_OK;
}

int
contract_remove(uint64_t h, stack_id_t st, const char *api,
    reg_rec_t *out)
{
	cb_ctx_t c;
	reg_rec_t tomb;

	int r = registry_remove(h, check_free_cb, &c, st, out);
	if (r == -1 || r == -2) {
		if (r == -1 && !registry_tomb_get(h, &tomb))
			return contract_violation(CW_EFREED, V_DOUBLE_FREE,
			    api, h, &tomb, true, 0);
		if (r == -1)
			return contract_violation(CW_EFREED, V_DOUBLE_FREE,
			    api, h, NULL, true, 0);
		return contract_violation(CW_EINVAL, V_INVALID_FREE, api, h,
		    NULL, false, 0);
	}
	if (r == CB_FOREIGN) {
		contract_violation(CW_EINVAL, V_INVALID_FREE, api, h, &c.rec,
		    false, 0);
		fmt_snprintf(lasterr_get()->message,
		    sizeof(lasterr_get()->message), "invalid_free: %#lx was "
		    "allocated by %s, not by cw_alloc: free it with the "
		    "driver", (unsigned long)c.rec.base,
		    c.rec.api ? c.rec.api : "?");
		return CW_EINVAL;
	}
	if (r == CB_REFUSED)
		return contract_violation(CW_ECONTRACT,
		    V_FREE_WHILE_REFERENCED, api, h, &c.rec, false, 0);
	return CW_OK;
}

int
contract_view_ref(uint64_t h, reg_handle_t alloc, const char *api,
    reg_rec_t *arec)
{
	cb_ctx_t c;

	int r = registry_update(alloc, ref_cb, &c);
	if (r < 0)
		return contract_not_live(h, api, true);
	if (r == CB_OVERFLOW)
		return lasterr_set(CW_EINVAL, api, "handle %#llx: too many "
		    "references", (unsigned long long)h);
	*arec = c.rec;
	return CW_OK;
}

void
contract_view_unref(reg_handle_t alloc)
{
	registry_update(alloc, unref_cb, NULL);
}
