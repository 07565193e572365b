#include "preamble.h"
/*
 * xfer.c -- bounds-checked data movement: cw_upload, cw_download, cw_copy,
 * cw_memset.
 *
 * Every call resolves its handles (contract.h: a freed handle is a
 * use_after_free violation), checks [off, off + n) against the handle's
 * own range (a view's bounds are the view's; off + n overflowing is out
 * of bounds) and only then touches memory, so a refused call writes
 * nothing.  n == 0 is a successful no-op once the handles and offsets are
 * checked.
 *
 * Paths by kind: pinned (and registered) memory is host memory: plain
 * memcpy / memset.  Device memory (and async, IPC, mapped): the driver's
 * cuMemcpyHtoD_v2 / cuMemcpyDtoH_v2 / cuMemsetD8_v2 after driver_bind of
 * the allocation's device.  Managed memory: the driver's cuMemcpy /
 * cuMemsetD8_v2, which are ordered after the work already submitted to
 * the legacy stream (a host memcpy could race a running kernel).  Other
 * kinds (VMM handles, reservations, arrays): CW_ENOTSUP.
 *
 * These calls do not keep the memory alive while they run: a program that
 * frees from one thread while copying from another must hold a reference
 * (cw_retain) across the copy, as with any allocator.
 *
 * Owns no state; no locks.  Never holds a lock across a driver call.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "contract.h"
#include "driver.h"
#include "lasterr.h"

typedef enum path_e {
	PATH_NONE = 0,
	PATH_HOST,    /* host-addressable, no device work to order with */
	PATH_DEVICE,  /* device memory: explicit HtoD / DtoH copies */
	PATH_UNIFIED  /* managed: cuMemcpy with unified addressing */
} path_t;

static path_t
path_of(kind_t kind)
{
	switch (kind) {
	case KIND_PINNED:
	case KIND_REGISTERED:
		return PATH_HOST;
	case KIND_DEVICE:
	case KIND_ASYNC:
	case KIND_IPC:
	case KIND_MAPPING:
		return PATH_DEVICE;
	case KIND_MANAGED:
		return PATH_UNIFIED;
	default:
		return PATH_NONE;
	}
}

/* The driver, bound to device on this thread; *prev gets the thread's
 * context, which done() puts back. */
static const driver_fns_t *
bound(int device, const char *fn, int *status, CUcontext *prev)
{
	const driver_fns_t *d = driver_get();

	*prev = NULL;
	if (d == NULL) {
		*status = lasterr_set(CW_ENODEV, fn, "the CUDA driver cannot "
		    "be loaded");
		return NULL;
	}
	*status = driver_bind_save(device < 0 ? 0 : device, prev);
	if (*status != CW_OK) {
		lasterr_get()->function = fn;
		return NULL;
	}
	return d;
}

/* The caller's context back, and cr as a status. */
static int
done(CUcontext prev, CUresult cr, const char *fn, const char *call)
{
	driver_restore(prev);
	return cr == CUDA_SUCCESS ? CW_OK : driver_fail(CW_ECUDA, fn, call, cr);
}

static int
prepare(uint64_t h, size_t off, size_t n, const char *fn, contract_target_t *t,
    path_t *path)
{
	int r;

	if ((r = contract_resolve(h, fn, t)) != CW_OK)
		return r;
	if ((r = contract_check_range(h, t, off, n, fn)) != CW_OK)
		return r;
	*path = path_of(t->kind);
	if (*path == PATH_NONE)
		return lasterr_set(CW_ENOTSUP, fn, "handle %#llx: no data "
		    "access to %s records", (unsigned long long)h,
		    t->kind == KIND_VMM ? "VMM" : "this kind of");
	return CW_OK;
}

/* cw_upload (up: from host into the handle) and cw_download (from the
 * handle out to host). */
static int
copy_host(cw_buf_t buf, size_t off, uintptr_t host, size_t n, bool up,
    const char *fn)
{
	const driver_fns_t *d;
	contract_target_t t;
	path_t path;
	CUresult cr;
	CUcontext prev;
	int r;

	if (host == 0 && n > 0)
		return lasterr_set(CW_EINVAL, fn, up ? "src is NULL" :
		    "dst is NULL");
	if ((r = prepare(buf, off, n, fn, &t, &path)) != CW_OK || n == 0)
		return r;
	uintptr_t at = t.addr + off;
	uintptr_t to = up ? at : host, from = up ? host : at;
	if (path == PATH_HOST) {
		memcpy((void *)to, (const void *)from, n);
		return CW_OK;
	}
	if ((d = bound(t.device, fn, &r, &prev)) == NULL)
		return r;
	if (path == PATH_DEVICE && up) {
		cr = d->cuMemcpyHtoD_v2((CUdeviceptr)at, (const void *)host, n);
		return done(prev, cr, fn, "cuMemcpyHtoD_v2");
	}
	if (path == PATH_DEVICE) {
		cr = d->cuMemcpyDtoH_v2((void *)host, (CUdeviceptr)at, n);
		return done(prev, cr, fn, "cuMemcpyDtoH_v2");
	}
	cr = d->cuMemcpy((CUdeviceptr)to, (CUdeviceptr)from, n);
	return done(prev, cr, fn, "cuMemcpy");
}

int
cw_upload(cw_buf_t buf, size_t off, const void *src, size_t n)
{
	return copy_host(buf, off, (uintptr_t)src, n, true, "cw_upload");
}

int
cw_download(cw_buf_t buf, size_t off, void *dst, size_t n)
{
	return copy_host(buf, off, (uintptr_t)dst, n, false, "cw_download");
}

int
cw_copy(cw_buf_t dst, size_t dst_off, cw_buf_t src, size_t src_off,
    size_t n)
{
	static const char fn[] = "cw_copy";
	const driver_fns_t *d;
	contract_target_t td, ts;
	path_t pd, ps;
	CUcontext prev;
	int r;

	if ((r = prepare(dst, dst_off, n, fn, &td, &pd)) != CW_OK)
		return r;
	if ((r = prepare(src, src_off, n, fn, &ts, &ps)) != CW_OK || n == 0)
		return r;
	uintptr_t a = td.addr + dst_off, b = ts.addr + src_off;
	if (pd == PATH_HOST && ps == PATH_HOST) {
		memmove((void *)a, (const void *)b, n);
		return CW_OK;
	}
	if (a < b + n && b < a + n)
		return lasterr_set(CW_EINVAL, fn, "source and destination "
		    "overlap ([%#lx, +%zu) and [%#lx, +%zu))",
		    (unsigned long)a, n, (unsigned long)b, n);
	int dev = pd != PATH_HOST ? td.device : ts.device;
	if ((d = bound(dev, fn, &r, &prev)) == NULL)
		return r;
	CUresult cr = d->cuMemcpy((CUdeviceptr)a, (CUdeviceptr)b, n);
	return done(prev, cr, fn, "cuMemcpy");
}

int
cw_memset(cw_buf_t buf, size_t off, int value, size_t n)
{
	static const char fn[] = "cw_memset";
	const driver_fns_t *d;
	contract_target_t t;
	path_t path;
	CUcontext prev;
	int r;

	if ((r = prepare(buf, off, n, fn, &t, &path)) != CW_OK || n == 0)
		return r;
	if (path == PATH_HOST) {
		memset((void *)(t.addr + off), value, n);
		return CW_OK;
	}
	if ((d = bound(t.device, fn, &r, &prev)) == NULL)
		return r;
	CUresult cr = d->cuMemsetD8_v2((CUdeviceptr)(t.addr + off),
	    (unsigned char)value, n);
	return done(prev, cr, fn, "cuMemsetD8_v2");
}
