#include "preamble.h"
/*
 * annotate.c -- cw_annotate_owner / _retain / _release / _transfer
 * (cuwarden_annotate.h): the library's contracts on a pointer.
 *
 * ptr must be the base of a live NS_ADDR record: an allocation made by
 * cw_alloc, or, in the shim, one the shim recorded from the driver.  The
 * record's handle then goes through the same contract logic as
 * cw_retain / cw_release / cw_transfer (contract.h), with violations recorded
 * under the annotation's name; owners are interned by name (owner.h).
 * Every annotated record is marked REC_F_ANNOTATED, which tells the shim
 * to enforce free_while_referenced on the driver's free of it.
 *
 * Owns no state; no locks of its own.
 */
#include "contract.h"
#include "fork.h"
#include "lasterr.h"
#include "owner.h"
#include "registry.h"

/* The prototypes of cuwarden_annotate.h, without its weak attribute (a
 * weak definition would be a weak export). */
CW_EXPORT int cw_annotate_owner(const void *ptr, const char *owner);
CW_EXPORT int cw_annotate_retain(const void *ptr);
CW_EXPORT int cw_annotate_release(const void *ptr);
CW_EXPORT int cw_annotate_transfer(const void *ptr, const char *new_owner);

static int
mark_cb(reg_rec_t *rec, void *arg)
{
	(void)arg;
	rec->flags |= REC_F_ANNOTATED;
	return 0;
}

/* The handle of the live record whose base is ptr. */
static int
find(const void *ptr, const char *api, reg_handle_t *h)
{
	reg_rec_t rec;

	fork_init();
	if (ptr == NULL)
		return lasterr_set(CW_EINVAL, api, "ptr is NULL");
	if (registry_find(NS_ADDR, (uintptr_t)ptr, h, &rec)) {
		if (!registry_find_containing(NS_ADDR, (uintptr_t)ptr, h,
			&rec))
			lasterr_set(CW_EINVAL, api, "%p is inside the "
			    "allocation at %#lx, not its base", ptr,
			    (unsigned long)rec.base);
		else
			lasterr_set(CW_EINVAL, api, "%p is not a live "
			    "allocation", ptr);
		lasterr_get()->address = (uintptr_t)ptr;
		return CW_EINVAL;
	}
	return CW_OK;
}

static int
intern(const char *name, const char *api, owner_id_t *id)
{
	if (name == NULL)
		return lasterr_set(CW_EINVAL, api, "owner name is NULL");
	*id = owner_intern(name);
	if (*id == 0)
		return lasterr_set(CW_EINVAL, api, "owner name must be 1..127 "
		    "printable bytes");
	return CW_OK;
}

int
cw_annotate_owner(const void *ptr, const char *owner)
{
	static const char fn[] = "cw_annotate_owner";
	reg_handle_t h;
	owner_id_t id;
	int r;

	if ((r = intern(owner, fn, &id)) != CW_OK)
		return r;
	if ((r = find(ptr, fn, &h)) != CW_OK)
		return r;
	return contract_set_owner(h, id, fn);
}

int
cw_annotate_retain(const void *ptr)
{
	static const char fn[] = "cw_annotate_retain";
	reg_handle_t h;
	int r;

	if ((r = find(ptr, fn, &h)) != CW_OK)
		return r;
	if ((r = contract_retain(h, fn)) == CW_OK)
		registry_update(h, mark_cb, NULL);
	return r;
}

int
cw_annotate_release(const void *ptr)
{
	static const char fn[] = "cw_annotate_release";
	reg_handle_t h;
	int r;

	if ((r = find(ptr, fn, &h)) != CW_OK)
		return r;
	registry_update(h, mark_cb, NULL);
	return contract_release(h, fn);
}

int
cw_annotate_transfer(const void *ptr, const char *new_owner)
{
	static const char fn[] = "cw_annotate_transfer";
	reg_handle_t h;
	owner_id_t id;
	int r;

	if ((r = intern(new_owner, fn, &id)) != CW_OK)
		return r;
	if ((r = find(ptr, fn, &h)) != CW_OK)
		return r;
	r = contract_transfer(h, id, fn);
	if (r == CW_OK)
		registry_update(h, mark_cb, NULL);
	return r;
}
