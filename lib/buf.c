#include "preamble.h"
/*
 * buf.c -- the public calls on handles (cuwarden.h): cw_alloc,
 * cw_alloc_async, cw_free, cw_free_async, cw_retain, cw_release,
 * cw_refcount, cw_owner_*, cw_transfer, cw_view and the accessors (cw_ptr,
 * cw_size, cw_kind, cw_device, cw_lookup).  The arguments are checked
 * here; the contracts -- the checks of a handle, the reference model and
 * the violations -- are contract.h's; the memory is the pools'.
 *
 * Owns no state: a handle is a registry handle, its record laid out as
 * contract.h says.  Invariant: stats count one stats_on_alloc per record
 * inserted here and one stats_on_free per record contract_remove removed
 * (views under KIND_VIEW).
 *
 * Locking: none of its own; the driver and the pools are called with no
 * registry lock held.
 */
#include <string.h>

#include "contract.h"
#include "fork.h"
#include "lasterr.h"
#include "log.h"
#include "owner.h"
#include "pool.h"
#include "stackdepot.h"
#include "stats.h"

#define BUF_MAX_SIZE ((size_t)1 << 47) /* 128 TiB: more is a bug */

/* A cw_kind_t is passed on as the kind_t of the same value (kinds.h). */
_Static_assert((int)CW_DEVICE == (int)KIND_DEVICE &&
    (int)CW_MANAGED == (int)KIND_MANAGED &&
    (int)CW_PINNED == (int)KIND_PINNED &&
    (int)CW_PINNED + 1 == KIND_PUBLIC_COUNT,
    "cw_kind_t equals the first KIND_PUBLIC_COUNT kind_t");

/* --------------------------------------------------------- allocation */

/* cw_alloc and cw_alloc_async: ordered says whether stream is given. */
static int
alloc_common(const char *fn, cw_buf_t *buf, size_t size, cw_kind_t kind,
    int device, cw_owner_t owner, bool ordered, cw_stream_t stream)
{
	uintptr_t addr = 0;
	unsigned pflags = 0;
	int r;

	fork_init();
	if (buf == NULL)
		return lasterr_set(CW_EINVAL, fn, "buf is NULL");
	if (size == 0)
		return lasterr_set(CW_EINVAL, fn, "size is 0");
	if (size > BUF_MAX_SIZE) {
		lasterr_set(CW_EINVAL, fn, "size %zu is absurd (more than "
		    "2^47 bytes)", size);
		lasterr_get()->requested = size;
		return CW_EINVAL;
	}
	if ((unsigned)kind > CW_PINNED)
		return lasterr_set(CW_EINVAL, fn, "kind %d is not CW_DEVICE, "
		    "CW_MANAGED or CW_PINNED", (int)kind);
	if (owner != CW_OWNER_NONE && !owner_valid(owner))
		return lasterr_set(CW_EINVAL, fn, "owner %u is not registered",
		    (unsigned)owner);
	if ((r = contract_check_device(device, false, fn)) != CW_OK)
		return r;

	/* Tell the pools' detail from an older failure's: lasterr_set
	 * always sets function, so clear it for the call (and restore it
	 * on success: a success does not clear the last error). */
	cw_error_t *e = lasterr_get();
	const char *prev_fn = e->function;
	e->function = NULL;
	if (ordered)
		r = pool_alloc_stream((kind_t)kind, device, size,
		    (CUstream)stream, &addr, &pflags);
	else
		r = pool_alloc((kind_t)kind, device, size, &addr, &pflags);
	if (r == CW_OK && e->function == NULL)
		e->function = prev_fn;
	if (r != CW_OK) {
		if (e->status != r || e->function == NULL) {
			lasterr_set(r, fn, "%s of %zu bytes of %s memory on "
			    "device %d failed", "allocation", size,
			    kind_name((kind_t)kind), device);
			e->requested = size;
		}
		e->function = fn;
		if (e->requested == 0)
			e->requested = size;
		return r;
	}

	reg_rec_t rec;
	memset(&rec, 0, sizeof(rec));
	rec.base = addr;
	rec.size = size;
	rec.api = fn;
	rec.alloc_stack = stack_capture_outside();
	rec.owner = owner;
	rec.refcount = 1;
	rec.flags = REC_F_LIBRARY;
	if (pool_enabled() && !(pflags & POOL_F_OWN_SEGMENT))
		rec.flags |= REC_F_POOLED;
	rec.kind = (uint8_t)kind;
	rec.ns = NS_ADDR;
	rec.device = (int16_t)device;

	reg_handle_t h = 0;
	reg_rec_t old;
	bool replaced = false;
	if (registry_insert(&rec, &h, &old, &replaced)) {
		pool_free((kind_t)kind, device, addr, size);
		lasterr_set(CW_ENOMEM, fn, "out of metadata memory for the "
		    "record of %zu bytes", size);
		lasterr_get()->requested = size;
		return CW_ENOMEM;
	}
	if (replaced) {
		/* A live record at the same address: its memory was freed
		 * behind our back.  Its count goes with it. */
		stats_on_free((kind_t)old.kind, old.size);
		log_warn("cw_alloc: %#lx was still recorded as live (%s, %zu "
		    "bytes from %s); record replaced", (unsigned long)addr,
		    kind_name((kind_t)old.kind), old.size,
		    old.api ? old.api : "?");
	}
	stats_on_alloc((kind_t)kind, size);
	*buf = h;
	return CW_OK;
}

int
cw_alloc(cw_buf_t *buf, size_t size, cw_kind_t kind, int device,
    cw_owner_t owner)
{
	return alloc_common("cw_alloc", buf, size, kind, device, owner, false,
	    NULL);
}

int
cw_alloc_async(cw_buf_t *buf, size_t size, cw_kind_t kind, int device,
    cw_owner_t owner, cw_stream_t stream)
{
	return alloc_common("cw_alloc_async", buf, size, kind, device, owner,
	    true, stream);
}

/* buf's live record into *rec: its parent's for a view, if parent.
 * Returns CW_OK, or the status of the error set (CW_EINVAL for
 * CW_BUF_NONE; contract_not_live's for a handle not live). */
static int
live_rec(cw_buf_t buf, const char *fn, bool parent, reg_rec_t *rec)
{
	if (buf == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, fn, "handle is CW_BUF_NONE");
	if (registry_get(buf, rec))
		return contract_not_live(buf, fn, false);
	if (parent && rec->kind == KIND_VIEW && registry_get(rec->parent, rec))
		return contract_not_live(buf, fn, false);
	return CW_OK;
}

static int
free_common(cw_buf_t h, bool async, cw_stream_t stream, const char *fn)
{
	reg_rec_t out;
	int r;

	fork_init();
	if (h == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, fn, "handle is CW_BUF_NONE");

	stack_id_t st = stack_capture_outside();
	if ((r = contract_remove(h, st, fn, &out)) != CW_OK)
		return r;

	if (out.kind == KIND_VIEW) {
		contract_view_unref(out.parent);
		stats_on_free(KIND_VIEW, out.size);
		return CW_OK;
	}

	stats_on_free((kind_t)out.kind, out.size);
	if (async)
		r = pool_free_async((kind_t)out.kind, out.device, out.base,
		    out.size, (CUstream)stream);
	else
		r = pool_free((kind_t)out.kind, out.device, out.base,
		    out.size);
	if (r == CW_OK)
		return CW_OK;
	if (r == CW_ENODEV) {
		/* A fork child (or a driver gone): nothing may be freed
		 * here, and nothing is lost that the parent does not still
		 * hold.  The child forgets the handle. */
		lasterr_get()->function = fn;
		lasterr_get()->buf = h;
		return r;
	}

	/* The driver failed: the handle is freed, the memory lost.  The
	 * address is already in the ledger: direct_free is the one place a
	 * failed free enters it (direct.h), and every driver free of the
	 * pools goes through direct_free. */
	cw_error_t *e = lasterr_get();
	int cuerr = e->status == r ? e->cuda_error : 0;
	return contract_violation(r, V_FAILED_FREE, fn, h, &out, false, cuerr);
}

int
cw_free(cw_buf_t buf)
{
	return free_common(buf, false, NULL, "cw_free");
}

int
cw_free_async(cw_buf_t buf, cw_stream_t stream)
{
	return free_common(buf, true, stream, "cw_free_async");
}

/* --------------------------------------------------------- references */

int
cw_retain(cw_buf_t buf)
{
	return contract_retain(buf, "cw_retain");
}

int
cw_release(cw_buf_t buf)
{
	return contract_release(buf, "cw_release");
}

int
cw_refcount(cw_buf_t buf)
{
	reg_rec_t rec;

	int r = live_rec(buf, "cw_refcount", true, &rec);
	return r != CW_OK ? r : rec.refcount;
}

/* ------------------------------------------------------------- owners */

int
cw_owner_register(const char *name, cw_owner_t *owner)
{
	static const char fn[] = "cw_owner_register";

	fork_init();
	if (name == NULL || owner == NULL)
		return lasterr_set(CW_EINVAL, fn, "%s is NULL",
		    name == NULL ? "name" : "owner");
	owner_id_t id = owner_intern(name);
	if (id == 0) {
		size_t n = strnlen(name, 200);
		if (n == 0 || n > 127)
			return lasterr_set(CW_EINVAL, fn, "name must be 1..127 "
			    "bytes (got %zu%s)", n, n >= 200 ? " or more" : "");
		for (size_t i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)name[i];
			if (ch < 0x20 || ch > 0x7e)
				return lasterr_set(CW_EINVAL, fn, "name has a "
				    "non-printable byte %#x at %zu", ch, i);
		}
		return lasterr_set(CW_ENOMEM, fn, "the owner table is full");
	}
	*owner = id;
	return CW_OK;
}

const char *
cw_owner_name(cw_owner_t owner)
{
	const char *s = owner_name(owner);

	if (s == NULL)
		lasterr_set(CW_EINVAL, "cw_owner_name", "owner %u is not "
		    "registered", (unsigned)owner);
	return s;
}

int
cw_owner_of(cw_buf_t buf, cw_owner_t *owner)
{
	static const char fn[] = "cw_owner_of";
	reg_rec_t rec;

	if (owner == NULL)
		return lasterr_set(CW_EINVAL, fn, "owner is NULL");
	int r = live_rec(buf, fn, true, &rec);
	if (r != CW_OK)
		return r;
	*owner = rec.owner;
	return CW_OK;
}

int
cw_transfer(cw_buf_t buf, cw_owner_t to)
{
	return contract_transfer(buf, to, "cw_transfer");
}

/* -------------------------------------------------------------- views */

int
cw_view(cw_buf_t *view, cw_buf_t parent, size_t offset, size_t len)
{
	static const char fn[] = "cw_view";
	contract_target_t t;
	reg_rec_t arec;
	int r;

	fork_init();
	if (view == NULL)
		return lasterr_set(CW_EINVAL, fn, "view is NULL");
	if (len == 0)
		return lasterr_set(CW_EINVAL, fn, "len is 0");
	if ((r = contract_resolve(parent, fn, &t)) != CW_OK)
		return r;
	if (!(t.rec.flags & REC_F_LIBRARY))
		return lasterr_set(CW_ENOTSUP, fn, "handle %#llx was not made "
		    "by cw_alloc (%s): no views of it",
		    (unsigned long long)parent,
		    t.rec.api != NULL ? t.rec.api : "?");
	if ((r = contract_check_range(parent, &t, offset, len, fn)) != CW_OK)
		return r;

	/* Take the view's reference on the allocation first: from then on
	 * the allocation cannot be freed or transferred. */
	if ((r = contract_view_ref(parent, t.alloc, fn, &arec)) != CW_OK)
		return r;

	reg_rec_t rec;
	memset(&rec, 0, sizeof(rec));
	rec.base = t.addr + offset;
	rec.size = len;
	rec.aux = (t.addr - arec.base) + offset;
	rec.parent = t.alloc;
	rec.api = fn;
	rec.alloc_stack = stack_capture_outside();
	rec.owner = arec.owner;
	rec.refcount = 1;
	rec.flags = REC_F_LIBRARY;
	rec.kind = KIND_VIEW;
	rec.ns = NS_NONE;
	rec.device = arec.device;

	reg_handle_t h = 0;
	if (registry_insert(&rec, &h, NULL, NULL)) {
		contract_view_unref(t.alloc);
		return lasterr_set(CW_ENOMEM, fn, "out of metadata memory");
	}
	stats_on_alloc(KIND_VIEW, len);
	*view = h;
	return CW_OK;
}

/* ---------------------------------------------------------- accessors */

void *
cw_ptr(cw_buf_t buf)
{
	reg_rec_t rec;

	return live_rec(buf, "cw_ptr", false, &rec) != CW_OK ? NULL :
	    (void *)rec.base;
}

size_t
cw_size(cw_buf_t buf)
{
	reg_rec_t rec;

	return live_rec(buf, "cw_size", false, &rec) != CW_OK ? 0 :
	    rec.size;
}

int
cw_kind(cw_buf_t buf)
{
	reg_rec_t rec;

	int r = live_rec(buf, "cw_kind", true, &rec);
	return r != CW_OK ? r : rec.kind;
}

int
cw_device(cw_buf_t buf)
{
	reg_rec_t rec;

	int r = live_rec(buf, "cw_device", false, &rec);
	if (r != CW_OK)
		return r;
	if (rec.device < 0)
		return lasterr_set(CW_ENODEV, "cw_device", "handle %#llx has "
		    "no device", (unsigned long long)buf);
	return rec.device;
}

int
cw_lookup(const void *ptr, cw_buf_t *buf)
{
	static const char fn[] = "cw_lookup";
	reg_handle_t h;
	reg_rec_t rec;

	if (buf == NULL)
		return lasterr_set(CW_EINVAL, fn, "buf is NULL");
	if (ptr == NULL)
		return lasterr_set(CW_EINVAL, fn, "ptr is NULL");
	if (registry_find_containing(NS_ADDR, (uintptr_t)ptr, &h, &rec)) {
		lasterr_set(CW_EINVAL, fn, "%p is in no live allocation", ptr);
		lasterr_get()->address = (uintptr_t)ptr;
		return CW_EINVAL;
	}
	*buf = h;
	return CW_OK;
}
