#include "preamble.h"
/*
 * buf.c -- allocations, views, references and owners: cw_alloc, cw_free,
 * cw_free_async, cw_retain, cw_release, cw_refcount, cw_owner_*,
 * cw_transfer, cw_view and the accessors (cw_ptr, cw_size, cw_kind,
 * cw_device, cw_lookup).
 *
 * Owns no state: a handle is a registry handle.  An allocation is an
 * NS_ADDR record {base, size, kind, device, owner, refcount, api
 * "cw_alloc", alloc_stack, REC_F_LIBRARY (| REC_F_POOLED)}; a view is an
 * NS_NONE record {base = absolute address, size = its length, kind
 * KIND_VIEW, parent = the allocation (never another view), aux = offset
 * in the allocation, device, REC_F_LIBRARY}.
 *
 * Invariants (the reference model, doc/contracts.md):
 *   - an allocation's refcount is 1 (its owner's) + cw_retain's not yet
 *     released + its live views, and its aux counts the live views (so
 *     cw_release never takes a view's reference); a view's own refcount
 *     stays 1;
 *   - a live view's allocation is live (the view's reference keeps it);
 *   - a refused call changes nothing: every check is made inside the
 *     registry_update / registry_remove callback that would make the
 *     change, under the record's lock, so it is atomic with respect to
 *     other threads;
 *   - stats count one stats_on_alloc per record inserted and one
 *     stats_on_free per record removed (views under KIND_VIEW).
 *
 * Locking: none of its own.  Registry callbacks here only read and write
 * the record (never call out); violations are recorded, stacks captured
 * and the driver/pools called after the callback returns.
 */
#include <string.h>

#include "buf.h"
#include "driver.h"
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
	owner_id_t to;   /* transfer / set_owner target */
} cb_ctx_t;

static const char *
kname(unsigned kind)
{
	return kind_name((kind_t)kind);
}

/* ------------------------------------------------------------ helpers */

static uintptr_t views_of(const reg_rec_t *rec);

int
buf_violation(int status, vtype_t type, const char *api, uint64_t h,
    const reg_rec_t *rec, bool tomb, int cuda_error)
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
	v.stack = stack_capture(1);
	v.alloc_stack = rec != NULL ? rec->alloc_stack : 0;
	v.free_stack = rec != NULL && tomb ? rec->free_stack : 0;
	violation_record(&v);

	if (rec == NULL) {
		lasterr_set(status, api, "%s: handle %#llx %s",
		    violation_name(type), (unsigned long long)h,
		    type == V_INVALID_FREE ? "was never issued" :
		    "was freed (its tombstone is forgotten)");
	} else {
		char what[128];
		int views = (int)views_of(rec);
		int retains = (int)rec->refcount - 1 - views;
		log_snprintf(what, sizeof(what), "handle %#llx (%s memory, %zu "
		    "bytes at %#lx)", (unsigned long long)h, kname(rec->kind),
		    rec->size, (unsigned long)rec->base);
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
			lasterr_set(status, api, "refcount_underflow: %s has no "
			    "retained reference to release (the owner's and "
			    "the views' are not released by cw_release)", what);
			break;
		case V_FAILED_FREE:
			lasterr_set(status, api, "failed_free: the driver failed "
			    "to free %s (CUresult %d); the handle is freed, the "
			    "address is in the failed-free ledger", what,
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
buf_not_live(uint64_t h, const char *api, bool record_uaf)
{
	reg_rec_t tomb;
	bool have;

	if (h != 0 && registry_state(h) == REG_FREED) {
		have = !registry_tomb_get(h, &tomb);
		if (record_uaf)
			return buf_violation(CW_EFREED, V_USE_AFTER_FREE, api,
			    h, have ? &tomb : NULL, true, 0);
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
buf_check_device(int device, bool allow_cpu, const char *api)
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
buf_resolve(uint64_t h, const char *api, buf_target_t *t)
{
	reg_rec_t prec;

	if (h == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, api, "handle is CW_BUF_NONE");
	if (registry_get(h, &t->rec))
		return buf_not_live(h, api, true);
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
		return buf_not_live(h, api, true);
	t->kind = (kind_t)prec.kind;
	return CW_OK;
}

int
buf_check_range(uint64_t h, const buf_target_t *t, size_t off, size_t n,
    const char *api)
{
	if (off <= t->size && n <= t->size - off)
		return CW_OK;
	buf_violation(CW_EBOUNDS, V_OUT_OF_BOUNDS, api, h, &t->rec, false, 0);
	log_snprintf(lasterr_get()->message, sizeof(lasterr_get()->message),
	    "out_of_bounds: [%zu, %zu + %zu) outside handle %#llx of %zu "
	    "bytes; nothing done", off, off, n, (unsigned long long)h,
	    t->size);
	return CW_EBOUNDS;
}

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
	if ((r = buf_check_device(device, false, fn)) != CW_OK)
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
			    kname(kind), device);
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
	rec.alloc_stack = stack_capture(0);
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
		    kname(old.kind), old.size, old.api ? old.api : "?");
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

/* Live views of an allocation: kept in aux of cw_alloc's records. */
static uintptr_t
views_of(const reg_rec_t *rec)
{
	return (rec->flags & REC_F_LIBRARY) ? rec->aux : 0;
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

static int
free_common(cw_buf_t h, bool async, cw_stream_t stream, const char *fn)
{
	cb_ctx_t c;
	reg_rec_t out, tomb;
	int r;

	fork_init();
	if (h == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, fn, "handle is CW_BUF_NONE");

	stack_id_t st = stack_capture(1);
	r = registry_remove(h, check_free_cb, &c, st, &out);
	if (r == -1 || r == -2) {
		if (r == -1 && !registry_tomb_get(h, &tomb))
			return buf_violation(CW_EFREED, V_DOUBLE_FREE, fn, h,
			    &tomb, true, 0);
		if (r == -1)
			return buf_violation(CW_EFREED, V_DOUBLE_FREE, fn, h,
			    NULL, true, 0);
		return buf_violation(CW_EINVAL, V_INVALID_FREE, fn, h, NULL,
		    false, 0);
	}
	if (r == CB_FOREIGN) {
		buf_violation(CW_EINVAL, V_INVALID_FREE, fn, h, &c.rec, false,
		    0);
		log_snprintf(lasterr_get()->message,
		    sizeof(lasterr_get()->message), "invalid_free: %#lx was "
		    "allocated by %s, not by cw_alloc: free it with the "
		    "driver", (unsigned long)c.rec.base,
		    c.rec.api ? c.rec.api : "?");
		return CW_EINVAL;
	}
	if (r == CB_REFUSED)
		return buf_violation(CW_ECONTRACT, V_FREE_WHILE_REFERENCED, fn,
		    h, &c.rec, false, 0);

	if (out.kind == KIND_VIEW) {
		registry_update(out.parent, unref_cb, NULL);
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
	return buf_violation(r, V_FAILED_FREE, fn, h, &out, false, cuerr);
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
	if ((int64_t)rec->refcount <= 1 + (int64_t)views_of(rec))
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

int
buf_retain(uint64_t h, const char *api)
{
	cb_ctx_t c;
	uint64_t acted;

	if (h == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, api, "handle is CW_BUF_NONE");
	int r = update_through_view(h, retain_cb, &c, &acted);
	if (r < 0)
		return buf_not_live(acted, api, true);
	if (r == CB_OVERFLOW)
		return lasterr_set(CW_EINVAL, api, "handle %#llx: too many "
		    "references", (unsigned long long)h);
	return CW_OK;
}

int
buf_release(uint64_t h, const char *api)
{
	cb_ctx_t c;
	uint64_t acted;

	if (h == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, api, "handle is CW_BUF_NONE");
	int r = update_through_view(h, release_cb, &c, &acted);
	if (r < 0)
		return buf_not_live(acted, api, true);
	if (r == CB_REFUSED)
		return buf_violation(CW_ECONTRACT, V_REFCOUNT_UNDERFLOW, api,
		    acted, &c.rec, false, 0);
	return CW_OK;
}

int
buf_transfer(uint64_t h, owner_id_t to, const char *api)
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
		return buf_not_live(acted, api, true);
	if (r == CB_REFUSED)
		return buf_violation(CW_ECONTRACT, V_TRANSFER_WHILE_SHARED,
		    api, acted, &c.rec, false, 0);
	return CW_OK;
}

int
buf_set_owner(uint64_t h, owner_id_t owner, const char *api)
{
	cb_ctx_t c;
	uint64_t acted;

	c.to = owner;
	int r = update_through_view(h, set_owner_cb, &c, &acted);
	if (r < 0)
		return buf_not_live(acted, api, false);
	return CW_OK;
}

int
cw_retain(cw_buf_t buf)
{
	return buf_retain(buf, "cw_retain");
}

int
cw_release(cw_buf_t buf)
{
	return buf_release(buf, "cw_release");
}

int
cw_refcount(cw_buf_t buf)
{
	reg_rec_t rec;

	if (buf == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, "cw_refcount",
		    "handle is CW_BUF_NONE");
	if (registry_get(buf, &rec))
		return buf_not_live(buf, "cw_refcount", false);
	if (rec.kind == KIND_VIEW && registry_get(rec.parent, &rec))
		return buf_not_live(buf, "cw_refcount", false);
	return rec.refcount;
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
	if (buf == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, fn, "handle is CW_BUF_NONE");
	if (registry_get(buf, &rec))
		return buf_not_live(buf, fn, false);
	if (rec.kind == KIND_VIEW && registry_get(rec.parent, &rec))
		return buf_not_live(buf, fn, false);
	*owner = rec.owner;
	return CW_OK;
}

int
cw_transfer(cw_buf_t buf, cw_owner_t to)
{
	return buf_transfer(buf, to, "cw_transfer");
}

/* -------------------------------------------------------------- views */

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

int
cw_view(cw_buf_t *view, cw_buf_t parent, size_t offset, size_t len)
{
	static const char fn[] = "cw_view";
	buf_target_t t;
	cb_ctx_t c;
	int r;

	fork_init();
	if (view == NULL)
		return lasterr_set(CW_EINVAL, fn, "view is NULL");
	if (len == 0)
		return lasterr_set(CW_EINVAL, fn, "len is 0");
	if ((r = buf_resolve(parent, fn, &t)) != CW_OK)
		return r;
	if (!(t.rec.flags & REC_F_LIBRARY))
		return lasterr_set(CW_ENOTSUP, fn, "handle %#llx was not made "
		    "by cw_alloc (%s): no views of it",
		    (unsigned long long)parent,
		    t.rec.api != NULL ? t.rec.api : "?");
	if ((r = buf_check_range(parent, &t, offset, len, fn)) != CW_OK)
		return r;

	/* Take the view's reference on the allocation first: from then on
	 * the allocation cannot be freed or transferred. */
	r = registry_update(t.alloc, ref_cb, &c);
	if (r < 0)
		return buf_not_live(parent, fn, true);
	if (r == CB_OVERFLOW)
		return lasterr_set(CW_EINVAL, fn, "handle %#llx: too many "
		    "references", (unsigned long long)parent);

	reg_rec_t rec;
	memset(&rec, 0, sizeof(rec));
	rec.base = t.addr + offset;
	rec.size = len;
	rec.aux = (t.addr - c.rec.base) + offset;
	rec.parent = t.alloc;
	rec.api = fn;
	rec.alloc_stack = stack_capture(0);
	rec.owner = c.rec.owner;
	rec.refcount = 1;
	rec.flags = REC_F_LIBRARY;
	rec.kind = KIND_VIEW;
	rec.ns = NS_NONE;
	rec.device = c.rec.device;

	reg_handle_t h = 0;
	if (registry_insert(&rec, &h, NULL, NULL)) {
		registry_update(t.alloc, unref_cb, NULL);
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

	if (buf == CW_BUF_NONE || registry_get(buf, &rec)) {
		if (buf == CW_BUF_NONE)
			lasterr_set(CW_EINVAL, "cw_ptr",
			    "handle is CW_BUF_NONE");
		else
			buf_not_live(buf, "cw_ptr", false);
		return NULL;
	}
	return (void *)rec.base;
}

size_t
cw_size(cw_buf_t buf)
{
	reg_rec_t rec;

	if (buf == CW_BUF_NONE || registry_get(buf, &rec)) {
		if (buf == CW_BUF_NONE)
			lasterr_set(CW_EINVAL, "cw_size",
			    "handle is CW_BUF_NONE");
		else
			buf_not_live(buf, "cw_size", false);
		return 0;
	}
	return rec.size;
}

int
cw_kind(cw_buf_t buf)
{
	reg_rec_t rec;

	if (buf == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, "cw_kind",
		    "handle is CW_BUF_NONE");
	if (registry_get(buf, &rec))
		return buf_not_live(buf, "cw_kind", false);
	if (rec.kind == KIND_VIEW && registry_get(rec.parent, &rec))
		return buf_not_live(buf, "cw_kind", false);
	return rec.kind;
}

int
cw_device(cw_buf_t buf)
{
	reg_rec_t rec;

	if (buf == CW_BUF_NONE)
		return lasterr_set(CW_EINVAL, "cw_device",
		    "handle is CW_BUF_NONE");
	if (registry_get(buf, &rec))
		return buf_not_live(buf, "cw_device", false);
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
